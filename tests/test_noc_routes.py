"""NoC link contention along routes (sim/src/noc_routes.h): transfers that cross the same link share it.

Independent derivation, from Wormhole's layout and routing rules as tt-metal's soc descriptor and tt-npe
state them: the compute grid's row 0 sits on NoC row 1 at columns 1-4 and 6-9; DRAM banks 4-11 answer at
column 5 (rows 1, 11, 2, 9, 8, 3, 5, 7), banks 0-3 at column 0. NoC 0 runs east first (wrapping at the
edge), so every byte a row-0 core writes to a column-5 bank crosses the one east link from column 4 into
column 5, and so do the bytes the four cores west of it (columns 1-4) write to column 0, which they reach
only by wrapping round: eight cores writing a page to each of the 12 banks in turn put 8 x 8/12 + 4 x 4/12
of one core's bytes on that link. NoC 1
runs north first, each core in its own column, and then west along the bank's row, so the same writes
spread over the links of eight rows. A link carries 30 B/cycle (tt-npe). A write into DRAM holds each link
of its route at the rate its channel ingests, the 21.8 B/cycle one core's writes reach (the ISA doc's
DRAMTile/README.md: the channel ingests slower than L1 sends, the routers' buffers fill, and a static
virtual channel carries one packet across a link at a time), so those bytes cross the link at 21.8.
Reads are the mirror image on NoC 1 (north from the bank to the core's row, then west): the link west out
of column 5 on row 1 carries the same share, and a read's data is not held, so it crosses at 30.
"""

from __future__ import annotations

import pytest

from ttprefill import calibration
from ttprefill.device.jit import KERNELS_DIR
from ttprefill.device.program import CircularBuffer, CoreCoord, CoreRangeSet, DataFormat, Kernel, Program, Role
from ttprefill.device.sim_device import SimDevice

LINK_BYTES_PER_CYCLE = 30.0
CORE_DRAM_WRITE_BYTES_PER_CYCLE = 21.8  # one core's measured ceiling (timing.h)
DRAM_BANKS = 12
PAGE = 2048
ROUNDS = 8  # pages written to each bank by each core
CORES = [CoreCoord(x, 0) for x in range(8)]


def _all_transfer(noc: int, write: bool = True) -> int:
    device = SimDevice(timing_only=True)
    pages = DRAM_BANKS * ROUNDS
    buffer = device.allocate((32, 32 * pages), DataFormat.Float16_b)
    mode = 1 if write else 0
    try:
        kernel = Kernel(KERNELS_DIR / calibration.CALIBRATION_KERNELS / "noc_transactions.cpp", Role.RISCV_0,
                        CoreRangeSet.of(CORES), buffer.accessor_args(),
                        runtime_args={c: [buffer.address, PAGE, pages, mode, 1, 0, 0, PAGE, 0] for c in CORES},
                        noc=noc)
        local = CircularBuffer(0, DataFormat.Float16_b, PAGE, 1, CoreRangeSet.of(CORES))
        return device.run(Program([kernel], [local], name=f"all_{'write' if write else 'read'}_noc{noc}")).cycles
    finally:
        device.free(buffer)


def _all_write(noc: int) -> int:
    return _all_transfer(noc, write=True)


def _bytes_on_the_shared_link() -> float:
    bytes_per_core = DRAM_BANKS * ROUNDS * PAGE
    west_of_column_5 = [c for c in CORES if c.x < 4]
    return (len(CORES) * 8 + len(west_of_column_5) * 4) / DRAM_BANKS * bytes_per_core


def test_writes_sharing_a_link_are_bound_by_it_at_the_channels_ingest_rate():
    bytes_per_core = DRAM_BANKS * ROUNDS * PAGE
    link_bound = _bytes_on_the_shared_link() / CORE_DRAM_WRITE_BYTES_PER_CYCLE
    alone = bytes_per_core / CORE_DRAM_WRITE_BYTES_PER_CYCLE
    assert link_bound > 3 * alone  # the shared link, not each core's own port, decides this case
    cycles = _all_write(noc=0)
    assert link_bound <= cycles <= 1.05 * link_bound + 1000, (cycles, link_bound)


def test_reads_sharing_a_link_are_bound_by_it_at_the_link_rate():
    link_bound = _bytes_on_the_shared_link() / LINK_BYTES_PER_CYCLE
    cycles = _all_transfer(noc=1, write=False)
    assert link_bound <= cycles <= 1.05 * link_bound + 1000, (cycles, link_bound)


def test_the_other_noc_spreads_the_same_writes():
    # On NoC 1 the busiest link carries one bank's share of every core's bytes (8/12 of a core's bytes),
    # less than a DRAM channel is asked for, so each core's own ceiling decides.
    bytes_per_core = DRAM_BANKS * ROUNDS * PAGE
    alone = bytes_per_core / CORE_DRAM_WRITE_BYTES_PER_CYCLE
    cycles = _all_write(noc=1)
    assert alone <= cycles <= 1.3 * alone + 1000, (cycles, alone)
    assert cycles < _all_write(noc=0) / 2


def test_a_kernel_cannot_name_a_noc_for_compute_or_a_third_noc():
    with pytest.raises(ValueError, match="NoC 0 or 1"):
        Kernel(KERNELS_DIR / calibration.CALIBRATION_KERNELS / "noc_transactions.cpp", Role.RISCV_0,
               CoreRangeSet.of(CORES), noc=2)
