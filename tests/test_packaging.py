"""neatpar installed the ways users install it: a wheel built from the sdist into a fresh
environment without extras (then a short `neatpar evolve` to its end), a wheel, and an editable
install; each must have the fast wire in effect."""
import glob
import os
import shutil
import subprocess
import sys
import sysconfig
import tarfile
import venv
import zipfile

import pytest

from support.configs import ball_cfg
from support.paths import BALL, ROOT
from support.simulators import free_worker_id

# One after another in one pytest-xdist process: the sdist and the wheel are built from this
# checkout, each writing its build/ and neatpar.egg-info folders.
pytestmark = [pytest.mark.slow, pytest.mark.xdist_group("packaging")]

# In the fresh environment: the fast wire is in effect after importing mlagents-envs first, and
# neatpar is the installed copy, not this checkout.
CHECK = ("import mlagents_envs.environment\n"
         "from mlagents_envs.communicator_objects.unity_output_pb2 import UnityOutputProto\n"
         "import neatpar\n"
         "from neatpar.envs.unity import fastwire\n"
         "print(fastwire.in_effect(), fastwire.backend(), os.path.dirname(neatpar.__file__))\n")


# Installed copies must not see this checkout through the test process's environment.
CLEAN_ENV = {k: v for k, v in os.environ.items() if k not in ("NEATPAR_PYTHON", "PYTHONPATH")}


def run(args, **kwargs):
    result = subprocess.run(args, capture_output=True, text=True, timeout=900, env=CLEAN_ENV, **kwargs)
    assert result.returncode == 0, (args, result.stdout[-2000:], result.stderr[-3000:])
    return result


def fresh_venv(folder, with_pip=True, borrow_dependencies=False) -> str:
    """A new virtual environment; with `borrow_dependencies`, this environment's site-packages is
    added as a plain path (its .pth files, this checkout's editable install among them, are not
    processed), so installing neatpar with --no-deps is enough."""
    venv.create(folder, with_pip=with_pip)
    python = os.path.join(folder, "bin", "python")
    if borrow_dependencies:
        site = run([python, "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"]).stdout.strip()
        with open(os.path.join(site, "deps.pth"), "w") as f:
            f.write(sysconfig.get_paths()["purelib"] + "\n")
    return python


def check_fast_wire(python, cwd, expected_home: str | None = None):
    out = run([python, "-c", "import os\n" + CHECK], cwd=cwd).stdout.split()
    assert out[:2] == ["True", "upb"]
    if expected_home is not None:
        assert out[2] == expected_home


def test_sdist_wheel_installs_without_extras_and_evolves_with_the_fast_wire(tmp_path):
    dist = tmp_path / "dist"
    run([sys.executable, "-m", "build", "--outdir", str(dist), ROOT])  # the sdist, then a wheel built from it
    sdist = glob.glob(str(dist / "neatpar-*.tar.gz"))[0]
    wheel = glob.glob(str(dist / "neatpar-*.whl"))[0]
    names = tarfile.open(sdist).getnames()
    assert any(n.endswith("/neatpar-fastwire.pth") for n in names)
    top = {"neatpar-fastwire.pth", "_neatpar_fastwire_hook.py", "_neatpar_command.py"}  # beside the package
    assert top <= set(zipfile.ZipFile(wheel).namelist())
    python = fresh_venv(str(tmp_path / "env"))
    run([python, "-m", "pip", "install", "-q", "--disable-pip-version-check", wheel])
    site = run([python, "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"]).stdout.strip()
    check_fast_wire(python, tmp_path, os.path.join(site, "neatpar"))
    extras = run([python, "-m", "pip", "list", "--format=freeze"]).stdout
    assert "matplotlib" not in extras and "ray==" not in extras  # no extras came along
    config = ball_cfg(tmp_path, generations=2)
    out = tmp_path / "run"
    result = run([os.path.join(tmp_path, "env", "bin", "neatpar"), "evolve", "--config", config, "--out", str(out)],
                 cwd=tmp_path)
    assert "winner: genome" in result.stdout
    assert {"winner.json", "winner.dot", "stats.csv"} <= set(os.listdir(out))
    assert not (out / "fitness.png").exists()  # matplotlib is an extra: no plot, and no error


def test_installed_wheel_arms_the_hook_in_a_fresh_environment(tmp_path):
    """... and the simulator builds run on the interpreter that launched them (the fresh
    environment's, not this checkout's .venv), found by the builds themselves."""
    wheels = tmp_path / "wheels"
    run([sys.executable, "-m", "pip", "wheel", "--no-deps", "-q", "-w", str(wheels), ROOT])
    wheel = glob.glob(str(wheels / "neatpar-*.whl"))[0]
    python = fresh_venv(str(tmp_path / "env"), with_pip=False, borrow_dependencies=True)
    run([sys.executable, "-m", "pip", "--python", python, "install", "--no-deps", "-q", wheel])
    site = run([python, "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"]).stdout.strip()
    check_fast_wire(python, tmp_path, os.path.join(site, "neatpar"))
    launched = run([python, "-c", LAUNCHED_WITH.format(build=BALL, worker_id=free_worker_id())], cwd=tmp_path)
    assert launched.stdout.split() == [python, "-m", "neatpar.sim", "ball", python, "False"], launched.stderr


# A build's simulator process as a plain UnityEnvironment launches it: its command line, the
# launching interpreter, and whether NEATPAR_PYTHON was set.
LAUNCHED_WITH = (
    "import os, sys\n"
    "from mlagents_envs.environment import UnityEnvironment\n"
    "env = UnityEnvironment({build!r}, worker_id={worker_id}, no_graphics=True)\n"
    "try:\n"
    "    print(*open(f'/proc/{{env._process.pid}}/cmdline').read().split(chr(0))[:4], sys.executable,\n"
    "          'NEATPAR_PYTHON' in os.environ)\n"
    "finally:\n"
    "    env.close()\n"
)


def project_copy(folder) -> str:
    """A copy of this checkout's project files (no virtual environment, build output, compiled
    extensions, caches, dot-folders or tests) in `folder`; its path. An editable install builds the
    C extensions in place, which in this checkout would replace the extension files that the
    suite's other processes are importing meanwhile."""
    def ignored(where, names):
        generated = shutil.ignore_patterns(".*", "build", "dist", "site", "runs", "*.egg-info", "__pycache__", "*.so")
        return set(generated(where, names)) | {n for n in names if os.path.isfile(os.path.join(where, n, "pyvenv.cfg"))
                                               or (where == ROOT and n == "tests")}
    return shutil.copytree(ROOT, os.path.join(folder, "project"), ignore=ignored)


def test_editable_install_arms_the_hook(tmp_path):
    project = project_copy(tmp_path)
    python = fresh_venv(str(tmp_path / "env"), with_pip=False, borrow_dependencies=True)
    run([sys.executable, "-m", "pip", "--python", python, "install", "--no-deps", "-q", "-e", project])
    site = run([python, "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"]).stdout.strip()
    assert os.path.exists(os.path.join(site, "neatpar-fastwire.pth"))
    check_fast_wire(python, tmp_path, os.path.join(project, "neatpar"))
