"""The resident page table (ops/attention/page_table.py) on the simulator: the update program writes exactly
the ids its runtime args carry, in the layout the attention kernels read (byte for byte what
upload_page_table lays out), split over several dispatches when there are more than one dispatch holds;
entries outside the update keep their values; a failed dispatch leaves the host's mirror naming what the
device holds, and the next sync completes the table."""

from __future__ import annotations

import numpy as np
import pytest

from ttprefill.device.program import DataFormat
from ttprefill.hw import MAX_RUNTIME_ARGS
from ttprefill.ops.attention import (
    PAGE_IDS_PER_DISPATCH,
    PageTableError,
    ResidentPageTable,
    page_table_tensor_shape,
    page_table_update_program,
    upload_page_table,
    write_page_ids,
)

UINT32 = DataFormat.UInt32


def _entries(sim, tensor) -> np.ndarray:
    return np.asarray(sim.download(tensor)).astype(np.uint32).reshape(-1)


def test_updates_write_exactly_the_given_ids_and_keep_the_rest(sim):
    rng = np.random.default_rng(3)
    entries = 2500  # three tiles of 1024 entries
    table = sim.allocate(page_table_tensor_shape(entries), UINT32)
    try:
        base = rng.integers(0, 2**32, entries, dtype=np.uint64).astype(np.uint32)
        reports = []
        write_page_ids(sim, table, 0, base.tolist(), reports=reports)
        assert len(reports) == -(-entries // PAGE_IDS_PER_DISPATCH)  # 8 dispatches
        np.testing.assert_array_equal(_entries(sim, table)[:entries], base)
        # a run of ids across a tile boundary (1024), two dispatches, inside what is already written
        patch = rng.integers(0, 5000, 400).astype(np.uint32)
        reports = []
        write_page_ids(sim, table, 900, patch.tolist(), reports=reports)
        assert len(reports) == 2 and all(r.modeled_s and r.modeled_s > 0 for r in reports)
        want = base.copy()
        want[900:1300] = patch
        np.testing.assert_array_equal(_entries(sim, table)[:entries], want)
        # the layout the attention kernels read: byte for byte what upload_page_table makes of the same ids
        uploaded = upload_page_table(sim, want.tolist())
        try:
            assert tuple(uploaded.shape) == tuple(table.shape)
            np.testing.assert_array_equal(np.asarray(sim.read_pages(table, 0, table.num_pages))[: entries * 4],
                                          np.asarray(sim.read_pages(uploaded, 0, uploaded.num_pages))[: entries * 4])
        finally:
            sim.free(uploaded)
    finally:
        sim.free(table)


def test_one_dispatch_carries_at_most_what_the_runtime_args_hold(sim):
    table = sim.allocate(page_table_tensor_shape(1024), UINT32)
    try:
        assert PAGE_IDS_PER_DISPATCH == MAX_RUNTIME_ARGS - 3
        program = page_table_update_program(table, 0, list(range(PAGE_IDS_PER_DISPATCH)))
        (kernel,) = program.kernels
        assert sum(len(a) for a in kernel.runtime_args.values()) + len(kernel.common_runtime_args) == MAX_RUNTIME_ARGS
        with pytest.raises(PageTableError, match="write_page_ids"):
            page_table_update_program(table, 0, list(range(PAGE_IDS_PER_DISPATCH + 1)))
        with pytest.raises(PageTableError, match="outside the table's 1024 entries"):
            page_table_update_program(table, 1020, [1, 2, 3, 4, 5])
        with pytest.raises(PageTableError, match="not a uint32"):
            page_table_update_program(table, 0, [-1])
    finally:
        sim.free(table)
    wrong = sim.allocate((32, 32), DataFormat.Float32)
    try:
        with pytest.raises(PageTableError, match="UInt32"):
            page_table_update_program(wrong, 0, [1])
    finally:
        sim.free(wrong)


def test_sync_writes_only_what_the_device_does_not_hold(sim):
    table = ResidentPageTable(sim, 40)
    try:
        pages = list(range(100, 140))
        reports = []
        assert table.sync(pages, 9, reports=reports) == 9  # a hit of 5 pages and a chunk's 4
        assert len(reports) == 1
        assert table.sync(pages, 9) == 0  # nothing new: no program runs
        assert table.sync(pages, 13) == 4  # the next chunk's 4 pages
        changed = list(pages)
        changed[6] = 7  # an entry the device holds now names another page: rewritten from there
        assert table.sync(changed, 13) == 7
        np.testing.assert_array_equal(_entries(sim, table.tensor)[:13], changed[:13])
        assert table.held == changed[:13]
        # 40 pages take a [2, 32] tensor: 64 entries
        with pytest.raises(PageTableError, match="65 entries asked .* a tensor of 64 entries"):
            table.sync(list(range(65)), 65)
    finally:
        table.free()


def test_a_failed_dispatch_leaves_the_mirror_true_and_the_next_sync_completes(sim, monkeypatch):
    table = ResidentPageTable(sim, 1024)
    pages = [int(p) for p in np.random.default_rng(9).permutation(1024)]
    run, calls = sim.run, []

    def second_dispatch_fails(program):
        calls.append(program.name)
        if len(calls) == 2:
            raise RuntimeError("injected device fault")
        return run(program)

    try:
        monkeypatch.setattr(sim, "run", second_dispatch_fails)
        with pytest.raises(RuntimeError, match="injected"):
            table.sync(pages, 700)  # three dispatches; the second fails
        assert table.held == pages[:PAGE_IDS_PER_DISPATCH]
        np.testing.assert_array_equal(_entries(sim, table.tensor)[:PAGE_IDS_PER_DISPATCH], table.held)
        monkeypatch.setattr(sim, "run", run)
        assert table.sync(pages, 700) == 700 - PAGE_IDS_PER_DISPATCH
        np.testing.assert_array_equal(_entries(sim, table.tensor)[:700], pages[:700])
    finally:
        table.free()
