"""The three failure modes neatpar rules out, as regression tests against the real components: a
Unity connection copied into pool children, a sender's data changed by sending it, and stale reads
through shared memory."""
import hashlib
import os
import re
import pickle

import neat
import numpy as np
import pytest

import neatpar
from neatpar.envs.unity.bridge import SimulatorBridge
from neatpar.errors import LiveHandleError
from neatpar.episodes.exchange import StepExchange
from neatpar.episodes.inference import PoolInference
from neatpar.nn import FeedForwardPopulation
from neatpar.parallel.serialize import dumps
from support.configs import load_config
from support.paths import BUILDS, ROOT
from support.processes import run_marked
from support.simulators import free_worker_id, simulator

EXAMPLES = os.path.join(ROOT, "examples")
SCRIPTS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "scripts")


# ---------------------------------------------------------------- a Unity connection copied into pool children

def test_the_parent_s_connection_keeps_stepping_while_a_pool_starts_works_and_exits():
    result, _ = run_marked([os.path.join(EXAMPLES, "unity_connection_in_pool_children.py"), "--steps", "8",
                            "--worker-id", str(free_worker_id())])
    assert result.returncode == 0, result.stderr
    assert "environment still stepping after the pool exited: 8 steps" in result.stdout


def test_a_connection_an_unguarded_script_makes_in_every_pool_child_is_a_clear_error_not_a_respawn_loop():
    result, seconds = run_marked([os.path.join(SCRIPTS, "unguarded_unity_connection.py")],
                                 env={"NEATPAR_TEST_WORKER_ID": str(free_worker_id())})
    assert seconds < 60
    assert result.returncode != 0
    # gRPC's C core may log a line of its own as the script's server shuts down ("I1130 09:22:37...").
    lines = [line for line in result.stderr.strip().splitlines() if not re.match(r"[IWEF]\d{4} \d\d:\d\d:\d\d", line)]
    last = lines[-1]
    assert last.startswith("neatpar.errors.UnguardedScriptError"), result.stderr
    assert "UnityEnvironment() ran at import time in a neatpar pool worker" in last
    assert 'if __name__ == "__main__":' in last


# ---------------------------------------------------------------- a sender's data changed by sending it

def digest(obj) -> str:
    return hashlib.blake2b(dumps(obj), digest_size=16).hexdigest()


def genome_digest(genome, config):
    """A 'fitness' that reports what arrived: a digest of the genome and config as received."""
    return float(int(hashlib.blake2b(dumps((genome, config.genome_config.num_inputs)), digest_size=6).hexdigest(), 16))


def kernel_digest(kernel):
    t = kernel.tables
    return hashlib.blake2b(b"".join(a.tobytes() for a in (t.genome_start, t.node_slot, t.link_src, t.link_w,
                                                          t.node_bias, t.node_resp)), digest_size=16).hexdigest()


def read_chunk(spec, step):
    from neatpar.episodes.inference import _exchange
    obs, index, rows, reset = _exchange(spec).read(step, 0, 4)
    return obs.tobytes(), index.tobytes()


def test_what_neatpar_sends_leaves_the_sender_unchanged_and_arrives_equal():
    config = load_config()
    genomes = list(neat.Population(config, seed=2).population.items())
    next(iter(genomes))[1].mutate_add_node(config.genome_config)  # a config whose node counter runs
    before = {k: digest(g) for k, g in genomes}, digest(config)
    expected = {k: genome_digest(g, config) for k, g in genomes}
    with neatpar.ParallelEvaluator(2, genome_digest) as evaluator:                    # genomes, config
        evaluator.evaluate(genomes, config)
    assert {k: g.fitness for k, g in genomes} == expected                           # arrived equal
    for _, g in genomes:
        g.fitness = None
    assert ({k: digest(g) for k, g in genomes}, digest(config)) == before         # sender unchanged

    kernel = FeedForwardPopulation.create([g for _, g in genomes], config)         # compiled networks
    sent = kernel_digest(kernel)
    with neatpar.Pool(1) as pool:
        ref = pool.share(kernel)
        assert pool.apply_async(kernel_digest, (ref,)).get(60) == sent
        obs = np.random.default_rng(0).normal(size=(4, 2))                         # observation chunks
        copy = obs.copy()
        exchange = StepExchange.create(4, 2, 1, 1)
        try:
            exchange.publish(1, obs, np.arange(4), np.arange(4), np.zeros(4, np.uint8))
            received = pool.apply_async(read_chunk, (exchange.spec, 1)).get(60)
        finally:
            exchange.close()
    assert kernel_digest(kernel) == sent and np.array_equal(obs, copy)
    assert received == (copy.tobytes(), np.arange(4, dtype=np.int64).tobytes())


def keep(value):
    return value


def test_live_handles_are_refused_with_their_name():
    with simulator("ball", args=["--agents", "2"]) as env, neatpar.Pool(1) as pool:
        with pytest.raises(LiveHandleError, match=r"args\[0\]\['env'\] \(Unity environment connection"):
            pool.apply_async(keep, ({"env": env},))
    bridge = SimulatorBridge(os.path.join(BUILDS, "ball"))
    with pytest.raises(LiveHandleError, match="SimulatorBridge cannot be pickled"):
        pickle.dumps(bridge)
    inference = PoolInference(1)
    try:
        with pytest.raises(LiveHandleError, match="neatpar Pool cannot be sent"):
            pickle.dumps(inference.pool)
    finally:
        inference.close()


# ---------------------------------------------------------------- stale reads through shared memory

def test_stale_reads_happen_without_a_step_check_and_never_through_the_exchange():
    result = run_marked([os.path.join(EXAMPLES, "stale_shared_memory_reads.py"), "--steps", "200"])[0]
    assert result.returncode == 0, result.stderr
    unchecked_way, neatpar_way = result.stdout.strip().splitlines()
    assert unchecked_way.startswith("unchecked shared arrays: ")
    assert int(unchecked_way.split(": ")[1].split()[0]) > 0
    assert neatpar_way.startswith("neatpar's way: 0 stale")
