"""The SFPU API headers on the generic elementwise entry (KernelApi::sfpu_eltwise), through a test kernel
that runs an op chain given as the unary factory's defines (tests/kernels/sfpu_chain.cpp).

Float functions are computed by the simulator in fp32 with the C library, so with fp32 DST and an fp32
output they match an fp64 reference to fp32 precision; integer ones are exact on raw 32-bit words
(UInt32 tensors carry Int32 bit patterns as they are)."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from simkit import TEST_KERNELS, bf16, run_tile_op
from ttprefill.device.program import DataFormat
from ttprefill.device.sim_device import model_costs

LLK = model_costs()["llk_call"]  # fixed cycles of every unpack, math and pack call (timing.h)

RNG = np.random.default_rng(2024)
X = bf16(RNG.uniform(-3, 3, (32, 64)).astype(np.float32))
Y = bf16(RNG.uniform(-3, 3, (32, 64)).astype(np.float32))
POS = bf16(RNG.uniform(0.1, 4, (32, 64)).astype(np.float32))
CHAIN = TEST_KERNELS / "sfpu_chain.cpp"


def special(name: str):
    """torch.special's function as an fp64 numpy function."""
    fn = getattr(torch.special, name)
    return lambda x: fn(torch.from_numpy(np.asarray(x, np.float64))).numpy()


def f32_bits(v: float) -> str:
    return f"{int(np.float32(v).view(np.uint32)):#x}u"


def chain_defines(include: str, *steps: str, two_inputs: bool = False) -> dict[str, str]:
    """The unary factory's define layout for a chain of `steps` (C statements: an init, then a call...)."""
    d = {f"SFPU_OP_{inc}_INCLUDE": "1" for inc in include.split()}
    names = []
    for i, step in enumerate(steps):
        d[f"SFPU_OP_CHAIN_0_STEP_{i}"] = step
        names.append(f"SFPU_OP_CHAIN_0_STEP_{i}")
    d["SFPU_OP_CHAIN_0"] = " ".join(names)
    if two_inputs:
        d["TWO_INPUTS"] = "1"
    return d


def run(sim, defines, a, b=None, *, fmt=DataFormat.Float16_b, out=DataFormat.Float32, fp32_dest=True):
    return run_tile_op(sim, defines, a, b, in_format=fmt, out_format=out, fp32_dest=fp32_dest, compute=CHAIN)


UNARY = [
    # (include family, init, call, input, reference)
    ("TRIG_FAMILY", "cos_tile_init();", "cos_tile(0);", X, np.cos),
    ("TRIG_FAMILY", "atan_tile_init();", "atan_tile(0);", X, np.arctan),
    ("TRIG_FAMILY", "asinh_tile_init();", "asinh_tile(0);", X, np.arcsinh),
    ("TRIG_FAMILY", "cosh_tile_init();", "cosh_tile(0);", X, np.cosh),
    ("ERF_ERFC", "erf_tile_init();", "erf_tile(0);", X, special("erf")),
    ("ERF_ERFC", "erfc_tile_init();", "erfc_tile(0);", X, special("erfc")),
    ("ERFINV", "erfinv_tile_init();", "erfinv_tile(0);", bf16(X / 3.5), special("erfinv")),
    ("ELU", "elu_tile_init();", f"elu_tile(0, {f32_bits(0.5)});", X, lambda x: np.where(x > 0, x, 0.5 * np.expm1(x))),
    ("SELU", "selu_tile_init();", f"selu_tile(0, {f32_bits(1.5)}, {f32_bits(2.0)});", X,
     lambda x: 1.5 * np.where(x > 0, x, 2.0 * np.expm1(x))),
    ("ACTIVATIONS", "hardsigmoid_tile_init();", "hardsigmoid_tile(0);", X, lambda x: np.clip(x / 6 + 0.5, 0, 1)),
    ("ACTIVATIONS", "softsign_tile_init();", "softsign_tile(0);", X, lambda x: x / (1 + np.abs(x))),
    ("ACTIVATIONS", "softshrink_tile_init();", f"softshrink_tile(0, {f32_bits(0.5)});", X,
     lambda x: np.where(x > 0.5, x - 0.5, np.where(x < -0.5, x + 0.5, 0))),
    ("CBRT", "cbrt_tile_init();", "cbrt_tile(0);", X, np.cbrt),
    ("LOG1P", "log1p_tile_init();", "log1p_tile(0);", POS, np.log1p),
    ("COMPUTE_KERNEL_API", "expm1_tile_init();", "expm1_tile(0);", X, np.expm1),
    ("COMPUTE_KERNEL_API", "exp2_tile_init();", "exp2_tile(0);", X, np.exp2),
    ("COMPUTE_KERNEL_API", "log_with_base_tile_init();", "log_with_base_tile(0, 0x3ede5bd9u);", POS, np.log10),
    ("COMPUTE_KERNEL_API", "power_tile_init();", f"power_tile(0, {f32_bits(1.5)});", POS, lambda x: x ** 1.5),
    ("COMPUTE_KERNEL_API", "sign_tile_init();", "sign_tile(0);", X, np.sign),
    ("COMPUTE_KERNEL_API", "square_tile_init();", "square_tile(0);", X, np.square),
    ("COMPUTE_KERNEL_API", "unary_max_tile_init();", f"unary_max_tile(0, {f32_bits(0.25)});", X,
     lambda x: np.maximum(x, 0.25)),
    ("I0", "i0_tile_init();", "i0_tile(0);", X, special("i0")),
    ("I1", "i1_tile_init();", "i1_tile(0);", X, special("i1")),
    ("ROUND_FAMILY", "rounding_op_tile_init();", "floor_tile(0);", X, np.floor),
    ("ROUND_FAMILY", "rounding_op_tile_init();", "frac_tile(0);", X, lambda x: x - np.trunc(x)),
    ("ROUND_FAMILY", "rounding_op_tile_init();", "round_tile(0, 1);", X, lambda x: np.round(x, 1)),
    ("UNARY_COMP", "unary_ge_tile_init();", f"unary_ge_tile(0, {f32_bits(0.5)});", X, lambda x: (x >= 0.5) * 1.0),
    ("UNARY_COMP", "ltz_tile_init();", "ltz_tile(0);", X, lambda x: (x < 0) * 1.0),
    ("THRESHOLD", "threshold_tile_init();", f"threshold_tile(0, {f32_bits(1.0)}, {f32_bits(-7.0)});", X,
     lambda x: np.where(x > 1.0, x, -7.0)),
    ("HARDTANH", "hardtanh_tile_init();", f"hardtanh_tile(0, {f32_bits(-1.0)}, {f32_bits(2.0)});", X,
     lambda x: np.clip(x, -1, 2)),
    ("RELU_FAMILY", "relu_max_tile_init();", f"relu_max_tile(0, {f32_bits(1.0)});", X, lambda x: np.clip(x, 0, 1)),
    ("RELU_FAMILY", "leaky_relu_tile_init();", f"leaky_relu_tile(0, {f32_bits(0.1)});", X,
     lambda x: np.where(x < 0, 0.1 * x, x)),
    ("RPOW", "rpow_tile_init();", f"rpow_tile(0, {f32_bits(2.5)});", X, lambda x: 2.5 ** x),
    ("RDIV", "rdiv_tile_init();", f"rdiv_tile(0, {f32_bits(3.0)});", POS, lambda x: 3.0 / x),
    ("RDIV", "rdiv_tile_init();", f"rdiv_tile<RoundingMode::Floor>(0, {f32_bits(3.0)});", POS, lambda x: np.floor(3.0 / x)),
    ("TANH_DERIVATIVE", "tanh_derivative_tile_init();", "tanh_derivative_tile(0);", X, lambda x: 1 - np.tanh(x) ** 2),
    ("TANHSHRINK", "tanhshrink_tile_init();", "tanhshrink_tile(0);", X, lambda x: x - np.tanh(x)),
    ("MISH", "mish_tile_init<false>();", "mish_tile<false>(0);", X, lambda x: x * np.tanh(np.log1p(np.exp(x)))),
    ("HARDMISH", "hardmish_tile_init();", "hardmish_tile(0);", X, lambda x: x * np.clip(x / 2 + 1, 0, 1)),
    ("GELU", "gelu_tanh_tile_init();", "gelu_tanh_tile(0);", X,
     lambda x: 0.5 * x * (1 + np.tanh(np.sqrt(2 / np.pi) * (x + 0.044715 * x ** 3)))),
    ("FMOD", f"fmod_tile_init({f32_bits(0.75)}, {f32_bits(1 / 0.75)});", "fmod_tile(0);", X, lambda x: np.fmod(x, 0.75)),
    ("REMAINDER", f"remainder_tile_init({f32_bits(0.75)}, {f32_bits(1 / 0.75)});", "remainder_tile(0);", X,
     lambda x: np.mod(x, 0.75)),
    ("LOGICAL_NOT", "logical_not_tile_init();", "logical_not_tile<DataFormat::Float16_b>(0);", np.round(X),
     lambda x: (x == 0) * 1.0),
    ("ISINF_ISNAN", "isfinite_tile_init();", "isfinite_tile(0);", X, lambda x: np.isfinite(x) * 1.0),
]


@pytest.mark.parametrize("include,init,call,x,ref", UNARY, ids=[u[2].split("(")[0] for u in UNARY])
def test_unary_function_in_fp32(sim, include, init, call, x, ref):
    out = run(sim, chain_defines(include, init, call), x)
    np.testing.assert_allclose(out, ref(x.astype(np.float64)), rtol=2e-6, atol=2e-6)


BINARY = [
    ("BINARY_ATAN2", "atan2_binary_tile_init();", "atan2_binary_tile(0, 1, 0);", X, Y, np.arctan2),
    ("BINARY_LOGADDEXP", "logaddexp_binary_tile_init();", "logaddexp_binary_tile(0, 1, 0);", X, Y, np.logaddexp),
    ("BINARY_LOGADDEXP", "logaddexp2_binary_tile_init();", "logaddexp2_binary_tile(0, 1, 0);", X, Y, np.logaddexp2),
    ("BINARY_DIV", "power_binary_tile_init();", "power_binary_tile(0, 1, 0);", POS, Y, np.power),
    ("BINARY_DIV", "rsub_binary_tile_init();", "rsub_binary_tile(0, 1, 0);", X, Y, lambda a, b: b - a),
    ("BINARY_DIV", "lt_binary_tile_init();", "lt_binary_tile(0, 1, 0);", X, Y, lambda a, b: (a < b) * 1.0),
    ("BINARY_FMOD", "fmod_binary_tile_init();", "fmod_binary_tile(0, 1, 0);", X, POS, np.fmod),
    ("BINARY_REMAINDER", "remainder_binary_tile_init();", "remainder_binary_tile(0, 1, 0);", X, POS, np.mod),
    ("BINARY_ISCLOSE", "isclose_binary_tile_init();", f"isclose_binary_tile(0, 1, 0, {f32_bits(0.1)}, {f32_bits(0.05)});",
     X, bf16(X * 1.05), lambda a, b: np.isclose(a, b, rtol=0.1, atol=0.05) * 1.0),
    # xlogy.h, nextafter.h and gcd.h have no include family (tt-metal's binary kernels include them
    # directly; so does sfpu_chain.cpp)
    ("", "xlogy_binary_tile_init();", "xlogy_binary_tile(0, 1, 0);", X, POS, lambda a, b: a * np.log(b)),
    ("", "nextafter_binary_tile_init();", "nextafter_binary_tile(0, 1, 0);", X, Y,
     lambda a, b: np.nextafter(a.astype(np.float32), b.astype(np.float32))),
]


@pytest.mark.parametrize("include,init,call,a,b,ref", BINARY, ids=[u[2].split("(")[0] for u in BINARY])
def test_binary_function_in_fp32(sim, include, init, call, a, b, ref):
    out = run(sim, chain_defines(include, init, call, two_inputs=True), a, b)
    np.testing.assert_allclose(out, ref(a.astype(np.float64), b.astype(np.float64)), rtol=2e-6, atol=2e-6)


def u32(x) -> np.ndarray:
    return np.asarray(x, dtype=np.int64).astype(np.uint32)


A_INT = RNG.integers(-2**31, 2**31, (32, 32), dtype=np.int64)
B_INT = RNG.integers(-2**31, 2**31, (32, 32), dtype=np.int64)
SMALL = RNG.integers(-1000, 1000, (32, 32), dtype=np.int64)
SHIFT = RNG.integers(0, 40, (32, 32), dtype=np.int64)


def wrap32(v) -> np.ndarray:
    return (np.asarray(v, dtype=np.int64) & 0xFFFFFFFF).astype(np.uint32)


INTEGER = [
    ("BINARY_MUL_INT", "mul_int_tile_init<DataFormat::Int32>();", "mul_int_tile<DataFormat::Int32>(0, 1, 0);",
     A_INT, B_INT, lambda a, b: wrap32(a * b)),
    ("BINARY_ADD_INT", "add_int_tile_init();", "add_int_tile<DataFormat::Int32>(0, 1, 0);", A_INT, B_INT,
     lambda a, b: wrap32(a + b)),
    ("BINARY_SUB_INT", "sub_int_tile_init();", "sub_int_tile<DataFormat::UInt32>(0, 1, 0);", A_INT, B_INT,
     lambda a, b: wrap32(a - b)),
    ("BINARY_GT_INT", "lt_int_tile_init<DataFormat::Int32>();", "lt_int_tile<DataFormat::Int32>(0, 1, 0);", A_INT, B_INT,
     lambda a, b: u32(a < b)),
    ("BINARY_GT_INT", "lt_int_tile_init<DataFormat::UInt32>();", "lt_int_tile<DataFormat::UInt32>(0, 1, 0);", A_INT, B_INT,
     lambda a, b: u32(wrap32(a) < wrap32(b))),
    ("BINARY_MAX_MIN", "binary_max_int32_tile_init();", "binary_max_int32_tile(0, 1, 0);", A_INT, B_INT,
     lambda a, b: wrap32(np.maximum(a, b))),
    ("BINARY_BITWISE", "binary_bitwise_tile_init();", "bitwise_xor_binary_tile<DataFormat::Int32>(0, 1, 0);", A_INT, B_INT,
     lambda a, b: wrap32(a) ^ wrap32(b)),
    ("BINARY_SHIFT", "binary_shift_tile_init();", "binary_right_shift_tile<DataFormat::Int32>(0, 1, 0);", A_INT, SHIFT,
     lambda a, b: wrap32(a >> np.minimum(b, 31))),
    ("BINARY_SHIFT", "binary_shift_tile_init();", "binary_left_shift_tile<DataFormat::UInt32>(0, 1, 0);", A_INT, SHIFT,
     lambda a, b: wrap32(np.where(b >= 32, 0, wrap32(a).astype(np.int64) << np.minimum(b, 31)))),
    ("BINARY_DIV_INT32_FLOOR", "div_int32_floor_tile_init();", "div_int32_floor_tile(0, 1, 0);", A_INT, SMALL + 1001,
     lambda a, b: wrap32(np.floor_divide(a, b))),
    ("", "gcd_tile_init();", "gcd_tile(0, 1, 0);", SMALL, SMALL[::-1], lambda a, b: wrap32(np.gcd(a, b))),
    ("BINARY_REMAINDER", "remainder_int32_tile_init();", "remainder_int32_tile(0, 1, 0);", A_INT, SMALL + 1001,
     lambda a, b: wrap32(np.mod(a, b))),
]


@pytest.mark.parametrize("include,init,call,a,b,ref", INTEGER, ids=[u[2].split("(")[0] for u in INTEGER])
def test_integer_function_on_raw_words(sim, include, init, call, a, b, ref):
    out = run(sim, chain_defines(include, init, call, two_inputs=True), wrap32(a), wrap32(b),
              fmt=DataFormat.UInt32, out=DataFormat.UInt32)
    np.testing.assert_array_equal(out, ref(a, b))


def test_typecast_float_to_int32_truncates_and_saturates(sim):
    # values with at most 10 mantissa bits: copy_tile of a Float32 CB passes srcA (TF32)
    x = np.float32([[-3.75, -0.5, 0.5, 2.75, 3e9, -3e9, 2.0**29 + 2.0**20, 7.0] * 4] * 32)
    d = chain_defines("TYPECAST", "typecast_tile_init<0u, 8u>();", "typecast_tile<0u, 8u>(0);")
    out = run(sim, d, x, fmt=DataFormat.Float32, out=DataFormat.UInt32)
    ref = wrap32(np.clip(np.trunc(x.astype(np.float64)), -2**31, 2**31 - 1).astype(np.int64))
    np.testing.assert_array_equal(out, ref)


def test_typecast_int32_to_bf16_rounds(sim):
    ints = RNG.integers(-2**24, 2**24, (32, 32), dtype=np.int64)
    d = chain_defines("TYPECAST", "typecast_tile_init<8u, 5u>();", "typecast_tile<8u, 5u>(0);")
    out = run(sim, d, wrap32(ints), fmt=DataFormat.UInt32, out=DataFormat.Float32)
    np.testing.assert_array_equal(out, bf16(ints.astype(np.float32)))


def test_where_selects_by_condition_and_keeps_the_chosen_words(sim):
    cond = np.where(X > 0, 1.0, 0.0).astype(np.float32)
    d = chain_defines("WHERE FILL", "fill_tile_init();", "fill_tile(2, -5.0f);", "where_tile_init();",
                      "where_tile<DataFormat::Float32>(0, 1, 2, 0);", two_inputs=True)
    out = run(sim, d, cond, Y)
    np.testing.assert_array_equal(out, np.where(cond != 0, Y, -5.0))


def test_vector_mode_r_runs_on_the_top_faces_at_half_the_cost(sim):
    d_rc = chain_defines("RPOW", "rpow_tile_init();", f"rpow_tile(0, {f32_bits(2.0)});")
    d_r = chain_defines("RPOW", "rpow_tile_init();", f"rpow_tile(0, {f32_bits(2.0)}, VectorMode::R);")
    x = np.tile(X, (1, 1))
    full = run(sim, d_rc, x)
    busy_rc = sim.last_report.counters["sfpu_busy_cycles"]
    top = run(sim, d_r, x)
    busy_r = sim.last_report.counters["sfpu_busy_cycles"]
    np.testing.assert_array_equal(top[:16], full[:16])
    np.testing.assert_array_equal(top[16:], x[16:])
    # Each SFPU call also pays the fixed LLK-call overhead (timing.h), which does not scale with the faces.
    calls = x.size // 1024 * LLK
    assert (busy_r - calls) * 2 == busy_rc - calls


def test_cost_is_the_named_figure_per_tile(sim):
    # two tiles of sin: the polynomial estimate (600 cycles a tile, ttsim/sfpu_cost.h), plus each call's
    # fixed LLK overhead (timing.h)
    run(sim, chain_defines("TRIG_FAMILY", "sin_tile_init();", "sin_tile(0);"), X)
    assert sim.last_report.counters["sfpu_busy_cycles"] == 2 * (600 + LLK)


def test_a_call_without_its_init_stops_the_run(sim):
    d = chain_defines("TRIG_FAMILY", "cos_tile_init();", "sin_tile(0);")
    with pytest.raises(Exception, match="sin_tile called without its init"):
        run(sim, d, X)


def test_an_integer_result_needs_32_bit_dst(sim):
    d = chain_defines("FILL", "fill_tile_init();", "fill_tile_int<DataFormat::Int32>(0, 7u);")
    with pytest.raises(Exception, match="integer result needs 32-bit DST"):
        run(sim, d, X, fp32_dest=False)


def test_a_declared_only_function_stops_the_run_by_name(sim):
    d = chain_defines("DROPOUT", "dropout_kernel_init(1);", "dropout_tile(0, 100, 0x3f800000u);")
    with pytest.raises(Exception, match="dropout_kernel_init.*not modeled by the simulator"):
        run(sim, d, X)


def test_int32_tensors_reach_dst_and_come_back_as_words(sim):
    a = A_INT.astype(np.int32)
    b = B_INT.astype(np.int32)
    d = chain_defines("BINARY_ADD_INT", "add_int_tile_init();", "add_int_tile<DataFormat::Int32>(0, 1, 0);", two_inputs=True)
    out = run(sim, d, a, b, fmt=DataFormat.Int32, out=DataFormat.Int32)
    np.testing.assert_array_equal(out, wrap32(A_INT + B_INT).view(np.int32))
    d = chain_defines("TYPECAST", "typecast_tile_init<8u, 0u>();", "typecast_tile<8u, 0u>(0);")
    out = run(sim, d, a, fmt=DataFormat.Int32, out=DataFormat.Float32)
    np.testing.assert_array_equal(out, a.astype(np.float32))


def test_int32_tensors_need_32_bit_dst(sim):
    d = chain_defines("NEG", "negative_tile_init();", "negative_tile_int32(0);")
    with pytest.raises(Exception, match="32-bit integers, which need 32-bit DST"):
        run(sim, d, A_INT.astype(np.int32), fmt=DataFormat.Int32, out=DataFormat.Int32, fp32_dest=False)


def test_layernorm_normalisation_broadcasts_the_statistics_column(sim):
    # DST 0 = x, DST 1 = the statistics tile (mean in column 0), the same tile read as inv_std; B's column 0
    # carries both, so (x - m) * m per row.
    d = chain_defines("", "sfpu_bcast_col_init();", "sfpu_normalize_bcast_col(0, 1, 1);", two_inputs=True)
    out = run(sim, d, X, Y)
    ref = np.zeros_like(X, dtype=np.float64)
    for j in range(0, X.shape[1], 32):
        m = Y[:, j:j + 1].astype(np.float64)
        ref[:, j:j + 32] = (X[:, j:j + 32] - m) * m
    np.testing.assert_allclose(out, ref, rtol=1e-6, atol=1e-6)


def test_scalar_normalisation_broadcasts_element_zero(sim):
    d = chain_defines("", "sfpu_normalize_bcast_scalar_init();", "sfpu_normalize_bcast_scalar(0, 1, 1);", two_inputs=True)
    out = run(sim, d, X, Y)
    ref = np.zeros_like(X, dtype=np.float64)
    for j in range(0, X.shape[1], 32):
        m = np.float64(Y[0, j])
        ref[:, j:j + 32] = (X[:, j:j + 32] - m) * m
    np.testing.assert_allclose(out, ref, rtol=1e-6, atol=1e-6)
