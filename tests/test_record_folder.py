"""The run folder (neatpar/record/folder.py): claimed by one run at a time, even by runs started at
the same moment; discarded without losing the simulators' logs (checkpoint files:
test_record_checkpoint.py; stats.csv: test_record_stats_row.py)."""
import json
import multiprocessing
import os
import shutil

import pytest

from neatpar.errors import ConfigError
from neatpar.record.folder import RunFolder
from neatpar.config.run_settings import RunSettings

RUN = RunSettings("/configs/probe.cfg", "[neatpar]\nenv = gymnasium:CartPole-v1\n")
CLAIMS = 6


def claim(path: str, start, results, hold) -> None:
    """In a spawned process: claim `path` when every process is ready, report, hold it until told."""
    start.wait()
    try:
        folder = RunFolder(path, RUN)
    except ConfigError as error:
        results.put(str(error))
        return
    results.put("claimed")
    hold.wait(60)
    folder.release()


def test_processes_claiming_one_folder_at_the_same_moment_leave_one_run(tmp_path):
    path = str(tmp_path / "runs" / "race")
    context = multiprocessing.get_context("spawn")
    start, hold, results = context.Barrier(CLAIMS), context.Event(), context.Queue()
    processes = [context.Process(target=claim, args=(path, start, results, hold)) for _ in range(CLAIMS)]
    for process in processes:
        process.start()
    try:
        outcomes = [results.get(timeout=120) for _ in processes]
    finally:
        hold.set()
        for process in processes:
            process.join(60)
    assert outcomes.count("claimed") == 1, outcomes
    for refused in (o for o in outcomes if o != "claimed"):
        assert refused in (f"run folder {path} is in use by another neatpar run: choose another --out, or wait for "
                           f"that run to end",
                           f"run folder {path} already holds a run: choose a new --out, or continue that run with "
                           f"--resume {path}/checkpoints/checkpoint-N.gz"), refused
    assert sorted(os.listdir(path)) == ["checkpoints", "run.json"]
    assert json.load(open(os.path.join(path, "run.json"))) == RUN.to_dict()


def test_a_held_folder_cannot_be_resumed_until_its_run_ends(tmp_path):
    path = str(tmp_path / "run")
    first = RunFolder(path, RUN)
    with pytest.raises(ConfigError, match="is in use by another neatpar run"):
        RunFolder(path, RUN, resume=True)
    with pytest.raises(ConfigError, match="is in use by another neatpar run"):
        RunFolder(path, RUN)
    first.release()
    with pytest.raises(ConfigError, match="already holds a run"):
        RunFolder(path, RUN)
    RunFolder(path, RUN, resume=True).release()


def test_a_folder_with_other_files_is_not_claimed_for_a_new_run(tmp_path):
    (tmp_path / "notes.txt").write_text("mine")
    with pytest.raises(ConfigError, match="already holds a run"):
        RunFolder(str(tmp_path), RUN)
    assert os.listdir(tmp_path) == ["notes.txt"]


def test_discarding_a_failed_start_keeps_the_simulators_logs(tmp_path):
    folder = RunFolder(str(tmp_path / "runs" / "failed"), RUN)
    os.makedirs(folder.logs)
    with open(os.path.join(folder.logs, "Player-0.log"), "w") as f:
        f.write("error: the game could not start\n")
    old, new = folder.discard()
    folder.release()
    try:
        assert old == folder.logs and not os.path.exists(tmp_path / "runs")  # nothing else is left
        assert open(os.path.join(new, "Player-0.log")).read() == "error: the game could not start\n"
    finally:
        shutil.rmtree(new)


def test_discarding_a_folder_without_logs_keeps_nothing(tmp_path):
    folder = RunFolder(str(tmp_path / "run"), RUN)
    assert folder.discard() is None and not os.path.exists(tmp_path / "run")
    folder.release()
