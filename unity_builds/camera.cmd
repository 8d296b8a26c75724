@echo off
rem Simulator build (Windows): the camera task, reach a target seen only through a top-down camera (behavior "Camera?team=0"). See neatpar_sim/.
rem neatpar runs this launcher for its task as the neatpar-sim program (see neatpar/envs/unity/builds.py).
call "%~dp0_launch.cmd" camera %*
