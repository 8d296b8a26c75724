"""What the recorder (neatpar/run/recorder.py) records of a run for its watchers: stats.csv rows and
TensorBoard events of the same values, the game's own statistics (its Stats side channel)
aggregated per generation as ML-Agents does, in process and on env hosts, the species plot, and
the generation's progress reported while it runs.

The probe build (neatpar_sim/probe.py) makes every value known in closed form: its observation is
constant, so a feed-forward genome plays one action value v at every decision, and with one
decision per academy step an episode of L decisions earns v at each of its L actions. The game
sums them in float32 (its "Game/Return" and "Environment/Cumulative Reward"); the runner adds the
rewards it receives in float64."""
import csv
import io
import math
import os

os.environ.setdefault("RAY_AUTH_MODE", "disabled")  # before Ray is imported: no token file for test clusters

import neat  # noqa: E402
import numpy as np  # noqa: E402
import pytest  # noqa: E402
from PIL import Image  # noqa: E402
from tensorboard.backend.event_processing.event_accumulator import EventAccumulator  # noqa: E402

from neatpar import settings as run_config  # noqa: E402
from neatpar.run.recorder import CheckpointSchedule, Reporting, RunRecorder  # noqa: E402
from neatpar.episodes.env_evaluator import UnityEvaluator  # noqa: E402
from neatpar.record.folder import RunFolder  # noqa: E402
from neatpar.record.plots import species_figure  # noqa: E402
from neatpar.record.stats_file import StatsFile  # noqa: E402
from neatpar.config.run_settings import RunSettings  # noqa: E402
from neatpar_sim.probe import observation  # noqa: E402
from neatpar.record.tensorboard import EventLog  # noqa: E402
from support.configs import write_config  # noqa: E402
from support.marks import ONE_RAY_AT_A_TIME  # noqa: E402
from support.paths import BUILDS  # noqa: E402
from support.simulators import free_worker_id  # noqa: E402

PROBE = os.path.join(BUILDS, "probe")
EPISODE = 5  # decisions in every probe episode
MODES = {"inprocess": {}, "envs2": {"envs": 2}, "ray": {"envs": 2, "backend": "ray"}}


def probe_settings(tmp_path, agents, pop, episode=EPISODE, stats=True, max_steps=20, extra_args="",
                   compatibility_threshold=None, **neatpar):
    args = f"--agents {agents} --episode-decisions {episode}" + (" --stats 1" if stats else "") + extra_args
    section = {"env": PROBE, "env_args": args, "behaviors": "Probe?team=0: population", "max_steps": max_steps,
               "seed": 4, "worker_id": free_worker_id(), "timeout": 20, **neatpar}
    path = write_config(tmp_path, "probe.cfg", neatpar=section, pop_size=pop, num_inputs=4, num_outputs=1,
                        activation_options="tanh", activation_default="tanh")
    if compatibility_threshold is not None:  # a lower one splits the population into more species
        with open(path) as f:
            text = f.read().replace("compatibility_threshold = 3.0", f"compatibility_threshold = {compatibility_threshold}")
        with open(path, "w") as f:
            f.write(text)
    return run_config.load(path)


def action_value(genome, config) -> np.float32:
    """The action value a feed-forward genome plays at every decision of the probe."""
    out = neat.nn.FeedForwardNetwork.create(genome, config).activate(observation(4).astype(np.float64))
    return np.float32(np.clip(out[0], -1.0, 1.0))


def game_return(value: np.float32, decisions: int = EPISODE) -> float:
    """The game's return of an episode: its actions' values added up in float32."""
    total = np.float32(0.0)
    for _ in range(decisions):
        total = np.float32(total + value)
    return float(total)


def runner_return(value: np.float32, decisions: int = EPISODE) -> float:
    """The runner's return of the same episode: the rewards it receives, added up in float64."""
    total = 0.0
    for _ in range(decisions):
        total += float(value)
    return total


def record(tmp_path, config, settings, generations, between=None):
    """Run `generations` generations with a RunRecorder and an EventLog on a run folder; returns
    the first generation's (key, genome) pairs, the rows and the folder."""
    population = neat.Population(config, seed=5)
    first = list(population.population.items())
    run = RunSettings.from_file(str(tmp_path / "probe.cfg"), {})
    folder = RunFolder(str(tmp_path / "run"), run)
    events = EventLog(folder.path)
    stats = StatsFile(folder.path)
    try:
        with UnityEvaluator.from_settings(settings) as evaluator:
            population.add_reporter(RunRecorder(population, evaluator, stats, Reporting(folder, run, True, events),
                                                CheckpointSchedule(1000, 1000)))
            for generation in range(generations):
                population.run(evaluator.evaluate, 1)
                if between is not None:
                    between(evaluator, generation)
    finally:
        events.close()
        folder.release()
    return first, stats.rows(), folder.path


def csv_rows(folder) -> tuple[list[str], list[dict]]:
    with open(os.path.join(folder, "stats.csv")) as f:
        reader = csv.DictReader(f)
        return list(reader.fieldnames), list(reader)


def tensorboard_run(folder, run=""):
    """The events of one TensorBoard run, every point kept."""
    accumulator = EventAccumulator(os.path.join(folder, run), size_guidance={"scalars": 0, "histograms": 0})
    accumulator.Reload()
    return accumulator


def scalars(accumulator, tag) -> dict[int, float]:
    return {e.step: e.value for e in accumulator.Scalars(tag)}


GAME_KEYS = ("Environment/Cumulative Reward", "Environment/Episode Length", "Game/Episodes", "Game/Last Return",
             "Game/Return")


@pytest.mark.parametrize("mode", [pytest.param(m, marks=[pytest.mark.slow, ONE_RAY_AT_A_TIME]) if m == "ray" else m
                                  for m in MODES])
def test_the_game_s_stats_arrive_aggregated_as_ml_agents_does(tmp_path, mode):
    """One agent per simulator plays the genomes one after another, so the order of the episodes is
    known: in process genomes 0..3; on two hosts part 0 (genomes 0, 1) and part 1 (genomes 2, 3)."""
    config, settings = probe_settings(tmp_path, agents=1, pop=4, **MODES[mode])
    first, rows, folder = record(tmp_path, config, settings, generations=1)
    values = [action_value(g, config) for _, g in first]
    game = [game_return(v) for v in values]
    columns, (row,) = csv_rows(folder)
    expected = {
        "Environment/Cumulative Reward": math.fsum(game) / 4,   # AVERAGE
        "Environment/Episode Length": float(EPISODE),           # AVERAGE of academy steps (one per decision)
        "Game/Episodes": 4.0,                                   # SUM
        # MOST_RECENT: the latest value; of the first part where parts are merged (ML-Agents keeps
        # the first environment's)
        "Game/Last Return": game[3] if mode == "inprocess" else game[1],
        "Game/Return": math.fsum(game) / 4,                     # HISTOGRAM: the mean as its value
    }
    assert columns[-len(GAME_KEYS):] == [f"game:{key}" for key in sorted(GAME_KEYS)]
    assert {key: float(row[f"game:{key}"]) for key in GAME_KEYS} == expected
    # The runner's own view of the same episodes.
    assert float(row["mean_return"]) == math.fsum(runner_return(v) for v in values) / 4
    assert float(row["mean_episode_length"]) == EPISODE and int(row["episodes"]) == 4
    assert [g.fitness for _, g in first] == [runner_return(v) for v in values]
    # TensorBoard: the same values under the game's keys, and the returns' distribution.
    events = tensorboard_run(folder, "game")
    assert {key: scalars(events, key) for key in GAME_KEYS} == {k: {0: np.float32(v)} for k, v in expected.items()}
    (histogram,) = events.Histograms("Game/Return_hist")
    assert histogram.step == 0
    assert (histogram.histogram_value.num, histogram.histogram_value.min, histogram.histogram_value.max) == (
        4, min(game), max(game))


def test_a_game_key_first_sent_later_gets_a_column_from_then_on(tmp_path):
    """The game starts sending its stats in the second generation (the probe's `stats` option, set
    on the EnvironmentParameters side channel, applies at the next reset)."""
    config, settings = probe_settings(tmp_path, agents=2, pop=4, stats=False)

    def stats_on(evaluator, generation):
        if generation == 0:
            evaluator.environment.bridge.set_parameter("stats", 1)

    first, rows, folder = record(tmp_path, config, settings, generations=3, between=stats_on)
    columns, table = csv_rows(folder)
    assert columns[:10] == ["generation", "best_fitness", "mean_fitness", "stdev_fitness", "species", "episodes",
                          "scored_steps", "scored_steps_per_s", "agent_steps", "seconds"]  # the old columns stay first
    assert columns[-len(GAME_KEYS):] == [f"game:{key}" for key in sorted(GAME_KEYS)]
    assert [[r[f"game:{key}"] for key in GAME_KEYS] for r in table][0] == [""] * len(GAME_KEYS)
    assert all(float(r["game:Game/Episodes"]) == 4.0 for r in table[1:])
    events = tensorboard_run(folder, "game")
    assert scalars(events, "Game/Episodes") == {1: 4.0, 2: 4.0}


def test_event_files_hold_every_generation_s_stats_csv_values(tmp_path):
    """Every TensorBoard tag, for every generation, equals its stats.csv value (as float32, the
    type of a TensorBoard scalar)."""
    config, settings = probe_settings(tmp_path, agents=2, pop=6)
    first, rows, folder = record(tmp_path, config, settings, generations=3)
    columns, table = csv_rows(folder)
    tags = {"mean_return": "Environment/Cumulative Reward", "mean_episode_length": "Environment/Episode Length",
            "best_fitness": "NEAT/Best Fitness", "mean_fitness": "NEAT/Mean Fitness",
            "stdev_fitness": "NEAT/Fitness Std", "species": "NEAT/Species", "mean_nodes": "NEAT/Mean Nodes",
            "mean_connections": "NEAT/Mean Connections",
            "scored_steps_per_s": "Throughput/Agent Steps per Second", "seconds": "Throughput/Generation Seconds"}
    root = tensorboard_run(folder)
    assert set(root.Tags()["scalars"]) == set(tags.values())
    for column, tag in tags.items():
        assert scalars(root, tag) == {int(r["generation"]): np.float32(float(r[column])) for r in table}, tag
    game = tensorboard_run(folder, "game")
    for key in GAME_KEYS:
        assert scalars(game, key) == {int(r["generation"]): np.float32(float(r[f"game:{key}"])) for r in table}, key
    # The population's size, from the genomes: mean nodes and enabled connections as neat-python counts.
    sizes = [g.size() for _, g in first]
    assert float(table[0]["mean_nodes"]) == sum(n for n, _ in sizes) / len(sizes)
    assert float(table[0]["mean_connections"]) == sum(c for _, c in sizes) / len(sizes)


def test_each_population_behavior_has_its_own_returns_and_lengths(tmp_path):
    """Two population behaviors with episodes of different lengths (3 and 5 decisions)."""
    config, settings = probe_settings(tmp_path, agents=2, pop=8, episode="3,5", extra_args=" --behaviors 2", stats=False,
                                      behaviors="Probe?team=0: population, Rival?team=1: population")
    first, rows, folder = record(tmp_path, config, settings, generations=1)
    columns, (row,) = csv_rows(folder)
    assert columns[-4:] == ["mean_return:Probe?team=0", "mean_episode_length:Probe?team=0",
                            "mean_return:Rival?team=1", "mean_episode_length:Rival?team=1"]
    assert float(row["mean_episode_length:Probe?team=0"]) == 3.0
    assert float(row["mean_episode_length:Rival?team=1"]) == 5.0
    assert 3.0 < float(row["mean_episode_length"]) < 5.0  # both behaviors' episodes together
    for behavior, length in (("Probe_team=0", 3.0), ("Rival_team=1", 5.0)):
        events = tensorboard_run(folder, f"behavior-{behavior}")
        assert scalars(events, "Environment/Episode Length") == {0: np.float32(length)}
        assert scalars(events, "Environment/Cumulative Reward") == {
            0: np.float32(float(row[f"mean_return:{behavior.replace('_', '?', 1)}"]))}


def test_species_png_stacks_the_species_of_every_generation(tmp_path):
    config, settings = probe_settings(tmp_path, agents=4, pop=20, stats=False, compatibility_threshold=1.5)
    first, rows, folder = record(tmp_path, config, settings, generations=5)
    paths = RunFolder(folder, RunSettings.from_file(str(tmp_path / "probe.cfg"), {}), resume=True).plot(rows)
    assert [os.path.basename(p) for p in paths] == ["fitness.png", "species.png"]
    with Image.open(paths[1]) as image:
        assert image.format == "PNG" and image.width > 100 and image.height > 100
    figure = species_figure(rows)
    bands = figure.axes[0].collections
    species = {sid for row in rows for sid in row.species_sizes}
    assert len(species) > 2 and len(bands) == len(species)  # one band per species that ever lived
    tops = {}
    for band in bands:
        for x, y in band.get_paths()[0].vertices:
            tops[x] = max(tops.get(x, 0.0), y)
    assert sorted(tops) == [r.generation for r in rows] == [0, 1, 2, 3, 4]
    assert all(top == 20 for top in tops.values())  # the stacked sizes add up to the population


# ---------------------------------------------------------------- progress during a generation

@pytest.mark.parametrize("mode, episode", [("inprocess", 20), ("envs2", 200),
                                           pytest.param("ray", 600, marks=[pytest.mark.slow, ONE_RAY_AT_A_TIME])])
def test_progress_reaches_the_main_process_while_the_generation_runs(tmp_path, mode, episode):
    """Two agents per simulator, eight genomes: each simulator plays its genomes in waves, so the
    episodes finished grow while the generation runs (local env hosts report about every 0.25 s,
    Ray actors about every second: their episodes are long enough for a report between two waves)."""
    config, settings = probe_settings(tmp_path, agents=2, pop=8, episode=episode, stats=False, max_steps=episode,
                                      **MODES[mode])
    genomes = list(neat.Population(config, seed=5).population.items())
    seen: list[tuple[int, int]] = []
    with UnityEvaluator.from_settings(settings) as evaluator:
        evaluator.progress = lambda stats: seen.append((stats.episodes, stats.scored_steps))
        evaluator.evaluate(genomes, config)
        total = evaluator.last_stats
    assert all(a[0] <= b[0] and a[1] <= b[1] for a, b in zip(seen, seen[1:]))  # never goes back
    assert any(0 < episodes < 8 for episodes, _ in seen)      # reported while the generation ran
    assert seen[-1][0] <= 8 and seen[-1][1] <= total.scored_steps == 8 * episode
    if mode != "inprocess":
        assert seen[-1] == (8, 8 * episode)                   # finished parts are counted whole


def test_a_recorder_without_event_log_or_bar_writes_stats_only(tmp_path):
    """The recorder works without a bar or an event log (a library user's reporter)."""
    config, settings = probe_settings(tmp_path, agents=2, pop=4, stats=False)
    population = neat.Population(config, seed=5)
    run = RunSettings.from_file(str(tmp_path / "probe.cfg"), {})
    folder = RunFolder(str(tmp_path / "plain"), run)
    stats = StatsFile(folder.path)
    with UnityEvaluator.from_settings(settings) as evaluator:
        population.add_reporter(RunRecorder(population, evaluator, stats, Reporting(folder, run, True),
                                            CheckpointSchedule(1000, 1000)))
        population.run(evaluator.evaluate, 1)
    assert len(stats.rows()) == 1 and not [f for f in os.listdir(folder.path) if f.startswith("events.")]
    text = io.StringIO(open(os.path.join(folder.path, "stats.csv")).read())
    assert next(csv.reader(text))[:1] == ["generation"]


def test_of_the_history_neat_python_keeps_only_what_it_reads_stays_and_evolution_is_unchanged():
    """neat-python records every genome's parents and never reads them, and each species'
    fitness history of which stagnation reads the maximum: a run keeps the living generation's
    parents and that maximum (memory and checkpoints that would grow with the run's length), and
    makes the same genomes, species and stagnation (max_stagnation 3: species go stagnant)."""
    from neatpar.run.recorder import forget_history
    from support.configs import load_config

    def fitness(genomes, _config):
        for key, genome in genomes:
            genome.fitness = (len(genome.connections) + key % 7) / 100   # below fitness_threshold: all 30 run

    def config():
        made = load_config()
        made.stagnation_config.max_stagnation, made.stagnation_config.species_elitism = 3, 1
        made.species_set_config.compatibility_threshold = 1.0   # several species
        return made

    class Trim(neat.reporting.BaseReporter):
        def end_generation(self, config, population, species_set):
            forget_history(kept.reproduction, population, species_set)
            assert set(kept.reproduction.ancestors) == set(population)
            assert all(len(s.fitness_history) <= 1 for s in species_set.species.values())

    class Stagnant(neat.reporting.BaseReporter):
        def __init__(self):
            self.seen = []

        def species_stagnant(self, sid, species):
            self.seen.append(sid)
    kept, kept_stagnant = neat.Population(config(), seed=4), Stagnant()   # seeds the random module: each run in turn
    kept.add_reporter(Trim())
    kept.add_reporter(kept_stagnant)
    kept.run(fitness, 30)
    full, full_stagnant = neat.Population(config(), seed=4), Stagnant()
    full.add_reporter(full_stagnant)
    full.run(fitness, 30)
    assert len(full.reproduction.ancestors) > 10 * len(full.population)   # every genome ever made
    assert max(len(s.fitness_history) for s in full.species.species.values()) > 5   # neat-python keeps every one
    assert sorted(kept.population) == sorted(full.population)
    assert sorted(kept.species.species) == sorted(full.species.species)
    assert kept_stagnant.seen == full_stagnant.seen and kept_stagnant.seen   # species went stagnant, the same ones
    assert all(kept.reproduction.ancestors[k] == full.reproduction.ancestors[k] for k in kept.population)
