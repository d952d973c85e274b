"""A request's page table resident in device DRAM, brought up to date by a device program of ours.

The attention kernels (flash attention, kv_cache_write) read a request's page ids from a UInt32 [rows, 32]
tensor in DRAM (cache.py's layout: entry i at row i // 32, column i % 32). ResidentPageTable keeps one
such tensor per live request between chunks, sized for the request's pages, and `sync` writes into it
only the entries a chunk needs that it does not hold yet: on a request's first chunk the prefix hit's
pages and the chunk's own, on every later chunk the chunk's new pages (chunk_tokens / page_tokens ids).

The ids reach the device as RUNTIME ARGS of page_table_update_program
(kernels/flash_attention/page_table_update.cpp), which writes them into the tensor: runtime args are part
of a program's dispatch, as every program's buffer addresses and sizes are, not a host-to-device data
transfer into DRAM, so a resident table puts no page table into the host traffic. One core and one
dispatch per at most PAGE_IDS_PER_DISPATCH ids (tt-metal's MAX_RUNTIME_ARGS per kernel and core, less
the program's own three args); a long prefix hit takes several dispatches.

The host keeps a mirror of what the tensor holds, advanced only after a dispatch has run, so a failed
dispatch leaves the mirror naming exactly what the device holds and the next sync rewrites the rest.
"""

from __future__ import annotations

from typing import Sequence

from ttprefill.device.jit import KERNELS_DIR
from ttprefill.device.program import (
    DRAM_WRITE_NOC,
    CircularBuffer,
    CoreCoord,
    CoreRangeSet,
    DataFormat,
    Kernel,
    Program,
    Role,
)
from ttprefill.device.tensor import DeviceTensor
from ttprefill.hw import MAX_RUNTIME_ARGS

from .cache import page_table_tensor_shape
from .shapes import TILE, PageTableError

KERNEL = KERNELS_DIR / "flash_attention" / "page_table_update.cpp"
UINT32 = DataFormat.UInt32
COMMON_ARGS = 1  # the table's address
FIXED_ARGS = 2   # first entry, number of entries
PAGE_IDS_PER_DISPATCH = MAX_RUNTIME_ARGS - COMMON_ARGS - FIXED_ARGS
CORE = CoreCoord(0, 0)


def _check_table(table: DeviceTensor) -> int:
    """Entries the table tensor holds; refuses a tensor that is not the attention kernels' layout."""
    if table.data_format is not UINT32 or len(table.shape) != 2 or table.shape[1] != TILE:
        raise PageTableError(f"a page table is a UInt32 [rows, {TILE}] tensor (page_table_tensor_shape); got "
                             f"{list(table.shape)} {table.data_format.name}")
    return table.shape[0] * table.shape[1]


def page_table_update_program(table: DeviceTensor, first: int, page_ids: Sequence[int]) -> Program:
    """Entries first .. first + len(page_ids) - 1 of `table` <- page_ids (one dispatch: at most
    PAGE_IDS_PER_DISPATCH ids; write_page_ids splits longer lists)."""
    entries = _check_table(table)
    ids = [int(p) for p in page_ids]
    if not 1 <= len(ids) <= PAGE_IDS_PER_DISPATCH:
        raise PageTableError(f"one page table update carries 1 to {PAGE_IDS_PER_DISPATCH} ids in its runtime args "
                             f"(tt-metal allows {MAX_RUNTIME_ARGS}); got {len(ids)}: split with write_page_ids")
    if first < 0 or first + len(ids) > entries:
        raise PageTableError(f"entries {first} .. {first + len(ids) - 1} are outside the table's {entries} entries; "
                             "allocate a table for every page of the request")
    bad = [p for p in ids if not 0 <= p < 2**32]
    if bad:
        raise PageTableError(f"page id {bad[0]} is not a uint32")
    cores = CoreRangeSet.of([CORE])
    # On the writer NoC, as our other programs' writers: the program exists to write the table (it reads
    # each touched tile back first only to keep the entries outside the range).
    writer = Kernel(KERNEL, Role.RISCV_0, cores, table.accessor_args(), common_runtime_args=[table.address],
                    runtime_args={CORE: [first, len(ids)] + ids}, noc=DRAM_WRITE_NOC)
    scratch = CircularBuffer(0, UINT32, UINT32.tile_bytes, 1, cores)
    return Program([writer], [scratch], inputs={"page_table": table}, outputs={"page_table": table},
                   name=f"page_table_update[{first}+{len(ids)}]")


def write_page_ids(device, table: DeviceTensor, first: int, page_ids: Sequence[int], *,
                   reports: list | None = None, on_written=None) -> None:
    """Entries first .. of `table` <- page_ids, in dispatches of at most PAGE_IDS_PER_DISPATCH ids;
    on_written(first, ids) is called after each dispatch has run."""
    ids = [int(p) for p in page_ids]
    for at in range(0, len(ids), PAGE_IDS_PER_DISPATCH):
        part = ids[at:at + PAGE_IDS_PER_DISPATCH]
        report = device.run(page_table_update_program(table, first + at, part))
        if reports is not None:
            reports.append(report)
        if on_written is not None:
            on_written(first + at, part)


class ResidentPageTable:
    """One request's page table on the device, sized for `entries` pages; `held` mirrors what the tensor's
    first len(held) entries hold (entries past it were never written)."""

    def __init__(self, device, entries: int):
        if entries < 1:
            raise PageTableError(f"a page table needs at least one entry; got {entries}")
        self.device = device
        self.tensor = device.allocate(page_table_tensor_shape(entries), UINT32)
        self.held: list[int] = []

    @property
    def entries(self) -> int:
        return self.tensor.shape[0] * self.tensor.shape[1]

    def fits(self, entries: int) -> bool:
        """Whether this tensor has the shape the attention kernels expect for a table of `entries` pages."""
        return tuple(self.tensor.shape) == page_table_tensor_shape(entries)

    def sync(self, page_table: Sequence[int], needed: int, *, reports: list | None = None) -> int:
        """Makes entries 0 .. needed - 1 equal page_table's, writing from the first entry the tensor does not
        already hold; returns how many ids were written."""
        table = [int(p) for p in page_table]
        if not 0 <= needed <= min(len(table), self.entries):
            raise PageTableError(f"{needed} entries asked of a page table of {len(table)} pages in a tensor of "
                                 f"{self.entries} entries")
        start = next((i for i, (a, b) in enumerate(zip(self.held, table[:needed])) if a != b),
                     min(len(self.held), needed))
        if start == needed:
            return 0
        del self.held[start:]  # entries from `start` on are being replaced

        def written(first: int, ids: list[int]) -> None:
            self.held[first:first + len(ids)] = ids

        write_page_ids(self.device, self.tensor, start, table[start:needed], reports=reports, on_written=written)
        return needed - start

    def free(self) -> None:
        if self.tensor is not None:
            self.device.free(self.tensor)
            self.tensor = None
