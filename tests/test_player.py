"""Tests of neatpar_sim/player.py, the game side of the ML-Agents protocol that the simulator builds run
(started by their launcher, unity_builds/_launch): its handshake and exchanges, side channels,
seed, arguments and usage errors, exit statuses and the process's lifetime, driven by the real,
unmodified mlagents_envs UnityEnvironment exactly as it drives a Unity player, and its parts
called directly."""
import io
import os
import signal
import subprocess
import sys
import time
import uuid
from concurrent.futures import ThreadPoolExecutor

import grpc
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from mlagents_envs.base_env import ActionTuple
from mlagents_envs.communicator_objects.unity_message_pb2 import UnityMessageProto
from mlagents_envs.exception import UnityEnvironmentException
from mlagents_envs.side_channel.engine_configuration_channel import EngineConfigurationChannel
from mlagents_envs.side_channel.environment_parameters_channel import EnvironmentParametersChannel
from mlagents_envs.side_channel.raw_bytes_channel import RawBytesChannel
from mlagents_envs.side_channel.side_channel_manager import SideChannelManager
from mlagents_envs.side_channel.stats_side_channel import StatsSideChannel

from neatpar.errors import SimulatorError
from neatpar_sim import player
from neatpar_sim.spec import OptionError
from neatpar_sim.tasks import TASKS
from support.paths import BUILDS, ROOT
from support.processes import pid_alive, wait_gone, wait_until
from support.simulators import free_worker_id, simulator, step_with, zeros_continuous


def test_side_channels_engine_parameters_stats_and_unknown(tmp_path):
    engine, params, stats = EngineConfigurationChannel(), EnvironmentParametersChannel(), StatsSideChannel()
    custom = RawBytesChannel(uuid.uuid4())
    with simulator("ball", args=["--max-steps", "3", "--stats", "1"], log_folder=str(tmp_path),
                   side_channels=[engine, params, stats, custom]) as env:
        engine.set_configuration_parameters(time_scale=20.0)
        params.set_float_parameter("agents", 5)
        custom.send_raw_data(bytearray(b"hello"))
        env.reset()
        decision, _ = env.get_steps("Ball3D?team=0")
        assert len(decision) == 5
        for _ in range(3):
            step_with(env, "Ball3D?team=0", zeros_continuous)
        received = stats.get_and_reset_stats()
        assert len(received["Environment/Episode Length"]) == 5
        assert all(value == 3.0 for value, _ in received["Environment/Episode Length"])
        params.set_float_parameter("no_such_option", 1)
        env.reset()
        assert len(env.get_steps("Ball3D?team=0")[0]) == 5
    log = open(next(tmp_path.glob("Player-*.log"))).read()
    assert "time_scale" in log and "20.0" in log
    assert "is not handled here" in log
    # A key that is no option is a game parameter, as in Unity: kept for GetWithDefault, unread here.
    assert "environment parameter no_such_option: no option of the ball build" in log


def logged_steps(text: str) -> list[float]:
    """The compute time, in seconds, of each exchange a player's log records."""
    return [float(line.rsplit(" ", 1)[1]) / 1000 for line in text.splitlines() if " compute_ms " in line]


def test_play_graphics_runs_each_academy_step_in_unity_s_real_time_and_training_runs_unpaced(tmp_path):
    """neatpar play --graphics asks time scale 1: like Unity (an academy step per FixedUpdate, every
    fixedDeltaTime of 0.02 s), the build takes that long per academy step; an evolve run asks time
    scale 20, as ML-Agents' trainer does, and the build goes as fast as it can."""
    import neat
    from neatpar.record.genomes import save_genome_json
    from neatpar.config.files import load
    from neatpar_sim.academy import FIXED_DELTA_TIME
    from support.configs import ball_cfg
    from support.runs import neatpar_cli
    log = tmp_path / "player.log"
    config_path = ball_cfg(tmp_path, generations=1, env_args=f"--agents 2 --max-steps 30 -logFile {log}")
    config, _ = load(config_path)
    save_genome_json(next(iter(neat.Population(config, seed=2).population.values())), config,
                     str(tmp_path / "winner.json"))
    result = neatpar_cli("play", "--config", config_path, "--genome", str(tmp_path / "winner.json"), "--graphics",
                         "--episodes", "1")
    assert result.returncode == 0, result.stderr
    text = log.read_text()
    steps = logged_steps(text)   # one academy step an exchange (decision period 1), the first the reset
    assert FIXED_DELTA_TIME == 0.02 and len(steps) > 5, text
    assert "real time: an academy step every 20 ms (time scale 1)" in text
    assert sum(steps) >= 0.6 * FIXED_DELTA_TIME * (len(steps) - 1), (sum(steps), len(steps))
    trained = tmp_path / "evolve.log"
    evolve = ball_cfg(tmp_path, name="evolve.cfg", generations=1,
                      env_args=f"--agents 4 --max-steps 30 -logFile {trained}")
    assert neatpar_cli("evolve", "--config", evolve, "--out", str(tmp_path / "run")).returncode == 0
    text = trained.read_text()
    steps = logged_steps(text)
    assert "engine configuration {'time_scale': 20.0}" in text and "real time" not in text
    assert len(steps) > 20 and sorted(steps)[len(steps) // 2] < FIXED_DELTA_TIME / 4, sorted(steps)[len(steps) // 2]


def test_close_ends_the_process():
    with simulator("ball") as env:
        env.reset()
        process = env._process
    assert process.poll() is not None


def test_simulator_exits_by_itself_when_python_is_killed(tmp_path):
    pid_file = tmp_path / "sim.pid"
    script = (
        "import os, sys, time\n"
        "from mlagents_envs.environment import UnityEnvironment\n"
        f"env = UnityEnvironment({os.path.join(BUILDS, 'ball')!r}, worker_id={free_worker_id()}, no_graphics=True)\n"
        "env.reset()\n"
        f"open({str(pid_file)!r}, 'w').write(str(env._process.pid))\n"
        "time.sleep(600)\n"
    )
    python = subprocess.Popen([sys.executable, "-c", script], cwd=ROOT)
    try:
        wait_until(lambda: pid_file.exists() and pid_file.read_text(), 60, "the script to write the simulator's PID")
        sim_pid = int(pid_file.read_text())
        assert pid_alive(sim_pid)
        python.send_signal(signal.SIGKILL)
        python.wait()
        left = wait_gone([sim_pid], 10.0)
    finally:
        if python.poll() is None:
            python.kill()
            python.wait()
    if left:
        os.kill(sim_pid, signal.SIGKILL)
    assert not left, "the simulator outlived the Python process that drove it"


def trajectory(seed, steps=40):
    with simulator("ball", args=["--agents", "6"], seed=seed) as env:
        env.reset()
        rng = np.random.default_rng(123)
        observed = [env.get_steps("Ball3D?team=0")[0].obs[0].copy()]
        for _ in range(steps):
            decision, _ = step_with(env, "Ball3D?team=0",
                                    lambda n: ActionTuple(continuous=rng.uniform(-1, 1, (n, 2)).astype(np.float32)))
            observed.append(decision.obs[0].copy())
        return np.concatenate(observed)


def test_same_seed_same_trajectory_bit_for_bit():
    first, second, other = trajectory(7), trajectory(7), trajectory(8)
    assert np.array_equal(first, second)
    assert not np.array_equal(first, other)


def test_two_simulators_at_once_on_different_worker_ids():
    with simulator("ball", args=["--agents", "3"]) as a, simulator("teams", args=["--areas", "2"]) as b:
        a.reset()
        b.reset()
        for _ in range(5):
            step_with(a, "Ball3D?team=0", zeros_continuous)
            b.step()
        assert len(a.get_steps("Ball3D?team=0")[0]) == 3 and len(b.get_steps("Blue?team=0")[0]) == 2


def test_bad_argument_is_a_clear_log_line_and_nonzero_exit(tmp_path):
    started = time.monotonic()
    with pytest.raises(UnityEnvironmentException, match="return code 2"):
        with simulator("ball", args=["--agents", "-3"], log_folder=str(tmp_path), timeout_wait=10):
            pass
    assert time.monotonic() - started < 20
    log = open(next(tmp_path.glob("Player-*.log"))).read()
    assert "error: agents must be an integer from 1 to 4096, got -3" in log


def test_unknown_unity_flags_are_ignored(tmp_path):
    with simulator("ball", args=["-screen-width", "80", "-force-vulkan"], log_folder=str(tmp_path)) as env:
        env.reset()
    assert "ignored arguments: -screen-width 80 -force-vulkan" in open(next(tmp_path.glob("Player-*.log"))).read()


@pytest.mark.parametrize("args, message", [
    (["--agnts", "32"], "--agnts is not an option of the ball build (did you mean --agents?); its options are "
                        "--agents, --max-steps, --visual, --decision-period"),
    (["--agents", "4", "32"], "'32' is a stray argument: no option of the ball build takes it; its options are "
                              "--agents"),
    (["--areas", "2"], "task 'ball' has no option areas")])
def test_an_argument_the_build_does_not_take_ends_it_with_a_usage_error(tmp_path, args, message):
    with pytest.raises(UnityEnvironmentException, match="return code 2"):
        with simulator("ball", args=args, log_folder=str(tmp_path), timeout_wait=10):
            pass
    assert f"error: {message}" in open(next(tmp_path.glob("Player-*.log"))).read()


def test_launcher_works_from_any_working_directory(tmp_path):
    script = ("import sys\nfrom mlagents_envs.environment import UnityEnvironment\n"
              f"env = UnityEnvironment('../{os.path.relpath(os.path.join(BUILDS, 'ball'), tmp_path.parent)}', "
              f"worker_id={free_worker_id()}, no_graphics=True)\nenv.reset()\nenv.close()\nprint('ok')\n")
    result = subprocess.run([sys.executable, "-c", script], cwd=tmp_path, capture_output=True, text=True, timeout=120)
    assert result.stdout.strip() == "ok", result.stderr


# ---------------------------------------------------------------- the player's parts, called directly

BALL = "Ball3D?team=0"


def test_unity_arguments_are_read_and_other_unity_flags_set_aside():
    settings = player.parse_args(["probe", "-batchmode", "--mlagents-port", "5123", "-logFile", "logs/p.log",
                                  "-screen-width", "80", "-force-vulkan", "--agents", "3", "-nographics",
                                  "--spawn-after", "0,3", "-logfile", "other.log"])
    assert settings == player.Settings("probe", 5123, "other.log", {"agents": 3, "spawn_after": (0, 3)},
                                       ["-screen-width", "80", "-force-vulkan"])


@st.composite
def command_lines(draw):
    """A task, a port, options with integer or list values and Unity flags between them, as argv."""
    task = draw(st.sampled_from(sorted(TASKS)))
    flags = draw(st.dictionaries(st.sampled_from(sorted(player._FLAGS)),
                                 st.integers(-5, 10**6) | st.lists(st.integers(0, 99), min_size=2, max_size=4).map(tuple),
                                 max_size=4))
    unity = draw(st.lists(st.sampled_from([["-screen-width", "640"], ["-force-vulkan"], ["-nographics"],
                                           ["-batchmode"], ["-screen-quality", "Fast"]]), max_size=3))
    port = draw(st.integers(1, 65535))
    parts = [["--mlagents-port", str(port)]] + unity
    parts += [[flag, ",".join(map(str, value)) if isinstance(value, tuple) else str(value)] for flag, value in flags.items()]
    order = draw(st.permutations(range(len(parts))))
    argv = [task] + [arg for index in order for arg in parts[index]]
    ignored = [arg for index in order if index and parts[index][0] not in ("-nographics", "-batchmode")
               and parts[index][0] in {u[0] for u in unity} for arg in parts[index]]
    return argv, player.Settings(task, port, None, {player._FLAGS[f]: v for f, v in flags.items()}, ignored)


@settings(max_examples=200, deadline=None)
@given(command_lines())
def test_any_order_of_options_and_unity_flags_reads_the_same(case):
    argv, expected = case
    assert player.parse_args(argv) == expected


@pytest.mark.parametrize("argv, message", [
    ([], "first argument must be a task (ball, camera, duel, hover, maze, probe, teams), got []"),
    (["pong", "--mlagents-port", "5005"], "first argument must be a task (ball, camera, duel, hover, maze, probe, teams), got ['pong']"),
    (["ball", "--agents"], "--agents needs a value"),
    (["ball", "--mlagents-port", "50x5"], "--mlagents-port must be an integer, got '50x5'"),
    (["ball", "--mlagents-port", "70000"], "--mlagents-port must be a TCP port, got 70000"),
    (["ball", "--agents", "4"], "--mlagents-port must be a TCP port, got None"),
    (["ball", "--mlagents-port", "5005", "--agents", "4,x"],
     "--agents must be an integer or a comma-separated list of integers, got '4,x'"),
])
def test_bad_command_lines_are_usage_errors_naming_the_argument(argv, message):
    with pytest.raises(player.UsageError) as error:
        player.parse_args(argv)
    assert str(error.value) == message


def test_a_plain_option_replaces_its_per_behavior_values_and_an_indexed_one_only_its_own():
    options = {"agents": 3, "decision_period.0": 2, "decision_period.1": 5, "obs": 4}
    assert player.merge_options(options, {"decision_period.1": 7}) == \
        {"agents": 3, "decision_period.0": 2, "decision_period.1": 7, "obs": 4}
    assert player.merge_options(options, {"decision_period": 3, "obs.1": 6}) == \
        {"agents": 3, "obs": 4, "decision_period": 3, "obs.1": 6}
    assert options == {"agents": 3, "decision_period.0": 2, "decision_period.1": 5, "obs": 4}  # left as it was


@pytest.mark.parametrize("options, message", [
    ({"stats": 2}, "stats must be 0 or 1, got 2"),
    ({"strict_masks": -1}, "strict_masks must be 0 or 1, got -1"),
    ({"seed": -4}, "seed must be a non-negative integer, got -4"),
    ({"agents.0": 2}, "task 'ball' has no option agents.0"),
    ({"max_step.1": 2}, "max_step.1 names behavior 1, but task 'ball' has 1 here (Ball3D?team=0, indexed from 0)"),
])
def test_player_and_indexed_options_are_checked_before_a_task_is_made(options, message):
    with pytest.raises(OptionError) as error:
        player.make_task("ball", options, np.random.default_rng(0))
    assert message in str(error.value)


def input_message(command=player.STEP, side_channel=b"", actions=None, status=player.STATUS_OK):
    """A UnityMessageProto as UnityEnvironment sends it: a command, side-channel bytes, and per
    behavior the continuous actions of each deciding agent, in order."""
    message = UnityMessageProto()
    message.header.status = status
    rl_input = message.unity_input.rl_input
    rl_input.command = command
    rl_input.side_channel = bytes(side_channel)
    for name, rows in (actions or {}).items():
        for row in rows:
            rl_input.agent_actions[name].value.add().continuous_actions.extend(row)
    return message


def observations(output, name=BALL):
    """The observations of the output's decision requests (terminal infos left out)."""
    return [list(info.observations[0].float_data.data) for info in output.unity_output.rl_output.agentInfos[name].value
            if not info.done]


def in_process_player(args, log_path=None, seed=0):
    """A Player on the command line `args` (the port is never used in process), seeded as the
    handshake seeds it."""
    playing = player.Player(player.parse_args([*args, "--mlagents-port", "5005"]), player.Log(log_path))
    playing.seed(seed)
    return playing


def test_the_initialization_output_is_what_a_communication_api_1_5_game_sends():
    init = in_process_player(["duel"]).initialization_output()
    assert init.header.status == 200
    output = init.unity_output.rl_initialization_output
    assert (output.name, output.communication_version, output.package_version) == ("neatpar-sim-duel", "1.5.0", "2.0.0")
    caps = output.capabilities
    assert all([caps.baseRLCapabilities, caps.concatenatedPngObservations, caps.compressedChannelMapping,
                caps.hybridActions, caps.trainingAnalytics, caps.variableLengthObservation, caps.multiAgentGroups])


def test_behavior_parameters_ride_with_the_first_output_only_and_quit_or_a_bad_status_end_the_player(tmp_path):
    log = tmp_path / "player.log"
    playing = in_process_player(["ball", "--agents", "2"], str(log))
    first = playing.handle(input_message(player.RESET))
    brains = first.unity_output.rl_initialization_output.brain_parameters
    assert [(b.brain_name, b.action_spec.num_continuous_actions, b.is_training) for b in brains] == [(BALL, 2, True)]
    assert len(observations(first)) == 2
    second = playing.handle(input_message(actions={BALL: [[0.0, 0.0]] * 2}))
    assert len(second.unity_output.rl_initialization_output.brain_parameters) == 0 and len(observations(second)) == 2
    assert playing.handle(input_message(player.QUIT)) is None
    assert playing.handle(input_message(status=400)) is None
    playing.log.close()
    assert "quit command" in log.read_text() and "status 400: closing" in log.read_text()


def parameters(**values) -> bytes:
    """The side-channel bytes of EnvironmentParameters float parameters, as UnityEnvironment sends them."""
    channel = EnvironmentParametersChannel()
    for key, value in values.items():
        channel.set_float_parameter(key, value)
    return bytes(SideChannelManager([channel]).generate_side_channel_messages())


def test_environment_parameters_take_effect_at_the_next_reset_a_seed_among_them(tmp_path):
    """Sent with a step, `agents` and `seed` change nothing until the next reset; then the scene
    has the new count and plays the episodes of a player seeded with that seed from the start."""
    log = tmp_path / "player.log"
    playing = in_process_player(["ball", "--agents", "4"], str(log), seed=3)
    playing.handle(input_message(player.RESET))
    stepped = playing.handle(input_message(side_channel=parameters(agents=2, seed=9, max_steps=2.5),
                                           actions={BALL: [[0.5, -0.5]] * 4}))
    assert len(observations(stepped)) == 4
    reset = playing.handle(input_message(player.RESET))
    fresh = in_process_player(["ball", "--agents", "2"], seed=9).handle(input_message(player.RESET))
    assert len(observations(reset)) == 2 and observations(reset) == observations(fresh)
    playing.log.close()
    text = log.read_text()
    assert "environment parameter agents = 2 (from the next reset)" in text
    assert "environment parameter max_steps = 2.5: not an integer, ignored" in text and "seed 9" in text


def test_a_usage_error_goes_to_the_log_when_there_is_one_and_else_to_stderr(tmp_path, capsys):
    assert player.main(["ball", "--mlagents-port", "5005", "--agnts", "3"]) == player.EXIT_USAGE
    assert capsys.readouterr().err.startswith("neatpar simulator: --agnts is not an option of the ball build")
    log = tmp_path / "logs" / "player.log"
    assert player.main(["ball", "--mlagents-port", "5005", "--agents", "0", "-logFile", str(log)]) == player.EXIT_USAGE
    assert capsys.readouterr().err == ""
    assert "error: agents must be an integer from 1 to 4096, got 0" in log.read_text()


def test_a_reply_that_is_no_message_ends_the_player_with_status_1_and_its_traceback_in_the_log(tmp_path):
    """A real gRPC server in Python's place answers the player's first message with bytes that are
    no UnityMessageProto."""
    server = grpc.server(ThreadPoolExecutor(max_workers=1))
    garbage = grpc.unary_unary_rpc_method_handler(lambda request, context: b"\xff\xff\xff")
    server.add_generic_rpc_handlers([grpc.method_handlers_generic_handler(
        "communicator_objects.UnityToExternalProto", {"Exchange": garbage})])
    port = server.add_insecure_port("127.0.0.1:0")
    server.start()
    log = tmp_path / "player.log"
    try:
        assert player.main(["ball", "--mlagents-port", str(port), "-logFile", str(log)]) == 1
    finally:
        server.stop(None)
    text = log.read_text()
    assert "error: the simulator failed:\nTraceback" in text and "DecodeError" in text


def test_the_log_stamps_lines_makes_its_folder_and_keeps_nothing_without_a_path(tmp_path):
    path = tmp_path / "deeper" / "Player-3.log"
    log = player.Log(str(path))
    log("first line")
    log("second line")
    log.close()
    lines = path.read_text().splitlines()
    assert [line.split(" ", 1)[1] for line in lines] == ["first line", "second line"]
    assert all(time.strptime(line.split(" ", 1)[0], "%H:%M:%S") for line in lines)
    silent = player.Log(None)
    silent("nowhere")
    silent.close()


@pytest.mark.parametrize("args, pngs, mapping", [
    (["camera", "--agents", "2", "--size", "6"], 1, []),
    (["camera", "--agents", "2", "--size", "6", "--gray", "1"], 1, []),
    (["camera", "--agents", "2", "--size", "6", "--grid", "4"], 2, [0, 1, 2, 3, -1, -1]),
    (["camera", "--agents", "2", "--size", "6", "--grid", "6"], 2, [0, 1, 2, 3, 4, 5]),
])
def test_visual_sensors_send_rgb_pngs_as_unity_does(args, pngs, mapping):
    """A camera (a grayscale one too) sends one RGB PNG of its render; a grid sensor its channels
    three by three as RGB PNGs one after the other (the last padded with zeros), with the mapping;
    shape and dimension properties as ML-Agents 2.x writes them, and no vector observation."""
    from PIL import Image
    playing = in_process_player(args)
    first = playing.handle(input_message(player.RESET))
    sensor = playing.academy.task.behaviors[0].sensors[0]
    for row, info in enumerate(first.unity_output.rl_output.agentInfos["Camera?team=0"].value):
        (observation,) = info.observations
        assert list(observation.shape) == list(sensor.shape) and list(observation.dimension_properties) == [2, 2, 1]
        assert observation.compression_type == 1 and list(observation.compressed_channel_mapping) == mapping
        data = observation.compressed_data
        starts = [i for i in range(len(data)) if data.startswith(b"\x89PNG\r\n\x1a\n", i)]
        assert len(starts) == pngs
        frame = playing.academy.task.frames("Camera?team=0")[0][row]
        channels = []
        for start, end in zip(starts, starts[1:] + [len(data)]):
            image = Image.open(io.BytesIO(data[start:end]))
            assert image.mode == "RGB" and image.size == (6, 6)
            channels.append(np.asarray(image))
        sent = np.concatenate(channels, axis=2)
        assert np.array_equal(sent[..., :frame.shape[2]], frame) and not sent[..., frame.shape[2]:].any()


def test_uncompressed_visual_sensors_send_their_floats_in_shape_order():
    playing = in_process_player(["camera", "--agents", "3", "--size", "5", "--compression", "0"])
    first = playing.handle(input_message(player.RESET))
    frames = playing.academy.task.frames("Camera?team=0")[0]
    for row, info in enumerate(first.unity_output.rl_output.agentInfos["Camera?team=0"].value):
        (observation,) = info.observations
        assert observation.compression_type == 0 and list(observation.shape) == [5, 5, 3]
        assert np.array_equal(np.array(observation.float_data.data, np.float32), frames[row].ravel())


# ---------------------------------------------------------------- the Frames side channel

def frames_read(side_channel: bytes):
    """What Python's Frames channel (neatpar/envs/unity/frames.py) reads from a game's side-channel
    bytes: the channel after its launch message, or after a step's reply."""
    from neatpar.envs.unity.frames import FrameChannel
    channel = FrameChannel()
    channel.launched(side_channel)
    return channel


def frame_request(behavior: str, agent: int):
    """Python's Frames channel asking for a frame of one agent, and the side-channel bytes it sends."""
    channel = frames_read(player.side_channels.frames_announcement(8, 8, 25.0))
    channel.request(behavior, agent)
    return channel, bytes(SideChannelManager([channel]).generate_side_channel_messages())


def replied(channel, output):
    """The channel after reading an output's side channel."""
    SideChannelManager([channel]).process_side_channel_message(output.unity_output.rl_output.side_channel)
    return channel


@pytest.mark.parametrize("task", sorted(TASKS))
def test_the_initialization_output_announces_frames_unless_told_not_to(task):
    announced = in_process_player([task]).initialization_output().unity_output.rl_output.side_channel
    assert frames_read(announced).announcement == (256, 256, 25.0)
    silent = in_process_player([task, "--frames", "0"]).initialization_output().unity_output.rl_output.side_channel
    assert silent == b"" and frames_read(silent).announcement is None


def test_a_frame_is_the_agent_as_it_was_when_the_request_came_before_the_step_s_actions():
    playing = in_process_player(["ball", "--agents", "3"], seed=5)
    first = playing.handle(input_message(player.RESET))
    ids = [info.id for info in first.unity_output.rl_output.agentInfos[BALL].value]
    roster = playing.academy.rosters[BALL]
    row = int(np.flatnonzero(roster.ids == ids[1])[0])
    expected = playing.academy.task.render(BALL, row).copy()
    channel, request = frame_request(BALL, ids[1])
    stepped = playing.handle(input_message(side_channel=request, actions={BALL: [[1.0, -1.0]] * 3}))
    assert not (playing.academy.task.render(BALL, row) == expected).all()   # the step moved the ball
    [frame] = replied(channel, stepped).take()
    assert (frame == expected).all()
    later = playing.handle(input_message(actions={BALL: [[0.0, 0.0]] * 3}))
    assert later.unity_output.rl_output.side_channel == b""   # nothing asked, nothing sent


def test_an_agent_asked_for_whose_episode_ends_is_also_drawn_at_its_end_before_it_restarts():
    """The terminal step's state, which no decision shows (a camera agent on its target), comes
    unasked after the frame asked for, for the watched agent only, and only with that output."""
    from neatpar_sim.camera import NAME
    playing = in_process_player(["camera", "--agents", "2", "--size", "8"], seed=3)
    first = playing.handle(input_message(player.RESET))
    ids = [info.id for info in first.unity_output.rl_output.agentInfos[NAME].value]
    task = playing.academy.task
    task.agent[:] = [0.5, 0.5]
    task.target[:] = [0.62, 0.5]   # one full move to the right reaches it (REACH 0.1)
    before = task.render(NAME, 0).copy()
    task.agent[0] = [0.6, 0.5]
    at_target = task.render(NAME, 0).copy()
    task.agent[0] = [0.5, 0.5]
    channel, request = frame_request(NAME, ids[0])
    stepped = playing.handle(input_message(side_channel=request, actions={NAME: [[1.0, 0.0]] * 2}))
    done = [info.id for info in stepped.unity_output.rl_output.agentInfos[NAME].value if info.done]
    assert done == ids   # both reached their target; the second agent was not asked for
    frames = replied(channel, stepped).take()
    assert len(frames) == 2 and (frames[0] == before).all() and (frames[1] == at_target).all()
    assert not (task.render(NAME, 0) == at_target).all()   # the agent restarted elsewhere
    later = playing.handle(input_message(actions={NAME: [[1.0, 0.0]] * 2}))
    assert later.unity_output.rl_output.side_channel == b""


def test_a_request_for_an_agent_that_is_not_there_is_answered_with_the_reason():
    playing = in_process_player(["ball", "--agents", "2"])
    playing.handle(input_message(player.RESET))
    channel, request = frame_request(BALL, 99)
    stepped = playing.handle(input_message(side_channel=request, actions={BALL: [[0.0, 0.0]] * 2}))
    records = list(player.side_channels.split(stepped.unity_output.rl_output.side_channel))
    assert [channel_id for channel_id, _ in records] == [player.side_channels.FRAMES]
    with pytest.raises(SimulatorError, match=r"no frame for 1 of 1 requests: agent 99: 'Ball3D\?team=0' has no "
                                             r"agent 99 now"):
        replied(channel, stepped).take()
