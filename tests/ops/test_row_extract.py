"""One row of a tiled tensor as a row-major row (ops/layout/row.py) on the simulator: bit for bit against
numpy indexing of the uploaded bf16 values, for every row index inside a tile (both face rows), widths that
are not multiples of 64 or of a page, and only the row's pages crossing to the host."""

from __future__ import annotations

import numpy as np
import pytest

from ttprefill.device.program import DataFormat
from ttprefill.ops.layout import DeviceRow, RowExtractError, extract_row, extract_rows

BF16 = DataFormat.Float16_b


def _bf16_values(rng, shape):
    """Random values bf16 holds exactly (fp32 with the low 16 bits cleared), all bit patterns of sign,
    exponent and mantissa exercised."""
    bits = (rng.standard_normal(shape).astype(np.float32) * 100).view(np.uint32) & 0xFFFF0000
    return bits.view(np.float32)


def test_every_row_of_a_tile_row(sim):
    rng = np.random.default_rng(1)
    x = _bf16_values(rng, (96, 1100))  # 35 tiles a row, the last 12 columns wide; two row-major pages
    src = sim.upload(x, BF16)
    out = DeviceRow.allocate(sim, x.shape[1])
    try:
        for row in range(32, 64):
            extract_row(sim, src, row, out)
            np.testing.assert_array_equal(out.download(sim), x[row])
        for row in (0, 17, 95):
            extract_row(sim, src, row, out)
            np.testing.assert_array_equal(out.download(sim), x[row])
    finally:
        out.free(sim)
        sim.free(src)


@pytest.mark.parametrize("rows, width, row", [(32, 5000, 31), (7, 70, 6), (64, 2048, 40)])
def test_widths_and_the_bytes_that_come_up(sim, rows, width, row):
    rng = np.random.default_rng(width)
    x = _bf16_values(rng, (rows, width))
    src = sim.upload(x, BF16)
    try:
        out = extract_row(sim, src, row)
        try:
            before = sim.host_traffic.total("to_host")
            got = out.download(sim)
            moved = sim.host_traffic.total("to_host") - before
        finally:
            out.free(sim)
    finally:
        sim.free(src)
    np.testing.assert_array_equal(got, x[row])
    assert moved == -(-width * 2 // 2048) * 2048  # the row's bf16 bytes in whole 2 KB pages, not the tile row


@pytest.mark.parametrize("width, rows", [(1100, [93, 94, 95, 29, 30, 31, 0, 17, 64]), (5000, [2, 1, 0]),
                                         (64, [40])])
def test_many_rows_into_one_tensor_in_one_read(sim, width, rows):
    """Rows from several tile rows, in any order (the conv rows before each checkpoint), land back to back in
    one tensor, each in its own whole pages, and come up in one read of exactly those pages."""
    rng = np.random.default_rng(width + len(rows))
    x = _bf16_values(rng, (96, width))
    src = sim.upload(x, BF16)
    try:
        out = extract_rows(sim, src, rows)
        reads = []
        original = sim.read_pages
        sim.read_pages = lambda t, first, n: reads.append(n) or original(t, first, n)
        try:
            got = out.download(sim)
        finally:
            del sim.read_pages
            out.free(sim)
    finally:
        sim.free(src)
    np.testing.assert_array_equal(got, x[rows])
    assert reads == [len(rows) * -(-width // 1024)]  # one read: per row its whole 2 KB pages, nothing more


def test_bad_requests_are_refused(sim):
    in_use = sim.dram_bytes_in_use()
    src = sim.upload(np.zeros((40, 64), np.float32), BF16)
    other = DeviceRow.allocate(sim, 96)
    try:
        with pytest.raises(RowExtractError, match="outside the source's 40 rows"):
            extract_row(sim, src, 40)
        with pytest.raises(RowExtractError, match="holds 96 values"):
            extract_row(sim, src, 0, other)
        with pytest.raises(RowExtractError, match="row 41 is outside"):
            extract_rows(sim, src, [3, 41])
        with pytest.raises(RowExtractError, match="no rows"):
            extract_rows(sim, src, [])
    finally:
        other.free(sim)
        sim.free(src)
    fp32 = sim.upload(np.zeros((32, 64), np.float32), DataFormat.Float32)
    try:
        with pytest.raises(RowExtractError, match="Float16_b"):
            extract_row(sim, fp32, 0)
    finally:
        sim.free(fp32)
    # a refused request frees what it allocated for its output
    assert sim.dram_bytes_in_use() == in_use
