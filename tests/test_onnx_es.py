"""neatpar.nn.onnx_es (nn/onnx_es.py): an ES-HyperNEAT genome's discovered network as ML-Agents'
ONNX model, whose actions in onnxruntime are the population kernel's (float32 apart), and one-line
errors for a behavior the substrate was not made for."""
import numpy as np
import pytest

from neatpar.environment import Layout
from neatpar.errors import ExportError
from neatpar.nn.es_hyperneat import es_population
from neatpar.nn.es_substrate import ESParams, make_es_substrate
from neatpar.nn.onnx_es import export_es_policy
from neatpar.nn.substrate import IOShapes
from support.configs import evolved_genomes, make_config
from support.onnx_models import checked_session


def test_the_model_acts_as_the_kernel_on_discovered_networks(tmp_path):
    config = make_config(tmp_path, num_inputs=5, num_outputs=1, pop_size=12, activation_options="sigmoid sin gauss abs",
                         activation_mutate_rate=0.4)
    genomes = evolved_genomes(config, 3, 8)
    es = make_es_substrate(IOShapes(((4,), (2,)), 2, (3,)), params=ESParams(activation="tanh", band_threshold=0.1))
    layout = Layout((4, 2), 2, (3,))
    kernel = es_population(genomes, config, es)
    rng = np.random.default_rng(2)
    checked = 0
    for g, genome in enumerate(genomes):
        session = checked_session(export_es_policy(genome, config, es, layout))
        x = rng.normal(size=(5, 6)).astype(np.float32)
        mask = np.ones((5, 3), np.float32)
        continuous, discrete = session.run(["continuous_actions", "discrete_actions"],
                                           {"obs_0": x[:, :4], "obs_1": x[:, 4:], "action_masks": mask})
        outputs = kernel.activate(x.astype(np.float64), np.full(5, g))
        assert np.allclose(continuous, np.clip(outputs[:, :2], -1, 1), atol=1e-5)
        clear = np.sort(outputs[:, 2:], axis=1)[:, -1] - np.sort(outputs[:, 2:], axis=1)[:, -2] > 1e-4
        assert (discrete[clear, 0] == np.argmax(outputs[clear, 2:], axis=1)).all()
        checked += int((outputs != 0.0).any())
    assert checked > 0   # some genome's network reaches an output


def test_a_behavior_of_other_sizes_is_refused_in_one_line(tmp_path):
    config = make_config(tmp_path, num_inputs=5, num_outputs=1)
    genome = evolved_genomes(config, 1, 1)[0]
    with pytest.raises(ExportError, match="export for the behavior the substrate was made for"):
        export_es_policy(genome, config, make_es_substrate(IOShapes(((3,),), 1)), Layout((4,), 1))
