"""Element-wise ops (tt-metal's binary_ng kernels with a fused operand activation) against the torch
reference ops of ttprefill/model (reference_model.py: x + mixer(...), silu(gate) * up,
o * sigmoid(gate)) in fp64 of the unrounded inputs."""

from __future__ import annotations

import numpy as np
import pytest
import torch
import torch.nn.functional as F

from ttprefill.device.program import DataFormat
from ttprefill.ops.eltwise import residual_add, sigmoid_gate, silu_mul
from ttprefill.ops.eltwise.eltwise import run_host
from ttprefill.ops.eltwise.program import binary_program
from ttprefill.reference.metrics import pcc, rel_rms

SHAPE = (96, 512)  # 3 x 16 tiles over 48 cores

CASES = {
    "residual_add": (residual_add, lambda a, b: a + b),
    "silu_mul": (silu_mul, lambda a, b: F.silu(a) * b),
    "sigmoid_gate": (sigmoid_gate, lambda a, b: a * torch.sigmoid(b)),
}


@pytest.mark.parametrize("name", list(CASES))
def test_eltwise_matches_torch(sim, name):
    fn, reference = CASES[name]
    rng = np.random.default_rng(len(name))
    a = (2 * rng.standard_normal(SHAPE)).astype(np.float32)
    b = (2 * rng.standard_normal(SHAPE)).astype(np.float32)
    ref = reference(torch.from_numpy(a).double(), torch.from_numpy(b).double()).numpy()
    out = run_host(sim, fn, a, b)
    # bf16 inputs, a bf16 intermediate for the activated operand and a bf16 output: ~3 roundings
    assert pcc(ref, out) >= 0.9999
    assert rel_rms(ref, out) <= 0.01


def test_unknown_activation_is_named(sim):
    t = sim.allocate((32, 32), DataFormat.Float16_b)
    try:
        with pytest.raises(ValueError, match="lhs activation 'gelu'"):
            binary_program(t, t, t, "mul", lhs="gelu")
    finally:
        sim.free(t)
