"""Fitness functions the tests run inside real spawn workers (importable by module name).

Fault-injecting ones read their victim genome key and marker folder from the environment, which
spawn workers inherit from the test process.
"""
import ctypes
import os
import random
import signal
import time

import numpy as np


def _victim(genome) -> bool:
    return genome.key == int(os.environ.get("NEATPAR_TEST_VICTIM", "-1"))


def _first_time(genome) -> bool:
    marker = os.path.join(os.environ["NEATPAR_TEST_DIR"], f"seen-{genome.key}")
    if os.path.exists(marker):
        return False
    open(marker, "w").close()
    return True


def trivial(genome, config):
    return 1.0


def stochastic(genome, config):
    """Depends on both global generators, so only per-genome seeding makes it reproducible."""
    return random.random() + float(np.random.random()) + 1e-3 * len(genome.connections)


def key_fitness(genome, config):
    return float(genome.key)


def cpu_bound(genome, config, seconds=0.01):
    end = time.perf_counter() + seconds
    x = 0
    while time.perf_counter() < end:
        x += 1
    return float(genome.key)


def sigkill_once(genome, config):
    if _victim(genome) and _first_time(genome):
        os.kill(os.getpid(), signal.SIGKILL)
    return float(genome.key)


def sigkill_always(genome, config):
    if _victim(genome):
        os.kill(os.getpid(), signal.SIGKILL)
    return float(genome.key)


def segfault_always(genome, config):
    if _victim(genome):
        ctypes.string_at(0)
    return float(genome.key)


def exit_always(genome, config):
    if _victim(genome):
        os._exit(3)
    return float(genome.key)


def hang(genome, config):
    if _victim(genome):
        time.sleep(3600)
    return float(genome.key)


def raise_for_victim(genome, config):
    if _victim(genome):
        raise ValueError(f"boom in genome {genome.key}")
    return float(genome.key)


def returns_none(genome, config):
    return None


def raise_always(genome, config):
    raise ValueError(f"boom in genome {genome.key}")


def raise_for_odd_keys(genome, config):
    if genome.key % 2:
        raise ValueError(f"odd genome {genome.key}")
    return 0.0


def hang_always(genome, config):
    time.sleep(3600)


def sets_fitness_instead(genome, config):
    """What a newcomer writes first: the fitness set on the genome (a copy, in the worker), not returned."""
    genome.fitness = 1.0


def returns_nan(genome, config):
    return float("nan")


def report_pid(genome, config):
    return float(os.getpid())


def failing_initializer(value):
    raise RuntimeError(f"initializer refused {value}")


def eval_genomes_by_mistake(genomes, config):
    """A population-level function (what neat-python's serial run() wants), passed by mistake."""
    for _, genome in genomes:
        genome.fitness = 1.0


def whoami(tag):
    return (tag, os.getpid())


def count_up(n):
    for i in range(n):
        yield i
    return "finished"


def count_up_then_raise(n):
    """Yields 0..n-1 at once (within one batch of the worker's stream), then raises."""
    yield from range(n)
    raise ValueError(f"raised after {n} items")


def read_shared(shared, index):
    return shared[index]


def sleep_then(seconds, value):
    time.sleep(seconds)
    return value


def record(name: str) -> None:
    """Append this process's PID to the file `name` in NEATPAR_TEST_DIR (one line per call)."""
    with open(os.path.join(os.environ["NEATPAR_TEST_DIR"], name), "a") as f:
        f.write(f"{os.getpid()}\n")


def refuse_load():
    record("loads")
    raise RuntimeError("this object refuses to be unpickled")


def exit_on_load():
    record("loads")
    os._exit(3)


class Unloadable:
    """Pickles anywhere; unpickling it raises, as when a worker cannot load what it was sent."""

    def __reduce__(self):
        return (refuse_load, ())


class KillsOnLoad:
    """Pickles anywhere; unpickling it ends the process (exit code 3)."""

    def __reduce__(self):
        return (exit_on_load, ())


def exit_in_initializer():
    record("initializers")
    os._exit(3)


def sys_exit_for_victim(genome, config):
    """What a library that calls sys.exit() does: a BaseException, not an Exception."""
    if _victim(genome):
        raise SystemExit(f"exit in genome {genome.key}")
    return float(genome.key)


def send_out_of_turn(message, delay: float = 0.0):
    """Sends `message` to the pool on this worker's own channel, as a task that meddles with the
    pool's protocol would: at once, or `delay` seconds later from a thread (after the task has
    returned, so that it arrives while the worker is idle)."""
    import threading
    from neatpar.parallel import workers
    if delay:
        threading.Timer(delay, workers.send, (message,)).start()
    else:
        workers.send(message)
    return "sent"


def described(genome, config):
    """(fitness, descriptor) from the genome's genes alone: the same in any process."""
    weights = [c.weight for c in genome.connections.values()]
    return float(sum(weights)), [float(np.tanh(min(weights, default=0.0))), float(np.tanh(max(weights, default=0.0)))]


def described_unevenly(genome, config):
    """`described`, but genome 3's descriptor has three values."""
    fitness, descriptor = described(genome, config)
    return fitness, descriptor + [0.0] if genome.key == 3 else descriptor
