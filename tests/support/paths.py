"""Where things are: the repository, its configs and the simulator builds."""
import os

TESTS = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
ROOT = os.path.dirname(TESTS)
CONFIGS = os.path.join(ROOT, "configs")
BUILDS = os.path.join(ROOT, "unity_builds")
BALL = os.path.join(BUILDS, "ball")
HOVER = os.path.join(BUILDS, "hover")
