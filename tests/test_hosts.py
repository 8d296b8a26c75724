"""Env hosts' scheduler (neatpar/episodes/hosts.py): each generation cut into parts that keep every
host's agents busy, parts handed to free hosts, and the scale-out settings checked; the hosts
themselves are in test_local_hosts.py and test_ray_hosts.py."""
import pytest
from hypothesis import given, strategies as st

from neatpar.episodes.hosts import split
from support.configs import ball_cfg
from support.runs import neatpar_cli, probe_hosts, stats_rows


def test_split_gives_one_part_per_host_or_fewer_when_one_host_s_agents_suffice():
    assert [list(r) for r in split(10, 2, None)] == [[0, 1, 2, 3, 4], [5, 6, 7, 8, 9]]
    assert [len(r) for r in split(256, 2, 64)] == [128, 128]    # each host's agents play in turns
    assert [len(r) for r in split(256, 2, 128)] == [128, 128]
    assert [len(r) for r in split(256, 2, 256)] == [256]        # one simulator's agents take them all
    assert [len(r) for r in split(7, 3, None)] == [2, 3, 2]     # sizes differ by at most one
    assert [list(r) for r in split(3, 4, None)] == [[0], [1], [2]]


@given(count=st.integers(1, 2000), hosts=st.integers(1, 64), agents=st.none() | st.integers(1, 512))
def test_split_cuts_a_generation_into_contiguous_near_equal_parts_that_no_fewer_could_hold(count, hosts, agents):
    parts = split(count, hosts, agents)
    assert [i for part in parts for i in part] == list(range(count))  # every genome once, in order
    assert all(parts) and max(map(len, parts)) - min(map(len, parts)) <= 1
    assert len(parts) <= hosts
    if agents is None:
        assert len(parts) == min(hosts, count)  # one part per host (none of them empty)
    elif len(parts) < hosts:
        assert max(map(len, parts)) <= agents  # every part fits one simulator's agents at once,
        assert (len(parts) - 1) * agents < count  # and one part fewer would not


def test_no_agent_sits_idle_while_genomes_wait(tmp_path):
    """8 genomes, two hosts of 4 agents each, episodes of exactly 5 decisions: one part of 4 genomes
    per host fills its agents for the whole generation, so every decision any network made was a
    scored genome's (cut into 2 parts per host, half of each simulator's agents would idle)."""
    evaluator, config, pairs = probe_hosts(tmp_path, agents=4, pop=8)
    try:
        evaluator.evaluate(pairs, config)
        assert evaluator._hosts.agents() == 4
        assert [len(p) for p in evaluator._runner.parts] == [4, 4]
        stats = evaluator.last_stats
        assert stats.episodes == 8 and all(len(r) == 1 for r in evaluator.episode_returns.values())
        assert stats.agent_steps == stats.scored_steps == 8 * 5
    finally:
        evaluator.close()


def test_a_generation_one_simulator_can_hold_runs_as_one_part(tmp_path):
    evaluator, config, pairs = probe_hosts(tmp_path, agents=8, pop=6)
    try:
        evaluator.evaluate(pairs, config)
        assert [len(p) for p in evaluator._runner.parts] == [6]
        assert evaluator.last_stats.episodes == 6
    finally:
        evaluator.close()


@pytest.mark.slow
def test_envs_from_the_command_line_match_the_config_key(tmp_path):
    plain = ball_cfg(tmp_path, name="plain.cfg", generations=2)
    keyed = ball_cfg(tmp_path, name="keyed.cfg", generations=2, envs=2)
    flag = neatpar_cli("evolve", "--config", plain, "--envs", "2", "--out", str(tmp_path / "flag"))
    key = neatpar_cli("evolve", "--config", keyed, "--out", str(tmp_path / "key"))
    assert flag.returncode == 0 and key.returncode == 0, flag.stderr + key.stderr
    assert "simulators: 2, each in its own env host (local processes)" in flag.stdout
    assert stats_rows(tmp_path / "flag") == stats_rows(tmp_path / "key")


@pytest.mark.parametrize("over, args, message", [
    ({}, ["--envs", "0"], "--envs 0 is out of range: use an integer from 1 to 1024"),
    ({"envs": "0"}, [], "[neatpar] envs = 0 is out of range"),
    ({"envs": 2, "inference": "pool"}, [], "inference = pool with env hosts"),
    ({"envs": 2, "env": "editor"}, [], "env = editor connects to the one Unity Editor"),
    ({"backend": "cloud"}, [], "[neatpar] backend = cloud is not one of local, ray"),
    ({}, ["--backend", "cloud"], "--backend cloud is not one of local, ray"),
])
def test_bad_scale_out_settings_are_one_line_errors(tmp_path, over, args, message):
    out = tmp_path / "run"
    result = neatpar_cli("evolve", "--config", ball_cfg(tmp_path, **over), "--out", str(out), *args)
    assert result.returncode == 2
    assert result.stderr.strip().count("\n") == 0 and message in result.stderr, result.stderr
    assert not out.exists()
