"""neatpar on every supported Python (3.10 to 3.13) and numpy (1.23.5, 2.x), as the running
interpreter sees it: importing it warns of nothing, even with every warning an error, and a short
`neatpar evolve` of the ball build draws no deprecation warning from neatpar's own code (what 3.14
or the next numpy would turn into an error). The matrix (make test-matrix) runs these on each."""
import json
import os
import subprocess
import sys

import numpy
import pytest

import neatpar
from support.configs import ball_cfg
from support.paths import ROOT
from support.processes import python_code

PACKAGE = os.path.dirname(os.path.abspath(neatpar.__file__))
TOP_MODULES = tuple(os.path.join(os.path.dirname(PACKAGE), name)
                    for name in ("_neatpar_command.py", "_neatpar_fastwire_hook.py"))

# Run in a child: every warning shown, and those of the kinds that announce a removal recorded
# where neatpar's own files are named as their cause; then `neatpar evolve` as the command runs it.
RECORDING = """
import json, sys, warnings
kinds = (DeprecationWarning, PendingDeprecationWarning, FutureWarning)
seen = []
def show(message, category, filename, lineno, file=None, line=None):
    if issubclass(category, kinds):
        seen.append({"category": category.__name__, "file": filename, "line": lineno, "message": str(message)})
warnings.showwarning = show
warnings.simplefilter("always")
report = sys.argv.pop(1)
try:
    import neatpar.cli
    status = neatpar.cli.main(sys.argv[1:])
finally:
    with open(report, "w") as f:
        json.dump(seen, f)
sys.exit(status)
"""


def neatpar_files(warnings_seen: list[dict]) -> list[dict]:
    """The warnings whose cause is in neatpar's package or its top-level modules."""
    return [w for w in warnings_seen if w["file"].startswith(PACKAGE + os.sep) or w["file"] in TOP_MODULES]


def test_the_supported_versions_are_the_running_ones():
    """The suite runs on a Python and a numpy that neatpar supports (numpy 1.24 to 1.26 lack the
    np.bool that mlagents-envs 0.28 uses)."""
    assert (3, 10) <= sys.version_info[:2] <= (3, 13)
    major_minor = tuple(int(n) for n in numpy.__version__.split(".")[:2])
    assert major_minor == (1, 23) or major_minor[0] == 2, numpy.__version__


def test_importing_neatpar_warns_of_nothing_with_every_warning_an_error(tmp_path):
    result = subprocess.run([sys.executable, "-W", "error", "-c", "import sys; del sys.path[0]; import neatpar"],
                            capture_output=True, text=True, cwd=tmp_path, timeout=120)
    assert result.returncode == 0 and result.stderr == "", result.stderr[-3000:]


@pytest.mark.slow
def test_a_short_run_draws_no_deprecation_warning_from_neatpar_s_code(tmp_path):
    report = tmp_path / "warnings.json"
    config = ball_cfg(tmp_path, generations=2, video_interval=1)
    result = subprocess.run([*python_code(RECORDING), str(report), "evolve", "--config", config,
                             "--out", str(tmp_path / "run")], capture_output=True, text=True, cwd=ROOT, timeout=300)
    assert result.returncode == 0, result.stderr[-3000:]
    seen = json.loads(report.read_text())
    assert neatpar_files(seen) == []


def test_the_recording_sees_a_deprecation_warning_neatpar_s_code_causes(tmp_path):
    """The check above can fail: a warning caused by a file of neatpar's package is recorded."""
    caused = [{"category": "DeprecationWarning", "file": os.path.join(PACKAGE, "settings.py"), "line": 1,
               "message": "x"}, {"category": "DeprecationWarning", "file": "/elsewhere/mlagents_envs/x.py",
                                 "line": 1, "message": "y"}]
    assert [w["message"] for w in neatpar_files(caused)] == ["x"]
