"""tt-metal's binary_ng element-wise program (ttnn.add / ttnn.subtract / ttnn.multiply of two tiled,
interleaved tensors of equal height and width; either may have size 1 in a batch dimension, which the
readers broadcast by a zero stride).

Kernels (ttnn 0.81.1, eltwise/binary_ng/device/), as binary_ng's program factory sets them up for this
case (no sharding, no activations, FPU op):
    kernels_ng/dataflow/reader_interleaved_no_bcast.cpp   RISCV_1: reads a tile of A into c_0 and of B into
        c_1 per output tile; compile-time args {TensorAccessorArgs(A), TensorAccessorArgs(B), has_sharding=0};
        runtime args {A, first output tile, A tiles, output tiles, shard width 0, A's nD/d/n/c strides, D, N,
        C, Ht, Wt, collapsed dims, B, B's nD/d/n/c strides, B tiles, A's row tiles, B's row tiles}
    kernels/compute/eltwise_binary_no_bcast.cpp            {add,sub,mul}_tiles; compile-time arg
        num_tiles_per_cycle = 1, runtime arg = output tiles; defines BINARY_OP, BINARY_OP_TYPE and empty
        PROCESS_{LHS,RHS,POST}_ACTIVATIONS(i)
    kernels_ng/dataflow/writer_interleaved_no_bcast.cpp   RISCV_0: c_2 to the output; compile-time args
        {TensorAccessorArgs(C), has_sharding=0}; runtime args {C, first tile, tiles, shard width 0, D, N, C,
        Ht, Wt, collapsed dims}
CBs c_0, c_1, c_2 of two tiles each in the tensors' formats; defines SRC_SHARDED=0, SRC_SHARDED_B=0,
DST_SHARDED=0; output tiles split with split_work_to_cores (row-major cores); compute config HiFi4 with
fp32 DST when the output is Float32. The reader on NoC 0 and the writer on NoC 1, as the factory's
ReaderDataMovementConfig / WriterDataMovementConfig put them on Wormhole.
"""

from __future__ import annotations

from ttprefill.device.program import (
    DRAM_READ_NOC,
    DRAM_WRITE_NOC,
    CircularBuffer,
    ComputeConfig,
    CoreRangeSet,
    DataFormat,
    Kernel,
    MathFidelity,
    Program,
    Role,
)

from . import kernel_path
from .data_movement import split_work_to_cores
from .registry import ConformanceError, register

KDIR = "eltwise/binary_ng/device/"
READER = KDIR + "kernels_ng/dataflow/reader_interleaved_no_bcast.cpp"
WRITER = KDIR + "kernels_ng/dataflow/writer_interleaved_no_bcast.cpp"
COMPUTE = KDIR + "kernels/compute/eltwise_binary_no_bcast.cpp"
CB_A, CB_B, CB_OUT = 0, 1, 2
CB_B_BCAST = 6  # the compute kernel's broadcast copy of B (cb_llk_post when B is the broadcast input)
OPS = {"add": "ADD", "sub": "SUB", "mul": "MUL"}
# B broadcast over A's tiles: B's column 0 repeated across each row (col), B's row 0 down each column
# (row), or B's [0][0] everywhere (scalar); the factory picks the kernels_ng reader and compute kernel.
BCASTS = ("col", "row", "scalar")


def _dims4(t) -> tuple[int, int, int, int]:
    """(N, C, Ht, Wt) of a tensor of rank 2 to 4."""
    lead = list(t.shape[:-2])
    if len(lead) > 2:
        raise ValueError("binary_ng mirror: rank up to 4")
    lead = [1] * (2 - len(lead)) + lead
    return lead[0], lead[1], t.tiles_h, t.tiles_w


def _strides(t) -> tuple[int, int, int, int]:
    """nD, d, n and c strides in tiles; 0 along a dimension of size 1 (broadcast)."""
    n, c, ht, wt = _dims4(t)
    return 0, 0, ht * wt * c * (n > 1), ht * wt * (c > 1)


def binary_ng_program(a, b, out, op: str, *, grid: tuple[int, int] = (1, 1), relu: bool = False) -> Program:
    """relu: a ReLU activation after the op, which the factory fuses into the packer (PACK_RELU) when it
    is the only activation."""
    if op not in OPS:
        raise ValueError(f"op must be one of {sorted(OPS)}")
    n, c, ht, wt = _dims4(out)
    for t in (a, b):
        tn, tc, tht, twt = _dims4(t)
        if (tht, twt) != (ht, wt) or tn not in (1, n) or tc not in (1, c):
            raise ValueError("A and B must match the output's tiles, or have size 1 in a batch dimension")
    work, first = [], 0
    for core, k in split_work_to_cores(grid, out.num_pages, row_major=True):
        work.append((core, k, first))
        first += k
    cores = CoreRangeSet.of([w[0] for w in work])
    cbs = [CircularBuffer(CB_A, a.data_format, a.page_size, 2, cores),
           CircularBuffer(CB_B, b.data_format, b.page_size, 2, cores),
           CircularBuffer(CB_OUT, out.data_format, out.page_size, 2, cores)]
    sa, sb = _strides(a), _strides(b)
    d, cnd = 1, 1
    reader = Kernel(
        kernel_path(READER), Role.RISCV_1, cores, [*a.accessor_args(), *b.accessor_args(), 0],
        defines={"SRC_SHARDED": "0", "SRC_SHARDED_B": "0"},
        runtime_args={core: [a.address, s, a.num_pages, k, 0, *sa, d, n, c, ht, wt, cnd,
                             b.address, *sb, b.num_pages, wt, wt] for core, k, s in work}, noc=DRAM_READ_NOC)
    writer = Kernel(
        kernel_path(WRITER), Role.RISCV_0, cores, [*out.accessor_args(), 0], defines={"DST_SHARDED": "0"},
        runtime_args={core: [out.address, s, k, 0, d, n, c, ht, wt, cnd] for core, k, s in work}, noc=DRAM_WRITE_NOC)
    defines = {"BINARY_OP": f"{op}_tiles", "BINARY_OP_TYPE": f"EltwiseBinaryType::ELW{OPS[op]}",
               "PROCESS_LHS_ACTIVATIONS(i)": "", "PROCESS_RHS_ACTIVATIONS(i)": "",
               "PROCESS_POST_ACTIVATIONS(i)": ""}
    if relu:
        defines["PACK_RELU"] = "1"
    fp32 = out.data_format == DataFormat.Float32
    compute = Kernel(kernel_path(COMPUTE), Role.COMPUTE, cores, [1], defines=defines,
                     runtime_args={core: [k] for core, k, _ in work},
                     compute_config=ComputeConfig(math_fidelity=MathFidelity.HiFi4, fp32_dest_acc_en=fp32))
    return Program(kernels=[reader, writer, compute], circular_buffers=cbs, name=f"upstream_binary_ng_{op}")


def binary_ng_bcast_program(a, b, out, op: str, bcast: str, *, grid: tuple[int, int] = (1, 1)) -> Program:
    """A op broadcast(B) for one [H, W] matrix: B is [H, 32] (col), [32, W] (row) or [32, 32] (scalar).

    As binary_ng's factory sets up a broadcast B (SRC_BCAST_B=1, BCAST_INPUT=1, BCAST_LLK=1: the compute
    kernel broadcasts B with unary_bcast into c_6 instead of the reader filling the tile):
    kernels_ng/dataflow/reader_interleaved_{bcast}_bcast.cpp (args as the no-broadcast reader's, without
    the row widths), kernels_ng/compute/eltwise_binary_{bcast}_bcast.cpp (runtime args: output tiles, and
    for col / scalar the tiles per B tile and the first tile's position among them), and the no-broadcast
    writer. CB c_6 holds the broadcast B tile, in B's format."""
    if op not in OPS or bcast not in BCASTS:
        raise ValueError(f"op in {sorted(OPS)}, bcast in {BCASTS}")
    n, c, ht, wt = _dims4(out)
    if (n, c) != (1, 1):
        raise ValueError("binary_ng_bcast_program mirrors a single matrix")
    bht, bwt = b.tiles_h, b.tiles_w
    if (bht, bwt) != {"col": (ht, 1), "row": (1, wt), "scalar": (1, 1)}[bcast]:
        raise ValueError(f"B's shape does not fit a {bcast} broadcast")
    work, first = [], 0
    for core, k in split_work_to_cores(grid, out.num_pages, row_major=True):
        work.append((core, k, first))
        first += k
    cores = CoreRangeSet.of([w[0] for w in work])
    cbs = [CircularBuffer(CB_A, a.data_format, a.page_size, 2, cores),
           CircularBuffer(CB_B, b.data_format, b.page_size, 2, cores),
           CircularBuffer(CB_OUT, out.data_format, out.page_size, 2, cores),
           CircularBuffer(CB_B_BCAST, b.data_format, b.page_size, 1, cores)]
    flags = {"SRC_SHARDED": "0", "SRC_SHARDED_B": "0", "SRC_BCAST": "0", "SRC_BCAST_B": "1", "BCAST_LLK": "1"}
    reader = Kernel(
        kernel_path(KDIR + f"kernels_ng/dataflow/reader_interleaved_{bcast}_bcast.cpp"), Role.RISCV_1, cores,
        [*a.accessor_args(), *b.accessor_args(), 0], defines=dict(flags),
        runtime_args={core: [a.address, s, a.num_pages, k, 0, *_strides(a), 1, n, c, ht, wt, 1,
                             b.address, *_strides(b), b.num_pages] for core, k, s in work}, noc=DRAM_READ_NOC)
    writer = Kernel(
        kernel_path(WRITER), Role.RISCV_0, cores, [*out.accessor_args(), 0], defines={"DST_SHARDED": "0"},
        runtime_args={core: [out.address, s, k, 0, 1, n, c, ht, wt, 1] for core, k, s in work}, noc=DRAM_WRITE_NOC)
    freq = {"col": wt, "row": 1, "scalar": ht * wt}[bcast]
    args = {core: [k, freq, s % freq] if bcast != "row" else [k] for core, k, s in work}
    defines = {"BINARY_OP": f"{op}_tiles", "BINARY_OP_TYPE": f"EltwiseBinaryType::ELW{OPS[op]}",
               "PROCESS_LHS_ACTIVATIONS(i)": "", "PROCESS_RHS_ACTIVATIONS(i)": "",
               "PROCESS_POST_ACTIVATIONS(i)": "", "BCAST_INPUT": "1", **flags}
    fp32 = out.data_format == DataFormat.Float32
    compute = Kernel(kernel_path(KDIR + f"kernels_ng/compute/eltwise_binary_{bcast}_bcast.cpp"), Role.COMPUTE, cores,
                     [1], defines=defines, runtime_args=args,
                     compute_config=ComputeConfig(math_fidelity=MathFidelity.HiFi4, fp32_dest_acc_en=fp32))
    return Program(kernels=[reader, writer, compute], circular_buffers=cbs,
                   name=f"upstream_binary_ng_{op}_{bcast}_bcast")


def _bf16_exact_check(device, build, a, b, wide_b, fn) -> dict:
    """bf16 in and out: the FPU's result rounded once must equal numpy's fp64 result rounded to bf16."""
    import numpy as np

    A, B = device.upload(a, DataFormat.Float16_b), device.upload(b, DataFormat.Float16_b)
    O = device.allocate(a.shape, DataFormat.Float16_b)
    try:
        a16, b16 = device.download(A).astype(np.float64), device.download(B).astype(np.float64)
        device.run(build(A, B, O))
        out = device.download(O)
        ref = device.download(device.upload(fn(a16, wide_b(b16)).astype(np.float32), DataFormat.Float16_b))
        mismatches = int(np.count_nonzero(out != ref))
        if mismatches:
            raise ConformanceError(f"{mismatches} of {out.size} values differ from the bf16-rounded reference")
        return {"exact": True}
    finally:
        for t in (A, B, O):
            device.free(t)


@register("eltwise/binary_ng_add_bf16_b2x2_64x96", "eltwise", (READER, COMPUTE, WRITER))
def _binary_add(device) -> dict:
    import numpy as np

    rng = np.random.default_rng(1)
    a, b = rng.standard_normal((2, 2, 64, 96)).astype(np.float32), rng.standard_normal((2, 2, 64, 96)).astype(np.float32)
    return _bf16_exact_check(device, lambda A, B, O: binary_ng_program(A, B, O, "add", grid=(2, 2)), a, b,
                             lambda x: x, np.add)


@register("eltwise/binary_ng_mul_col_bcast_bf16_64x96", "eltwise",
          (KDIR + "kernels_ng/dataflow/reader_interleaved_col_bcast.cpp",
           KDIR + "kernels_ng/compute/eltwise_binary_col_bcast.cpp", WRITER))
def _binary_mul_col_bcast(device) -> dict:
    import numpy as np

    rng = np.random.default_rng(2)
    a, b = rng.standard_normal((64, 96)).astype(np.float32), rng.standard_normal((64, 32)).astype(np.float32)
    return _bf16_exact_check(device, lambda A, B, O: binary_ng_bcast_program(A, B, O, "mul", "col", grid=(2, 1)), a, b,
                             lambda x: np.repeat(x[:, :1], 96, axis=1), np.multiply)
