"""What the tests share, one module per concern: paths, the documentation's tool, neat-python
configs, simulators with guaranteed clean-up, process and shared-memory inspection, `neatpar`
command-line runs, plain views of messages, ONNX models as ML-Agents reads them, HyperNEAT
written from its definition, the evolution identity driver, the fitness functions pool workers
import and the marks that keep tests apart when the suite runs in two processes. Test modules import
from here and never from each other."""
