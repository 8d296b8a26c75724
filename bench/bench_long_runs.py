"""Benchmark: does a generation cost more, in time or memory, the longer a run has gone on?

`neatpar evolve` runs a cheap task (CartPole-v1, population 40, episodes of at most MAX_STEPS
steps, the networks held at one size: no structural mutation) for each --generations count, as a
user runs it (a checkpoint every CHECKPOINT_INTERVAL generations, stats.csv, TensorBoard, the
plots at the end). Each generation's wall time is taken from its progress line's arrival (so
everything the run does between two generations counts), and the run's process tree's memory
(its processes' summed RSS, from Linux's /proc) is read every MEMORY_EVERY generations.
Printed per run: the median seconds of a generation over generations 300-600 and over the last
300, their ratio, and the memory at generation 300 and at the end, as KiB per generation.
Usage: python bench/bench_long_runs.py [--generations 4000 20000]
"""
import argparse
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
MAX_STEPS = 10
CHECKPOINT_INTERVAL = 100
MEMORY_EVERY = 100
EARLY = (300, 600)     # the generations the end is compared with (after the first ones settle)
LAST = 300             # the last generations of the run
STRUCTURE = {"conn_add_prob": "0.0", "conn_delete_prob": "0.0", "node_add_prob": "0.0", "node_delete_prob": "0.0",
             "pop_size": "40", "fitness_threshold": "1000000", "no_fitness_termination": "true",
             "max_stagnation": "1000000"}
NEATPAR = {"agents": "40", "max_steps": str(MAX_STEPS), "episodes_per_genome": "1", "seed": "3",
           "checkpoint_interval": str(CHECKPOINT_INTERVAL)}


def write_config(folder: str) -> str:
    """configs/cartpole.cfg with the population, episodes and structure of this benchmark."""
    lines = []
    for line in open(os.path.join(ROOT, "configs", "cartpole.cfg")):
        key = line.split("=")[0].strip()
        value = STRUCTURE.get(key, NEATPAR.get(key))
        lines.append(f"{key} = {value}\n" if value is not None and "=" in line else line)
    path = os.path.join(folder, "long.cfg")
    with open(path, "w") as f:
        f.writelines(lines)
    return path


def tree_rss_kib(pid: int) -> int:
    """The summed resident memory of `pid` and its descendants, in KiB (Linux's /proc)."""
    total, todo = 0, [pid]
    while todo:
        current = todo.pop()
        try:
            with open(f"/proc/{current}/status") as f:
                total += next(int(line.split()[1]) for line in f if line.startswith("VmRSS:"))
            with open(f"/proc/{current}/task/{current}/children") as f:
                todo += [int(child) for child in f.read().split()]
        except (OSError, StopIteration):
            continue
    return total


def run(config: str, generations: int, folder: str) -> tuple[list[float], dict[int, int]]:
    """One run of `generations`: each generation's wall seconds and the memory every MEMORY_EVERY."""
    command = [sys.executable, "-m", "neatpar", "evolve", "--config", config, "--out", os.path.join(folder, "run"),
               "--generations", str(generations)]
    proc = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=ROOT,
                            env={**os.environ, "TQDM_DISABLE": "1"})
    arrivals, memory = [], {}
    for line in proc.stdout:
        found = re.match(r"gen +(\d+) \|", line)
        if found:
            arrivals.append(time.perf_counter())
            generation = int(found.group(1))
            if generation % MEMORY_EVERY == 0:
                memory[generation] = tree_rss_kib(proc.pid)
    _, err = proc.communicate()
    if proc.returncode != 0:
        raise SystemExit(f"the run failed ({proc.returncode}): {err[-2000:]}")
    return [b - a for a, b in zip(arrivals, arrivals[1:])], memory


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--generations", type=int, nargs="+", default=[4000, 20000])
    args = parser.parse_args()
    print(f"CartPole-v1, population 40, episodes of {MAX_STEPS} steps, no structural mutation, a checkpoint "
          f"every {CHECKPOINT_INTERVAL} generations")
    print(f"{'generations':>11} | {'s/gen 300-600':>13} | {'s/gen last 300':>14} | {'ratio':>5} | "
          f"{'MiB at 300':>10} | {'MiB at end':>10} | {'KiB/gen':>7} | {'run s':>6}")
    for generations in args.generations:
        with tempfile.TemporaryDirectory() as folder:
            started = time.perf_counter()
            seconds, memory = run(write_config(folder), generations, folder)
            total = time.perf_counter() - started
        early = statistics.median(seconds[EARLY[0]:EARLY[1]])
        last = statistics.median(seconds[-LAST:])
        end = max(memory)
        growth = (memory[end] - memory[EARLY[0]]) / (end - EARLY[0])
        print(f"{generations:>11} | {early:>13.4f} | {last:>14.4f} | {last / early:>5.2f} | "
              f"{memory[EARLY[0]] / 1024:>10.1f} | {memory[end] / 1024:>10.1f} | {growth:>7.2f} | {total:>6.0f}",
              flush=True)


if __name__ == "__main__":
    main()
