"""Tests of envs/unity/communicator.py, neatpar's communicator for mlagents-envs' UnityEnvironment:
a real game driven through it directly (handshake, exchanges in protobuf and in raw bytes, the
closing status), the port it refuses to share, the timeout and the polling while it waits, and the
hand-overs it releases at exit."""
import subprocess
import sys
import time

import pytest
from mlagents_envs.communicator_objects.unity_input_pb2 import UnityInputProto
from mlagents_envs.communicator_objects.unity_message_pb2 import UnityMessageProto
from mlagents_envs.exception import UnityEnvironmentException, UnityTimeOutException, UnityWorkerInUseException

from neatpar.envs.unity.communicator import BASE_PORT, STATUS_CLOSE, LocalCommunicator, message_bytes
from support.paths import BALL, BUILDS
from support.processes import run_marked, wait_gone
from support.simulators import free_worker_id

BALL3D = "Ball3D?team=0"
RESET = 1


def test_a_real_game_is_driven_through_the_handshake_exchanges_and_the_closing_status(tmp_path):
    communicator = LocalCommunicator(free_worker_id(), timeout_wait=30)
    log = tmp_path / "player.log"
    game = subprocess.Popen([sys.executable, "-m", "neatpar_sim", "ball", "--mlagents-port", str(communicator.port),
                             "--agents", "2", "-logFile", str(log)], cwd=BUILDS)

    def alive():
        if game.poll() is not None:
            raise UnityEnvironmentException(f"the game exited with {game.returncode}")

    try:
        handshake = UnityInputProto()
        handshake.rl_initialization_input.seed = 5
        first = communicator.initialize(handshake, alive)
        assert first.rl_initialization_output.name == "neatpar-sim-ball"
        reset = UnityInputProto()
        reset.rl_input.command = RESET
        output = communicator.exchange(reset, alive)
        assert len(output.rl_output.agentInfos[BALL3D].value) == 2
        reply = UnityMessageProto.FromString(communicator.exchange_bytes(message_bytes(UnityInputProto()), alive))
        assert reply.header.status == 200 and len(reply.unity_output.rl_output.agentInfos[BALL3D].value) == 2
        communicator.close()
        communicator.close()
        assert game.wait(10) == 0  # it read the closing status and quit
    finally:
        communicator.close()
        if game.poll() is None:
            game.kill()
            game.wait()
    assert "seed 5" in log.read_text() and f"status {STATUS_CLOSE}: closing" in log.read_text()


def test_a_port_taken_by_anyone_even_another_communicator_is_a_worker_in_use_error():
    worker_id = free_worker_id()
    first = LocalCommunicator(worker_id)
    try:
        assert first.port == BASE_PORT + worker_id
        with pytest.raises(UnityWorkerInUseException):
            LocalCommunicator(worker_id)
    finally:
        first.close()
    LocalCommunicator(worker_id).close()  # free again once closed


def test_a_game_that_sends_nothing_times_out_naming_what_to_check_polled_meanwhile():
    communicator = LocalCommunicator(free_worker_id(), timeout_wait=1)
    polls = []
    try:
        started = time.monotonic()
        with pytest.raises(UnityTimeOutException, match="the environment sent nothing for 1 s: check that it runs "
                                                        "headless"):
            communicator.initialize(UnityInputProto(), lambda: polls.append(time.monotonic()))
        assert 0.9 < time.monotonic() - started < 10 and len(polls) >= 5

        def dead():
            raise UnityEnvironmentException("the game died")

        started = time.monotonic()
        with pytest.raises(UnityEnvironmentException, match="the game died"):
            communicator.exchange(UnityInputProto(), dead)
        assert time.monotonic() - started < 0.9  # the first poll ends the wait
    finally:
        communicator.close()


def test_an_environment_lost_without_a_close_does_not_hang_the_exit(tmp_path):
    """The game's next request waits on gRPC's thread for a reply that no one will send (the
    environment was lost, e.g. to a Ctrl+C between its launch and its use, and the exit guard does
    not see it as open): Python's exit joins that thread; it must still end, and so must the game."""
    pid_file = tmp_path / "sim.pid"
    script = (
        "from neatpar.envs.unity.bridge import SimulatorBridge\n"
        f"bridge = SimulatorBridge({BALL!r}, args=['--agents', '2'], worker_id={free_worker_id()})\n"
        "env = bridge.env\n"
        "env.reset()\n"
        "env.step()\n"
        f"open({str(pid_file)!r}, 'w').write(str(bridge.process_pid))\n"
        "env._loaded = False\n")
    result, _ = run_marked(["-c", script], timeout=60)  # the processes it started must end with it
    assert result.returncode == 0, result.stderr
    assert not wait_gone([int(pid_file.read_text())], 10)
