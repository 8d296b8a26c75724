"""Building ONNX graphs (neatpar/nn/onnx_graph.py): each of neat-python's built-in activations and
aggregations, built as ONNX operators and run by onnxruntime, computes neat-python's own function
(within float32), and equal constants are one initializer."""
import neat
import numpy as np
import pytest
from onnx import TensorProto, helper

from neatpar.nn.onnx_graph import ACTIVATIONS, AGGREGATIONS, BATCH, EMPTY_AGGREGATE, OnnxGraph
from support.onnx_models import checked_session

NEAT_ACTIVATIONS = neat.activations.ActivationFunctionSet().functions
NEAT_AGGREGATIONS = neat.aggregations.AggregationFunctionSet().functions
VALUES = np.array([0.0, -0.0, 1e-3, -1e-3, 0.3, -0.45, 1.0, -1.0, 2.5, -3.7, 15.0, -15.0, 59.0], np.float32)


def run(build, x: np.ndarray) -> np.ndarray:
    """The [batch, 1] result of `build(graph, columns)` on the columns of `x`, run by onnxruntime."""
    g = OnnxGraph()
    matrix = g.add_input("x", [BATCH, x.shape[1]])
    columns = [g.op("Slice", [matrix], axes=[1], starts=[j], ends=[j + 1]) for j in range(x.shape[1])]
    g.add_output("y", build(g, columns), TensorProto.FLOAT, [BATCH, 1])
    model = helper.make_model(helper.make_graph(g.nodes, "function", g.inputs, g.outputs, g.initializers),
                              opset_imports=[helper.make_opsetid("", 9)])
    model.ir_version = 4
    return checked_session(model).run(["y"], {"x": x})[0][:, 0]


@pytest.mark.parametrize("name", sorted(ACTIVATIONS))
def test_each_activation_is_neat_python_s(name):
    got = run(lambda g, columns: ACTIVATIONS[name](g, columns[0]), VALUES[:, None])
    expected = [NEAT_ACTIVATIONS[name](float(v)) for v in VALUES]
    assert np.allclose(got, expected, rtol=1e-5, atol=1e-6), name


@pytest.mark.parametrize("inputs", [1, 2, 3, 4, 5])
@pytest.mark.parametrize("name", sorted(AGGREGATIONS))
def test_each_aggregation_is_neat_python_s(name, inputs):
    x = np.random.default_rng(inputs).normal(scale=2.0, size=(50, inputs)).astype(np.float32)
    x[0] = x[0, 0]                                 # ties
    got = run(lambda g, columns: AGGREGATIONS[name](g, columns), x)
    expected = [NEAT_AGGREGATIONS[name]([float(v) for v in row]) for row in x]
    assert np.allclose(got, expected, rtol=1e-5, atol=1e-6), name


def test_an_empty_aggregate_is_neat_python_s_and_the_table_covers_every_built_in():
    for name in AGGREGATIONS:
        assert NEAT_AGGREGATIONS[name]([]) == EMPTY_AGGREGATE.get(name, 0.0), name
    assert set(ACTIVATIONS) == set(NEAT_ACTIVATIONS) and set(AGGREGATIONS) == set(NEAT_AGGREGATIONS)


def test_equal_constants_are_one_initializer():
    g = OnnxGraph()
    assert g.const(0.5) == g.const(0.5) != g.const(0.25)
    assert g.const(0, np.int64) != g.const(0.0)        # a value of another type is another constant
    assert len(g.initializers) == 4
