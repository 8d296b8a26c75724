"""Tests of run/progress.py: a generation's progress bar (GenerationBar) drawn on a terminal only,
redrawn at most every REDRAW_SECONDS with the episodes finished and the agent-steps per second,
and cleared when the generation ends; and what a user sees of it in real runs on a terminal."""
import io
import json
import re
import time

from neatpar.run import progress
from neatpar.run.progress import GenerationBar
from neatpar.generation_stats import GenerationStats
from support.configs import ball_cfg
from support.runs import PROGRESS_BAR, fresh_note, on_terminal, screen


class Terminal(io.StringIO):
    """A stream that says it is a terminal."""

    def isatty(self) -> bool:
        return True


def test_a_stream_that_is_not_a_terminal_gets_no_bar():
    stream = io.StringIO()
    bar = GenerationBar(stream)
    assert not bar.enabled
    bar.start(0, 8)
    bar.update(GenerationStats(episodes=3, scored_steps=300))
    bar.close()
    assert stream.getvalue() == ""
    closed = io.StringIO()
    closed.close()
    assert not GenerationBar(closed).enabled


def test_the_bar_shows_episodes_and_agent_steps_per_second_at_most_every_redraw_interval(monkeypatch):
    monkeypatch.setattr(progress, "REDRAW_SECONDS", 0.05)
    stream = Terminal()
    bar = GenerationBar(stream)
    assert bar.enabled
    bar.start(7, 8)
    drawn = len(stream.getvalue())
    bar.update(GenerationStats(episodes=2, scored_steps=100))   # within the interval: not drawn
    assert len(stream.getvalue()) == drawn
    time.sleep(0.06)
    bar.update(GenerationStats(episodes=3, scored_steps=600))
    last = stream.getvalue().split("\r")[-1]
    assert re.match(r"gen    7 \|.*\| 3/8 episodes \[.*, [\d,]+ agent-steps/s\]", last), last
    drawn = len(stream.getvalue())
    bar.close()                                                  # the line is blanked: the summary takes it
    assert re.fullmatch(r"\r +\r", stream.getvalue()[drawn:]), stream.getvalue()[drawn:]
    bar.update(GenerationStats(episodes=8, scored_steps=800))   # after close: nothing more
    assert re.fullmatch(r"\r +\r", stream.getvalue()[drawn:])


def test_starting_a_generation_clears_the_previous_bar_first():
    stream = Terminal()
    bar = GenerationBar(stream)
    bar.start(1, 4)
    drawn = len(stream.getvalue())
    bar.start(2, 4)
    assert re.fullmatch(r"\r +\r\rgen    2 \| +\| 0/4 episodes \[00:00<\?\]", stream.getvalue()[drawn:])
    bar.close()


def test_a_terminal_shows_each_generation_s_progress_bar_until_its_summary_line_replaces_it(tmp_path):
    out = tmp_path / "run"
    config = ball_cfg(tmp_path, generations=3, env_args="--agents 4 --max-steps 100", max_steps=100)
    output = on_terminal("evolve", "--config", config, "--out", str(out))
    for generation in range(3):
        bars = re.findall(rf"gen +{generation} \|[^\r]*\| (\d+)/8 episodes \[[^\r]*\]", output)
        assert bars, output
    assert re.search(r"\| \d+/8 episodes \[[^\r\]]*, [\d,]+ agent-steps/s\]", output), output
    shown = [line for line in screen(output) if line]
    assert shown[0].startswith("neatpar evolve: ")
    assert [line.split(" |")[0] for line in shown[1:4]] == ["gen    0", "gen    1", "gen    2"]
    assert all(" | best " in line for line in shown[1:4])      # the bars gave way to the summary lines
    assert not any(re.search(PROGRESS_BAR, line) for line in shown)


def test_quiet_on_a_terminal_shows_the_run_folder_and_the_winner_only(tmp_path):
    out = tmp_path / "run"
    output = on_terminal("evolve", "--config", ball_cfg(tmp_path, generations=2), "--out", str(out), "--quiet")
    shown = [line for line in screen(output) if line]
    assert len(shown) == 2, output
    assert shown[0].startswith(f"neatpar evolve: {tmp_path / 'ball.cfg'} -> {out} (generations 0..1)")
    winner = json.load(open(out / "winner.json"))
    assert shown[1] == f"winner: genome {winner['key']}, fitness {winner['fitness']:.3f}{fresh_note(winner)}: " \
                       f"{out / 'winner.json'}"


def test_env_hosts_progress_shows_on_a_terminal_too(tmp_path):
    config = ball_cfg(tmp_path, generations=2, envs=2, pop_size=16, env_args="--agents 4 --max-steps 60",
                      max_steps=60)
    output = on_terminal("evolve", "--config", config, "--out", str(tmp_path / "run"))
    assert re.search(r"gen +0 \|[^\r]*\| \d+/16 episodes \[", output), output
    shown = [line for line in screen(output) if line.startswith("gen ")]
    assert [line.split(" |")[0] for line in shown] == ["gen    0", "gen    1"]
    assert all(" | best " in line for line in shown)
