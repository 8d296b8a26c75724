"""Tests of envs/live_handles.py, the environments' live handles declared to the pool: every
ML-Agents environment, mlagents-envs' own UnityEnvironment or any other BaseEnv, counts as a
connecting handle, declaring is idempotent, and a script that uses neatpar's pool and ends without
closing its own UnityEnvironment still exits, its game with it."""
from mlagents_envs.base_env import BaseEnv

from neatpar.envs import live_handles
from neatpar.parallel import declarations
from neatpar.parallel.handles import handle_kind, is_connecting
from support.paths import BALL
from support.processes import run_marked, wait_gone
from support.simulators import free_worker_id


# An ML-Agents environment of another kind than UnityEnvironment.
OtherGame = type("OtherGame", (BaseEnv,), dict.fromkeys(BaseEnv.__abstractmethods__))


def test_any_ml_agents_environment_is_a_connecting_handle_and_declaring_again_adds_nothing():
    refusals = declarations.import_refusals()
    live_handles.declare()
    live_handles.declare()
    assert declarations.import_refusals() == refusals and refusals.count(live_handles.UNITY_AT_IMPORT) == 1
    kind = handle_kind(OtherGame())
    assert kind == "ML-Agents environment connection" and is_connecting(kind)


def test_a_script_that_ends_by_an_exception_without_closing_its_unity_environment_still_exits(tmp_path):
    """mlagents-envs' own UnityEnvironment, left open, next to a neatpar pool: Python's exit would
    join a gRPC thread that waits for the main thread's reply to the game (the subprocess's
    timeout ends the test if it does)."""
    pid_file = tmp_path / "sim.pid"
    script = (
        "import neatpar\n"
        "from mlagents_envs.environment import UnityEnvironment\n"
        "pool = neatpar.Pool(1)\n"
        f"env = UnityEnvironment({BALL!r}, worker_id={free_worker_id()}, no_graphics=True,\n"
        "                       additional_args=['--agents', '2'])\n"
        "env.reset()\n"
        "env.step()\n"
        f"open({str(pid_file)!r}, 'w').write(str(env._process.pid))\n"
        "raise RuntimeError('the script failed with its environment open')\n")
    result, _ = run_marked(["-c", script], timeout=60)
    assert result.returncode == 1 and "RuntimeError: the script failed with its environment open" in result.stderr
    assert not wait_gone([int(pid_file.read_text())], 10)
