@echo off
rem Simulator build (Windows): a Pong-like duel for self-play (behaviors "Duel?team=0", "Duel?team=1"; with
rem --asymmetric 1, "Duel?team=0" and "Keeper?team=1"). See neatpar_sim/duel.py.
rem neatpar runs this launcher for its task as the neatpar-sim program (see neatpar/envs/unity/builds.py).
call "%~dp0_launch.cmd" duel %*
