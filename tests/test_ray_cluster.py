"""Tests of parallel/ray_cluster.py, joining a Ray cluster, and env hosts on a real multi-node one
(ray.cluster_utils.Cluster: a head without CPUs and two worker nodes of one CPU each, as separate
raylets on this machine): joining and leaving it draws nothing from `random`, Ray missing is an
error that says what to install, a node lost on a full cluster costs one rerun of its part, and no
generation waits for an actor that cannot be placed."""
import os
import pickle
import random
import subprocess
import sys
import time

import pytest

os.environ.setdefault("RAY_AUTH_MODE", "disabled")  # before Ray is imported: no token file for test clusters
ray = pytest.importorskip("ray")
from ray.cluster_utils import Cluster  # noqa: E402

from support.marks import ONE_RAY_AT_A_TIME  # noqa: E402
from support.paths import ROOT  # noqa: E402
from support.processes import wait_until  # noqa: E402
from support.runs import fitnesses, probe_hosts  # noqa: E402
from neatpar.errors import ConfigError  # noqa: E402
from neatpar.parallel import ray_cluster  # noqa: E402
from neatpar.episodes.ray_hosts import PLACEMENT_NOTE_SECONDS  # noqa: E402

pytestmark = [pytest.mark.slow, ONE_RAY_AT_A_TIME]

TESTS = os.path.dirname(os.path.abspath(__file__))
GENERATIONS = 6


@pytest.fixture(scope="module")
def cluster():
    cluster = Cluster(initialize_head=True, head_node_args={"num_cpus": 0, "include_dashboard": False})
    workers = [cluster.add_node(num_cpus=1) for _ in range(2)]
    cluster.wait_for_nodes()
    join(cluster)
    yield cluster, workers
    ray.shutdown()
    cluster.shutdown()


def join(cluster) -> None:
    """This process joins `cluster` as a driver whose Ray workers import the tests' support package."""
    ray.init(address=cluster.address, include_dashboard=False, configure_logging=False,
             runtime_env={"env_vars": {"PYTHONPATH": TESTS}})


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


def all_placed(hosts) -> bool:
    """Whether every actor is placed, once the actors' answers of the next half second are in."""
    hosts.wait(0.5)
    return not hosts._placing


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
            assert fitnesses(pairs) == expected[0]
            # A generation waits for no actor: on a busy machine the first one may end before both
            # are placed. The cluster is full once they are.
            wait_until(lambda: all_placed(hosts), 60, "both actors to be placed")
            assert len(hosts.actor_locations()) == 2
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
            wait_until(lambda: all_placed(hosts), 60, "the replacement to be placed on the new node")
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


def test_joining_and_leaving_a_cluster_draws_nothing_from_random(cluster):
    """neat-python's reproduction draws from `random`: a seeded run must not depend on the backend."""
    head, _ = cluster
    ray.shutdown()  # this driver leaves; the cluster runs on
    try:
        random.seed(7)
        before = random.getstate()
        assert ray_cluster.connect(head.address) == (ray, True) and ray.is_initialized()  # initialised here
        assert ray_cluster.connect(None) == (ray, False)  # already joined: nothing to do, nothing to shut down
        ray_cluster.shutdown(ray)
        assert not ray.is_initialized() and random.getstate() == before
    finally:
        if not ray.is_initialized():
            join(head)


def test_ray_missing_is_a_config_error_that_says_what_to_install():
    code = ("import sys; sys.modules['ray'] = None\n"
            "from neatpar.parallel.ray_cluster import require_ray\n"
            "from neatpar.errors import ConfigError\n"
            "try:\n    require_ray()\nexcept ConfigError as error:\n    print(error)\n")
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, timeout=60)
    assert result.returncode == 0, result.stderr
    assert result.stdout == (f"the Ray backend needs Ray, which is not installed: pip install 'neatpar[ray]' "
                             f"(installs {ray_cluster.RAY_PIN})\n")
    assert ray_cluster.RAY_PIN == f"ray=={ray.__version__}"  # the pin names the Ray the tests run


def test_worker_logs_are_silenced_only_inside_the_block():
    import ray._private.worker as ray_worker
    saved = ray_worker._worker_logs_enabled
    with pytest.raises(ConfigError), ray_cluster.worker_logs_silenced():
        assert ray_worker._worker_logs_enabled is False
        raise ConfigError("a failure inside the block")
    assert ray_worker._worker_logs_enabled is saved


def test_a_config_is_unpickled_once_while_its_bytes_stay_the_same():
    first, second = pickle.dumps({"pop_size": 8}), pickle.dumps({"pop_size": 9})
    kept = ray_cluster.config_from(first)
    assert kept == {"pop_size": 8} and ray_cluster.config_from(first) is kept
    assert ray_cluster.config_from(second) == {"pop_size": 9}
    assert ray_cluster.config_from(first) is not kept and ray_cluster.config_from(first) == kept
