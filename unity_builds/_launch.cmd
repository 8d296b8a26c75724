@echo off
rem Shared by the Windows launchers of the simulator builds in this folder: runs neatpar.sim as
rem `python -m neatpar.sim TASK ARGS...` does, with NEATPAR_PYTHON when set, else this project's
rem .venv, else the newest Python 3 through the py launcher. neatpar itself starts the task a
rem launcher names as the neatpar-sim program (mlagents-envs starts only .exe files).
rem Not with -m itself: -m puts the working folder first on sys.path, and inside a checkout of the
rem repository its neatpar\ sources (no C extensions built for that Python) would hide the installed
rem neatpar. -c puts '' (the working folder) there instead, unless safe paths leave it out (-P,
rem PYTHONSAFEPATH: Python 3.11 and later); the code drops it before runpy imports neatpar.sim and
rem runs it as -m does (the same sys.argv).
setlocal
set "sim=import runpy, sys; getattr(sys.flags, 'safe_path', False) or sys.path.pop(0); runpy.run_module('neatpar.sim', run_name='__main__', alter_sys=True)"
set "python=%NEATPAR_PYTHON%"
if not defined python if exist "%~dp0..\.venv\Scripts\python.exe" set "python=%~dp0..\.venv\Scripts\python.exe"
if defined python goto run
py -3 -c "%sim%" %*
exit /b
:run
"%python%" -c "%sim%" %*
