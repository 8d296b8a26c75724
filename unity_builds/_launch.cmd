@echo off
rem Shared by the Windows launchers of the simulator builds in this folder: runs
rem `python -m neatpar.sim TASK ARGS...` with NEATPAR_PYTHON when set, else this project's .venv,
rem else Python 3.11 through the py launcher. neatpar itself starts the task a launcher names as the
rem neatpar-sim program (mlagents-envs starts only .exe files).
setlocal
set "python=%NEATPAR_PYTHON%"
if not defined python if exist "%~dp0..\.venv\Scripts\python.exe" set "python=%~dp0..\.venv\Scripts\python.exe"
if defined python goto run
py -3.11 -m neatpar.sim %*
exit /b
:run
"%python%" -m neatpar.sim %*
