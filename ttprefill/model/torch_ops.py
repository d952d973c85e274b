"""The layer pieces of shared/GDN.md in torch, for the whole-stack reference model.

Written from the spec independently of ttprefill.reference (numpy): tests hold the two
against each other. Every function keeps the dtype of its inputs (fp32 or fp64) and works on
one sequence (no batch axis). Shapes as in ttprefill.reference.gdn:
    q, k [T, H, K]; v [T, HV, V]; g, beta [T, HV]; recurrent state [HV, K, V].
"""

from __future__ import annotations

import torch
import torch.nn.functional as F

from ttprefill.reference.gdn import GdnLayerParams


def zero_centred_rmsnorm(x: torch.Tensor, w: torch.Tensor, eps: float) -> torch.Tensor:
    """x * rsqrt(mean(x^2) + eps) * (1 + w) over the last axis (decoder norms, q/k norms)."""
    return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + eps) * (1.0 + w)


def gated_rmsnorm(x: torch.Tensor, z: torch.Tensor, w: torch.Tensor, eps: float) -> torch.Tensor:
    """w * (x * rsqrt(mean(x^2) + eps)) * silu(z): GDN output norm, norm before gate, plain w."""
    return w * (x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + eps)) * F.silu(z)


def l2norm(x: torch.Tensor, eps: float = 1e-6) -> torch.Tensor:
    return x * torch.rsqrt(x.pow(2).sum(-1, keepdim=True) + eps)


def causal_conv1d_silu(x: torch.Tensor, weight: torch.Tensor, conv_state: torch.Tensor):
    """Depthwise causal conv (no bias) then SiLU, continuing from conv_state.

    x [T, C]; weight [C, W] (tap W-1 multiplies the current token); conv_state [W-1, C], the
    previous pre-conv rows oldest first. Returns (y [T, C], new conv_state [W-1, C]).
    """
    width = weight.shape[1]
    history = torch.cat([conv_state, x], dim=0)  # [W-1+T, C]
    # window t covers history rows t .. t+W-1, i.e. tokens t-(W-1) .. t
    windows = history.unfold(0, width, 1)  # [T, C, W]
    y = (windows * weight.unsqueeze(0)).sum(-1)
    return F.silu(y), history[-(width - 1):].clone()


def gdn_gates(a: torch.Tensor, b: torch.Tensor, A_log: torch.Tensor, dt_bias: torch.Tensor):
    """g = -exp(A_log) * softplus(a + dt_bias), beta = sigmoid(b); a, b [T, HV]."""
    g = -torch.exp(A_log) * F.softplus(a + dt_bias)
    return g, torch.sigmoid(b)


def _expand_qk_heads(x: torch.Tensor, num_v_heads: int) -> torch.Tensor:
    """[T, H, K] -> [T, HV, K] so that value head j sees q/k head j // (HV // H)."""
    return x.repeat_interleave(num_v_heads // x.shape[1], dim=1)


def gdn_scan_recurrent(q, k, v, g, beta, initial_state):
    """Token-by-token GDN scan; returns (o [T, HV, V], final state [HV, K, V])."""
    HV = v.shape[1]
    q, k = _expand_qk_heads(q, HV), _expand_qk_heads(k, HV)
    S = initial_state.clone()
    outputs = []
    for t in range(q.shape[0]):
        S = S * torch.exp(g[t])[:, None, None]
        recalled = torch.einsum("hkv,hk->hv", S, k[t])
        u = beta[t][:, None] * (v[t] - recalled)
        S = S + k[t][:, :, None] * u[:, None, :]
        outputs.append(torch.einsum("hkv,hk->hv", S, q[t]))
    o = torch.stack(outputs) if outputs else v.new_zeros(v.shape)
    return o, S


def gdn_scan_chunked(q, k, v, g, beta, initial_state, chunk: int):
    """Chunked GDN scan (GDN.md chunked form), all value heads at once, chunk after chunk."""
    T, HV, Vd = v.shape
    q, k = _expand_qk_heads(q, HV), _expand_qk_heads(k, HV)
    num_chunks = -(-T // chunk)
    pad = num_chunks * chunk - T

    def to_chunks(x):  # [T, HV, ...] -> [HV, N, C, ...], zero rows appended
        if pad:
            x = torch.cat([x, x.new_zeros((pad,) + tuple(x.shape[1:]))], dim=0)
        x = x.reshape((num_chunks, chunk) + tuple(x.shape[1:]))
        return x.movedim(2, 0)

    qc, kc, vc, gc, bc = (to_chunks(x) for x in (q, k, v, g, beta))
    gam = gc.cumsum(-1)  # [HV, N, C]
    on_or_below = torch.ones(chunk, chunk, dtype=torch.bool, device=v.device).tril()
    diff = (gam[..., :, None] - gam[..., None, :]).masked_fill(~on_or_below, float("-inf"))
    decay = diff.exp()  # exp(gam_i - gam_j) for i >= j, 0 above
    A = (bc[..., :, None] * (kc @ kc.transpose(-1, -2)) * decay).tril(-1)
    eye = torch.eye(chunk, dtype=v.dtype, device=v.device)
    T_inv = torch.linalg.solve_triangular(eye + A, eye.expand_as(A), upper=False, unitriangular=True)
    W = T_inv @ ((bc * gam.exp())[..., None] * kc)
    U = T_inv @ (bc[..., None] * vc)
    intra = (qc @ kc.transpose(-1, -2)) * decay

    h = initial_state.clone()
    out_chunks = []
    for n in range(num_chunks):
        v_new = U[:, n] - W[:, n] @ h
        out_chunks.append((qc[:, n] * gam[:, n, :, None].exp()) @ h + intra[:, n] @ v_new)
        gam_last = gam[:, n, -1]
        carry = (gam_last[:, None] - gam[:, n]).exp()[..., None] * v_new
        h = gam_last.exp()[:, None, None] * h + kc[:, n].transpose(-1, -2) @ carry
    o = torch.stack(out_chunks, dim=1).reshape(HV, num_chunks * chunk, Vd)[:, :T]
    return o.movedim(0, 1).contiguous(), h


def scan_keeping_states(scan, offsets, states: dict):
    """`scan` run in pieces that end at each of `offsets` (0 < offset < T, ascending), carrying the state;
    the state after each piece goes to states[offset]. With offsets on the chunked scan's chunk boundaries
    every chunk sees what it sees in one call: the chunked form carries the state between chunks anyway."""

    def run(q, k, v, g, beta, state):
        outs, first = [], 0
        for end in [*offsets, q.shape[0]]:
            o, state = scan(q[first:end], k[first:end], v[first:end], g[first:end], beta[first:end], state)
            outs.append(o)
            if end < q.shape[0]:
                states[end] = state.clone()
            first = end
        return torch.cat(outs, dim=0), state

    return run


def gdn_layer_core(qkv_preconv, z, a, b, params: GdnLayerParams, conv_state, recurrent_state, scan):
    """Conv -> split -> gates -> l2norm/scale -> scan -> gated norm, between in- and out-proj.

    params: the layer's GdnLayerParams (the numpy reference's and the device's type), its arrays as
    tensors of the model dtype. scan(q, k, v, g, beta, state) -> (o, state).
    Returns (y [T, HV*V], new conv_state, new recurrent state).
    """
    H, HV = params.num_qk_heads, params.num_v_heads
    K, V = params.key_head_dim, params.value_head_dim
    eps = params.eps
    T = qkv_preconv.shape[0]
    mixed, new_conv_state = causal_conv1d_silu(qkv_preconv, params.conv_weight, conv_state)
    q = mixed[:, : H * K].reshape(T, H, K)
    k = mixed[:, H * K : 2 * H * K].reshape(T, H, K)
    v = mixed[:, 2 * H * K :].reshape(T, HV, V)
    g, beta = gdn_gates(a, b, params.A_log, params.dt_bias)
    q = l2norm(q, eps) * K**-0.5
    k = l2norm(k, eps)
    o, new_state = scan(q, k, v, g, beta, recurrent_state)
    y = gated_rmsnorm(o, z.reshape(T, HV, V), params.norm_weight, eps)
    return y.reshape(T, HV * V), new_conv_state, new_state


def rope_cos_sin(positions: torch.Tensor, rotary_dim: int, theta: float, dtype: torch.dtype):
    """cos, sin [T, rotary_dim] for rotate_half RoPE; angles are formed in fp64 then cast."""
    inv_freq = 1.0 / (theta ** (torch.arange(0, rotary_dim, 2, dtype=torch.float64) / rotary_dim))
    angles = positions.to(torch.float64)[:, None] * inv_freq[None, :]
    angles = torch.cat([angles, angles], dim=-1)
    return angles.cos().to(dtype), angles.sin().to(dtype)


def apply_partial_rope(x: torch.Tensor, cos: torch.Tensor, sin: torch.Tensor) -> torch.Tensor:
    """Rotate the first rotary_dim dims of x [T, heads, D] (rotate_half style), keep the rest."""
    rotary_dim = cos.shape[-1]
    x_rot, x_pass = x[..., :rotary_dim], x[..., rotary_dim:]
    half = rotary_dim // 2
    rotated_half = torch.cat([-x_rot[..., half:], x_rot[..., :half]], dim=-1)
    cos, sin = cos[:, None, :], sin[:, None, :]
    return torch.cat([x_rot * cos + rotated_half * sin, x_pass], dim=-1)


def causal_attention(q, k, v, p0: int, scale: float):
    """Softmax attention, queries at positions p0.. against keys 0..Skv-1, GQA by h // group.

    q [Sq, Hq, D]; k, v [Skv, Hkv, D] with Skv = p0 + Sq. Returns o [Sq, Hq, D].
    """
    Sq, Hq, _ = q.shape
    Skv, Hkv, _ = k.shape
    if Skv != p0 + Sq:
        raise ValueError(f"attention needs Skv == p0 + Sq; got Skv={Skv}, p0={p0}, Sq={Sq}")
    group = Hq // Hkv
    k = k.repeat_interleave(group, dim=1)
    v = v.repeat_interleave(group, dim=1)
    scores = torch.einsum("qhd,khd->hqk", q, k) * scale
    q_pos = torch.arange(p0, p0 + Sq, device=q.device)
    k_pos = torch.arange(Skv, device=q.device)
    scores = scores.masked_fill(k_pos[None, None, :] > q_pos[None, :, None], float("-inf"))
    return torch.einsum("hqk,khd->qhd", scores.softmax(-1), v)
