@echo off
rem Simulator build (Windows): the probe task, returns known in closed form (behaviors "Probe?team=0", "Rival?team=1"). See neatpar/sim.
rem neatpar runs the task this line names as the neatpar-sim program (see neatpar/envs/unity/builds.py).
call "%~dp0_launch.cmd" probe %*
