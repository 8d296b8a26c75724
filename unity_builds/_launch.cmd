@echo off
rem Shared by the Windows launchers of the simulator builds in this folder: runs the simulators'
rem package beside it, neatpar_sim, as `python -m neatpar_sim TASK ARGS...` does in this folder,
rem with NEATPAR_PYTHON when set, else this project's .venv, else the newest Python 3 through the
rem py launcher (an environment with neatpar installed, whose numpy, mlagents-envs and fast wire
rem the simulators use). neatpar itself starts the task a launcher names through its neatpar-sim
rem program, which runs this folder's neatpar_sim the same way (mlagents-envs starts only .exe files).
rem Not with -m itself: -m puts the working folder first on sys.path, and inside a checkout of the
rem repository its neatpar\ sources (no C extensions built for that Python) would hide the installed
rem neatpar. -c puts '' (the working folder) there instead, unless safe paths leave it out (-P,
rem PYTHONSAFEPATH: Python 3.11 and later); the code drops it, puts this folder (its first argument,
rem "%~dp0." so that no backslash precedes the quote) first instead, and runs neatpar_sim as -m does.
setlocal
set "sim=import runpy, sys; getattr(sys.flags, 'safe_path', False) or sys.path.pop(0); sys.path.insert(0, sys.argv.pop(1)); runpy.run_module('neatpar_sim', run_name='__main__', alter_sys=True)"
set "python=%NEATPAR_PYTHON%"
if not defined python if exist "%~dp0..\.venv\Scripts\python.exe" set "python=%~dp0..\.venv\Scripts\python.exe"
if defined python goto run
py -3 -c "%sim%" "%~dp0." %*
exit /b
:run
"%python%" -c "%sim%" "%~dp0." %*
