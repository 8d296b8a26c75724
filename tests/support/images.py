"""Images and PNG bytes for the visual-observation tests: camera-like pictures, Pillow's encoder
(adaptive filters, as most encoders choose them) and a small PNG writer of our own that picks each
row's filter type, splits the image data into chunks and adds chunks, so that every case a decoder
meets can be made on purpose."""
import io
import struct
import zlib

import numpy as np
from PIL import Image

SIGNATURE = b"\x89PNG\r\n\x1a\n"
COLOUR_TYPES = {1: 0, 2: 4, 3: 2, 4: 6}   # channels -> PNG colour type (gray, gray+alpha, RGB, RGBA)


def camera_like(rng: np.random.Generator, height: int, width: int, channels: int = 3, noise: float = 4.0) -> np.ndarray:
    """A uint8 picture like a rendered scene: smooth gradients, a few flat blobs, a little noise."""
    y, x = np.mgrid[0:height, 0:width]
    phase = rng.uniform(0, 6, channels)
    picture = 127 + 100 * np.sin(x[..., None] / max(width, 1) * 3 + y[..., None] / max(height, 1) * 2 + phase)
    for _ in range(rng.integers(1, 6)):
        cx, cy, r = rng.integers(0, width), rng.integers(0, height), rng.integers(1, max(2, min(height, width) // 3 + 2))
        picture[(x - cx) ** 2 + (y - cy) ** 2 < r * r] = rng.integers(0, 256, channels)
    picture += rng.normal(0, noise, picture.shape)
    return np.clip(picture, 0, 255).astype(np.uint8)


def random_pixels(rng: np.random.Generator, height: int, width: int, channels: int = 3) -> np.ndarray:
    return rng.integers(0, 256, (height, width, channels), dtype=np.uint8)


def pillow_png(pixels: np.ndarray, **options) -> bytes:
    """The PNG Pillow writes for a (height, width, channels) uint8 array (RGB, RGBA, L or LA)."""
    channels = pixels.shape[2]
    image = Image.fromarray(pixels[..., 0] if channels == 1 else pixels, {1: "L", 2: "LA", 3: "RGB", 4: "RGBA"}[channels])
    out = io.BytesIO()
    image.save(out, format="PNG", **options)
    return out.getvalue()


def chunk(kind: bytes, data: bytes) -> bytes:
    return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))


def header(width: int, height: int, bit_depth: int = 8, colour_type: int = 2, interlace: int = 0) -> bytes:
    return chunk(b"IHDR", struct.pack(">IIBBBBB", width, height, bit_depth, colour_type, 0, 0, interlace))


def filtered_rows(pixels: np.ndarray, filters) -> bytes:
    """The image data before compression: each row's filter type byte and its filtered bytes.
    `filters` is one type for every row or one per row."""
    height, width, channels = pixels.shape
    rows = pixels.reshape(height, width * channels).astype(np.int32)
    kinds = [filters] * height if isinstance(filters, int) else list(filters)
    out = bytearray()
    for y in range(height):
        raw = rows[y]
        up = rows[y - 1] if y else np.zeros_like(raw)
        left = np.concatenate([np.zeros(channels, np.int32), raw[:-channels]])
        up_left = np.concatenate([np.zeros(channels, np.int32), up[:-channels]])
        kind = kinds[y]
        if kind == 0:
            value = raw
        elif kind == 1:
            value = raw - left
        elif kind == 2:
            value = raw - up
        elif kind == 3:
            value = raw - (left + up) // 2
        else:
            value = raw - _paeth(left, up, up_left)
        out.append(kind)
        out += (value % 256).astype(np.uint8).tobytes()
    return bytes(out)


def _paeth(a, b, c):
    p = a + b - c
    pa, pb, pc = np.abs(p - a), np.abs(p - b), np.abs(p - c)
    return np.where((pa <= pb) & (pa <= pc), a, np.where(pb <= pc, b, c))


def png_bytes(pixels: np.ndarray, filters=0, level: int = 6, idat_size: int | None = None,
              before: tuple = (), after: tuple = (), interlace: int = 0) -> bytes:
    """A PNG of 8-bit pixels with the given row filters, zlib level, IDAT chunk size (None: one
    chunk) and extra chunks (kind, data) before and after the image data."""
    height, width, channels = pixels.shape
    data = zlib.compress(filtered_rows(pixels, filters), level)
    size = idat_size or max(len(data), 1)
    parts = [data[i:i + size] for i in range(0, len(data), size)] or [b""]
    return (SIGNATURE + header(width, height, 8, COLOUR_TYPES[channels], interlace)
            + b"".join(chunk(k, d) for k, d in before) + b"".join(chunk(b"IDAT", p) for p in parts)
            + b"".join(chunk(k, d) for k, d in after) + chunk(b"IEND", b""))
