@echo off
rem Simulator build (Windows): the deceptive maze, a robot that must leave the way its reward points to reach the goal (behavior "Maze?team=0"). See neatpar_sim/.
rem neatpar runs this launcher for its task as the neatpar-sim program (see neatpar/envs/unity/builds.py).
call "%~dp0_launch.cmd" maze %*
