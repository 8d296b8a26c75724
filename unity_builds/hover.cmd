@echo off
rem Simulator build (Windows): altitude hold with an unknown payload from noisy sensors (behavior "Hover?team=0"). See neatpar_sim/.
rem neatpar runs this launcher for its task as the neatpar-sim program (see neatpar/envs/unity/builds.py).
call "%~dp0_launch.cmd" hover %*
