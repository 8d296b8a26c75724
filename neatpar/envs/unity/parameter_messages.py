"""An environment parameter's value as ML-Agents' trainer sends it on the EnvironmentParameters side
channel (trainers/settings.py: each ParameterRandomizationSettings' `apply`): a constant with
set_float_parameter (data type 0, the float), a sampler with set_*_sampler_parameters (data type 1,
its seed, its sampler type, then its floats or, for multirangeuniform, its interval list)."""
from __future__ import annotations

from mlagents_envs.side_channel.environment_parameters_channel import EnvironmentParametersChannel

from ...config.parameter_file import Constant, Gaussian, MultiRangeUniform, Uniform, Value


def send_value(channel: EnvironmentParametersChannel, key: str, value: Value | float) -> None:
    """Queue `key`'s value (a plain number is a constant) on `channel`, for the next message to the game."""
    if isinstance(value, (int, float)):
        channel.set_float_parameter(key, float(value))
    elif isinstance(value, Constant):
        channel.set_float_parameter(key, value.value)
    elif isinstance(value, Uniform):
        channel.set_uniform_sampler_parameters(key, value.min_value, value.max_value, value.seed)
    elif isinstance(value, Gaussian):
        channel.set_gaussian_sampler_parameters(key, value.mean, value.st_dev, value.seed)
    elif isinstance(value, MultiRangeUniform):
        channel.set_multirangeuniform_sampler_parameters(key, [list(pair) for pair in value.intervals], value.seed)
    else:
        raise TypeError(f"{key}: {value!r} is no environment parameter value")
