"""EnvEvaluator (neatpar/episodes/env_evaluator.py) on the simulator builds: made from ready-made settings
or a config file, checked before anything starts, a run's start (`begin_run`) and the state a
checkpoint keeps (`run_state`), the champion as a frozen copy of the best genome so far, `play`,
its notes, and `close` / `kill` leaving nothing running."""
import pickle

import neat
import numpy as np
import pytest

import neatpar

from neatpar import ConfigError, LiveHandleError
from neatpar import settings as run_config
from neatpar.envs.unity.bridge import Display
from neatpar.episodes.env_evaluator import EnvEvaluator, UnityEvaluator
from neatpar.episodes.validation import ValidationState
from neatpar.run_state import RunState
from neatpar.generation_stats import GenerationStats
from support.configs import ball_cfg
from support.simulators import free_worker_id
from support.processes import child_pids, pid_alive, wait_gone


def ball_run(tmp_path, **over):
    """The small ball run's neat config, settings and first generation (one simulator, in process)."""
    config, settings = run_config.load(ball_cfg(tmp_path, **over))
    return config, settings, list(neat.Population(config, seed=5).population.items())


def test_from_config_takes_envs_and_refuses_unknown_settings(tmp_path):
    path = ball_cfg(tmp_path)
    with UnityEvaluator.from_config(path, envs=3) as evaluator:
        assert evaluator.hosted and evaluator.settings.envs == 3
    with pytest.raises(ConfigError, match="simulators is not a setting"):
        UnityEvaluator.from_config(path, simulators=3)
    with pytest.raises(ConfigError, match=r"envs=0 is out of range: use an integer from 1 to 1024"):
        UnityEvaluator.from_config(path, envs=0)


def test_from_settings_takes_them_as_they_are_and_starts_nothing(tmp_path):
    config, settings, _ = ball_run(tmp_path)
    before = child_pids()
    with EnvEvaluator.from_settings(settings, log_folder=str(tmp_path / "logs"), configs={"other": config}) as ev:
        assert ev.settings is settings and ev.log_folder == str(tmp_path / "logs")
        assert ev.configs == {"other": config} and not ev.hosted
        assert ev._environment is None and child_pids() == before
        assert ev.run_state() == RunState(None, 0, None, {"search": "fitness", "best": None}, ValidationState())
    with pytest.raises(ConfigError, match=r"simulator build .*nothing not found"):
        EnvEvaluator.from_settings(settings.with_changes(env=str(tmp_path / "nothing")))


def test_the_champion_is_a_frozen_copy_of_the_best_genome_so_far(tmp_path):
    config, settings, pairs = ball_run(tmp_path)
    with EnvEvaluator.from_settings(settings) as evaluator:
        evaluator.evaluate(pairs, config)
        best = max((g for _, g in pairs), key=lambda g: g.fitness)
        champion = evaluator.champion
        assert champion is not best and (champion.key, champion.fitness) == (best.key, best.fitness)
        assert sorted(evaluator.episode_returns) == sorted(k for k, _ in pairs)
        best.fitness = champion.fitness + 100.0  # the population's genome changes; the champion does not
        assert evaluator.champion.fitness < best.fitness
        worse = [(key, genome) for key, genome in pairs if genome is not best]
        for _, genome in worse:
            genome.fitness = None
        evaluator.evaluate(worse, config)
        assert evaluator.champion is champion or evaluator.champion.fitness > champion.fitness
        assert evaluator.run_state().generation == 2


def test_a_continued_run_starts_from_the_state_a_checkpoint_kept(tmp_path):
    """begin_run gives the log folder, the progress callback and the state to continue from: the
    champion and generation count carry on as if the run had not stopped."""
    config, settings, pairs = ball_run(tmp_path)
    with EnvEvaluator.from_settings(settings) as first:
        first.evaluate(pairs, config)
        kept = first.run_state()
    assert kept.generation == 1 and kept.champion is first.champion and kept.selfplay is None
    unbeatable = pickle.loads(pickle.dumps(kept.champion))
    unbeatable.fitness = 1e9
    seen = []
    with EnvEvaluator.from_settings(settings) as evaluator:
        evaluator.begin_run(str(tmp_path / "logs"), seen.append, RunState(unbeatable, kept.generation))
        evaluator.evaluate(pairs, config)
        state = evaluator.run_state()
        # still the champion it was given
        assert (state.champion, state.generation, state.selfplay) == (unbeatable, 2, None)
        assert state.search["best"]["fitness"] == evaluator.fitness[state.search["best"]["genome"].key]
        assert seen and all(isinstance(stats, GenerationStats) for stats in seen)
        assert seen[-1].episodes <= evaluator.last_stats.episodes == len(pairs)
        assert list((tmp_path / "logs").glob("Player-*.log"))  # the simulator logged where begin_run said


def test_play_gives_the_episodes_asked_for_and_counts_no_generation(tmp_path):
    config, settings, pairs = ball_run(tmp_path)
    genome = pairs[0][1]
    with EnvEvaluator.from_settings(settings) as evaluator:
        returns = evaluator.play(genome, config, episodes=3)
        assert len(returns) == 3 and evaluator.last_stats.episodes == 3
        assert evaluator.run_state() == RunState(None, 0, None, {"search": "fitness", "best": None},
                                                 ValidationState())
        assert evaluator.play(genome, config, episodes=3) == returns  # seeded: the same episodes again


def test_play_episodes_plays_play_s_episodes_on_an_environment_given_and_leaves_the_evaluator_alone(tmp_path):
    config, settings, pairs = ball_run(tmp_path)
    genome = pairs[0][1]
    with EnvEvaluator.from_settings(settings) as evaluator, \
            EnvEvaluator.from_settings(settings) as other:
        returns = evaluator.play(genome, config, episodes=2)
        before = evaluator.last_stats
        again, stats = evaluator.play_episodes(genome, config, 2, environment=other.environment)
        assert again == returns and stats.episodes == 2 and stats is not before
        assert evaluator.last_stats is before and other.last_stats.episodes == 0


def test_a_display_opens_this_process_s_game_with_graphics(tmp_path):
    config, settings, _ = ball_run(tmp_path)
    with EnvEvaluator.from_settings(settings, display=Display(320, 240, 30)) as evaluator:
        assert evaluator.environment.bridge.display == Display(320, 240, 30)
        assert not evaluator.environment.bridge.no_graphics and not evaluator.environment.bridge.connected
    with EnvEvaluator.from_settings(settings) as evaluator:
        assert evaluator.environment.bridge.no_graphics


def test_close_and_kill_end_the_simulator_and_may_come_twice(tmp_path):
    config, settings, pairs = ball_run(tmp_path)
    for stop in ("close", "kill"):
        evaluator = EnvEvaluator.from_settings(settings)
        evaluator.evaluate(pairs, config)
        simulator = evaluator.environment.process_pid
        assert pid_alive(simulator)
        getattr(evaluator, stop)()
        assert not wait_gone([simulator]) and evaluator._environment is None
        getattr(evaluator, stop)()
        evaluator.close()


def test_an_evaluator_cannot_be_sent_to_another_process(tmp_path):
    _, settings, _ = ball_run(tmp_path)
    with EnvEvaluator.from_settings(settings) as evaluator:
        with pytest.raises(LiveHandleError, match="an EnvEvaluator cannot be pickled or sent to another process"):
            pickle.dumps(evaluator)


def test_the_notes_say_where_the_simulators_and_the_networks_run(tmp_path):
    _, settings, _ = ball_run(tmp_path)
    notes = {}
    for name, changes in {"one": {}, "hosts": {"envs": 3}, "ray": {"envs": 2, "backend": "ray"},
                          "pool": {"inference": "pool", "workers": 2}}.items():
        with EnvEvaluator.from_settings(settings.with_changes(**changes)) as evaluator:
            notes[name] = (evaluator.hosts_note, evaluator.inference_note)
    assert notes == {"one": ("simulator: 1, in the main process", "inference: inprocess"),
                     "hosts": ("simulators: 3, each in its own env host (local processes)", "inference: inprocess"),
                     "ray": ("simulators: 2, each in its own env host (Ray actors)", "inference: inprocess"),
                     "pool": ("simulator: 1, in the main process", "inference: pool (2 workers)")}


def maze_run(tmp_path, config_name="maze-novelty.cfg", **keys):
    from support.searches import maze_cfg
    neat_config, settings = run_config.load(maze_cfg(tmp_path, config_name, pop=12, steps=30,
                                                     worker_id=free_worker_id(), **keys))
    if settings.search == "map-elites":
        neat_config.reproduction_type = neatpar.MapElitesReproduction
    return neat_config, settings


def test_descriptors_come_from_the_game_s_observations_and_novelty_takes_fitness_s_place(tmp_path):
    """The runner reads each scored episode's final (and mean) observation values from the game; a
    genome's descriptor is the robot's position as the maze, driven in process, puts it. genome.fitness
    becomes its novelty, the true fitness is kept, the champion is the best by it, and RunState
    carries the search."""
    from support.searches import maze_descriptors
    config, settings = maze_run(tmp_path, novelty_k=3)
    pairs = list(neat.Population(config, seed=2).population.items())
    expected = maze_descriptors(pairs, config, steps=30)
    with EnvEvaluator.from_settings(settings) as evaluator:
        evaluator.evaluate(pairs, config)
        described = evaluator.last_stats.descriptors
        for i, (key, genome) in enumerate(pairs):
            assert len(described[i]) == 1 and np.array_equal(described[i][0], expected[key][1]), key
            assert evaluator.fitness[key] == expected[key][0] and genome.fitness == evaluator.search.novelty[key]
        best = max(pairs, key=lambda pair: expected[pair[0]][0])
        assert evaluator.champion.key == best[0] and evaluator.champion.fitness == expected[best[0]][0]
        stats, state = evaluator.search_stats, evaluator.run_state()
        assert stats.archive_added == stats.archive_size > 0 and stats.best_fitness == expected[best[0]][0]
        assert state.search["search"] == "novelty" and len(state.search["archive"]["descriptors"]) == stats.archive_size
    config, settings = maze_run(tmp_path, descriptor="mean_observation[10:12]", novelty_k=3)
    with EnvEvaluator.from_settings(settings) as evaluator:
        evaluator.evaluate(pairs, config)
        for i, (key, _) in enumerate(pairs):
            assert np.allclose(evaluator.last_stats.descriptors[i][0], expected[key][2], rtol=0, atol=1e-12), key


def test_map_elites_on_env_hosts_fills_the_archive_the_pool_fills_in_this_process(tmp_path):
    """The same seed gives the same archive with the networks on the pool (inference = pool) and on
    two env hosts (envs = 2), whose parts' descriptors are put together by genome."""
    archives = []
    for keys in ({"inference": "pool", "workers": 2}, {"envs": 2}):
        config, settings = maze_run(tmp_path, "maze-map-elites.cfg", **keys)
        population = neat.Population(config, seed=3)
        with EnvEvaluator.from_settings(settings) as evaluator:
            evaluator.attach(population)
            population.run(evaluator.evaluate, 2)
            assert evaluator.hosted == ("envs" in keys)
            archive = evaluator.search.archive
            archives.append({cell: (e.genome.key, e.fitness, e.descriptor.tolist())
                             for cell, e in archive.cells.items()})
            stats = evaluator.search_stats
            assert stats.coverage == len(archive.cells) / 100 and stats.generation == 1
    assert archives[0] == archives[1] and len(archives[0]) > 3


def test_a_descriptor_outside_the_observation_stops_the_first_generation_naming_the_behavior(tmp_path):
    config, settings = maze_run(tmp_path, descriptor="final_observation[10:14]")
    pairs = list(neat.Population(config, seed=2).population.items())
    with EnvEvaluator.from_settings(settings) as evaluator:
        with pytest.raises(ConfigError, match=r"^behavior 'Maze\?team=0': descriptor = final_observation\[10:14\] "
                                              r"reaches past the end of an observation of 12 values \(indices 0-11\): "
                                              r"give indices from 0 to 12 \(e.g. final_observation\[10:12\]\)$"):
            evaluator.evaluate(pairs, config)
