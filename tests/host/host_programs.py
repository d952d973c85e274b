"""Small hand-built Programs over the test kernels (tests/kernels), for the descriptor checks."""

from __future__ import annotations

from pathlib import Path

from ttprefill.device.offline_device import OfflineDevice
from ttprefill.device.program import (
    CircularBuffer,
    ComputeConfig,
    CoreRangeSet,
    DataFormat,
    Kernel,
    MathFidelity,
    Program,
    Role,
    Semaphore,
)

TEST_KERNELS = Path(__file__).resolve().parents[1] / "kernels"


def copy_program(nx: int = 2, ny: int = 2, tiles_per_core: int = 3, data_format: DataFormat = DataFormat.Float16_b,
                 fidelity: MathFidelity = MathFidelity.HiFi4, pages: int = 2) -> Program:
    """Reader -> compute (copy) -> writer on an nx x ny block of cores, each core its own tiles."""
    device = OfflineDevice()
    cores = CoreRangeSet.grid(nx, ny)
    n = nx * ny * tiles_per_core
    src = device.allocate((n * 32, 32), data_format)
    dst = device.allocate((n * 32, 32), data_format)
    reader_args, writer_args, compute_args = {}, {}, {}
    for i, core in enumerate(cores.cores()):
        first = i * tiles_per_core
        reader_args[core] = [src.address, 0, first, tiles_per_core, 1, 0]
        writer_args[core] = [dst.address, first, tiles_per_core]
        compute_args[core] = [tiles_per_core, 0]
    page = data_format.tile_bytes
    return Program(
        kernels=[
            Kernel(TEST_KERNELS / "reader_tiles.cpp", Role.RISCV_1, cores, src.accessor_args() + src.accessor_args(),
                   runtime_args=reader_args),
            Kernel(TEST_KERNELS / "writer_tiles.cpp", Role.RISCV_0, cores, dst.accessor_args(), runtime_args=writer_args),
            Kernel(TEST_KERNELS / "compute_op.cpp", Role.COMPUTE, cores, defines={"OP_COPY": "1"}, runtime_args=compute_args,
                   compute_config=ComputeConfig(fidelity, fp32_dest_acc_en=False, math_approx_mode=True)),
        ],
        circular_buffers=[
            CircularBuffer(0, data_format, page, pages, cores),
            CircularBuffer(16, data_format, page, pages, cores),
        ],
        semaphores=[Semaphore(1, cores, initial_value=7)],
        inputs={"src": src},
        outputs={"dst": dst},
        name=f"copy_{nx}x{ny}",
    )
