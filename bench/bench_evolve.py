"""Benchmark: agent-steps per second of one generation on the ball simulator at 16/64/256 agents
(each agent driven by its own realistic evolved genome, until every agent's episode has ended or
MAX_STEPS steps have passed; simulator start-up excluded, the reset included), measured in one run:

- neatpar: UnityEvaluator (fast wire, neatpar's communicator, population kernel);
- the plain serial loop a user writes on the stock stack (mlagents-envs 0.28.0 + protobuf 3.20.3,
  stock UnityEnvironment, FeedForwardNetwork.activate per agent), in bench/.envs/stock;
- the design seed's approach (a new spawn Pool per step, one apply_async per agent), stock stack.
All three drive the same simulator build; the simulator's own compute is reported apart.
Usage: python bench/bench_evolve.py [--max-steps N]
"""
import argparse
import json
import os
import pickle
import random
import re
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from realistic_genomes import realistic, write_config  # noqa: E402
from stock_env import ROOT, stock_env, stock_python  # noqa: E402

from neatpar.settings import BehaviorRole, Settings  # noqa: E402
from neatpar.run.evaluator import UnityEvaluator  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))


def neatpar_run(config, genomes, agents, max_steps, logs):
    run = Settings(env=os.path.join(ROOT, "unity_builds", "ball"), behaviors=(BehaviorRole("Ball3D?team=0", "population"),),
                   env_args=("--agents", str(agents), "--max-steps", str(max_steps)), max_steps=max_steps,
                   worker_id=random.randint(2000, 4000))
    with UnityEvaluator.from_settings(run, log_folder=logs) as evaluator:
        pairs = [(g.key, g) for g in genomes[:agents]]
        evaluator.evaluate(pairs, config)  # the first generation also launches the simulator
        steps_before = evaluator.last_stats.env_steps
        evaluator.evaluate(pairs, config)
        stats = evaluator.last_stats
        worker = evaluator.environment.bridge.worker_id
    log = open(os.path.join(logs, f"Player-{worker}.log")).read()
    compute = [float(x) for x in re.findall(r"compute_ms ([0-9.]+)", log)][steps_before + 1:]
    return {"agent_steps": stats.agent_steps, "seconds": stats.seconds, "sim_seconds": sum(compute) / 1e3}


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
    args = parser.parse_args()
    work = tempfile.mkdtemp(prefix="neatpar-bench-")
    config, genomes = realistic(256, seed=2)
    config_path = os.path.join(work, "neat.cfg")
    write_config(config_path, 256)
    genomes_path = os.path.join(work, "genomes.pickle")
    with open(genomes_path, "wb") as f:
        pickle.dump(genomes, f)
    print("| agents | neatpar | plain loop (stock) | seed design (stock) | vs plain | vs seed | simulator share: neatpar / plain |")
    print("|---|---|---|---|---|---|---|")
    for agents in (16, 64, 256):
        ours = neatpar_run(config, genomes, agents, args.max_steps, os.path.join(work, f"np{agents}"))
        plain = stock_run("plain", config_path, genomes_path, agents, args.max_steps, os.path.join(work, f"pl{agents}"))
        seed = stock_run("seed", config_path, genomes_path, agents, args.max_steps, os.path.join(work, f"sd{agents}"))
        print(f"| {agents} | {rate(ours):,.0f} agent-steps/s | {rate(plain):,.0f} | {rate(seed):,.0f} | "
              f"{rate(ours) / rate(plain):.1f}x | {rate(ours) / rate(seed):.0f}x | "
              f"{ours['sim_seconds'] / ours['seconds']:.0%} / {plain['sim_seconds'] / plain['seconds']:.0%} |", flush=True)


if __name__ == "__main__":
    main()
