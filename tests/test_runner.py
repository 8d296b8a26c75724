"""The episode runner (neatpar/episodes/runner.py), through UnityEvaluator, on the simulator builds through the
real mlagents-envs."""
import dataclasses
import os

import neat
import numpy as np
import pytest

from neatpar import settings as run_config
from neatpar.record.genomes import save_genome_json
from neatpar.episodes.env_evaluator import UnityEvaluator
from neatpar.episodes.runner import EpisodeRunner
from support.configs import write_config
from support.paths import BALL, BUILDS
from support.simulators import free_worker_id

TEAMS = os.path.join(BUILDS, "teams")


def ball_config(tmp_path, agents=4, pop=10, max_steps=20, episodes=1, **neatpar):
    section = {"env": BALL, "env_args": f"--agents {agents} --max-steps {max_steps}",
               "behaviors": "Ball3D?team=0: population", "max_steps": max_steps,
               "episodes_per_genome": episodes, "seed": 3, "worker_id": free_worker_id(), **neatpar}
    path = write_config(tmp_path, "ball.cfg", neatpar=section, pop_size=pop, num_inputs=8, num_outputs=2,
                        activation_options="tanh", activation_default="tanh")
    return run_config.load(path)


def first_generation(config, seed=5):
    return list(neat.Population(config, seed=seed).population.items())


def test_more_genomes_than_agents_take_turns(tmp_path):
    config, run = ball_config(tmp_path, agents=3, pop=10, max_steps=60, episodes=2)
    run = dataclasses.replace(run, env_args=run.env_args + ("--stats", "1"))
    genomes = first_generation(config)
    with UnityEvaluator.from_settings(run) as evaluator:
        evaluator.evaluate(genomes, config)
        returns = evaluator.episode_returns
        stats = evaluator.last_stats
        simulated = evaluator.last_stats.game.series["Environment/Cumulative Reward"].values
    assert sorted(returns) == sorted(k for k, _ in genomes)
    assert all(len(r) == 2 for r in returns.values())           # exactly episodes_per_genome each
    for key, genome in genomes:
        assert genome.fitness == pytest.approx(np.mean(returns[key]))
        for value in returns[key]:
            assert -1.0 - 1e-6 <= value <= 0.1 * 60 + 1e-6
    assert stats.episodes == 20
    # Every return the runner recorded is an episode the simulator itself counted (its Stats
    # channel), terminal reward included: rewards went to the genome that earned them.
    pool = sorted(simulated)
    for value in (r for rs in returns.values() for r in rs):
        match = min(pool, key=lambda v: abs(v - value))
        assert abs(match - value) < 1e-4
        pool.remove(match)


def test_runner_step_limit_cuts_episodes(tmp_path):
    # The simulator would run 1000 steps; the runner cuts each episode at 10.
    config, run = ball_config(tmp_path, agents=4, pop=4, max_steps=10)
    run = dataclasses.replace(run, env_args=("--agents", "4", "--max-steps", "1000"))
    genomes = first_generation(config)
    with UnityEvaluator.from_settings(run) as evaluator:
        evaluator.evaluate(genomes, config)
    assert all(g.fitness <= 1.0 + 1e-6 for _, g in genomes)


def test_same_seed_same_fitness(tmp_path):
    config, run = ball_config(tmp_path, agents=3, pop=8, max_steps=25)
    results = []
    for _ in range(2):
        genomes = first_generation(config)
        with UnityEvaluator.from_settings(run) as evaluator:
            evaluator.evaluate(genomes, config)
        results.append([g.fitness for _, g in genomes])
    assert results[0] == results[1]
    assert len(set(results[0])) > 1


def test_fitness_aggregate_option(tmp_path):
    config, run = ball_config(tmp_path, agents=4, pop=6, max_steps=12, episodes=3, fitness="min")
    genomes = first_generation(config)
    with UnityEvaluator.from_settings(run) as evaluator:
        evaluator.evaluate(genomes, config)
        for key, genome in genomes:
            assert genome.fitness == min(evaluator.episode_returns[key])


def teams_config(tmp_path, behaviors, pop=8, areas=3):
    section = {"env": TEAMS, "env_args": f"--areas {areas} --max-steps 30", "behaviors": behaviors,
               "max_steps": 30, "seed": 2, "worker_id": free_worker_id()}
    path = write_config(tmp_path, "teams.cfg", neatpar=section, pop_size=pop, num_inputs=8, num_outputs=7,
                        activation_options="tanh", activation_default="tanh")
    return run_config.load(path)


class BestSoFar(neat.reporting.BaseReporter):
    def __init__(self):
        self.best = None

    def post_evaluate(self, config, population, species, best_genome):
        top = max(g.fitness for g in population.values())
        self.best = top if self.best is None else max(self.best, top)


def test_two_teams_against_the_champion(tmp_path):
    config, run = teams_config(tmp_path, "Blue?team=0: population, Purple?team=1: champion")
    population = neat.Population(config, seed=4)
    tracker = BestSoFar()
    population.add_reporter(tracker)
    goals = 0
    with UnityEvaluator.from_settings(run) as evaluator:
        for _ in range(3):
            population.run(evaluator.evaluate, 1)
            returns = [r for rs in evaluator.episode_returns.values() for r in rs]
            assert len(returns) == 8  # only Blue's (population) episodes are scored
            goals += sum(abs(r) > 0.5 for r in returns)  # a win or a loss: group reward +-1
        assert evaluator.champion.fitness == tracker.best  # the best genome so far, frozen copy
    assert goals > 0


def test_fixed_opponent_from_a_genome_file(tmp_path):
    config, run = teams_config(tmp_path, "Blue?team=0: population, Purple?team=1: champion")
    genome = first_generation(config)[0][1]
    save_genome_json(genome, config, str(tmp_path / "opponent.json"))
    config, run = teams_config(tmp_path, "Blue?team=0: population, Purple?team=1: opponent.json")
    assert run.behaviors[1].role == "file"
    genomes = first_generation(config)
    with UnityEvaluator.from_settings(run) as evaluator:
        evaluator.evaluate(genomes, config)
    # The same opponent as the champion role's before there is a champion (the first genome):
    # the same game, the same fitnesses.
    champion_config, champion_run = teams_config(tmp_path, "Blue?team=0: population, Purple?team=1: champion")
    against_first = first_generation(champion_config)
    with UnityEvaluator.from_settings(champion_run) as evaluator:
        evaluator.evaluate(against_first, champion_config)
    assert [g.fitness for _, g in genomes] == [g.fitness for _, g in against_first]
    assert None not in [g.fitness for _, g in genomes]


def test_recurrent_networks_run(tmp_path):
    section = {"env": BALL, "env_args": "--agents 3 --max-steps 15", "behaviors": "Ball3D?team=0: population",
               "max_steps": 15, "network": "recurrent", "worker_id": free_worker_id()}
    path = write_config(tmp_path, "rec.cfg", neatpar=section, pop_size=6, num_inputs=8, num_outputs=2,
                        feed_forward="false", activation_options="tanh", activation_default="tanh")
    config, run = run_config.load(path)
    genomes = first_generation(config)
    for _, g in genomes:
        for _ in range(5):
            g.mutate(config.genome_config)
    with UnityEvaluator.from_settings(run) as evaluator:
        evaluator.evaluate(genomes, config)
    assert all(np.isfinite(g.fitness) for _, g in genomes)


@pytest.mark.parametrize("network", ["feedforward", "recurrent", "ctrnn"])
def test_every_kind_of_network_plays_from_a_camera(tmp_path, network):
    """A camera's image reaches the networks flattened (6 x 6 x 3 = 108 inputs): each kind plays a
    generation on the camera build, and the genomes, seeing differently, score differently."""
    memory = network != "feedforward"
    section = {"env": os.path.join(BUILDS, "camera"), "env_args": "--agents 4 --size 6 --max-steps 10",
               "behaviors": "Camera?team=0: population", "max_steps": 10, "network": network, "seed": 2,
               "worker_id": free_worker_id()}
    path = write_config(tmp_path, "camera.cfg", neatpar=section, pop_size=6, num_inputs=108, num_outputs=2,
                        activation_options="tanh", activation_default="tanh", feed_forward="false" if memory else "true",
                        num_hidden=1 if memory else 0, **(CTRNN_GENES if network == "ctrnn" else {}))
    config, run = run_config.load(path)
    genomes = first_generation(config)
    with UnityEvaluator.from_settings(run) as evaluator:
        evaluator.evaluate(genomes, config)
    fitness = [genome.fitness for _, genome in genomes]
    assert all(np.isfinite(fitness)) and len(set(fitness)) > 1


# ---------------------------------------------------------------- real-game behaviours, exact returns
#
# The probe build (neatpar_sim/probe.py) shows each way a real Unity game behaves and makes every
# return known in closed form: the observation is constant, and each execution of an action adds
# its value to the agent's reward (accumulated in float32, as C#'s float m_Reward). A feed-forward
# genome therefore plays the value v = its clipped output on that observation at every decision,
# and its episode return follows from the decisions it made (see the probe's docstring).

PROBE = os.path.join(BUILDS, "probe")
MODES = {"inprocess": {}, "pool": {"inference": "pool", "workers": 2}, "envs2": {"envs": 2}}


def probe_config(tmp_path, env_args, behaviors="Probe?team=0: population", pop=8, max_steps=20,
                 network="feedforward", discrete=0, **neatpar):
    section = {"env": PROBE, "env_args": env_args, "behaviors": behaviors, "max_steps": max_steps, "seed": 2,
               "worker_id": free_worker_id(), "timeout": 20, "network": network, **neatpar}
    memory = network != "feedforward"
    path = write_config(tmp_path, "probe.cfg", neatpar=section, pop_size=pop, num_inputs=4,
                        num_outputs=discrete or 1, activation_options="tanh", activation_default="tanh",
                        feed_forward="false" if memory else "true", num_hidden=1 if memory else 0,
                        **(CTRNN_GENES if network == "ctrnn" else {}))
    return run_config.load(path)


# Time constants that differ from node to node (neat-python's default is 1.0 for every node).
CTRNN_GENES = dict(time_constant_init_mean=0.3, time_constant_init_stdev=0.2, time_constant_min_value=0.05)


def observation():
    from neatpar_sim.probe import observation as probe_observation
    return probe_observation(4).astype(np.float64)


def f32_sum(values) -> np.float32:
    """Left-to-right float32 sum, as the game accumulates a reward."""
    total = np.float32(0.0)
    for v in values:
        total = np.float32(total + np.float32(v))
    return total


def action_values(genome, config, decisions: int, network: str, discrete: int, times=(0.1, 0.02)) -> list[np.float32]:
    """The value of each of a genome's first `decisions` actions in an episode (fresh network; a
    CTRNN advances by `times` = (decision time, time step) per decision)."""
    if network == "ctrnn":
        net = neat.ctrnn.CTRNN.create(genome, config)
        step = lambda: net.advance(list(observation()), *times)  # noqa: E731
    else:
        net = (neat.nn.RecurrentNetwork if network == "recurrent" else neat.nn.FeedForwardNetwork).create(genome, config)
        step = lambda: net.activate(observation())  # noqa: E731
    values = []
    for _ in range(decisions):
        out = np.asarray(step())
        values.append(np.float32(np.argmax(out)) if discrete else np.float32(np.clip(out[0], -1.0, 1.0)))
    return values


def expected_return(genome, config, episode: int, max_steps: int, executions: int = 1, network="feedforward",
                    discrete=0) -> float:
    """The runner's return: the infos after decisions 2..k carry the sums of the previous action's
    executions; an episode the game ends at its L-th decision adds that action's one execution
    (the terminal); an episode cut at max_steps keeps the rewards of max_steps actions."""
    ended = 0 < episode <= max_steps
    values = action_values(genome, config, episode if ended else max_steps, network, discrete)
    infos = [f32_sum([v] * executions) for v in (values[:-1] if ended else values)]
    if ended:
        infos.append(values[-1])
    total = 0.0
    for reward in infos:
        total += float(reward)
    return total


def run_generation(config, settings):
    genomes = first_generation(config)
    with UnityEvaluator.from_settings(settings) as evaluator:
        evaluator.evaluate(genomes, config)
        stats = evaluator.last_stats
    return genomes, stats


SCENARIOS = {
    # name: (probe arguments, [neatpar] behaviors, max_steps, episode length, executions per decision)
    "period 3, actions between decisions": ("--agents 3 --decision-period 3 --episode-decisions 4", None, 20, 4, 3),
    "period 3, no actions between": ("--agents 3 --decision-period 3 --actions-between 0 --episode-decisions 4",
                                      None, 20, 4, 1),
    "staggered offsets, rival joins late": ("--behaviors 2 --agents 2 --decision-period 2 --decision-offset 0,1 "
                                            "--spawn-after 0,7 --episode-decisions 3,0",
                                            "Probe?team=0: population, Rival?team=1: champion", 20, 3, 2),
    "turn-based pair": ("--behaviors 2 --agents 2 --turns 1 --episode-decisions 5",
                        "Probe?team=0: population, Rival?team=1: population", 20, 5, 1),
    "terminal and next decision in one step": ("--agents 2 --episode-decisions 3", None, 20, 3, 1),
    "agents destroyed and respawned with fresh ids": ("--agents 3 --lifetime 4", None, 20, 4, 1),
    "episodes longer than max_steps": ("--agents 3 --episode-decisions 9", None, 5, 9, 1),
    "episodes that never end": ("--agents 3 --decision-period 2", None, 4, 0, 2),
}


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("scenario", SCENARIOS)
def test_every_return_is_exact_for_the_ways_real_games_behave(tmp_path, scenario, mode):
    args, behaviors, max_steps, episode, executions = SCENARIOS[scenario]
    config, settings = probe_config(tmp_path, args, behaviors or "Probe?team=0: population", max_steps=max_steps,
                                    **MODES[mode])
    genomes, stats = run_generation(config, settings)
    for key, genome in genomes:
        assert genome.fitness == expected_return(genome, config, episode, max_steps, executions), (scenario, key)
    assert stats.episodes == len(genomes)  # one scored episode each, whichever agent played it


def test_recurrent_genomes_start_each_episode_fresh_and_score_exactly(tmp_path):
    """Recurrent networks change their action from decision to decision; every genome's episode
    starts from a clean state, also after the runner resets a game that never ends episodes."""
    config, settings = probe_config(tmp_path, "--agents 3 --decision-period 2", max_steps=6, network="recurrent")
    genomes, stats = run_generation(config, settings)
    assert stats.resets >= 2   # 8 genomes on 3 agents whose game episodes never end
    for key, genome in genomes:
        assert genome.fitness == expected_return(genome, config, 0, 6, 2, network="recurrent"), key


@pytest.mark.parametrize("mode", MODES)
def test_ctrnn_genomes_start_each_episode_fresh_and_score_exactly(tmp_path, mode):
    """CTRNNs (each decision one CTRNN.advance of 0.1 s in steps of 0.02 s) score exactly what
    neat-python's CTRNN earns from a fresh network per episode, in process, on the pool and on env
    hosts: episodes that end, an agent that plays the same genome again (3 genomes, 2 episodes
    each, on 3 agents), and episodes cut by a reset of a game that never ends them."""
    scenarios = [("--agents 3 --episode-decisions 7", 20, 7, 8, 1), ("--agents 3 --episode-decisions 5", 20, 5, 3, 2),
                 ("--agents 3", 9, 0, 8, 1)]
    for args, max_steps, episode, pop, episodes in scenarios:
        config, settings = probe_config(tmp_path, args, max_steps=max_steps, network="ctrnn", pop=pop,
                                        episodes_per_genome=episodes, **MODES[mode])
        genomes, _ = run_generation(config, settings)
        returns = [genome.fitness for _, genome in genomes]
        assert len(set(returns)) > 1  # the genomes act differently
        for key, genome in genomes:
            assert genome.fitness == expected_return(genome, config, episode, max_steps, network="ctrnn"), (args, key)


def test_discrete_actions_take_the_best_allowed_and_score_exactly(tmp_path):
    config, settings = probe_config(tmp_path, "--agents 4 --discrete 3 --mask-first 1 --episode-decisions 3",
                                    discrete=3)
    genomes, _ = run_generation(config, settings)
    for key, genome in genomes:
        net = neat.nn.FeedForwardNetwork.create(genome, config)
        scores = np.asarray(net.activate(observation()))
        best_allowed = float(1 + np.argmax(scores[1:]))  # action 0 is masked
        assert genome.fitness == 3 * best_allowed, key


def test_mixed_decision_rates_count_the_population_s_decisions(tmp_path):
    """Population deciding every 4th step, opponent every step, episodes of 200 decisions and
    max_steps = 200: the budget is the population's decisions, not environment steps."""
    config, settings = probe_config(
        tmp_path, "--behaviors 2 --agents 2 --decision-period 4,1 --episode-decisions 200,0",
        "Probe?team=0: population, Rival?team=1: champion", pop=4, max_steps=200)
    genomes, stats = run_generation(config, settings)
    for key, genome in genomes:
        assert genome.fitness == expected_return(genome, config, 200, 200, 4), key
    # Two rounds of 200 decisions, one every 4th academy step; the opponent makes every step an
    # exchange; the last terminal arrives one step after the last decision.
    assert stats.env_steps == (2 * 200 - 1) * 4 + 1


def test_a_longer_game_episode_is_never_inherited_and_warns_once(tmp_path, caplog):
    config, settings = probe_config(tmp_path, "--agents 2 --episode-decisions 9", max_steps=5)
    with caplog.at_level("WARNING", logger="neatpar"):
        genomes, _ = run_generation(config, settings)
    warnings = [r.getMessage() for r in caplog.records if "max_steps" in r.getMessage()]
    assert len(warnings) == 1 and "after max_steps = 5 decisions" in warnings[0]
    assert all(g.fitness == expected_return(g, config, 9, 5) for _, g in genomes)


def test_a_behavior_the_config_does_not_name_gets_neutral_actions_and_one_warning(tmp_path, caplog):
    config, settings = probe_config(tmp_path, "--behaviors 2 --agents 2 --episode-decisions 3,0")
    with caplog.at_level("WARNING", logger="neatpar"):
        genomes, _ = run_generation(config, settings)
    warnings = [r.getMessage() for r in caplog.records if "Rival?team=1" in r.getMessage()]
    assert warnings == ["behavior 'Rival?team=1' is in the environment but not in [neatpar] behaviors: its agents "
                        "get neutral actions (zeros; for a discrete branch, the first action their mask allows)"]
    assert all(g.fitness == expected_return(g, config, 3, 20) for _, g in genomes)


def test_a_configured_behavior_that_never_reports_is_an_error_after_the_wait(tmp_path):
    from neatpar.errors import EnvironmentMismatch
    from neatpar.episodes.runner import BEHAVIOR_WAIT_STEPS
    config, settings = probe_config(tmp_path, "--agents 2 --episode-decisions 3",
                                    "Probe?team=0: population, Ghost?team=1: champion")
    with pytest.raises(EnvironmentMismatch, match=rf"behavior 'Ghost\?team=1' is not in the environment: no agent "
                                                  rf"of it asked for a decision in {BEHAVIOR_WAIT_STEPS} environment "
                                                  rf"steps; it has 'Probe\?team=0'"):
        run_generation(config, settings)


def test_a_relaunched_game_reports_its_late_behavior_again_and_scores_stay_exact(tmp_path, caplog):
    """The game dies mid-generation (SIGKILL at the runner's 12th step); the relaunched game's
    Rival appears late again (7 academy steps after each reset), its spec is read again, and every
    genome's fitness is still exact."""
    import signal
    config, settings = probe_config(tmp_path, "--behaviors 2 --agents 2 --spawn-after 0,7 --episode-decisions 6,0",
                                    "Probe?team=0: population, Rival?team=1: champion")
    genomes = first_generation(config)
    with UnityEvaluator.from_settings(settings) as evaluator:
        environment = evaluator.environment
        step, steps = environment.step, []

        def step_then_kill_once():
            steps.append(1)
            if len(steps) == 12:
                os.kill(environment.process_pid, signal.SIGKILL)
            step()
        environment.step = step_then_kill_once
        with caplog.at_level("WARNING", logger="neatpar"):
            evaluator.evaluate(genomes, config)
        launches = environment.bridge.launches
    assert launches == 2 and any("relaunching it" in r.getMessage() for r in caplog.records)
    for key, genome in genomes:
        assert genome.fitness == expected_return(genome, config, 6, 20), key


def test_on_decisions_sees_every_scored_decision_once_with_its_genome_and_changes_nothing(tmp_path):
    """Genomes take turns on 3 agents and play episodes the runner cuts at 7 decisions (overtime
    follows); the hook is told of each scored decision once, by agent and genome, before the
    actions, and the returns are those of a generation without it."""
    config, run = ball_config(tmp_path, agents=3, pop=7, max_steps=7, episodes=2)
    run = dataclasses.replace(run, env_args=("--agents", "3", "--max-steps", "12"))
    genomes = [g for _, g in first_generation(config)]
    seen = []
    with UnityEvaluator.from_settings(run) as evaluator:
        runner = EpisodeRunner(evaluator.environment, run, config)
        plain, stats = runner.evaluate(genomes)
        runner.on_decisions = lambda behavior, agents, played: seen.append((behavior, agents.copy(), played.copy()))
        watched, _ = runner.evaluate(genomes)
    assert watched == plain
    assert {behavior for behavior, _, _ in seen} == {"Ball3D?team=0"}
    played = np.concatenate([p for _, _, p in seen])
    assert np.bincount(played, minlength=7).tolist() == [14] * 7   # 2 episodes of 7 decisions each
    assert sum(stats.scored["Ball3D?team=0"].lengths) == len(played)
    for _, agents, playing in seen:
        assert len(set(agents.tolist())) == len(agents) == len(playing) <= 3   # one genome per agent at a time
