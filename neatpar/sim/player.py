"""The game side of the ML-Agents protocol (communication API 1.5.0): what a Unity player does.

Python's UnityEnvironment is the gRPC server; the player is its client. It sends the
initialization output, then an empty message whose reply is Python's first RESET, then one
output per input: observations, rewards, done flags, masks and group ids for every behavior,
announcing a behavior's BrainParameters with its first AgentInfos. Actions are applied by
position, in the order of the previous output's decision requests. A non-200 status or any gRPC
error ends the player: that is also how an orphaned player notices that Python is gone.

Accepts the arguments Unity players get (`--mlagents-port`, `-logFile PATH`, `-nographics`,
`-batchmode`; other Unity flags are ignored) plus task options (`--agents`, `--areas`,
`--max-steps`). Writes nothing to stdout; logs, with each step's compute time, to -logFile.
"""
from __future__ import annotations

import os
import sys
import time
import traceback
from dataclasses import dataclass, field

import numpy as np

from . import side_channels
from .tasks import TASKS, OptionError

COMMUNICATION_VERSION = "1.5.0"
PACKAGE_VERSION = "2.0.0"  # the com.unity.ml-agents version this player stands in for
STATUS_OK, STEP, RESET, QUIT = 200, 0, 1, 2
EXIT_USAGE = 2

_TASK_OPTIONS = {"--agents": "agents", "--areas": "areas", "--max-steps": "max_steps", "--stats": "stats",
                 "--visual": "visual", "--seed": "seed"}
# stats = 1: send episode return and length on the Stats side channel; seed: reseed at the next
# reset (so a run can ask for the same episodes again, e.g. when it resumes)
PLAYER_OPTIONS = ("stats", "seed")
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
        if arg in ("--mlagents-port", "-logFile", "-logfile") or arg in _TASK_OPTIONS:
            if not rest:
                raise UsageError(f"{arg} needs a value")
            value = rest.pop(0)
            if arg == "--mlagents-port":
                port = _integer(arg, value)
            elif arg.lower() == "-logfile":
                log_file = value
            else:
                options[_TASK_OPTIONS[arg]] = _integer(arg, value)
        elif arg not in _UNITY_FLAGS:
            ignored.append(arg)
    if port is None or not 0 < port < 65536:
        raise UsageError(f"--mlagents-port must be a TCP port, got {port}")
    return Settings(task, port, log_file, options, ignored)


def _integer(flag: str, value: str) -> int:
    try:
        return int(value)
    except ValueError:
        raise UsageError(f"{flag} must be an integer, got {value!r}") from None


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
    """One simulated environment behind the protocol: builds outputs, applies inputs."""

    def __init__(self, settings: Settings, log: Log):
        self.settings, self.log = settings, log
        self.options = dict(settings.options)
        self.pending_options: dict = {}
        self.rng = np.random.default_rng(0)
        self.task = None
        self.announced: set[str] = set()
        self.returns: dict[str, np.ndarray] = {}
        self.lengths: dict[str, np.ndarray] = {}
        self.stats = bytearray()

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
        if rl_input.command == RESET or self.task is None:
            self.reset()
            return self.output(None)
        return self.output(self.task.step(self.actions(rl_input.agent_actions)))

    def reset(self) -> None:
        """Start every agent's episode; options sent since the last reset take effect now (an
        option the task does not accept is logged and left out, never fatal mid-run)."""
        if self.pending_options:
            candidate = {**self.options, **self.pending_options}
            self.pending_options.clear()
            try:
                make_task(self.settings.task, candidate, np.random.default_rng(0))
                self.options = candidate
            except OptionError as error:
                self.log(f"error: environment parameters not applied: {error}")
            else:
                if "seed" in candidate:
                    self.seed(candidate["seed"])
        self.task = make_task(self.settings.task, self.options, self.rng)
        self.returns = {b.name: np.zeros(len(self.task.agent_ids(b.name))) for b in self.task.behaviors}
        self.lengths = {b.name: np.zeros(len(self.task.agent_ids(b.name)), np.int64) for b in self.task.behaviors}
        self.log(f"reset: {self.settings.task} with {self.options or 'default options'}")

    def actions(self, agent_actions) -> dict:
        """{behavior: (continuous (n, c), discrete (n, d))}, taken by position."""
        out = {}
        for behavior in self.task.behaviors:
            n = len(self.task.agent_ids(behavior.name))
            sent = agent_actions[behavior.name].value if behavior.name in agent_actions else []
            if len(sent) not in (0, n):
                self.log(f"warning: {len(sent)} actions for {behavior.name}, expected {n}; missing ones are 0")
            sent = list(sent[:n])
            c, d = behavior.continuous, len(behavior.branches)
            continuous = np.zeros((n, c), np.float32)
            discrete = np.zeros((n, d), np.int64)
            if sent and c:
                continuous[:len(sent)] = [(list(a.continuous_actions) + [0.0] * c)[:c] for a in sent]
            if sent and d:
                discrete[:len(sent)] = [(list(a.discrete_actions) + [0] * d)[:d] for a in sent]
            out[behavior.name] = (continuous, discrete)
        return out

    def output(self, results):
        """The output for this step: terminal entries first for agents whose episode ended,
        then a decision request for every agent (a restarted agent asks again at once)."""
        from mlagents_envs.communicator_objects.unity_message_pb2 import UnityMessageProto
        message = UnityMessageProto()
        message.header.status = STATUS_OK
        unity_output = message.unity_output
        terminal = {}
        if results is not None:
            for behavior in self.task.behaviors:
                terminal[behavior.name] = self.task.observe(behavior.name)
            self.task.restart_done(results)
        for behavior in self.task.behaviors:
            infos = unity_output.rl_output.agentInfos[behavior.name].value
            self._add_infos(infos, behavior, results, terminal.get(behavior.name))
            if behavior.name not in self.announced:
                self._announce(unity_output.rl_initialization_output, behavior)
        unity_output.rl_output.side_channel = bytes(self.stats)
        self.stats.clear()
        return message

    def _announce(self, init, behavior) -> None:
        brain = init.brain_parameters.add()
        brain.brain_name = behavior.name
        brain.is_training = True
        brain.action_spec.num_continuous_actions = behavior.continuous
        brain.action_spec.num_discrete_actions = len(behavior.branches)
        brain.action_spec.discrete_branch_sizes.extend(behavior.branches)
        self.announced.add(behavior.name)

    def _add_infos(self, infos, behavior, results, terminal_obs) -> None:
        """One AgentInfoProto per agent (two for an agent whose episode just ended). The hot loop
        of the player: fields left at their default are not set."""
        name = behavior.name
        ids = self.task.agent_ids(name).tolist()
        obs = self.task.observe(name).tolist()
        masks = self.task.masks(name)
        masks = masks.tolist() if masks is not None else [None] * len(ids)
        groups = self.task.group_ids(name).tolist()
        if results is None:
            reward = group_reward = [0.0] * len(ids)
            done, term, interrupted = (), None, None
        else:
            r = results[name]
            reward, group_reward = r.reward.tolist(), r.group_reward.tolist()
            done = set(np.flatnonzero(r.done).tolist())
            self._track_episodes(name, r)
            term, interrupted = terminal_obs.tolist(), r.interrupted.tolist()
        add, size = infos.add, behavior.observations
        visual = getattr(self.task, "visual_shape", None)
        for row, agent in enumerate(ids):
            if row in done:
                info = add()
                info.id, info.done, info.max_step_reached = agent, True, interrupted[row]
                _values(info, reward[row], group_reward[row], groups[row])
                _observation(info, size, term[row])
                if visual is not None:
                    _visual(info, visual)
                reward_now = group_now = 0.0
            else:
                reward_now, group_now = reward[row], group_reward[row]
            info = add()
            info.id = agent
            _values(info, reward_now, group_now, groups[row])
            if masks[row] is not None:
                info.action_mask.extend(masks[row])
            _observation(info, size, obs[row])
            if visual is not None:
                _visual(info, visual)

    def _track_episodes(self, name: str, result) -> None:
        self.returns[name] += result.reward + result.group_reward
        self.lengths[name] += 1
        for row in np.flatnonzero(result.done) if self.options.get("stats") else ():
            self.stats += side_channels.stat("Environment/Cumulative Reward", float(self.returns[name][row]))
            self.stats += side_channels.stat("Environment/Episode Length", float(self.lengths[name][row]))
        self.returns[name][result.done] = 0.0
        self.lengths[name][result.done] = 0

    # ------------------------------------------------------------ side channels

    def read_side_channels(self, data: bytes) -> None:
        for channel, payload in side_channels.split(data):
            if channel == side_channels.ENVIRONMENT_PARAMETERS:
                key, value = side_channels.read_environment_parameter(payload)
                if value is None:
                    self.log(f"environment parameter {key!r}: samplers are not supported, ignored")
                elif value.is_integer():
                    self.pending_options[key] = int(value)  # takes effect at the next reset
                    self.log(f"environment parameter {key} = {value:g} (from the next reset)")
                else:
                    self.log(f"environment parameter {key} = {value}: not an integer, ignored")
            elif channel == side_channels.ENGINE_CONFIGURATION:
                self.log(f"engine configuration {side_channels.read_engine_configuration(payload)}")
            elif channel == side_channels.TRAINING_ANALYTICS:
                self.log("training analytics received")
            else:
                self.log(f"side channel {channel} is not handled here ({len(payload)} bytes ignored)")


def make_task(name: str, options: dict, rng: np.random.Generator):
    """The task `name` with `options`; unknown options are errors."""
    cls = TASKS[name]
    unknown = sorted(set(options) - set(cls.OPTIONS) - set(PLAYER_OPTIONS))
    if unknown:
        raise OptionError(f"task {name!r} has no option {', '.join(unknown)} "
                          f"(it has {', '.join(cls.OPTIONS + PLAYER_OPTIONS)})")
    if options.get("stats", 0) not in (0, 1):
        raise OptionError(f"stats must be 0 or 1, got {options['stats']!r}")
    if not isinstance(options.get("seed", 0), int) or options.get("seed", 0) < 0:
        raise OptionError(f"seed must be a non-negative integer, got {options['seed']!r}")
    return cls({k: v for k, v in options.items() if k in cls.OPTIONS}, rng)


def _values(info, reward: float, group_reward: float, group: int) -> None:
    if reward:
        info.reward = reward
    if group_reward:
        info.group_reward = group_reward
    if group:
        info.group_id = group


def _visual(info, shape: tuple) -> None:
    observation = info.observations.add()
    observation.shape.extend(shape)
    observation.float_data.data.extend([0.5] * int(np.prod(shape)))
    observation.dimension_properties.extend([2, 2, 1])  # height, width (translational), channels


def _observation(info, size: int, values: list) -> None:
    observation = info.observations.add()
    observation.shape.append(size)
    observation.float_data.data.extend(values)
    observation.dimension_properties.append(1)


def serve(settings: Settings, log: Log) -> int:
    """Connect to Python's server and play until told to stop; returns the exit code."""
    import grpc
    from mlagents_envs.communicator_objects.unity_message_pb2 import UnityMessageProto

    player = Player(settings, log)
    # Probe the options now, so that a bad value ends the player before the handshake.
    make_task(settings.task, dict(settings.options), np.random.default_rng(0))
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
    except Exception:  # noqa: BLE001 - the log is where a player reports what killed it
        log("error: the simulator failed:\n" + traceback.format_exc())
        return 1
    finally:
        log.close()
