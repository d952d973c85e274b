"""The GDN gates program reading a and b as column ranges of one wider tensor (the layer's merged
z | b | a projection output), against the fp64 reference of ttprefill/reference/gdn.py."""

from __future__ import annotations

import numpy as np
import pytest

from ttprefill.device.formats import round_to_bf16
from ttprefill.device.program import DataFormat
from ttprefill.ops.gdn import broadcast_rows
from ttprefill.ops.gdn.programs import gates_program
from ttprefill.ops.gdn.shapes import GdnShapeError, HeadColumns
from ttprefill.reference import gdn as ref

BF16, FP32 = DataFormat.Float16_b, DataFormat.Float32


def test_gates_from_columns_of_one_tensor(sim):
    rng = np.random.default_rng(11)
    T, HV, Z = 70, 40, 96  # two tile columns of heads; z's three tile columns first
    a = round_to_bf16(3 * rng.standard_normal((T, HV))).astype(np.float64)
    b = round_to_bf16(3 * rng.standard_normal((T, HV))).astype(np.float64)
    A_log = np.log(rng.uniform(1, 16, HV)).astype(np.float32)
    dt_bias = rng.standard_normal(HV).astype(np.float32)
    # z | b (padded to 64 columns) | a (padded): pad columns hold values that must not leak into g or beta
    merged = 100 * np.ones((T, Z + 64 + 64), np.float32)
    merged[:, :Z] = rng.standard_normal((T, Z))
    merged[:, Z:Z + HV] = b
    merged[:, Z + 64:Z + 64 + HV] = a
    tensors = [sim.upload(merged, BF16), sim.upload(broadcast_rows(dt_bias), FP32),
               sim.upload(broadcast_rows(A_log), FP32), sim.allocate((T, HV), FP32), sim.allocate((T, HV), FP32)]
    zba, dt, alog, g, beta = tensors
    try:
        sim.run(gates_program(sim, T, HV, HeadColumns(zba, Z // 32 + 2), HeadColumns(zba, Z // 32), dt, alog, g, beta,
                              max_cores=3))
        g_out, beta_out = sim.download(g), sim.download(beta)
    finally:
        for t in tensors:
            sim.free(t)
    g_ref, beta_ref = ref.gates(a, b, A_log, dt_bias)
    np.testing.assert_allclose(g_out, g_ref, rtol=2e-6, atol=1e-7)
    np.testing.assert_allclose(beta_out, beta_ref, rtol=2e-6, atol=1e-7)


def test_columns_past_the_tensor_are_refused(sim):
    t = sim.allocate((64, 128), BF16)
    g = sim.allocate((64, 40), FP32)
    rows = sim.allocate((32, 40), FP32)
    try:
        with pytest.raises(GdnShapeError, match="column tile 3"):
            gates_program(sim, 64, 40, HeadColumns(t, 3), HeadColumns(t, 0), rows, rows, g, g)
    finally:
        for x in (t, g, rows):
            sim.free(x)
