"""Benchmark: agent-steps per second of one generation on the ball simulator at 16/64/256 agents
(each agent driven by its own realistic evolved genome, until every agent's episode has ended or
MAX_STEPS steps have passed; simulator start-up excluded, the reset included), measured in one run:

- neatpar: UnityEvaluator (fast wire, neatpar's communicator, population kernel) with the bulk step
  codec on and off (NEATPAR_BULKWIRE); the median of --generations generations after a first one;
- the plain serial loop a user writes on the stock stack (mlagents-envs 0.28.0 + protobuf 3.20.3,
  stock UnityEnvironment, FeedForwardNetwork.activate per agent), in bench/.envs/stock;
- the design seed's approach (a new spawn Pool per step, one apply_async per agent), stock stack.
All three drive the same simulator build; the simulator's own compute is reported apart.
Usage: python bench/bench_evolve.py [--max-steps N] [--generations G]
"""
import argparse
import contextlib
import json
import os
import pickle
import random
import re
import statistics
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from realistic_genomes import realistic, write_config  # noqa: E402
from stock_env import ROOT, stock_env, stock_python  # noqa: E402

from neatpar.config.behaviors import BehaviorRole  # noqa: E402
from neatpar.config.settings_model import Settings  # noqa: E402
from neatpar.episodes.env_evaluator import UnityEvaluator  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))


@contextlib.contextmanager
def environment_variable(name: str, value: str):
    """An environment variable set for the block (the simulators launched in it read it), then as before."""
    before = os.environ.get(name)
    os.environ[name] = value
    try:
        yield
    finally:
        if before is None:
            del os.environ[name]
        else:
            os.environ[name] = before


def bulk_switch(on: bool):
    """NEATPAR_BULKWIRE for the simulators launched inside the block."""
    return environment_variable("NEATPAR_BULKWIRE", "1" if on else "0")


def neatpar_run(config, genomes, agents, max_steps, logs, bulk, generations):
    """The median generation of `generations` after a first one (which also launches the simulator)."""
    run = Settings(env=os.path.join(ROOT, "unity_builds", "ball"), behaviors=(BehaviorRole("Ball3D?team=0", "population"),),
                   env_args=("--agents", str(agents), "--max-steps", str(max_steps)), max_steps=max_steps,
                   worker_id=random.randint(2000, 4000))
    with bulk_switch(bulk), UnityEvaluator.from_settings(run, log_folder=logs) as evaluator:
        pairs = [(g.key, g) for g in genomes[:agents]]
        evaluator.evaluate(pairs, config)
        steps = [evaluator.last_stats.env_steps]  # environment steps of each generation
        measured = []
        for _ in range(generations):
            evaluator.evaluate(pairs, config)
            measured.append(evaluator.last_stats)
            steps.append(evaluator.last_stats.env_steps)
        bridge = evaluator.environment.bridge
        worker, used = bridge.worker_id, bridge.bulk_in_use
    assert used == bulk, (used, bulk)
    log = open(os.path.join(logs, f"Player-{worker}.log")).read()
    compute = [float(x) for x in re.findall(r"compute_ms ([0-9.]+)", log)]
    results, start = [], steps[0] + 1  # the handshake's exchange, then each generation's reset and steps
    for stats, count in zip(measured, steps[1:]):
        results.append({"agent_steps": stats.agent_steps, "seconds": stats.seconds,
                        "sim_seconds": sum(compute[start:start + count + 1]) / 1e3})
        start += count + 1
    rates = sorted(rate(r) for r in results)
    return {**min(results, key=lambda r: abs(rate(r) - statistics.median(rates))), "range": (rates[0], rates[-1])}


def stock_run(mode, config_path, genomes_path, agents, max_steps, logs):
    # The simulator itself runs on the fast stack in every case, as a Unity build's C# side would.
    env = {**stock_env(sim_in_stock=False), "NEATPAR_PYTHON": sys.executable}
    result = subprocess.run([stock_python(), os.path.join(HERE, "_plain_loop.py"), mode, config_path, genomes_path,
                             str(agents), str(max_steps), str(random.randint(4001, 6000)), logs],
                            capture_output=True, text=True, env=env, cwd=ROOT, timeout=3600)
    if result.returncode != 0:
        raise RuntimeError(result.stderr[-3000:])
    return json.loads(result.stdout.strip().splitlines()[-1])


def rate(r):
    return r["agent_steps"] / r["seconds"]


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--max-steps", type=int, default=200)
    parser.add_argument("--generations", type=int, default=3)
    args = parser.parse_args()
    work = tempfile.mkdtemp(prefix="neatpar-bench-")
    config, genomes = realistic(256, seed=2)
    config_path = os.path.join(work, "neat.cfg")
    write_config(config_path, 256)
    genomes_path = os.path.join(work, "genomes.pickle")
    with open(genomes_path, "wb") as f:
        pickle.dump(genomes, f)
    print(f"load average at start: {os.getloadavg()[0]:.2f}\n")
    print("| agents | neatpar | neatpar, bulk off | plain loop (stock) | seed design (stock) | bulk on / off | vs plain "
          "| vs seed | neatpar: range over generations | simulator share: neatpar / bulk off / plain |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    for agents in (16, 64, 256):
        ours = neatpar_run(config, genomes, agents, args.max_steps, os.path.join(work, f"np{agents}"), True,
                           args.generations)
        off = neatpar_run(config, genomes, agents, args.max_steps, os.path.join(work, f"off{agents}"), False,
                          args.generations)
        plain = stock_run("plain", config_path, genomes_path, agents, args.max_steps, os.path.join(work, f"pl{agents}"))
        seed = stock_run("seed", config_path, genomes_path, agents, args.max_steps, os.path.join(work, f"sd{agents}"))
        low, high = ours["range"]
        print(f"| {agents} | {rate(ours):,.0f} agent-steps/s | {rate(off):,.0f} | {rate(plain):,.0f} | {rate(seed):,.0f} | "
              f"{rate(ours) / rate(off):.2f}x | {rate(ours) / rate(plain):.1f}x | {rate(ours) / rate(seed):.0f}x | "
              f"{low:,.0f}-{high:,.0f} | {ours['sim_seconds'] / ours['seconds']:.0%} / "
              f"{off['sim_seconds'] / off['seconds']:.0%} / {plain['sim_seconds'] / plain['seconds']:.0%} |", flush=True)
    print(f"\nload average at end: {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main()
