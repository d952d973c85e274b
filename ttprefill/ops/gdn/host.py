"""The GDN ops with numpy in and numpy out: upload, run the programs, download, free. Each is the
device twin of a function in ttprefill.reference.gdn, with the same arguments."""

from __future__ import annotations

import numpy as np

from ttprefill.device.program import DataFormat, MathFidelity
from ttprefill.device.tensor import DeviceTensor
from ttprefill.hw import MAX_CORES

from .planner import checkpoint_chunk_indices
from .programs import (
    allocate_layer_tensors,
    allocate_scan_scratch,
    conv_program,
    free_layer_tensors,
    gate_vectors_program,
    gates_program,
    layer_programs,
    norm_program,
    scan_prep_program,
    scan_programs,
)
from .shapes import (
    BF16,
    CONV_WIDTH,
    DEFAULT_CHUNK,
    FP32,
    SCAN_FIDELITY,
    SUPPORTED_KEY_DIMS,
    SUPPORTED_VALUE_DIMS,
    TILE,
    GdnDims,
    GdnShapeError,
    HeadColumns,
    ScanShape,
)


def _as_array(name: str, x, ndim: int) -> np.ndarray:
    a = np.asarray(x, dtype=np.float32)
    if a.ndim != ndim:
        raise GdnShapeError(f"{name} must have {ndim} dims; got shape {a.shape}")
    return a


def scan_shape_of(q, k, v, g, beta, initial_state, chunk: int) -> ScanShape:
    """Check the scan's input shapes against each other; the ScanShape they describe."""
    if q.shape != k.shape:
        raise GdnShapeError(f"q and k must both be [T, H, K]; got q {q.shape}, k {k.shape}")
    T, H, K = q.shape
    if v.shape[0] != T:
        raise GdnShapeError(f"v must be [T, HV, V] with T={T}; got {v.shape}")
    HV, V = v.shape[1], v.shape[2]
    shape = ScanShape(T, H, HV, K, V, chunk)
    for name, arr in (("g", g), ("beta", beta)):
        if arr.shape != (T, HV):
            raise GdnShapeError(f"{name} must be [T, HV] = {(T, HV)}; got {arr.shape}")
    if initial_state is not None and initial_state.shape != (HV, K, V):
        raise GdnShapeError(f"initial_state must be [HV, K, V] = {(HV, K, V)}; got {initial_state.shape}")
    return shape


def gdn_scan(device, q, k, v, g, beta, initial_state=None, chunk: int = DEFAULT_CHUNK, checkpoints=(), *,
             block_tiles: int | None = None, record_format: DataFormat = FP32, fused: bool | None = None,
             fidelity: MathFidelity = SCAN_FIDELITY, max_cores: int = MAX_CORES, reports: list | None = None,
             helpers: bool | None = None, pipelined: bool | None = None):
    """The chunked GDN scan on the device.

    q, k [T, H, K] (q already scaled by K^-1/2), v [T, HV, V], g, beta [T, HV], initial_state
    [HV, K, V] or None (zeros). q/k/v go to the device as bf16, g/beta/state as fp32.
    checkpoints: positions p (0, T, or multiples of chunk) whose state to return.
    fused: one fused program (True), preparation + sequential pass (False), or chosen by scan_programs.
    helpers: whether the fused scan's idle cores prepare a share of the chunks (None: when they fit).
    pipelined: the preparation and the sequential pass as one program on disjoint cores (True), not
    (False), or chosen by scan_programs (None).
    Returns (o [T, HV, V], final_state [HV, K, V], {p: state [HV, K, V]}), float32.
    """
    q, k, v = (_as_array(n, x, 3) for n, x in (("q", q), ("k", k), ("v", v)))
    g, beta = _as_array("g", g, 2), _as_array("beta", beta, 2)
    if initial_state is not None:
        initial_state = _as_array("initial_state", initial_state, 3)
    s = scan_shape_of(q, k, v, g, beta, initial_state, chunk)
    ck_device, ck_host = checkpoint_chunk_indices(checkpoints, s.tokens, s.chunk)
    if fused and block_tiles is not None:
        raise GdnShapeError("the fused scan works on whole value heads; drop block_tiles or pass fused=False")
    if pipelined and (fused or block_tiles is not None):
        raise GdnShapeError("the pipelined scan chooses its own value block and is not the fused scan; "
                            "drop fused / block_tiles or pipelined")
    T, HV, K, V = s.tokens, s.v_heads, s.key_dim, s.value_dim
    state0 = np.zeros((HV, K, V), np.float32) if initial_state is None else initial_state

    owned: list[DeviceTensor] = []

    def up(a, fmt):
        owned.append(device.upload(np.ascontiguousarray(a), fmt))
        return owned[-1]

    def alloc(shape_, fmt):
        owned.append(device.allocate(shape_, fmt))
        return owned[-1]

    try:
        tq, tk = up(q.reshape(T, -1), BF16), up(k.reshape(T, -1), BF16)
        tv = up(v.reshape(T, -1), BF16)
        tg, tb = up(g, FP32), up(beta, FP32)
        tstate = up(state0.reshape(HV * K, V), FP32)
        scratch = allocate_scan_scratch(device, s, record_format)
        owned += [scratch.gate_vectors, scratch.records]
        tout = alloc((T, HV * V), BF16)
        tfinal = alloc((HV * K, V), FP32)
        tck = alloc((max(1, len(ck_device)) * HV * K, V), FP32)
        programs = scan_programs(device, s, HeadColumns(tq), HeadColumns(tk), HeadColumns(tv), tg, tb, scratch,
                                 tstate, HeadColumns(tout), tfinal, tck, ck_device, fused=fused,
                                 block_tiles=block_tiles, fidelity=fidelity, max_cores=max_cores, helpers=helpers,
                                 pipelined=pipelined)
        for program in programs:
            report = device.run(program)
            if reports is not None:
                reports.append(report)
        o = device.download(tout).reshape(T, HV, V)
        final = device.download(tfinal).reshape(HV, K, V)
        states = {}
        if ck_device:
            all_ck = device.download(tck).reshape(-1, HV, K, V)
            for i, c in enumerate(ck_device):
                states[(c + 1) * s.chunk] = all_ck[i]
        for p in ck_host:
            states[p] = state0.copy() if p == 0 else final.copy()
        return o, final, states
    finally:
        for t in owned:
            device.free(t)



def unpack_records(records: np.ndarray, shape: ScanShape) -> dict[str, np.ndarray]:
    """Chunk records as downloaded ([units * record_tiles * 32, 32]) -> arrays per (value head, chunk):
    P, T_beta = T diag(beta) and T_beta_exp = T diag(beta exp(gam)) (sign restored), each [C, C] with
    zeros above the diagonal tiles."""
    nt = shape.chunk_tiles
    units = shape.v_heads * shape.num_chunks
    tiles = records.reshape(units, shape.record_tiles, TILE, TILE)
    ntri = shape.tri_tiles
    out = {name: np.zeros((units, shape.chunk, shape.chunk), np.float32) for name in ("P", "T_beta", "T_beta_exp")}
    for i in range(nt):
        for j in range(i + 1):
            t = i * (i + 1) // 2 + j
            rows, cols = slice(i * TILE, (i + 1) * TILE), slice(j * TILE, (j + 1) * TILE)
            out["P"][:, rows, cols] = tiles[:, t]
            out["T_beta"][:, rows, cols] = tiles[:, ntri + 2 * t]
            out["T_beta_exp"][:, rows, cols] = -tiles[:, ntri + 2 * t + 1]
    lead = (shape.v_heads, shape.num_chunks)
    return {name: a.reshape(lead + a.shape[1:]) for name, a in out.items()}


def unpack_gate_vectors(gate_vectors: np.ndarray, shape: ScanShape) -> dict[str, np.ndarray]:
    """The gate-vector tensor as downloaded -> {quantity: [HV, T]} (kernels/gdn/gate_vectors.h names,
    from_tile_end_J for the per-boundary ones)."""
    names = ["beta", "gam", "exp_gam", "beta_exp_gam", "to_last", "last", "to_tile_end"]
    names += [f"from_tile_end_{j}" for j in range(shape.chunk_tiles - 1)]
    rows = shape.head_tiles * TILE
    return {name: gate_vectors[q * rows:q * rows + shape.v_heads, :shape.tokens] for q, name in enumerate(names)}


def gdn_gate_vectors(device, g, beta, chunk: int = DEFAULT_CHUNK, *,
                     reports: list | None = None) -> dict[str, np.ndarray]:
    """The gate-vector program on its own: g, beta [T, HV] -> unpack_gate_vectors' dict."""
    g, beta = _as_array("g", g, 2), _as_array("beta", beta, 2)
    if g.shape != beta.shape:
        raise GdnShapeError(f"g and beta must both be [T, HV]; got {g.shape} and {beta.shape}")
    T, hv = g.shape
    s = ScanShape(T, 1, hv, SUPPORTED_KEY_DIMS[0], SUPPORTED_VALUE_DIMS[0], chunk)
    own = _Owned(device)
    try:
        tg, tb = own.upload(g, FP32), own.upload(beta, FP32)
        tv = own.allocate((s.gate_kinds * s.head_tiles * TILE, s.gate_row_tiles * TILE), FP32)
        _run(device, gate_vectors_program(device, s, tg, tb, tv), reports)
        return unpack_gate_vectors(device.download(tv), s)
    finally:
        own.free()


def gdn_chunk_prepare(device, q, k, v, g, beta, chunk: int = DEFAULT_CHUNK, *, fidelity: MathFidelity = SCAN_FIDELITY):
    """The scan's preparation program on its own (after the gate vectors): the chunk records of every
    (value head, chunk), as unpack_records returns them (to check against
    ttprefill.reference.gdn.chunk_prepare)."""
    q, k, v = (_as_array(n, x, 3) for n, x in (("q", q), ("k", k), ("v", v)))
    g, beta = _as_array("g", g, 2), _as_array("beta", beta, 2)
    s = scan_shape_of(q, k, v, g, beta, None, chunk)
    own = _Owned(device)
    try:
        T = s.tokens
        tq, tk, tv = (own.upload(x.reshape(T, -1), BF16) for x in (q, k, v))
        tg, tb = own.upload(g, FP32), own.upload(beta, FP32)
        scratch = allocate_scan_scratch(device, s)
        own.tensors += [scratch.gate_vectors, scratch.records]
        device.run(gate_vectors_program(device, s, tg, tb, scratch.gate_vectors))
        device.run(scan_prep_program(device, s, HeadColumns(tq), HeadColumns(tk), HeadColumns(tv),
                                     scratch.gate_vectors, scratch.records, fidelity=fidelity))
        return unpack_records(device.download(scratch.records), s)
    finally:
        own.free()



def conv_tap_rows(conv_weight: np.ndarray) -> np.ndarray:
    """[C, 4] depthwise conv weights -> [4 * 32, C] fp32: rows 32*tap .. 32*tap+31 all hold tap `tap`
    (row-broadcast tiles for the SFPU products)."""
    w = np.asarray(conv_weight, np.float32)
    if w.ndim != 2 or w.shape[1] != CONV_WIDTH:
        raise GdnShapeError(f"conv weight must be [channels, {CONV_WIDTH}]; got {w.shape}")
    return np.ascontiguousarray(np.repeat(w.T, TILE, axis=0))


def broadcast_rows(vector: np.ndarray) -> np.ndarray:
    """[n] -> [32, n] fp32 with every row equal (a row-broadcast tile row)."""
    return np.ascontiguousarray(np.broadcast_to(np.asarray(vector, np.float32)[None, :], (TILE, len(vector))))


class _Owned:
    """Device tensors of one call, freed together."""

    def __init__(self, device):
        self.device, self.tensors = device, []

    def upload(self, array, fmt):
        self.tensors.append(self.device.upload(np.ascontiguousarray(array, dtype=np.float32), fmt))
        return self.tensors[-1]

    def allocate(self, shape, fmt):
        self.tensors.append(self.device.allocate(shape, fmt))
        return self.tensors[-1]

    def free(self):
        for t in self.tensors:
            self.device.free(t)
        self.tensors = []


def _run(device, program, reports):
    report = device.run(program)
    if reports is not None:
        reports.append(report)
    return report


def _conv_state_array(conv_state, channels: int) -> np.ndarray:
    if conv_state is None:
        return np.zeros((CONV_WIDTH - 1, channels), np.float32)
    s = np.asarray(conv_state, np.float32)
    if s.shape != (CONV_WIDTH - 1, channels):
        raise GdnShapeError(f"conv_state must be [{CONV_WIDTH - 1}, {channels}]; got {s.shape}")
    return s


def gdn_conv(device, qkv, conv_weight, conv_state, dims: GdnDims, *, reports: list | None = None):
    """Conv1d + SiLU + q/k L2 norm (q scaled by K^-1/2) on the device.

    qkv [T, 2HK + HV V] pre-conv channels, conv_weight [C, 4], conv_state [3, C] or None.
    Returns (mixed [T, C] with q, k normalised, new conv state [3, C]); bf16 values as float32.
    """
    qkv = _as_array("qkv", qkv, 2)
    T, c = qkv.shape
    if c != dims.conv_channels:
        raise GdnShapeError(f"qkv has {c} channels; the layer has 2*H*K + HV*V = {dims.conv_channels}")
    own = _Owned(device)
    try:
        x = own.upload(qkv, BF16)
        state = own.upload(_conv_state_array(conv_state, c), BF16)
        taps = own.upload(conv_tap_rows(conv_weight), FP32)
        out = own.allocate((T, c), BF16)
        state_out = own.allocate((CONV_WIDTH - 1, c), BF16)
        _run(device, conv_program(device, dims, T, x, state, taps, out, state_out), reports)
        return device.download(out), device.download(state_out)
    finally:
        own.free()


def gdn_gates(device, a, b, A_log, dt_bias, *, reports: list | None = None):
    """beta = sigmoid(b), g = -exp(A_log) softplus(a + dt_bias) on the device. a, b [T, HV] (bf16 on
    the device), A_log, dt_bias [HV]. Returns (g, beta) [T, HV] float32."""
    a, b = _as_array("a", a, 2), _as_array("b", b, 2)
    if a.shape != b.shape:
        raise GdnShapeError(f"a and b must have the same shape [T, HV]; got {a.shape} and {b.shape}")
    T, hv = a.shape
    for name, p in (("A_log", A_log), ("dt_bias", dt_bias)):
        if np.shape(p) != (hv,):
            raise GdnShapeError(f"{name} must be [HV] = [{hv}]; got {np.shape(p)}")
    own = _Owned(device)
    try:
        ta, tb = own.upload(a, BF16), own.upload(b, BF16)
        tdt, talog = own.upload(broadcast_rows(dt_bias), FP32), own.upload(broadcast_rows(A_log), FP32)
        tg, tbeta = own.allocate((T, hv), FP32), own.allocate((T, hv), FP32)
        _run(device, gates_program(device, T, hv, ta, tb, tdt, talog, tg, tbeta), reports)
        return device.download(tg), device.download(tbeta)
    finally:
        own.free()


def gdn_gated_norm(device, o, z, weight, *, reports: list | None = None):
    """y = w * (o * rsqrt(mean(o^2) + eps)) * silu(z) per value head on the device.
    o, z [T, HV, V] (bf16 on the device), weight [V]. Returns y [T, HV, V] float32."""
    o, z = _as_array("o", o, 3), _as_array("z", z, 3)
    if o.shape != z.shape:
        raise GdnShapeError(f"o and z must have the same shape [T, HV, V]; got {o.shape} and {z.shape}")
    T, hv, v = o.shape
    if v not in SUPPORTED_VALUE_DIMS:
        raise GdnShapeError(f"value head dim {v} is not supported; use one of {SUPPORTED_VALUE_DIMS}")
    if np.shape(weight) != (v,):
        raise GdnShapeError(f"norm weight must be [V] = [{v}]; got {np.shape(weight)}")
    own = _Owned(device)
    try:
        to, tz = own.upload(o.reshape(T, hv * v), BF16), own.upload(z.reshape(T, hv * v), BF16)
        tw = own.upload(broadcast_rows(weight), FP32)
        ty = own.allocate((T, hv * v), BF16)
        _run(device, norm_program(device, T, hv, v, HeadColumns(to), tz, tw, ty), reports)
        return device.download(ty).reshape(T, hv, v)
    finally:
        own.free()



def dims_of(params) -> GdnDims:
    """The head layout of a layer's parameters (a ttprefill.reference.gdn.GdnLayerParams)."""
    return GdnDims(params.num_qk_heads, params.num_v_heads, params.key_head_dim, params.value_head_dim)


def gdn_layer(device, qkv, z, a, b, params, conv_state=None, recurrent_state=None, chunk: int = DEFAULT_CHUNK,
              checkpoints=(), *, fidelity: MathFidelity = SCAN_FIDELITY, record_format: DataFormat = FP32,
              reports: list | None = None):
    """Everything of a GDN layer between its in-projections and its out-projection, on the device
    (the device twin of ttprefill.reference.gdn.gdn_layer_core).

    qkv [T, 2HK + HV V] pre-conv, z [T, HV V], a, b [T, HV]; params a GdnLayerParams;
    conv_state [3, C] or None; recurrent_state [HV, K, V] or None.
    record_format: Float32 (default) or Float16_b for the two-program scan's chunk records (P, T~,
    -T^): bf16 halves their DRAM traffic and costs accuracy (tests/test_gdn_kernels.py bounds it).
    Returns (y [T, HV V], new conv state [3, C], new recurrent state [HV, K, V],
    {p: recurrent state after p tokens} for the requested chunk-aligned checkpoints).
    """
    dims = dims_of(params)
    qkv, z = _as_array("qkv", qkv, 2), _as_array("z", z, 2)
    a, b = _as_array("a", a, 2), _as_array("b", b, 2)
    T, c = qkv.shape
    hv, kdim, vdim = dims.v_heads, dims.key_dim, dims.value_dim
    if c != dims.conv_channels:
        raise GdnShapeError(f"qkv has {c} channels; expected 2*H*K + HV*V = {dims.conv_channels}")
    for name, arr, shape in (("z", z, (T, hv * vdim)), ("a", a, (T, hv)), ("b", b, (T, hv))):
        if arr.shape != shape:
            raise GdnShapeError(f"{name} must be {list(shape)}; got {list(arr.shape)}")
    state0 = (np.zeros((hv, kdim, vdim), np.float32) if recurrent_state is None
              else np.asarray(recurrent_state, np.float32))
    if state0.shape != (hv, kdim, vdim):
        raise GdnShapeError(f"recurrent_state must be [HV, K, V] = {[hv, kdim, vdim]}; got {list(state0.shape)}")
    ScanShape(T, dims.qk_heads, hv, kdim, vdim, chunk)
    ck_device, ck_host = checkpoint_chunk_indices(checkpoints, T, chunk)
    conv_state = _conv_state_array(conv_state, c)
    taps = conv_tap_rows(params.conv_weight)
    if taps.shape[1] != c:
        raise GdnShapeError(f"conv weight has {taps.shape[1]} channels; the layer has {c}")
    for name, p, n in (("dt_bias", params.dt_bias, hv), ("A_log", params.A_log, hv),
                       ("norm_weight", params.norm_weight, vdim)):
        if np.shape(p) != (n,):
            raise GdnShapeError(f"{name} must be [{n}]; got {list(np.shape(p))}")
    t = allocate_layer_tensors(device, dims, T, chunk, len(ck_device), record_format)
    try:
        w = device.write
        w(t.qkv, qkv), w(t.z, z), w(t.a, a), w(t.b, b)
        w(t.conv_state, conv_state)
        w(t.tap_weights, taps)
        w(t.dt_bias_rows, broadcast_rows(params.dt_bias)), w(t.a_log_rows, broadcast_rows(params.A_log))
        w(t.norm_rows, broadcast_rows(params.norm_weight))
        w(t.state, state0.reshape(hv * kdim, vdim))
        for program in layer_programs(device, dims, T, chunk, t, ck_device, fidelity=fidelity):
            _run(device, program, reports)
        y = device.download(t.y)
        final = device.download(t.final_state).reshape(hv, kdim, vdim)
        states = {}
        if ck_device:
            all_ck = device.download(t.checkpoints).reshape(-1, hv, kdim, vdim)
            for i, ci in enumerate(ck_device):
                states[(ci + 1) * chunk] = all_ck[i]
        for p in ck_host:
            states[p] = state0.copy() if p == 0 else final.copy()
        return y, device.download(t.conv_state_out), final, states
    finally:
        free_layer_tensors(device, t)
