"""neatpar.nn.substrate (nn/substrate.py): the default layouts (lines, grids in the observation's
(H, W, C) order, channels on z, sensors side by side, hidden specs), coordinates given in a JSON
file, the records' checks and their one-line errors."""
import json
import re

import numpy as np
import pytest

from neatpar.errors import ConfigError
from neatpar.nn.substrate import IOShapes, Query, Substrate, centres, make_substrate, parse_hidden


def test_a_vector_sensor_is_a_line_at_the_bottom_and_the_outputs_a_line_at_the_top():
    substrate = make_substrate(IOShapes(((4,),), 2, (3,)))
    assert substrate.dimensions == 2 and substrate.sizes == (4, 5) and substrate.cppn_inputs == 5
    inputs, outputs = substrate.layers
    assert inputs.tolist() == [[-0.75, -1.0], [-0.25, -1.0], [0.25, -1.0], [0.75, -1.0]]
    assert outputs[:, 1].tolist() == [1.0] * 5                      # 2 continuous, then the branch's 3 scores
    assert outputs[:, 0].tolist() == pytest.approx([-0.8, -0.4, 0.0, 0.4, 0.8], abs=1e-15)
    assert (outputs[::-1, 0] == -outputs[:, 0]).all()              # mirrored nodes: opposite coordinates


def test_an_image_is_a_grid_in_the_observations_order_with_its_channels_on_z():
    """Node r * W * C + c * C + k is pixel (row r, column c), channel k: x by column, y by row from
    the top, z by channel; a 3-D substrate whose CPPN reads 7 inputs."""
    h, w, c = 3, 4, 2
    substrate = make_substrate(IOShapes(((h, w, c),), 1))
    assert substrate.dimensions == 3 and substrate.cppn_inputs == 7 and substrate.num_inputs == h * w * c
    nodes = substrate.layers[0].reshape(h, w, c, 3)
    assert (nodes[..., 0] == centres(w)[None, :, None]).all()
    assert (nodes[..., 1] == centres(h)[::-1][:, None, None]).all() and nodes[0, 0, 0, 1] > nodes[1, 0, 0, 1]
    assert (nodes[..., 2] == centres(c)[None, None, :]).all()
    assert (substrate.layers[1][:, 2] == 0.0).all()                # nodes without channels at z = 0
    one_channel = make_substrate(IOShapes(((h, w, 1),), 1))
    assert one_channel.dimensions == 2 and one_channel.layers[0].tolist() == make_substrate(
        IOShapes(((h, w),), 1)).layers[0].tolist()


def test_sensors_sit_side_by_side_in_their_own_slots():
    substrate = make_substrate(IOShapes(((2, 2, 1), (3,), (5,)), 1))
    nodes = substrate.layers[0]
    slots = [nodes[:4], nodes[4:7], nodes[7:]]
    for k, part in enumerate(slots):
        low, high = -1 + 2 * k / 3, -1 + 2 * (k + 1) / 3
        assert (part[:, 0] > low).all() and (part[:, 0] < high).all()
    assert set(slots[0][:, 1].tolist()) == {0.5, -0.5}             # the image fills the height
    assert (slots[1][:, 1] == -1.0).all() and (slots[2][:, 1] == -1.0).all()


def test_hidden_layers_are_grids_over_the_square_and_lines_at_their_levels():
    substrate = make_substrate(IOShapes(((3,),), 1), "2x3, 4, 2")
    assert substrate.sizes == (3, 6, 4, 2, 1)
    grid, first_line, second_line = substrate.layers[1:4]
    assert sorted(set(grid[:, 0].tolist())) == pytest.approx([-2 / 3, 0.0, 2 / 3]) and set(grid[:, 1]) == {0.5, -0.5}
    assert (first_line[:, 1] == 0.0).all() and (second_line[:, 1] == 0.5).all()    # levels of 5 layers
    assert parse_hidden("8x8, 16") == ((8, 8), (16,)) and parse_hidden("") == ()
    assert parse_hidden(" 4 X 2 ") == ((4, 2),)


@pytest.mark.parametrize("spec", ["8x", "0", "8x8x2", "a", "4,,2", "-3"])
def test_bad_hidden_specs_are_one_line_errors(spec):
    with pytest.raises(ConfigError, match="hidden layer") as raised:
        parse_hidden(spec)
    assert "\n" not in str(raised.value)


def test_every_default_coordinate_is_inside_the_square():
    substrate = make_substrate(IOShapes(((7, 9, 3), (1,), (13,)), 3, (2, 5)), "5x1, 1, 17")
    for layer in substrate.layers:
        assert (np.abs(layer) <= 1.0).all() and np.isfinite(layer).all()
    assert substrate.parameters == sum(a * b + b for a, b in zip(substrate.sizes, substrate.sizes[1:]))


def write(tmp_path, data, name="coordinates.json") -> str:
    path = tmp_path / name
    path.write_text(data if isinstance(data, str) else json.dumps(data))
    return str(path)


def test_a_coordinates_file_replaces_the_layers_it_gives(tmp_path):
    rays = [[np.cos(a) * 0.9, np.sin(a) * 0.9] for a in np.linspace(0.2, 2.9, 5)]
    path = write(tmp_path, {"inputs": rays, "hidden": [[[0.0, 0.0], [0.5, 0.5]]]})
    substrate = make_substrate(IOShapes(((5,),), 2), coordinates=path)
    assert substrate.sizes == (5, 2, 2) and substrate.dimensions == 2
    assert substrate.layers[0].tolist() == rays and substrate.layers[1].tolist() == [[0.0, 0.0], [0.5, 0.5]]
    assert substrate.layers[2].tolist() == make_substrate(IOShapes(((5,),), 2)).layers[1].tolist()


def test_three_coordinates_in_the_file_make_the_substrate_three_dimensional(tmp_path):
    path = write(tmp_path, {"outputs": [[0.0, 1.0, -1.0], [0.0, 1.0, 1.0]]})
    substrate = make_substrate(IOShapes(((3,),), 2), "2", coordinates=path)
    assert substrate.dimensions == 3 and substrate.cppn_inputs == 7
    assert (substrate.layers[0][:, 2] == 0.0).all() and substrate.layers[2][:, 2].tolist() == [-1.0, 1.0]


@pytest.mark.parametrize("data, message", [
    ("{not json", "is not JSON"),
    ({"inputs": [[0.0, 0.0]], "extra": []}, "and no others"),
    ({"inputs": [[0.0, 0.0], [0.1]]}, r"\[x, y\] or \[x, y, z\]"),
    ({"inputs": [[0.0, "a"]]}, r"\[x, y\] or \[x, y, z\]"),
    ({"inputs": [[0.0, 0.0]]}, "give 1 inputs but the behavior has 3 observation values"),
    ({"outputs": [[0.0, 2.0]]}, r"outputs, node 0: \[0.0, 2.0\] has y = 2.0, outside \[-1, 1\]"),
    ({"hidden": [[[0.0, 0.0]], []]}, "hidden layer 2: give a non-empty list"),
    ({"hidden": {"a": 1}}, "give a list of layers"),
])
def test_bad_coordinates_files_are_one_line_errors(tmp_path, data, message):
    with pytest.raises(ConfigError, match=message) as raised:
        make_substrate(IOShapes(((3,),), 1), coordinates=write(tmp_path, data))
    assert "\n" not in str(raised.value)


def test_a_coordinate_out_of_range_names_the_file_the_layer_and_the_node_as_written(tmp_path):
    """A 2-D node of a file whose other layer is 3-D: the error names the file, the layer and the
    node, and shows the point as the file has it (no z added, integers as integers)."""
    path = write(tmp_path, {"inputs": [[0.0, -1], [1.5, -1], [0.5, -1]], "outputs": [[0, 1, 0.5]]})
    with pytest.raises(ConfigError) as raised:
        make_substrate(IOShapes(((3,),), 1), coordinates=path)
    assert str(raised.value) == (f"substrate coordinates {path!r} inputs, node 1: [1.5, -1] has x = 1.5, outside "
                                 f"[-1, 1]: give every coordinate in [-1, 1]")
    path = write(tmp_path, {"hidden": [[[0, 0]], [[0.25, 0, -3]]]}, "hidden.json")
    with pytest.raises(ConfigError, match=rf"^substrate coordinates {re.escape(repr(path))} hidden layer 2, node 0: "
                                          rf"\[0.25, 0, -3\] has z = -3, outside \[-1, 1\]"):
        make_substrate(IOShapes(((2, 2, 2),), 1), coordinates=path)


def test_hidden_layers_given_twice_or_a_missing_file_are_errors(tmp_path):
    path = write(tmp_path, {"hidden": [[[0.0, 0.0]]]})
    with pytest.raises(ConfigError, match="given twice"):
        make_substrate(IOShapes(((3,),), 1), "4", coordinates=path)
    with pytest.raises(ConfigError, match="cannot read it"):
        make_substrate(IOShapes(((3,),), 1), coordinates=str(tmp_path / "missing.json"))


def test_records_refuse_what_cannot_be_a_substrate():
    with pytest.raises(ConfigError, match="sensor shape"):
        IOShapes(((2, 2, 2, 2),), 1)
    with pytest.raises(ConfigError, match="at least one action"):
        IOShapes(((2,),), 0)
    with pytest.raises(ConfigError, match="threshold"):
        Query(threshold=1.0)
    with pytest.raises(ConfigError, match="max_weight"):
        Query(max_weight=0.0)
    with pytest.raises(ConfigError, match="not one of neat-python's built-in activations"):
        make_substrate(IOShapes(((2,),), 1), activation="swish")
    with pytest.raises(ConfigError, match="every node 2 coordinates or every node 3"):
        Substrate((np.zeros((2, 2)), np.zeros((1, 3))))
    with pytest.raises(ConfigError, match="needs an input and an output layer"):
        Substrate((np.zeros((2, 2)),))
    with pytest.raises(ConfigError, match="sensors and actions have 2 values"):
        Substrate((np.zeros((3, 2)), np.zeros((1, 2))), io=IOShapes(((2,),), 1))


def test_the_key_covers_coordinates_and_query_and_equality_every_bit():
    base = make_substrate(IOShapes(((3,),), 1), "2")
    assert base.key() == make_substrate(IOShapes(((3,),), 1), "2", activation="relu").key()
    assert base.key() != make_substrate(IOShapes(((3,),), 1), "3").key()
    assert base.key() != make_substrate(IOShapes(((3,),), 1), "2", query=Query(max_weight=3.0)).key()
    moved = Substrate((base.layers[0], np.nextafter(base.layers[1], 1.0), base.layers[2]), io=base.io)
    assert moved.key() != base.key() and moved != base
    assert Substrate(base.layers, io=base.io) == base
    assert IOShapes.vectors([3, 2], 1, [2]) == IOShapes(((3,), (2,)), 1, (2,))
