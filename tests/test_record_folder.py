"""The run folder (neatpar/record/folder.py): claimed by one run at a time, even by runs started at
the same moment, through a lock that ends with its process however it ends and that filelock's own
locks respect; discarded without losing the simulators' logs (checkpoint files:
test_record_checkpoint.py; stats.csv: test_record_stats_row.py)."""
import json
import multiprocessing
import os
import shutil
import tempfile
import time

import filelock
import pytest

from neatpar.errors import ConfigError
from neatpar.record.folder import LOCK_FILE, RunFolder
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
    assert sorted(os.listdir(path)) == [LOCK_FILE, "checkpoints", "run.json"]
    assert json.load(open(os.path.join(path, "run.json"))) == RUN.to_dict()


def test_a_default_name_another_run_has_is_followed_by_the_first_free_number(tmp_path):
    """A run holding `run`, a finished one in `run-2`: a new run with a name it did not choose gets
    `run-3`; the name asked for, if free, as it is."""
    path = str(tmp_path / "run")
    running = RunFolder(path, RUN)
    RunFolder(path + "-2", RUN).release()
    try:
        third = RunFolder.first_free(path, RUN)
        assert third.path == path + "-3" and os.path.exists(os.path.join(path + "-3", "run.json"))
        third.release()
        assert RunFolder.first_free(str(tmp_path / "other"), RUN).path == str(tmp_path / "other")
    finally:
        running.release()


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


def hold_and_wait(path: str, held) -> None:
    """In a spawned process: claim `path`, say so, and wait to be killed."""
    RunFolder(path, RUN)
    held.set()
    time.sleep(60)


def test_the_hold_ends_with_its_process_however_it_ends(tmp_path):
    path = str(tmp_path / "run")
    context = multiprocessing.get_context("spawn")
    held = context.Event()
    holder = context.Process(target=hold_and_wait, args=(path, held))
    holder.start()
    try:
        assert held.wait(60)
        with pytest.raises(ConfigError, match="is in use by another neatpar run"):
            RunFolder(path, RUN, resume=True)
        holder.kill()   # no code of the holder runs: the system ends its lock
        holder.join(30)
        RunFolder(path, RUN, resume=True).release()
    finally:
        if holder.is_alive():
            holder.kill()
            holder.join()


def test_the_lock_is_the_one_filelock_takes_on_the_lock_file(tmp_path):
    """Held through filelock's own FileLock on the folder's lock file, the folder is in use; a
    held folder, in turn, keeps FileLock from the file."""
    path = tmp_path / "run"
    path.mkdir()
    with filelock.FileLock(str(path / LOCK_FILE), blocking=False):
        with pytest.raises(ConfigError, match="is in use by another neatpar run"):
            RunFolder(str(path), RUN)
    folder = RunFolder(str(path), RUN)
    try:
        with pytest.raises(filelock.Timeout):
            filelock.FileLock(str(path / LOCK_FILE), blocking=False).acquire()
    finally:
        folder.release()


def test_a_folder_with_other_files_is_not_claimed_for_a_new_run(tmp_path):
    (tmp_path / "notes.txt").write_text("mine")
    with pytest.raises(ConfigError, match="already holds a run"):
        RunFolder(str(tmp_path), RUN)
    assert os.listdir(tmp_path) == ["notes.txt"]


def failed_start(tmp_path) -> RunFolder:
    """A new run's folder whose simulator wrote a log, as a start that failed leaves it."""
    folder = RunFolder(str(tmp_path / "runs" / "failed"), RUN)
    os.makedirs(folder.logs)
    with open(os.path.join(folder.logs, "Player-0.log"), "w") as f:
        f.write("error: the game could not start\n")
    return folder


def test_discarding_a_failed_start_whose_error_names_a_log_keeps_the_simulators_logs(tmp_path):
    folder = failed_start(tmp_path)
    old, new = folder.discard(keep_logs=True)
    folder.release()
    try:
        assert old == folder.logs and not os.path.exists(tmp_path / "runs")  # nothing else is left
        assert open(os.path.join(new, "Player-0.log")).read() == "error: the game could not start\n"
    finally:
        shutil.rmtree(new)


def test_discarding_a_failed_start_whose_error_names_no_log_takes_the_logs_away(tmp_path, monkeypatch):
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path / "temporary"))   # where kept logs would go
    os.makedirs(tempfile.tempdir)
    folder = failed_start(tmp_path)
    assert folder.discard() is None
    folder.release()
    assert not os.path.exists(tmp_path / "runs") and os.listdir(tempfile.tempdir) == []


def test_discarding_a_folder_without_logs_keeps_nothing(tmp_path):
    folder = RunFolder(str(tmp_path / "run"), RUN)
    assert folder.discard() is None and not os.path.exists(tmp_path / "run")
    folder.release()


def test_behaviors_json_keeps_each_sensor_s_shape_and_reads_older_records(tmp_path):
    from neatpar.record.folder import load_behaviors
    from neatpar.environment import Layout, Sensor
    folder = RunFolder(str(tmp_path / "run"), RunSettings("/x.cfg", "text"))
    camera = Layout.of_sensors((Sensor((16, 16, 3), visual=True), Sensor((3, 8, 8), True, True), Sensor((4,))), 2, (3,))
    folder.save_behaviors({"Camera?team=0": camera}, {"Camera?team=0": "population"})
    assert load_behaviors(folder.path) == {"Camera?team=0": camera}
    older = {"B": {"role": "population", "observation_sizes": [8], "continuous": 2, "branches": []}}
    (tmp_path / "run" / "behaviors.json").write_text(json.dumps(older))   # before the sensors were recorded
    assert load_behaviors(folder.path) == {"B": Layout((8,), 2)}
    folder.release()


def test_substrate_json_is_written_and_read_back(tmp_path):
    from neatpar.nn.substrate import IOShapes, make_substrate
    from neatpar.record.folder import load_substrate
    folder = RunFolder(str(tmp_path / "run"), RunSettings("/x.cfg", "text"))
    assert load_substrate(folder.path) is None
    substrate = make_substrate(IOShapes(((4, 4, 3),), 2), "3")
    folder.save_substrate(substrate)
    assert load_substrate(folder.path) == substrate
    folder.release()
