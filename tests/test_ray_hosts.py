"""Env hosts as Ray actors (neatpar/episodes/ray_hosts.py) on a real local Ray cluster (2 CPUs, token
authentication off): one simulator per actor, a killed or hung actor replaced and its part run
again, hosts refused beyond the cluster's CPUs, and the same results as local env hosts."""
import os
import signal
import subprocess
import sys
import threading
import time

import neat
import pytest

from support.configs import ball_cfg, hover_cfg
from support.duels import duel_cfg
from support.marks import ONE_RAY_AT_A_TIME
from support.paths import ROOT
from support.processes import cmdline, wait_gone, wait_until
from support.rays import local_cluster, ray
from support.runs import Run, evaluator_and_population, fitnesses, neatpar_cli, probe_hosts, stats_rows, undisturbed
from neatpar import ConfigError
from neatpar import settings as run_config
from neatpar.episodes.hosts import HostSetup
from neatpar.episodes.ray_hosts import RayHosts

pytestmark = [pytest.mark.slow, ONE_RAY_AT_A_TIME]


@pytest.fixture(scope="module", autouse=True)
def cluster():
    """One local Ray cluster for the module; its workers import the tests' helper modules."""
    with local_cluster():
        yield


def ball_setup(tmp_path, envs):
    _, settings = run_config.load(ball_cfg(tmp_path, envs=envs, backend="ray"))
    return HostSetup(settings, str(tmp_path / "logs"))


def test_more_env_hosts_than_the_cluster_has_cpus_is_a_one_line_error_that_leaves_the_cluster_up(tmp_path):
    with pytest.raises(ConfigError, match=r"^envs = 3 env hosts need a CPU each but the Ray cluster has 2: "
                                          r"lower --envs, or add nodes to the cluster$"):
        RayHosts(ball_setup(tmp_path, 3), 3)
    assert ray.is_initialized()  # neatpar joined this cluster: it does not stop it


def test_actors_take_parts_once_placed_and_launch_no_simulator_before_a_part_needs_one(tmp_path):
    hosts = RayHosts(ball_setup(tmp_path, 2), 2)
    try:
        assert hosts.free() == 0  # none is placed before its ready call answers
        deadline = time.monotonic() + 60
        while hosts.free() < 2:
            assert time.monotonic() < deadline, "the actors were not placed within 60 s"
            assert hosts.wait(0.5) == []  # no part runs: nothing finishes
        locations = hosts.actor_locations()
        assert len({pid for _, pid, _ in locations}) == 2 and [sim for _, _, sim in locations] == [None, None]
        assert hosts.progress() == {}
    finally:
        hosts.close()
    assert not wait_gone([pid for _, pid, _ in locations], 30)


def short_evolution(tmp_path, backend):
    """Three generations of neat-python's own loop on env hosts: (best, mean) per generation,
    and the actors' (node, PID, simulator PID) while they ran."""
    evaluator, config, _ = evaluator_and_population(tmp_path, name=f"{backend}.cfg", backend=backend)
    population = neat.Population(config, seed=5)
    statistics = neat.StatisticsReporter()
    population.add_reporter(statistics)
    try:
        population.run(evaluator.evaluate, 3)
        assert evaluator._environment is None
        locations = evaluator._hosts.actor_locations() if backend == "ray" else []
    finally:
        evaluator.close()
    curve = list(zip([g.fitness for g in statistics.most_fit_genomes], statistics.get_fitness_mean()))
    return curve, locations


def test_a_short_evolution_on_ray_actors_repeats_and_matches_local_hosts(tmp_path):
    first, locations = short_evolution(tmp_path, "ray")
    assert len({pid for _, pid, _ in locations}) == 2 and all(sim for _, _, sim in locations)
    assert not wait_gone([sim for _, _, sim in locations] + [pid for _, pid, _ in locations], 10)
    second, _ = short_evolution(tmp_path, "ray")
    local, _ = short_evolution(tmp_path, "local")
    assert len(first) == 3 and first == second == local


def league_generations(tmp_path, backend):
    """Two self-play generations on the duel build with two env hosts: each generation's fitnesses,
    then the league's members (genome keys, ratings) and the population's best's rating."""
    from neatpar import settings as run_config
    from neatpar.episodes.env_evaluator import UnityEvaluator
    config, settings = run_config.load(duel_cfg(tmp_path, f"duel-{backend}.cfg", envs=2, backend=backend))
    pairs = list(neat.Population(config, seed=4).population.items())
    with UnityEvaluator.from_settings(settings) as evaluator:
        seen = []
        for _ in range(2):
            evaluator.evaluate(pairs, config)
            seen.append(fitnesses(pairs))
        league = evaluator.selfplay.leagues["Duel?team=0"]
        return seen, [(m.genome.key, m.rating) for m in league.members], league.rating


def test_a_league_on_ray_actors_matches_local_hosts(tmp_path):
    on_ray, local = league_generations(tmp_path, "ray"), league_generations(tmp_path, "local")
    assert on_ray == local
    assert len(on_ray[1]) == 3 and len(set(on_ray[0][0])) > 1


def test_no_agent_of_a_ray_actor_sits_idle_while_genomes_wait(tmp_path):
    """As with local hosts: one part per actor fills its simulator's agents for the whole
    generation (8 genomes, 2 actors of 4 agents, episodes of exactly 5 decisions)."""
    evaluator, config, pairs = probe_hosts(tmp_path, agents=4, pop=8, backend="ray")
    try:
        evaluator.evaluate(pairs, config)
        assert evaluator._hosts.agents() == 4
        assert [len(p) for p in evaluator._runner.parts] == [4, 4]
        stats = evaluator.last_stats
        assert stats.episodes == 8 and stats.agent_steps == stats.scored_steps == 8 * 5
    finally:
        evaluator.close()


def test_a_killed_actor_is_replaced_and_its_part_runs_again(tmp_path):
    expected = undisturbed(tmp_path, backend="ray")
    evaluator, config, pairs = evaluator_and_population(tmp_path, name="faulty.cfg", backend="ray")
    try:
        evaluator.evaluate(pairs, config)
        # On a busy machine the second actor may still be placing: the first then played both parts.
        wait_until(lambda: len(evaluator._hosts.actor_locations()) == 2, 60, "both actors to be placed")
        _, victim, _ = evaluator._hosts.actor_locations()[1]
        os.kill(victim, signal.SIGSTOP)  # its next part cannot finish until it is killed
        killer = threading.Timer(1.0, os.kill, (victim, signal.SIGKILL))
        killer.start()
        evaluator.evaluate(pairs, config)
        killer.join()
        assert fitnesses(pairs) == expected and evaluator._runner.lost == 1
        assert victim not in [pid for _, pid, _ in evaluator._hosts.actor_locations()]
    finally:
        evaluator.close()


def test_a_hung_actor_is_killed_after_the_timeout_and_replaced(tmp_path):
    evaluator, config, pairs = evaluator_and_population(tmp_path, backend="ray")
    try:
        evaluator.evaluate(pairs, config)
        _, victim, _ = evaluator._hosts.actor_locations()[0]
        os.kill(victim, signal.SIGSTOP)
        for _, genome in pairs:
            genome.fitness = None  # so that the second generation must give every genome its own
        started = time.monotonic()
        evaluator.evaluate(pairs, config)
        assert time.monotonic() - started >= evaluator._hosts.timeout
        assert evaluator._runner.lost == 1
        assert not wait_gone([victim], 30)  # Ray ends a stopped actor's process after its own grace period
        assert all(g.fitness is not None for _, g in pairs)
    finally:
        evaluator.close()


def test_evolve_with_backend_ray_matches_local_hosts_and_leaves_nothing(tmp_path):
    config = ball_cfg(tmp_path, generations=2, envs=2)
    local = neatpar_cli("evolve", "--config", config, "--out", str(tmp_path / "local"))
    assert local.returncode == 0, local.stderr
    run = Run(config, tmp_path / "ray", "--backend", "ray")  # starts and stops its own Ray instance
    code, err = run.finish(timeout=300)
    assert code == 0, err
    assert "simulators: 2, each in its own env host (Ray actors)" in "".join(run.lines)
    assert stats_rows(tmp_path / "ray") == stats_rows(tmp_path / "local")
    run.assert_clean()  # the Ray instance's processes carry the run's mark too


def test_a_ctrnn_run_on_ray_actors_matches_local_hosts(tmp_path):
    """network = ctrnn on two Ray actors: the CTRNN kernels travel to the actors and give the run
    that local env hosts give."""
    config = hover_cfg(tmp_path, generations=2, envs=2)
    local = neatpar_cli("evolve", "--config", config, "--out", str(tmp_path / "local"))
    assert local.returncode == 0, local.stderr
    run = Run(config, tmp_path / "ray", "--backend", "ray")
    code, err = run.finish(timeout=300)
    assert code == 0, err
    assert stats_rows(tmp_path / "ray") == stats_rows(tmp_path / "local")


def test_backend_ray_without_ray_installed_says_what_to_install(tmp_path):
    code = ("import sys; sys.modules['ray'] = None; from neatpar.cli import main; "
            f"sys.exit(main(['evolve', '--config', {ball_cfg(tmp_path)!r}, '--backend', 'ray']))")
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, timeout=120)
    assert result.returncode == 2
    assert result.stderr.strip() == ("neatpar: error: the Ray backend needs Ray, which is not installed: "
                                     "pip install 'neatpar[ray]' (installs ray==2.60.0)")


def test_quiet_on_ray_prints_no_forwarded_ray_line_even_when_an_actor_dies(tmp_path):
    """Ray forwards its workers' output and its raylets' errors ("(raylet) A worker died ...") to
    the driver's terminal; --quiet keeps to the run folder and the winner."""
    out = tmp_path / "run"
    # a generation takes about 0.1 s here: 38 more leave the kill seconds to land before the run ends
    config = ball_cfg(tmp_path, generations=40, interval=2, envs=2, env_args="--agents 4 --max-steps 60", max_steps=60)
    run = Run(config, out, "--backend", "ray", "--quiet")
    wait_until(lambda: (out / "checkpoints" / "checkpoint-2.gz").exists(), 240, "two generations")
    actors = [p for p in run.family() if "ray::EnvHostActor" in cmdline(p)]
    assert len(actors) == 2
    os.kill(actors[0], signal.SIGKILL)
    assert not (out / "checkpoints" / "checkpoint-38.gz").exists(), "the run ended before the kill: lengthen it"
    code, err = run.finish(timeout=300)
    assert code == 0, err
    assert "env host lost" in err  # neatpar's own warning says what happened, once
    assert len(run.lines) == 2 and run.lines[0].startswith("neatpar evolve: ") and run.lines[1].startswith("winner: ")
    assert "(raylet)" not in err and "EnvHostActor pid=" not in err
    run.assert_clean()



def test_descriptors_travel_back_from_ray_actors_as_the_maze_gives_them(tmp_path):
    """A search on Ray actors: each genome's descriptor (the robot's final position) comes back
    with its part (episodes/hosts.py puts the parts together by genome), as the maze driven in process
    gives it, and fills the MAP-Elites archive."""
    import numpy as np
    from neatpar.episodes.env_evaluator import EnvEvaluator
    from support.searches import maze_cfg, maze_descriptors
    config, settings = run_config.load(maze_cfg(tmp_path, pop=12, steps=20, envs=2, backend="ray"))
    pairs = list(neat.Population(config, seed=5).population.items())
    expected = maze_descriptors(pairs, config, steps=20)
    with EnvEvaluator.from_settings(settings) as evaluator:
        evaluator.evaluate(pairs, config)
        for i, (key, _) in enumerate(pairs):
            assert np.array_equal(evaluator.last_stats.descriptors[i][0], expected[key][1]), key
        assert evaluator.search_stats.archive_size == len(evaluator.search.archive.cells) > 1
