"""Stale reads through shared memory, and how neatpar rules them out: environment workers write
observations into shared arrays and the main process reads them, written twice.

UNCHECKED SHARED ARRAYS: workers step their environments and write observations into shared
arrays, then signal on a queue; the main process reads the arrays once a signal arrives. Nothing ties what it
reads to a step: with several workers it reads arrays some of which still hold the previous
step (what looks like a cache coherency problem is really a missing sequence number). Here each
worker also writes the step number after its observations, so the reads can be checked: the
check finds stale rows.

NEATPAR'S WAY: the same environments stepped by neatpar's spawn pool, their observations
written through neatpar's sequenced exchange (neatpar.exchange.StepExchange): each worker checks
the step it is asked for, writes its rows and then its stamp; the main process waits for every
worker and checks every stamp before it reads. No stale row is ever used.

Run: python examples/stale_shared_memory_reads.py [--steps N]
"""
import argparse
import multiprocessing as mp
import time

import numpy as np

WORKERS, ENVS_PER_WORKER, OBS = 2, 4, 3


def views(raw_obs, raw_stamps):
    obs = np.frombuffer(raw_obs, dtype=np.float64).reshape(WORKERS * ENVS_PER_WORKER, OBS)
    return obs, np.frombuffer(raw_stamps, dtype=np.int64)


def env_worker(worker, raw_obs, raw_stamps, commands, done):
    """Steps ENVS_PER_WORKER toy environments; observation of step s is s + small noise."""
    obs, stamps = views(raw_obs, raw_stamps)
    rng = np.random.default_rng(worker)
    rows = slice(worker * ENVS_PER_WORKER, (worker + 1) * ENVS_PER_WORKER)
    while True:
        step = commands.get()
        if step is None:
            return
        time.sleep(rng.random() * 2e-3)           # environments take different times
        obs[rows] = step + rng.random((ENVS_PER_WORKER, OBS)) * 1e-3
        stamps[worker] = step                     # after the observations
        done.put(worker)


def run_unchecked(steps: int) -> int:
    ctx = mp.get_context("spawn")
    raw_obs, raw_stamps = ctx.RawArray("d", WORKERS * ENVS_PER_WORKER * OBS), ctx.RawArray("q", WORKERS)
    obs, stamps = views(raw_obs, raw_stamps)
    commands = [ctx.Queue() for _ in range(WORKERS)]
    done = ctx.Queue()
    procs = [ctx.Process(target=env_worker, args=(w, raw_obs, raw_stamps, commands[w], done))
             for w in range(WORKERS)]
    for p in procs:
        p.start()
    stale = 0
    try:
        for step in range(1, steps + 1):
            for q in commands:
                q.put(step)
            done.get()                            # the only barrier: one signal, then read
            stale += int((np.floor(obs[:, 0]) != step).sum())
            for _ in range(WORKERS - 1):
                done.get()
    finally:
        for q in commands:
            q.put(None)
        for p in procs:
            p.join()
    return stale


_envs = {}


def step_envs(spec, step, worker):
    """In a neatpar pool worker: step this worker's environments, write through the exchange."""
    from neatpar.episodes.inference import _exchange
    exchange = _exchange(spec)
    exchange.read(step, 0, 0)                     # refuses a buffer that is not at this step
    rng = _envs.setdefault(worker, np.random.default_rng(worker))
    time.sleep(rng.random() * 2e-3)
    exchange.write(step, worker, worker * ENVS_PER_WORKER, step + rng.random((ENVS_PER_WORKER, OBS)) * 1e-3)
    return step


def run_neatpar_way(steps: int) -> int:
    import neatpar
    from neatpar.episodes.exchange import StepExchange
    n = WORKERS * ENVS_PER_WORKER
    exchange = StepExchange.create(capacity=n, inputs=1, outputs=OBS, workers=WORKERS)
    stale = 0
    try:
        with neatpar.Pool(WORKERS) as pool:
            for step in range(1, steps + 1):
                exchange.publish(step, np.zeros((0, 1)), np.zeros(0, np.int64), np.zeros(0, np.int64),
                                 np.zeros(0, np.uint8))
                jobs = [pool.apply_async(step_envs, (exchange.spec, step, w), worker=w) for w in range(WORKERS)]
                for job in jobs:
                    job.get(60)
                obs = exchange.collect(step, list(range(WORKERS)), n)   # checks every stamp
                stale += int((np.floor(obs[:, 0]) != step).sum())
    finally:
        exchange.close()
    return stale


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--steps", type=int, default=300)
    args = parser.parse_args()
    print(f"unchecked shared arrays: {run_unchecked(args.steps)} stale observation rows read in {args.steps} steps")
    print(f"neatpar's way: {run_neatpar_way(args.steps)} stale observation rows read in {args.steps} steps")


if __name__ == "__main__":
    main()
