"""The genome file format (neatpar/genome_file.py): a run's winner.json loaded from Python as
the documentation shows (docs/guides/brain-in-unity.md), and files that are not genomes refused in
one line."""
import json
import os
import pickle
import re
import shutil
import subprocess
import sys

import pytest

from support.configs import ball_cfg
from support.paths import ROOT
from support.runs import neatpar_cli
from neatpar.errors import ConfigError
from neatpar.genome_file import load_genome


def docs_block(page: str, marker: str) -> str:
    """The Python block of a documentation page that contains `marker`."""
    with open(os.path.join(ROOT, "docs", page)) as f:
        blocks = re.findall(r"```python\n(.*?)```", f.read(), re.S)
    return next(block for block in blocks if marker in block)


def test_the_documented_way_to_load_a_winner_in_python_works(tmp_path):
    config = ball_cfg(tmp_path, generations=1)
    out = tmp_path / "run"
    assert neatpar_cli("evolve", "--config", config, "--out", str(out)).returncode == 0
    block = docs_block(os.path.join("guides", "brain-in-unity.md"), "load_genome(")
    code = block.replace('"configs/ball.cfg"', repr(config))
    code = code.replace('"runs/ball-20260101-120000/winner.json"', repr(str(out / "winner.json")))
    result = subprocess.run([sys.executable, "-c", code + "print(len(action), genome.key)\n"], capture_output=True,
                            text=True, cwd=ROOT, timeout=120)
    assert result.returncode == 0, result.stderr
    assert result.stdout.split() == ["2", str(json.load(open(out / "winner.json"))["key"])]


def test_files_that_are_not_genomes_are_one_line_errors(tmp_path):
    (tmp_path / "other.json").write_text(json.dumps({"key": 1}))
    (tmp_path / "list.pickle").write_bytes(pickle.dumps([1, 2]))
    (tmp_path / "text.pickle").write_bytes(b"not a pickle")
    for name, message in (("other.json", 'is not a neatpar genome'), ("list.pickle", "holds a list, not a genome"),
                          ("text.pickle", "cannot be unpickled"), ("missing.json", "not found")):
        with pytest.raises(ConfigError, match=message) as error:
            load_genome(str(tmp_path / name))
        assert "\n" not in str(error.value)


def test_a_run_folder_a_checkpoint_or_a_model_named_as_a_genome_says_what_to_give_instead(tmp_path):
    config = ball_cfg(tmp_path, generations=1)
    run = tmp_path / "run"
    assert neatpar_cli("evolve", "--config", config, "--out", str(run)).returncode == 0
    checkpoint, model = run / "checkpoints" / "checkpoint-1.gz", run / "winner.onnx"
    shutil.copy(model, tmp_path / "brain.txt")   # a model written under another name
    shutil.copy(checkpoint, tmp_path / "population")   # a checkpoint away from its run
    onnx = ("is an ONNX model, which cannot be read back into a genome: give the genome file it was exported from "
            "(winner.json of its run)")
    for path, message in (
            (run, f"is a folder: give {run / 'winner.json'} (or another genome file inside it)"),
            (checkpoint, f"is a checkpoint (a whole population), not a genome: give {run / 'winner.json'}, or "
                         f"continue the run from it with neatpar evolve --resume {checkpoint}"),
            (tmp_path / "population", "is a checkpoint (a whole population), not a genome: give the run's "
                                      f"winner.json, or continue the run from it with neatpar evolve --resume "
                                      f"{tmp_path / 'population'}"),
            (model, onnx), (tmp_path / "brain.txt", onnx)):
        with pytest.raises(ConfigError) as error:
            load_genome(str(path))
        assert str(error.value) == f"genome file {path} {message}"
    assert load_genome(str(run / "winner.pickle")).key == load_genome(str(run / "winner.json")).key
