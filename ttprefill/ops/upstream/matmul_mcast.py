"""tt-metal's 2D-multicast matmul (ttnn.matmul with MatmulMultiCoreReuseMultiCastProgramConfig), the plain
case: DRAM-interleaved in0 / in1 / out, no bias, no fused activation, no fused CCL op, no transpose_mcast;
out_block_h/w may split the per-core block (each output block then walks K once more).

One variant of ours, `out_pairs`: the output has half of in1's columns, for a compute kernel that packs one tile
per pair of adjacent in1 tile columns (kernels/linear/swiglu_matmul_compute.cpp: silu(gate) * up). The readers
keep the factory's in1 arguments; the writers get the factory's arguments for the narrower output; the caller
supplies the compute kernel. Its partials still fill the in1-wide block, laid under the output as the factory
lays them, so the core holds one output block (no out_block split).
And `columns`: the program covers a range of in1's tile columns (and the output's matching ones), every stride
still the whole tensors'; only the grid, the last column's padding and the start tiles follow the range.

Mirrored from tenstorrent/tt-metal ttnn/cpp/ttnn/operations/matmul/device/factory/
matmul_multicore_reuse_mcast_2d_program_factory.cpp at commit 0000d49ebfd8 (create_program_mcast_in0_in1),
around the kernels of the pinned ttnn 0.81.1 wheel (matmul/device/kernels/):
    dataflow/reader_bmm_tile_layout_in0_sender_padding.cpp     RISCV_1, left column: reads in0 blocks from
        DRAM and multicasts each along its row
    dataflow/reader_bmm_tile_layout_in0_receiver.cpp           RISCV_1, the other cores
    dataflow/reader_bmm_tile_layout_in1_sender_writer_padding.cpp   RISCV_0, top row: reads in1 blocks,
        multicasts each down its column, writes the core's output
    dataflow/reader_bmm_tile_layout_in1_receiver_writer_padding.cpp RISCV_0, the other cores
    compute/bmm_large_block_zm_fused_bias_activation.cpp       every core with work

Where the wheel's kernels read arguments that revision of the factory does not pass, the values are the
ones that leave the plain path unchanged: in1 sender compile-time arg 32 (compact_output) = 0, the in0
sender's trailing num_batch_compute (read only for a sparse matmul) = the batch, and the named arg
num_active = 0 (not an indexed sparse matmul), which the wheel's comments say every factory passes.

As the factory does, c_5 (partials) is laid over c_4 (output) in one allocation of out_block tiles when
their formats agree (a CB alias); otherwise each has its own.

NoCs as the factory assigns them on Wormhole: the in0 kernels on the preferred DRAM-write NoC (1), the in1
kernels on the preferred DRAM-read NoC (0), except the right half of the receivers, whose kernels swap
(in0 receiver on NoC 0, in1 receiver-writer on NoC 1) so that half of the output writes take the other NoC.
"""

from __future__ import annotations

from ttprefill.device.program import (
    DRAM_READ_NOC,
    DRAM_WRITE_NOC,
    CBAlias,
    CircularBuffer,
    ComputeConfig,
    CoreCoord,
    CoreRangeSet,
    DataFormat,
    Kernel,
    MathFidelity,
    Program,
    Role,
    Semaphore,
)

from . import kernel_path
from .registry import expect_close, register

from ttprefill.hw import TILE

IN0_SENDER = "matmul/device/kernels/dataflow/reader_bmm_tile_layout_in0_sender_padding.cpp"
IN0_RECEIVER = "matmul/device/kernels/dataflow/reader_bmm_tile_layout_in0_receiver.cpp"
IN1_SENDER_WRITER = "matmul/device/kernels/dataflow/reader_bmm_tile_layout_in1_sender_writer_padding.cpp"
IN1_RECEIVER_WRITER = "matmul/device/kernels/dataflow/reader_bmm_tile_layout_in1_receiver_writer_padding.cpp"
COMPUTE = "matmul/device/kernels/compute/bmm_large_block_zm_fused_bias_activation.cpp"
KERNELS = (IN0_SENDER, IN0_RECEIVER, IN1_SENDER_WRITER, IN1_RECEIVER_WRITER, COMPUTE)

# The factory's CB indices (tt::CBIndex): the ones the plain case allocates, and the others it still
# names to the kernels.
CB_IN0, CB_IN1, CB_IN0_SHARDED, CB_BIAS, CB_OUT, CB_INTERM0 = 0, 1, 2, 3, 4, 5
CB_IN0_SPARSITY, CB_IN1_SPARSITY, CB_IN0_INTERMEDIATE, CB_IN1_INTERMEDIATE, CB_IN0_TRANSPOSED = 6, 7, 8, 9, 10
# The factory's in1_noc (preferred_noc_for_dram_read) and in0_noc (preferred_noc_for_dram_write).
IN1_NOC, IN0_NOC = DRAM_READ_NOC, DRAM_WRITE_NOC
# matmul utilities' MCAST_INPUT_BUFFERING_DEPTH: input blocks are double-buffered when there is more than one.
INPUT_BUFFERING = 2
# An absent optional tensor's TensorAccessorArgs (the sparsity placeholders): config word 0.
NULL_ACCESSOR = [0, 0]


def _rect(x0: int, y0: int, x1: int, y1: int) -> list[CoreCoord]:
    return [CoreCoord(x, y) for y in range(y0, y1 + 1) for x in range(x0, x1 + 1)]


def receiver_halves(cols: int, rows: int) -> tuple[list[CoreCoord], list[CoreCoord]]:
    """The cores that receive both inputs (neither in the sender column nor the sender row), split as the
    factory splits them: the left part keeps in0 on IN0_NOC and in1 on IN1_NOC, the right part swaps the
    two. Not exactly half and half: the factory's split (it found this faster for fused QKV and self-out)."""
    split_half = cols > 2 and rows > 1
    half_core = cols // 2 if split_half else cols - 1
    left = _rect(1, 1, half_core, rows - 1) if cols > 1 and rows > 1 else []
    right = _rect(half_core + 1, 1, cols - 1, rows - 1) if split_half else []
    return left, right


def matmul_mcast_2d_program(device, a, b, out, *, per_core_m: int, per_core_n: int, in0_block_w: int,
                            out_subblock_h: int, out_subblock_w: int,
                            out_block_h: int | None = None, out_block_w: int | None = None,
                            fidelity: MathFidelity = MathFidelity.HiFi4, fp32_dest_acc_en: bool = False,
                            packer_l1_acc: bool = True, math_approx_mode: bool = False,
                            out_pairs: bool = False, columns: tuple[int, int] | None = None) -> Program:
    """a [.., M, K] @ b [.., K, N] -> out [.., M, N] (tiled DRAM DeviceTensors, batch 1) on a grid of
    ceil(N / per_core_n) x ceil(M / per_core_m) cores starting at (0, 0), core (x, y) owning output block
    row y, column x. out_block_h / out_block_w default to per_core_m / per_core_n, as the config's do.
    out_pairs: out has half of b's tile columns (see the module doc); per_core_n and out_subblock_w count in1 tiles
    and must be even. columns: (first in1 tile column, tile columns) this program computes (default: all)."""
    mt, kt, b_nt, out_nt = a.tiles_h, a.tiles_w, b.tiles_w, out.tiles_w
    batch = a.num_pages // (mt * kt)
    pair = 2 if out_pairs else 1  # in1 tile columns per output tile column
    col0, nt = columns if columns is not None else (0, b_nt)  # in1 tile columns of this program
    if b.tiles_h != kt or out.tiles_h != mt or out_nt * pair != b_nt:
        raise ValueError("matmul shapes do not agree")
    if col0 < 0 or nt < 1 or col0 + nt > b_nt or col0 % pair or nt % pair:
        raise ValueError(f"columns {columns} must be a range of whole {'pairs of ' if pair > 1 else ''}tile columns "
                         f"inside in1's {b_nt}")
    if out_pairs and (per_core_n % 2 or out_subblock_w % 2 or out_block_h not in (None, per_core_m)
                      or out_block_w not in (None, per_core_n)):
        raise ValueError(f"out_pairs needs an even per_core_n ({per_core_n}) and out_subblock_w ({out_subblock_w}) "
                         "and one output block a core (no out_block_h / out_block_w)")
    if batch != 1 or b.num_pages != kt * b_nt:
        raise ValueError("only the unbatched case is mirrored")
    out_block_h = per_core_m if out_block_h is None else out_block_h
    out_block_w = per_core_n if out_block_w is None else out_block_w
    if per_core_m % out_block_h or per_core_n % out_block_w:
        raise ValueError(f"out_block {out_block_h}x{out_block_w} must divide the per-core block "
                         f"{per_core_m}x{per_core_n}")
    if kt % in0_block_w or out_block_h % out_subblock_h or out_block_w % out_subblock_w:
        raise ValueError("in0_block_w must divide K and the sub-blocks the output block")
    num_blocks = kt // in0_block_w
    bcast_batch = 0

    # Packer L1 accumulation pays off only past two K blocks: the last block spills and reloads anyway.
    packer_l1_acc_en = packer_l1_acc and num_blocks > 2
    if packer_l1_acc_en:
        interm_format = DataFormat.Float32 if fp32_dest_acc_en else DataFormat.Float16_b
    else:
        interm_format = DataFormat.Float32 if fp32_dest_acc_en else out.data_format

    in0_block_h, in1_block_w = out_block_h, out_block_w
    out_num_blocks_y = per_core_m // out_block_h
    out_num_blocks_x = per_core_n // out_block_w
    in0_block_tiles = out_block_h * in0_block_w
    in1_block_tiles = out_block_w * in0_block_w
    depth = INPUT_BUFFERING if batch * num_blocks > 1 else 1
    out_block_tiles = out_block_h * out_block_w
    # What the writers see: the output's columns (half of in1's under out_pairs).
    per_core_n_o, out_block_w_o, out_subblock_w_o = per_core_n // pair, out_block_w // pair, out_subblock_w // pair

    num_blocks_y = (mt - 1) // per_core_m + 1  # rows of cores (M)
    num_blocks_x = (nt - 1) // per_core_n + 1  # columns of cores (N)
    cols, rows = num_blocks_x, num_blocks_y
    all_cores = CoreRangeSet.of(_rect(0, 0, cols - 1, rows - 1))

    # Core roles, as the factory splits them (no transpose_mcast).
    in0_sender = _rect(0, 0, 0, rows - 1)
    in1_sender = _rect(0, 0, cols - 1, 0)
    in0_sender_in1_receiver = _rect(0, 1, 0, rows - 1) if rows > 1 else []
    in0_receiver_in1_sender = _rect(1, 0, cols - 1, 0) if cols > 1 else []
    left_half, other_half = receiver_halves(cols, rows)
    in0_receiver = in0_receiver_in1_sender + left_half
    in1_receiver = in0_sender_in1_receiver + left_half

    # Semaphore ids in the factory's creation order, all starting INVALID (0) on every core.
    in0_sender_sem, in0_receiver_sem, in1_sender_sem, in1_receiver_sem = 0, 1, 2, 3
    semaphores = [Semaphore(i, all_cores, 0) for i in range(4)]

    # Strides (no transpose_a / transpose_b).
    in0_stride_w, in0_stride_h = 1, kt
    in0_next_block_stride = in0_block_w * in0_stride_w
    in0_next_h_dim_block_stride = in0_block_h * in0_stride_h
    in0_start_stride = per_core_m * in0_stride_h
    in1_stride_w, in1_stride_h = 1, b_nt
    in1_next_block_stride = in0_block_w * in1_stride_h
    in1_next_w_dim_block_stride = in1_block_w * in1_stride_w
    in1_start_stride = per_core_n * in1_stride_w

    in0_last_ktile_w = a.shape[-1] % TILE
    in0_sender_ct = [
        in0_stride_w, in0_stride_h, in0_next_block_stride, in0_next_h_dim_block_stride,
        in0_block_w, in0_block_h, out_subblock_h * in0_block_w * (out_block_h // out_subblock_h),
        in0_last_ktile_w, 0,
        0, 0, 0,  # extract_shard_sub_blocks, shard width / height (interleaved: unused)
        num_blocks, out_num_blocks_x, out_num_blocks_y,
        in0_sender_sem, in0_receiver_sem, cols - 1, cols - 1,  # mcast dests and cores exclude the sender
        mt * kt, batch, batch, 0,  # MtKt, in0 batch, in1 batch, reuse in0 in CB
        0, 0, 1, 0,  # sparsity off: batchB, page size, bcast_A, get_batch_from_reader
        0,  # fuse_op (all-gather)
        *a.accessor_args(), *NULL_ACCESSOR,  # in0, sparsity placeholder
        batch,  # num_batch_compute (sparse matmul only)
    ]
    in1_sender_ct = [
        in1_stride_w, in1_stride_h, in1_next_block_stride, in1_next_w_dim_block_stride,
        in1_block_w, in0_block_w, in1_block_w * in0_block_w,
        num_blocks, out_num_blocks_x, out_num_blocks_y,
        in1_sender_sem, in1_receiver_sem, rows - 1, rows - 1,
        kt * b_nt, batch, bcast_batch,
        0, 0,  # sparsity off
        # writer
        1, out_nt, out_subblock_w_o, out_subblock_h * out_nt, out_block_w_o, out_block_h * out_nt,
        out_subblock_w_o, out_subblock_h, out_subblock_w_o * out_subblock_h,
        mt * out_nt,
        0,  # in3 (bias) stride placeholder
        0, 0,  # fused all-gather / reduce-scatter
        0,  # compact_output
        *b.accessor_args(), *NULL_ACCESSOR, *out.accessor_args(),
    ]
    in0_receiver_ct = [in0_block_w * in0_block_h, num_blocks, out_num_blocks_x, out_num_blocks_y,
                       in0_sender_sem, in0_receiver_sem, batch, 0]
    in1_receiver_ct = [
        in1_block_w * in0_block_w, num_blocks, out_num_blocks_x, out_num_blocks_y,
        in1_sender_sem, in1_receiver_sem, batch,
        1, out_nt, out_subblock_w_o, out_subblock_h * out_nt, out_block_w_o, out_block_h * out_nt,
        out_subblock_w_o, out_subblock_h, out_subblock_w_o * out_subblock_h,
        mt * out_nt,
        0,  # bias block width placeholder
        0,  # fused reduce-scatter
        *out.accessor_args(),
    ]

    # Last row / column parameters (padding when M or N is not a multiple of the per-core block).
    out_tile = out.page_size
    last_per_core_m = mt % per_core_m or per_core_m
    last_per_core_n = nt % per_core_n or per_core_n
    last_out_block_h = last_per_core_m % out_block_h or out_block_h
    last_out_block_w = last_per_core_n % out_block_w or out_block_w
    last_out_num_blocks_h = (last_per_core_m - 1) // out_block_h + 1
    last_out_num_blocks_w = (last_per_core_n - 1) // out_block_w + 1
    last_nz_sub_h = (last_out_block_h - 1) // out_subblock_h + 1
    last_nz_sub_w = (last_out_block_w - 1) // out_subblock_w + 1
    last_sub_h = last_out_block_h % out_subblock_h or out_subblock_h
    # the writers' (output columns): under out_pairs each is half its in1 count
    last_sub_w = (last_out_block_w % out_subblock_w or out_subblock_w) // pair
    last_addr_skip = out_tile * (out_subblock_w_o - last_sub_w)
    last_w_skip = out_subblock_w_o * out_subblock_h * (out_block_w // out_subblock_w - last_nz_sub_w)
    last_h_skip = (out_block_h // out_subblock_h - last_nz_sub_h) * (out_block_w_o * out_subblock_h)
    sub_h, sub_w = out_block_h // out_subblock_h, out_block_w // out_subblock_w

    noc = device.worker_noc_coord
    in0_sender_rt, in0_receiver_rt, in1_sender_rt, in1_receiver_rt = {}, {}, {}, {}
    for core in _rect(0, 0, cols - 1, rows - 1):
        in0_idx, in1_idx = core.y, core.x
        left, left1 = noc(CoreCoord(0, core.y)), noc(CoreCoord(1, core.y))
        right = noc(CoreCoord(cols - 1, core.y))
        top, top1 = noc(CoreCoord(core.x, 0)), noc(CoreCoord(core.x, 1))
        bottom = noc(CoreCoord(core.x, rows - 1))
        # in0 multicasts on NoC 1 (Wormhole's preferred DRAM-write NoC), which names a rectangle from
        # its high corner; in1 on NoC 0 from its low one.
        in0_start, in0_end = right, left1
        in1_start, in1_end = top1, bottom
        last_row, last_col = in0_idx == rows - 1, in1_idx == cols - 1
        if in1_idx == 0:
            in0_sender_rt[core] = [a.address, in0_start_stride * in0_idx, *in0_start, *in0_end,
                                   last_out_block_h if last_row else out_block_h, 0]
        else:
            in0_receiver_rt[core] = [*left]
        out_start = col0 // pair + in1_idx * per_core_n_o + in0_idx * per_core_m * out_nt
        if in0_idx == 0:
            # the first is the in1 reader's (its valid tiles in the last column), the rest the writer's
            if last_col:
                padding = [last_out_block_w, sub_h, out_subblock_h, 0, sub_w, last_nz_sub_w, last_sub_w,
                           last_addr_skip, last_w_skip]
            else:
                padding = [out_block_w, sub_h, out_subblock_h, 0, sub_w, sub_w, out_subblock_w_o, 0, 0]
            in1_sender_rt[core] = [b.address, col0 + in1_start_stride * in1_idx, *in1_start, *in1_end, 0,
                                   out.address, out_start, *padding, 0, 0,  # bias address / start tile
                                   last_out_num_blocks_w if last_col else out_num_blocks_x]
        else:
            h = [sub_h, last_nz_sub_h, last_sub_h, last_h_skip] if last_row else [sub_h, sub_h, out_subblock_h, 0]
            w = [sub_w, last_nz_sub_w, last_sub_w, last_addr_skip, last_w_skip] if last_col else \
                [sub_w, sub_w, out_subblock_w_o, 0, 0]
            nblocks = [last_out_num_blocks_h if last_row else out_num_blocks_y,
                       last_out_num_blocks_w if last_col else out_num_blocks_x]
            in1_receiver_rt[core] = [*top, out.address, out_start, *h, *w, *nblocks]

    defines = {"PACKER_L1_ACC": "1"} if packer_l1_acc_en else {}
    if fp32_dest_acc_en:
        defines["FP32_DEST_ACC_EN"] = "1"
    in0_sender_defines = {} if in0_receiver else {"SKIP_MCAST": "1"}
    in1_sender_defines = {} if in1_receiver else {"SKIP_MCAST": "1"}

    def pick(rt, cores):
        return {c: rt[c] for c in cores}

    kernels = [
        Kernel(kernel_path(IN0_SENDER), Role.RISCV_1, CoreRangeSet.of(in0_sender), in0_sender_ct,
               named_compile_time_args={"cb_in0": CB_IN0, "cb_in0_sharded": CB_IN0_SHARDED,
                                        "cb_sparsity": CB_IN0_SPARSITY, "cb_in0_intermediate": CB_IN0_INTERMEDIATE,
                                        "num_active": 0},
               defines=in0_sender_defines, runtime_args=in0_sender_rt, noc=IN0_NOC),
        Kernel(kernel_path(IN1_SENDER_WRITER), Role.RISCV_0, CoreRangeSet.of(in1_sender), in1_sender_ct,
               named_compile_time_args={"cb_in1": CB_IN1, "cb_bias": CB_BIAS, "cb_out": CB_OUT,
                                        "cb_sparsity": CB_IN1_SPARSITY, "cb_in1_intermediate": CB_IN1_INTERMEDIATE,
                                        "num_active": 0},
               defines=in1_sender_defines, runtime_args=in1_sender_rt, noc=IN1_NOC),
    ]
    in1_receiver_names = {"cb_in1": CB_IN1, "cb_bias": CB_BIAS, "cb_out": CB_OUT}
    # One receiver kernel pair per half (the factory's two NoC setups; same args and sources, NoCs swapped
    # on the other half).
    for half_in0, half_in1, in0_noc, in1_noc in ((in0_receiver, in1_receiver, IN0_NOC, IN1_NOC),
                                                 (other_half, other_half, IN1_NOC, IN0_NOC)):
        if half_in1:
            kernels.append(Kernel(kernel_path(IN1_RECEIVER_WRITER), Role.RISCV_0, CoreRangeSet.of(half_in1),
                                  in1_receiver_ct, named_compile_time_args=in1_receiver_names,
                                  runtime_args=pick(in1_receiver_rt, half_in1), noc=in1_noc))
        if half_in0:
            kernels.append(Kernel(kernel_path(IN0_RECEIVER), Role.RISCV_1, CoreRangeSet.of(half_in0),
                                  in0_receiver_ct, named_compile_time_args={"cb_in0": CB_IN0},
                                  runtime_args=pick(in0_receiver_rt, half_in0), noc=in0_noc))

    in0_num_subblocks = out_block_h // out_subblock_h
    in1_num_subblocks = out_block_w // out_subblock_w
    compute_ct = [
        in0_block_w, in0_num_subblocks, out_subblock_h * in0_block_w * in0_num_subblocks, out_subblock_h * in0_block_w,
        in1_num_subblocks, out_subblock_w * in0_block_w * in1_num_subblocks, out_subblock_w * in1_num_subblocks,
        num_blocks, out_num_blocks_x, out_num_blocks_y,
        out_subblock_h, out_subblock_w, out_subblock_h * out_subblock_w, batch, out_block_tiles,
        0, 0, 0,  # untilize_out, get_batch_from_reader, in0_transpose_tile
    ]
    kernels.append(Kernel(
        kernel_path(COMPUTE), Role.COMPUTE, all_cores, compute_ct,
        named_compile_time_args={"cb_in0": CB_IN0, "cb_in1": CB_IN1, "cb_bias": CB_BIAS, "cb_out": CB_OUT,
                                 "cb_intermed0": CB_INTERM0, "cb_in0_intermediate": CB_IN0_INTERMEDIATE,
                                 "cb_in1_intermediate": CB_IN1_INTERMEDIATE, "cb_in0_transposed": CB_IN0_TRANSPOSED},
        defines=defines,
        compute_config=ComputeConfig(math_fidelity=fidelity, fp32_dest_acc_en=fp32_dest_acc_en,
                                     math_approx_mode=math_approx_mode)))

    cbs = [
        CircularBuffer(CB_IN0, a.data_format, a.page_size, in0_block_tiles * depth, all_cores),
        CircularBuffer(CB_IN1, b.data_format, b.page_size, in1_block_tiles * depth, all_cores),
    ]
    if interm_format == out.data_format:
        # One allocation of an output block: the last K block's reload reads each sub-block of partials
        # just before the pack of the final values overwrites it in place.
        cbs.append(CircularBuffer(CB_OUT, out.data_format, out.page_size, out_block_tiles, all_cores,
                                  aliases=(CBAlias(CB_INTERM0, interm_format, out.page_size),)))
    else:
        cbs += [CircularBuffer(CB_OUT, out.data_format, out.page_size, out_block_tiles // pair, all_cores),
                CircularBuffer(CB_INTERM0, interm_format, interm_format.tile_bytes, out_block_tiles, all_cores)]
    return Program(kernels=kernels, circular_buffers=cbs, semaphores=semaphores, name="upstream_matmul_mcast_2d")


def _mcast_check(device, in1_format: DataFormat, seed: int) -> dict:
    """2 x 2 grid of 2 x 2-tile blocks, K of 8 tiles in blocks of 2 (so packer L1 accumulation is on)."""
    import numpy as np

    rng = np.random.default_rng(seed)
    a = rng.standard_normal((128, 256)).astype(np.float32)
    b = rng.standard_normal((256, 128)).astype(np.float32)
    A, B = device.upload(a, DataFormat.Float16_b), device.upload(b, in1_format)
    O = device.allocate((128, 128), DataFormat.Float16_b)
    try:
        ref = device.download(A).astype(np.float64) @ device.download(B).astype(np.float64)
        device.run(matmul_mcast_2d_program(device, A, B, O, per_core_m=2, per_core_n=2, in0_block_w=2,
                                           out_subblock_h=1, out_subblock_w=2))
        return expect_close(ref, device.download(O), "out", 0.9999, 6e-3)
    finally:
        for t in (A, B, O):
            device.free(t)


@register("matmul/mcast_2d_m128_k256_n128_bf16", "matmul", KERNELS)
def _mcast_bf16(device) -> dict:
    return _mcast_check(device, DataFormat.Float16_b, 3)


@register("matmul/mcast_2d_m128_k256_n128_bfp8_in1", "matmul", KERNELS)
def _mcast_bfp8(device) -> dict:
    return _mcast_check(device, DataFormat.Bfp8_b, 4)
