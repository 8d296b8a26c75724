"""The stock stack a user has without neatpar, built once in bench/.envs/stock for comparisons:
mlagents-envs 0.28.0 on protobuf 3.20.3 (pure Python on 3.11) and neat-python 2.0.0."""
import os
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
STOCK = os.path.join(HERE, ".envs", "stock")
PACKAGES = ["mlagents-envs==0.28.0", "protobuf==3.20.3", "numpy==1.23.5", "grpcio==1.85.*",
            "neat-python==2.0.0", "setuptools<70"]


def stock_python() -> str:
    """Path of the stock environment's interpreter, creating the environment if needed."""
    python = os.path.join(STOCK, "bin", "python")
    marker = os.path.join(STOCK, ".complete")
    if not os.path.exists(marker):
        print("building the stock environment in bench/.envs/stock (once) ...", file=sys.stderr)
        base = getattr(sys, "_base_executable", sys.executable)
        subprocess.run([base, "-m", "venv", "--clear", STOCK], check=True)
        subprocess.run([python, "-m", "pip", "install", "-q", "--disable-pip-version-check", *PACKAGES], check=True)
        open(marker, "w").close()
    return python


def stock_env(sim_in_stock: bool = True) -> dict:
    """Environment variables for a process of the stock stack. With sim_in_stock, the simulator
    builds it launches also run on the stock stack (neatpar's simulator code on protobuf 3.20.3)."""
    env = {k: v for k, v in os.environ.items() if k not in ("NEATPAR_PYTHON", "PYTHONPATH")}
    if sim_in_stock:
        env["NEATPAR_PYTHON"] = stock_python()
        env["PYTHONPATH"] = ROOT
    return env
