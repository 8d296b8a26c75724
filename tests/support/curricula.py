"""Environment-parameter YAML files the curriculum tests share: every kind of value, and curricula
with both measures."""
import os

# Constants, the three samplers (one seeded), and two curricula: wall by progress then reward,
# target by progress.
FULL_YAML = """\
agents_bonus: 2
mass:
  sampler_type: uniform
  sampler_parameters: {min_value: 0.5, max_value: 1.5, seed: 7}
gravity:
  sampler_type: gaussian
  sampler_parameters: {mean: 9.81, st_dev: 0.5}
scale:
  sampler_type: multirangeuniform
  sampler_parameters:
    intervals: [[0.8, 1.0], [1.2, 1.5]]
wall:
  curriculum:
    - name: low
      completion_criteria: {behavior: Ball3D, measure: progress, threshold: 0.3}
      value: 0.5
    - name: middle
      completion_criteria: {behavior: Ball3D, measure: reward, threshold: 5.0, min_lesson_length: 2,
                            signal_smoothing: false, require_reset: true}
      value: {sampler_type: uniform, sampler_parameters: {min_value: 1.0, max_value: 2.0}}
    - name: high
      value: 3.0
target:
  curriculum:
    - name: near
      completion_criteria: {behavior: Ball3D, measure: progress, threshold: 0.5}
      value: 1
    - name: far
      value: 4
"""


def write_yaml(folder, text: str, name: str = "parameters.yaml") -> str:
    """`text` written to folder/name; its path."""
    path = os.path.join(str(folder), name)
    with open(path, "w") as stream:
        stream.write(text)
    return path


def parameter_payload(send) -> bytes:
    """The message mlagents-envs' EnvironmentParametersChannel queues for one call, e.g.
    `lambda c: c.set_float_parameter("goal", 0.5)`."""
    from mlagents_envs.side_channel.environment_parameters_channel import EnvironmentParametersChannel
    channel = EnvironmentParametersChannel()
    send(channel)
    return bytes(channel.message_queue[0])
