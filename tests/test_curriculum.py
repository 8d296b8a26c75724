"""The lessons of a run's environment parameters (neatpar/episodes/curriculum.py): ML-Agents'
completion criteria at generation boundaries, and through `neatpar evolve` on the ball stand-in
build: the messages the game receives at each generation, the lessons in stats.csv and
TensorBoard, an exact resume, and on two env hosts every simulator's messages and a seeded repeat."""
import glob
import json
import math
import os

import pytest

from neatpar.config.parameter_file import read_parameter_file
from neatpar.episodes.curriculum import Curriculum, CurriculumState, LessonStatus
from neatpar.errors import ConfigError
from support.configs import ball_cfg
from support.curricula import FULL_YAML, RUN_YAML, expected_messages, received_per_reset, write_yaml
from support.runs import neatpar_cli, stats_table, without_timing

BEHAVIORS = ["Ball3D?team=0"]


def test_progress_and_smoothed_reward_advance_lessons_as_ml_agents_does(tmp_path):
    """FULL_YAML's wall: 'low' until progress exceeds 0.3, then 'middle' until, after at least 2
    generations since the last change, the (unsmoothed) reward exceeds 5; target: 'near' until
    progress exceeds 0.5."""
    curriculum = Curriculum(read_parameter_file(write_yaml(tmp_path, FULL_YAML)), 100, BEHAVIORS)
    assert curriculum.lessons() == {"wall": 0, "target": 0}
    changes = [curriculum.end_generation(g, 10, 9.0) for g in range(4)]
    assert [[c.parameter for c in found] for found in changes] == [[], [], [], ["wall"]]   # 4/10 > 0.3
    assert changes[3][0].name == "middle" and changes[3][0].lesson == 1
    # after generation 4: min_lesson_length 2 holds wall, and progress 5/10 is not above 0.5
    assert curriculum.end_generation(4, 10, 9.0) == []
    found = curriculum.end_generation(5, 10, 9.0)
    assert sorted(c.parameter for c in found) == ["target", "wall"]
    assert curriculum.lessons() == {"wall": 2, "target": 1} and curriculum.played == {"wall": 1, "target": 0}
    assert all(curriculum.status(p) is LessonStatus.FINAL for p in curriculum.parameters)
    assert curriculum.summary() == "wall: 'high' (lesson 2 of 0-2), target: 'far' (lesson 1 of 0-1)"
    values = curriculum.values()
    assert list(values) == ["agents_bonus", "mass", "gravity", "scale", "wall", "target"]
    assert values["wall"].value == 3.0 and values["target"].value == 4


def test_signal_smoothing_starts_from_zero_and_a_missing_reward_checks_nothing(tmp_path):
    body = ("x:\n  curriculum:\n    - name: a\n      completion_criteria: {behavior: Ball3D, threshold: 0.9}\n"
            "      value: 1\n    - name: b\n      value: 2\n")
    curriculum = Curriculum(read_parameter_file(write_yaml(tmp_path, body)), 0, BEHAVIORS)
    assert curriculum.end_generation(0, 10, None) == [] and curriculum.state.smoothed["x"] == 0.0
    assert curriculum.end_generation(1, 10, 1.0) == [] and curriculum.state.smoothed["x"] == 0.75
    [change] = curriculum.end_generation(2, 10, 1.0)   # 0.25 x 0.75 + 0.75 = 0.9375 > 0.9
    assert math.isclose(change.measured, 0.9375) and "x -> 'b' (lesson 1) after generation 2" in change.line()


def test_a_checkpoint_s_state_continues_the_lessons_and_a_bad_one_is_refused(tmp_path):
    path = write_yaml(tmp_path, FULL_YAML)
    first = Curriculum(read_parameter_file(path), 5, BEHAVIORS)
    for g in range(4):
        first.end_generation(g, 10, 1.0)
    second = Curriculum(read_parameter_file(path), 5, BEHAVIORS)
    second.restore(first.state)
    assert second.lessons() == first.lessons() and second.state == first.state
    with pytest.raises(ConfigError, match="parameter 'wall' in lesson 7"):
        second.restore(CurriculumState({"wall": 7}, {}, 0))


def test_a_criterion_on_a_behavior_the_run_does_not_evolve_is_one_line(tmp_path):
    with pytest.raises(ConfigError) as error:
        Curriculum(read_parameter_file(write_yaml(tmp_path, FULL_YAML)), 0, ["Walker?team=0"])
    assert "parameter 'wall' lesson 'low' completion_criteria: behavior 'Ball3D' is not a population" \
           in str(error.value) and "\n" not in str(error.value)


def lessons_by_the_criteria(rows: list[dict]) -> list[tuple[int, int]]:
    """RUN_YAML's (scale, wall) lessons of each generation of a 4-generation run, from its rows
    by ML-Agents' rules: scale leaves lesson 0 once progress (g + 1) / 4 exceeds 0.25; wall once
    the smoothed champion's mean return (best_fitness, fitness = mean) exceeds 1.3."""
    lessons, scale, wall, smoothed = [], 0, 0, 0.0
    for g, row in enumerate(rows):
        lessons.append((scale, wall))
        if wall == 0:
            smoothed = 0.25 * smoothed + 0.75 * float(row["best_fitness"])
            wall = int(smoothed > 1.3)
        scale = max(scale, int((g + 1) / 4 > 0.25))
    return lessons


def player_logs(run) -> str:
    return "".join(open(path).read() for path in sorted(glob.glob(os.path.join(run, "sim-logs", "Player-*.log"))))


def test_a_yaml_drives_an_evolve_run_with_ml_agents_messages_lessons_records_and_exact_resume(tmp_path):
    write_yaml(tmp_path, RUN_YAML)
    config = ball_cfg(tmp_path, generations=4, interval=2, env_parameters="parameters.yaml", winner_episodes=0)
    full, resumed = tmp_path / "full", tmp_path / "resumed"
    result = neatpar_cli("evolve", "--config", config, "--out", str(full))
    assert result.returncode == 0, result.stderr
    rows = stats_table(full / "stats.csv")
    lessons = lessons_by_the_criteria(rows)
    assert [(int(r["lesson/scale"]), int(r["lesson/wall"])) for r in rows] == lessons
    assert lessons[0] == (0, 0) and lessons[-1][0] == 1 and lessons[-1][1] == 1   # both advanced
    # The game got every parameter's current lesson before each generation's reset, as ML-Agents sends them.
    per_seed = dict(received_per_reset(player_logs(full)))
    for g, (scale, wall) in enumerate(lessons):
        assert per_seed[11 * 1009 + g] == expected_messages(scale, wall), f"generation {g}"
    changes = [line for line in result.stdout.splitlines() if line.startswith("lesson: ")]
    assert len(changes) == 2 and "lessons at the end: scale: 'large' (lesson 1 of 0-1)" in result.stdout
    from tensorboard.backend.event_processing.event_accumulator import EventAccumulator
    events = EventAccumulator(str(full), size_guidance={"scalars": 0})
    events.Reload()
    assert [e.value for e in events.Scalars("Environment/Lesson Number/wall")] == [float(w) for _, w in lessons]
    # Resumed from the straight run's checkpoint of generation 2: the same run.
    checkpoint = full / "checkpoints" / "checkpoint-2.gz"
    assert neatpar_cli("evolve", "--resume", str(checkpoint), "--out", str(resumed)).returncode == 0
    assert without_timing(stats_table(resumed / "stats.csv")) == without_timing(rows)
    assert json.load(open(resumed / "winner.json")) == json.load(open(full / "winner.json"))


def test_on_two_env_hosts_every_simulator_gets_the_lessons_and_a_seeded_run_repeats(tmp_path):
    write_yaml(tmp_path, RUN_YAML)
    config = ball_cfg(tmp_path, generations=4, envs=2, pop_size=8, env_parameters="parameters.yaml",
                      winner_episodes=0, env_args="--agents 2 --max-steps 15")
    first, second = tmp_path / "first", tmp_path / "second"
    for out in (first, second):
        assert neatpar_cli("evolve", "--config", config, "--out", str(out)).returncode == 0
    rows = stats_table(first / "stats.csv")
    assert without_timing(stats_table(second / "stats.csv")) == without_timing(rows)
    lessons = [(int(r["lesson/scale"]), int(r["lesson/wall"])) for r in rows]
    assert lessons == lessons_by_the_criteria(rows)
    logs = sorted(glob.glob(os.path.join(first, "sim-logs", "**", "Player-*.log"), recursive=True))
    assert len(logs) == 2
    for log in logs:   # each host's simulator: each of its resets carries the generation's lessons
        resets = [(seed, sent) for seed, sent in received_per_reset(open(log).read()) if seed is not None]
        assert resets
        for seed, sent in resets:
            generation = (seed - 11 * 1009) % 104729
            assert sent == expected_messages(*lessons[generation]), (log, seed)
