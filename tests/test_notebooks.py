"""ParallelEvaluator where spawn workers cannot import the fitness function: a real Jupyter kernel
running a notebook, `python -c`, and a script read from stdin. The function travels by value,
the evolution equals the serial run, and what cannot travel fails at once with one line.
(Start failures of every kind are in test_workers.py.) And the example notebook the documentation
shows runs in a real kernel and prints what is saved in it."""
import json
import os
import re
import subprocess
import sys

import nbclient
import nbformat
import pytest

from support.docs import docs_tool
from support.paths import ROOT
from support.processes import wait_gone

SCRIPTS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "scripts")
EVOLUTION = os.path.join(SCRIPTS, "interactive_evolution.ipynb")
EXAMPLE = os.path.join(ROOT, "examples", "neat_python_session.ipynb")


def code_of(notebook) -> str:
    """The notebook's code cells, one after another: the same program as a script."""
    return "\n\n".join(cell.source for cell in notebook.cells if cell.cell_type == "code")


def run_notebook(notebook):
    """Execute the notebook in a real ipykernel (from ROOT); the text its cells printed."""
    nbclient.NotebookClient(notebook, timeout=120, kernel_name="python3",
                            resources={"metadata": {"path": ROOT}}).execute()
    return "".join(output.get("text", "") for cell in notebook.cells if cell.cell_type == "code"
                   for output in cell.outputs if output.output_type == "stream" and output.name == "stdout")


def run_python(args, stdin=None):
    result = subprocess.run([sys.executable, *args], input=stdin, capture_output=True, text=True, cwd=ROOT,
                            timeout=120)
    assert result.returncode == 0, result.stderr
    return result.stdout


def check_evolution(printed: str) -> None:
    results = json.loads(printed.strip().splitlines()[-1])
    serial = results["serial"]
    assert len(serial["best"]) == 4 and 2.0 < serial["winner"][1] < 4.01  # a real evolution ran
    for failure_fitness in ("None", "0.0"):
        assert results[f"parallel failure_fitness={failure_fitness}"] == serial
        assert results[f"worker starts failure_fitness={failure_fitness}"] == 2  # no worker died, none respawned
    assert results["initializer sets a global"] == [0.0, 3.0, 6.0, 9.0, 12.0, 15.0]
    assert results["cleared by request"] == (
        "ClearedGlobalError: global 'TABLE' (cleared by request) of your main module was cleared in this neatpar "
        "worker: it belongs to the main process. Pass what the worker needs as an argument (or with "
        "initializer/initargs), or create it inside the function that runs in the worker.")
    assert results["cannot travel"] == (
        "TransferError: cannot send eval_function to a worker: eval_function's global 'LOCK' cannot be pickled "
        "(TypeError: cannot pickle '_thread.lock' object)")
    assert len(results["worker_pids"]) == 7 and not wait_gone(results["worker_pids"], 2.0)


@pytest.mark.slow
def test_a_notebook_cell_defines_eval_genome_and_evolution_equals_the_serial_run():
    check_evolution(run_notebook(nbformat.read(EVOLUTION, as_version=4)))


def test_python_dash_c_evolution_equals_the_serial_run():
    check_evolution(run_python(["-c", code_of(nbformat.read(EVOLUTION, as_version=4))]))


def test_a_script_read_from_stdin_evolution_equals_the_serial_run():
    check_evolution(run_python(["-"], stdin=code_of(nbformat.read(EVOLUTION, as_version=4))))


def shown(notebook) -> list[tuple[str, list, list]]:
    """What each code cell shows: the text it printed, the kinds of its displays (a plot's bytes may
    differ from machine to machine, its presence does not) and its errors."""
    cells = []
    for cell in notebook.cells:
        if cell.cell_type != "code":
            continue
        text = "".join(o.text for o in cell.outputs if o.output_type == "stream" and o.name == "stdout")
        displays = [sorted(o.data) for o in cell.outputs if o.output_type in ("display_data", "execute_result")]
        errors = [f"{o.ename}: {o.evalue}" for o in cell.outputs if o.output_type == "error"]
        cells.append((text, displays, errors))
    return cells


@pytest.mark.slow
def test_the_example_notebook_runs_and_prints_what_is_saved_in_it():
    executed = shown(docs_tool().run_notebook(EXAMPLE))  # from examples/, as Jupyter runs it
    assert not [error for _, _, errors in executed for error in errors]
    assert executed == shown(nbformat.read(EXAMPLE, as_version=4)), (
        "examples/neat_python_session.ipynb's saved outputs are not what it prints now: run make notebook")
    printed = "".join(text for text, _, _ in executed)
    assert float(re.search(r"winner: genome \d+, fitness ([\d.]+)", printed).group(1)) >= 3.9  # XOR solved
    means = [float(m) for m in re.findall(r"generation \d+: best +[-\d.]+, mean +([-\d.]+)", printed)]
    assert len(means) == 8 and means[-1] > means[0] + 100  # the landers improved
    assert [kinds for _, displays, _ in executed for kinds in displays if "image/png" in kinds] == [
        ["image/png", "text/plain"]] * 3  # three plots, inline
