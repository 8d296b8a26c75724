"""neatpar.nn.substrate_file (nn/substrate_file.py): substrate.json written and read back to the
same bits, refused when it is not one, and enough, with winner.json, to rebuild the network."""
import json

import numpy as np
import pytest

from support.configs import evolved_genomes
from support.hyperneat import assert_same_bits, cppn_config, reference_network, reference_outputs, reference_weights
from neatpar.errors import ConfigError
from neatpar.nn.hyperneat import standalone_config
from neatpar.nn.substrate import IOShapes, Query, Substrate, make_substrate
from neatpar.nn.substrate_file import read_substrate, substrate_from_dict, substrate_to_dict, write_substrate
from neatpar.nn.substrate_population import SubstratePopulation
from neatpar.record.genomes import load_genome, save_genome_json


@pytest.mark.parametrize("substrate", [
    make_substrate(IOShapes(((3, 4, 2), (5,)), 2, (3,)), "2x2, 3", activation="sigmoid",
                   query=Query(0.1, 3.0, bias=True, leo=True)),
    make_substrate(IOShapes(((7,),), 1)),
    Substrate((np.random.default_rng(0).uniform(-1, 1, (6, 2)), np.array([[0.1, 0.7]]))),   # no sensors given
], ids=["image", "vector", "coordinates"])
def test_substrate_json_reads_back_to_the_same_bits(tmp_path, substrate):
    path = str(tmp_path / "substrate.json")
    write_substrate(substrate, path)
    again = read_substrate(path)
    assert again == substrate and again.key() == substrate.key()
    data = json.loads(open(path).read())
    assert [layer["name"] for layer in data["layers"]][0] == "inputs" and data["layers"][-1]["name"] == "outputs"
    assert data["cppn"]["inputs"][-1] == "1.0" and len(data["cppn"]["inputs"]) == substrate.cppn_inputs


def test_winner_json_and_substrate_json_alone_rebuild_the_network(tmp_path):
    """Without the run's config: the genome from winner.json, neat-python's defaults for its keys
    and functions, the definition's query (support) over substrate.json's coordinates."""
    substrate = make_substrate(IOShapes(((2, 3, 2),), 2), "3", activation="sigmoid", query=Query(bias=True))
    config = cppn_config(tmp_path, substrate, activation_options="sigmoid gauss sin abs", activation_mutate_rate=0.5)
    genome = evolved_genomes(config, 6, 12)[0]
    save_genome_json(genome, config, str(tmp_path / "winner.json"))
    write_substrate(substrate, str(tmp_path / "substrate.json"))

    read = read_substrate(str(tmp_path / "substrate.json"))
    data = json.loads((tmp_path / "substrate.json").read_text())
    alone = standalone_config(len(data["cppn"]["inputs"]), len(data["cppn"]["outputs"]))
    network = reference_network(*reference_weights(load_genome(str(tmp_path / "winner.json")), alone, read), read)

    x = np.random.default_rng(3).normal(size=(5, substrate.num_inputs))
    population = SubstratePopulation.create([genome], config, substrate)
    assert_same_bits(reference_outputs([network], x, [0] * 5), population.activate(x, np.zeros(5, np.int64)))


def test_what_is_not_a_substrate_json_is_refused_in_one_line(tmp_path):
    good = substrate_to_dict(make_substrate(IOShapes(((3,),), 1), "2"))
    cases = [({**good, "format": "neatpar-genome"}, "is not a neatpar substrate"),
             ({**good, "version": 2}, "format version 2"),
             ({**good, "cppn": {**good["cppn"], "outputs": ["weight", "bias"]}}, "edited by hand"),
             ({**good, "dimensions": 3}, "edited by hand"),
             ({k: v for k, v in good.items() if k != "query"}, "not a complete substrate description"),
             ({**good, "activation": "swish"}, "built-in activations"),
             ({**good, "layers": good["layers"][:1]}, "needs an input and an output layer")]
    for data, message in cases:
        with pytest.raises(ConfigError, match=message) as raised:
            substrate_from_dict(data, "substrate.json")
        assert "\n" not in str(raised.value)
    (tmp_path / "bad.json").write_text("{")
    with pytest.raises(ConfigError, match="is not JSON"):
        read_substrate(str(tmp_path / "bad.json"))
    with pytest.raises(ConfigError, match="cannot read it"):
        read_substrate(str(tmp_path / "missing.json"))
