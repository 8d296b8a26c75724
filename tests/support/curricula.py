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


# The run tests' file (behavior Ball3D, run seed 11): a constant, every sampler, and a curriculum
# of each measure. Unseeded values get 11, 12, ... in file order (ML-Agents' rule): mass 11,
# spare 12, bonus 13, scale's lessons 14 and 15, wall's 16 and 17; gravity keeps its 3.
RUN_YAML = """\
mass:
  sampler_type: uniform
  sampler_parameters: {min_value: 0.5, max_value: 1.5}
gravity:
  sampler_type: gaussian
  sampler_parameters: {mean: 9.81, st_dev: 0.5, seed: 3}
spare:
  sampler_type: multirangeuniform
  sampler_parameters: {intervals: [[0.0, 1.0], [2.0, 3.0]]}
bonus: 2
scale:
  curriculum:
    - name: small
      completion_criteria: {behavior: Ball3D, measure: progress, threshold: 0.25}
      value: 1.0
    - name: large
      value: 1.5
wall:
  curriculum:
    - name: easy
      completion_criteria: {behavior: Ball3D, measure: reward, threshold: 1.3}
      value: 0.0
    - name: hard
      value: {sampler_type: uniform, sampler_parameters: {min_value: 1.0, max_value: 2.0}}
"""


def expected_messages(scale_lesson: int, wall_lesson: int, moved: int = 0) -> list[bytes]:
    """What ML-Agents' trainer sends for RUN_YAML with run seed 11 in these lessons: every
    parameter's current value, in file order (get_current_samplers, each value's `apply`); the
    samplers' seeds `moved` on, as neatpar moves them for rounds other than a generation's first
    (parameter_file.moved_draws: the reset's simulator seed less the run's part of it)."""
    sends = [lambda c: c.set_uniform_sampler_parameters("mass", 0.5, 1.5, 11 + moved),
             lambda c: c.set_gaussian_sampler_parameters("gravity", 9.81, 0.5, 3 + moved),
             lambda c: c.set_multirangeuniform_sampler_parameters("spare", [[0.0, 1.0], [2.0, 3.0]], 12 + moved),
             lambda c: c.set_float_parameter("bonus", 2.0),
             lambda c: c.set_float_parameter("scale", (1.0, 1.5)[scale_lesson]),
             (lambda c: c.set_float_parameter("wall", 0.0)) if wall_lesson == 0 else
             (lambda c: c.set_uniform_sampler_parameters("wall", 1.0, 2.0, 17 + moved))]
    return [parameter_payload(send) for send in sends]


def received_per_reset(log_text: str) -> list[tuple[int | None, list[bytes]]]:
    """A stand-in player's log as (the seed of each reset, the EnvironmentParameters messages
    other than `seed` that came with or since the previous reset)."""
    import re
    found, messages = [], []
    for line in log_text.splitlines():
        sent = re.search(r"environment parameter message (\S+) \S+ ([0-9a-f]+)$", line)
        if sent and sent.group(1) != "seed":
            messages.append(bytes.fromhex(sent.group(2)))
        if re.search(r"\breset: ", line):
            seed = re.search(r"'seed': (\d+)", line)
            found.append((int(seed.group(1)) if seed else None, messages))
            messages = []
    return found
