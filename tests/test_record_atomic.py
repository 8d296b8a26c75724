"""Tests of record/atomic.py: a file written with write_atomic is, to any reader, the old file or
the whole new one, never a part of it, and a failed write leaves the old file and no temporary
file behind; check_output_file refuses a path that cannot be written, in one line naming the fix."""
import multiprocessing
import os

import pytest

from neatpar.errors import ConfigError
from neatpar.record.atomic import check_output_file, write_atomic


def test_the_new_content_replaces_the_old_whole_and_no_temporary_file_is_left(tmp_path):
    path = tmp_path / "stats.csv"
    write_atomic(str(path), b"old")
    write_atomic(str(path), b"new content")
    assert path.read_bytes() == b"new content"
    assert os.listdir(tmp_path) == ["stats.csv"]


def test_a_failed_write_keeps_the_old_file_and_leaves_no_temporary_file(tmp_path):
    path = tmp_path / "winner.json"
    write_atomic(str(path), b"the old winner")
    with pytest.raises(TypeError):
        write_atomic(str(path), "text, not bytes")   # fails inside the write
    assert path.read_bytes() == b"the old winner"
    assert os.listdir(tmp_path) == ["winner.json"]


def _write_often(path: str, count: int) -> None:
    for n in range(count):
        write_atomic(path, bytes([n % 256]) * 200_000)


def test_a_reader_sees_only_whole_files_while_another_process_writes(tmp_path):
    path = str(tmp_path / "checkpoint.gz")
    write_atomic(path, bytes([255]) * 200_000)
    writer = multiprocessing.get_context("spawn").Process(target=_write_often, args=(path, 200))
    writer.start()
    reads = 0
    try:
        while writer.is_alive() or reads == 0:
            with open(path, "rb") as f:
                data = f.read()
            assert len(data) == 200_000 and data == data[:1] * 200_000   # one write's content, all of it
            reads += 1
    finally:
        writer.join(timeout=60)
    assert writer.exitcode == 0 and reads > 10


def test_an_output_file_must_be_a_file_in_a_folder_that_exists_before_anything_runs(tmp_path):
    check_output_file(str(tmp_path / "brain.onnx"), "--out", "brain.onnx", "model")   # fine
    with pytest.raises(ConfigError, match=r"^--out .* is a folder: name the file to write, e.g. --out .*brain.onnx$"):
        check_output_file(str(tmp_path), "--out", "brain.onnx", "model")
    with pytest.raises(ConfigError, match=r"^video .* is a folder: name the file to write, e.g. /.*episode.mp4$"):
        check_output_file(str(tmp_path), "video", "episode.mp4", "video")
    with pytest.raises(ConfigError, match=r"the folder .*nowhere does not exist: create it, or write the model "
                                          r"elsewhere$"):
        check_output_file(str(tmp_path / "nowhere" / "brain.onnx"), "--out", "brain.onnx", "model")
