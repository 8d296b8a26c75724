@echo off
rem Simulator build (Windows): Blue versus Purple (behaviors "Blue?team=0", "Purple?team=1"). See neatpar/sim.
rem neatpar runs the task this line names as the neatpar-sim program (see neatpar/envs/unity/builds.py).
call "%~dp0_launch.cmd" teams %*
