@echo off
rem Simulator build (Windows): the probe task, returns known in closed form (behaviors "Probe?team=0", "Rival?team=1"). See neatpar_sim/.
rem neatpar runs this launcher for its task as the neatpar-sim program (see neatpar/envs/unity/builds.py).
call "%~dp0_launch.cmd" probe %*
