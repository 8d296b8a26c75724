"""Benchmark: the ML-Agents wire on neatpar's fast stack (protobuf 6 / upb, rebuilt messages)
against the stock stack (mlagents-envs 0.28.0 + protobuf 3.20.3, built in bench/.envs/stock-X.Y), and
neatpar's bulk step codec against mlagents-envs' own conversions, measured in one run:

1. one 256-agent step message: parse, serialize, pickle round trip;
2. env.step() of neatpar's bridge environment on the ball simulator at 1/16/64/256/1024 agents,
   with the bulk codec on and off (NEATPAR_BULKWIRE), each split into the simulator's own compute
   (from its log) and the Python side (the rest); each configuration runs --repeats times,
   alternating, and the table gives the medians and the spread of the bulk Python side;
3. env.step() of mlagents-envs' own UnityEnvironment, stock stack against fast stack.
Usage: python bench/bench_wire.py [--steps N] [--repeats R]
"""
import argparse
import json
import os
import random
import statistics
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from stock_env import ROOT, stock_env, stock_python  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
BULK_AGENTS = (1, 16, 64, 256, 1024)
STOCK_AGENTS = (1, 16, 64, 256)


def probe(python, script, args, env):
    result = subprocess.run([python, os.path.join(HERE, script), *map(str, args)], capture_output=True,
                            text=True, env=env, cwd=ROOT, timeout=1800)
    if result.returncode != 0:
        raise RuntimeError(f"{script} failed:\n{result.stderr[-3000:]}")
    return json.loads(result.stdout.strip().splitlines()[-1])


def step_probe(python, env, agents, steps, mode):
    return probe(python, "_step_probe.py", [agents, steps, random.randint(2000, 6000), mode], env)


def message_table(stock, fast_env):
    fast, slow = probe(sys.executable, "_message_probe.py", [256], fast_env), probe(stock, "_message_probe.py", [256], stock_env())
    print(f"One 256-agent step message ({fast['bytes']} bytes)\n")
    print("| operation | stock (protobuf 3.20.3, pure Python) | fast (protobuf 6, upb) | ratio |")
    print("|---|---|---|---|")
    for key, label in (("parse_ms", "parse"), ("serialize_ms", "serialize"), ("pickle_ms", "pickle round trip")):
        print(f"| {label} | {slow[key]:.3f} ms | {fast[key]:.3f} ms | {slow[key] / fast[key]:.0f}x |")


def bulk_table(fast_env, steps, repeats):
    print(f"\nenv.step() of neatpar's bridge environment on the ball simulator, bulk codec on and off (median of "
          f"{steps} steps, then of {repeats} alternating runs); simulator = its own compute per step, Python side = "
          f"the rest\n")
    print("| agents | off: step | off: simulator | off: Python side | on: step | on: simulator | on: Python side "
          "| Python-side ratio | on: Python side / simulator (spread) |")
    print("|---|---|---|---|---|---|---|---|---|")
    for agents in BULK_AGENTS:
        runs = {"mlagents": [], "bulk": []}
        for _ in range(repeats):
            for mode in runs:
                runs[mode].append(step_probe(sys.executable, fast_env, agents, steps, mode))
        off, on = ({key: statistics.median(r[key] for r in runs[mode]) for key in ("step_ms", "sim_ms")} for mode in runs)
        off_py, on_py = off["step_ms"] - off["sim_ms"], on["step_ms"] - on["sim_ms"]
        shares = sorted((r["step_ms"] - r["sim_ms"]) / r["sim_ms"] for r in runs["bulk"])
        print(f"| {agents} | {off['step_ms']:.2f} ms | {off['sim_ms']:.2f} ms | {off_py:.2f} ms | {on['step_ms']:.2f} ms | "
              f"{on['sim_ms']:.2f} ms | {on_py:.2f} ms | {off_py / on_py:.1f}x | {on_py / on['sim_ms']:.2f} "
              f"({shares[0]:.2f}-{shares[-1]:.2f}) |", flush=True)


def stock_table(stock, fast_env, steps):
    print(f"\nenv.step() of mlagents-envs' own UnityEnvironment on the ball simulator (median of {steps} steps), "
          f"stock stack against fast stack\n")
    print("| agents | stock: step | stock: simulator | stock: Python side | fast: step | fast: simulator "
          "| fast: Python side | step ratio | Python-side ratio |")
    print("|---|---|---|---|---|---|---|---|---|")
    for agents in STOCK_AGENTS:
        s = step_probe(stock, stock_env(), agents, steps, "plain")
        f = step_probe(sys.executable, fast_env, agents, steps, "plain")
        s_py, f_py = s["step_ms"] - s["sim_ms"], f["step_ms"] - f["sim_ms"]
        print(f"| {agents} | {s['step_ms']:.2f} ms | {s['sim_ms']:.2f} ms | {s_py:.2f} ms | {f['step_ms']:.2f} ms | "
              f"{f['sim_ms']:.2f} ms | {f_py:.2f} ms | {s['step_ms'] / f['step_ms']:.1f}x | {s_py / f_py:.1f}x |",
              flush=True)
    print(f"\nbackends: stock {s['backend']}, fast {f['backend']}")


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=150)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--no-stock", action="store_true", help="leave out the stock stack (tables 1 and 3)")
    args = parser.parse_args()
    fast_env = {k: v for k, v in os.environ.items() if k not in ("NEATPAR_PYTHON", "NEATPAR_BULKWIRE")}
    print(f"load average at start: {os.getloadavg()[0]:.2f}\n")
    stock = None if args.no_stock else stock_python()
    if stock:
        message_table(stock, fast_env)
    bulk_table(fast_env, args.steps, args.repeats)
    if stock:
        stock_table(stock, fast_env, args.steps)
    print(f"\nload average at end: {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main()
