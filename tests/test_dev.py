"""The project's commands (dev.py, which the Makefile's targets run): the install refreshed only when
it is older than its sources or was made with other extras, an up-to-date environment left as it
is, and every make target one of its commands."""
import importlib.util
import os
import re
import subprocess
import sys

import pytest

from support.paths import ROOT


def load_dev():
    spec = importlib.util.spec_from_file_location("dev", os.path.join(ROOT, "dev.py"))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


dev = load_dev()


@pytest.fixture
def installed(tmp_path):
    """A virtual environment's folder as dev.py leaves it after an install with the default extras."""
    scripts = dev.scripts(str(tmp_path))
    os.makedirs(scripts)
    os.symlink(sys.executable, os.path.join(scripts, "python"))
    with open(os.path.join(tmp_path, dev.STAMP), "w") as f:
        f.write(dev.EXTRAS + "\n")
    return str(tmp_path)


def test_an_install_newer_than_its_sources_with_the_same_extras_is_kept(installed):
    assert not dev.stale(installed, dev.EXTRAS)


def test_other_extras_a_newer_source_or_no_install_make_it_again(installed):
    assert dev.stale(installed, "test,plot")
    source = os.path.join(ROOT, "setup.py")
    os.utime(os.path.join(installed, dev.STAMP), (0, os.path.getmtime(source) - 10))
    assert dev.stale(installed, dev.EXTRAS)
    os.remove(os.path.join(installed, dev.STAMP))
    assert dev.stale(installed, dev.EXTRAS)
    assert dev.stale(os.path.join(installed, "none"), dev.EXTRAS)


def test_an_up_to_date_environment_is_left_as_it_is():
    """This suite's own .venv (made by dev.py): `venv` runs nothing."""
    venv = os.path.dirname(os.path.dirname(sys.executable))
    assert not dev.stale(venv, dev.EXTRAS), "the test environment is older than its sources: run make venv"
    result = subprocess.run([sys.executable, "dev.py", "venv", "--venv", venv], cwd=ROOT, capture_output=True,
                            text=True, timeout=60)
    assert (result.returncode, result.stdout, result.stderr) == (0, "", "")


def test_every_make_target_is_a_command_of_dev_py():
    makefile = open(os.path.join(ROOT, "Makefile")).read()
    targets = re.search(r"^([a-z -]+):\n\t@\$\(PYTHON\) dev.py \$@ --venv \$\(VENV\) --extras \$\(EXTRAS\)$",
                        makefile, re.MULTILINE)
    assert targets is not None, "the Makefile's recipe is not dev.py's command"
    phony = re.search(r"^\.PHONY: (.*)$", makefile, re.MULTILINE).group(1).split()
    assert sorted(targets.group(1).split()) == sorted(phony) == sorted(dev.COMMANDS)
