"""Benchmark: the ML-Agents wire on neatpar's fast stack (protobuf 6 / upb, rebuilt messages)
against the stock stack (mlagents-envs 0.28.0 + protobuf 3.20.3, built in bench/.envs/stock),
measured in one run:

1. one 256-agent step message: parse, serialize, pickle round trip;
2. env.step() of the real UnityEnvironment on the ball simulator at 1/16/64/256 agents, split into
   the simulator's own compute (from its log) and the Python side (the rest).
Usage: python bench/bench_wire.py [--steps N]
"""
import argparse
import json
import os
import random
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from stock_env import ROOT, stock_env, stock_python  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))


def probe(python, script, args, env):
    result = subprocess.run([python, os.path.join(HERE, script), *map(str, args)], capture_output=True,
                            text=True, env=env, cwd=ROOT, timeout=1800)
    if result.returncode != 0:
        raise RuntimeError(f"{script} failed:\n{result.stderr[-3000:]}")
    return json.loads(result.stdout.strip().splitlines()[-1])


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=150)
    args = parser.parse_args()
    stock = stock_python()
    fast_env = {k: v for k, v in os.environ.items() if k != "NEATPAR_PYTHON"}
    fast, slow = probe(sys.executable, "_message_probe.py", [256], fast_env), probe(stock, "_message_probe.py", [256], stock_env())
    print(f"One 256-agent step message ({fast['bytes']} bytes)\n")
    print("| operation | stock (protobuf 3.20.3, pure Python) | fast (protobuf 6, upb) | ratio |")
    print("|---|---|---|---|")
    for key, label in (("parse_ms", "parse"), ("serialize_ms", "serialize"), ("pickle_ms", "pickle round trip")):
        print(f"| {label} | {slow[key]:.3f} ms | {fast[key]:.3f} ms | {slow[key] / fast[key]:.0f}x |")

    print("\nenv.step() of the real UnityEnvironment on the ball simulator (median of "
          f"{args.steps} steps); simulator = its own compute per step, Python side = the rest\n")
    print("| agents | stock: step | stock: simulator | stock: Python side | fast: step | fast: simulator "
          "| fast: Python side | step ratio | Python-side ratio |")
    print("|---|---|---|---|---|---|---|---|---|")
    for agents in (1, 16, 64, 256):
        worker = random.randint(2000, 4000)
        s = probe(stock, "_step_probe.py", [agents, args.steps, worker], stock_env())
        f = probe(sys.executable, "_step_probe.py", [agents, args.steps, worker + 1], fast_env)
        s_py, f_py = s["step_ms"] - s["sim_ms"], f["step_ms"] - f["sim_ms"]
        print(f"| {agents} | {s['step_ms']:.2f} ms | {s['sim_ms']:.2f} ms | {s_py:.2f} ms | {f['step_ms']:.2f} ms | "
              f"{f['sim_ms']:.2f} ms | {f_py:.2f} ms | {s['step_ms'] / f['step_ms']:.1f}x | {s_py / f_py:.1f}x |")
    print(f"\nbackends: stock {s['backend']}, fast {f['backend']}")


if __name__ == "__main__":
    main()
