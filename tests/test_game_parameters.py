"""The game side of EnvironmentParameters (neatpar_sim/game_parameters.py): .NET's seeded
System.Random emulated bit for bit, Sampler.cs's samplers drawing anew at each GetWithDefault, and
the ball build reading mass, scale and gravity in each agent's OnEpisodeBegin, driven over the real
wire by mlagents-envs' own EnvironmentParametersChannel."""
import math

import numpy as np
from mlagents_envs.side_channel.environment_parameters_channel import EnvironmentParametersChannel

from neatpar_sim.game_parameters import DotNetRandom, GameParameters, RandomNormal
from support.curricula import parameter_payload
from support.simulators import simulator, step_with, zeros_continuous


def test_dot_net_random_gives_the_values_dot_net_gives():
    """Known outputs of .NET's `new Random(seed)` (the values .NET Framework, Mono and .NET's
    seeded constructor print): Next() twice for seeds 0 and 1, NextDouble() for seed 0."""
    zero, one = DotNetRandom(0), DotNetRandom(1)
    assert [zero.next(), zero.next()] == [1559595546, 1755192844]
    assert [one.next(), one.next()] == [534011718, 237820880]
    assert DotNetRandom(0).next_double() == 1559595546 / (2**31 - 1)
    # Negative seeds take their absolute value; int.MinValue stands for int.MaxValue.
    assert DotNetRandom(-1).next() == DotNetRandom(1).next()
    assert DotNetRandom(-2**31).next() == DotNetRandom(2**31 - 1).next()
    values = [DotNetRandom(7).next_double() for _ in range(2)]
    assert values[0] == values[1] and 0.0 <= values[0] < 1.0


def test_each_get_with_default_draws_anew_as_sampler_cs_does():
    parameters = GameParameters()
    assert parameters.get_with_default("mass", 1.5) == 1.5
    parameters.receive(parameter_payload(lambda c: c.set_float_parameter("mass", 2.0)))
    assert [parameters.get_with_default("mass", 1.0) for _ in range(2)] == [2.0, 2.0]

    parameters.receive(parameter_payload(lambda c: c.set_uniform_sampler_parameters("mass", 1.0, 3.0, 5)))
    draws = [parameters.get_with_default("mass", 0.0) for _ in range(3)]
    reference = DotNetRandom(5)
    assert draws == [float(np.float32(np.float32(1.0) + np.float32(reference.next_double()) * np.float32(2.0)))
                     for _ in range(3)]
    assert len(set(draws)) == 3

    parameters.receive(parameter_payload(lambda c: c.set_gaussian_sampler_parameters("g", 9.81, 0.5, 3)))
    normal = RandomNormal(3, float(np.float32(9.81)), 0.5)
    assert [parameters.get_with_default("g", 0.0) for _ in range(4)] == \
        [float(np.float32(normal.next_double())) for _ in range(4)]
    many = [parameters.get_with_default("g", 0.0) for _ in range(4000)]
    assert abs(np.mean(many) - 9.81) < 0.05 and abs(np.std(many) - 0.5) < 0.05

    parameters.receive(parameter_payload(
        lambda c: c.set_multirangeuniform_sampler_parameters("s", [(0.0, 1.0), (10.0, 13.0)], 11)))
    many = np.array([parameters.get_with_default("s", -1.0) for _ in range(4000)])
    assert ((0.0 <= many) & (many <= 1.0) | (10.0 <= many) & (many <= 13.0)).all()
    assert 0.7 < np.mean(many >= 10.0) < 0.8   # the second interval is 3/4 of the length
    assert parameters.kinds == {"mass": "uniform", "g": "gaussian", "s": "multirangeuniform"}


def test_the_multirange_sampler_picks_its_interval_with_a_second_generator_seeded_seed_plus_one():
    """Multinomial(seed + 1) picks the interval from the float cumulative lengths; the draw inside
    it comes from System.Random(seed)."""
    parameters = GameParameters()
    parameters.receive(parameter_payload(
        lambda c: c.set_multirangeuniform_sampler_parameters("s", [(0.0, 1.0), (2.0, 3.0)], 4)))
    picker, inside = DotNetRandom(5), DotNetRandom(4)
    for _ in range(20):
        second = np.float32(picker.next_double()) > np.float32(0.5)
        low = 2.0 if second else 0.0
        expected = float(np.float32(np.float32(low) + np.float32(inside.next_double()) * np.float32(1.0)))
        assert parameters.get_with_default("s", 0.0) == expected


def first_ends(scale_message, tmp_path) -> tuple[int, str]:
    """Agents of the ball build (24) whose episode ends on the first step, and the player's log."""
    params = EnvironmentParametersChannel()
    with simulator("ball", args=["--agents", "24"], log_folder=str(tmp_path), side_channels=[params]) as env:
        scale_message(params)
        env.reset()
        step_with(env, "Ball3D?team=0", zeros_continuous)
        _, terminal = env.get_steps("Ball3D?team=0")
        ended = len(terminal)
    return ended, open(next(tmp_path.glob("Player-*.log"))).read()


def test_the_ball_build_reads_scale_at_each_episode_begin(tmp_path):
    """A ball of scale 5 leaves 0.5 of the platform's half-width of 2.5: most balls start beyond it
    and fall at once; a uniform scale from 1 to 1.01 leaves them all on."""
    big, log = first_ends(lambda p: p.set_float_parameter("scale", 5.0), tmp_path / "big")
    small, log_small = first_ends(lambda p: p.set_uniform_sampler_parameters("scale", 1.0, 1.01, 2), tmp_path / "small")
    assert big > 12 and small == 0
    message = parameter_payload(lambda c: c.set_uniform_sampler_parameters("scale", 1.0, 1.01, 2))
    assert f"environment parameter message scale uniform {message.hex()}" in log_small
    assert "kept, unread" not in log + log_small
    assert math.isclose(big / 24, 0.8, abs_tol=0.2)
