"""neatpar on macOS and Windows, as far as a Linux machine can tell.

The platform-surface test runs the same script (tests/scripts/platform_run.py: `import neatpar`, a
seeded XOR run in process with neatpar's NEAT step classes and population kernel, a Gymnasium
`neatpar evolve` on CartPole with its networks on a spawn pool) here, and again with the surface
of macOS and of Windows as the project's own code sees it (tests/support/surface: no
os.sched_getaffinity, no fcntl, no signal.SIGKILL, /proc unreadable, sys.platform reported as
darwin or win32, and on Windows' surface no POSIX-only call or signal), spawned workers included;
the results must be the Linux run's (winner, fitness, every stats.csv value but the timings). It
guards against the next Linux-only call on the paths those runs take, and proves nothing about
the platforms' own behaviour: libraries keep this machine's surface, and what runs is Linux.

The layout scan lists the places where Linux-only or platform-branching code may be (PLACES) and
finds such code nowhere else in the project's code (neatpar/, the top-level modules, bench/,
examples/). The CI workflow for hosted macOS and Windows runners runs the README's test command."""
import ast
import json
import os
import subprocess
import sys

import pytest

from support.dev_commands import load_dev
from support.paths import ROOT

SURFACE = os.path.join(ROOT, "tests", "support", "surface")
SCRIPT = os.path.join(ROOT, "tests", "scripts", "platform_run.py")
TIMINGS = {"seconds", "scored_steps_per_s"}   # stats.csv's columns that measure time


def run_on(surface: str, folder: str) -> dict:
    """The script's report, run on `surface` ("" for this machine's own)."""
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([SURFACE, os.environ.get("PYTHONPATH", "")]).rstrip(os.pathsep),
               NEATPAR_SURFACE=surface)
    result = subprocess.run([sys.executable, SCRIPT, folder], env=env, cwd=ROOT, capture_output=True, text=True,
                            timeout=600)
    assert result.returncode == 0, result.stderr[-3000:]
    with open(os.path.join(folder, "report.json")) as f:
        return json.load(f)


@pytest.fixture(scope="module")
def linux(tmp_path_factory) -> dict:
    return run_on("", str(tmp_path_factory.mktemp("linux")))


def without_timings(rows: list[dict]) -> list[dict]:
    return [{key: value for key, value in row.items() if key not in TIMINGS} for row in rows]


@pytest.mark.slow
def test_the_linux_run_sees_the_linux_surface(linux):
    seen = linux["seen"]
    assert seen["platform"].startswith("linux") and seen["sched_getaffinity"] and seen["SIGKILL"] and seen["fcntl"]
    assert seen["proc"]
    assert seen["worker"] == {"platform": seen["platform"], "sched_getaffinity": True, "SIGKILL": True}
    assert linux["cartpole"]["status"] == 0 and len(linux["cartpole"]["rows"]) == 3


@pytest.mark.slow
@pytest.mark.parametrize("surface", ["darwin", "win32"])
def test_on_the_surface_of_another_platform_a_run_is_the_linux_run(linux, tmp_path, surface):
    report = run_on(surface, str(tmp_path))
    seen = report["seen"]
    assert (seen["platform"], seen["sched_getaffinity"], seen["SIGKILL"], seen["fcntl"], seen["proc"]) == \
        (surface, False, False, False, False)
    assert seen["worker"] == {"platform": surface, "sched_getaffinity": False, "SIGKILL": False}   # spawned too
    if surface == "win32":
        assert not seen["pthread_kill"] and not seen["setsid"] and seen["apart"] == ["creationflags"]
    assert seen["cpus"] == os.cpu_count()   # no affinity mask to read: the machine's CPUs
    assert report["xor"] == linux["xor"]
    ours, theirs = report["cartpole"], linux["cartpole"]
    assert ours["status"] == 0
    assert (ours["winner"], ours["fitness"]) == (theirs["winner"], theirs["fitness"])
    assert without_timings(ours["rows"]) == without_timings(theirs["rows"])
    events = [name for name in ours["files"] if name.startswith("events.out.tfevents.")]
    assert len(events) == 1
    assert [n for n in ours["files"] if n not in events] == [n for n in theirs["files"] if not n.startswith("events.")]


# ---------------------------------------------------------------- where platform code may be

MODULES = {"fcntl", "msvcrt", "winreg", "_winapi", "termios", "tty", "pty", "resource", "pwd", "grp", "posix",
           "select", "selectors"}   # select and selectors wait on sockets only, on Windows
NAMES = {"sched_getaffinity", "sched_setaffinity", "process_cpu_count", "SIGKILL", "SIGSTOP", "SIGCONT", "SIGHUP",
         "SIGQUIT", "SIGUSR1", "SIGUSR2", "SIGALRM", "SIGCHLD", "SIGBREAK", "CTRL_C_EVENT", "CTRL_BREAK_EVENT",
         "pthread_kill", "pthread_sigmask", "killpg", "setsid", "getsid", "setpgid", "getpgid", "getuid", "geteuid",
         "fork", "O_DIRECTORY", "O_CLOEXEC", "start_new_session", "preexec_fn", "creationflags",
         "CREATE_NEW_PROCESS_GROUP", "getwindowsversion"}
# os.kill: on Windows any signal but CTRL_C_EVENT and CTRL_BREAK_EVENT ends the process (os.kill(pid, 0) too)
QUALIFIED = {"sys.platform", "os.name", "os.uname", "platform.system", "os.cpu_count", "multiprocessing.cpu_count",
             "mp.cpu_count", "os.kill"}
PATHS = ("/proc", "/dev/shm", "/tmp", ".x86_64")   # string constants that name one platform's files

# The places allowed, each with what it may name and why.
PLACES = {
    "neatpar/processes.py": (   # the system's processes, chosen by what Python offers
        {"process_cpu_count", "sched_getaffinity", "os.cpu_count", "SIGBREAK", "SIGHUP", "pthread_kill", "setsid",
         "start_new_session", "creationflags", "CREATE_NEW_PROCESS_GROUP"}),
    "neatpar/envs/unity/builds.py": {"sys.platform", ".x86_64"},   # build names are per platform, as mlagents-envs has them
    "_neatpar_command.py": {"SIGBREAK", "SIGHUP"},  # the stop signals held while neatpar imports, without neatpar
    "setup.py": {"os.name"},                        # -pthread for POSIX compilers only
    "dev.py": {"sys.platform"},                     # Linux wheels are repaired into manylinux ones
    "bench/bench_evaluator.py": {"fork"},           # neat-python's pool with fork, measured where there is fork
    "bench/bench_long_runs.py": {"/proc"},          # a run's process tree's memory, read where Linux has it
}


def project_files() -> list[str]:
    """The project's Python code, relative to the repository: neatpar/, the top-level modules,
    bench/ and examples/."""
    found = [name for name in os.listdir(ROOT) if name.endswith(".py")]
    for top in ("neatpar", "bench", "examples"):
        for folder, _, names in os.walk(os.path.join(ROOT, top)):
            found += [os.path.relpath(os.path.join(folder, n), ROOT) for n in names if n.endswith(".py")]
    return sorted(path.replace(os.sep, "/") for path in found)


def dotted(node: ast.AST) -> str:
    if isinstance(node, ast.Attribute):
        return f"{dotted(node.value)}.{node.attr}"
    return node.id if isinstance(node, ast.Name) else ""


def docstrings(tree: ast.AST) -> set[int]:
    return {id(node.body[0].value) for node in ast.walk(tree)
            if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)) and node.body
            and isinstance(node.body[0], ast.Expr) and isinstance(node.body[0].value, ast.Constant)}


def platform_code(path: str) -> list[tuple[int, str]]:
    """Where a file names a platform's own module, call, signal or files, or branches on the
    platform's name: (line, what)."""
    tree = ast.parse(open(os.path.join(ROOT, path)).read(), path)
    skipped = docstrings(tree)
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found += [(node.lineno, a.name) for a in node.names if a.name.split(".")[0] in MODULES]
        elif isinstance(node, ast.ImportFrom) and not node.level:
            top = (node.module or "").split(".")[0]
            found += [(node.lineno, top)] if top in MODULES else []
            found += [(node.lineno, a.name) for a in node.names if a.name in NAMES]
        elif isinstance(node, ast.Attribute):
            if node.attr in NAMES:
                found.append((node.lineno, node.attr))
            elif dotted(node) in QUALIFIED:
                found.append((node.lineno, dotted(node)))
        elif isinstance(node, ast.keyword) and node.arg in NAMES:
            found.append((node.value.lineno, node.arg))
        elif isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in skipped:
            if node.value in NAMES:
                found.append((node.lineno, node.value))
            found += [(node.lineno, p) for p in PATHS if p in node.value]
    return sorted(set(found))


def test_platform_code_is_only_where_it_is_allowed():
    wrong = [f"{path}:{line}: {what}" for path in project_files() for line, what in platform_code(path)
             if what not in PLACES.get(path, ())]
    assert not wrong, "\n".join(wrong)


def test_the_scan_sees_what_it_looks_for():
    """Each allowed place names what it is allowed (an allowance nothing uses is a stale one)."""
    for path, allowed in PLACES.items():
        assert {what for _, what in platform_code(path)} == allowed, path


def test_the_workflow_runs_the_readme_s_test_command_on_each_platform_and_python():
    """.github/workflows/test.yml: Linux, macOS and Windows runners, each supported Python, `make
    test` where there is make and dev.py's same command on Windows, as the README gives them, with
    the runner's Python."""
    import yaml   # mkdocs's dependency (the test extra)
    dev = load_dev()
    with open(os.path.join(ROOT, ".github", "workflows", "test.yml")) as f:
        job = yaml.safe_load(f)["jobs"]["test"]
    assert job["strategy"]["matrix"]["os"] == ["ubuntu-latest", "macos-latest", "windows-latest"]
    assert job["strategy"]["matrix"]["python"] == sorted(dev.SUPPORTED)
    assert [s["with"]["python-version"] for s in job["steps"] if s.get("uses", "").startswith("actions/setup-python")] \
        == ["${{ matrix.python }}"]
    assert {s["if"]: s["run"] for s in job["steps"] if "run" in s} == {
        "runner.os != 'Windows'": "make test PYTHON=python", "runner.os == 'Windows'": "python dev.py test --python python"}
    readme = open(os.path.join(ROOT, "README.md")).read()
    assert "make test" in readme and "py dev.py test" in readme


def test_the_release_workflow_builds_wheels_for_every_platform_and_python():
    """.github/workflows/wheels.yml: cibuildwheel on Linux (both architectures), macOS (both) and
    Windows, for CPython builds of each supported Python."""
    import yaml
    dev = load_dev()
    with open(os.path.join(ROOT, ".github", "workflows", "wheels.yml")) as f:
        job = yaml.safe_load(f)["jobs"]["wheels"]
    assert {"ubuntu-latest", "ubuntu-24.04-arm", "macos-13", "macos-latest", "windows-latest"} \
        == set(job["strategy"]["matrix"]["os"])
    build = next(s for s in job["steps"] if s.get("uses", "").startswith("pypa/cibuildwheel"))
    assert build["env"]["CIBW_BUILD"].split() == [f"cp{v.replace('.', '')}-*" for v in sorted(dev.SUPPORTED)]
