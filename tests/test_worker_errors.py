"""Tests of parallel/worker_errors.py: the one-line error for each way a pool worker can fail
before it runs a task, by the stage it reached, and for a task it cannot load; the advice that
depends on the main script, checked from a real script and from `python -c`."""
import json
import subprocess
import sys

from hypothesis import given, settings
from hypothesis import strategies as st

from support.paths import ROOT
from neatpar.errors import TransferError, UnguardedScriptError, WorkerStartError
from neatpar.parallel.messages import LoadFailed, StartFailed, StartStage
from neatpar.parallel.worker_errors import IMPORT_ADVICE, START_ADVICE, died_starting, load_advice, start_failed, \
    task_not_loaded

HEAD = "pool worker 1 (pid 99) exited with exit code 3"

# What a main-script-dependent error says, as a script and as `python -c` see it.
MAIN_DEPENDENT = """
import json
from neatpar.parallel.messages import StartFailed, StartStage
from neatpar.parallel.worker_errors import died_starting, start_failed
def shown(error):
    return [type(error).__name__, str(error)]
print(json.dumps({
    "start_failed": shown(start_failed(StartFailed(StartStage.IMPORT, "NameError: name 'x' is not defined", ""))),
    "died_importing": shown(died_starting("pool worker 0 (pid 5) exited with exit code 1", StartStage.IMPORT, "",
                                          None)),
}))
"""


def main_dependent(*args: str) -> dict:
    result = subprocess.run([sys.executable, *args], capture_output=True, text=True, cwd=ROOT, timeout=60)
    assert result.returncode == 0, result.stderr
    return json.loads(result.stdout)


def test_a_failure_while_re_importing_a_main_script_tells_how_to_guard_it(tmp_path):
    script = tmp_path / "train.py"
    script.write_text(MAIN_DEPENDENT)
    assert main_dependent(str(script)) == {
        "start_failed": ["UnguardedScriptError", "pool worker failed while re-importing your main script (NameError: "
                                                 f"name 'x' is not defined); {START_ADVICE}"],
        "died_importing": ["UnguardedScriptError", f"pool worker 0 (pid 5) exited with exit code 1 while re-importing "
                                                   f"your main script {script}; spawn re-runs its top level in every "
                                                   f"worker: keep what must run only in the main process under "
                                                   f"`if __name__ == \"__main__\":`"]}


def test_without_a_main_script_to_re_import_the_same_failures_say_only_how_far_the_worker_got():
    assert main_dependent("-c", MAIN_DEPENDENT) == {
        "start_failed": ["WorkerStartError", "pool worker failed while starting (NameError: name 'x' is not defined)"],
        "died_importing": ["WorkerStartError", "pool worker 0 (pid 5) exited with exit code 1 while starting, before "
                                               "it loaded what the pool sent"]}


def test_each_reported_start_failure_is_its_stage_s_error():
    assert_error(start_failed(StartFailed(StartStage.UNGUARDED, "your main script creates 'env' at import time", "")),
                 UnguardedScriptError, "pool worker could not start: your main script creates 'env' at import time")
    assert_error(start_failed(StartFailed(StartStage.INITIALIZER, "RuntimeError: no GPU", "Traceback ...")),
                 WorkerStartError, "pool worker initializer failed: RuntimeError: no GPU")
    assert_error(start_failed(StartFailed(StartStage.LOAD, "eval_function: ModuleNotFoundError: No module named 'x'",
                                          "")),
                 TransferError, f"pool workers cannot load eval_function: ModuleNotFoundError: No module named 'x'; "
                                f"{IMPORT_ADVICE}")
    assert_error(start_failed(StartFailed(StartStage.LOAD, "initargs: RuntimeError: refused", "")),
                 TransferError, "pool workers cannot load initargs: RuntimeError: refused")


def test_a_worker_that_died_starting_is_named_by_the_stage_it_reached():
    def initializer():
        pass
    expected = {
        StartStage.SPAWN: f"{HEAD} while its interpreter was starting, before any of your code ran",
        StartStage.LOAD: f"{HEAD} while loading eval_function (unpickling it)",
        StartStage.UNGUARDED: f"{HEAD} while clearing your main module's live globals",
        StartStage.INITIALIZER: f"{HEAD} in its initializer {initializer.__qualname__}",
    }
    for stage, message in expected.items():
        assert_error(died_starting(HEAD, stage, "eval_function", initializer), WorkerStartError, message)


def test_a_task_a_worker_cannot_load_names_the_worker_the_task_and_the_cause():
    assert_error(task_not_loaded(2, LoadFailed(17, "AttributeError: Can't get attribute 'f' on <module '__mp_main__'>",
                                               "Traceback ...")),
                 TransferError, f"pool worker 2 cannot load task 17 (its function and arguments): AttributeError: "
                                f"Can't get attribute 'f' on <module '__mp_main__'>; {IMPORT_ADVICE}")


IMPORT_FAILURES = ["AttributeError: Can't get attribute 'fitness' on <module 'train'>",
                   "ModuleNotFoundError: No module named 'mygame'", "ImportError: cannot import name 'fitness'"]
OTHER_FAILURES = ["AttributeError: 'NoneType' object has no attribute 'step'", "RuntimeError: refused",
                  "TypeError: __init__() missing 1 required positional argument", "EOFError: Ran out of input"]


@settings(max_examples=200, deadline=None)
@given(cause=st.sampled_from(IMPORT_FAILURES + OTHER_FAILURES), more=st.text())
def test_only_a_failed_import_gets_the_advice_to_define_it_at_a_module_s_top_level(cause, more):
    assert load_advice(cause + more) == (f"; {IMPORT_ADVICE}" if cause in IMPORT_FAILURES else "")


@settings(max_examples=100, deadline=None)
@given(summary=st.text(st.characters(blacklist_characters="\x1b"), min_size=1).filter(str.strip),  # no colour codes
       stage=st.sampled_from(list(StartStage)))
def test_every_error_is_one_line_whatever_the_worker_reported(summary, stage):
    """A worker's summary can span lines (an exception's text); the error is a line for the terminal."""
    errors = [start_failed(StartFailed(stage, summary, "")), task_not_loaded(0, LoadFailed(3, summary, ""))]
    for error in errors:
        assert "\n" not in str(error) and "\r" not in str(error) and " ".join(summary.split()) in str(error)


def assert_error(error, kind, message):
    assert type(error) is kind and str(error) == message
