"""Marks that test modules share."""
import pytest

# The tests that start Ray run one after another in one pytest-xdist process (dev.py test runs the
# suite in two): two Ray instances at once on one machine would meet, a plain ray.init() joining the
# cluster whose address a cluster_utils.Cluster leaves in the temporary folder, and each instance's
# dashboard agent wanting the same default port (52365).
ONE_RAY_AT_A_TIME = pytest.mark.xdist_group("ray")

# The tests that listen as neatpar does for the Unity Editor run one after another in one process:
# the Editor has one port (5004), which two of them at once would both want.
ON_THE_EDITOR_PORT = pytest.mark.xdist_group("editor-port")
