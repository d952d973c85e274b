"""Shared helpers for simulator tests: run the test kernels in tests/kernels on a few tiles."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from ttprefill.device.program import (
    CircularBuffer,
    ComputeConfig,
    CoreCoord,
    CoreRangeSet,
    DataFormat,
    Kernel,
    MathFidelity,
    Program,
    Role,
)

TEST_KERNELS = Path(__file__).parent / "kernels"


def bf16(x: np.ndarray) -> np.ndarray:
    from ttprefill.device.formats import round_to_bf16

    return round_to_bf16(np.asarray(x, np.float32))


def tile_op_program(dev, defines: dict[str, str], a_tensor, b_tensor, out_tensor, *, resident_b: int = 0,
                    fidelity: MathFidelity = MathFidelity.HiFi4, fp32_dest: bool = True, core=(0, 0),
                    cb_pages: int = 2, name: str = "tile_op", compute: Path | None = None,
                    unpack_to_dest_fp32: frozenset[int] = frozenset()) -> Program:
    """reader_tiles -> compute_op (one op per tile; or another compute kernel of the same shape) ->
    writer_tiles on one core."""
    c = CoreCoord(*core)
    cores = CoreRangeSet.of([c])
    n = a_tensor.num_pages
    b_fmt = b_tensor.data_format if b_tensor is not None else a_tensor.data_format
    b_pages = max(cb_pages, resident_b)
    cbs = [
        CircularBuffer(0, a_tensor.data_format, a_tensor.page_size, cb_pages, cores),
        CircularBuffer(1, b_fmt, b_fmt.tile_bytes, b_pages, cores),
        CircularBuffer(16, out_tensor.data_format, out_tensor.page_size, cb_pages, cores),
    ]
    b_args = b_tensor.accessor_args() if b_tensor is not None else a_tensor.accessor_args()
    inputs = 2 if b_tensor is not None else 1
    kernels = [
        Kernel(TEST_KERNELS / "reader_tiles.cpp", Role.RISCV_1, cores, a_tensor.accessor_args() + b_args,
               runtime_args={c: [a_tensor.address, b_tensor.address if b_tensor is not None else 0, 0, n, inputs,
                                 resident_b]}),
        Kernel(compute or TEST_KERNELS / "compute_op.cpp", Role.COMPUTE, cores, defines=defines,
               runtime_args={c: [n, resident_b]},
               compute_config=ComputeConfig(math_fidelity=fidelity, fp32_dest_acc_en=fp32_dest,
                                            unpack_to_dest_fp32=unpack_to_dest_fp32)),
        Kernel(TEST_KERNELS / "writer_tiles.cpp", Role.RISCV_0, cores, out_tensor.accessor_args(),
               runtime_args={c: [out_tensor.address, 0, n]}),
    ]
    return Program(kernels=kernels, circular_buffers=cbs, name=name)


def run_tile_op(dev, defines, a, b=None, *, in_format=DataFormat.Float16_b, out_format=DataFormat.Float32,
                resident_b=0, **kw) -> np.ndarray:
    ta = dev.upload(a, in_format)
    tb = dev.upload(b, in_format) if b is not None else None
    to = dev.allocate(a.shape, out_format)
    try:
        dev.run(tile_op_program(dev, defines, ta, tb, to, resident_b=resident_b, **kw))
        return dev.download(to)
    finally:
        for t in (ta, tb, to):
            if t is not None:
                dev.free(t)
