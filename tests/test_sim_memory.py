"""Simulated DRAM costs host memory only where data is written, and timing-only runs write none of
what kernels produce: a long-context layer can be timed on a small machine."""

from __future__ import annotations

import numpy as np

from simkit import tile_op_program
from ttprefill.device.program import DataFormat
from ttprefill.device.sim_device import SimDevice


def rss_bytes() -> int:
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * 4096


def test_a_large_allocation_costs_no_host_memory_until_written():
    dev = SimDevice()
    before = rss_bytes()
    big = dev.allocate((32768, 32768), DataFormat.Float32)  # 4 GiB of device DRAM
    assert rss_bytes() - before < 64 << 20
    row = np.arange(32 * 32768, dtype=np.float32).reshape(32, 32768)
    dev.write_pages(big, 0, np.frombuffer(np.ascontiguousarray(row).tobytes(), np.uint8)[: 1024 * 4096])
    assert rss_bytes() - before < 256 << 20
    dev.free(big)


def test_freed_memory_reads_as_zero_when_reallocated():
    dev = SimDevice()
    a = dev.upload(np.ones((64, 64), np.float32), DataFormat.Float32)
    address = a.address
    dev.free(a)
    b = dev.allocate((64, 64), DataFormat.Float32)
    assert b.address == address  # first fit reuses the freed range
    assert not np.any(dev.download(b))


def test_timing_only_keeps_what_the_host_wrote_and_drops_what_kernels_write():
    """Host uploads (page tables and other data that steers kernels) survive; a kernel's output reads as
    zeros, and costs no host memory; the modeled cycles are those of the full run."""
    x = (np.arange(64 * 64) % 256).astype(np.float32).reshape(64, 64)  # bf16-exact
    cycles = {}
    for timing_only in (False, True):
        dev = SimDevice(timing_only=timing_only)
        a = dev.upload(x, DataFormat.Float16_b)
        out = dev.allocate((64, 64), DataFormat.Float32)
        report = dev.run(tile_op_program(dev, {"OP_COPY": "1"}, a, None, out))
        cycles[timing_only] = report.cycles
        assert np.array_equal(dev.download(a), x)
        if timing_only:
            assert not np.any(dev.download(out))
        else:
            assert np.array_equal(dev.download(out), x)
    assert cycles[True] == cycles[False]
