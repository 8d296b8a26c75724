"""The bridge: the one UnityEnvironment of a run, owned by the process that created it.

`SimulatorBridge` creates the environment lazily (nothing connects until the first episode needs
it), refuses to be pickled and to be created in a child process (unless an env host that owns
its own simulator asks), and talks to the game through neatpar's `LocalCommunicator`
(communicator.py).

The environment's step and reset read the game's reply and write the step input in bulk
(bulk.py) instead of through one protobuf object per agent; what bulk.py does not read itself it
leaves to mlagents-envs' own code. `NEATPAR_BULKWIRE=0` in the environment when a bridge launches
its game (or `SimulatorBridge(..., bulk=False)`) keeps mlagents-envs' own conversions throughout.

Besides ML-Agents' own side channels the bridge registers neatpar's Frames channel (frames.py),
which learns from the game's first message whether it can send pictures of its agents. A `Display`
launches the game with graphics, in a window, at real-time speed, for a person to watch.
"""
from __future__ import annotations

import atexit
import logging
import multiprocessing
import os
from dataclasses import dataclass
from typing import Callable, Mapping

from mlagents_envs import environment as mlagents_environment
from mlagents_envs.environment import UnityEnvironment
from mlagents_envs.exception import (
    UnityCommunicatorStoppedException,
    UnityEnvironmentException,
    UnityTimeOutException,
    UnityWorkerInUseException,
)
from mlagents_envs.side_channel.engine_configuration_channel import EngineConfigurationChannel
from mlagents_envs.side_channel.environment_parameters_channel import EnvironmentParametersChannel
from mlagents_envs.side_channel.stats_side_channel import StatsSideChannel
from mlagents_envs.timers import hierarchical_timer

from ...config.parameter_file import Value
from ...errors import ConfigError, LiveHandleError, SimulatorError
from ...parallel.handles import install_exit_hooks
from .builds import SIM_PROGRAM, Build, resolve_build
from .bulk import decode_output, encode_step
from .communicator import BASE_PORT, STATUS_OK, LocalCommunicator, message_bytes, port_free
from .frames import FrameChannel
from .parameter_messages import send_value

EDITOR_PORT = 5004
PORT_TRIES = 64
BULK_SWITCH = "NEATPAR_BULKWIRE"
log = logging.getLogger("neatpar")


class _BridgeEnvironment(UnityEnvironment):
    """UnityEnvironment with neatpar's communicator (its supported override point) and, with
    `bulk`, its step and reset on the bulk codec (bulk.py); their effect on the environment is
    mlagents-envs' own: specs, states, side channels, errors and log lines. `on_process` is called
    with the game process once it started, `on_editor` with the port once it listens for the Unity
    Editor (no process to start)."""

    def __init__(self, *args, on_process=None, on_editor: Callable[[int], None] | None = None, bulk: bool = True,
                 frames: FrameChannel | None = None, **kwargs):
        self._on_process = on_process
        self._on_editor = on_editor
        self._bulk = bulk
        self._frames = frames
        self._fallbacks_logged: set[str] = set()
        self.game_name = ""   # the name the game gives itself in its first message
        try:
            super().__init__(*args, **kwargs)
        except BaseException:
            # UnityEnvironment registers its atexit close before it can fail (port taken, no
            # connection, a signal mid-handshake): close what it made now, server and game, so that
            # nothing is left for exit (the callback would raise on a half-made object).
            atexit.unregister(self._close)
            if hasattr(self, "_communicator"):
                self._close(0)
            raise

    def _send_academy_parameters(self, init_parameters):
        # The first call after the game process starts: report it before waiting for the game,
        # so that a host stopped mid-handshake can still kill it.
        if self._on_process is not None and self._process is not None:
            self._on_process(self._process)
        if self._on_editor is not None and self._process is None:   # listening for the Editor now
            self._on_editor(self._port)
        output = super()._send_academy_parameters(init_parameters)
        self.game_name = output.rl_initialization_output.name
        if self._frames is not None:  # a game that sends frames says so in this first message
            self._frames.launched(output.rl_output.side_channel)
        return output

    @staticmethod
    def _get_communicator(worker_id, base_port, timeout_wait):
        return LocalCommunicator(worker_id, base_port, timeout_wait)

    def reset(self) -> None:
        if not self._bulk:
            return super().reset()
        if not self._loaded:
            raise UnityEnvironmentException("No Unity environment is loaded.")
        self._take_reply(self._communicator.exchange_bytes(message_bytes(self._generate_reset_input()),
                                                           self._poll_process))
        self._is_first_message = False
        self._env_actions.clear()

    def step(self) -> None:
        if not self._bulk:
            return super().step()
        with hierarchical_timer("UnityEnvironment.step"):  # mlagents-envs' timer names
            self._bulk_step()

    def _bulk_step(self) -> None:
        if self._is_first_message:
            return self.reset()
        if not self._loaded:
            raise UnityEnvironmentException("No Unity environment is loaded.")
        counts = {}
        for name, spec in self._env_specs.items():
            state = self._env_state.get(name)
            counts[name] = len(state[0]) if state is not None else 0
            if name not in self._env_actions:  # mlagents-envs' blanks for actions not set
                self._env_actions[name] = spec.action_spec.empty_action(counts[name])
        message = encode_step(self._env_actions, counts, bytes(self._side_channel_manager.generate_side_channel_messages()))
        with hierarchical_timer("communicator.exchange"):
            reply = self._communicator.exchange_bytes(message, self._poll_process)
        self._take_reply(reply)
        self._env_actions.clear()

    def _take_reply(self, reply: bytes) -> None:
        """The game's reply (its bytes) into the environment, as UnityEnvironment's
        _update_behavior_specs and _update_state take it."""
        decoded = decode_output(reply, self._env_specs)
        if decoded.status != STATUS_OK:
            raise UnityCommunicatorStoppedException("Communicator has exited.")
        for name in decoded.new_specs:
            mlagents_environment.logger.info(f"Connected new brain: {name}")
        self._env_specs.update(decoded.new_specs)
        self._env_state.update(decoded.states)
        self._side_channel_manager.process_side_channel_message(decoded.side_channel)
        for name, reason in decoded.fallbacks.items():
            if name not in self._fallbacks_logged:
                self._fallbacks_logged.add(name)
                log.debug("behavior %r is read by mlagents-envs' own code: %s", name, reason)


@dataclass(frozen=True)
class Display:
    """How a game launched with graphics shows itself (EngineConfiguration: Unity applies the
    resolution as a window, Screen.SetResolution(width, height, false), and the frame rate as
    Application.targetFrameRate); it plays at time scale 1, real time."""
    width: int = 1280
    height: int = 720
    frame_rate: int = 60


def is_stand_in(game_name: str) -> bool:
    """Whether a game is one of neatpar's stand-in builds (neatpar_sim), by the name it gives
    itself in its first message (`neatpar-sim-TASK`; a Unity player's Academy gives its own)."""
    return game_name.startswith(f"{SIM_PROGRAM}-")


def bulk_from_environment() -> bool:
    """The NEATPAR_BULKWIRE switch: on unless it is 0."""
    value = os.environ.get(BULK_SWITCH, "1").strip()
    if value not in ("0", "1", ""):
        raise ConfigError(f"{BULK_SWITCH}={value!r} is not a switch: set it to 1 (the bulk step codec, the "
                          f"default) or 0 (mlagents-envs' own step conversion)")
    return value != "0"


class SimulatorBridge:
    """The main process's lazily created UnityEnvironment and its side channels.

    `env` creates the environment on first use. The object cannot be pickled (the connection
    belongs to this process) and cannot be created in a child process unless `allow_child` is
    given by a host that owns its own simulator. `bulk` chooses the step codec (True: bulk.py,
    False: mlagents-envs' own conversions); None reads NEATPAR_BULKWIRE at each launch.
    `display` launches the game with graphics, in a window, at time scale 1 (no_graphics and
    time_scale are then set aside); `frames` registers the Frames channel (`self.frames`).
    """

    def __init__(self, build: str | None, *, args=(), no_graphics: bool = True, time_scale: float = 20.0,
                 timeout: float = 60.0, log_folder: str | None = None, seed: int = 0,
                 env_parameters=(), worker_id: int = 0, allow_child: bool = False, bulk: bool | None = None,
                 display: Display | None = None, frames: bool = True):
        if multiprocessing.parent_process() is not None and not allow_child:
            raise SimulatorError(
                "a SimulatorBridge can only be created in the main process: the simulator connection "
                "must never exist in (or be copied into) a pool worker")
        found: Build | None = resolve_build(build) if build is not None else None
        self.build = found.program if found is not None else None   # the program that runs
        self._file_name = found.file_name if found is not None else None   # what UnityEnvironment is given
        self.args = list(found.arguments if found is not None else ()) + list(args)
        self.no_graphics, self.time_scale, self.timeout = no_graphics, time_scale, timeout
        self.log_folder, self.seed, self.worker_id = log_folder, seed, worker_id
        if display is not None:   # a person watches: graphics, a window, real time
            self.no_graphics, self.time_scale = False, 1.0
        self.display = display
        self.env_parameters = dict(env_parameters)
        self.engine = EngineConfigurationChannel()
        self.parameters = EnvironmentParametersChannel()
        self.stats = StatsSideChannel()
        self.frames = FrameChannel() if frames else None
        self._env: UnityEnvironment | None = None
        self.launches = 0
        self.on_launch = None  # called with the simulator's PID at each launch (env hosts publish it)
        self._process = None    # the game process of the latest launch, known from its start
        self.bulk = bulk
        self.bulk_in_use: bool | None = None  # the codec of the latest launch

    def __reduce__(self):
        raise LiveHandleError("a SimulatorBridge cannot be pickled or sent to another process: it holds "
                              "the simulator connection, which belongs to the main process")

    @property
    def connected(self) -> bool:
        return self._env is not None

    @property
    def env(self) -> UnityEnvironment:
        """The environment, launched and connected on first use."""
        if self._env is None:
            self._env = self._launch()
        return self._env

    def set_parameter(self, key: str, value: float) -> None:
        """An EnvironmentParameters value, delivered with the next message to the game."""
        self.set_values({key: value})

    def set_values(self, values: Mapping[str, Value | float]) -> None:
        """Environment parameters' values (constants or samplers, parameter_messages.py), sent with
        the next message to the game and again at every launch."""
        for key, value in values.items():
            self.env_parameters[key] = value
            if self._env is not None:
                send_value(self.parameters, key, value)

    def _launch(self) -> UnityEnvironment:
        install_exit_hooks()
        if self.log_folder:
            os.makedirs(self.log_folder, exist_ok=True)
        self.engine.set_configuration_parameters(time_scale=self.time_scale)
        if self.display is not None:
            self.engine.set_configuration_parameters(width=self.display.width, height=self.display.height,
                                                     target_frame_rate=self.display.frame_rate)
        for key, value in self.env_parameters.items():
            send_value(self.parameters, key, value)
        bulk = bulk_from_environment() if self.bulk is None else self.bulk
        tries = 1 if self.build is None else PORT_TRIES
        for worker_id in range(self.worker_id, self.worker_id + tries):
            if self.build is not None and not port_free(BASE_PORT + worker_id):
                continue  # checked first: cheaper than a failed UnityEnvironment()
            try:
                env = _BridgeEnvironment(
                    file_name=self._file_name, worker_id=worker_id, seed=self.seed, no_graphics=self.no_graphics,
                    timeout_wait=int(max(1, self.timeout)), additional_args=self.args,
                    side_channels=[self.engine, self.parameters, self.stats] + ([self.frames] if self.frames else []),
                    log_folder=self.log_folder, base_port=BASE_PORT if self.build is not None else EDITOR_PORT,
                    on_process=self._started, on_editor=self._call_editor, bulk=bulk, frames=self.frames)
            except UnityWorkerInUseException:
                continue
            except UnityTimeOutException as exc:
                if self.build is None:
                    raise SimulatorError(self._editor_silent(EDITOR_PORT + worker_id)) from None
                raise SimulatorError(f"the simulator did not connect within {self.timeout:g} s "
                                     f"({self.build or 'editor'}): {exc}{self._log_tail(worker_id)}") from None
            except UnityEnvironmentException as exc:
                raise SimulatorError(f"the simulator {self.build} died at start ({exc})"
                                     f"{self._log_tail(worker_id)}") from None
            self.worker_id = worker_id
            self.launches += 1
            self.bulk_in_use = bulk
            if self.launches == 1:
                self._note_no_window(env.game_name)
            return env
        if self.build is None:
            raise SimulatorError(f"port {EDITOR_PORT}, where the Unity Editor connects, is in use by another program "
                                 f"(another run on the Editor, or mlagents-learn): end it, then run again")
        raise SimulatorError(f"no free port for the simulator in {BASE_PORT + self.worker_id}.."
                             f"{BASE_PORT + self.worker_id + tries - 1}; set [neatpar] worker_id elsewhere")

    def _note_no_window(self, game_name: str) -> None:
        """One line when a game launched to be watched (`display`) is a stand-in build: those draw
        nothing on screen, so the window a person waits for never opens."""
        if self.display is not None and is_stand_in(game_name):
            log.warning("this build is neatpar's stand-in %s simulator, which shows no window (it plays at real-time "
                        "speed unseen): record an episode instead with neatpar play --video FILE (.mp4 or .gif)",
                        game_name[len(SIM_PROGRAM) + 1:])

    def _call_editor(self, port: int) -> None:
        """The one line that asks the person at the Unity Editor to press Play: the Editor tries to
        connect once, when Play starts, so it must start after neatpar listens."""
        log.warning("waiting for the Unity Editor on port %d: press Play in the Editor now (within %g s)", port,
                    self.timeout)

    def _editor_silent(self, port: int) -> str:
        """The error of an Editor that did not connect in time: what to do in the Editor."""
        return (f"the Unity Editor did not connect on port {port} within {self.timeout:g} s: press Play in the "
                f"Editor after neatpar says it is waiting for it, and within the {self.timeout:g} s ([neatpar] "
                f"timeout); if it was already playing, stop Play and press it again; check that the agents' "
                f"Behavior Type is Default and that the project uses ML-Agents communication API 1.x")

    def _log_tail(self, worker_id: int, lines: int = 5) -> str:
        if not self.log_folder:
            return ""
        path = os.path.join(self.log_folder, f"Player-{worker_id}.log")
        try:
            with open(path) as f:
                tail = [line.rstrip() for line in f.readlines()[-lines:]]
        except OSError:
            return ""
        return f"; its log {path} ends: " + " | ".join(tail) if tail else ""

    @property
    def process_pid(self) -> int | None:
        """PID of the game process of the latest launch, while it is known."""
        return self._process.pid if self._process is not None else None

    def close(self) -> None:
        """Close the environment (the game quits on the 400 status); kill it if it lingers."""
        env, self._env = self._env, None
        try:
            if env is not None:
                env._close(timeout=5)
        finally:
            self.kill()

    def _started(self, process) -> None:
        self._process = process
        if self.on_launch is not None:
            self.on_launch(process.pid)

    def kill(self) -> None:
        """Kill the simulator now, even mid-launch, without the closing handshake (signal
        handlers, dying hosts; and close() for a game that lingers)."""
        self._env = None
        process, self._process = self._process, None
        if process is not None and process.poll() is None:
            process.kill()
            process.wait()

    def __enter__(self) -> "SimulatorBridge":
        return self

    def __exit__(self, *exc) -> None:
        self.close()
