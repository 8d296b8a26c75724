"""What the layers above declare to the pool (neatpar/parallel/declarations.py), and the
environments' declarations (neatpar/envs/live_handles.py) in effect once neatpar is imported."""
import subprocess
import sys

from support.paths import ROOT


def run(script: str) -> list[str]:
    result = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, cwd=ROOT, timeout=60)
    assert result.returncode == 0, result.stderr
    return result.stdout.split()


def test_importing_neatpar_declares_ml_agents_classes_without_importing_ml_agents():
    assert run(
        "import sys, neatpar\n"
        "from neatpar.parallel import declarations\n"
        "from neatpar.parallel.handles import handle_kind, is_connecting\n"
        "print('mlagents_envs' in sys.modules, len(declarations.import_refusals()))\n"
        "from mlagents_envs.environment import UnityEnvironment\n"
        "kind = handle_kind(UnityEnvironment.__new__(UnityEnvironment))\n"
        "print(kind.replace(' ', '_'), is_connecting(kind))\n"
    ) == ["False", "1", "Unity_environment_connection", "True"]


def test_declared_exit_hooks_run_before_python_joins_threads_at_exit():
    """The hook releases a thread that would otherwise keep the exit waiting (the subprocess's
    timeout ends the test if it does not)."""
    assert run(
        "import threading\n"
        "from neatpar.parallel.declarations import declare_exit_hook\n"
        "from neatpar.parallel.handles import install_exit_hooks\n"
        "released = threading.Event()\n"
        "def release():\n"
        "    print('hook')\n"
        "    released.set()\n"
        "declare_exit_hook(release)\n"
        "declare_exit_hook(release)\n"
        "install_exit_hooks()\n"
        "install_exit_hooks()\n"
        "threading.Thread(target=released.wait).start()\n"
        "print('end')\n"
    ) == ["end", "hook"]
