"""The bridge: the one UnityEnvironment of a run, owned by the process that created it.

`SimulatorBridge` creates the environment lazily (nothing connects until the first episode needs
it), refuses to be pickled and to be created in a child process (unless an env host that owns
its own simulator asks), and talks to the game through neatpar's `LocalCommunicator`
(communicator.py).
"""
from __future__ import annotations

import atexit
import multiprocessing
import os

from mlagents_envs.environment import UnityEnvironment
from mlagents_envs.exception import (
    UnityEnvironmentException,
    UnityTimeOutException,
    UnityWorkerInUseException,
)
from mlagents_envs.side_channel.engine_configuration_channel import EngineConfigurationChannel
from mlagents_envs.side_channel.environment_parameters_channel import EnvironmentParametersChannel
from mlagents_envs.side_channel.stats_side_channel import StatsSideChannel

from ...errors import ConfigError, LiveHandleError, SimulatorError
from ...parallel.handles import install_exit_guard
from .communicator import BASE_PORT, LocalCommunicator, port_free

EDITOR_PORT = 5004
PORT_TRIES = 64


class _BridgeEnvironment(UnityEnvironment):
    """UnityEnvironment with neatpar's communicator (its supported override point)."""

    def __init__(self, *args, on_process=None, **kwargs):
        self._on_process = on_process
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
        return super()._send_academy_parameters(init_parameters)

    @staticmethod
    def _get_communicator(worker_id, base_port, timeout_wait):
        return LocalCommunicator(worker_id, base_port, timeout_wait)


def resolve_build(path: str) -> str:
    """The executable a build path names (NAME, NAME.x86_64 or NAME.x86), or a ConfigError."""
    base = path
    for suffix in (".x86_64", ".x86", ".exe", ".app"):
        if base.endswith(suffix):
            base = base[: -len(suffix)]
    for candidate in (base + ".x86_64", base + ".x86", path):
        if os.path.isfile(candidate):
            if not os.access(candidate, os.X_OK):
                raise ConfigError(f"simulator build {candidate} is not executable: chmod +x {candidate}")
            return candidate
    raise ConfigError(f"simulator build {path} not found (looked for {base}.x86_64, {base}.x86 and {path}); "
                      f"fix [neatpar] env (relative to the config file) or use env = editor")


class SimulatorBridge:
    """The main process's lazily created UnityEnvironment and its side channels.

    `env` creates the environment on first use. The object cannot be pickled (the connection
    belongs to this process) and cannot be created in a child process unless `allow_child` is
    given by a host that owns its own simulator.
    """

    def __init__(self, build: str | None, *, args=(), no_graphics: bool = True, time_scale: float = 20.0,
                 timeout: float = 60.0, log_folder: str | None = None, seed: int = 0,
                 env_parameters=(), worker_id: int = 0, allow_child: bool = False):
        if multiprocessing.parent_process() is not None and not allow_child:
            raise SimulatorError(
                "a SimulatorBridge can only be created in the main process: the simulator connection "
                "must never exist in (or be copied into) a pool worker")
        self.build = resolve_build(build) if build is not None else None
        self.args = list(args)
        self.no_graphics, self.time_scale, self.timeout = no_graphics, time_scale, timeout
        self.log_folder, self.seed, self.worker_id = log_folder, seed, worker_id
        self.env_parameters = dict(env_parameters)
        self.engine = EngineConfigurationChannel()
        self.parameters = EnvironmentParametersChannel()
        self.stats = StatsSideChannel()
        self._env: UnityEnvironment | None = None
        self.launches = 0
        self.on_launch = None  # called with the simulator's PID at each launch (env hosts publish it)
        self._process = None    # the game process of the latest launch, known from its start

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
        self.env_parameters[key] = value
        if self._env is not None:
            self.parameters.set_float_parameter(key, float(value))

    def _launch(self) -> UnityEnvironment:
        install_exit_guard()
        if self.log_folder:
            os.makedirs(self.log_folder, exist_ok=True)
        self.engine.set_configuration_parameters(time_scale=self.time_scale)
        for key, value in self.env_parameters.items():
            self.parameters.set_float_parameter(key, float(value))
        tries = 1 if self.build is None else PORT_TRIES
        for worker_id in range(self.worker_id, self.worker_id + tries):
            if self.build is not None and not port_free(BASE_PORT + worker_id):
                continue  # checked first: cheaper than a failed UnityEnvironment()
            try:
                env = _BridgeEnvironment(
                    file_name=self.build, worker_id=worker_id, seed=self.seed, no_graphics=self.no_graphics,
                    timeout_wait=int(max(1, self.timeout)), additional_args=self.args,
                    side_channels=[self.engine, self.parameters, self.stats], log_folder=self.log_folder,
                    base_port=BASE_PORT if self.build is not None else EDITOR_PORT, on_process=self._started)
            except UnityWorkerInUseException:
                continue
            except UnityTimeOutException as exc:
                raise SimulatorError(f"the simulator did not connect within {self.timeout:g} s "
                                     f"({self.build or 'editor'}): {exc}{self._log_tail(worker_id)}") from None
            except UnityEnvironmentException as exc:
                raise SimulatorError(f"the simulator {self.build} died at start ({exc})"
                                     f"{self._log_tail(worker_id)}") from None
            self.worker_id = worker_id
            self.launches += 1
            return env
        raise SimulatorError(f"no free port for the simulator in {BASE_PORT + self.worker_id}.."
                             f"{BASE_PORT + self.worker_id + tries - 1}; set [neatpar] worker_id elsewhere")

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
