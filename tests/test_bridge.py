"""The bridge (neatpar/envs/unity/bridge.py): the main process's lazily created UnityEnvironment on
a loopback-only server, with either step codec (bulk.py, or mlagents-envs' own conversions)."""
import os
import pickle
import signal
import socket
import time

import numpy as np
import pytest
from mlagents_envs.base_env import ActionTuple
from mlagents_envs.exception import UnityEnvironmentException, UnityTimeOutException

import neatpar
from neatpar.envs.unity.bridge import EDITOR_PORT, Display, SimulatorBridge, is_stand_in
from neatpar.envs.unity.communicator import BASE_PORT, LocalCommunicator, port_free
from neatpar.errors import ConfigError, LiveHandleError, SimulatorError
from support.marks import ON_THE_EDITOR_PORT
from support.paths import BALL
from support.processes import wait_gone
from support.simulators import free_worker_id

CODECS = {"bulk": True, "mlagents": False}


@pytest.fixture
def bridge(tmp_path):
    b = SimulatorBridge(BALL, args=["--agents", "4"], log_folder=str(tmp_path), worker_id=free_worker_id())
    yield b
    b.close()


def test_nothing_connects_until_first_use(bridge):
    assert not bridge.connected and bridge.process_pid is None
    bridge.env.reset()
    assert bridge.connected and bridge.process_pid is not None
    pid = bridge.process_pid
    bridge.close()
    assert not os.path.exists(f"/proc/{pid}") or open(f"/proc/{pid}/stat").read().split()[2] == "Z"


def test_refuses_to_be_pickled(bridge):
    with pytest.raises(LiveHandleError, match="belongs to the main process"):
        pickle.dumps(bridge)


def make_bridge_in_worker(path):
    try:
        SimulatorBridge(path)
    except SimulatorError as error:
        return str(error)
    return "created"


def test_refuses_to_be_created_in_a_child_process():
    with neatpar.Pool(1) as pool:
        message = pool.apply_async(make_bridge_in_worker, (BALL,)).get(60)
    assert "only be created in the main process" in message


def test_listens_on_loopback_only(bridge):
    bridge.env.reset()
    port = BASE_PORT + bridge.worker_id
    listening = []
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        with open(table) as f:
            for line in f.readlines()[1:]:
                fields = line.split()
                address, state = fields[1], fields[3]
                if state == "0A" and int(address.split(":")[1], 16) == port:
                    listening.append(address.split(":")[0])
    loopback = {"0100007F", "0000000000000000FFFF00000100007F"}  # 127.0.0.1, as IPv4 or v4-mapped IPv6
    assert listening and set(listening) <= loopback, listening  # nothing on 0.0.0.0 or [::]
    others = [a for a in _machine_addresses() if not a.startswith("127.")]
    for address in others:
        with socket.socket() as probe:
            probe.settimeout(1.0)
            assert probe.connect_ex((address, port)) != 0


def _machine_addresses():
    out = set()
    try:
        for info in socket.getaddrinfo(socket.gethostname(), None, socket.AF_INET):
            out.add(info[4][0])
    except OSError:
        pass
    return out


def test_picks_a_free_worker_id_when_the_port_is_taken(tmp_path):
    worker_id = free_worker_id()
    with socket.socket() as squatter:
        squatter.bind(("127.0.0.1", BASE_PORT + worker_id))
        squatter.listen()
        with SimulatorBridge(BALL, worker_id=worker_id, log_folder=str(tmp_path)) as b:
            b.env.reset()
            assert b.worker_id > worker_id


@pytest.fixture(params=CODECS)
def codec_bridge(request, tmp_path):
    """A bridge on 4 ball agents with each step codec."""
    b = SimulatorBridge(BALL, args=["--agents", "4"], log_folder=str(tmp_path), worker_id=free_worker_id(),
                        timeout=2, bulk=CODECS[request.param])
    yield b
    b.close()


def step_once(env):
    env.set_actions("Ball3D?team=0", ActionTuple(continuous=np.zeros((4, 2), np.float32)))
    env.step()


def test_dead_simulator_is_detected_quickly(codec_bridge):
    env = codec_bridge.env
    env.reset()
    os.kill(codec_bridge.process_pid, signal.SIGKILL)
    started = time.monotonic()
    with pytest.raises(UnityEnvironmentException, match="SIGKILL"):
        step_once(env)
    assert time.monotonic() - started < 10


def test_a_simulator_that_stops_answering_times_out(codec_bridge):
    env = codec_bridge.env
    env.reset()
    step_once(env)
    os.kill(codec_bridge.process_pid, signal.SIGSTOP)
    started = time.monotonic()
    try:
        with pytest.raises(UnityTimeOutException, match="sent nothing for 2 s"):
            step_once(env)
        assert 1.9 < time.monotonic() - started < 10
    finally:
        os.kill(codec_bridge.process_pid, signal.SIGCONT)


def test_close_sends_400_and_the_game_quits_by_itself(codec_bridge, tmp_path):
    env = codec_bridge.env
    env.reset()
    step_once(env)
    process = env._process
    codec_bridge.close()
    assert process.returncode == 0  # not killed: it read the closing status and quit
    assert not wait_gone([process.pid], 2.0)
    with open(tmp_path / f"Player-{codec_bridge.worker_id}.log") as f:
        assert "status 400: closing" in f.read()


def test_the_bulk_codec_is_the_default_and_NEATPAR_BULKWIRE_0_turns_it_off(tmp_path, monkeypatch):
    def codec_of(**keyword):
        with SimulatorBridge(BALL, args=["--agents", "2"], log_folder=str(tmp_path), worker_id=free_worker_id(),
                             **keyword) as b:
            assert b.bulk_in_use is None  # nothing launched yet
            b.env.reset()
            return b.bulk_in_use

    monkeypatch.delenv("NEATPAR_BULKWIRE", raising=False)
    assert codec_of() is True
    monkeypatch.setenv("NEATPAR_BULKWIRE", "0")
    assert codec_of() is False
    assert codec_of(bulk=True) is True  # the keyword wins over the environment


def test_a_bad_NEATPAR_BULKWIRE_is_a_one_line_error_before_launch(monkeypatch):
    monkeypatch.setenv("NEATPAR_BULKWIRE", "yes")
    with SimulatorBridge(BALL, worker_id=free_worker_id()) as b:
        with pytest.raises(ConfigError, match="NEATPAR_BULKWIRE='yes' is not a switch: set it to 1") as error:
            b.env
        assert "\n" not in str(error.value) and b.process_pid is None


def test_missing_or_not_executable_build_is_a_config_error(tmp_path):
    with pytest.raises(ConfigError, match="not found"):
        SimulatorBridge(str(tmp_path / "nothing"))
    script = tmp_path / "game.x86_64"
    script.write_text("#!/bin/sh\n")
    with pytest.raises(ConfigError, match="not executable"):
        SimulatorBridge(str(tmp_path / "game"))


def test_simulator_dying_at_start_shows_its_log(tmp_path):
    with SimulatorBridge(BALL, args=["--agents", "-3"], log_folder=str(tmp_path), timeout=10,
                         worker_id=free_worker_id()) as b:
        with pytest.raises(SimulatorError, match="died at start.*agents must be an integer"):
            b.env


def test_timeout_when_the_game_never_connects(tmp_path):
    silent = tmp_path / "silent.x86_64"
    silent.write_text("#!/bin/sh\nexec sleep 60\n")
    silent.chmod(0o755)
    started = time.monotonic()
    with SimulatorBridge(str(tmp_path / "silent"), timeout=2, worker_id=free_worker_id()) as b:
        with pytest.raises(SimulatorError, match="did not connect within 2 s"):
            b.env
    assert time.monotonic() - started < 15


@ON_THE_EDITOR_PORT
def test_the_editor_is_asked_to_press_play_and_told_what_to_do_when_it_stays_silent(caplog):
    """env = editor: one line asks for Play while neatpar listens on the Editor's port; with no
    Editor, the time-out says what to do in the Editor (nothing of headless players)."""
    assert port_free(EDITOR_PORT), f"port {EDITOR_PORT} is taken: the Editor's path is tested on it, free"
    with caplog.at_level("WARNING", logger="neatpar"), SimulatorBridge(None, timeout=1) as b:
        with pytest.raises(SimulatorError) as error:
            b.env
    assert [r.getMessage() for r in caplog.records] == [
        "waiting for the Unity Editor on port 5004: press Play in the Editor now (within 1 s)"]
    message = str(error.value)
    assert message.startswith("the Unity Editor did not connect on port 5004 within 1 s: press Play in the Editor "
                              "after neatpar says it is waiting for it"), message
    assert "if it was already playing, stop Play and press it again" in message
    assert "Behavior Type is Default" in message and "API 1.x" in message and "headless" not in message


@ON_THE_EDITOR_PORT
def test_the_editor_s_port_held_by_another_program_is_one_line_saying_so():
    assert port_free(EDITOR_PORT), f"port {EDITOR_PORT} is taken: the Editor's path is tested on it, free"
    with socket.socket() as holder:
        holder.bind(("localhost", EDITOR_PORT))
        holder.listen()
        with SimulatorBridge(None, timeout=1) as b, pytest.raises(SimulatorError) as error:
            b.env
    assert str(error.value) == (f"port {EDITOR_PORT}, where the Unity Editor connects, is in use by another program "
                                f"(another run on the Editor, or mlagents-learn): end it, then run again")


def test_communicator_is_neatpars():
    assert issubclass(LocalCommunicator, neatpar.envs.unity.communicator.Communicator)


def launched_with(tmp_path, **bridge_options) -> tuple[list[str], str]:
    """A ball build launched, reset and closed: the arguments it was started with and its log."""
    bridge = SimulatorBridge(BALL, args=["--agents", "2"], log_folder=str(tmp_path), worker_id=free_worker_id(),
                             **bridge_options)
    try:
        bridge.env.reset()
        worker_id = bridge.worker_id
    finally:
        bridge.close()
    log = (tmp_path / f"Player-{worker_id}.log").read_text()
    [arguments] = [line.split("arguments: ", 1)[1].split() for line in log.splitlines() if "arguments: " in line]
    return arguments, log


def test_a_display_launches_the_game_with_graphics_in_a_window_at_real_time_speed(tmp_path):
    """The build reports what it was started with (its log's first line) and the EngineConfiguration
    it received, as a Unity player applies them: Screen.SetResolution(width, height, windowed),
    Application.targetFrameRate, Time.timeScale."""
    arguments, log = launched_with(tmp_path / "watch", display=Display(640, 480, 30), time_scale=20.0)
    assert "-nographics" not in arguments and "-batchmode" not in arguments
    assert "engine configuration {'time_scale': 1.0}" in log
    assert "engine configuration {'screen_resolution': (640, 480)}" in log
    assert "engine configuration {'target_frame_rate': 30}" in log
    headless, log = launched_with(tmp_path / "headless")
    assert "-nographics" in headless and "-batchmode" in headless
    assert "engine configuration {'time_scale': 20.0}" in log and "screen_resolution" not in log
    assert Display() == Display(1280, 720, 60)


def test_a_stand_in_build_launched_to_be_watched_says_once_that_it_shows_no_window(tmp_path, caplog):
    """The stand-ins draw nothing on screen: a display launch says so and names --video; a headless
    one says nothing. A Unity player is told apart by the name its Academy gives itself."""
    with caplog.at_level("WARNING", logger="neatpar"):
        launched_with(tmp_path / "watch", display=Display())
        watched = [r.getMessage() for r in caplog.records]
        caplog.clear()
        launched_with(tmp_path / "headless")
    assert watched == ["this build is neatpar's stand-in ball simulator, which shows no window (it plays at "
                       "real-time speed unseen): record an episode instead with neatpar play --video FILE (.mp4 or "
                       ".gif)"]
    assert caplog.records == []
    assert is_stand_in("neatpar-sim-ball") and not is_stand_in("AcademySingleton")   # ML-Agents' Academy's name
