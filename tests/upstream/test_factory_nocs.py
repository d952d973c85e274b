"""Each upstream mirror puts its data-movement kernels on the NoCs its tt-metal factory gives them on
Wormhole. The expectations are read from the factories (ttnn 0.81.1 and tt-metal's sources), not from the
mirrors: every factory here configures its reader with ReaderDataMovementConfig / ReaderConfigDescriptor /
create_reader_datamovement_config (RISCV_1 on NoC 0, preferred_noc_for_dram_read) and its writer with the
writer counterparts (RISCV_0 on NoC 1), except the 2D-multicast matmul, whose in0 kernels take the DRAM-write
NoC (1) and in1 kernels the DRAM-read NoC (0), swapped on the receivers right of column cols // 2 (rows
below the sender row). The example matmul (ops/examples.py) follows that factory's scheme."""

from __future__ import annotations

import pytest

from ttprefill.device.offline_device import OfflineDevice
from ttprefill.device.program import CoreCoord, DataFormat, Role
from ttprefill.ops import examples
from ttprefill.ops.upstream import binary, matmul, reduction, tilize, transpose
from ttprefill.ops.upstream import data_movement as dm
from ttprefill.ops.upstream import normalization as norm
from ttprefill.ops.upstream.matmul_mcast import matmul_mcast_2d_program

READER_NOC, WRITER_NOC = 0, 1  # Wormhole: tt-metal's preferred NoC for DRAM reads, for DRAM writes
BF16 = DataFormat.Float16_b


def _builders():
    d = OfflineDevice()

    def t(*shape, fmt=BF16):
        return d.allocate(shape, fmt)

    return {
        "unary": lambda: dm.unary_interleaved_program(t(64, 96), t(64, 96), grid=(2, 2)),
        "copy": lambda: dm.copy_interleaved_program(t(64, 96), t(64, 96), grid=(2, 2)),
        "copy_metal2": lambda: dm.copy_default_tilized_program(t(64, 96), t(64, 96, fmt=DataFormat.Float32),
                                                                grid=(2, 2)),
        "concat": lambda: dm.concat_width_program([t(64, 64), t(64, 32)], t(64, 96)),
        "tilize": lambda: tilize.tilize_program(t(96, 160), t(96, 160), grid=(2, 2)),
        "untilize": lambda: tilize.untilize_program(t(96, 160), t(96, 160), grid=(2, 2)),
        "transpose_wh": lambda: transpose.transpose_wh_program(t(64, 96), t(96, 64), grid=(2, 2)),
        "bmm_multicore": lambda: matmul.bmm_multicore_program(t(2, 64, 96), t(2, 96, 96), t(2, 64, 96), grid=(2, 2)),
        "bmm_multicore_reuse": lambda: matmul.bmm_multicore_reuse_program(t(2, 128, 128), t(2, 128, 128),
                                                                          t(2, 128, 128)),
        "binary_ng": lambda: binary.binary_ng_program(t(64, 96), t(64, 96), t(64, 96), "add", grid=(2, 2)),
        "binary_ng_col_bcast": lambda: binary.binary_ng_bcast_program(t(64, 96), t(64, 32), t(64, 96), "mul", "col",
                                                                      grid=(2, 2)),
        "reduce_w": lambda: reduction.reduce_w_program(t(2, 64, 96), t(2, 64, 32), "sum", grid=(2, 2)),
        "reduce_hw": lambda: reduction.reduce_hw_program(t(2, 64, 96), t(2, 32, 32), "sum"),
        "reduce_h": lambda: reduction.reduce_h_program(t(2, 96, 160), t(2, 32, 160), "max"),
        "softmax": lambda: norm.softmax_program(d, norm.SoftmaxShape(320, 96))[0],
        "layernorm": lambda: norm.layernorm_program(d, norm.LayerNormShape(64, 320, pre_add=True))[0],
    }


@pytest.mark.parametrize("name", sorted(_builders()))
def test_reader_on_noc_0_and_writer_on_noc_1(name):
    program = _builders()[name]()
    dataflow = [k for k in program.kernels if k.role is not Role.COMPUTE]
    assert {k.role for k in dataflow} == {Role.RISCV_0, Role.RISCV_1}
    for k in dataflow:
        want = READER_NOC if k.role is Role.RISCV_1 else WRITER_NOC
        assert k.noc_index == want, f"{name}: {k.source.name} on {k.role.name} uses NoC {k.noc_index}, want {want}"


def _noc_by_core(program) -> dict[tuple[str, CoreCoord], int]:
    return {(k.role.name, c): k.noc_index for k in program.kernels if k.role is not Role.COMPUTE
            for c in k.cores.cores()}


def _expect_2d_mcast_nocs(nocs, cols: int, rows: int) -> None:
    # the factory splits the receivers only when cols > 2 and rows > 1
    split = cols > 2 and rows > 1
    swapped = {CoreCoord(x, y) for x in range(cols // 2 + 1, cols) for y in range(1, rows)} if split else set()
    for x in range(cols):
        for y in range(rows):
            core = CoreCoord(x, y)
            in0, in1 = (0, 1) if core in swapped else (1, 0)
            assert nocs[("RISCV_1", core)] == in0, f"in0 kernel of core {core}"
            assert nocs[("RISCV_0", core)] == in1, f"in1 kernel of core {core}"


def test_2d_mcast_matmul_swaps_the_right_half_of_the_receivers():
    d = OfflineDevice()
    a, b, out = d.allocate((256, 256), BF16), d.allocate((256, 256), BF16), d.allocate((256, 256), BF16)
    program = matmul_mcast_2d_program(d, a, b, out, per_core_m=2, per_core_n=2, in0_block_w=2, out_subblock_h=1,
                                      out_subblock_w=2)
    _expect_2d_mcast_nocs(_noc_by_core(program), 4, 4)


@pytest.mark.parametrize("grid", [(8, 8), (4, 2), (2, 2)])
def test_example_matmul_takes_the_2d_mcast_factorys_nocs(grid):
    d = OfflineDevice()
    gx, gy = grid
    a, b, c = d.allocate((32 * gy, 64), BF16), d.allocate((64, 32 * gx), BF16), d.allocate((32 * gy, 32 * gx), BF16)
    program = examples.matmul_program(d, a, b, c, grid, k_block=2)
    _expect_2d_mcast_nocs(_noc_by_core(program), gx, gy)
