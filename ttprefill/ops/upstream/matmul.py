"""tt-metal's multi-core matmul (ttnn.matmul without a program config: the plain tiled, interleaved
case), one output tile at a time per core.

Kernels (ttnn 0.81.1, matmul/device/kernels/), as the matmul multi-core factory sets them up (mirrored
from tt-metal's generic-op test of that factory, test_generic_op.cpp):
    dataflow/reader_bmm_8bank_output_tiles_partitioned.cpp   RISCV_1: for each output tile, the Kt tiles
        of A's row and of B's column; compile-time args {last k-tile width, last k-tile height,
        TensorAccessorArgs(A), TensorAccessorArgs(B)}, named args cb_in0 / cb_in1; runtime args
        {A, B, Mt, Kt, Nt, MtKt, KtNt, batch, bcast_B, first output tile, output tiles, MtNt}
    compute/bmm.cpp                                          matmul_tiles over Kt per output tile;
        compile-time args {1, 1, Kt, output tiles of the core}, named args cb_in0 / cb_in1 / cb_out
    eltwise/unary/.../writer_unary_interleaved_start_id.cpp  RISCV_0: compile-time args {c_16,
        TensorAccessorArgs(out)}; runtime args {out, output tiles, first output tile}
CBs c_0 (A's format) and c_1 (B's format) two tiles each, c_16 (the output's format) two tiles; output
tiles split over the grid with split_work_to_cores, cores in column-major order (core i at
(i / grid_y, i % grid_y)); compute config: HiFi4, bf16 DST (the factory's defaults), full DST sync.
Both factories here give the reader ReaderConfigDescriptor and the writer WriterConfigDescriptor: NoC 0 and
NoC 1 on Wormhole.
"""

from __future__ import annotations

from ttprefill.device.program import (
    DRAM_READ_NOC,
    DRAM_WRITE_NOC,
    CircularBuffer,
    ComputeConfig,
    CoreCoord,
    CoreRangeSet,
    Kernel,
    MathFidelity,
    Program,
    Role,
)

from . import kernel_path
from .data_movement import UNARY_WRITER, split_work_to_cores
from .registry import expect_close, register

from ttprefill.hw import TILE

READER = "matmul/device/kernels/dataflow/reader_bmm_8bank_output_tiles_partitioned.cpp"
REUSE_READER = "matmul/device/kernels/dataflow/reader_bmm_tile_layout.cpp"
REUSE_WRITER = "matmul/device/kernels/dataflow/writer_bmm_tile_layout.cpp"
REUSE_COMPUTE = "matmul/device/kernels/compute/bmm_large_block_zm.cpp"
CB_INTERMED0 = 24
COMPUTE = "matmul/device/kernels/compute/bmm.cpp"
CB_IN0, CB_IN1, CB_OUT = 0, 1, 16


def bmm_multicore_program(a, b, out, *, grid: tuple[int, int] = (1, 1),
                          fidelity: MathFidelity = MathFidelity.HiFi4) -> Program:
    """a [batch, M, K] @ b [batch or 1, K, N] -> out [batch, M, N], tiled DeviceTensors; a b of batch 1
    is broadcast over a's batch (bcast_B)."""
    batch = a.num_pages // (a.tiles_h * a.tiles_w)
    mt, kt, nt = a.tiles_h, a.tiles_w, b.tiles_w
    if b.tiles_h != kt or out.tiles_h != mt or out.tiles_w != nt:
        raise ValueError("matmul shapes do not agree")
    b_batch = b.num_pages // (kt * nt)
    if b_batch not in (1, batch):
        raise ValueError("B's batch must be 1 (broadcast) or A's")
    work, first = [], 0
    for core, n in split_work_to_cores(grid, out.num_pages, row_major=False):
        work.append((core, n, first))
        first += n
    cores = CoreRangeSet.of([c for c, _, _ in work])
    cbs = [
        CircularBuffer(CB_IN0, a.data_format, a.page_size, 2, cores),
        CircularBuffer(CB_IN1, b.data_format, b.page_size, 2, cores),
        CircularBuffer(CB_OUT, out.data_format, out.page_size, 2, cores),
    ]
    last_ktile_w = a.shape[-1] % TILE
    last_ktile_h = 0
    bcast_b = int(b_batch == 1 and batch > 1)
    reader = Kernel(
        kernel_path(READER), Role.RISCV_1, cores, [last_ktile_w, last_ktile_h, *a.accessor_args(), *b.accessor_args()],
        named_compile_time_args={"cb_in0": CB_IN0, "cb_in1": CB_IN1},
        runtime_args={c: [a.address, b.address, mt, kt, nt, mt * kt, kt * nt, batch, bcast_b, s, n, mt * nt]
                      for c, n, s in work}, noc=DRAM_READ_NOC)
    writer = Kernel(kernel_path(UNARY_WRITER), Role.RISCV_0, cores, [CB_OUT, *out.accessor_args()],
                    runtime_args={c: [out.address, n, s] for c, n, s in work}, noc=DRAM_WRITE_NOC)
    # One compute kernel per distinct tile count (the factory's two core groups).
    computes = []
    for count in sorted({n for _, n, _ in work}, reverse=True):
        group = CoreRangeSet.of([c for c, n, _ in work if n == count])
        computes.append(Kernel(
            kernel_path(COMPUTE), Role.COMPUTE, group, [1, 1, kt, count],
            named_compile_time_args={"cb_in0": CB_IN0, "cb_in1": CB_IN1, "cb_out": CB_OUT},
            compute_config=ComputeConfig(math_fidelity=fidelity, fp32_dest_acc_en=False)))
    return Program(kernels=[reader, writer, *computes], circular_buffers=cbs, name="upstream_bmm_multicore")


def bmm_multicore_reuse_program(a, b, out, *, per_core_m: int = 2, per_core_n: int = 2, in0_block_w: int = 1,
                                out_subblock_h: int = 2, out_subblock_w: int = 1,
                                fidelity: MathFidelity = MathFidelity.HiFi4) -> Program:
    """tt-metal's matmul multi-core reuse program (matmul_multi_core_reuse): each core computes a
    per_core_m x per_core_n block of output tiles, streaming in0_block_w-wide blocks of A's rows and B's
    columns (reader_bmm_tile_layout.cpp), multiplying out_subblock_h x out_subblock_w sub-blocks with
    partial results spilled to c_24 between K blocks (bmm_large_block_zm.cpp), and writing sub-block by
    sub-block (writer_bmm_tile_layout.cpp). Arguments, CBs (c_0 / c_1 two blocks, c_16 one output block)
    and the core order (block i at (i % 8, i // 8)) follow the factory; the factory fixes the block sizes
    (16 x 16 tiles per core, 4 x 2 sub-blocks, K blocks of 2), which small test shapes cannot use, so they
    are parameters here fed through the same formulas. The factory places c_16 and c_24 in one
    allocation; here they are two CBs of the output's format (the kernel synchronises each on its own)."""
    batch = a.num_pages // (a.tiles_h * a.tiles_w)
    mt, kt, nt = a.tiles_h, a.tiles_w, b.tiles_w
    if mt % per_core_m or nt % per_core_n or kt % in0_block_w or per_core_m % out_subblock_h or per_core_n % out_subblock_w:
        raise ValueError("the blocks must divide the matrix and the sub-blocks the blocks")
    bcast_b = int(b.num_pages // (kt * nt) == 1 and batch > 1)
    blocks_y, blocks_x = mt // per_core_m, nt // per_core_n
    num_blocks = kt // in0_block_w
    in0_num_subblocks, in1_num_subblocks = per_core_m // out_subblock_h, per_core_n // out_subblock_w
    cores, reader_args, writer_args = [], {}, {}
    for i in range(blocks_y * blocks_x):
        y, x = divmod(i, blocks_x)
        core = CoreCoord(i % 8, i // 8)
        cores.append(core)
        reader_args[core] = [a.address, kt * per_core_m * y, 1, kt, in0_block_w, in0_block_w, per_core_m,
                             in0_block_w * per_core_m, b.address, per_core_n * x, 1, nt, in0_block_w * nt, per_core_n,
                             in0_block_w, per_core_n * in0_block_w, num_blocks, mt * kt, kt * nt, batch, bcast_b]
        writer_args[core] = [out.address, x * per_core_n + y * per_core_m * nt, 1, nt, out_subblock_w,
                             out_subblock_h * nt, out_subblock_w, out_subblock_h, out_subblock_w * out_subblock_h,
                             per_core_n // out_subblock_w, per_core_m // out_subblock_h, mt * nt, batch]
    crs = CoreRangeSet.of(cores)
    cbs = [CircularBuffer(CB_IN0, a.data_format, a.page_size, 2 * per_core_m * in0_block_w, crs),
           CircularBuffer(CB_IN1, b.data_format, b.page_size, 2 * per_core_n * in0_block_w, crs),
           CircularBuffer(CB_OUT, out.data_format, out.page_size, per_core_m * per_core_n, crs),
           CircularBuffer(CB_INTERMED0, out.data_format, out.page_size, per_core_m * per_core_n, crs)]
    names = {"cb_in0": CB_IN0, "cb_in1": CB_IN1, "cb_out": CB_OUT, "cb_intermed0": CB_INTERMED0}
    reader = Kernel(kernel_path(REUSE_READER), Role.RISCV_1, crs, [*a.accessor_args(), *b.accessor_args()],
                    named_compile_time_args={"cb_in0": CB_IN0, "cb_in1": CB_IN1}, runtime_args=reader_args,
                    noc=DRAM_READ_NOC)
    writer = Kernel(kernel_path(REUSE_WRITER), Role.RISCV_0, crs, list(out.accessor_args()),
                    named_compile_time_args={"cb_out": CB_OUT}, runtime_args=writer_args, noc=DRAM_WRITE_NOC)
    compute = Kernel(
        kernel_path(REUSE_COMPUTE), Role.COMPUTE, crs,
        [in0_block_w, in0_num_subblocks, out_subblock_h * in0_block_w * in0_num_subblocks, out_subblock_h * in0_block_w,
         in1_num_subblocks, out_subblock_w * in0_block_w * in1_num_subblocks, out_subblock_w * in1_num_subblocks,
         num_blocks, out_subblock_h, out_subblock_w, out_subblock_h * out_subblock_w, batch],
        named_compile_time_args=names,
        compute_config=ComputeConfig(math_fidelity=fidelity, fp32_dest_acc_en=False))
    return Program(kernels=[reader, writer, compute], circular_buffers=cbs, name="upstream_bmm_multicore_reuse")


def _bf16_matmul_check(device, build, shape_a, shape_b, seed) -> dict:
    """Run `build(A, B, out)` on bf16 normals and compare with an fp64 matmul of the same bf16 values."""
    import numpy as np

    from ttprefill.device.program import DataFormat

    rng = np.random.default_rng(seed)
    a = rng.standard_normal(shape_a).astype(np.float32)
    b = rng.standard_normal(shape_b).astype(np.float32)
    A, B = device.upload(a, DataFormat.Float16_b), device.upload(b, DataFormat.Float16_b)
    out_shape = (*shape_a[:-1], shape_b[-1])
    O = device.allocate(out_shape, DataFormat.Float16_b)
    try:
        a16, b16 = device.download(A).astype(np.float64), device.download(B)
        device.run(build(A, B, O))
        return expect_close(a16 @ b16, device.download(O), "out", 0.9999, 6e-3)
    finally:
        for t in (A, B, O):
            device.free(t)


@register("matmul/multicore_b2_m64_k96_n96", "matmul", (READER, COMPUTE, UNARY_WRITER))
def _bmm_multicore(device) -> dict:
    return _bf16_matmul_check(device, lambda A, B, O: bmm_multicore_program(A, B, O, grid=(2, 3)),
                              (2, 64, 96), (2, 96, 96), 1)


@register("matmul/multicore_reuse_b2_m128_k128_n128", "matmul", (REUSE_READER, REUSE_COMPUTE, REUSE_WRITER))
def _bmm_multicore_reuse(device) -> dict:
    return _bf16_matmul_check(device, lambda A, B, O: bmm_multicore_reuse_program(A, B, O, in0_block_w=2),
                              (2, 128, 128), (2, 128, 128), 2)
