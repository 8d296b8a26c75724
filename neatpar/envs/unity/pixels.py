"""Visual observations (cameras, render textures, grid sensors) decoded as mlagents-envs 0.28
decodes them, with the PNG that Unity writes read in C (`_pixels.c`) instead of through Pillow.

`visual_observations` is `rpc_utils._process_maybe_compressed_observation` and
`observation_array` is `rpc_utils._observation_to_np_array`: the same values (float32, bit for
bit), shapes, dtypes and errors. Uncompressed observations are copied from their packed bytes
(mlagents-envs goes through one Python float per value, which passes a signaling NaN on quieted:
so does the copy). An observation neither path reads (another image format or kind of PNG, bytes
Pillow might read differently or refuse, a shape, value count or channel mapping that does not fit)
is read by mlagents-envs' own function, which also raises its errors. Inflating the image data is
most of the work: ISA-L's inflate (the `isal` package) does it about three times as fast as zlib
and gives the same bytes; without it, zlib.
"""
from __future__ import annotations

from typing import Callable, Optional, Sequence

import numpy as np
from mlagents_envs.base_env import ObservationSpec
from mlagents_envs.communicator_objects.observation_pb2 import NONE as COMPRESSION_NONE
from mlagents_envs.rpc_utils import _check_observations_match_spec, _observation_to_np_array
from PIL import Image

from . import _pixels

try:
    from isal.isal_zlib import decompress as inflate
except ImportError:  # a platform without ISA-L's wheels: zlib's inflate, the same bytes, slower
    from zlib import decompress as inflate

Inflate = Callable[[bytes, int, int], bytes]


def decode_png(data: bytes, shape: Sequence[int], mapping: Sequence[int], out: np.ndarray,
               inflater: Inflate = inflate) -> Optional[str]:
    """Decode a visual observation's PNG bytes into `out` (a C-contiguous float32 array of the
    observation's (height, width, channels) shape) as rpc_utils.process_pixels would, and return
    None; or return why the C decoder leaves these bytes to mlagents-envs (`out` is then unspecified)."""
    height, width, channels = shape
    limit = Image.MAX_IMAGE_PIXELS
    return _pixels.decode(data, height, width, channels, tuple(mapping), out, inflater,
                          -1 if limit is None else int(limit))


def observation_array(obs, expected_shape: Sequence[int]) -> np.ndarray:
    """rpc_utils._observation_to_np_array(obs, expected_shape) for a visual ObservationProto."""
    out = np.empty(tuple(expected_shape), np.float32)
    _observation_into(obs, tuple(expected_shape), out)
    return out


def visual_observations(obs_index: int, spec: ObservationSpec, agent_infos: Sequence) -> np.ndarray:
    """The (agents, height, width, channels) float32 array of observation `obs_index` of these
    AgentInfoProtos: rpc_utils._process_maybe_compressed_observation."""
    shape = tuple(spec.shape)
    out = np.empty((len(agent_infos),) + shape, np.float32)
    try:
        for row, agent in enumerate(agent_infos):
            _observation_into(agent.observations[obs_index], shape, out[row])
    except ValueError:
        # mlagents-envs' order: a clearer error for an agent whose shape does not fit, else this one.
        _check_observations_match_spec(obs_index, spec, agent_infos)
        raise
    return out


def _observation_into(obs, shape: tuple, out: np.ndarray) -> None:
    if len(shape) == 3 and tuple(obs.shape) == shape:  # (else mlagents-envs raises, below)
        if obs.compression_type == COMPRESSION_NONE:
            if _floats_into(obs.float_data.SerializeToString(), out):
                return
        elif decode_png(obs.compressed_data, shape, obs.compressed_channel_mapping, out) is None:
            return
    out[...] = _observation_to_np_array(obs, shape)


def _floats_into(packed: bytes, out: np.ndarray) -> bool:
    """A serialized ObservationProto.FloatData (field 1, packed floats, as protobuf writes it) into
    `out` when it holds exactly out.size values; False otherwise (mlagents-envs reads it then)."""
    if not packed:
        return out.size == 0
    length, position = _varint(packed, 1) if packed[0] == 0x0A else (None, 0)  # field 1, length-delimited
    if length is None or length != len(packed) - position or length != 4 * out.size:
        return False
    values = out.reshape(-1)
    values[:] = np.frombuffer(packed, "<f4", offset=position)
    nan = np.isnan(values)
    if nan.any():  # float -> Python float -> float32, as mlagents-envs reads them, quiets signaling NaNs
        values.view(np.uint32)[nan] |= 0x00400000
    return True


def _varint(data: bytes, position: int) -> tuple[Optional[int], int]:
    """The protobuf varint at `position` and the position after it; None if it does not end."""
    value = shift = 0
    while position < len(data) and shift < 64:
        byte = data[position]
        value |= (byte & 0x7F) << shift
        position, shift = position + 1, shift + 7
        if byte < 0x80:
            return value, position
    return None, position
