"""Env hosts on a real multi-node Ray cluster (ray.cluster_utils.Cluster: a head without CPUs and
two worker nodes of one CPU each, as separate raylets on this machine): a node lost on a full
cluster costs one rerun of its part, and no generation waits for an actor that cannot be placed."""
import os
import time

import pytest

os.environ.setdefault("RAY_AUTH_MODE", "disabled")  # before Ray is imported: no token file for test clusters
ray = pytest.importorskip("ray")
from ray.cluster_utils import Cluster  # noqa: E402

from support.processes import wait_until  # noqa: E402
from support.runs import fitnesses, probe_hosts  # noqa: E402
from neatpar.run.ray_hosts import PLACEMENT_NOTE_SECONDS  # noqa: E402

pytestmark = pytest.mark.slow

TESTS = os.path.dirname(os.path.abspath(__file__))
GENERATIONS = 6


@pytest.fixture(scope="module")
def cluster():
    cluster = Cluster(initialize_head=True, head_node_args={"num_cpus": 0, "include_dashboard": False})
    workers = [cluster.add_node(num_cpus=1) for _ in range(2)]
    cluster.wait_for_nodes()
    ray.init(address=cluster.address, include_dashboard=False, configure_logging=False,
             runtime_env={"env_vars": {"PYTHONPATH": TESTS}})
    yield cluster, workers
    ray.shutdown()
    cluster.shutdown()


def reference(tmp_path) -> list[list[float]]:
    """Each generation's fitnesses of the same population on two local env hosts."""
    evaluator, config, pairs = probe_hosts(tmp_path / "local", agents=4, pop=8, backend="local", timeout=20)
    try:
        out = []
        for _ in range(GENERATIONS):
            evaluator.evaluate(pairs, config)
            out.append(fitnesses(pairs))
        return out
    finally:
        evaluator.close()


def test_a_node_lost_on_a_full_cluster_costs_one_rerun_and_no_wait(tmp_path, cluster, caplog):
    head, (first, second) = cluster
    (tmp_path / "local").mkdir()
    expected = reference(tmp_path)
    evaluator, config, pairs = probe_hosts(tmp_path, agents=4, pop=8, backend="ray", timeout=20)
    added = None
    with caplog.at_level("WARNING", logger="neatpar"):
        try:
            evaluator.evaluate(pairs, config)
            hosts = evaluator._hosts
            assert fitnesses(pairs) == expected[0] and len(hosts.actor_locations()) == 2
            head.remove_node(second)  # its actor dies; its replacement finds no free CPU anywhere
            for generation in range(1, GENERATIONS):
                evaluator.evaluate(pairs, config)
                assert fitnesses(pairs) == expected[generation]  # the same results on one host
                assert evaluator.last_stats.seconds < hosts.timeout  # never a wait for the unplaced actor
                if generation < GENERATIONS - 1:
                    time.sleep(PLACEMENT_NOTE_SECONDS / (GENERATIONS - 2))
            assert evaluator._runner.lost == 1 and len(hosts._placing) == 1
            added = head.add_node(num_cpus=1)  # room again: the replacement is placed and takes parts
            evaluator.evaluate(pairs, config)

            def all_placed():
                hosts.wait(0.5)
                return not hosts._placing
            wait_until(all_placed, 60, "the replacement to be placed on the new node")
            assert len(hosts.actor_locations()) == 2
        finally:
            evaluator.close()
            if added is not None:
                head.remove_node(added)  # the module's cluster keeps the nodes it started with
    warnings = [r.getMessage() for r in caplog.records]
    assert len([w for w in warnings if "env host lost" in w]) == 1, warnings   # the real loss, once
    assert not [w for w in warnings if "made no progress" in w], warnings     # no actor taken for hung
    placed = [w for w in warnings if "not placed on the Ray cluster" in w]
    assert len(placed) == 1 and "generations run on the 1 placed host(s)" in placed[0], warnings
