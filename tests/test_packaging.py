"""neatpar installed the ways users install it: a wheel built from the sdist into a fresh
environment without extras (then a short `neatpar evolve` to its end), a wheel, and an editable
install; each must have the fast wire in effect. The installed wheel also runs from inside a fresh
clone of the repository, whose neatpar/ sources (no C extensions built) must not hide it from the
simulator or the pool workers."""
import glob
import json
import os
import shutil
import subprocess
import sys
import sysconfig
import tarfile
import venv
import zipfile
from typing import NamedTuple

import pytest

from support.configs import ball_cfg
from support.paths import BALL, BUILDS, ROOT
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


def run(args, env=CLEAN_ENV, **kwargs):
    result = subprocess.run(args, capture_output=True, text=True, timeout=900, env=env, **kwargs)
    assert result.returncode == 0, (args, result.stdout[-2000:], result.stderr[-3000:])
    return result


def fresh_venv(folder, with_pip=True, borrow_dependencies=False) -> str:
    """A new virtual environment; with `borrow_dependencies`, this environment's site-packages is
    added as a plain path (its .pth files, this checkout's editable install among them, are not
    processed), so installing neatpar with --no-deps is enough. Of those .pth files it takes
    setuptools' distutils shim: mlagents-envs imports distutils, which Python 3.12 dropped."""
    venv.create(folder, with_pip=with_pip)
    python = os.path.join(folder, "bin", "python")
    if borrow_dependencies:
        site = run([python, "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"]).stdout.strip()
        borrowed = sysconfig.get_paths()["purelib"]
        with open(os.path.join(site, "deps.pth"), "w") as f:   # processed before the shim's .pth
            f.write(borrowed + "\n")
        shim = os.path.join(borrowed, "distutils-precedence.pth")
        if os.path.exists(shim):
            shutil.copy(shim, site)
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
    assert not [n for n in zipfile.ZipFile(wheel).namelist() if "sim/" in n or n.startswith("unity_builds")]  # beside it
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


class Installed(NamedTuple):
    """neatpar installed from a wheel into a fresh environment: its Python and neatpar folder."""
    python: str
    home: str


@pytest.fixture(scope="module")
def installed(tmp_path_factory) -> Installed:
    """A wheel built from this checkout, installed into a fresh environment that borrows this one's
    dependencies; built once for the tests that only run it."""
    folder = tmp_path_factory.mktemp("installed")
    wheels = folder / "wheels"
    run([sys.executable, "-m", "pip", "wheel", "--no-deps", "-q", "-w", str(wheels), ROOT])
    wheel = glob.glob(str(wheels / "neatpar-*.whl"))[0]
    python = fresh_venv(str(folder / "env"), with_pip=False, borrow_dependencies=True)
    run([sys.executable, "-m", "pip", "--python", python, "install", "--no-deps", "-q", wheel])
    site = run([python, "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"]).stdout.strip()
    return Installed(python, os.path.join(site, "neatpar"))


def test_installed_wheel_arms_the_hook_in_a_fresh_environment(installed, tmp_path):
    """... and the simulator builds run on the interpreter that launched them (the fresh
    environment's, not this checkout's .venv), found by the builds themselves."""
    python = installed.python
    check_fast_wire(python, tmp_path, installed.home)
    launched = run([python, "-c", LAUNCHED_WITH.format(build=BALL, worker_id=free_worker_id())], cwd=tmp_path)
    args, executable, preset = json.loads(launched.stdout)
    assert (args[:2], args[3:], executable, preset) == ([python, "-c"], [BUILDS, "ball"], python, False), launched.stderr
    assert "neatpar_sim" in args[2]


# A build's simulator process as a plain UnityEnvironment launches it: its command line (the
# launcher's code, then the simulators' folder it puts on sys.path, then the task), the
# launching interpreter, and whether NEATPAR_PYTHON was set.
LAUNCHED_WITH = (
    "import json, os, sys\n"
    "from mlagents_envs.environment import UnityEnvironment\n"
    "env = UnityEnvironment({build!r}, worker_id={worker_id}, no_graphics=True)\n"
    "try:\n"
    "    args = open(f'/proc/{{env._process.pid}}/cmdline').read().split(chr(0))[:5]\n"
    "    print(json.dumps([args, sys.executable, 'NEATPAR_PYTHON' in os.environ]))\n"
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


# Runs from a fresh clone write the bytecode of every module they import beside its source, so a
# clone's neatpar/ with a __pycache__ folder afterwards was imported by some process of the run.
WRITES_BYTECODE = {k: v for k, v in CLEAN_ENV.items() if k not in ("PYTHONDONTWRITEBYTECODE", "PYTHONPYCACHEPREFIX")}


def fresh_clone(folder) -> str:
    """A folder as a fresh clone of this repository looks to a run started in it: the configs, the
    simulator builds and the neatpar package's sources, with no C extension built and no bytecode."""
    clone = os.path.join(folder, "clone")
    for name in ("configs", "unity_builds", "neatpar"):
        shutil.copytree(os.path.join(ROOT, name), os.path.join(clone, name), symlinks=True,
                        ignore=shutil.ignore_patterns("__pycache__", "*.so", "*.pyd"))
    return clone


def imported_from(clone) -> list[str]:
    """The folders of the clone's neatpar/ whose modules some process imported (see WRITES_BYTECODE)."""
    return [where for where, folders, _ in os.walk(os.path.join(clone, "neatpar")) if "__pycache__" in folders]


def test_installed_neatpar_evolves_on_a_build_of_a_fresh_clone(installed, tmp_path):
    """`neatpar evolve` in a clone: the build's launcher runs the simulator on the installed neatpar."""
    clone = fresh_clone(tmp_path)
    config = ball_cfg(os.path.join(clone, "configs"), name="small-ball.cfg", generations=1,
                      env="../unity_builds/ball")
    neatpar = os.path.join(os.path.dirname(installed.python), "neatpar")
    result = run([neatpar, "evolve", "--config", config, "--out", str(tmp_path / "run")], cwd=clone,
                 env=WRITES_BYTECODE)
    assert "winner: genome" in result.stdout
    assert imported_from(clone) == []


# A neat-python script on a spawn pool (README's), kept outside the clone: a script in it would
# import the clone's neatpar itself, its folder being first on its sys.path. Each process prints
# where its neatpar came from.
POOL_SCRIPT = r"""
import os, sys
import neat
import neatpar

def eval_genome(genome, config):
    home = os.path.dirname(sys.modules["neatpar"].__file__)
    os.write(1, f"worker {os.getpid()} {home}\n".encode())   # one write: the workers share the pipe
    return 1.0

if __name__ == "__main__":
    config = neat.Config(neatpar.Genome, neatpar.Reproduction, neatpar.SpeciesSet, neat.DefaultStagnation,
                         "configs/xor.cfg")
    with neatpar.ParallelEvaluator(2, eval_genome, seed=7) as evaluator:
        neat.Population(config, seed=7).run(evaluator.evaluate, 1)
    print("parent", os.getpid(), os.path.dirname(neatpar.__file__), flush=True)
"""


def test_installed_neatpar_spawns_pool_workers_in_a_fresh_clone(installed, tmp_path):
    """A script run in a clone: its spawn workers import the installed neatpar, as the script does."""
    clone = fresh_clone(tmp_path)
    script = tmp_path / "pool_script.py"
    script.write_text(POOL_SCRIPT)
    result = run([installed.python, str(script)], cwd=clone, env=WRITES_BYTECODE)
    lines = [line.split(" ", 2) for line in result.stdout.splitlines() if line.startswith(("worker ", "parent "))]
    (parent, parent_home), = [(pid, home) for who, pid, home in lines if who == "parent"]
    workers = {(pid, home) for who, pid, home in lines if who == "worker"}
    assert parent_home == installed.home, result.stdout[-2000:]
    assert workers and {home for _, home in workers} == {installed.home}, result.stdout[-2000:]
    assert parent not in {pid for pid, _ in workers}
    assert imported_from(clone) == []
