"""neatpar.nn.es_substrate (nn/es_substrate.py): ES-HyperNEAT's substrate of inputs and outputs
laid out as HyperNEAT's, the search's parameters and their one-line errors, and substrate.json
written and read back to the same substrate, the winner's discovered network with it."""
import json

import numpy as np
import pytest

from neatpar.errors import ConfigError
from neatpar.nn.es_substrate import (Discovered, ESParams, EvolvableSubstrate, es_from_dict, es_substrate_json,
                                     make_es_substrate)
from neatpar.nn.substrate import IOShapes, make_substrate


def test_inputs_and_outputs_are_hyperneats_default_layout():
    io = IOShapes(((3, 4), (2,)), 2, (3,))
    es = make_es_substrate(io)
    laid = make_substrate(io)
    assert np.array_equal(es.inputs, laid.layers[0]) and np.array_equal(es.outputs, laid.layers[-1])
    assert (es.num_inputs, es.num_outputs, es.activation) == (14, 5, "sigmoid")


def test_a_coordinates_file_gives_the_nodes_and_may_not_give_hidden_layers(tmp_path):
    path = tmp_path / "c.json"
    path.write_text(json.dumps({"inputs": [[-0.5, -0.9], [0.5, -0.9]], "outputs": [[0.0, 0.9]]}))
    es = make_es_substrate(IOShapes(((2,),), 1), str(path))
    assert es.inputs.tolist() == [[-0.5, -0.9], [0.5, -0.9]] and es.outputs.tolist() == [[0.0, 0.9]]
    path.write_text(json.dumps({"hidden": [[[0.0, 0.0]]]}))
    with pytest.raises(ConfigError, match="leave out \"hidden\""):
        make_es_substrate(IOShapes(((2,),), 1), str(path))


def test_substrate_json_reads_back_the_same_substrate_and_winner():
    es = make_es_substrate(IOShapes(((3,),), 2), params=ESParams(max_depth=3, band_threshold=0.25))
    winner = Discovered(np.array([[0.25, -0.5], [0.5, 0.5]]), np.array([0, 3, 4]), np.array([3, 4, 1]),
                        np.array([0.1, -2.5, 1 / 3]))
    back = es_from_dict(json.loads(es_substrate_json(es.with_winner(winner))))
    assert back == es and back.params == es.params and back.io == es.io
    assert back.winner.hidden.tolist() == winner.hidden.tolist()
    assert back.winner.weights.tobytes() == winner.weights.tobytes()
    assert back.winner.sources.tolist() == [0, 3, 4] and back.winner.targets.tolist() == [3, 4, 1]
    assert es_from_dict(json.loads(es_substrate_json(es))).winner is None
    assert es != make_es_substrate(IOShapes(((3,),), 2))


@pytest.mark.parametrize("make, words", [
    (lambda: ESParams(initial_depth=3, max_depth=2), "es_initial_depth"),
    (lambda: ESParams(max_depth=11), "es_max_depth"),
    (lambda: ESParams(variance_threshold=-1.0), "es_variance_threshold"),
    (lambda: ESParams(max_weight=0.0), "es_max_weight"),
    (lambda: ESParams(activation="swish"), "es_activation"),
    (lambda: EvolvableSubstrate(np.zeros((2, 2)), np.ones((1, 2))), "own point"),
    (lambda: EvolvableSubstrate(np.zeros((1, 3)), np.ones((1, 3))), "2-D"),
    (lambda: make_es_substrate(IOShapes(((2, 2, 3),), 1)), "2-D substrate"),
    (lambda: es_from_dict({"version": 1, "inputs": []}), "not a complete"),
])
def test_bad_parameters_and_substrates_are_refused_in_one_line(make, words):
    with pytest.raises(ConfigError, match=words) as error:
        make()
    assert "\n" not in str(error.value)
