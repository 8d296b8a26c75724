@echo off
rem Simulator build (Windows): Blue versus Purple (behaviors "Blue?team=0", "Purple?team=1"). See neatpar_sim/.
rem neatpar runs this launcher for its task as the neatpar-sim program (see neatpar/envs/unity/builds.py).
call "%~dp0_launch.cmd" teams %*
