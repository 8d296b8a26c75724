"""The package's shape: its modules stand in one stack of floors (STACK), every import points into
the importer's own package or to a floor below (no exception, function-level imports included),
the pool and the NEAT step stand alone, there is no import cycle, and importing neatpar changes
nothing outside it."""
import ast
import os
import re
import subprocess
import sys

from support.paths import ROOT

PACKAGE = os.path.join(ROOT, "neatpar")
# The simulator builds' package, a separate program beside the builds (not in neatpar's wheel).
SIMULATORS = os.path.join(ROOT, "unity_builds", "neatpar_sim")


def home(path: str) -> str:
    """The folder a module's name is relative to: the one that holds its top package."""
    return os.path.dirname(SIMULATORS) if path.startswith(SIMULATORS + os.sep) else ROOT


def module_name(path: str) -> str:
    relative = os.path.relpath(path, home(path))[:-3].replace(os.sep, ".")
    return relative[: -len(".__init__")] if relative.endswith(".__init__") else relative


def modules() -> dict[str, str]:
    """neatpar's modules and the simulator builds' (a separate program) -> file path; a C extension
    counts as a module that imports nothing."""
    found = {}
    for top in (PACKAGE, SIMULATORS):
        for folder, _, files in os.walk(top):
            for name in files:
                path = os.path.join(folder, name)
                if name.endswith(".py"):
                    found[module_name(path)] = path
                elif name.endswith(".c"):
                    found[module_name(path[:-2] + ".py")] = ""
    return found


def imports(name: str, path: str, known: set[str]) -> set[str]:
    """The neatpar modules `name` imports anywhere in its file (functions included)."""
    if not path:
        return set()
    package = name if path.endswith("__init__.py") else name.rpartition(".")[0]
    found = set()
    for node in ast.walk(ast.parse(open(path).read(), path)):
        if isinstance(node, ast.Import):
            targets = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                parts = package.split(".")
                base = ".".join(parts[: len(parts) - node.level + 1] + ([base] if base else []))
            # `from package import module` imports the module; `from module import name` the module
            targets = [f"{base}.{a.name}" if f"{base}.{a.name}" in known else base for a in node.names]
        else:
            continue
        for target in targets:
            while target and target not in known:  # `from x import name` where name is not a module
                target = target.rpartition(".")[0]
            if target and target != name:
                found.add(target)
    return found


def graph() -> dict[str, set[str]]:
    found = modules()
    known = set(found)
    return {name: imports(name, path, known) for name, path in found.items()}


def find_cycle(edges: dict[str, set[str]]) -> list[str] | None:
    state: dict[str, int] = {}
    stack: list[str] = []

    def visit(node):
        state[node] = 1
        stack.append(node)
        for nxt in sorted(edges.get(node, ())):
            if state.get(nxt) == 1:
                return stack[stack.index(nxt):] + [nxt]
            if nxt not in state:
                cycle = visit(nxt)
                if cycle:
                    return cycle
        stack.pop()
        state[node] = 2
        return None

    for node in sorted(edges):
        if node not in state:
            cycle = visit(node)
            if cycle:
                return cycle
    return None


def test_the_graph_sees_function_level_and_relative_imports():
    edges = graph()
    assert "neatpar.episodes.env_evaluator" in edges["neatpar"]            # inside __getattr__
    assert "neatpar.parallel.ray_tasks" in edges["neatpar.parallel.parallel_evaluator"]  # inside a function
    assert "neatpar.errors" in edges["neatpar.envs.unity.bridge"]  # from ...errors import


def test_no_import_cycle():
    cycle = find_cycle(graph())
    assert cycle is None, "import cycle: " + " -> ".join(cycle)


# The stack, bottom floor first. A module imports only modules of its own package (the names of
# its floor it is within) and of the floors below it, function-level imports included; packages
# that share a floor do not import each other. The top floor, the package itself, holds the public
# names (neatpar/__init__.py, __main__.py, settings.py). The simulator builds (neatpar_sim, beside
# them in unity_builds/) are a separate program: they import nothing of the stack, and nothing of it
# imports them.
STACK = (
    ("neatpar.errors", "neatpar.version",    # every exception neatpar raises; its version
     "neatpar.processes"),                   # the system's processes, CPUs and signals, on every platform
    ("neatpar.environment",   # the environment interface the runner steps: layouts, batches, the game's stats
     "neatpar.genome_file",   # the genome file format
     "neatpar.run_state"),    # what an evaluator carries between generations
    ("neatpar.generation_stats",),  # what a generation cost and saw (with the game's stats of environment.py)
    ("neatpar.config",),      # the settings: readers, the model, its keys' rules, config files, resume policy
    ("neatpar.parallel",      # the spawn pool and ParallelEvaluator, environment-free
     "neatpar.evolution"),    # the NEAT step classes
    ("neatpar.nn",            # the population kernel, the network kinds' engines, ONNX export
     "neatpar.search"),       # how a generation is scored and selected: fitness, novelty, MAP-Elites
    ("neatpar.envs",),        # Unity ML-Agents and Gymnasium as the runner's environments
    ("neatpar.episodes",      # what turns genomes into fitness: runner, evaluators, inference, env hosts, leagues
     "neatpar.record"),       # what a run leaves behind
    ("neatpar.run",),         # a run: its plan, lifecycle, records while it runs, interrupts; evolve() and resume()
    ("neatpar.cli",),         # the neatpar command
    ("neatpar",),             # the package's public names
)
SEPARATE = "neatpar_sim"
PUBLIC = ("neatpar", "neatpar.__main__", "neatpar.settings")   # the top floor's modules


def within(name: str, prefix: str) -> bool:
    return name == prefix or name.startswith(prefix + ".")


def place(name: str) -> tuple[int, str]:
    """The floor of the stack a module is on and the package (or module) of that floor it is
    within: the most precise name that holds it."""
    return max((len(prefix), number, prefix) for number, prefixes in enumerate(STACK) for prefix in prefixes
               if within(name, prefix))[1:]


def test_every_module_is_on_a_floor():
    """A new module or package (outside the builds) is given its floor in STACK."""
    lost = [name for name in graph() if not within(name, SEPARATE) and place(name)[0] == len(STACK) - 1
            and name not in PUBLIC]
    assert not lost, f"on no floor of the stack: {lost}"


def test_layers_import_downwards_only():
    """Every import of every module points into its own package or to a floor below it: no
    exception. The builds and the stack do not import each other."""
    wrong = []
    for name, targets in graph().items():
        for target in targets:
            if within(name, SEPARATE) or within(target, SEPARATE):
                if not (within(name, SEPARATE) and within(target, SEPARATE)):
                    wrong.append(f"{name} -> {target}")
                continue
            (floor, package), (target_floor, target_package) = place(name), place(target)
            if target_floor > floor or (target_floor == floor and target_package != package):
                wrong.append(f"{name} (floor {floor}: {package}) -> {target} (floor {target_floor}: {target_package})")
    assert not wrong, wrong


def test_the_generic_engine_stands_alone():
    """parallel/ (the pool) knows nothing of neatpar but its errors and the system's processes, and
    evolution/ (the NEAT step) nothing of neatpar but the CPU count (processes.py): both serve a
    neat-python script without the rest."""
    edges = graph()
    wrong = [f"{name} -> {t}" for name, targets in edges.items() if within(name, "neatpar.parallel")
             for t in targets if not (within(t, "neatpar.parallel") or t in ("neatpar.errors", "neatpar.processes"))]
    wrong += [f"{name} -> {t}" for name, targets in edges.items() if within(name, "neatpar.evolution")
              for t in targets if not (within(t, "neatpar.evolution") or t == "neatpar.processes")]
    assert not wrong, wrong


def test_import_neatpar_patches_nothing():
    script = (
        "import multiprocessing.spawn, threading, sys\n"
        "before = (multiprocessing.spawn.get_preparation_data, list(threading._threading_atexits), list(sys.meta_path))\n"
        "import neatpar\n"
        "after = (multiprocessing.spawn.get_preparation_data, list(threading._threading_atexits), list(sys.meta_path))\n"
        "print(before == after, 'neatpar.episodes.env_evaluator' in sys.modules, 'mlagents_envs' in sys.modules)\n"
    )
    result = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, cwd=ROOT, timeout=60)
    assert result.stdout.split() == ["True", "False", "False"], result.stderr


def test_the_first_pool_installs_what_it_needs():
    script = (
        "import multiprocessing.spawn, threading\n"
        "import neatpar\n"
        "original = multiprocessing.spawn.get_preparation_data\n"
        "if __name__ == '__main__':\n"
        "    with neatpar.Pool(1) as pool:\n"
        "        pass\n"
        "    print(multiprocessing.spawn.get_preparation_data is not original, len(threading._threading_atexits) > 0)\n"
    )
    result = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, cwd=ROOT, timeout=60)
    assert result.stdout.split() == ["True", "True"], result.stderr


ENVIRONMENT_NAMES = re.compile(r"mlagents|ml-agents|unity|gymnasium|\bgym\b", re.IGNORECASE)


def environment_mentions(folder: str) -> list[str]:
    """Every line of the modules under `folder` (code, strings and comments) naming an environment."""
    found = []
    for name, path in modules().items():
        if path.startswith(folder + os.sep):
            for number, line in enumerate(open(path).read().splitlines(), 1):
                if ENVIRONMENT_NAMES.search(line):
                    found.append(f"{name}:{number}: {line.strip()}")
    return found


def test_parallel_names_no_environment():
    """parallel/ learns what a worker must clear or refuse from declarations (envs/live_handles.py
    declares ML-Agents' classes): no environment's name appears in it, not even in a string."""
    assert environment_mentions(os.path.join(PACKAGE, "parallel")) == []
    assert environment_mentions(os.path.join(PACKAGE, "envs"))  # the check sees what it looks for


TESTS = os.path.join(ROOT, "tests")


def has_logic(path: str) -> bool:
    """A module with logic of its own defines a function or method (records and constants do not)."""
    tree = ast.parse(open(path).read(), path)
    return any(isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) for node in ast.walk(tree))


def mirror_names(path: str, shared: set[str]) -> list[str]:
    """Where a module's tests live: tests/test_<name>.py or tests/test_<package>_<name>.py (the
    package's form only, for a name two packages use)."""
    package, name = os.path.basename(os.path.dirname(path)), os.path.basename(path)[:-3].lstrip("_")
    prefixed = f"test_{package}_{name}.py"
    return [prefixed] if name in shared else [f"test_{name}.py", prefixed]


def test_each_module_with_logic_has_its_own_test_module_that_names_it():
    """The tests mirror the code: a test module per module with logic, whose docstring names the
    module's file (`cli/evolve.py`; a simulator module's as `neatpar_sim/player.py`), so that a
    reader finds one from the other."""
    found = {name: path for name, path in modules().items()
             if path and not path.endswith(("__init__.py", "__main__.py")) and has_logic(path)}
    names = [os.path.basename(path)[:-3].lstrip("_") for path in found.values()]
    shared = {name for name in names if names.count(name) > 1}
    wrong = []
    for name, path in sorted(found.items()):
        relative = os.path.relpath(path, PACKAGE if within(name, "neatpar") else home(path))
        candidates = [c for c in mirror_names(path, shared) if os.path.exists(os.path.join(TESTS, c))]
        if not candidates:
            wrong.append(f"{relative}: no {' or '.join(mirror_names(path, shared))}")
            continue
        text = ast.get_docstring(ast.parse(open(os.path.join(TESTS, candidates[0])).read())) or ""
        if relative not in " ".join(text.split()):
            wrong.append(f"{relative}: the docstring of tests/{candidates[0]} does not name {relative}")
    assert not wrong, "\n".join(wrong)


def test_every_folder_of_modules_is_a_package():
    """A folder of modules without __init__.py would import as a namespace package here, but a
    wheel built by `packages.find` would leave it out."""
    missing = [os.path.relpath(folder, ROOT) for folder, _, files in os.walk(PACKAGE)
               if "__pycache__" not in folder and any(f.endswith(".py") for f in files) and "__init__.py" not in files]
    assert not missing, missing


# File names two modules of neatpar may share, each with its reason: a module's file name says what
# it holds, so one name is one concept (two modules share it only as the same concept at two layers).
SHARED_FILE_NAMES = {
    "__init__.py": "Python's own name for a package's module",
    "__main__.py": "Python's own name for what `python -m package` runs",
}

# Public class names two modules of neatpar may share, each with its reason.
SHARED_CLASS_NAMES = {
    "DefaultReproduction": "neat-python reads a reproduction class's keys from the config section named "
                           "after the class: evolution/reproduction.py's drop-in and search/map_elites.py's "
                           "(MAP-Elites' children) both read the neat config's `[DefaultReproduction]`",
}


def package_files() -> list[str]:
    """The paths (relative to neatpar/) of neatpar's Python modules."""
    return sorted(os.path.relpath(os.path.join(folder, name), PACKAGE) for folder, _, files in os.walk(PACKAGE)
                  if "__pycache__" not in folder for name in files if name.endswith(".py"))


def shared(names: dict[str, list[str]], allowed: dict[str, str]) -> dict[str, list[str]]:
    return {name: places for name, places in sorted(names.items()) if len(places) > 1 and name not in allowed}


def test_no_two_modules_share_a_file_name():
    """`evaluator.py` names one module, not one per package: a file's name says what it holds
    (SHARED_FILE_NAMES: the names allowed twice, with the reason)."""
    names: dict[str, list[str]] = {}
    for path in package_files():
        names.setdefault(os.path.basename(path), []).append(path)
    found = shared(names, SHARED_FILE_NAMES)
    assert not found, found


def test_no_two_public_classes_share_a_name():
    """A public class's name names one class of neatpar (SHARED_CLASS_NAMES: the names allowed
    twice, with the reason); a private one (`_Name`) may repeat."""
    names: dict[str, list[str]] = {}
    for path in package_files():
        tree = ast.parse(open(os.path.join(PACKAGE, path)).read(), path)
        for node in tree.body:
            if isinstance(node, ast.ClassDef) and not node.name.startswith("_"):
                names.setdefault(node.name, []).append(path)
    found = shared(names, SHARED_CLASS_NAMES)
    assert not found, found


def test_no_module_is_over_500_lines():
    """A module that outgrows 500 lines holds more than one concern: split it by concern."""
    long = {os.path.relpath(path, ROOT): n for path in modules().values() if path
            for n in [sum(1 for _ in open(path))] if n > 500}
    assert not long, long
