"""The stock stack a user has without neatpar, built once per Python in bench/.envs/stock-X.Y for
comparisons: mlagents-envs 0.28.0 on protobuf 3.20.3 (pure Python) and neat-python 2.0.0, with the
numpy that Python has (1.23.5 to 3.11, numpy 2 from 3.12)."""
import os
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
BUILDS = os.path.join(ROOT, "unity_builds")   # the simulators' package, neatpar_sim, is imported from here
STOCK = os.path.join(HERE, ".envs", "stock-%d.%d" % sys.version_info[:2])
PACKAGES = ["mlagents-envs==0.28.0", "protobuf==3.20.3", "numpy==1.23.5; python_version < '3.12'",
            "numpy>=2,<3; python_version >= '3.12'", "grpcio==1.85.*", "neat-python==2.0.0", "setuptools<70"]


def stock_python() -> str:
    """Path of the stock environment's interpreter, creating the environment if needed."""
    python = os.path.join(STOCK, "bin", "python")
    marker = os.path.join(STOCK, ".complete")
    if not os.path.exists(marker):
        print(f"building the stock environment in bench/.envs/{os.path.basename(STOCK)} (once) ...", file=sys.stderr)
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
