"""Genome files (neatpar/genome_io.py): a run's winner.json loaded from Python as the README shows."""
import json
import os
import re
import subprocess
import sys

from support.configs import ball_cfg
from support.paths import ROOT
from support.runs import neatpar_cli


def readme_block(marker: str) -> str:
    """The README's Python block that contains `marker`."""
    with open(os.path.join(ROOT, "README.md")) as f:
        blocks = re.findall(r"```python\n(.*?)```", f.read(), re.S)
    return next(block for block in blocks if marker in block)


def test_the_readme_s_way_to_load_a_winner_in_python_works(tmp_path):
    config = ball_cfg(tmp_path, generations=1)
    out = tmp_path / "run"
    assert neatpar_cli("evolve", "--config", config, "--out", str(out)).returncode == 0
    code = readme_block("load_genome(").replace('"configs/ball.cfg"', repr(config))
    code = code.replace('"runs/ball-20260101-120000/winner.json"', repr(str(out / "winner.json")))
    result = subprocess.run([sys.executable, "-c", code + "print(len(action), genome.key)\n"], capture_output=True,
                            text=True, cwd=ROOT, timeout=120)
    assert result.returncode == 0, result.stderr
    assert result.stdout.split() == ["2", str(json.load(open(out / "winner.json"))["key"])]
