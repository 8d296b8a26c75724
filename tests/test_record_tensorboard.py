"""TensorBoard's values of a stats row (neatpar/record/tensorboard.py): the run folder's own tags, the
game's keys in `game/`, each population behavior's returns in `behavior-NAME/`, tags exactly as
documented (spaces kept), values a generation does not have left out; and the event files written."""
import os

from tensorboard.backend.event_processing.event_accumulator import EventAccumulator

from neatpar.record.stats_row import BehaviorValues, StatsRow
from neatpar.record.tensorboard import EventLog, behavior_run, generation_values
from neatpar.generation_stats import LeagueValues


def row(**over) -> StatsRow:
    values = dict(generation=2, best_fitness=3.0, mean_fitness=1.5, stdev_fitness=0.5, species=4, episodes=8,
                  scored_steps=80, scored_steps_per_s=100.0, agent_steps=90, seconds=0.8, mean_return=1.25,
                  mean_episode_length=None, mean_nodes=3.0, mean_connections=2.5)
    return StatsRow(**{**values, **over})


def test_a_row_s_values_under_their_documented_tags():
    values = generation_values(row(league=LeagueValues(1210.5, 3), game={"Game/Goals": 2.0},
                                   behaviors={"Blue?team=0": BehaviorValues(1.0, 7.0),
                                              "Purple?team=1": BehaviorValues(None, None)}))
    assert values == {
        "": {"Environment/Cumulative Reward": 1.25, "NEAT/Best Fitness": 3.0, "NEAT/Mean Fitness": 1.5,
             "NEAT/Fitness Std": 0.5, "NEAT/Species": 4.0, "NEAT/Mean Nodes": 3.0, "NEAT/Mean Connections": 2.5,
             "Throughput/Agent Steps per Second": 100.0, "Throughput/Generation Seconds": 0.8,
             "Self-play/ELO": 1210.5, "Self-play/League Size": 3.0},
        "game": {"Game/Goals": 2.0},
        "behavior-Blue_team=0": {"Environment/Cumulative Reward": 1.0, "Environment/Episode Length": 7.0},
    }
    assert set(generation_values(row())) == {""}   # no game keys, one behavior, no league


def test_a_behavior_s_run_is_named_with_safe_characters():
    assert behavior_run("Blue?team=0") == "behavior-Blue_team=0"
    assert behavior_run("a b/c:d.e-f") == "behavior-a_b_c_d.e-f"


def test_the_event_files_hold_the_values_at_the_generation_s_step(tmp_path):
    log = EventLog(str(tmp_path))
    log.write(2, row(game={"Game/Goals": 2.0}), {"Game/Goals": [1.0, 3.0]})
    log.close()
    own = EventAccumulator(str(tmp_path))
    own.Reload()
    assert [(e.step, e.value) for e in own.Scalars("NEAT/Best Fitness")] == [(2, 3.0)]
    assert "Environment/Episode Length" not in own.Tags()["scalars"]   # a value the generation does not have
    game = EventAccumulator(os.path.join(tmp_path, "game"))
    game.Reload()
    assert [(e.step, e.value) for e in game.Scalars("Game/Goals")] == [(2, 2.0)]
    assert game.Histograms("Game/Goals_hist")[0].step == 2
