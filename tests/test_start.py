"""Tests of run/start.py: a run started from Python, `neatpar.evolve()` and `neatpar.resume()`, in a
script (a real process) and in a notebook (a real Jupyter kernel): the same run folder as
`neatpar evolve` with the same seed, Ctrl+C or the kernel's interrupt checkpoints the running
generation and returns an INTERRUPTED result, and resume continues it exactly; bad keys are one
line."""
import asyncio
import json
import os
import signal
import subprocess
import threading

import nbclient
import nbformat
import pytest

import neatpar
from neatpar.errors import ConfigError
from neatpar.run.lifecycle import RunPhase
from support.configs import ball_cfg
from support.paths import ROOT
from support.processes import python_code, wait_until
from support.runs import evolve_ok, stats_table, without_timing

# What a script prints of a run's result, as one JSON line.
SHOW = ("import json; print(json.dumps({'phase': result.phase.value, 'folder': result.folder, "
        "'checkpoint': result.checkpoint, 'signal': result.stop_signal, 'rows': len(result.stats), "
        "'winner': None if result.winner is None else result.winner.key, 'exit': result.exit_status}))")


def script(code: str) -> subprocess.Popen:
    return subprocess.Popen(python_code("import neatpar\n" + code + "\n" + SHOW), stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, cwd=ROOT)


def shown(proc: subprocess.Popen, timeout: float = 300) -> tuple[dict, str]:
    out, err = proc.communicate(timeout=timeout)
    assert proc.returncode == 0, err
    return json.loads(out.strip().splitlines()[-1]), err


def files_of(folder) -> set[str]:
    """The run folder's files, by their path in it (the simulators' logs aside; an event file's
    name holds the time and the process)."""
    return {os.path.relpath(os.path.join(d, "events.out.tfevents" if f.startswith("events.out.tfevents") else f), folder)
            for d, _, names in os.walk(folder) for f in names if "sim-logs" not in d}


def same_run(a, b, interrupted_at: str | None = None) -> None:
    """Two run folders hold the same run: the same files (b also the checkpoint its interrupt
    wrote), stats (timing aside) and winner."""
    assert files_of(a) | ({os.path.relpath(interrupted_at, b)} if interrupted_at else set()) == files_of(b)
    assert without_timing(stats_table(a / "stats.csv")) == without_timing(stats_table(b / "stats.csv"))
    assert json.load(open(a / "winner.json")) == json.load(open(b / "winner.json"))


def test_a_script_s_evolve_makes_the_run_folder_the_command_makes(tmp_path):
    config = ball_cfg(tmp_path, generations=3, interval=2)
    evolve_ok(config, tmp_path / "command")
    result, _ = shown(script(f"result = neatpar.evolve({config!r}, out={str(tmp_path / 'script')!r})"))
    assert result == {"phase": "finished", "folder": str(tmp_path / "script"), "checkpoint": None, "signal": None,
                      "rows": 3, "winner": json.load(open(tmp_path / "command" / "winner.json"))["key"], "exit": 0}
    same_run(tmp_path / "command", tmp_path / "script")


def test_ctrl_c_in_a_script_checkpoints_and_resume_continues_exactly(tmp_path):
    config = ball_cfg(tmp_path, generations=40, interval=50, env_args="--agents 4 --max-steps 60", max_steps=60)
    evolve_ok(config, tmp_path / "whole")
    cut = tmp_path / "cut"
    proc = script(f"result = neatpar.evolve({config!r}, out={str(cut)!r})")
    wait_until(lambda: (cut / "stats.csv").exists() and len(stats_table(cut / "stats.csv")) >= 2, 120,
               "two generations")
    proc.send_signal(signal.SIGINT)
    result, err = shown(proc, timeout=60)
    assert result["phase"] == "interrupted" and result["signal"] == signal.SIGINT and result["exit"] == 130
    assert result["checkpoint"].startswith(str(cut / "checkpoints" / "checkpoint-"))
    assert f"resume with neatpar.resume({result['checkpoint']!r})" in err, err
    assert (cut / "winner.json").exists()   # the best genome so far, as the command leaves it
    resumed, _ = shown(script(f"result = neatpar.resume({str(cut)!r})"))   # the folder: its latest checkpoint
    assert resumed["phase"] == "finished" and resumed["folder"] == str(cut) and resumed["rows"] == 40
    same_run(tmp_path / "whole", cut, result["checkpoint"])


def test_a_notebook_cell_evolves_is_interrupted_and_the_next_resumes_exactly(tmp_path):
    """The kernel's interrupt (Jupyter's stop button) reaches the run as Ctrl+C does: a checkpoint,
    an INTERRUPTED result, and the kernel lives on to resume it."""
    config = ball_cfg(tmp_path, generations=40, interval=50, env_args="--agents 4 --max-steps 60", max_steps=60)
    evolve_ok(config, tmp_path / "whole")
    cut = tmp_path / "cut"
    notebook = nbformat.v4.new_notebook(cells=[
        nbformat.v4.new_code_cell(f"import neatpar\nresult = neatpar.evolve({config!r}, out={str(cut)!r}, quiet=True)"),
        nbformat.v4.new_code_cell(SHOW),
        nbformat.v4.new_code_cell(f"result = neatpar.resume({str(cut)!r}, quiet=True)\n{SHOW}"),
    ])
    client = nbclient.NotebookClient(notebook, timeout=300, kernel_name="python3",
                                     resources={"metadata": {"path": ROOT}})
    sent = []
    with client.setup_kernel():
        def interrupt():
            wait_until(lambda: (cut / "stats.csv").exists() and len(stats_table(cut / "stats.csv")) >= 2, 120,
                       "two generations")
            asyncio.run(client.km.interrupt_kernel())   # what the notebook's stop button sends
            sent.append(len(stats_table(cut / "stats.csv")))
        interrupter = threading.Thread(target=interrupt)
        interrupter.start()
        client.execute_cell(notebook.cells[0], 0)
        interrupter.join()
        assert sent and sent[0] < 40, "the interrupt was not sent while the run ran"
        for index in (1, 2):
            client.execute_cell(notebook.cells[index], index)
    printed = [json.loads("".join(o["text"] for o in notebook.cells[i].outputs if o.get("name") == "stdout")
                          .strip().splitlines()[-1]) for i in (1, 2)]
    assert printed[0]["phase"] == "interrupted" and printed[0]["checkpoint"] is not None
    assert printed[1]["phase"] == "finished" and printed[1]["rows"] == 40
    same_run(tmp_path / "whole", cut, printed[0]["checkpoint"])


def test_a_key_the_command_does_not_take_is_one_line_naming_the_close_one(tmp_path):
    config = ball_cfg(tmp_path)
    with pytest.raises(ConfigError, match=r"^generationz is not a \[neatpar\] key that can be given here: did you "
                                          r"mean generations\? give one of agents, generations, .*, or set it in the "
                                          r"config file$"):
        neatpar.evolve(config, out=tmp_path / "run", generationz=3)
    with pytest.raises(ConfigError, match=r"^generations = 2.5: give a number or a text, as in the config file$"):
        neatpar.evolve(config, out=tmp_path / "run", generations=2.5)
    assert not (tmp_path / "run").exists()


def test_a_folder_without_checkpoints_cannot_be_resumed(tmp_path):
    with pytest.raises(ConfigError, match=r"holds no checkpoints/checkpoint-N.gz: resume from a run folder that "
                                          r"has written a checkpoint, or name the checkpoint file$"):
        neatpar.resume(tmp_path)


def test_the_result_names_the_phase_the_run_ended_in():
    assert neatpar.RunResult(RunPhase.EXTINCT, "run").exit_status == 1
    assert neatpar.RunResult(RunPhase.INTERRUPTED, None, stop_signal=signal.SIGTERM).exit_status == 143
    assert neatpar.RunResult(RunPhase.FINISHED, "nowhere").winner_file is None
