"""What the tests share, one module per concern: paths, the documentation's tool, neat-python
configs, simulators with guaranteed clean-up, process and shared-memory inspection, `neatpar`
command-line runs, plain views of messages, ONNX models as ML-Agents reads them, HyperNEAT
written from its definition, the evolution identity driver, the fitness functions pool workers
import and the marks that keep tests apart when the suite runs in two processes. Test modules import
from here and never from each other.

The simulators' package (unity_builds/neatpar_sim), which is no part of neatpar and is not
installed, is importable in every process that imports this package: its folder goes on sys.path
here, and only here."""
import os
import sys

_BUILDS = os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))), "unity_builds")
if _BUILDS not in sys.path:
    sys.path.append(_BUILDS)

