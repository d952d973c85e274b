"""The matmul calibration points' program configs, against the values worked out by hand from the
sources' own rules (tt-metal's GEMM_FLOPS benchmark tables and the Qwen demo's one-K-pass builder), and
the published times against the report's utilisation formula."""

from __future__ import annotations

import pytest

from ttprefill import calibration
from ttprefill.calibration import gemm_flops_config, kpass1_config


@pytest.mark.parametrize("shape,row,expected", [
    # 4096^3: (512, 512, 512, DRAM, div 1, 2 x 2 output blocks) scaled by the 8x8 grid
    ((4096, 4096, 4096), (1, 2, 2), dict(per_core_m=16, per_core_n=16, in0_block_w=16, out_block_h=8, out_block_w=8,
                                         out_subblock_h=4, out_subblock_w=2)),
    # 3328x2560x2560: (416, 320, 320, div 1, one block): 13 x 10 tiles, only 1 x 5 of the choices divides
    ((3328, 2560, 2560), (1, 1, 1), dict(per_core_m=13, per_core_n=10, in0_block_w=10, out_block_h=13, out_block_w=10,
                                         out_subblock_h=1, out_subblock_w=5)),
    ((3072, 4096, 4096), (2, 1, 1), dict(per_core_m=12, per_core_n=16, in0_block_w=8, out_block_h=12, out_block_w=16,
                                         out_subblock_h=4, out_subblock_w=2)),
])
def test_gemm_flops_config(shape, row, expected):
    assert gemm_flops_config(*shape, *row) == expected


def test_kpass1_config_of_the_qwen_projections():
    # out-projection: N = 128 tiles over 8 columns, K = 64 tiles -> in0 blocks of min(4, 8); 16 takes 8 wide
    assert kpass1_config(2048, 2048, 4096) == dict(per_core_m=8, per_core_n=16, in0_block_w=4, out_block_h=8,
                                                   out_block_w=16, out_subblock_h=1, out_subblock_w=8)
    # fused QKV: N = 160 tiles -> 20 per column, whose widest divisor within 8 is 5
    assert kpass1_config(2048, 4096, 5120)["out_subblock_w"] == 5


def test_gemm_point_time_is_ideal_cycles_over_utilisation():
    # 4096^3 BF16 HiFi2 at 59.50 %: 128^3 tiles x 32 cycles / 64 cores = 1,048,576 ideal cycles
    point = next(p for p in calibration.POINTS if p.program == "matmul_tt_metal" and p.shape["m"] == 4096
                 and p.shape["in0"] == "bf16" and p.shape["fidelity"] == "HiFi2")
    assert point.published_s == pytest.approx(1_048_576 / 0.5950 / 1e9)
    assert point.metric == "math" and point.held_out


def test_math_metric_is_the_mean_compute_kernel_end():
    class Report:
        cycles = 1000
        cores = [{"roles": [{"role": "riscv_0", "end_cycle": 1000}, {"role": "compute", "end_cycle": 800}]},
                 {"roles": [{"role": "compute", "end_cycle": 600}]}]

    point = calibration.Point("matmul_tt_metal", {}, "", 1e-6, metric="math")
    assert calibration.measured_s(point, Report()) == pytest.approx(700e-9)
    assert calibration.measured_s(calibration.Point("noc", {}, "", 1e-6), Report()) == pytest.approx(1000e-9)
