"""Benchmark: generation wall time of Gymnasium runs, neatpar against neat-python's own ways, in one run.

For CartPole-v1 and LunarLander-v3, a population of 256 genomes (configs/cartpole.cfg and
configs/lunarlander.cfg, pop_size changed), each genome playing one episode per generation (up to
the environment's own limit: 500 and 1000 steps):
- serial: neat-python's examples, one genome at a time: `gym.make` per genome,
  `FeedForwardNetwork.activate` per step, argmax;
- ParallelEvaluator: neat-python's `neat.ParallelEvaluator(2, eval_genome)` with the same function;
- neatpar in process: `EnvEvaluator`, `agents` copies in this process, the population kernel;
- neatpar envs = 2: the same on two env hosts (local processes).
Two populations each: the first generation, and the population after a few generations of
evolution (longer episodes). The table shows the best of --generations generations (each a new
set of episodes) and the ratios.
A second table shows where the time goes (one instrumented generation, in process), a third why
copies are stepped by neatpar's own loop rather than a Gymnasium vector env.
Usage: python bench/bench_gym.py [--agents 64] [--generations 4] [--no-hosts]
"""
import argparse
import os
import statistics
import sys
import tempfile
import time

os.environ.setdefault("TQDM_DISABLE", "1")  # neat-python's ParallelEvaluator draws a progress bar per generation

import gymnasium
import neat
import numpy as np
from gymnasium.vector import AutoresetMode, SyncVectorEnv

from neatpar.processes import cpu_count
from neatpar import EnvEvaluator
from neatpar.envs.gym import DEFAULT_COPIES, GymEnvironment, GymSetup, episode_seed
from neatpar.settings import load

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
POPULATION = 256
WORKERS = 2
ENVS = {  # id: (config, max steps, generations of evolution for the "evolved" population)
    "CartPole-v1": ("cartpole.cfg", 500, 4),
    "LunarLander-v3": ("lunarlander.cfg", 1000, 8),
}


# ---------------------------------------------------------------- neat-python's way

def eval_genome(genome, config, env_id=None, seed=0, max_steps=0, clock=None):
    """neat-python's examples: a fresh environment per genome, one episode, argmax actions.
    `clock` (a dict) adds the seconds spent in Gymnasium and in the network."""
    env = gymnasium.make(env_id)
    net = neat.nn.FeedForwardNetwork.create(genome, config)
    observation, _ = env.reset(seed=seed)
    total, steps = 0.0, 0
    for _ in range(max_steps):
        if clock is None:
            action = int(np.argmax(net.activate(observation)))
            observation, reward, terminated, truncated, _ = env.step(action)
        else:
            t0 = time.perf_counter()
            action = int(np.argmax(net.activate(observation)))
            t1 = time.perf_counter()
            observation, reward, terminated, truncated, _ = env.step(action)
            clock["network"] += t1 - t0
            clock["env"] += time.perf_counter() - t1
        total += reward
        steps += 1
        if terminated or truncated:
            break
    env.close()
    return total


class Task:
    """eval_genome for one environment, picklable for ParallelEvaluator's workers."""

    def __init__(self, env_id: str, max_steps: int, generation: int):
        self.env_id, self.max_steps, self.generation = env_id, max_steps, generation

    def __call__(self, genome, config):
        return eval_genome(genome, config, self.env_id, episode_seed(1000 + self.generation, genome.key),
                           self.max_steps)


def serial(pairs, config, env_id, max_steps, generation, clock=None):
    for key, genome in pairs:
        genome.fitness = eval_genome(genome, config, env_id, episode_seed(1000 + generation, key), max_steps, clock)


# ---------------------------------------------------------------- measurements

def timed(run, generations: int) -> float:
    """The best wall time of `run(generation)` over `generations` calls (the least disturbed by
    other work on the machine)."""
    seconds = []
    for generation in range(generations):
        started = time.perf_counter()
        run(generation)
        seconds.append(time.perf_counter() - started)
    return min(seconds)


def neatpar_time(pairs, config, env_id, max_steps, agents, envs, generations) -> tuple[float, int]:
    """(best generation seconds, mean scored steps per generation) after one warm-up generation."""
    with EnvEvaluator(f"gymnasium:{env_id}", agents=agents, envs=envs, max_steps=max_steps, seed=1) as evaluator:
        evaluator.evaluate(pairs, config)
        steps = []

        def run(_):
            evaluator.evaluate(pairs, config)
            steps.append(evaluator.last_stats.scored_steps)
        return timed(run, generations), int(statistics.mean(steps))


def parallel_time(pairs, config, env_id, max_steps, generations) -> float:
    with neat.ParallelEvaluator(WORKERS, Task(env_id, max_steps, 0)) as evaluator:
        evaluator.evaluate(pairs, config)  # warm-up: the workers import gymnasium

        def run(generation):
            evaluator.eval_function = Task(env_id, max_steps, generation)
            evaluator.evaluate(pairs, config)
        return timed(run, generations)


def breakdown(pairs, config, env_id, max_steps, agents) -> dict:
    """Seconds of one in-process generation spent in Gymnasium (step and reset of the copies), in
    the networks (the kernel), and elsewhere (runner, observation and action conversion)."""
    clock = {"env": 0.0, "network": 0.0}

    def clocked(call, key):
        def run(*args, **kwargs):
            started = time.perf_counter()
            try:
                return call(*args, **kwargs)
            finally:
                clock[key] += time.perf_counter() - started
        return run

    with EnvEvaluator(f"gymnasium:{env_id}", agents=agents, max_steps=max_steps, seed=1) as evaluator:
        evaluator.evaluate(pairs, config)
        for copy in evaluator.environment._envs:
            copy.step, copy.reset = clocked(copy.step, "env"), clocked(copy.reset, "env")
        inference = evaluator.inference
        inference.activate = clocked(inference.activate, "network")
        clock["env"] = clock["network"] = 0.0
        started = time.perf_counter()
        evaluator.evaluate(pairs, config)
        clock["total"] = time.perf_counter() - started
    return clock


def serial_breakdown(pairs, config, env_id, max_steps) -> dict:
    clock = {"env": 0.0, "network": 0.0}
    started = time.perf_counter()
    serial(pairs, config, env_id, max_steps, 0, clock)
    clock["total"] = time.perf_counter() - started
    return clock


def copy_steps(env_id: str, copies: int, steps: int, rounds: int) -> tuple[float, float]:
    """Microseconds of CPU per copy-step of `copies` copies on random outputs, the best of `rounds`
    interleaved rounds: neatpar's loop, and Gymnasium's SyncVectorEnv doing the same (the same
    seeded episodes: partial resets of the copies that ended)."""
    outputs = np.random.default_rng(0).uniform(-1, 1, (steps, copies, 8))
    loop, vector = [], []
    for _ in range(rounds):
        loop.append(_own_loop(env_id, copies, outputs))
        vector.append(_vector_env(env_id, copies, outputs))
    return min(loop) / (steps * copies) * 1e6, min(vector) / (steps * copies) * 1e6


def _own_loop(env_id: str, copies: int, outputs: np.ndarray) -> float:
    own = GymEnvironment(GymSetup(env_id, copies=copies))
    own.reset(1)
    width = own.layout(own.behavior).outputs
    started = time.process_time()
    for step_outputs in outputs:
        own.poll()
        own.act(own.behavior, step_outputs[:, :width])
        own.step()
    seconds = time.process_time() - started
    own.close()
    return seconds


def _vector_env(env_id: str, copies: int, outputs: np.ndarray) -> float:
    vector = SyncVectorEnv([lambda: gymnasium.make(env_id) for _ in range(copies)],
                           autoreset_mode=AutoresetMode.DISABLED, copy=False)
    width = vector.single_action_space.n
    vector.reset(seed=[episode_seed(1, i) for i in range(copies)])
    episodes = copies
    started = time.process_time()
    for step_outputs in outputs:
        _, _, terminated, truncated, _ = vector.step(np.argmax(step_outputs[:, :width], axis=1))
        ended = terminated | truncated
        if ended.any():
            seeds = [None] * copies
            for i in np.flatnonzero(ended):
                seeds[i] = episode_seed(1, episodes)
                episodes += 1
            vector.reset(seed=seeds, options={"reset_mask": ended})
    seconds = time.process_time() - started
    vector.close()
    return seconds


# ---------------------------------------------------------------- populations

def neat_config(env_id: str):
    name = ENVS[env_id][0]
    text = open(os.path.join(ROOT, "configs", name)).read()
    lines = [f"pop_size = {POPULATION}" if line.replace(" ", "").startswith("pop_size=") else line
             for line in text.splitlines()]
    path = os.path.join(tempfile.mkdtemp(), name)
    with open(path, "w") as f:
        f.write("\n".join(lines) + "\n")
    return load(path)[0]


def populations(env_id: str, max_steps: int, agents: int) -> dict:
    """The first generation, and the population after a few generations evolved by neatpar."""
    config = neat_config(env_id)
    first = neat.Population(config, seed=1)
    found = {"first generation": (config, list(first.population.items()))}
    config = neat_config(env_id)
    evolving = neat.Population(config, seed=1)
    evolving.config.no_fitness_termination = True
    generations = ENVS[env_id][2]
    with EnvEvaluator(f"gymnasium:{env_id}", agents=agents, max_steps=max_steps, seed=1) as evaluator:
        evolving.run(evaluator.evaluate, generations)
    found[f"evolved {generations} generations"] = (config, list(evolving.population.items()))
    return found


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--agents", type=int, default=DEFAULT_COPIES, help="copies per process for neatpar")
    parser.add_argument("--generations", type=int, default=4, help="measured generations per row (the best counts)")
    parser.add_argument("--no-hosts", action="store_true", help="leave out neatpar with envs = 2")
    args = parser.parse_args()
    print(f"{cpu_count()} cores; population {POPULATION}, one episode per genome, neatpar agents = "
          f"{args.agents}; best of {args.generations} generations\n")
    print("| environment | population | mean steps | serial | ParallelEvaluator (2) | neatpar in process | "
          "neatpar envs = 2 | in process vs PE | envs = 2 vs PE | envs = 2 vs serial |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    kept = {}
    for env_id, (_, max_steps, _) in ENVS.items():
        for label, (config, pairs) in populations(env_id, max_steps, args.agents).items():
            kept[(env_id, label)] = (config, pairs, max_steps)
            plain = timed(lambda g: serial(pairs, config, env_id, max_steps, g), args.generations)
            parallel = parallel_time(pairs, config, env_id, max_steps, args.generations)
            inproc, steps = neatpar_time(pairs, config, env_id, max_steps, args.agents, 1, args.generations)
            hosted = (float("nan") if args.no_hosts else
                      neatpar_time(pairs, config, env_id, max_steps, args.agents, 2, args.generations)[0])
            print(f"| {env_id} | {label} | {steps / len(pairs):.0f} | {plain:.3f} s | {parallel:.3f} s | "
                  f"{inproc:.3f} s | {hosted:.3f} s | {parallel / inproc:.2f}x | {parallel / hosted:.2f}x | "
                  f"{plain / hosted:.2f}x |", flush=True)
    print("\nWhere the time goes (one generation, instrumented, in one process):\n")
    print("| environment | population | way | total | Gymnasium (step, reset) | networks | the rest |")
    print("|---|---|---|---|---|---|---|")
    for (env_id, label), (config, pairs, max_steps) in kept.items():
        for way, clock in (("serial", serial_breakdown(pairs, config, env_id, max_steps)),
                           ("neatpar", breakdown(pairs, config, env_id, max_steps, args.agents))):
            rest = clock["total"] - clock["env"] - clock["network"]
            print(f"| {env_id} | {label} | {way} | {clock['total']:.3f} s | {clock['env']:.3f} s "
                  f"({clock['env'] / clock['total']:.0%}) | {clock['network']:.3f} s "
                  f"({clock['network'] / clock['total']:.0%}) | {rest:.3f} s ({rest / clock['total']:.0%}) |",
                  flush=True)
    print(f"\nStepping {args.agents} copies on random outputs (CPU microseconds per copy-step, best of 5):\n")
    print("| environment | neatpar's loop | SyncVectorEnv (seeded partial resets) | loop / vector env |")
    print("|---|---|---|---|")
    for env_id in ENVS:
        loop, vec = copy_steps(env_id, args.agents, 300, 5)
        print(f"| {env_id} | {loop:.1f} | {vec:.1f} | {loop / vec:.2f} |", flush=True)


if __name__ == "__main__":
    sys.exit(main())
