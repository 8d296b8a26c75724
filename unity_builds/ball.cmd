@echo off
rem Simulator build (Windows): the 3DBall-like balance task (behavior "Ball3D?team=0"). See neatpar_sim/.
rem neatpar runs this launcher for its task as the neatpar-sim program (see neatpar/envs/unity/builds.py).
call "%~dp0_launch.cmd" ball %*
