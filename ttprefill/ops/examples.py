"""Two example programs that exercise the whole simulator path on several cores:

* a tiled matmul on a grid of cores that reuses input blocks across cores: the first core of each
  grid row multicasts A blocks along the row, the first core of each column multicasts B blocks
  down the column, with semaphores for the hand-shake (tt-metal's 2D multicast matmul scheme);
* a row softmax: reduce max, subtract, exp, reduce sum, reciprocal, broadcast multiply.
"""

from __future__ import annotations

import numpy as np

from ttprefill.device.jit import KERNELS_DIR
from ttprefill.device.program import (
    DRAM_READ_NOC,
    DRAM_WRITE_NOC,
    CircularBuffer,
    ComputeConfig,
    CoreCoord,
    CoreRange,
    CoreRangeSet,
    DataFormat,
    Kernel,
    MathFidelity,
    Program,
    ProgramError,
    Role,
    Semaphore,
)
from ttprefill.device.tensor import DeviceTensor
from ttprefill.ops.upstream.matmul_mcast import IN0_NOC, IN1_NOC, receiver_halves

EXAMPLES = KERNELS_DIR / "examples"
SEM_IN0_READY, SEM_IN0_VALID, SEM_IN1_READY, SEM_IN1_VALID = 0, 1, 2, 3


def _largest_divisor_at_most(n: int, limit: int) -> int:
    return max(d for d in range(1, min(n, limit) + 1) if n % d == 0)


def matmul_program(device, a: DeviceTensor, b: DeviceTensor, c: DeviceTensor, grid: tuple[int, int] = (2, 2), *,
                   k_block: int = 2, fidelity: MathFidelity = MathFidelity.HiFi4,
                   fp32_dest: bool = True) -> Program:
    """C = A @ B on a gx x gy grid; A is [M, K], B is [K, N], all tiled."""
    m, k = a.shape[-2:]
    k2, n = b.shape[-2:]
    if k != k2 or tuple(c.shape[-2:]) != (m, n):
        raise ProgramError(f"matmul shapes disagree: A {a.shape}, B {b.shape}, C {c.shape}")
    mt, kt, nt = a.tiles_h, a.tiles_w, b.tiles_w
    gx, gy = grid
    if mt % gy or nt % gx:
        raise ProgramError(f"{mt} tile rows / {nt} tile columns do not split over a {gx}x{gy} grid")
    if kt % k_block:
        raise ProgramError(f"K of {kt} tiles is not a multiple of k_block={k_block}")
    mb, nb, kb = mt // gy, nt // gx, k_block
    capacity = 4 if fp32_dest else 8
    sub_w = _largest_divisor_at_most(nb, capacity)
    sub_h = _largest_divisor_at_most(mb, capacity // sub_w)
    num_kb = kt // kb
    partial_fmt = DataFormat.Float32 if fp32_dest else DataFormat.Float16_b

    cores = CoreRangeSet((CoreRange(CoreCoord(0, 0), CoreCoord(gx - 1, gy - 1)),))
    cbs = [
        CircularBuffer(0, a.data_format, a.page_size, 2 * mb * kb, cores),
        CircularBuffer(1, b.data_format, b.page_size, 2 * kb * nb, cores),
        # Partial sums between k blocks: fp32 when DST accumulates in fp32, else bf16 (as DST holds).
        CircularBuffer(24, partial_fmt, partial_fmt.tile_bytes, mb * nb, cores),
        CircularBuffer(16, c.data_format, c.page_size, 2 * sub_h * sub_w, cores),
    ]
    compute = Kernel(EXAMPLES / "matmul_compute.cpp", Role.COMPUTE, cores, [num_kb, kb, mb, nb, sub_h, sub_w],
                     compute_config=ComputeConfig(fidelity, fp32_dest))
    in0_args, in1_args = {}, {}
    for core in cores.cores():
        x, y = core.x, core.y
        row_sender = device.worker_noc_coord(CoreCoord(0, y))
        col_sender = device.worker_noc_coord(CoreCoord(x, 0))
        row_lo = device.worker_noc_coord(CoreCoord(1 if gx > 1 else 0, y))
        row_hi = device.worker_noc_coord(CoreCoord(gx - 1, y))
        col_lo = device.worker_noc_coord(CoreCoord(x, 1 if gy > 1 else 0))
        col_hi = device.worker_noc_coord(CoreCoord(x, gy - 1))
        # in0 multicasts on IN0_NOC (1), which names a rectangle from the high corner to the low one; in1 on
        # IN1_NOC (0), from low to high. Only senders multicast, and no sender is among the swapped receivers.
        in0_args[core] = [a.address, kt, num_kb, kb, mb, y * mb, int(x == 0), *row_sender, *row_hi, *row_lo,
                          gx - 1 if x == 0 else 0, SEM_IN0_READY, SEM_IN0_VALID]
        in1_args[core] = [b.address, c.address, nt, num_kb, kb, nb, x * nb, int(y == 0), *col_sender, *col_lo,
                          *col_hi, gy - 1 if y == 0 else 0, SEM_IN1_READY, SEM_IN1_VALID, mb, y * mb, sub_h, sub_w]
    # NoCs as tt-metal's 2D-multicast matmul factory assigns them (ops/upstream/matmul_mcast.py): in0 on
    # IN0_NOC, in1 (which also writes C) on IN1_NOC, swapped on the right part of the receivers so that
    # half of the output writes take the other NoC.
    swapped = set(receiver_halves(gx, gy)[1])
    kept = [core for core in cores.cores() if core not in swapped]
    dataflow = []
    for group, in0_noc, in1_noc in ((kept, IN0_NOC, IN1_NOC), (sorted(swapped), IN1_NOC, IN0_NOC)):
        if not group:
            continue
        group_cores = CoreRangeSet.of(group)
        dataflow.append(Kernel(EXAMPLES / "matmul_in0_reader.cpp", Role.RISCV_1, group_cores, a.accessor_args(),
                               runtime_args={core: in0_args[core] for core in group}, noc=in0_noc))
        dataflow.append(Kernel(EXAMPLES / "matmul_in1_writer.cpp", Role.RISCV_0, group_cores,
                               b.accessor_args() + c.accessor_args(),
                               runtime_args={core: in1_args[core] for core in group}, noc=in1_noc))
    sems = [Semaphore(i, cores, 0) for i in (SEM_IN0_READY, SEM_IN0_VALID, SEM_IN1_READY, SEM_IN1_VALID)]
    return Program([*dataflow, compute], cbs, sems, inputs={"a": a, "b": b}, outputs={"c": c},
                   name=f"matmul_{m}x{k}x{n}_{gx}x{gy}")


def matmul(device, a: np.ndarray, b: np.ndarray, grid=(2, 2), *, fmt=DataFormat.Float16_b, **kw) -> np.ndarray:
    ta, tb = device.upload(a, fmt), device.upload(b, fmt)
    tc = device.allocate((a.shape[0], b.shape[1]), fmt)
    try:
        device.run(matmul_program(device, ta, tb, tc, grid, **kw))
        return device.download(tc)
    finally:
        for t in (ta, tb, tc):
            device.free(t)


def softmax_program(device, x: DeviceTensor, out: DeviceTensor, num_cores: int = 2) -> Program:
    """Row softmax of x [R, C] (C a multiple of 32; R padded rows are computed and ignored)."""
    if x.shape != out.shape:
        raise ProgramError(f"softmax input {x.shape} and output {out.shape} differ")
    if x.shape[-1] % 32:
        raise ProgramError("softmax needs the row length to be a multiple of 32 (no column masking)")
    rows, ct = x.tiles_h, x.tiles_w
    num_cores = min(num_cores, rows)
    cores = CoreRangeSet.of([(i % 8, i // 8) for i in range(num_cores)])
    tile = x.page_size
    cbs = [
        CircularBuffer(0, x.data_format, tile, 2 * ct, cores),
        CircularBuffer(1, DataFormat.Float16_b, DataFormat.Float16_b.tile_bytes, 1, cores),  # scaler of ones
        CircularBuffer(16, out.data_format, out.page_size, 2 * ct, cores),
        CircularBuffer(24, DataFormat.Float32, 4096, 1, cores),  # row max
        CircularBuffer(25, DataFormat.Float32, 4096, ct, cores),  # exp(x - max)
        CircularBuffer(26, DataFormat.Float32, 4096, 1, cores),  # 1 / row sum
    ]
    # Reader on the DRAM-read NoC, writer on the DRAM-write NoC, as tt-metal's factories configure theirs.
    reader = Kernel(EXAMPLES / "softmax_reader.cpp", Role.RISCV_1, cores, x.accessor_args(), noc=DRAM_READ_NOC)
    compute = Kernel(EXAMPLES / "softmax_compute.cpp", Role.COMPUTE, cores, [ct],
                     compute_config=ComputeConfig(MathFidelity.HiFi4, True))
    writer = Kernel(EXAMPLES / "softmax_writer.cpp", Role.RISCV_0, cores, out.accessor_args(), noc=DRAM_WRITE_NOC)
    per_core = -(-rows // num_cores)
    for i, core in enumerate(cores.cores()):
        first = i * per_core
        count = max(0, min(rows, first + per_core) - first)
        reader.runtime_args[core] = [x.address, first, count, ct]
        compute.runtime_args[core] = [count]
        writer.runtime_args[core] = [out.address, first, count, ct]
    return Program([reader, compute, writer], cbs, [], inputs={"x": x}, outputs={"out": out},
                   name=f"softmax_{x.shape[0]}x{x.shape[1]}")


def softmax(device, x: np.ndarray, num_cores: int = 2, fmt=DataFormat.Float16_b) -> np.ndarray:
    tx = device.upload(x, fmt)
    to = device.allocate(x.shape, fmt)
    try:
        device.run(softmax_program(device, tx, to, num_cores))
        return device.download(to)
    finally:
        device.free(tx)
        device.free(to)


# ---- representative shapes for the checks against the real ttnn (tests/host)
from ttprefill.ops.registry import build_device, register  # noqa: E402


@register("examples/matmul_256_grid4x4")
def _matmul_for_checks() -> Program:
    dev = build_device()
    a, b = dev.allocate((256, 256), DataFormat.Float16_b), dev.allocate((256, 256), DataFormat.Bfp8_b)
    c = dev.allocate((256, 256), DataFormat.Float16_b)
    return matmul_program(dev, a, b, c, (4, 4), k_block=2, fidelity=MathFidelity.HiFi2, fp32_dest=False)


@register("examples/softmax_96x256")
def _softmax_for_checks() -> Program:
    dev = build_device()
    x, out = dev.allocate((96, 256), DataFormat.Float16_b), dev.allocate((96, 256), DataFormat.Float16_b)
    return softmax_program(dev, x, out, 3)
