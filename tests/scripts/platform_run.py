"""Run by tests/test_platform.py in a process of its own, on this machine's surface or a platform's
(tests/support/surface): what the project's code sees of the system, a seeded XOR run in this
process with neatpar's NEAT step classes and population kernel, and a Gymnasium `neatpar evolve`
(CartPole, small, its networks on a spawn pool); writes all of it as one JSON object to
FOLDER/report.json.

    python tests/scripts/platform_run.py FOLDER"""
import csv
import json
import os
import re
import sys

import neat
import numpy as np

import neatpar
from neatpar import processes
from neatpar.envs.unity import builds
from neatpar.nn import FeedForwardPopulation

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
CASES = np.array([[0.0, 0.0], [0.0, 1.0], [1.0, 0.0], [1.0, 1.0]])
TARGETS = np.array([0.0, 1.0, 1.0, 0.0])


def seen_in_a_worker() -> dict:
    """What the project's code sees of the system in a spawn pool worker."""
    return {"platform": builds.sys.platform, "sched_getaffinity": hasattr(processes.os, "sched_getaffinity"),
            "SIGKILL": hasattr(processes.signal, "SIGKILL")}


def seen() -> dict:
    """What the project's code sees of the system, here and in a pool worker."""
    probe = {"__name__": "neatpar.probe"}   # code run as a neatpar module's
    try:
        exec("import fcntl", dict(probe))
        fcntl = True
    except ImportError:
        fcntl = False
    try:
        exec("open('/proc/self/stat').close()", dict(probe))
        proc = True
    except FileNotFoundError:
        proc = False
    with neatpar.Pool(1) as pool:
        worker = pool.apply_async(seen_in_a_worker).get()
    return {"platform": builds.sys.platform, "sched_getaffinity": hasattr(processes.os, "sched_getaffinity"),
            "SIGKILL": hasattr(processes.signal, "SIGKILL"), "pthread_kill": hasattr(processes.signal, "pthread_kill"),
            "setsid": hasattr(processes.os, "setsid"), "fcntl": fcntl, "proc": proc, "cpus": processes.cpu_count(),
            "stop_signals": list(processes.stop_signals()), "apart": sorted(processes.apart_from_terminal()),
            "worker": worker}


def xor() -> dict:
    """40 generations of XOR, seed 7, each generation's networks in one kernel call."""
    def evaluate(genomes, config):
        population = FeedForwardPopulation.create(genomes, config)
        outputs = population.activate(np.tile(CASES, (len(genomes), 1)), np.repeat(np.arange(len(genomes)), 4))
        errors = ((outputs[:, 0] - np.tile(TARGETS, len(genomes))) ** 2).reshape(len(genomes), -1).sum(axis=1)
        for (_, genome), error in zip(genomes, errors):
            genome.fitness = 4.0 - float(error)

    config = neat.Config(neatpar.Genome, neatpar.Reproduction, neatpar.SpeciesSet, neat.DefaultStagnation,
                         os.path.join(ROOT, "configs", "xor.cfg"))
    population = neat.Population(config, seed=7)
    stats = neat.StatisticsReporter()
    population.add_reporter(stats)
    winner = population.run(evaluate, 40)
    return {"winner": winner.key, "fitness": winner.fitness, "best": [g.fitness for g in stats.most_fit_genomes],
            "species": len(population.species.species)}


def cartpole(folder: str) -> dict:
    """`neatpar evolve` on CartPole: population 24, 3 generations, networks on one pool worker."""
    text = open(os.path.join(ROOT, "configs", "cartpole.cfg")).read()
    for key, value in (("pop_size", "24"), ("agents", "16"), ("max_steps", "200"), ("episodes_per_genome", "2")):
        text = re.sub(rf"^{key}\s*=.*$", f"{key} = {value}", text, flags=re.MULTILINE)
    config = os.path.join(folder, "cartpole.cfg")
    with open(config, "w") as f:
        f.write(text)
    out = os.path.join(folder, "run")
    sys.argv = ["neatpar", "evolve", "--config", config, "--out", out, "--generations", "3", "--inference", "pool",
                "--workers", "1", "--quiet"]
    from _neatpar_command import main
    status = main()
    with open(os.path.join(out, "stats.csv")) as f:
        rows = list(csv.DictReader(f))
    winner = json.load(open(os.path.join(out, "winner.json")))
    return {"status": status, "rows": rows, "winner": winner.get("key"), "fitness": winner.get("fitness"),
            "files": sorted(os.listdir(out))}


if __name__ == "__main__":
    folder = sys.argv[1]
    report = {"seen": seen(), "xor": xor(), "cartpole": cartpole(folder)}
    with open(os.path.join(folder, "report.json"), "w") as f:
        json.dump(report, f)
