"""The sequenced shared-memory exchange (neatpar/episodes/exchange.py): every read belongs to the step it
claims."""
import random
import time

import numpy as np
import pytest

import neatpar
from neatpar.errors import StaleStepError
from neatpar.episodes.exchange import StepExchange
from support.processes import shm_segments

STEPS = 100_000  # the exchange's stress test: at least 100,000 sequenced steps


def echo(spec, step, start, end, worker, delay_seed):
    """A worker: read the step (checked), wait a random moment, answer with step-derived actions."""
    from neatpar.episodes import inference
    exchange = inference._exchange(spec)
    obs, index, rows, reset = exchange.read(step, start, end)
    if not np.all(obs[:, 0] == step):
        raise AssertionError(f"step {step}: worker read observations of step(s) {set(obs[:, 0].tolist())}")
    rng = random.Random(delay_seed)
    if rng.random() < 0.02:
        time.sleep(rng.random() * 2e-4)
    exchange.write(step, worker, start, np.full((end - start, 2), float(step)))
    return step


@pytest.mark.slow
def test_stress_every_read_belongs_to_its_step():
    exchange = StepExchange.create(capacity=8, inputs=3, outputs=2, workers=2)
    name = exchange.spec["name"]
    rng = random.Random(1)
    try:
        with neatpar.Pool(2) as pool:
            for step in range(1, STEPS + 1):
                obs = np.full((8, 3), float(step))
                exchange.publish(step, obs, np.zeros(8, np.int64), np.arange(8), np.zeros(8, np.uint8))
                results = [pool.apply_async(echo, (exchange.spec, step, 4 * w, 4 * w + 4, w, rng.random()), worker=w)
                           for w in (0, 1)]
                if rng.random() < 0.02:
                    time.sleep(rng.random() * 2e-4)
                assert [r.get(30) for r in results] == [step, step]
                actions = exchange.collect(step, [0, 1], 8)
                assert np.all(actions == step), f"step {step}: read actions of {set(actions.ravel().tolist())}"
    finally:
        exchange.close()
    assert name not in shm_segments()


def test_without_the_step_check_stale_reads_happen_and_the_check_catches_each():
    """A racy reader: the main process reads the workers' output without waiting for its stamp. Stale data does get read; and every stale read is one the stamp check refuses
    (the stamp is read first and the worker writes it after the actions)."""
    exchange = StepExchange.create(capacity=4, inputs=3, outputs=2, workers=1)
    stale = slipped_through = 0
    try:
        with neatpar.Pool(1) as pool:
            for step in range(1, 3001):
                exchange.publish(step, np.full((4, 3), float(step)), np.zeros(4, np.int64), np.arange(4),
                                 np.zeros(4, np.uint8))
                result = pool.apply_async(echo, (exchange.spec, step, 0, 4, 0, 0.5))
                stamp = int(exchange.arrays["stamps"][0])           # no waiting
                unchecked = exchange.arrays["actions"][:4].copy()
                if not np.all(unchecked == step):
                    stale += 1
                    slipped_through += stamp == step
                result.get(30)
    finally:
        exchange.close()
    assert stale > 0, "the racy reader never saw stale data: the test could not catch a stale read"
    assert slipped_through == 0


def test_worker_refuses_a_buffer_of_another_step():
    exchange = StepExchange.create(capacity=2, inputs=1, outputs=1, workers=1)
    try:
        exchange.publish(7, np.zeros((2, 1)), np.zeros(2, np.int64), np.arange(2), np.zeros(2, np.uint8))
        with pytest.raises(StaleStepError, match="step 8: the shared buffer holds step 7"):
            exchange.read(8, 0, 2)
        with pytest.raises(StaleStepError, match="step 7: actions of worker"):
            exchange.collect(7, [0], 2)
    finally:
        exchange.close()


def test_segments_are_unlinked_on_close():
    exchange = StepExchange.create(capacity=2, inputs=1, outputs=1, workers=1)
    name = exchange.spec["name"]
    assert name in shm_segments()
    exchange.close()
    exchange.close()
    assert name not in shm_segments()
