"""The genome file format: one genome as neatpar's JSON (recommended: loads without pickle,
shareable) or as a pickle (loaded only from files the user names explicitly: unpickling runs
code), and the check that a loaded genome fits a neat config. record/genomes.py writes the files;
the behaviors a saved genome plays (episodes/env_evaluator.py) and `neatpar play`/`export` read them."""
from __future__ import annotations

import json
import os
import pickle

import neat
from neat.genes import DefaultConnectionGene, DefaultNodeGene

from .errors import ConfigError

FORMAT = "neatpar-genome"
GZIP_MAGIC = b"\x1f\x8b"   # the first bytes of a gzip file, as a checkpoint is


def genome_to_dict(genome, config) -> dict:
    gc = config.genome_config
    return {
        "format": FORMAT, "version": 1, "key": genome.key, "fitness": genome.fitness,
        "num_inputs": gc.num_inputs, "num_outputs": gc.num_outputs, "feed_forward": gc.feed_forward,
        "nodes": [{"key": n.key, "bias": n.bias, "response": n.response, "activation": n.activation,
                   "aggregation": n.aggregation, "time_constant": getattr(n, "time_constant", 1.0)}
                  for n in genome.nodes.values()],
        "connections": [{"in": c.key[0], "out": c.key[1], "weight": c.weight, "enabled": c.enabled,
                         "innovation": getattr(c, "innovation", 0)} for c in genome.connections.values()],
    }


def genome_from_dict(data: dict, source: str = "genome"):
    if not isinstance(data, dict) or data.get("format") != FORMAT:
        raise ConfigError(f"{source} is not a neatpar genome (no \"format\": \"{FORMAT}\"): save genomes "
                          f"with neatpar (winner.json in a run folder)")
    genome = neat.DefaultGenome(data["key"])
    genome.fitness = data.get("fitness")
    for n in data["nodes"]:
        gene = DefaultNodeGene(n["key"])
        gene.bias, gene.response = float(n["bias"]), float(n["response"])
        gene.activation, gene.aggregation = n["activation"], n["aggregation"]
        gene.time_constant = float(n.get("time_constant", 1.0))
        genome.nodes[gene.key] = gene
    for c in data["connections"]:
        gene = DefaultConnectionGene((c["in"], c["out"]), innovation=int(c.get("innovation", 0)))
        gene.weight, gene.enabled = float(c["weight"]), bool(c["enabled"])
        genome.connections[gene.key] = gene
    genome.neatpar_shape = (data.get("num_inputs"), data.get("num_outputs"))
    return genome


def recorded_fresh(path: str) -> dict | None:
    """A winner.json's score on fresh episodes, as its run recorded it ("fresh"); None for other
    files and winners chosen by training fitness."""
    if not path.endswith(".json"):
        return None
    try:
        with open(path) as f:
            fresh = json.load(f).get("fresh")
    except (OSError, ValueError, AttributeError):
        return None
    return fresh if isinstance(fresh, dict) else None


def load_genome(path: str, config=None):
    """A genome from a neatpar JSON file, or from a pickle (which the caller chose to trust); the
    files often named in its place (a run folder, a checkpoint, an ONNX model) are refused saying
    what they are and what to give instead."""
    _check_genome_path(path)
    with open(path, "rb") as f:
        data = f.read()
    if path.endswith(".json"):
        try:
            genome = genome_from_dict(json.loads(data), path)
        except (ValueError, KeyError, TypeError) as exc:
            raise ConfigError(f"genome file {path} is not a valid neatpar genome JSON ({exc})") from None
    else:
        other = _other_kind(path, data)
        if other is not None:
            raise ConfigError(f"genome file {path} {other}")
        try:
            genome = pickle.loads(data)
        except Exception as exc:  # noqa: BLE001 - any unpickling failure means the wrong kind of file
            raise ConfigError(f"genome file {path} cannot be unpickled ({type(exc).__name__}); "
                              f"use a neatpar winner.json or winner.pickle") from None
        if not isinstance(genome, neat.DefaultGenome):
            raise ConfigError(f"genome file {path} holds a {type(genome).__name__}, not a genome; "
                              f"use a neatpar winner.json or winner.pickle")
    if config is not None:
        check_genome_fits(genome, config, path)
    return genome


def _check_genome_path(path: str) -> None:
    """A ConfigError unless `path` is a file: a folder (a run's, most likely) is named as one."""
    if os.path.isdir(path):
        raise ConfigError(f"genome file {path} is a folder: give {os.path.join(path, 'winner.json')} (or another "
                          f"genome file inside it)")
    if not os.path.isfile(path):
        raise ConfigError(f"genome file {path} not found")


def _other_kind(path: str, data: bytes) -> str | None:
    """What a file that neatpar writes beside its genomes is, and what to give instead, for one
    named as a genome (a checkpoint, an ONNX model); None for any other file. Read from its first
    bytes, never unpickled."""
    if data.startswith(GZIP_MAGIC):   # checkpoint-N.gz: a gzip-compressed pickle of a whole population
        winner = os.path.normpath(os.path.join(os.path.dirname(path), os.pardir, "winner.json"))
        given = winner if os.path.isfile(winner) else "the run's winner.json"
        return (f"is a checkpoint (a whole population), not a genome: give {given}, or continue the run from it "
                f"with neatpar evolve --resume {path}")
    if path.lower().endswith(".onnx") or _is_onnx_model(data):
        return ("is an ONNX model, which cannot be read back into a genome: give the genome file it was exported "
                "from (winner.json of its run)")
    return None


def _is_onnx_model(data: bytes) -> bool:
    """Whether `data` is a serialized ONNX ModelProto with a graph: its first field is ir_version
    (tag byte 0x08), and it parses with at least one node."""
    if not data.startswith(b"\x08"):
        return False
    import onnx   # only here: a pickled genome loads without it
    try:
        model = onnx.load_model_from_string(data)
    except Exception:  # noqa: BLE001 - any parse failure means not a model
        return False
    return model.ir_version > 0 and len(model.graph.node) > 0


def check_genome_fits(genome, config, source: str) -> None:
    """A ConfigError naming both shapes when `genome` was evolved for other inputs or outputs."""
    gc = config.genome_config
    shape = getattr(genome, "neatpar_shape", None)
    outputs = [k for k in genome.nodes if k in gc.output_keys]
    inputs = {i for i, _ in genome.connections if i < 0}
    if (shape and shape != (gc.num_inputs, gc.num_outputs)) or len(outputs) != gc.num_outputs or \
            any(i < -gc.num_inputs for i in inputs):
        raise ConfigError(f"genome {source} has {_shape_text(genome, shape)} but the config has num_inputs = "
                          f"{gc.num_inputs}, num_outputs = {gc.num_outputs}: it was evolved for another task; "
                          f"use the config of its run")


def _shape_text(genome, shape) -> str:
    """The genome's inputs and outputs: recorded (JSON) or read off its genes (a pickle)."""
    if shape and None not in shape:
        return f"num_inputs = {shape[0]}, num_outputs = {shape[1]}"
    inputs = max((-i for i, _ in genome.connections if i < 0), default=0)
    outputs = 0
    while outputs in genome.nodes:
        outputs += 1
    return f"at least {inputs} inputs and {outputs} outputs"
