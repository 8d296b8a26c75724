"""The game side of the ML-Agents protocol (communication API 1.5.0): what a Unity player does.

Python's UnityEnvironment is the gRPC server; the player is its client. It sends the
initialization output, then an empty message whose reply is Python's first RESET, then one
output per input. Between two exchanges the academy (academy.py) runs one or more academy steps,
as ML-Agents' Academy does: an output carries the infos queued since the previous one (terminal
infos first, then decision requests), and a behavior's BrainParameters ride with the first output
that carries an info of it. Actions are applied by position, in the order of the previous
output's decision requests. A non-200 status or any gRPC error ends the player: that is also how
an orphaned player notices that Python is gone.

Started as `python -m neatpar_sim TASK ARGS` does (the launchers in unity_builds/ do that; on
Windows, neatpar's `neatpar-sim` program runs it for the task a NAME.cmd names). Accepts the
arguments Unity players get (`--mlagents-port`, `-logFile PATH`, `-nographics`,
`-batchmode`; other Unity flags, which start with one dash, are ignored with their value) plus task
and academy options (`--agents 4`, `--decision-period 5`, `--spawn-after 0,3`: a comma-separated
list gives one value per behavior). Any other argument (a misspelt `--agnts 32`) ends the player
with a usage error, so that a typo never leaves a run on the default values. Writes nothing to
stdout; logs its arguments, and each exchange's compute time, to -logFile. A task that draws
frames (Task.render) is announced on neatpar's Frames side channel (side_channels.py), and then
sends the frames Python asks for.
"""
from __future__ import annotations

import difflib
import io
import os
import sys
import time
import traceback
from dataclasses import dataclass, field

import numpy as np

from . import render, side_channels
from .academy import ACADEMY_OPTIONS, Academy, Outgoing, requesters
from .game_parameters import GameParameters
from .spec import MaskedActionError, OptionError, Task, renders, unknown_options
from .tasks import TASKS

COMMUNICATION_VERSION = "1.5.0"
PACKAGE_VERSION = "2.0.0"  # the com.unity.ml-agents version this player stands in for
STATUS_OK, STEP, RESET, QUIT = 200, 0, 1, 2
EXIT_USAGE = 2

# stats = 1: send episode statistics on the Stats side channel; seed: reseed at the next reset (so
# a run can ask for the same episodes again, e.g. when it resumes); strict_masks = 1: a discrete
# action that the agent's mask forbids ends the player with an error (without: a line in its log;
# Unity itself executes it); frames = 0: announce no Frames channel, as a Unity game without it
PLAYER_OPTIONS = ("stats", "seed", "strict_masks", "frames")
EXIT_MASKED_ACTION = 3
_OPTIONS = tuple(dict.fromkeys(o for cls in TASKS.values() for o in cls.OPTIONS)) + ACADEMY_OPTIONS + PLAYER_OPTIONS
_FLAGS = {"--" + option.replace("_", "-"): option for option in _OPTIONS}
_UNITY_FLAGS = {"-nographics", "-batchmode"}


class UsageError(ValueError):
    """A bad command-line argument."""


@dataclass
class Settings:
    task: str
    port: int
    log_file: str | None = None
    options: dict = field(default_factory=dict)
    ignored: list = field(default_factory=list)


def parse_args(argv: list[str]) -> Settings:
    """Unity-style arguments: known ones are read, unknown Unity flags are ignored."""
    if not argv or argv[0] not in TASKS:
        raise UsageError(f"first argument must be a task ({', '.join(sorted(TASKS))}), got {argv[:1]}")
    task, port, log_file, options, ignored = argv[0], None, None, {}, []
    rest = list(argv[1:])
    while rest:
        arg = rest.pop(0)
        if arg in ("--mlagents-port", "-logFile", "-logfile") or arg in _FLAGS:
            if not rest:
                raise UsageError(f"{arg} needs a value")
            value = rest.pop(0)
            if arg == "--mlagents-port":
                port = _integer(arg, value)
            elif arg.lower() == "-logfile":
                log_file = value
            else:
                options[_FLAGS[arg]] = _option_value(arg, value)
        elif arg in _UNITY_FLAGS:
            continue
        elif arg.startswith("-") and not arg.startswith("--") and len(arg) > 1:
            ignored.append(arg)  # a Unity player flag (-screen-width 640): Unity's, not the task's
            if rest and not rest[0].startswith("-"):
                ignored.append(rest.pop(0))
        else:
            raise UsageError(_unknown(task, arg))
    if port is None or not 0 < port < 65536:
        raise UsageError(f"--mlagents-port must be a TCP port, got {port}")
    return Settings(task, port, log_file, options, ignored)


def _unknown(task: str, arg: str) -> str:
    """The usage error of an argument the build does not take, with the close option if any."""
    known = ["--" + o.replace("_", "-") for o in TASKS[task].OPTIONS + ACADEMY_OPTIONS + PLAYER_OPTIONS]
    options = f"its options are {', '.join(known)}"
    if not arg.startswith("--"):
        return f"{arg!r} is a stray argument: no option of the {task} build takes it; {options}"
    close = difflib.get_close_matches(arg, known, n=1)
    hint = f" (did you mean {close[0]}?)" if close else ""
    return f"{arg} is not an option of the {task} build{hint}; {options}"


def _integer(flag: str, value: str) -> int:
    try:
        return int(value)
    except ValueError:
        raise UsageError(f"{flag} must be an integer, got {value!r}") from None


def _option_value(flag: str, value: str) -> int | tuple[int, ...]:
    """An integer, or a comma-separated list of integers (one per behavior)."""
    if "," not in value:
        return _integer(flag, value)
    try:
        return tuple(int(item) for item in value.split(","))
    except ValueError:
        raise UsageError(f"{flag} must be an integer or a comma-separated list of integers, got {value!r}") from None


class Log:
    """The player's log file (Unity's -logFile); nothing goes to stdout."""

    def __init__(self, path: str | None):
        if path and os.path.dirname(path):
            os.makedirs(os.path.dirname(path), exist_ok=True)
        self._file = open(path, "a", buffering=1 << 16) if path else None
        self._flushed = time.monotonic()

    def __call__(self, text: str) -> None:
        if self._file is None:
            return
        self._file.write(f"{time.strftime('%H:%M:%S')} {text}\n")
        if time.monotonic() - self._flushed > 1.0:
            self.flush()

    def flush(self) -> None:
        if self._file is not None:
            self._file.flush()
            self._flushed = time.monotonic()

    def close(self) -> None:
        if self._file is not None:
            self._file.close()
            self._file = None


class Player:
    """One simulated environment behind the protocol: reads inputs, runs the academy, writes outputs."""

    def __init__(self, settings: Settings, log: Log):
        self.settings, self.log = settings, log
        self.options = dict(settings.options)
        self.pending_options: dict = {}
        self.parameters = GameParameters()   # Academy.Instance.EnvironmentParameters: lives as long as the game
        self.rng = np.random.default_rng(0)
        self.academy = Academy(log)
        self.stats = bytearray()
        self.frames = bytearray()  # Frames records for the next output (only while Python asks)

    # ------------------------------------------------------------ messages

    def initialization_output(self):
        from mlagents_envs.communicator_objects.unity_message_pb2 import UnityMessageProto
        message = UnityMessageProto()
        message.header.status = STATUS_OK
        init = message.unity_output.rl_initialization_output
        init.name = f"neatpar-sim-{self.settings.task}"
        init.communication_version = COMMUNICATION_VERSION
        init.package_version = PACKAGE_VERSION
        caps = init.capabilities
        caps.baseRLCapabilities = caps.concatenatedPngObservations = True
        caps.compressedChannelMapping = caps.hybridActions = caps.trainingAnalytics = True
        caps.variableLengthObservation = caps.multiAgentGroups = True
        if renders(TASKS[self.settings.task]) and self.options.get("frames", 1):
            message.unity_output.rl_output.side_channel = side_channels.frames_announcement(
                render.SIZE, render.SIZE, render.FRAMES_PER_SECOND)
        return message

    def seed(self, seed: int) -> None:
        self.rng = np.random.default_rng(seed)
        self.log(f"seed {seed}")

    def handle(self, message):
        """Answer one input from Python; None means quit."""
        if message.header.status != STATUS_OK:
            self.log(f"status {message.header.status}: closing")
            return None
        rl_input = message.unity_input.rl_input
        self.read_side_channels(rl_input.side_channel)
        if rl_input.command == QUIT:
            self.log("quit command")
            return None
        if rl_input.command == RESET or self.academy.task is None:
            self.reset()
        else:
            self.academy.act(rl_input.agent_actions)
        return self.output(self.academy.advance())

    def reset(self) -> None:
        """Restart the scene; options sent since the last reset take effect now (an option the
        task does not accept is logged and left out, never fatal mid-run)."""
        if self.pending_options:
            candidate = merge_options(self.options, self.pending_options)
            self.pending_options.clear()
            try:
                check_options(self.settings.task, candidate, self.academy.announced_behaviors())
                self.options = candidate
            except OptionError as error:
                self.log(f"error: environment parameters not applied: {error}")
            else:
                if "seed" in candidate:
                    self.seed(candidate["seed"])
        task = make_task(self.settings.task, self.options, self.rng, self.parameters)
        self.academy.record_episodes = bool(self.options.get("stats"))
        self.academy.strict_masks = bool(self.options.get("strict_masks"))
        self.academy.reset(task, requesters(self.options, task))
        self.log(f"reset: {self.settings.task} with {self.options or 'default options'}")

    def output(self, outgoing: Outgoing):
        """The output for one exchange: every queued info, in the order the academy queued them."""
        from mlagents_envs.communicator_objects.unity_message_pb2 import UnityMessageProto
        message = UnityMessageProto()
        message.header.status = STATUS_OK
        unity_output = message.unity_output
        visual = self.academy.task.visual_shape
        for name, batches in outgoing.infos.items():
            infos = unity_output.rl_output.agentInfos[name].value
            sensors = self.academy.rosters[name].behavior.sensors
            for batch in batches:
                _add_infos(infos, batch, visual, sensors)
        for behavior in outgoing.announce:
            _announce(unity_output.rl_initialization_output, behavior)
        for episodes in self.academy.take_episodes():
            self.stats += side_channels.episode_stats(episodes.returns.tolist(), episodes.lengths.tolist())
        for agent, image in self.academy.ends:   # after the frames asked for: the ends they led to
            self.frames += side_channels.frame(agent, image, side_channels.FRAMES_END)
        self.academy.ends, self.academy.watched = [], {}
        unity_output.rl_output.side_channel = bytes(self.stats) + bytes(self.frames)
        self.stats.clear()
        self.frames.clear()
        return message

    # ------------------------------------------------------------ side channels

    def read_side_channels(self, data: bytes) -> None:
        for channel, payload in side_channels.split(data):
            if channel == side_channels.ENVIRONMENT_PARAMETERS:
                key, kind = self.parameters.receive(payload)   # what GetWithDefault reads from now on
                self.log(f"environment parameter message {key} {kind} {payload.hex()}")   # as it arrived
                task = TASKS[self.settings.task]
                if key.partition(".")[0] not in task.OPTIONS + ACADEMY_OPTIONS + PLAYER_OPTIONS:   # a game's
                    if key not in task.READS:
                        self.log(f"environment parameter {key}: no option of the {self.settings.task} build, and its "
                                 f"game does not read it: kept, unread")
                    continue
                value = side_channels.read_environment_parameter(payload)[1]
                if value is None:
                    self.log(f"environment parameter {key!r}: an option takes a number, not a sampler; ignored")
                elif value.is_integer():
                    self.pending_options[key] = int(value)  # takes effect at the next reset
                    self.log(f"environment parameter {key} = {value:g} (from the next reset)")
                else:
                    self.log(f"environment parameter {key} = {value}: not an integer, ignored")
            elif channel == side_channels.ENGINE_CONFIGURATION:
                configuration = side_channels.read_engine_configuration(payload)
                self.log(f"engine configuration {configuration}")
                if "time_scale" in configuration:
                    self.time_scale(configuration["time_scale"])
            elif channel == side_channels.TRAINING_ANALYTICS:
                self.log("training analytics received")
            elif channel == side_channels.FRAMES:
                self.frames += self.frame(side_channels.read_frame_request(payload))
            else:
                self.log(f"side channel {channel} is not handled here ({len(payload)} bytes ignored)")

    def time_scale(self, scale: float) -> None:
        """Time.timeScale: at 1 or less the academy steps in Unity's real time (academy.py)."""
        self.academy.pace(scale)
        if self.academy.step_seconds:
            self.log(f"real time: an academy step every {self.academy.step_seconds * 1e3:g} ms (time scale {scale:g})")

    def frame(self, request: side_channels.FrameRequest) -> bytes:
        """The Frames record answering a request: the agent drawn as it is now (before this
        input's actions execute), or why there is no frame of it. The agent is watched until the
        next output, which also carries its picture at its episode's end should that come first."""
        self.academy.watched.setdefault(request.behavior, set()).add(request.agent)
        task, roster = self.academy.task, self.academy.rosters.get(request.behavior)
        rows = np.zeros(0, np.int64) if roster is None else np.flatnonzero(roster.live & (roster.ids == request.agent))
        if task is None or not len(rows):
            return side_channels.no_frame(request.agent, f"{request.behavior!r} has no agent {request.agent} now")
        image = task.render(request.behavior, int(rows[0]))
        if image is None:
            return side_channels.no_frame(request.agent, f"the {self.settings.task} build draws no frames")
        return side_channels.frame(request.agent, image)


def merge_options(options: dict, later: dict) -> dict:
    """`later` over `options`, in order: a plain key replaces that option's per-behavior `key.INDEX` values."""
    merged = dict(options)
    for key, value in later.items():
        if "." not in key:
            for old in [k for k in merged if k.partition(".")[0] == key and "." in k]:
                del merged[old]
        merged[key] = value
    return merged


def make_task(name: str, options: dict, rng: np.random.Generator, parameters: GameParameters | None = None) -> Task:
    """The task `name` with `options`; unknown options are errors. A task that reads environment
    parameters (its READS) gets `parameters` (an empty set of them when None)."""
    cls = TASKS[name]
    per_behavior = getattr(cls, "PER_BEHAVIOR", ()) + ACADEMY_OPTIONS
    singles = tuple(o for o in cls.OPTIONS + PLAYER_OPTIONS if o not in per_behavior)
    unknown = unknown_options(options, singles, per_behavior)
    if unknown:
        raise OptionError(f"task {name!r} has no option {', '.join(sorted(unknown))} "
                          f"(it has {', '.join(cls.OPTIONS + ACADEMY_OPTIONS + PLAYER_OPTIONS)}; "
                          f"OPTION.INDEX sets one behavior's value of {', '.join(per_behavior)})")
    for switch in ("stats", "strict_masks", "frames"):
        if options.get(switch, 0) not in (0, 1):
            raise OptionError(f"{switch} must be 0 or 1, got {options[switch]!r}")
    if not isinstance(options.get("seed", 0), int) or options.get("seed", 0) < 0:
        raise OptionError(f"seed must be a non-negative integer, got {options['seed']!r}")
    own = {k: v for k, v in options.items() if k.partition(".")[0] in cls.OPTIONS}
    task = cls(own, rng, parameters=parameters or GameParameters()) if cls.READS else cls(own, rng)
    names = [b.name for b in task.behaviors]
    for key in options:
        base, _, index = key.partition(".")
        if index and int(index) >= len(names):
            raise OptionError(f"{key} names behavior {index}, but task {name!r} has {len(names)} here "
                              f"({', '.join(names)}, indexed from 0)")
    return task


def check_options(name: str, options: dict, announced: dict) -> None:
    """Raise OptionError unless `options` make a valid task and academy that keep the behaviors
    already announced to Python unchanged (their observation and action specs are fixed)."""
    task = make_task(name, options, np.random.default_rng(0))
    requesters(options, task)
    for behavior in task.behaviors:
        if behavior.name in announced and announced[behavior.name] != behavior:
            raise OptionError(f"these options change {behavior.name}'s observations or actions, which Python "
                              f"already has; start a new simulator for that")


def _announce(init, behavior) -> None:
    brain = init.brain_parameters.add()
    brain.brain_name = behavior.name
    brain.is_training = True
    brain.action_spec.num_continuous_actions = behavior.continuous
    brain.action_spec.num_discrete_actions = len(behavior.branches)
    brain.action_spec.discrete_branch_sizes.extend(behavior.branches)


def _add_infos(infos, batch, visual, sensors=()) -> None:
    """One AgentInfoProto per agent of the batch: its vector observation (when the behavior has
    one), then its visual sensors' observations. The hot loop of the player: fields left at their
    default are not set."""
    ids, rewards, group_rewards = batch.ids.tolist(), batch.rewards.tolist(), batch.group_rewards.tolist()
    groups, observations = batch.group_ids.tolist(), batch.observations.tolist()
    size = batch.observations.shape[1]
    masks = batch.masks.tolist() if batch.masks is not None else None
    interrupted = batch.interrupted.tolist() if batch.done else None
    add = infos.add
    for row, agent in enumerate(ids):
        info = add()
        info.id = agent
        if batch.done:
            info.done, info.max_step_reached = True, interrupted[row]
        if rewards[row]:
            info.reward = rewards[row]
        if group_rewards[row]:
            info.group_reward = group_rewards[row]
        if groups[row]:
            info.group_id = groups[row]
        if masks is not None:
            info.action_mask.extend(masks[row])
        if size:
            observation = info.observations.add()
            observation.shape.append(size)
            observation.float_data.data.extend(observations[row])
            observation.dimension_properties.append(1)
        if visual is not None:
            _visual(info, visual)
        for sensor, frames in zip(sensors, batch.frames):
            _frame(info.observations.add(), sensor, frames[row])


def _visual(info, shape: tuple) -> None:
    observation = info.observations.add()
    observation.shape.extend(shape)
    observation.float_data.data.extend([0.5] * int(np.prod(shape)))
    observation.dimension_properties.extend([2, 2, 1])  # height, width (translational), channels


def _frame(observation, sensor, frame: np.ndarray) -> None:
    """A visual sensor's observation as ML-Agents writes it (GrpcExtensions.GetObservationProto):
    its shape with dimension properties (translational, translational, none) for 2.x's (height,
    width, channels), (none, translational, translational) for 3.x's (channels, height, width); PNG
    bytes (the channels three by three, each three an RGB PNG as Texture2D.EncodeToPNG writes it,
    one after the other) with the sensor's channel mapping, or the float32 values in the shape's
    order (`frame` is (height, width, channels))."""
    observation.shape.extend(sensor.shape)
    observation.dimension_properties.extend([1, 2, 2] if sensor.channels_first else [2, 2, 1])
    if not sensor.png:
        values = frame.transpose(2, 0, 1) if sensor.channels_first else frame
        observation.float_data.data.extend(values.ravel().tolist())
        return
    observation.compression_type = 1  # CompressionTypeProto.PNG
    observation.compressed_data = png_images(frame)
    observation.compressed_channel_mapping.extend(sensor.mapping)


def png_images(frame: np.ndarray) -> bytes:
    """(height, width, channels) uint8 pixels as RGB PNGs of three channels each (the last padded
    with zeros), one after the other: what a camera (one PNG) or a grid sensor sends."""
    from PIL import Image
    height, width, channels = frame.shape
    padded = np.zeros((height, width, -(-channels // 3) * 3), np.uint8)
    padded[..., :channels] = frame
    out = io.BytesIO()
    for start in range(0, padded.shape[2], 3):
        Image.fromarray(np.ascontiguousarray(padded[..., start:start + 3])).save(out, format="PNG")
    return out.getvalue()


def serve(settings: Settings, log: Log) -> int:
    """Connect to Python's server and play until told to stop; returns the exit code."""
    import grpc
    from mlagents_envs.communicator_objects.unity_message_pb2 import UnityMessageProto

    player = Player(settings, log)
    # Check the options now, so that a bad value ends the player before the handshake.
    check_options(settings.task, dict(settings.options), {})
    channel = grpc.insecure_channel(f"127.0.0.1:{settings.port}", options=[
        ("grpc.max_send_message_length", -1), ("grpc.max_receive_message_length", -1),
        ("grpc.keepalive_time_ms", 2000), ("grpc.keepalive_timeout_ms", 2000)])
    # The generated stub's method, with (de)serialization left to us so that the step's compute
    # time in the log includes the player's share of the wire.
    exchange = channel.unary_unary("/communicator_objects.UnityToExternalProto/Exchange",
                                   request_serializer=None, response_deserializer=None)
    try:
        first = exchange(player.initialization_output().SerializeToString(), wait_for_ready=True, timeout=120)
        player.seed(UnityMessageProto.FromString(first).unity_input.rl_initialization_input.seed)
        empty = UnityMessageProto()
        empty.header.status = STATUS_OK
        data = exchange(empty.SerializeToString())  # its reply is Python's first reset
        steps = 0
        while True:
            started = time.perf_counter()
            output = player.handle(UnityMessageProto.FromString(data))
            if output is None:
                return 0
            payload = output.SerializeToString()
            log(f"step {steps} compute_ms {(time.perf_counter() - started) * 1e3:.3f}")
            steps += 1
            data = exchange(payload)  # no deadline: Python may pause between steps
    except grpc.RpcError as error:
        log(f"connection to Python ended ({error.code().name}): quitting")
        return 0
    finally:
        channel.close()


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    log_path = None
    for flag in ("-logFile", "-logfile"):
        if flag in argv and argv.index(flag) + 1 < len(argv):
            log_path = argv[argv.index(flag) + 1]
    log = Log(log_path)
    log(f"arguments: {' '.join(argv)}")
    try:
        settings = parse_args(argv)
        if settings.ignored:
            log(f"ignored arguments: {' '.join(settings.ignored)}")
        return serve(settings, log)
    except (UsageError, OptionError) as error:
        log(f"error: {error}")
        if log_path is None:  # like a Unity player, speak only to the log when there is one
            sys.stderr.write(f"neatpar simulator: {error}\n")
        return EXIT_USAGE
    except MaskedActionError as error:
        log(f"error: {error}")
        return EXIT_MASKED_ACTION
    except Exception:  # noqa: BLE001 - the log is where a player reports what killed it
        log("error: the simulator failed:\n" + traceback.format_exc())
        return 1
    finally:
        log.close()
