"""Accuracy metrics reported for every kernel result: PCC and relative RMS error.

Both flatten their inputs and work in fp64. GDN.md's targets for bf16 inputs with fp32
accumulation are pcc >= 0.999 and rel_rms <= 0.01.
"""

from __future__ import annotations

import numpy as np


def _flat_pair(ref, out):
    ref = np.asarray(ref, dtype=np.float64).ravel()
    out = np.asarray(out, dtype=np.float64).ravel()
    if ref.shape != out.shape:
        raise ValueError(f"ref has {ref.size} elements, out has {out.size}: compare like with like")
    return ref, out


def pcc(ref, out) -> float:
    """Pearson correlation of the flattened arrays (the Tenstorrent PCC convention).

    Cases where the correlation is undefined:
    - out has a NaN or Inf where ref is finite: 0.0 (a broken result never passes);
    - both constant: 1.0 if they are equal, else 0.0;
    - exactly one constant: 0.0.
    """
    ref, out = _flat_pair(ref, out)
    if ref.size == 0:
        raise ValueError("pcc of empty arrays is undefined")
    if not np.all(np.isfinite(ref)):
        raise ValueError("the reference contains NaN or Inf: fix the reference before comparing")
    if not np.all(np.isfinite(out)):
        return 0.0
    ref_c = ref - ref.mean()
    out_c = out - out.mean()
    ref_norm = np.sqrt(np.dot(ref_c, ref_c))
    out_norm = np.sqrt(np.dot(out_c, out_c))
    if ref_norm == 0.0 and out_norm == 0.0:
        return 1.0 if np.array_equal(ref, out) else 0.0
    if ref_norm == 0.0 or out_norm == 0.0:
        return 0.0
    return float(np.clip(np.dot(ref_c, out_c) / (ref_norm * out_norm), -1.0, 1.0))


def rel_rms(ref, out) -> float:
    """rms(ref - out) / rms(ref). For an all-zero ref: 0.0 if out is all zero too, else inf.

    A NaN or Inf in out gives inf, so a broken result can never look accurate.
    """
    ref, out = _flat_pair(ref, out)
    if ref.size == 0:
        raise ValueError("rel_rms of empty arrays is undefined")
    if not np.all(np.isfinite(out)):
        return float("inf")
    err = np.sqrt(np.mean((ref - out) ** 2))
    scale = np.sqrt(np.mean(ref**2))
    if scale == 0.0:
        return 0.0 if err == 0.0 else float("inf")
    return float(err / scale)
