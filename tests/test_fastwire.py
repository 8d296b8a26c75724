"""The fast wire (neatpar/envs/unity/fastwire.py): mlagents-envs' messages rebuilt on protobuf 6
(upb), in every process."""
import ast
import json
import os
import subprocess
import sys

import numpy as np
import pytest
from mlagents_envs.base_env import ActionTuple

import neatpar
from neatpar.envs.unity import fastwire
from support.messages import as_plain
from support.paths import BUILDS, ROOT
from support.processes import python_code
from support.simulators import simulator

FIXTURES = os.path.join(os.path.dirname(os.path.abspath(__file__)), "fixtures")
# Names the old files bind only for their own machinery, which current protoc output has no use for.
OLD_MACHINERY = {"sys", "_b", "_sym_db", "_descriptor", "_message", "_reflection", "_symbol_database",
                 "descriptor_pb2", "enum_type_wrapper"}


def old_module_names(path):
    """Every name an old generated module binds at top level, read from its text."""
    tree = ast.parse(open(path).read())
    names = set()
    for node in tree.body:
        if isinstance(node, ast.Assign):
            names.update(t.id for t in node.targets if isinstance(t, ast.Name))
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            names.update(alias.asname or alias.name for alias in node.names)
    return names - OLD_MACHINERY


def test_in_effect_on_upb_with_protobuf_6():
    from google.protobuf import __version__
    from mlagents_envs.communicator_objects import unity_message_pb2
    assert __version__.startswith("6.")
    assert fastwire.in_effect() and fastwire.backend() == "upb"
    assert unity_message_pb2 is sys.modules["mlagents_envs.communicator_objects.unity_message_pb2"]


@pytest.mark.parametrize("short", fastwire.MODULES)
def test_every_name_the_old_module_exports_exists(short):
    import importlib
    module = importlib.import_module(f"mlagents_envs.communicator_objects.{short}_pb2")
    names = old_module_names(os.path.join(fastwire.source_folder(), f"{short}_pb2.py"))
    assert "DESCRIPTOR" in names
    missing = sorted(n for n in names if not hasattr(module, n))
    assert not missing, f"{short}_pb2 lacks {missing}"


def test_enum_values_and_wrappers():
    from mlagents_envs.communicator_objects import command_pb2, observation_pb2
    assert (command_pb2.STEP, command_pb2.RESET, command_pb2.QUIT) == (0, 1, 2)
    assert command_pb2.CommandProto.Name(1) == "RESET"
    assert observation_pb2.NONE == 0 and observation_pb2.PNG == 1


@pytest.mark.parametrize("name", ["init", "step_output", "step_input"])
def test_fixtures_from_the_stock_stack_parse_identically_and_reserialize_to_the_same_bytes(name):
    from mlagents_envs.communicator_objects.unity_message_pb2 import UnityMessageProto
    expected = json.load(open(os.path.join(FIXTURES, "expected.json")))
    assert expected["protobuf"] == "3.20.3"
    data = open(os.path.join(FIXTURES, f"{name}.bin"), "rb").read()
    message = UnityMessageProto.FromString(data)
    assert as_plain(message) == expected["messages"][name]
    assert message.SerializeToString(deterministic=True) == data


def check_environment(env):
    """Reset and step a real UnityEnvironment; return the decision steps of every behavior."""
    env.reset()
    out = {}
    for _ in range(5):
        for name, spec in env.behavior_specs.items():
            decision, _ = env.get_steps(name)
            n = len(decision)
            env.set_actions(name, ActionTuple(continuous=np.zeros((n, spec.action_spec.continuous_size), np.float32),
                                              discrete=np.zeros((n, spec.action_spec.discrete_size), np.int32)))
        env.step()
    for name in env.behavior_specs:
        out[name] = env.get_steps(name)[0]
    return out


def test_unity_environment_continuous_discrete_masks_and_two_behaviors():
    with simulator("ball", args=["--agents", "5"]) as env:
        steps = check_environment(env)
        assert steps["Ball3D?team=0"].obs[0].shape == (5, 8)
    with simulator("teams", args=["--areas", "3"]) as env:
        steps = check_environment(env)
        assert set(steps) == {"Blue?team=0", "Purple?team=1"}
        assert [m.shape for m in steps["Purple?team=1"].action_mask] == [(3, 5), (3, 2)]


SUBPROCESS_CHECK = (
    "import mlagents_envs.environment\n"
    "from mlagents_envs.communicator_objects.unity_output_pb2 import UnityOutputProto\n"
    "from neatpar.envs.unity import fastwire\n"
    "print(fastwire.in_effect(), fastwire.backend())\n"
)


def test_fresh_interpreter_importing_mlagents_first():
    result = subprocess.run(python_code(SUBPROCESS_CHECK), capture_output=True, text=True,
                            cwd=ROOT, timeout=120)
    assert result.stdout.split() == ["True", "upb"], result.stderr


def test_the_simulators_have_the_fast_wire():
    """The simulator builds, a separate program beside neatpar that imports none of it, get the
    fast wire from the hook as every interpreter of the environment does."""
    script = (f"import sys\nsys.path.insert(0, {BUILDS!r})\nimport neatpar_sim.player\n"
              "from mlagents_envs.communicator_objects.unity_message_pb2 import UnityMessageProto\n"
              "from neatpar.envs.unity import fastwire\nprint(fastwire.in_effect(), fastwire.backend())\n")
    result = subprocess.run(python_code(script), capture_output=True, text=True, cwd=ROOT, timeout=120)
    assert result.stdout.split() == ["True", "upb"], result.stderr


def test_pure_python_backend_when_asked_same_results():
    script = SUBPROCESS_CHECK + (
        "import json, sys\n"
        f"sys.path.insert(0, {os.path.dirname(os.path.abspath(__file__))!r})\n"
        "from support.messages import as_plain\n"
        "from mlagents_envs.communicator_objects.unity_message_pb2 import UnityMessageProto\n"
        f"data = open({os.path.join(FIXTURES, 'step_output.bin')!r}, 'rb').read()\n"
        f"expected = json.load(open({os.path.join(FIXTURES, 'expected.json')!r}))['messages']['step_output']\n"
        "print(as_plain(UnityMessageProto.FromString(data)) == expected)\n"
    )
    env = {**os.environ, "PROTOCOL_BUFFERS_PYTHON_IMPLEMENTATION": "python"}
    result = subprocess.run(python_code(script), capture_output=True, text=True, cwd=ROOT,
                            timeout=120, env=env)
    assert result.stdout.split() == ["True", "python", "True"], result.stderr


def worker_check():
    from mlagents_envs.communicator_objects import unity_rl_output_pb2  # noqa: F401
    from neatpar.envs.unity import fastwire as wire
    return wire.in_effect(), wire.backend()


def test_spawn_worker_has_the_fast_wire():
    with neatpar.Pool(1) as pool:
        assert pool.apply_async(worker_check).get(60) == (True, "upb")


def test_foreign_registration_is_refused():
    script = (
        "from google.protobuf import descriptor_pb2, descriptor_pool\n"
        "proto = descriptor_pb2.FileDescriptorProto(name='mlagents_envs/communicator_objects/header.proto',\n"
        "                                           package='someone_else')\n"
        "descriptor_pool.Default().Add(proto)\n"
        "try:\n"
        "    import mlagents_envs.communicator_objects.header_pb2\n"
        "except ImportError as e:\n"
        "    print(type(e).__name__, e)\n"
    )
    result = subprocess.run(python_code(script), capture_output=True, text=True, cwd=ROOT, timeout=120)
    assert result.stdout.startswith("FastWireError"), result.stdout + result.stderr
    assert "already registered" in result.stdout


def test_files_in_an_unexpected_form_are_refused(tmp_path):
    odd = tmp_path / "agent_info_pb2.py"
    odd.write_text("# generated by a newer protoc\nDESCRIPTOR = None\n")
    with pytest.raises(fastwire.FastWireError, match="not in the form mlagents-envs 0.28.0 ships"):
        fastwire.read_descriptor(str(odd))


def test_the_hook_can_be_turned_off():
    script = ("import sys\nimport mlagents_envs\n"
              "print(any(type(f).__name__ == '_FastWireFinder' for f in sys.meta_path))\n")
    env = {**os.environ, "NEATPAR_FASTWIRE": "0"}
    result = subprocess.run(python_code(script), capture_output=True, text=True, cwd=ROOT,
                            timeout=60, env=env)
    assert result.stdout.strip() == "False", result.stderr


def test_without_the_hook_neatpar_says_why_instead_of_failing_in_protobuf():
    """An environment without neatpar-fastwire.pth (the hook's finder removed, as if it had never
    been installed): importing neatpar's Unity side is one clear error, not protobuf's TypeError."""
    script = ("import sys\n"
              "sys.meta_path[:] = [f for f in sys.meta_path if type(f).__name__ != '_FastWireFinder']\n"
              "try:\n"
              "    import neatpar.envs.unity.bridge\n"
              "except ImportError as error:\n"
              "    print(type(error).__name__, '|', error)\n")
    result = subprocess.run(python_code(script), capture_output=True, text=True, cwd=ROOT, timeout=60)
    assert result.stdout.startswith("FastWireError | neatpar's fast wire is off: its start-up hook "
                                    "(neatpar-fastwire.pth in site-packages) is not installed"), result.stderr
