"""Visual observations decoded by neatpar/envs/unity/pixels.py against mlagents-envs 0.28's own
functions (rpc_utils._observation_to_np_array, process_pixels, _process_maybe_compressed_observation)
on many generated images: the same values bit for bit, shapes, dtypes and errors, and the C decoder
reading every PNG of the kind Unity writes itself (the fallback to mlagents-envs is for the rest)."""
import re
import struct
import warnings
import zlib

import numpy as np
import pytest
from isal import isal_zlib
from mlagents_envs.base_env import DimensionProperty, ObservationSpec, ObservationType
from mlagents_envs.communicator_objects.agent_info_pb2 import AgentInfoProto
from mlagents_envs.communicator_objects.observation_pb2 import NONE, PNG, ObservationProto
from mlagents_envs.rpc_utils import _observation_to_np_array, _process_maybe_compressed_observation
from PIL import Image

from support.images import (SIGNATURE, camera_like, chunk, filtered_rows, header, pillow_png, png_bytes,
                            random_pixels)
from neatpar.envs.unity import _pixels, pixels

pytestmark = pytest.mark.filterwarnings("ignore:`np.bool` is a deprecated alias:DeprecationWarning")

SIZES = [(1, 1), (1, 5), (5, 1), (2, 3), (7, 13), (16, 16), (21, 21), (37, 100), (84, 84)]


def observation(data: bytes, shape, mapping=(), compression=PNG) -> ObservationProto:
    return ObservationProto(shape=list(shape), compression_type=compression, compressed_data=data,
                            compressed_channel_mapping=list(mapping))


def outcome(call):
    """What a call gives: its array (dtype, shape and bytes) or its exception (type and text, object
    addresses aside), and the warnings it issued."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            value = call()
            result = ("array", value.dtype.str, value.shape, value.tobytes())
        except Exception as error:  # noqa: BLE001 - the comparison is the point
            result = ("error", type(error).__name__, re.sub(r"0x[0-9a-f]+", "0x...", str(error)))
    return result, [(w.category.__name__, str(w.message)) for w in caught if "np.bool" not in str(w.message)]


def check(data: bytes, shape, mapping=(), inflater=pixels.inflate):
    """pixels.observation_array equals mlagents-envs' _observation_to_np_array on these bytes;
    returns why the C decoder left them to mlagents-envs (None: it read them itself)."""
    obs = observation(data, shape, mapping)
    expected = outcome(lambda: _observation_to_np_array(obs, shape))
    assert outcome(lambda: pixels.observation_array(obs, shape)) == expected
    if len(shape) != 3 or min(shape) < 1:
        return "shape"
    return pixels.decode_png(data, shape, mapping, np.empty(shape, np.float32), inflater)


def test_pixel_values_are_numpys_float32_division():
    assert np.frombuffer(_pixels.lut(), np.float32).tobytes() == (np.arange(256, dtype=np.float32) / 255.0).tobytes()


@pytest.mark.parametrize("inflater", [isal_zlib.decompress, zlib.decompress], ids=["isal", "zlib"])
def test_camera_pngs_are_read_in_c_as_mlagents_reads_them(inflater):
    rng = np.random.default_rng(1)
    for height, width in SIZES:
        for channels in (3, 4):
            picture = camera_like(rng, height, width, channels)
            encodings = [pillow_png(picture), pillow_png(picture, compress_level=0), pillow_png(picture, optimize=True),
                         pillow_png(picture, compress_level=1),
                         png_bytes(picture, filters=rng.integers(0, 5, height).tolist(), idat_size=7),
                         png_bytes(picture, filters=4, level=9, idat_size=8192)]
            encodings += [png_bytes(picture, filters=f) for f in range(5)]
            for data in encodings:
                for wanted in sorted({1, channels, 3}):
                    assert check(data, (height, width, wanted), inflater=inflater) is None


def test_every_filter_type_on_random_pixels():
    rng = np.random.default_rng(2)
    for height, width in SIZES:
        for channels in (3, 4):
            picture = random_pixels(rng, height, width, channels)
            for filters in [0, 1, 2, 3, 4, rng.integers(0, 5, height).tolist()]:
                assert check(png_bytes(picture, filters=filters), (height, width, channels)) is None


def test_ancillary_chunks_before_the_image_data_are_read_in_c():
    picture = camera_like(np.random.default_rng(3), 9, 11)
    before = ((b"gAMA", struct.pack(">I", 45455)), (b"sRGB", b"\x00"), (b"pHYs", struct.pack(">IIB", 2835, 2835, 1)),
              (b"cHRM", bytes(32)))
    assert check(png_bytes(picture, before=before), (9, 11, 3)) is None
    assert check(pillow_png(picture, dpi=(72, 72)), (9, 11, 3)) is None


def stack(images: list[np.ndarray], **options) -> bytes:
    return b"".join(pillow_png(image, **options) for image in images)


def valid_mapping(rng, total: int) -> list[int]:
    """A channel mapping process_pixels accepts: each output channel 0..m-1 used, the rest -1."""
    outputs = int(rng.integers(1, total + 1))
    mapping = list(range(outputs)) + [int(v) for v in rng.integers(-1, outputs, total - outputs)]
    return [int(v) for v in rng.permutation(mapping)]


def test_several_pngs_with_and_without_a_channel_mapping():
    rng = np.random.default_rng(4)
    for height, width in [(1, 1), (3, 5), (16, 16), (20, 9)]:
        for count in range(1, 7):
            images = [camera_like(rng, height, width, int(rng.choice([3, 4]))) for _ in range(count)]
            data = stack(images)
            total = sum(image.shape[2] for image in images)
            for wanted in {1, 2, 3, total, int(rng.integers(1, total + 1))}:
                assert check(data, (height, width, wanted)) is None
            stacked_gray = [k for k, image in enumerate(images) for _ in range(image.shape[2])]
            mappings = [list(range(total)), valid_mapping(rng, total), valid_mapping(rng, total), stacked_gray]
            for mapping in mappings:
                assert check(data, (height, width, max(mapping) + 1), mapping) is None


def test_the_mappings_unity_sends():
    """A stacked grayscale camera (each frame an RGB PNG, its channels averaged), a stacked RGB
    camera (identity) and a grid sensor of 4 channels in two PNGs, padded with -1 (StackingSensor's
    mapping), at 1 x 1 too, where numpy sums eight or more channels pairwise."""
    rng = np.random.default_rng(5)
    for height, width in [(1, 1), (84, 84), (20, 20)]:
        frames = [camera_like(rng, height, width) for _ in range(4)]
        assert check(stack(frames), (height, width, 4), [k for k in range(4) for _ in range(3)]) is None
        assert check(stack(frames), (height, width, 12), list(range(12))) is None
        grid = stack([random_pixels(rng, height, width) for _ in range(2)])
        assert check(grid, (height, width, 4), [0, 1, 2, 3, -1, -1]) is None
        assert check(grid, (height, width, 4)) is None
        many = stack([random_pixels(rng, height, width) for _ in range(7)])  # 21 channels, some averaged together
        assert check(many, (height, width, 2), [0] * 11 + [1] * 9 + [-1]) is None
        assert check(many, (height, width, 1), [0] * 21) is None


def test_bytes_between_and_after_the_pngs_are_skipped_as_mlagents_skips_them():
    rng = np.random.default_rng(6)
    a, b = pillow_png(camera_like(rng, 6, 7)), pillow_png(camera_like(rng, 6, 7))
    for data in [a + b"junk" + b, a + b + b"\x00" * 9, a + b"\x89PN" + b, b"".join([a, b"x", b, b"yz"])]:
        assert check(data, (6, 7, 6), list(range(6))) is None
        assert check(data, (6, 7, 3)) is None


def test_empty_and_large_image_data_chunks():
    """An empty IDAT between two (Pillow allows them), and image data of more than Pillow's 64 KiB
    read block in one chunk, followed by another PNG (where the next one starts must not move)."""
    rng = np.random.default_rng(14)
    picture = camera_like(rng, 6, 9)
    data = png_bytes(picture, idat_size=40)
    first = data.index(b"IDAT") - 4
    empty = chunk(b"IDAT", b"")
    second = first + 12 + struct.unpack(">I", data[first:first + 4])[0]
    assert check(data[:second] + empty + data[second:], (6, 9, 3)) is None
    big = random_pixels(rng, 150, 160)   # about 70 KiB of image data, not compressible
    data = png_bytes(big, level=0) + pillow_png(random_pixels(rng, 150, 160))
    assert len(data) > 2 * 65536 and check(data, (150, 160, 6)) is None and check(data, (150, 160, 1)) is None


def test_image_data_checksums_are_not_checked_as_pillow_does_not():
    data = bytearray(png_bytes(camera_like(np.random.default_rng(7), 5, 5)))
    end = data.index(b"IEND") - 4
    data[end - 1] ^= 0xFF  # the IDAT chunk's CRC
    assert check(bytes(data), (5, 5, 3)) is None


def fallback_cases():
    """(name, bytes, shape, mapping) that the C decoder leaves to mlagents-envs."""
    rng = np.random.default_rng(8)
    rgb = camera_like(rng, 8, 6)
    good = png_bytes(rgb)
    ihdr = good.index(b"IHDR") - 4

    def with_header(**fields):
        return SIGNATURE + header(6, 8, **fields) + good[ihdr + 25:]

    def raw_png(rows: bytes, width=6, height=8) -> bytes:
        return SIGNATURE + header(width, height) + chunk(b"IDAT", zlib.compress(rows)) + chunk(b"IEND", b"")

    row = bytes(1 + 18)
    return [
        ("grayscale PNG", pillow_png(rgb[..., :1]), (8, 6, 1), ()),
        ("grayscale PNG, three channels", pillow_png(rgb[..., :1]), (8, 6, 3), ()),
        ("gray and alpha", pillow_png(rgb[..., :2]), (8, 6, 2), ()),
        ("palette", _palette_png(rgb), (8, 6, 3), ()),
        ("16-bit", with_header(bit_depth=16), (8, 6, 3), ()),
        ("interlaced", with_header(interlace=1), (8, 6, 3), ()),
        ("transparency chunk", png_bytes(rgb, before=((b"tRNS", bytes(6)),)), (8, 6, 3), ()),
        ("text before", png_bytes(rgb, before=((b"tEXt", b"a\x00b"),)), (8, 6, 3), ()),
        ("text after", png_bytes(rgb, after=((b"tEXt", b"a\x00b"),)), (8, 6, 3), ()),
        ("a JPEG", _jpeg(rgb), (8, 6, 3), ()),
        ("empty", b"", (8, 6, 3), ()),
        ("not an image", b"hello world", (8, 6, 3), ()),
        ("bad IHDR checksum", good[:ihdr + 21] + bytes([good[ihdr + 21] ^ 1]) + good[ihdr + 22:], (8, 6, 3), ()),
        ("truncated in the data", good[: len(good) // 2], (8, 6, 3), ()),
        ("no IEND", good[:-12], (8, 6, 3), ()),
        ("filter type 5", raw_png((b"\x05" + bytes(18)) * 8), (8, 6, 3), ()),
        ("too little image data", raw_png(row * 7), (8, 6, 3), ()),
        ("not zlib", SIGNATURE + header(6, 8) + chunk(b"IDAT", b"\x00" * 40) + chunk(b"IEND", b""), (8, 6, 3), ()),
        ("height does not fit", good, (7, 6, 3), ()),
        ("width does not fit", good, (8, 5, 3), ()),
        ("more channels than the PNGs have", good, (8, 6, 4), ()),
        ("mapping too short", good, (8, 6, 2), (0, 1)),
        ("mapping with a gap", good, (8, 6, 3), (0, 2, 2)),
        ("mapping past the channels", good, (8, 6, 4), (0, 1, 3)),
        ("mapping all dropped", good, (8, 6, 1), (-1, -1, -1)),
        ("mapping to fewer channels than the shape", good, (8, 6, 3), (0, 1, 1)),
        ("mapping below -1", good, (8, 6, 2), (0, -5, 1)),
        ("PNGs of different sizes", good + pillow_png(camera_like(rng, 6, 8)), (8, 6, 6), ()),
        ("PNGs of different sizes, mapped", good + pillow_png(camera_like(rng, 6, 8)), (8, 6, 2), (0, 0, 0, 1, 1, 1)),
        ("a broken second PNG", good + good[:40], (8, 6, 3), ()),
        ("shape of rank 2", good, (8, 18), ()),
        ("zero channels", good, (8, 6, 0), ()),
    ]


def _palette_png(rgb: np.ndarray) -> bytes:
    return pillow_png_image(Image.fromarray(rgb).convert("P"))


def _jpeg(rgb: np.ndarray) -> bytes:
    return pillow_png_image(Image.fromarray(rgb), format="JPEG")


def pillow_png_image(image: Image.Image, format="PNG") -> bytes:
    import io
    out = io.BytesIO()
    image.save(out, format=format)
    return out.getvalue()


@pytest.mark.parametrize("name,data,shape,mapping", fallback_cases(), ids=[c[0] for c in fallback_cases()])
def test_what_the_c_decoder_leaves_to_mlagents(name, data, shape, mapping):
    assert check(data, shape, mapping) is not None


def test_image_data_beyond_the_last_row_is_ignored_as_pillow_ignores_it():
    rng = np.random.default_rng(13)
    picture = camera_like(rng, 4, 5)
    rows = png_bytes(picture)
    data = SIGNATURE + header(5, 4) + chunk(b"IDAT", zlib.compress(filtered_rows(picture, 2) + bytes(40))) + chunk(b"IEND", b"")
    assert check(data, (4, 5, 3)) is None and check(rows, (4, 5, 3)) is None


def test_grayscale_camera_reads_only_the_first_png():
    """For one channel without a mapping, mlagents-envs averages the first PNG: the others must only
    decode, whatever their size."""
    rng = np.random.default_rng(9)
    data = pillow_png(camera_like(rng, 8, 6)) + pillow_png(camera_like(rng, 3, 3))
    assert check(data, (8, 6, 1)) is None


def test_pillows_pixel_limit(monkeypatch):
    data = pillow_png(camera_like(np.random.default_rng(10), 16, 16))
    monkeypatch.setattr(Image, "MAX_IMAGE_PIXELS", 150)   # 256 pixels: Pillow warns
    assert check(data, (16, 16, 3)) is not None
    monkeypatch.setattr(Image, "MAX_IMAGE_PIXELS", 100)   # over twice the limit: Pillow refuses
    assert check(data, (16, 16, 3)) is not None
    monkeypatch.setattr(Image, "MAX_IMAGE_PIXELS", None)
    assert check(data, (16, 16, 3)) is None


def test_random_damage_gives_mlagents_results_or_errors():
    rng = np.random.default_rng(11)
    originals = [pillow_png(camera_like(rng, 5, 7)), png_bytes(camera_like(rng, 4, 4, 4), filters=4, idat_size=9),
                 stack([camera_like(rng, 3, 3) for _ in range(3)])]
    for _ in range(600):
        data = bytearray(originals[int(rng.integers(len(originals)))])
        kind = rng.integers(3)
        if kind == 0:
            for _ in range(rng.integers(1, 4)):
                data[rng.integers(len(data))] ^= 1 << int(rng.integers(8))
        elif kind == 1:
            del data[int(rng.integers(len(data))):]
        else:
            position = int(rng.integers(len(data)))
            data[position:position] = bytes(rng.integers(0, 256, int(rng.integers(1, 5)), dtype=np.uint8))
        shape = (len(data) % 3 + 3, 7, 3) if rng.random() < 0.2 else (5, 7, 3)
        check(bytes(data), shape, list(range(9)) if rng.random() < 0.3 else ())


def float_observation(values, shape) -> ObservationProto:
    obs = ObservationProto(shape=list(shape), compression_type=NONE)
    obs.float_data.data.extend(values)
    return obs


def float_bits_observation(bits: list[int], shape) -> ObservationProto:
    """An uncompressed observation whose float32 values have exactly these bit patterns on the wire
    (a signaling NaN among them: Python floats cannot carry one)."""
    data = struct.pack(f"<{len(bits)}I", *bits)
    float_data = b"\x0a" + _varint(len(data)) + data
    shape_field = b"\x0a" + _varint(len(shape)) + bytes(shape)
    return ObservationProto.FromString(shape_field + b"\x22" + _varint(len(float_data)) + float_data)


def _varint(n: int) -> bytes:
    out = bytearray()
    while n >= 0x80:
        out.append(n & 0x7F | 0x80)
        n >>= 7
    return bytes(out + bytes([n]))


def test_uncompressed_observations_are_mlagents_own():
    shape = (2, 3, 2)
    for values in [list(np.linspace(-1, 1, 12)), [float("nan"), float("inf"), -0.0] + [0.5] * 9, [1.0] * 11, [1.0] * 13]:
        obs = float_observation(values, shape)
        assert outcome(lambda: pixels.observation_array(obs, shape)) == outcome(lambda: _observation_to_np_array(obs, shape))
    signaling = [0x7F800001, 0xFF812345, 0x7FC00000, 0x3F800000] * 3   # signaling NaNs come out quieted
    obs = float_bits_observation(signaling, shape)
    assert obs.float_data.SerializeToString()[2:6] == struct.pack("<I", 0x7F800001)
    expected = outcome(lambda: _observation_to_np_array(obs, shape))
    assert outcome(lambda: pixels.observation_array(obs, shape)) == expected
    assert np.frombuffer(expected[0][3], np.uint32)[0] == 0x7FC00001


def agent_with(*observations) -> AgentInfoProto:
    agent = AgentInfoProto(id=len(observations))
    for obs in observations:
        agent.observations.append(obs)
    return agent


def test_a_batch_of_agents_as_mlagents_reads_it():
    rng = np.random.default_rng(12)
    shape = (6, 5, 3)
    spec = ObservationSpec(shape, (DimensionProperty.TRANSLATIONAL_EQUIVARIANCE,) * 2 + (DimensionProperty.NONE,),
                           ObservationType.DEFAULT, "camera")
    png = lambda: observation(pillow_png(camera_like(rng, 6, 5)), shape)  # noqa: E731
    floats = lambda n=90: float_observation(rng.uniform(0, 1, n).tolist(), shape)  # noqa: E731
    vector = ObservationProto(shape=[2], float_data=ObservationProto.FloatData(data=[1.0, 2.0]))
    batches = {
        "none": [],
        "cameras": [agent_with(vector, png()) for _ in range(5)],
        "mixed": [agent_with(vector, png()), agent_with(vector, floats()), agent_with(vector, png())],
        "a float count that does not fit": [agent_with(vector, png()), agent_with(vector, floats(89))],
        "that, and a shape that does not fit": [agent_with(vector, floats(89)), agent_with(vector, png()),
                                                agent_with(vector, observation(b"", (6, 5, 1)))],
        "a shape that does not fit": [agent_with(vector, png()), agent_with(vector, observation(b"", (5, 6, 3)))],
        "a broken PNG": [agent_with(vector, png()), agent_with(vector, observation(b"\x89PNG", shape))],
        "too few observations": [agent_with(vector, png()), agent_with(vector)],
    }
    for name, agents in batches.items():
        expected = outcome(lambda: _process_maybe_compressed_observation(1, spec, agents))
        assert outcome(lambda: pixels.visual_observations(1, spec, agents)) == expected, name
