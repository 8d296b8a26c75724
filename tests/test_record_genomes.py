"""Genome files (neatpar/record/genomes.py): JSON that loads without pickle and keeps every gene,
pickles only from a file the user names, a genome of another shape refused in one line, and a
run's winner.json loaded from Python as the documentation shows (docs/guides/brain-in-unity.md)."""
import json
import os
import pickle
import re
import subprocess
import sys

import neat
import pytest

from support.configs import ball_cfg, load_config
from support.paths import ROOT
from support.runs import neatpar_cli
from neatpar.errors import ConfigError
from neatpar.record.genomes import load_genome, save_genome_json, save_genome_pickle


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


def evolved_genome():
    config = load_config()
    population = neat.Population(config, seed=3)

    def fitness(genomes, _config):
        for _, genome in genomes:
            genome.fitness = float(len(genome.connections))
    return population.run(fitness, 4), config


def genes(genome) -> tuple:
    nodes = sorted((k, n.bias, n.response, n.activation, n.aggregation) for k, n in genome.nodes.items())
    links = sorted((k, c.weight, c.enabled) for k, c in genome.connections.items())
    return genome.key, genome.fitness, nodes, links


def test_a_genome_saved_as_json_loads_with_every_gene(tmp_path):
    genome, config = evolved_genome()
    save_genome_json(genome, config, str(tmp_path / "winner.json"))
    assert genes(load_genome(str(tmp_path / "winner.json"), config)) == genes(genome)
    save_genome_pickle(genome, str(tmp_path / "winner.pickle"))
    assert genes(load_genome(str(tmp_path / "winner.pickle"), config)) == genes(genome)
    assert sorted(os.listdir(tmp_path)) == ["winner.json", "winner.pickle"]   # nothing half-written left


def test_files_that_are_not_genomes_are_one_line_errors(tmp_path):
    (tmp_path / "other.json").write_text(json.dumps({"key": 1}))
    (tmp_path / "list.pickle").write_bytes(pickle.dumps([1, 2]))
    (tmp_path / "text.pickle").write_bytes(b"not a pickle")
    for name, message in (("other.json", 'is not a neatpar genome'), ("list.pickle", "holds a list, not a genome"),
                          ("text.pickle", "cannot be unpickled"), ("missing.json", "not found")):
        with pytest.raises(ConfigError, match=message) as error:
            load_genome(str(tmp_path / name))
        assert "\n" not in str(error.value)


def test_a_genome_of_another_shape_is_refused_naming_both(tmp_path):
    genome, config = evolved_genome()
    save_genome_json(genome, config, str(tmp_path / "winner.json"))
    other = load_config()
    other.genome_config.num_inputs = 3
    with pytest.raises(ConfigError, match=r"has num_inputs = 2, num_outputs = 1 but the config has num_inputs = 3, "
                                          r"num_outputs = 1: it was evolved for another task"):
        load_genome(str(tmp_path / "winner.json"), other)
