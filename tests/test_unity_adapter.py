"""The Unity adapter's own rules: which observations a NEAT network can take, and how network
outputs become actions (clipping, masks)."""
import numpy as np
import pytest
from mlagents_envs.base_env import ActionSpec, BehaviorSpec, DimensionProperty, ObservationSpec, ObservationType

from neatpar.envs.base import Layout
from neatpar.envs.unity.adapter import layout_of, outputs_to_actions
from neatpar.errors import EnvironmentMismatch


def sensor(*shape, variable=False):
    properties = (DimensionProperty.VARIABLE_SIZE, DimensionProperty.NONE) if variable else \
        (DimensionProperty.NONE,) * len(shape)
    return ObservationSpec(shape, properties, ObservationType.DEFAULT, "sensor")


def test_layout_of_vector_sensors_and_hybrid_actions():
    spec = BehaviorSpec([sensor(8), sensor(3)], ActionSpec(2, (3, 2)))
    assert layout_of("A", spec) == Layout((8, 3), 2, (3, 2))
    assert layout_of("A", spec).inputs == 11 and layout_of("A", spec).outputs == 7


@pytest.mark.parametrize("observation, message", [
    (sensor(84, 84, 3), r"behavior 'A' has visual observations \(84, 84, 3\) \(a camera"),
    (sensor(20, 6, variable=True), r"variable-length observation \(20, 6\) \(a BufferSensor, 20 entities of 6"),
    (sensor(5, 5), r"2-dimensional observation \(5, 5\)"),
])
def test_observations_a_network_cannot_take_are_refused_by_name(observation, message):
    with pytest.raises(EnvironmentMismatch, match=message):
        layout_of("A", BehaviorSpec([sensor(4), observation], ActionSpec(1, ())))


def test_outputs_to_actions_clip_and_respect_masks():
    layout = Layout((8,), 1, (3, 2))
    outputs = np.array([[5.0, 0.9, 0.1, 0.5, 0.2, 0.3], [-5.0, 0.9, 0.8, 0.7, 0.9, 0.1]])
    mask = [np.array([[True, False, False], [True, True, True]]), np.array([[False, True], [False, False]])]
    action = outputs_to_actions(layout, outputs, mask)
    assert action.continuous.tolist() == [[1.0], [-1.0]]
    assert action.discrete.tolist() == [[2, 0], [0, 0]]  # best allowed; all forbidden falls back to 0
