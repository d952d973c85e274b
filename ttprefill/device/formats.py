"""Tile layout and byte formats of Wormhole tensors, in numpy (host side; no torch).

A device tensor is a sequence of 32x32 tiles. Each tile is stored as four 16x16 faces (0 top-left,
1 top-right, 2 bottom-left, 3 bottom-right), row-major inside a face, in one of these formats:

* Float32 / Int32 / UInt32: 4 little-endian bytes per value, bit for bit (Int32 in two's complement).
* Float16_b (bfloat16): 2 little-endian bytes per value, rounded to nearest, ties to even.
* Bfp8_b: 1088 bytes per tile. 64 shared-exponent bytes first (exponent i covers the 16 values of
  face i // 16, face row i % 16), then one byte per value in face order: sign bit and a 7-bit
  magnitude without hidden bit, value = magnitude * 2**(shared_exponent - 133). The shared exponent is
  the largest fp32 exponent field of the 16 values; each value's 24-bit significand is shifted right
  to that exponent (shifted-out bits dropped), then rounded to 7 bits, ties to even, saturating at 127;
  zeros and denormals encode as 0 and a zero magnitude never carries a sign. This is tt-metal's host
  packer (tt_metal/impl/data_format/blockfloat_common.cpp, bfp_simd.hpp); sim/src/numerics.cpp
  implements the same rules in C++ and explains them and their sources in more detail.
* Bfp4_b: 576 bytes per tile. The same 64 shared exponents, then one nibble per value (sign bit and a
  3-bit magnitude, value = magnitude * 2**(shared_exponent - 129)), value 2k in the low nibble of
  byte k; rounded like Bfp8_b to 3 bits, saturating at 7.

Arrays of tiles are float32 of shape (ntiles, 1024), each row one tile in face order. For Int32 and
UInt32 the float32 values carry the raw 32-bit words (use `.view(np.int32)` / `.view(np.uint32)`);
`to_device_bytes` and `from_device_bytes` take and return int32 / uint32 arrays for those formats.
"""

from __future__ import annotations

import numpy as np

from ttprefill.device.program import TILE_BYTES, DataFormat
from ttprefill.hw import TILE

FACE_DIM = 16
TILE_ELEMS = TILE * TILE
BFP8_EXPONENT_BYTES = TILE_ELEMS // FACE_DIM  # one shared exponent per face row
_BFP8_MAGNITUDE_BITS = 7
_BFP8_DROP_BITS = 24 - _BFP8_MAGNITUDE_BITS  # bits of the 24-bit significand below the magnitude
_BFP4_MAGNITUDE_BITS = 3


def _as_format(fmt: DataFormat | int) -> DataFormat:
    try:
        return DataFormat(fmt)
    except ValueError:
        supported = ", ".join(f"{f.name} ({int(f)})" for f in DataFormat)
        raise ValueError(f"unsupported data format {fmt!r}; the device stores {supported}") from None


# ----------------------------------------------------------------------------------------------
# bfloat16


def bf16_bits(x: np.ndarray) -> np.ndarray:
    """uint16 bit patterns of x rounded to bfloat16 (nearest, ties to even; NaN stays a quiet NaN)."""
    bits = np.ascontiguousarray(x, dtype=np.float32).view(np.uint32)
    is_nan = (bits & np.uint32(0x7FFFFFFF)) > np.uint32(0x7F800000)
    # Adding 0x7fff plus the kept part's lowest bit carries into the kept part exactly when the dropped
    # half is above one half, or exactly one half with an odd kept part. NaN is handled separately,
    # so the uint32 addition cannot wrap for the values that use it.
    lsb = (bits >> np.uint32(16)) & np.uint32(1)
    rounded = (bits + np.uint32(0x7FFF) + lsb) >> np.uint32(16)
    quiet_nan = (bits >> np.uint32(16)) | np.uint32(0x0040)
    return np.where(is_nan, quiet_nan, rounded).astype(np.uint16)


def fp32_bits(x: float) -> int:
    """The 32-bit word of x as fp32: how kernels take a float in a runtime or compile-time argument."""
    return int(np.float32(x).view(np.uint32))


def bf16_from_bits(b: np.ndarray) -> np.ndarray:
    """float32 values of bfloat16 bit patterns (exact)."""
    return (np.asarray(b, dtype=np.uint16).astype(np.uint32) << np.uint32(16)).view(np.float32)


def round_to_bf16(x: np.ndarray) -> np.ndarray:
    """x rounded to the nearest bfloat16 (ties to even), returned as float32."""
    return bf16_from_bits(bf16_bits(x))


# ----------------------------------------------------------------------------------------------
# Tile layout


def _tile_grid(shape: tuple[int, ...]) -> tuple[tuple[int, ...], int, int]:
    if len(shape) < 2:
        raise ValueError(f"a tiled tensor needs at least 2 dims, got shape {shape}")
    *lead, h, w = shape
    if h % TILE or w % TILE:
        raise ValueError(
            f"shape {shape}: the last two dims must be multiples of {TILE} to tilize; "
            "pad first (to_device_bytes pads with zeros)"
        )
    return tuple(lead), h // TILE, w // TILE


def tilize(array: np.ndarray) -> np.ndarray:
    """array[..., H, W] (H, W multiples of 32) -> (ntiles, 1024) tiles in face order.

    Tiles are ordered row-major over the tile grid of the last two dims, batched over leading dims.
    The dtype is kept (float32 for values; any 4-byte type works the same way).
    """
    array = np.asarray(array)
    lead, tiles_h, tiles_w = _tile_grid(array.shape)
    # (..., tile row, face row, row in face, tile col, face col, col in face)
    grid = array.reshape(*lead, tiles_h, 2, FACE_DIM, tiles_w, 2, FACE_DIM)
    n = len(lead)
    order = (*range(n), n, n + 3, n + 1, n + 4, n + 2, n + 5)  # tile row, tile col, face r, face c, r, c
    return np.ascontiguousarray(grid.transpose(order)).reshape(-1, TILE_ELEMS)


def untilize(tiles: np.ndarray, shape: tuple[int, ...]) -> np.ndarray:
    """Inverse of tilize: (ntiles, 1024) face-ordered tiles -> array of `shape` (..., H, W)."""
    shape = tuple(int(s) for s in shape)
    lead, tiles_h, tiles_w = _tile_grid(shape)
    tiles = np.asarray(tiles)
    expected = int(np.prod(lead, dtype=np.int64)) * tiles_h * tiles_w
    if tiles.size != expected * TILE_ELEMS:
        raise ValueError(f"{tiles.size} values do not make the {expected} tiles of shape {shape}")
    grid = tiles.reshape(*lead, tiles_h, tiles_w, 2, 2, FACE_DIM, FACE_DIM)
    n = len(lead)
    order = (*range(n), n, n + 2, n + 4, n + 1, n + 3, n + 5)  # tile row, face r, r, tile col, face c, c
    return np.ascontiguousarray(grid.transpose(order)).reshape(shape)


# ----------------------------------------------------------------------------------------------
# Byte formats


def _bfp8_encode(tiles: np.ndarray) -> np.ndarray:
    ntiles = tiles.shape[0]
    bits = np.ascontiguousarray(tiles, dtype=np.float32).view(np.uint32).reshape(-1, FACE_DIM)
    exponent = (bits >> np.uint32(23)) & np.uint32(0xFF)
    shared = exponent.max(axis=1, keepdims=True)
    shift = shared - exponent  # >= 0, uint32
    significand = (bits & np.uint32(0x7FFFFF)) | np.uint32(0x800000)
    significand = np.where(shift >= 32, np.uint32(0), significand >> np.minimum(shift, np.uint32(31)))
    odd = (significand >> np.uint32(_BFP8_DROP_BITS)) & np.uint32(1)
    half_minus_one = np.uint32((1 << (_BFP8_DROP_BITS - 1)) - 1)
    magnitude = (significand + half_minus_one + odd) >> np.uint32(_BFP8_DROP_BITS)
    magnitude = np.minimum(magnitude, np.uint32((1 << _BFP8_MAGNITUDE_BITS) - 1))
    magnitude = np.where(exponent == 0, np.uint32(0), magnitude)  # zeros and denormals flush
    sign = (bits >> np.uint32(31)) << np.uint32(_BFP8_MAGNITUDE_BITS)
    codes = np.where(magnitude == 0, np.uint32(0), sign | magnitude).astype(np.uint8)
    out = np.empty((ntiles, TILE_BYTES[DataFormat.Bfp8_b]), dtype=np.uint8)
    out[:, :BFP8_EXPONENT_BYTES] = shared.reshape(ntiles, BFP8_EXPONENT_BYTES)
    out[:, BFP8_EXPONENT_BYTES:] = codes.reshape(ntiles, TILE_ELEMS)
    return out.reshape(-1)


def _bfp8_decode(data: np.ndarray, ntiles: int) -> np.ndarray:
    per_tile = data.reshape(ntiles, TILE_BYTES[DataFormat.Bfp8_b])
    shared = per_tile[:, :BFP8_EXPONENT_BYTES].astype(np.int32).reshape(ntiles, BFP8_EXPONENT_BYTES, 1)
    codes = per_tile[:, BFP8_EXPONENT_BYTES:].reshape(ntiles, BFP8_EXPONENT_BYTES, FACE_DIM)
    magnitude = (codes & 0x7F).astype(np.float32)
    negative = (codes & 0x80) != 0
    # 2**(shared - 133) is a float32 (normal or denormal) for every shared exponent, and its product
    # with a 7-bit magnitude is exact.
    scale = np.ldexp(np.float32(1.0), shared - 127 - (_BFP8_MAGNITUDE_BITS - 1)).astype(np.float32)
    with np.errstate(over="ignore"):
        values = magnitude * scale
    # A shared exponent of 255 (inf/NaN in the row): magnitude 64 is infinity, larger ones NaN, as
    # the fp32 bit pattern the format describes would read.
    special = (shared == 255) & ((codes & 0x7F) >= 64)
    values = np.where(special, np.where((codes & 0x7F) == 64, np.float32(np.inf), np.float32(np.nan)), values)
    values = np.where(negative, -values, values).astype(np.float32)
    return values.reshape(ntiles, TILE_ELEMS)


def _bfp4_encode(tiles: np.ndarray) -> np.ndarray:
    ntiles = tiles.shape[0]
    bits = np.ascontiguousarray(tiles, dtype=np.float32).view(np.uint32).reshape(-1, FACE_DIM)
    exponent = (bits >> np.uint32(23)) & np.uint32(0xFF)
    shared = exponent.max(axis=1, keepdims=True)
    shift = shared - exponent
    significand = (bits & np.uint32(0x7FFFFF)) | np.uint32(0x800000)
    significand = np.where(shift >= 32, np.uint32(0), significand >> np.minimum(shift, np.uint32(31)))
    drop = np.uint32(24 - _BFP4_MAGNITUDE_BITS)
    odd = (significand >> drop) & np.uint32(1)
    magnitude = (significand + np.uint32((1 << (int(drop) - 1)) - 1) + odd) >> drop
    magnitude = np.minimum(magnitude, np.uint32((1 << _BFP4_MAGNITUDE_BITS) - 1))
    magnitude = np.where(exponent == 0, np.uint32(0), magnitude)
    sign = (bits >> np.uint32(31)) << np.uint32(_BFP4_MAGNITUDE_BITS)
    nibbles = np.where(magnitude == 0, np.uint32(0), sign | magnitude).astype(np.uint8).reshape(ntiles, -1, 2)
    out = np.empty((ntiles, TILE_BYTES[DataFormat.Bfp4_b]), dtype=np.uint8)
    out[:, :BFP8_EXPONENT_BYTES] = shared.reshape(ntiles, BFP8_EXPONENT_BYTES)
    out[:, BFP8_EXPONENT_BYTES:] = nibbles[:, :, 0] | (nibbles[:, :, 1] << 4)
    return out.reshape(-1)


def _bfp4_decode(data: np.ndarray, ntiles: int) -> np.ndarray:
    per_tile = data.reshape(ntiles, TILE_BYTES[DataFormat.Bfp4_b])
    shared = per_tile[:, :BFP8_EXPONENT_BYTES].astype(np.int32).reshape(ntiles, BFP8_EXPONENT_BYTES, 1)
    packed = per_tile[:, BFP8_EXPONENT_BYTES:]
    nibbles = np.stack([packed & 0xF, packed >> 4], axis=-1).reshape(ntiles, BFP8_EXPONENT_BYTES, FACE_DIM)
    magnitude = nibbles & 0x7
    scale = np.ldexp(np.float32(1.0), shared - 127 - (_BFP4_MAGNITUDE_BITS - 1)).astype(np.float32)
    with np.errstate(over="ignore"):
        values = magnitude.astype(np.float32) * scale
    # Under exponent 255, magnitude 4 (the hidden bit alone) is infinity and larger ones NaN.
    special = (shared == 255) & (magnitude >= 4)
    values = np.where(special, np.where(magnitude == 4, np.float32(np.inf), np.float32(np.nan)), values)
    values = np.where((nibbles & 0x8) != 0, -values, values).astype(np.float32)
    return values.reshape(ntiles, TILE_ELEMS)


def pack(fmt: DataFormat | int, tiles: np.ndarray) -> np.ndarray:
    """Face-ordered float32 tiles (ntiles, 1024) -> uint8 array of ntiles * tile_bytes(fmt) bytes."""
    fmt = _as_format(fmt)
    tiles = np.asarray(tiles)
    if tiles.ndim != 2 or tiles.shape[1] != TILE_ELEMS:
        raise ValueError(f"pack expects tiles of shape (ntiles, {TILE_ELEMS}), got {tiles.shape}; tilize first")
    if tiles.dtype != np.float32:
        raise TypeError(
            f"pack expects float32 tiles, got {tiles.dtype}; for UInt32 pass the words as "
            "uint32_array.view(np.float32), or use to_device_bytes"
        )
    if fmt in (DataFormat.Float32, DataFormat.Int32, DataFormat.UInt32):
        return np.ascontiguousarray(tiles).astype("<f4", copy=False).view(np.uint8).reshape(-1)
    if fmt == DataFormat.Float16_b:
        return bf16_bits(tiles).astype("<u2", copy=False).view(np.uint8).reshape(-1)
    if fmt == DataFormat.Bfp4_b:
        return _bfp4_encode(tiles)
    return _bfp8_encode(tiles)


def unpack(fmt: DataFormat | int, data: bytes | bytearray | memoryview | np.ndarray, ntiles: int) -> np.ndarray:
    """Bytes of `ntiles` tiles in `fmt` -> float32 (ntiles, 1024) face-ordered tiles (exact decode)."""
    fmt = _as_format(fmt)
    raw = np.frombuffer(data, dtype=np.uint8) if not isinstance(data, np.ndarray) else data.reshape(-1)
    if raw.dtype != np.uint8:
        raise TypeError(f"unpack expects bytes or a uint8 array, got {raw.dtype}")
    needed = ntiles * TILE_BYTES[fmt]
    if raw.size != needed:
        raise ValueError(f"{ntiles} {fmt.name} tiles take {needed} bytes, got {raw.size}")
    if fmt in (DataFormat.Float32, DataFormat.Int32, DataFormat.UInt32):
        return np.ascontiguousarray(raw).view("<f4").astype(np.float32).reshape(ntiles, TILE_ELEMS)
    if fmt == DataFormat.Float16_b:
        return bf16_from_bits(np.ascontiguousarray(raw).view("<u2")).reshape(ntiles, TILE_ELEMS)
    if fmt == DataFormat.Bfp4_b:
        return _bfp4_decode(raw, ntiles)
    return _bfp8_decode(raw, ntiles)


# ----------------------------------------------------------------------------------------------
# Whole tensors


def padded_shape(shape: tuple[int, ...]) -> tuple[int, ...]:
    """shape with its last two dims rounded up to multiples of 32."""
    *lead, h, w = shape
    return (*lead, -(-h // TILE) * TILE, -(-w // TILE) * TILE)


def to_device_bytes(array: np.ndarray, fmt: DataFormat | int) -> np.ndarray:
    """array[..., H, W] -> uint8 bytes of its tiles: zero-padded to multiples of 32, tilized, packed.

    Values are float32 (other float dtypes are converted); for UInt32 pass integers in [0, 2**32), for
    Int32 integers in [-2**31, 2**31).
    """
    fmt = _as_format(fmt)
    array = np.asarray(array)
    if array.ndim < 2:
        raise ValueError(f"to_device_bytes needs at least 2 dims, got shape {array.shape}; reshape to (1, n)")
    if fmt == DataFormat.UInt32:
        if array.dtype.kind not in "ui":
            raise TypeError(f"UInt32 tensors take integer arrays, got {array.dtype}")
        if array.size and (array.min() < 0 or array.max() > 0xFFFFFFFF):
            raise ValueError("UInt32 tensor values must lie in [0, 2**32)")
        words = array.astype(np.uint32)
    elif fmt == DataFormat.Int32:
        if array.dtype.kind not in "ui":
            raise TypeError(f"Int32 tensors take integer arrays, got {array.dtype}")
        if array.size and (array.min() < -2**31 or array.max() > 2**31 - 1):
            raise ValueError("Int32 tensor values must lie in [-2**31, 2**31)")
        words = array.astype(np.int32).view(np.uint32)
    else:
        words = array.astype(np.float32)
    target = padded_shape(words.shape)
    if target != words.shape:
        pad = [(0, 0)] * (words.ndim - 2) + [(0, target[-2] - words.shape[-2]), (0, target[-1] - words.shape[-1])]
        words = np.pad(words, pad)
    return pack(fmt, tilize(words).view(np.float32))


def from_device_bytes(data: bytes | bytearray | memoryview | np.ndarray, fmt: DataFormat | int,
                      shape: tuple[int, ...]) -> np.ndarray:
    """Inverse of to_device_bytes: bytes -> array of the logical `shape` (padding dropped).

    Returns float32, or uint32 for UInt32, int32 for Int32.
    """
    fmt = _as_format(fmt)
    shape = tuple(int(s) for s in shape)
    if len(shape) < 2:
        raise ValueError(f"from_device_bytes needs at least 2 dims, got shape {shape}")
    full = padded_shape(shape)
    ntiles = int(np.prod(full[:-2], dtype=np.int64)) * (full[-2] // TILE) * (full[-1] // TILE)
    tiles = unpack(fmt, data, ntiles)
    if fmt == DataFormat.UInt32:
        tiles = tiles.view(np.uint32)
    elif fmt == DataFormat.Int32:
        tiles = tiles.view(np.int32)
    array = untilize(tiles, full)
    return np.ascontiguousarray(array[..., : shape[-2], : shape[-1]])
