"""The Program of one row slab of a projection: tt-metal's 2D-multicast matmul program
(ops/upstream/matmul_mcast.py, the factory's plain DRAM-interleaved case) over tile rows
[first_row, first_row + rows) of x and out.

The factory's kernels address DRAM by tile id through their tensor's accessor (page i of an
interleaved tensor is in bank i % 12), so a slab is the whole-tensor program with the in0 reader's
first tile and the output writers' first tile moved down by the slab's first row: the kernels, their
compile-time args and every stride stay the factory's. The mirror is built for a tensor of the
slab's height at the same DRAM address (the strides it derives only use K and N), then the three
start-tile runtime args are moved; their positions are the factory's runtime-arg layout.
"""

from __future__ import annotations

from dataclasses import replace

from ttprefill.device.program import Program
from ttprefill.device.tensor import DeviceTensor
from ttprefill.ops.upstream.matmul_mcast import IN0_SENDER, IN1_RECEIVER_WRITER, IN1_SENDER_WRITER, matmul_mcast_2d_program

from .planner import LinearPlan

from ttprefill.hw import TILE

# Runtime-arg positions of the start tiles in the factory's layout (matmul_mcast.py builds them), each
# right after the tensor address it offsets (checked before moving, so a changed layout fails loudly):
IN0_SENDER_START_TILE = 1  # [in0 address, in0 start tile, ...]
IN1_SENDER_OUT_START_TILE = 8  # [in1 address, in1 start tile, 4 mcast coords, 0, out address, out start tile, ...]
IN1_RECEIVER_OUT_START_TILE = 3  # [2 sender coords, out address, out start tile, ...]


def _rows_view(t: DeviceTensor, rows: int) -> DeviceTensor:
    """The same DRAM tensor seen as its first `rows` tile rows (for the factory's shape checks)."""
    return DeviceTensor((rows * TILE, t.shape[-1]), t.data_format, t.address, t.device)


def slab_program(device, x: DeviceTensor, w: DeviceTensor, out: DeviceTensor, plan: LinearPlan,
                 first_row: int, rows: int, out_pairs: bool = False,
                 columns: tuple[int, int] | None = None) -> Program:
    """out[first_row : first_row + rows] (tile rows) = x[same rows] @ w, w [K, N] on the device.
    out_pairs: the mirror's variant whose output has half of w's columns (the caller's compute kernel);
    columns: (first tile column of w, tile columns) when the program computes only those (plan.shape's n_out)."""
    shape = plan.shape
    program = matmul_mcast_2d_program(
        device, _rows_view(x, rows), w, _rows_view(out, rows),
        per_core_m=plan.per_core_m, per_core_n=plan.per_core_n, in0_block_w=plan.in0_block_w,
        out_subblock_h=plan.out_subblock_h, out_subblock_w=plan.out_subblock_w,
        fidelity=plan.fidelity, fp32_dest_acc_en=shape.fp32_acc, packer_l1_acc=True, out_pairs=out_pairs,
        columns=columns)
    if first_row:
        in0_shift, out_shift = first_row * x.tiles_w, first_row * out.tiles_w
        shifts = {IN0_SENDER: (IN0_SENDER_START_TILE, in0_shift, x.address),
                  IN1_SENDER_WRITER: (IN1_SENDER_OUT_START_TILE, out_shift, out.address),
                  IN1_RECEIVER_WRITER: (IN1_RECEIVER_OUT_START_TILE, out_shift, out.address)}
        kernels = []
        for k in program.kernels:
            hit = next((v for src, v in shifts.items() if str(k.source).endswith(src)), None)
            if hit is not None:
                index, shift, address = hit
                if any(a[index - 1] != address for a in k.runtime_args.values()):
                    raise RuntimeError(f"{k.name}: the mirrored factory's runtime-arg layout changed (no tensor "
                                       f"address before arg {index}); update linear/program.py's positions")
                k = replace(k, runtime_args={c: a[:index] + [a[index] + shift] + a[index + 1:]
                                             for c, a in k.runtime_args.items()})
            kernels.append(k)
        program = replace(program, kernels=kernels)
    program.name = f"linear_k{shape.k_in}_n{shape.n_out}_rows{first_row}+{rows}"
    program.inputs, program.outputs = {"x": x, "w": w}, {"out": out}
    return program


def linear_programs(device, x: DeviceTensor, w: DeviceTensor, out: DeviceTensor, plan: LinearPlan,
                    out_pairs: bool = False, columns: tuple[int, int] | None = None) -> list[Program]:
    return [slab_program(device, x, w, out, plan, r0, n, out_pairs, columns) for r0, n in plan.slabs()]
