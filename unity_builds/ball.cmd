@echo off
rem Simulator build (Windows): the 3DBall-like balance task (behavior "Ball3D?team=0"). See neatpar/sim.
rem neatpar runs the task this line names as the neatpar-sim program (see neatpar/envs/unity/builds.py).
call "%~dp0_launch.cmd" ball %*
