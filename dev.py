"""The project's commands, one definition on every platform: `python dev.py COMMAND` (on Windows
`py -3.11 dev.py COMMAND`; the Makefile's targets run the same commands through this file).

    venv       create or refresh .venv: an editable install of this folder with the extras
    demo       venv, then evolve a controller for the ball simulator (configs/ball.cfg)
    test       venv, then the whole test suite in two processes (arguments after `--` go to pytest)
    test-fast  venv, then the tests not marked slow, in two processes, stopping at the first failure
    docs       venv, then the documentation site into site/ (reference pages regenerated, strict build)
    notebook   venv, then the example notebook run in a real kernel, its outputs saved in it
    bench      venv, then every benchmark script
    clean      remove .venv, build/, site/, *.egg-info and the test caches

The install is refreshed only when it is older than what it is built from (pyproject.toml, setup.py,
MANIFEST.in, the C sources, the start-up hook, this file) or was made with other extras, so a
re-run is quick. It runs as a script, not as `python -m neatpar...`: importing neatpar needs its C
extensions, which this file builds.
"""
from __future__ import annotations

import argparse
import glob
import os
import shutil
import subprocess
import sys
import sysconfig

ROOT = os.path.dirname(os.path.abspath(__file__))
EXTRAS = "test,plot,ray,gym,video"
STAMP = ".neatpar-installed"   # in the venv: the extras of the last install, newer than its sources
SOURCES = ("dev.py", "pyproject.toml", "setup.py", "MANIFEST.in", "neatpar-fastwire.pth",
           "neatpar/*/*.c", "neatpar/*/*/*.c", "neatpar/*/*.h", "neatpar/*/*/*.h")
BENCHMARKS = ("bench_evaluator", "bench_kernel", "bench_ctrnn", "bench_neat_step", "bench_wire", "bench_visual",
              "bench_hosts", "bench_frames")
# pytest-xdist: two processes (the machines this suite is planned for have 2 cores; many tests wait
# on simulators and workers), the tests marked with one xdist_group in the same one. `-- -n 0` after
# the command runs everything in one process; a later -n or --dist wins.
PARALLEL = ("-n", "2", "--dist", "loadgroup")
COMMANDS = ("venv", "demo", "test", "test-fast", "docs", "notebook", "bench", "clean")
CLEANED = (".venv", "build", "site", "*.egg-info", ".pytest_cache", ".hypothesis")


def scripts(venv: str) -> str:
    """The folder of a virtual environment's programs (bin/, or Scripts\\ on Windows)."""
    return sysconfig.get_path("scripts", "venv", vars={"base": venv, "platbase": venv})


def program(venv: str, name: str) -> str:
    """A program of the virtual environment by name (python, neatpar, mkdocs; .exe on Windows)."""
    return shutil.which(name, path=scripts(venv)) or os.path.join(scripts(venv), name)


def stale(venv: str, extras: str) -> bool:
    """Whether the install must be made again: none yet, other extras, or a source newer than it."""
    stamp = os.path.join(venv, STAMP)
    if shutil.which("python", path=scripts(venv)) is None or not os.path.isfile(stamp):
        return True
    with open(stamp) as f:
        if f.read().strip() != extras:
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
    """Create or refresh the virtual environment and neatpar's editable install in it."""
    folder = os.path.join(ROOT, options.venv)
    if not stale(folder, options.extras):
        return 0
    if shutil.which("python", path=scripts(folder)) is None:
        status = run([sys.executable, "-m", "venv", folder])
        if status:
            return status
    status = run([program(folder, "python"), "-m", "pip", "install", "-q", "--disable-pip-version-check", "-e",
                  f".[{options.extras}]"])
    if status == 0:
        with open(os.path.join(folder, STAMP), "w") as f:
            f.write(options.extras + "\n")
    return status


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
    parser = argparse.ArgumentParser(prog="dev.py", description=__doc__.split("\n\n")[0],
                                     formatter_class=argparse.RawDescriptionHelpFormatter,
                                     epilog=__doc__.split("\n\n")[1])
    parser.add_argument("command", choices=COMMANDS)
    parser.add_argument("--venv", default=os.environ.get("VENV", ".venv"), help="the virtual environment's folder")
    parser.add_argument("--extras", default=os.environ.get("EXTRAS", EXTRAS), help="neatpar's extras to install")
    parser.add_argument("rest", nargs="*", help="after --: arguments for pytest (test, test-fast)")
    options = parser.parse_args(argv)
    if sys.version_info[:2] != (3, 11):
        return ("neatpar needs Python 3.11: run this with it (py -3.11 dev.py ... on Windows, or "
                "make PYTHON=/path/to/python3.11)")
    if options.command == "clean":
        return clean(options)
    status = venv(options)
    env = dict(os.environ, NO_MKDOCS_2_WARNING="1") if options.command == "docs" else None
    for command in commands(options) if status == 0 else []:
        status = run(command, env)
        if status:
            break
    return status


if __name__ == "__main__":
    sys.exit(main())
