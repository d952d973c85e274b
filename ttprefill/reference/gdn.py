"""Gated DeltaNet in fp64 numpy, exactly as shared/GDN.md writes it.

Shapes used throughout (one sequence, no batch):
    q, k     [T, H, K]     H query/key heads of K dims
    v        [T, HV, V]    HV value heads of V dims; value head j reads q/k head j // (HV // H)
    g, beta  [T, HV]       log-decay and write strength per value head
    state    [HV, K, V]    one K x V matrix per value head

The scan functions use q exactly as given: the layer scales it by K**-0.5 before the scan
(gdn_layer_core does that), so kernel tests pass the already-scaled q.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np


def _as_f64(x) -> np.ndarray:
    return np.asarray(x, dtype=np.float64)


def _check_scan_shapes(q, k, v, g, beta, initial_state):
    if q.ndim != 3 or k.shape != q.shape:
        raise ValueError(f"q and k must both be [T, H, K]; got q {q.shape}, k {k.shape}")
    T, H, K = q.shape
    if v.ndim != 3 or v.shape[0] != T:
        raise ValueError(f"v must be [T, HV, V] with T={T}; got {v.shape}")
    HV, V = v.shape[1], v.shape[2]
    if HV % H != 0:
        raise ValueError(f"value heads ({HV}) must be a multiple of q/k heads ({H})")
    for name, arr in (("g", g), ("beta", beta)):
        if arr.shape != (T, HV):
            raise ValueError(f"{name} must be [T, HV] = {(T, HV)}; got {arr.shape}")
    if initial_state is not None and initial_state.shape != (HV, K, V):
        raise ValueError(f"initial_state must be [HV, K, V] = {(HV, K, V)}; got {initial_state.shape}")
    return T, H, K, HV, V


def _initial_state(initial_state, HV, K, V) -> np.ndarray:
    if initial_state is None:
        return np.zeros((HV, K, V), dtype=np.float64)
    return _as_f64(initial_state).copy()


def gdn_recurrent(q, k, v, g, beta, initial_state=None):
    """The recurrent form, token by token: the definition of the scan.

    Returns (o [T, HV, V], final_state [HV, K, V]), both fp64.
    """
    q, k, v, g, beta = (_as_f64(x) for x in (q, k, v, g, beta))
    T, H, K, HV, V = _check_scan_shapes(q, k, v, g, beta, initial_state)
    group = HV // H
    S = _initial_state(initial_state, HV, K, V)
    o = np.zeros((T, HV, V), dtype=np.float64)
    for j in range(HV):
        h = j // group
        for t in range(T):
            S[j] = np.exp(g[t, j]) * S[j]
            u = beta[t, j] * (v[t, j] - S[j].T @ k[t, h])
            S[j] = S[j] + np.outer(k[t, h], u)
            o[t, j] = S[j].T @ q[t, h]  # includes token t's own update
    return o, S


def chunk_prepare(k_c, v_c, g_c, beta_c):
    """The state-independent part of one chunk for one value head.

    k_c [C, K], v_c [C, V], g_c [C], beta_c [C] (already zero-padded if ragged).
    Returns a dict with gam [C], A [C, C], T [C, C], W [C, K], U [C, V] and decay [C, C]
    (exp(gam_i - gam_j) on and below the diagonal, 0 above). A kernel may compute
    these for all chunks before the sequential pass; its tests compare against this.
    """
    k_c, v_c, g_c, beta_c = (_as_f64(x) for x in (k_c, v_c, g_c, beta_c))
    C = k_c.shape[0]
    gam = np.cumsum(g_c)
    # exp(gam_i - gam_j) only where i >= j: above the diagonal the difference is positive and
    # can overflow, and those entries are masked anyway.
    lower_incl = np.tril(np.ones((C, C), dtype=bool))
    diff = np.where(lower_incl, gam[:, None] - gam[None, :], -np.inf)
    decay = np.exp(diff)
    A = beta_c[:, None] * (k_c @ k_c.T) * decay
    A = np.tril(A, k=-1)  # strictly lower: i > j only
    T_inv = np.linalg.inv(np.eye(C) + A)
    W = T_inv @ ((beta_c * np.exp(gam))[:, None] * k_c)
    U = T_inv @ (beta_c[:, None] * v_c)
    return {"gam": gam, "A": A, "T": T_inv, "W": W, "U": U, "decay": decay}


def gdn_chunked(q, k, v, g, beta, chunk, initial_state=None, checkpoints=()):
    """The chunked form of GDN.md, chunk by chunk, value head by value head.

    A ragged last chunk is zero-padded (q = k = v = g = beta = 0 on the padding rows), which
    leaves every real output and the final state unchanged: padding rows have beta = 0 so they
    write nothing, and g = 0 so gam at the last padded row equals gam at the last real token.

    checkpoints: token counts p at which to report the state after the first p tokens. The
    chunked form only sees the state at chunk starts, so each p must be 0, a multiple of chunk,
    or T.

    Returns (o [T, HV, V], final_state [HV, K, V], {p: state [HV, K, V]}), all fp64.
    """
    q, k, v, g, beta = (_as_f64(x) for x in (q, k, v, g, beta))
    T, H, K, HV, V = _check_scan_shapes(q, k, v, g, beta, initial_state)
    if chunk < 1:
        raise ValueError(f"chunk must be positive; got {chunk}")
    checkpoints = sorted(set(int(p) for p in checkpoints))
    for p in checkpoints:
        if not (0 <= p <= T) or (p % chunk != 0 and p != T):
            raise ValueError(
                f"checkpoint {p} is not a chunk boundary: use 0, a multiple of chunk={chunk} "
                f"up to T={T}, or T itself"
            )
    group = HV // H
    num_chunks = -(-T // chunk)
    padded = num_chunks * chunk
    pad = padded - T

    def pad_rows(x):
        return np.concatenate([x, np.zeros((pad,) + x.shape[1:])], axis=0) if pad else x

    qp, kp, vp, gp, bp = (pad_rows(x) for x in (q, k, v, g, beta))
    state = _initial_state(initial_state, HV, K, V)
    o = np.zeros((padded, HV, V), dtype=np.float64)
    saved = {}
    if 0 in checkpoints:
        saved[0] = state.copy()

    for c in range(num_chunks):
        rows = slice(c * chunk, (c + 1) * chunk)
        for j in range(HV):
            hq = j // group
            Qc, Kc, Vc = qp[rows, hq], kp[rows, hq], vp[rows, j]
            prep = chunk_prepare(Kc, Vc, gp[rows, j], bp[rows, j])
            gam, W, U, decay = prep["gam"], prep["W"], prep["U"], prep["decay"]
            h = state[j]
            v_new = U - W @ h
            intra = np.tril(Qc @ Kc.T) * decay  # decay is zero above the diagonal already
            o[rows, j] = (Qc * np.exp(gam)[:, None]) @ h + intra @ v_new
            gam_last = gam[-1]  # equals the last real token's gam (padding has g = 0)
            state[j] = np.exp(gam_last) * h + Kc.T @ (np.exp(gam_last - gam)[:, None] * v_new)
        done = min((c + 1) * chunk, T)
        if done in checkpoints:
            saved[done] = state.copy()
    return o[:T], state, saved


# ----------------------------------------------------------------------------------------
# The pieces of one GDN layer around the scan.
# ----------------------------------------------------------------------------------------


def _silu(x):
    return x / (1.0 + np.exp(-x))


def causal_conv1d_silu(x, weight, conv_state=None):
    """Depthwise causal conv over time, no bias, then SiLU.

    x [T, C] pre-conv channels; weight [C, W] (W = kernel width, 4; the last tap multiplies
    the current token); conv_state [W-1, C] = the previous W-1 pre-conv rows, oldest first
    (None means zeros, i.e. the start of a sequence).
    Returns (y [T, C], new_conv_state [W-1, C]) where new_conv_state is the last W-1 rows of
    [conv_state; x], so a piece shorter than W-1 keeps some of the old rows.
    """
    x, weight = _as_f64(x), _as_f64(weight)
    T, C = x.shape
    if weight.ndim != 2 or weight.shape[0] != C:
        raise ValueError(f"conv weight must be [C={C}, W]; got {weight.shape}")
    width = weight.shape[1]
    if conv_state is None:
        conv_state = np.zeros((width - 1, C))
    conv_state = _as_f64(conv_state)
    if conv_state.shape != (width - 1, C):
        raise ValueError(f"conv_state must be [{width - 1}, {C}]; got {conv_state.shape}")
    padded = np.concatenate([conv_state, x], axis=0)  # row r is token r - (W-1)
    y = np.zeros((T, C))
    for t in range(T):
        for tap in range(width):
            y[t] += weight[:, tap] * padded[t + tap]
    return _silu(y), padded[-(width - 1):].copy()


def gates(a, b, A_log, dt_bias):
    """beta = sigmoid(b); g = -exp(A_log) * softplus(a + dt_bias).

    a, b [T, HV]; A_log, dt_bias [HV]. The device computes g in fp32; this is the fp64 value.
    """
    a, b, A_log, dt_bias = (_as_f64(x) for x in (a, b, A_log, dt_bias))
    softplus = np.logaddexp(0.0, a + dt_bias)  # log(1 + e^x) without overflow
    g = -np.exp(A_log) * softplus
    beta = 1.0 / (1.0 + np.exp(-b))
    return g, beta


def l2norm(x, eps=1e-6):
    """x / sqrt(sum(x^2) + eps) over the last axis."""
    x = _as_f64(x)
    return x / np.sqrt(np.sum(x * x, axis=-1, keepdims=True) + eps)


def gated_rmsnorm(x, z, w, eps=1e-6):
    """w * (x * rsqrt(mean(x^2) + eps)) * silu(z) over the last axis; norm before gate."""
    x, z, w = _as_f64(x), _as_f64(z), _as_f64(w)
    normed = x / np.sqrt(np.mean(x * x, axis=-1, keepdims=True) + eps)
    return w * normed * _silu(z)


@dataclass
class GdnLayerParams:
    """The weights of one GDN layer that act between the in- and out-projections."""

    num_qk_heads: int  # H
    num_v_heads: int  # HV
    key_head_dim: int  # K
    value_head_dim: int  # V
    conv_weight: np.ndarray  # [2*H*K + HV*V, conv kernel]
    A_log: np.ndarray  # [HV]
    dt_bias: np.ndarray  # [HV]
    norm_weight: np.ndarray  # [V], shared by all value heads
    eps: float = 1e-6


def gdn_layer_core(qkv_preconv, z, a, b, params: GdnLayerParams, conv_state, recurrent_state, chunk):
    """Everything of a GDN layer between the in-projections and the out-projection.

    qkv_preconv [T, 2*H*K + HV*V] laid out [q heads | k heads | v heads], each head contiguous;
    z [T, HV*V]; a, b [T, HV]; conv_state [W-1, C] or None; recurrent_state [HV, K, V] or None;
    chunk: None for the recurrent scan, else the chunk length of the chunked form.
    Returns (y [T, HV*V], new_conv_state, new_recurrent_state).
    """
    H, HV = params.num_qk_heads, params.num_v_heads
    K, V = params.key_head_dim, params.value_head_dim
    qkv_preconv = _as_f64(qkv_preconv)
    T, C = qkv_preconv.shape
    if C != 2 * H * K + HV * V:
        raise ValueError(f"qkv has {C} channels; expected 2*H*K + HV*V = {2 * H * K + HV * V}")
    mixed, new_conv_state = causal_conv1d_silu(qkv_preconv, params.conv_weight, conv_state)
    q = mixed[:, : H * K].reshape(T, H, K)
    k = mixed[:, H * K : 2 * H * K].reshape(T, H, K)
    v = mixed[:, 2 * H * K :].reshape(T, HV, V)
    g, beta = gates(a, b, params.A_log, params.dt_bias)
    q = l2norm(q, params.eps) * K**-0.5
    k = l2norm(k, params.eps)
    if chunk is None:
        o, new_state = gdn_recurrent(q, k, v, g, beta, recurrent_state)
    else:
        o, new_state, _ = gdn_chunked(q, k, v, g, beta, chunk, recurrent_state)
    y = gated_rmsnorm(o, _as_f64(z).reshape(T, HV, V), params.norm_weight, params.eps)
    return y.reshape(T, HV * V), new_conv_state, new_state
