"""HyperNEAT written from its definition (neatpar/nn/hyperneat.py's docstring), as the tests'
reference: neat-python's FeedForwardNetwork as the CPPN, one activate() per node pair, PUREPLES'
threshold and scaling in Python, and the substrate network as a neat-python FeedForwardNetwork of
the links whose weight is not 0.0. Also CPPN configs and bit-for-bit comparisons."""
import neat
import numpy as np

from .configs import make_config


def cppn_config(directory, substrate, name="cppn.cfg", **options):
    """A neat-python config whose genomes are CPPNs for `substrate` (its inputs and outputs)."""
    return make_config(directory, name, num_inputs=substrate.cppn_inputs, num_outputs=substrate.query.outputs,
                       **options)


def mapped(o: float, threshold: float, max_weight: float) -> float:
    """PUREPLES' query_cppn on one CPPN output, written as it writes it."""
    if abs(o) > threshold:
        if o > 0:
            w = (o - threshold) / (1.0 - threshold)
        else:
            w = (o + threshold) / (1.0 - threshold)
        return w * max_weight
    return 0.0


def reference_weights(genome, config, substrate) -> tuple[list, list]:
    """(weights, biases) per layer, every pair's weight from its own activate() call."""
    net = neat.nn.FeedForwardNetwork.create(genome, config)
    q = substrate.query
    origin = [0.0] * substrate.dimensions
    weights, biases = [], []
    for sources, targets in zip(substrate.layers, substrate.layers[1:]):
        w = np.zeros((len(sources), len(targets)))
        for s, source in enumerate(sources.tolist()):
            for t, target in enumerate(targets.tolist()):
                o = net.activate(source + target + [1.0])
                value = mapped(o[0], q.threshold, q.max_weight)
                if q.leo and not o[q.leo_output] > 0.0:
                    value = 0.0
                w[s, t] = value
        b = np.zeros(len(targets))
        if q.bias:
            for t, target in enumerate(targets.tolist()):
                b[t] = mapped(net.activate(origin + target + [1.0])[q.bias_output], q.threshold, q.max_weight)
        weights.append(w)
        biases.append(b)
    return weights, biases


def reference_network(weights, biases, substrate):
    """The substrate network of these weights as neat-python's FeedForwardNetwork: node keys
    numbered layer after layer, every hidden and output node (activation, sum, bias, 1.0) with a
    link from each node of the previous layer whose weight is not 0.0, in that layer's order."""
    activation = neat.activations.ActivationFunctionSet().get(substrate.activation)
    sizes = substrate.sizes
    first = np.cumsum([0] + list(sizes)).tolist()
    node_evals = []
    for k, (w, b) in enumerate(zip(weights, biases)):
        for t in range(w.shape[1]):
            links = [(first[k] + s, float(w[s, t])) for s in range(w.shape[0]) if w[s, t] != 0.0]
            node_evals.append((first[k + 1] + t, activation, neat.aggregations.sum_aggregation, float(b[t]), 1.0,
                               links))
    return neat.nn.FeedForwardNetwork(list(range(sizes[0])), list(range(first[-2], first[-1])), node_evals)


def reference_outputs(networks: list, inputs: np.ndarray, index) -> np.ndarray:
    """Each row through the network of its genome, one activate() per row."""
    return np.array([networks[g].activate(row) for g, row in zip(index, inputs.tolist())])


def same_bits(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Elementwise: equal to the last bit (0.0 and -0.0 differ), or both NaN."""
    a, b = np.asarray(a, np.float64), np.asarray(b, np.float64)
    return (a.view(np.int64) == b.view(np.int64)) | (np.isnan(a) & np.isnan(b))


def assert_same_bits(out, ref, what: str = "values") -> None:
    out, ref = np.asarray(out, np.float64), np.asarray(ref, np.float64)
    assert out.shape == ref.shape, f"{what}: shape {out.shape}, reference {ref.shape}"
    same = same_bits(out, ref)
    if not same.all():
        i = np.unravel_index(int(np.argmin(same)), same.shape)
        raise AssertionError(f"{what}: {int((~same).sum())} of {same.size} differ; first at {i}: "
                             f"{out[i]!r}, reference {ref[i]!r}")
