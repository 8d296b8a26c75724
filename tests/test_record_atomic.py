"""Tests of record/atomic.py: a file written with write_atomic is, to any reader, the old file or
the whole new one, never a part of it, and a failed write leaves the old file and no temporary
file behind."""
import multiprocessing
import os

import pytest

from neatpar.record.atomic import write_atomic


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
