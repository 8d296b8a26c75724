"""Environment parameters' values on the EnvironmentParameters side channel
(neatpar/envs/unity/parameter_messages.py), byte for byte as ML-Agents' trainer lays them out:
the key, data type 0 and a float32 for a constant; data type 1, the seed, the sampler type and its
float32s (a multirangeuniform's as a counted list of the intervals' ends) for a sampler."""
import struct

import pytest
from mlagents_envs.side_channel.environment_parameters_channel import EnvironmentParametersChannel

from neatpar.config.parameter_file import Constant, Gaussian, MultiRangeUniform, Uniform
from neatpar.envs.unity.parameter_messages import send_value


def key(text: str) -> bytes:
    return struct.pack("<i", len(text)) + text.encode()


@pytest.mark.parametrize("value, body", [
    (Constant(2.5, 9), struct.pack("<if", 0, 2.5)),
    (4.0, struct.pack("<if", 0, 4.0)),
    (Uniform(0.5, 1.5, 11), struct.pack("<iiiff", 1, 11, 0, 0.5, 1.5)),
    (Gaussian(9.81, 0.5, -3), struct.pack("<iiiff", 1, -3, 1, 9.81, 0.5)),
    (MultiRangeUniform(((0.0, 1.0), (2.0, 3.5)), 7), struct.pack("<iiii4f", 1, 7, 2, 4, 0.0, 1.0, 2.0, 3.5)),
])
def test_each_value_is_sent_as_the_trainer_sends_it(value, body):
    channel = EnvironmentParametersChannel()
    send_value(channel, "mass", value)
    assert [bytes(m) for m in channel.message_queue] == [key("mass") + body]


def test_anything_else_is_refused():
    with pytest.raises(TypeError, match="no environment parameter value"):
        send_value(EnvironmentParametersChannel(), "mass", "heavy")
