"""Block-float (Bfp8_b) rounding written from the format's definition, for tests that need the values a bfp8
tensor holds without the device's own packer (ttprefill/device/formats.py is what they check)."""

from __future__ import annotations

import numpy as np


def bfp8_reference(x: np.ndarray) -> np.ndarray:
    """Bfp8_b rounding of a [R, C] array (C a multiple of 32) from the format's definition
    (tt-isa-documentation, Wormhole block floats; tt-metal's Bfp8_b): each run of 16 values of one row inside
    one tile face (columns 16 j .. 16 j + 15 of a row) shares an 8-bit exponent, the largest of its values';
    each value keeps a sign and a 7-bit magnitude m, value = m * 2^(e - 6), rounded to nearest (ties to even),
    at most 127. Independent of the device's tile layout code: only the 16-column runs matter. fp64 out."""
    x = np.asarray(x, np.float64)
    runs = x.reshape(x.shape[0], -1, 16)
    largest = np.abs(runs).max(axis=2, keepdims=True)
    e = np.floor(np.log2(np.where(largest > 0, largest, 1.0)))  # an all-zero run: any exponent
    step = 2.0 ** (e - 6)
    m = np.minimum(np.round(np.abs(runs) / step), 127)
    return (np.sign(runs) * m * step).reshape(x.shape)


def bfp8_half_step(x: np.ndarray) -> np.ndarray:
    """Half the bfp8 step of each value's run of 16 (the largest rounding error of a value rounded to nearest),
    from the run's largest magnitude in x."""
    x = np.asarray(x, np.float64)
    runs = np.abs(x.reshape(x.shape[0], -1, 16))
    largest = runs.max(axis=2, keepdims=True)
    e = np.floor(np.log2(np.where(largest > 0, largest, 1.0)))
    return np.broadcast_to(2.0 ** (e - 7), runs.shape).reshape(x.shape)
