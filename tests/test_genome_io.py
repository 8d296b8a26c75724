"""Genome files (neatpar/genome_io.py): a run's winner.json loaded from Python as the documentation
shows (docs/guides/brain-in-unity.md)."""
import json
import os
import re
import subprocess
import sys

from support.configs import ball_cfg
from support.paths import ROOT
from support.runs import neatpar_cli


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
