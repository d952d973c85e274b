"""Causal grouped-query softmax attention in fp64 numpy, the reference for the flash kernel."""

from __future__ import annotations

import numpy as np


def causal_attention(q, k, v, p0, scale=None, gate=None):
    """Causal attention of Sq new queries against a K/V history that includes them.

    q [Sq, Hq, D]: queries at absolute positions p0 .. p0+Sq-1.
    k, v [Skv, Hkv, D]: keys/values at positions 0 .. Skv-1, with Skv = p0 + Sq (the cached
    prefix followed by this piece's own keys).
    Query head h reads kv head h // (Hq // Hkv). The query at position p sees keys 0..p.
    scale defaults to D**-0.5. gate [Sq, Hq, D], if given, multiplies the output by
    sigmoid(gate) (the attention output gate).
    Returns o [Sq, Hq, D] in fp64.
    """
    q, k, v = (np.asarray(x, dtype=np.float64) for x in (q, k, v))
    if q.ndim != 3 or k.ndim != 3 or v.ndim != 3:
        raise ValueError(f"q, k, v must be 3-D [S, heads, D]; got {q.shape}, {k.shape}, {v.shape}")
    Sq, Hq, D = q.shape
    Skv, Hkv, Dk = k.shape
    if v.shape[:2] != (Skv, Hkv) or Dk != D:
        raise ValueError(f"k {k.shape} and v {v.shape} must be [Skv, Hkv, D] with D={D}")
    if Hq % Hkv != 0:
        raise ValueError(f"query heads ({Hq}) must be a multiple of kv heads ({Hkv})")
    if p0 < 0 or Skv != p0 + Sq:
        raise ValueError(f"need Skv == p0 + Sq; got Skv={Skv}, p0={p0}, Sq={Sq}")
    if scale is None:
        scale = D**-0.5
    group = Hq // Hkv

    positions_q = p0 + np.arange(Sq)
    positions_k = np.arange(Skv)
    visible = positions_k[None, :] <= positions_q[:, None]  # [Sq, Skv]

    o = np.zeros((Sq, Hq, v.shape[2]), dtype=np.float64)
    for h in range(Hq):
        kv = h // group
        scores = scale * (q[:, h] @ k[:, kv].T)  # [Sq, Skv]
        scores = np.where(visible, scores, -np.inf)
        scores = scores - scores.max(axis=1, keepdims=True)  # every row sees key 0
        weights = np.exp(scores)
        weights /= weights.sum(axis=1, keepdims=True)
        o[:, h] = weights @ v[:, kv]
    if gate is not None:
        gate = np.asarray(gate, dtype=np.float64)
        if gate.shape != o.shape:
            raise ValueError(f"gate must be {o.shape}; got {gate.shape}")
        o = o / (1.0 + np.exp(-gate))
    return o
