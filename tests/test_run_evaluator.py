"""EnvEvaluator (neatpar/run/evaluator.py) on the simulator builds: made from ready-made settings
or a config file, checked before anything starts, a run's start (`begin_run`) and the state a
checkpoint keeps (`run_state`), the champion as a frozen copy of the best genome so far, `play`,
its notes, and `close` / `kill` leaving nothing running."""
import pickle

import neat
import pytest

from neatpar import ConfigError, LiveHandleError
from neatpar import settings as run_config
from neatpar.envs.unity.bridge import Display
from neatpar.run.evaluator import EnvEvaluator, UnityEvaluator
from neatpar.types.run_state import RunState
from neatpar.types.stats import GenerationStats
from support.configs import ball_cfg
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
        assert ev.run_state() == RunState(None, 0, None)
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
        assert evaluator.run_state() == RunState(unbeatable, 2, None)  # still the champion it was given
        assert seen and all(isinstance(stats, GenerationStats) for stats in seen)
        assert seen[-1].episodes <= evaluator.last_stats.episodes == len(pairs)
        assert list((tmp_path / "logs").glob("Player-*.log"))  # the simulator logged where begin_run said


def test_play_gives_the_episodes_asked_for_and_counts_no_generation(tmp_path):
    config, settings, pairs = ball_run(tmp_path)
    genome = pairs[0][1]
    with EnvEvaluator.from_settings(settings) as evaluator:
        returns = evaluator.play(genome, config, episodes=3)
        assert len(returns) == 3 and evaluator.last_stats.episodes == 3
        assert evaluator.run_state() == RunState(None, 0, None)
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
