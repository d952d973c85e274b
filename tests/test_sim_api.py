"""Every emulated compute call against numpy, through real kernels on the simulator."""

from __future__ import annotations

import numpy as np
import pytest

from simkit import bf16, run_tile_op
from ttprefill.device.program import DataFormat, MathFidelity
from ttprefill.device.sim_device import model_costs

# Every unpack, math and pack call costs this fixed overhead on top of its data-rate cycles, and every init
# or reconfig call site INIT on each pipeline it reprograms (timing.h). tests/kernels/compute_op.cpp calls
# its inits inside the per-tile zone: copy_init and the FPU inits reprogram unpack and math, an SFPU init
# math, the pack thread's exp init the packer.
LLK = model_costs()["llk_call"]
INIT = model_costs()["init_site"]
JOINT = model_costs()["unpack_joint_bytes_per_cycle"]
# Each UNPACR spends 2 cycles on its start address (ISA doc UNPACR_Regular.md, "Performance"): the copy and
# eltwise unpackers issue one per 16x16 face, the matmul unpacker one per tile.
UNPACR = 2

RNG = np.random.default_rng(1234)
A = RNG.standard_normal((64, 96)).astype(np.float32)
B = RNG.standard_normal((64, 96)).astype(np.float32)
POS = (RNG.random((64, 96)) * 4 + 0.1).astype(np.float32)


def tiles(x: np.ndarray):
    """Yield the 32x32 tiles of a matrix in row-major tile order."""
    for i in range(0, x.shape[0], 32):
        for j in range(0, x.shape[1], 32):
            yield i, j, x[i:i + 32, j:j + 32]


def per_tile(x: np.ndarray, fn) -> np.ndarray:
    out = np.zeros_like(x, dtype=np.float64)
    for i, j, t in tiles(x):
        out[i:i + 32, j:j + 32] = fn(t.astype(np.float64))
    return out


def close(out, ref, rtol=2e-6, atol=1e-6):
    np.testing.assert_allclose(out, ref, rtol=rtol, atol=atol)


def tf32(x: np.ndarray) -> np.ndarray:
    """What srcA holds for fp32 values: the low 13 mantissa bits dropped (no denormals in these inputs)."""
    return (np.asarray(x, np.float32).view(np.uint32) & np.uint32(0xFFFFE000)).view(np.float32)


def test_copy_bf16_and_fp32(sim):
    close(run_tile_op(sim, {"OP_COPY": "1"}, A), bf16(A), 0, 0)
    # An fp32 CB reaches fp32 DST exactly only in UnpackToDestFp32 mode; by default through srcA, as TF32.
    close(run_tile_op(sim, {"OP_COPY": "1"}, A, in_format=DataFormat.Float32, unpack_to_dest_fp32=frozenset({0})),
          A, 0, 0)
    copied = run_tile_op(sim, {"OP_COPY": "1"}, A, in_format=DataFormat.Float32)
    close(copied, tf32(A), 0, 0)
    assert not np.array_equal(copied, A)


def test_unpack_to_dest_needs_fp32_dest_and_a_copy_only_cb(sim):
    from ttprefill.device.sim_device import SimError

    with pytest.raises(SimError, match="UnpackToDestFp32 mode, which needs 32-bit DST"):
        run_tile_op(sim, {"OP_COPY": "1"}, A, in_format=DataFormat.Float32, fp32_dest=False,
                    unpack_to_dest_fp32=frozenset({0}))
    with pytest.raises(SimError, match="FPU operations cannot read it"):
        run_tile_op(sim, {"OP_BINARY": "1", "BINARY_INIT": "add_init", "BINARY_CALL": "add_tiles"}, A, B,
                    in_format=DataFormat.Float32, unpack_to_dest_fp32=frozenset({1}))


@pytest.mark.parametrize("init,call,fn", [
    ("add_init", "add_tiles", np.add),
    ("sub_init", "sub_tiles", np.subtract),
    ("mul_init", "mul_tiles", np.multiply),
])
def test_eltwise_binary(sim, init, call, fn):
    out = run_tile_op(sim, {"OP_BINARY": "1", "BINARY_INIT": init, "BINARY_CALL": call}, A, B)
    close(out, fn(bf16(A).astype(np.float64), bf16(B)))


@pytest.mark.parametrize("op", ["add", "sub", "mul"])
@pytest.mark.parametrize("kind", ["rows", "cols", "scalar"])
def test_bcast(sim, op, kind):
    fn = {"add": np.add, "sub": np.subtract, "mul": np.multiply}[op]
    out = run_tile_op(sim, {"OP_BINARY": "1", "BINARY_INIT": f"{op}_bcast_{kind}_init",
                            "BINARY_CALL": f"{op}_tiles_bcast_{kind}"}, A, B)
    a, b = bf16(A).astype(np.float64), bf16(B).astype(np.float64)
    ref = np.zeros_like(a)
    for i, j, _ in tiles(a):
        ta, tb = a[i:i + 32, j:j + 32], b[i:i + 32, j:j + 32]
        bt = {"rows": tb[0:1, :], "cols": tb[:, 0:1], "scalar": tb[0, 0]}[kind]
        ref[i:i + 32, j:j + 32] = fn(ta, bt)
    close(out, ref)


@pytest.mark.parametrize("transpose", [0, 1])
def test_matmul_tiles_hifi4_is_exact_for_bf16(sim, transpose):
    # One resident B tile multiplies every A tile.
    b = B[:32, :32]
    out = run_tile_op(sim, {"OP_MATMUL": "1", "MATMUL_TRANSPOSE": str(transpose)}, A, b, resident_b=1)
    bb = bf16(b).astype(np.float64)
    ref = per_tile(bf16(A), lambda t: t @ (bb.T if transpose else bb))
    close(out, ref, rtol=1e-5, atol=1e-5)


def test_matmul_fidelity_error_grows_towards_lofi(sim):
    b = B[:32, :32]
    bb = bf16(b).astype(np.float64)
    ref = per_tile(bf16(A), lambda t: t @ bb)
    errs = {}
    for fid in (MathFidelity.HiFi4, MathFidelity.HiFi3, MathFidelity.HiFi2, MathFidelity.LoFi):
        out = run_tile_op(sim, {"OP_MATMUL": "1", "MATMUL_TRANSPOSE": "0"}, A, b, resident_b=1, fidelity=fid)
        errs[fid] = np.sqrt(np.mean((out - ref) ** 2)) / np.sqrt(np.mean(ref ** 2))
    assert errs[MathFidelity.HiFi4] < 1e-6
    assert errs[MathFidelity.LoFi] > errs[MathFidelity.HiFi2] > errs[MathFidelity.HiFi4]
    assert errs[MathFidelity.HiFi3] <= errs[MathFidelity.HiFi2]
    assert errs[MathFidelity.LoFi] < 0.05  # LoFi is coarse but still a matmul


@pytest.mark.parametrize("pool,fn", [("SUM", np.sum), ("MAX", np.max)])
@pytest.mark.parametrize("dim", ["REDUCE_ROW", "REDUCE_COL"])
def test_reduce(sim, pool, fn, dim):
    scaler = np.zeros((32, 32), np.float32)
    scaler[0, 0] = 0.5
    out = run_tile_op(sim, {"OP_REDUCE": "1", "REDUCE_POOL": pool, "REDUCE_DIM": dim}, A, scaler, resident_b=1)
    a = bf16(A).astype(np.float64)
    ref = np.zeros_like(a)
    for i, j, t in tiles(a):
        if dim == "REDUCE_ROW":
            ref[i:i + 32, j] = fn(t, axis=1) * 0.5
        else:
            ref[i, j:j + 32] = fn(t, axis=0) * 0.5
    if pool == "MAX":  # DST starts at zero and MAX accumulates into it, as the hardware's does
        ref = np.where(ref != 0, np.maximum(ref, 0), 0)
    close(out, ref, rtol=1e-5, atol=1e-5)


def test_transpose(sim):
    out = run_tile_op(sim, {"OP_TRANSPOSE": "1"}, A)
    close(out, per_tile(bf16(A), lambda t: t.T), 0, 0)


SFPU_CASES = [
    ("exp_tile_init", "exp_tile", A, np.exp),
    ("recip_tile_init", "recip_tile", POS, lambda x: 1 / x),
    ("sqrt_tile_init", "sqrt_tile", POS, np.sqrt),
    ("rsqrt_tile_init", "rsqrt_tile", POS, lambda x: 1 / np.sqrt(x)),
    ("sigmoid_tile_init", "sigmoid_tile", A, lambda x: 1 / (1 + np.exp(-x))),
    ("silu_tile_init", "silu_tile", A, lambda x: x / (1 + np.exp(-x))),
    ("negative_tile_init", "negative_tile", A, np.negative),
]


@pytest.mark.parametrize("init,call,x,fn", SFPU_CASES, ids=[c[1] for c in SFPU_CASES])
def test_sfpu_unary(sim, init, call, x, fn):
    out = run_tile_op(sim, {"OP_SFPU": "1", "SFPU_INIT": init, "SFPU_CALL": call}, x)
    close(out, fn(bf16(x).astype(np.float64)), rtol=1e-5, atol=1e-6)


def test_sfpu_softplus_and_scalar_ops(sim):
    one, thresh, three = 0x3F800000, 0x41A00000, 0x40400000  # 1.0, 20.0, 3.0 as fp32 bits
    out = run_tile_op(sim, {"OP_SFPU": "1", "SFPU_INIT": "softplus_tile_init",
                            "SFPU_CALL(d)": f"softplus_tile(d, {one}, {one}, {thresh})"}, A)
    close(out, np.log1p(np.exp(bf16(A).astype(np.float64))), rtol=1e-5, atol=1e-6)
    out = run_tile_op(sim, {"OP_SFPU": "1", "SFPU_INIT": "binop_with_scalar_tile_init",
                            "SFPU_CALL(d)": f"mul_unary_tile(d, {three})"}, A)
    close(out, bf16(A) * 3.0)
    for call, fn in (("add_unary_tile", np.add), ("sub_unary_tile", np.subtract), ("rsub_unary_tile", lambda x, c: c - x)):
        out = run_tile_op(sim, {"OP_SFPU": "1", "SFPU_INIT": "binop_with_scalar_tile_init",
                                "SFPU_CALL(d)": f"{call}(d, {three})"}, A)
        close(out, fn(bf16(A).astype(np.float64), 3.0))
    out = run_tile_op(sim, {"OP_SFPU": "1", "SFPU_INIT": "fill_tile_init", "SFPU_CALL(d)": "fill_tile(d, -2.5f)"}, A)
    close(out, np.full_like(A, -2.5), 0, 0)


@pytest.mark.parametrize("init,call,fn", [
    ("binary_max_tile_init", "binary_max_tile", np.maximum),
    ("binary_min_tile_init", "binary_min_tile", np.minimum),
    ("add_binary_tile_init", "add_binary_tile", np.add),
    ("mul_binary_tile_init", "mul_binary_tile", np.multiply),
])
def test_sfpu_binary(sim, init, call, fn):
    out = run_tile_op(sim, {"OP_SFPU_BINARY": "1", "SFPU_INIT": init, "SFPU_CALL": call}, A, B)
    close(out, fn(bf16(A).astype(np.float64), bf16(B)))


@pytest.mark.parametrize("direction", ["col", "row"])
@pytest.mark.parametrize("op,fn", [("add", np.add), ("sub", np.subtract), ("mul", np.multiply)])
def test_sfpu_broadcast_binary(sim, direction, op, fn):
    # DST[0] op= column 0 (col) or row 0 (row) of DST[1], spread over the tile, in fp32.
    out = run_tile_op(sim, {"OP_SFPU_BINARY": "1", "SFPU_INIT": f"sfpu_bcast_{direction}_init",
                            "SFPU_CALL(a, b, o)": f"sfpu_{op}_bcast_{direction}(a, b)"}, A, B)
    b = bf16(B).astype(np.float64)
    spread = per_tile(b, lambda t: np.repeat(t[:, :1], 32, 1) if direction == "col" else np.repeat(t[:1, :], 32, 0))
    close(out, fn(bf16(A).astype(np.float64), spread))


def test_copy_dest_values(sim):
    # DST[0] <- DST[1] on the SFPU, bit for bit (fp32 DST), one simple SFPU pass (32 cycles); three math calls.
    out = run_tile_op(sim, {"OP_SFPU_BINARY": "1", "SFPU_INIT": "copy_dest_values_init",
                            "SFPU_CALL(a, b, o)": "copy_dest_values<DataFormat::Float32>(b, o)"}, A, B)
    close(out, bf16(B), 0, 0)
    zone = sim.last_report.zones["tile"]
    assert zone["math"] == (8 + 8 + 32 + 3 * LLK + 3 * INIT) * (A.size // 1024)  # two copy_tile datacopies, then the SFPU copy


@pytest.mark.parametrize("mode,faces", [("VectorMode::R", (0, 1)), ("VectorMode::C", (0, 2)), ("VectorMode::RC", (0, 1, 2, 3))])
def test_sfpu_vector_modes(sim, mode, faces):
    # tt-llk's unary SFPU params: R runs on faces 0-1 (the top 16 rows), C on faces 0 and 2 (the left 16
    # columns), RC on all four; the other faces keep their values, and the cost is per face run.
    out = run_tile_op(sim, {"OP_SFPU": "1", "SFPU_INIT": "recip_tile_init", "SFPU_CALL(d)": f"recip_tile(d, {mode})"}, POS)
    x = bf16(POS).astype(np.float64)
    want = x.copy()
    for i, j, _ in tiles(x):
        for f in faces:
            r, c = i + 16 * (f // 2), j + 16 * (f % 2)
            want[r:r + 16, c:c + 16] = 1 / x[r:r + 16, c:c + 16]
    close(out, want, rtol=1e-6, atol=0)
    zone = sim.last_report.zones["tile"]
    assert zone["math"] == (8 + 1060 * len(faces) // 4 + 2 * LLK + 2 * INIT) * (POS.size // 1024)


def test_exp_on_the_pack_thread(sim):
    # The pack thread's exp: same values as exp_tile, its cycles on the packer (zone figures).
    out = run_tile_op(sim, {"OP_EXP_PACKTHREAD": "1"}, A)
    close(out, np.exp(bf16(A).astype(np.float64)), rtol=1e-5, atol=1e-6)
    zone = sim.last_report.zones["tile"]
    tiles = A.size // 1024
    assert zone["pack"] == (64 + LLK + 71 * 8 + INIT) * tiles and zone["math"] == (8 + LLK + INIT) * tiles


def test_profiler_zone_figures(sim):
    # OP_COPY per tile: unpack a bf16 tile (2048 B at 64 B/cycle, four UNPACRs), pack an fp32 one (4096 B at
    # 64 B/cycle).
    run_tile_op(sim, {"OP_COPY": "1"}, A)
    report = sim.last_report
    zone = report.zones["tile"]
    tiles = A.size // 1024
    assert zone["entries"] == tiles
    assert zone["unpack"] == (32 + 4 * UNPACR + LLK + INIT) * tiles and zone["pack"] == (64 + LLK) * tiles
    assert zone["math"] == (8 + LLK + INIT) * tiles
    assert zone["elapsed"] >= zone["pack"]


@pytest.mark.parametrize("fmt,tile_bytes", [(DataFormat.Float16_b, 2048), (DataFormat.Float32, 4096)])
def test_unpackers_run_side_by_side(sim, fmt, tile_bytes):
    # Two unpackers (ISA doc Unpackers/README.md), each alone at most 64 B/cycle, both active at most the
    # setting's joint rate (64 at central: each granted x2 of x4, UNPACR_Regular.md): a matmul's two operand
    # tiles, one UNPACR each; a copy uses unpacker 0 alone at 64 B/cycle, one UNPACR per face.
    tiles = A.size // 1024
    run_tile_op(sim, {"OP_MATMUL": "1", "MATMUL_TRANSPOSE": "0"}, A, B[:32, :32], resident_b=1, in_format=fmt)
    both = max(tile_bytes // 64, -(-2 * tile_bytes // JOINT))
    assert sim.last_report.zones["tile"]["unpack"] == (both + 2 * UNPACR + LLK + INIT) * tiles
    run_tile_op(sim, {"OP_COPY": "1"}, A, in_format=fmt)
    assert sim.last_report.zones["tile"]["unpack"] == (tile_bytes // 64 + 4 * UNPACR + LLK + INIT) * tiles


def test_bf16_dest_rounds_results(sim):
    # Without fp32 DST accumulation, DST holds bf16: a product is rounded before packing to fp32.
    out = run_tile_op(sim, {"OP_BINARY": "1", "BINARY_INIT": "mul_init", "BINARY_CALL": "mul_tiles"}, A, B,
                      fp32_dest=False)
    close(out, bf16(bf16(A) * bf16(B)), 0, 0)


@pytest.mark.parametrize("fmt", [DataFormat.Bfp8_b, DataFormat.Float16_b])
def test_pack_formats(sim, fmt):
    from ttprefill.device import formats

    out = run_tile_op(sim, {"OP_COPY": "1"}, A, in_format=DataFormat.Float32, out_format=fmt,
                      unpack_to_dest_fp32=frozenset({0}))
    # The packer's rounding of the fp32 DST values must equal the host-side packer's, bit for bit.
    ref = formats.from_device_bytes(formats.to_device_bytes(A, fmt), fmt, A.shape)
    close(out, ref, 0, 0)


@pytest.mark.parametrize("fmt", [DataFormat.Float32, DataFormat.Float16_b])
def test_pack_l1_accumulation_adds_onto_the_output_tile(sim, fmt):
    # pack_reconfig_l1_acc(1): the second pack adds B onto the A already in the output page; the sum is
    # formed in fp32 from the stored A (already rounded to the CB format) and rounded to it again.
    from ttprefill.device import formats

    def stored(x):
        return formats.from_device_bytes(formats.to_device_bytes(x, fmt), fmt, x.shape)

    out = run_tile_op(sim, {"OP_PACK_L1_ACC": "1"}, A, B, in_format=DataFormat.Float32, out_format=fmt,
                      unpack_to_dest_fp32=frozenset({0, 1}))
    a_stored = stored(A).astype(np.float64)
    ref = stored((a_stored + B.astype(np.float64)).astype(np.float32))
    close(out, ref, 0, 0)
    # Without accumulation the result would be B alone: the test tells the two apart.
    assert np.abs(out - stored(B)).max() > 0.1
