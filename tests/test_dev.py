"""The project's commands (dev.py, which the Makefile's targets run): the install refreshed only when
it is older than its sources or was made with other extras or another Python, an up-to-date
environment left as it is, the Python chosen (the newest supported one found, or the one named),
the matrix over every supported Python, and every make target one of its commands."""
import os
import re
import subprocess
import sys

import pytest

from support.dev_commands import load_dev
from support.paths import ROOT

dev = load_dev()
THIS = "%d.%d" % sys.version_info[:2]


@pytest.fixture
def installed(tmp_path):
    """A virtual environment's folder as dev.py leaves it after an install with the default extras."""
    scripts = dev.scripts(str(tmp_path))
    os.makedirs(scripts)
    os.symlink(sys.executable, os.path.join(scripts, "python"))
    with open(os.path.join(tmp_path, dev.STAMP), "w") as f:
        f.write(dev.stamp_text(dev.EXTRAS, THIS))
    return str(tmp_path)


def test_an_install_newer_than_its_sources_with_the_same_extras_is_kept(installed):
    assert not dev.stale(installed, dev.EXTRAS)


def test_other_extras_another_python_a_newer_source_or_no_install_make_it_again(installed):
    assert dev.stale(installed, "test,plot")
    assert not dev.stale(installed, dev.EXTRAS, THIS)
    assert dev.stale(installed, dev.EXTRAS, "3.10" if THIS != "3.10" else "3.13")
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
    result = subprocess.run([sys.executable, "dev.py", "venv", "--venv", venv, "--python", sys.executable], cwd=ROOT,
                            capture_output=True, text=True, timeout=60)
    assert (result.returncode, result.stdout, result.stderr) == (0, "", "")


def test_every_make_target_is_a_command_of_dev_py():
    makefile = open(os.path.join(ROOT, "Makefile")).read()
    targets = re.search(r'^([a-z -]+):\n\t@\$\(BOOT\) dev.py \$@ --python "\$\(PYTHON\)" --venv \$\(VENV\) '
                        r'--extras \$\(EXTRAS\)$',
                        makefile, re.MULTILINE)
    assert targets is not None, "the Makefile's recipe is not dev.py's command"
    phony = re.search(r"^\.PHONY: (.*)$", makefile, re.MULTILINE).group(1).split()
    assert sorted(targets.group(1).split()) == sorted(phony) == sorted(dev.COMMANDS)


def test_this_python_is_found_as_its_version_and_named_by_version_or_program():
    """The suite's own interpreter is a supported Python: found by its version, chosen by version or
    by program (as its sys.executable either way)."""
    assert THIS in dev.SUPPORTED
    assert dev.version_of([sys.executable]) == (THIS, sys.executable)
    assert dev.find_python(THIS) is not None
    assert dev.version_of([dev.choose_python(THIS)])[0] == THIS
    assert dev.choose_python(sys.executable) == sys.executable


def test_the_default_is_the_newest_supported_python_found():
    found = dev.find_pythons()
    newest = max(found, key=lambda version: tuple(int(n) for n in version.split(".")))
    assert list(found) == sorted(found, key=lambda version: tuple(int(n) for n in version.split(".")), reverse=True)
    assert dev.version_of([dev.choose_python("")])[0] == newest


@pytest.mark.parametrize("wanted, says", [("3.9", "does not support Python 3.9"), ("/bin/true", "is not a supported Python"),
                                          ("no-such-python", "is not a supported Python")])
def test_an_unsupported_or_missing_python_is_one_line_naming_it(wanted, says):
    with pytest.raises(SystemExit) as raised:
        dev.choose_python(wanted)
    assert says in str(raised.value) and "\n" not in str(raised.value)


def test_a_program_that_does_not_run_is_not_a_python():
    """A pyenv shim of an unselected version exits non-zero: not found, rather than an error."""
    assert dev.version_of(["/bin/false"]) is None and dev.version_of(["no-such-program"]) is None


def test_the_matrix_has_every_supported_python_and_both_numpy_majors():
    assert sorted({cell.python for cell in dev.MATRIX}) == sorted(dev.SUPPORTED)
    assert {cell.numpy_requirement for cell in dev.MATRIX} == {"numpy==1.23.5", "numpy>=2,<3"}
    assert len({cell.name for cell in dev.MATRIX}) == len(dev.MATRIX)
    assert all(os.path.isfile(os.path.join(ROOT, test.split("::")[0])) for test in dev.MATRIX_TESTS)
