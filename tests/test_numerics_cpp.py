"""The simulator's C++ numerics (sim/src/numerics.cpp) through the ttprefill._sim extension.

Byte formats are compared bit for bit with the independent numpy implementation in
ttprefill.device.formats. The matrix unit is checked three ways: hand-derived single products that
show which mantissa bits each fidelity phase sees, a numpy model of MVMUL written from
tt-isa-documentation (WormholeB0 MatrixUnit.md / MVMUL.md / SrcASrcB.md) that must agree bit for bit,
and the error against an fp64 matmul, which must grow from HiFi4 to LoFi.
"""

import numpy as np
import pytest

import ttprefill._sim as sim
from ttprefill.device import formats as F
from ttprefill.device.program import DataFormat, MathFidelity

FIDELITIES = [MathFidelity.LoFi, MathFidelity.HiFi2, MathFidelity.HiFi3, MathFidelity.HiFi4]


def bits32(x) -> np.ndarray:
    return np.ascontiguousarray(x, dtype=np.float32).view(np.uint32)


def face_to_row_major(face_ordered: np.ndarray) -> np.ndarray:
    return F.untilize(face_ordered.reshape(1, 1024), (32, 32))


def bf16_tile(rng, scale=1.0) -> np.ndarray:
    return F.round_to_bf16((rng.standard_normal((32, 32)) * scale).astype(np.float32))


def awkward_tile(rng) -> np.ndarray:
    """Wide dynamic range, exact bf16 ties, zeros, denormals, signed zeros and a few non-finite values."""
    x = (rng.standard_normal((32, 32)) * np.exp2(rng.integers(-30, 30, size=(32, 32)))).astype(np.float32)
    u = x.view(np.uint32)
    u[::3, ::2] = (u[::3, ::2] & np.uint32(0xFFFF0000)) | np.uint32(0x8000)  # bf16 ties
    x[5, :] = 0.0
    x[6, 3] = -0.0
    x[7, 7] = np.float32(1e-41)  # denormal
    x[8, 8] = np.inf
    x[9, 9] = -np.inf
    x[10, 10] = np.nan
    x[11, :16] = np.float32(3.0e38)  # near the top of the range
    return x


# ----------------------------------------------------------------------------------------------
# Byte formats: C++ == numpy, bit for bit


@pytest.mark.parametrize("fmt", list(DataFormat))
def test_pack_tile_matches_numpy(fmt):
    rng = np.random.default_rng(int(fmt))
    for _ in range(4):
        x = awkward_tile(rng)
        cpp = sim.pack_tile(int(fmt), x.reshape(-1))
        assert isinstance(cpp, bytes) and len(cpp) == fmt.tile_bytes
        ref = F.pack(fmt, F.tilize(x)).tobytes()
        assert cpp == ref


@pytest.mark.parametrize("fmt", list(DataFormat))
def test_unpack_tile_matches_numpy(fmt):
    rng = np.random.default_rng(100 + int(fmt))
    for _ in range(4):
        data = rng.integers(0, 256, size=fmt.tile_bytes, dtype=np.uint8).tobytes()  # any byte pattern
        cpp = np.asarray(sim.unpack_tile(int(fmt), data), dtype=np.float32)
        assert cpp.shape == (1024,)
        ref = face_to_row_major(F.unpack(fmt, data, 1)[0]).reshape(-1)
        np.testing.assert_array_equal(bits32(cpp), bits32(ref))


def test_cpp_bfp8_flushes_small_values_next_to_a_large_one():
    x = np.zeros((32, 32), dtype=np.float32)
    x[0, :4] = [256.0, 1.0, 3.0, 6.0]  # unit 4 next to 256: 0, 4, 8 (tie to even)
    back = np.asarray(sim.unpack_tile(int(DataFormat.Bfp8_b), sim.pack_tile(int(DataFormat.Bfp8_b), x.reshape(-1))))
    np.testing.assert_array_equal(back.reshape(32, 32)[0, :4], [256.0, 0.0, 4.0, 8.0])


def test_cpp_bf16_ties_to_even():
    x = np.zeros((32, 32), dtype=np.float32)
    x.reshape(-1).view(np.uint32)[:3] = [0x3F808000, 0x3F818000, 0x7F7F8000]
    data = sim.pack_tile(int(DataFormat.Float16_b), x.reshape(-1))
    words = np.frombuffer(data, dtype="<u2")
    assert list(words[:3]) == [0x3F80, 0x3F82, 0x7F80]


# ----------------------------------------------------------------------------------------------
# Matrix unit


def matmul(a, b, fid, transpose_b=False) -> np.ndarray:
    out = np.asarray(sim.matmul_tile(np.ascontiguousarray(a, np.float32), np.ascontiguousarray(b, np.float32),
                                     int(fid), bool(transpose_b)), dtype=np.float32)
    assert out.shape == (32, 32)
    return out


def single_product(a: float, b: float, fid) -> float:
    A = np.zeros((32, 32), dtype=np.float32)
    B = np.zeros((32, 32), dtype=np.float32)
    A[0, 0], B[0, 0] = a, b
    return float(matmul(A, B, fid)[0, 0])


def test_fidelity_phases_hand_derived():
    # A (in0) sits in SrcB: phase slices of hidden 1 + 6 mantissa bits, then the rest.
    # B (in1) sits in SrcA: hidden 1 + 4 mantissa bits, then the next 5.
    lsb7 = 1.0 + 2.0**-7  # a bf16 whose only mantissa bit is the last of 7
    b5 = 1.0 + 2.0**-5  # mantissa bit 5: outside SrcA's first slice
    assert single_product(lsb7, 1.0, MathFidelity.LoFi) == 1.0
    assert single_product(lsb7, 1.0, MathFidelity.HiFi2) == 1.0  # A's low slice needs phase 2
    assert single_product(lsb7, 1.0, MathFidelity.HiFi3) == lsb7
    assert single_product(1.0, b5, MathFidelity.LoFi) == 1.0  # B's low slice needs phase 1
    assert single_product(1.0, b5, MathFidelity.HiFi2) == b5
    assert single_product(1.0, 1.0 + 2.0**-4, MathFidelity.LoFi) == 1.0 + 2.0**-4  # in B's first slice
    assert single_product(1.0 + 2.0**-6, 1.0, MathFidelity.LoFi) == 1.0 + 2.0**-6  # in A's first slice
    # Phase 3 is A_lo * B_lo: 2^-7 * 2^-5 is the only part HiFi3 misses here.
    assert single_product(lsb7, b5, MathFidelity.HiFi3) == lsb7 * b5 - 2.0**-12
    assert single_product(lsb7, b5, MathFidelity.HiFi4) == lsb7 * b5
    assert single_product(-lsb7, b5, MathFidelity.HiFi4) == -lsb7 * b5


def test_fp32_operands_are_truncated_to_tf32_and_denormals_flush():
    assert single_product(1.0 + 2.0**-20, 1.0, MathFidelity.HiFi4) == 1.0  # below TF32's 10 bits
    assert single_product(1.0 + 2.0**-10, 1.0, MathFidelity.HiFi4) == 1.0 + 2.0**-10  # A keeps all 10
    assert single_product(1.0, 1.0 + 2.0**-10, MathFidelity.HiFi4) == 1.0  # SrcA ignores TF32's last bit
    assert single_product(1.0, 1.0 + 2.0**-9, MathFidelity.HiFi4) == 1.0 + 2.0**-9
    assert single_product(1e-40, 1e30, MathFidelity.HiFi4) == 0.0


def mvmul_model(a: np.ndarray, b: np.ndarray, fid: MathFidelity) -> np.ndarray:
    """Dst += SrcB @ SrcA as the ISA doc's MVMUL pseudocode does it, for fp32 Dst and normal finite inputs.

    in0 (a) is unpacked to SrcB and in1 (b) to SrcA; both are TF32 in Src (low 13 mantissa bits cut).
    SrcB slices: hi keeps sign/exponent/hidden bit/6 mantissa bits (0xfffe0000), lo = x - (x & 0xfffe1fff).
    SrcA slices: hi 0xfff80000, lo = x - (x & 0xfff83fff). Phase p uses SrcA lo if p & 1, SrcB lo if p & 2.
    Each MVMUL sums its 16 products from zero in fp32 and adds that to Dst; a tile runs all its MVMULs
    once per phase, k = 0..15 before k = 16..31 for every output face (tt-llk matmul MOP).
    """
    def slices(x, hi_mask, lo_clear):
        u = bits32(x) & np.uint32(0xFFFFE000)
        t = u.view(np.float32)
        hi = (u & np.uint32(hi_mask)).view(np.float32)
        lo = t - (u & np.uint32(lo_clear)).view(np.float32)
        return hi, lo

    src_b = slices(a, 0xFFFE0000, 0xFFFE1FFF)
    src_a = slices(b, 0xFFF80000, 0xFFF83FFF)
    acc = np.zeros((32, 32), dtype=np.float32)
    for phase in range(max(1, int(fid))):
        a_part = src_b[1] if phase & 2 else src_b[0]
        b_part = src_a[1] if phase & 1 else src_a[0]
        for half in (0, 1):
            partial = np.zeros((32, 32), dtype=np.float32)
            for k in range(16 * half, 16 * half + 16):
                partial = partial + np.outer(a_part[:, k], b_part[k, :]).astype(np.float32)
            acc = acc + partial
    return acc


@pytest.mark.parametrize("fid", FIDELITIES, ids=lambda f: f.name)
def test_matmul_matches_mvmul_model_bit_exact(fid):
    rng = np.random.default_rng(20 + int(fid))
    for inputs in ("bf16", "fp32"):
        for _ in range(3):
            if inputs == "bf16":
                a, b = bf16_tile(rng), bf16_tile(rng, 3.0)
            else:
                a = (rng.standard_normal((32, 32)) * 10).astype(np.float32)
                b = rng.standard_normal((32, 32)).astype(np.float32)
            np.testing.assert_array_equal(bits32(matmul(a, b, fid)), bits32(mvmul_model(a, b, fid)))


def test_transpose_b_uses_b_transposed():
    rng = np.random.default_rng(4)
    a, b = bf16_tile(rng), bf16_tile(rng)
    for fid in (MathFidelity.LoFi, MathFidelity.HiFi4):
        np.testing.assert_array_equal(bits32(matmul(a, b, fid, True)), bits32(matmul(a, b.T, fid, False)))
    assert not np.array_equal(matmul(a, b, MathFidelity.HiFi4, True), matmul(a, b, MathFidelity.HiFi4, False))


def test_small_integers_are_exact_even_at_lofi():
    # |x| <= 4 needs at most 3 significant bits, which fit in both operands' first slices; the products
    # and their sums (|sum| <= 512) are exact in fp32, so even one phase gives the exact matmul.
    rng = np.random.default_rng(12)
    a = rng.integers(-4, 5, size=(32, 32)).astype(np.float32)
    b = rng.integers(-4, 5, size=(32, 32)).astype(np.float32)
    np.testing.assert_array_equal(matmul(a, b, MathFidelity.LoFi), a.astype(np.float64) @ b)


def test_fidelity_error_ordering_against_fp64():
    rng = np.random.default_rng(30)
    errors = {fid: [] for fid in FIDELITIES}
    for _ in range(6):
        a, b = bf16_tile(rng), bf16_tile(rng)
        exact = a.astype(np.float64) @ b.astype(np.float64)
        scale = np.abs(a).astype(np.float64) @ np.abs(b).astype(np.float64)
        for fid in FIDELITIES:
            errors[fid].append(np.abs(matmul(a, b, fid) - exact) / scale)
        # HiFi4 sees every bit of bf16 operands: each of the 4 x 32 slice products is exact, and the only
        # error is fp32 accumulation rounding, at most 15 roundings inside an MVMUL plus 8 into Dst.
        hifi4_err = np.abs(matmul(a, b, MathFidelity.HiFi4) - exact)
        assert (hifi4_err <= 23 * 2.0**-24 * scale).all()
    mean = {fid: float(np.mean(errors[fid])) for fid in FIDELITIES}
    assert mean[MathFidelity.LoFi] > 2 * mean[MathFidelity.HiFi2], mean
    assert mean[MathFidelity.HiFi2] > 2 * mean[MathFidelity.HiFi3], mean
    assert mean[MathFidelity.HiFi3] >= mean[MathFidelity.HiFi4], mean
    assert mean[MathFidelity.HiFi4] < 2.0**-22, mean
    # Sanity on magnitudes: LoFi keeps 4 of B's 7 mantissa bits, so errors of order 2^-6 relative.
    assert 2.0**-9 < mean[MathFidelity.LoFi] < 2.0**-4, mean
