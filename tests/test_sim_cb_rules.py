"""The simulator's circular-buffer rules for packs outside a reservation and pops without a wait, the
packer's ReLU with L1 accumulation, and the scale of exp (docs/faults.md, "Circular buffers").

On the device the packer writes at the CB's write pointer plus the tile index whatever the counters say
(cb_reserve_back only waits for room, cb_push_back / cb_pop_front only move pointers and counters), and
tt-metal's sdpa compute kernel relies on it. The simulator accepts what cannot corrupt data and stops
what can (another kernel's unread page, a page whose pop nothing orders before the pack)."""

from __future__ import annotations

import re
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest

from simkit import bf16, run_tile_op, tile_op_program
from ttprefill.device.program import CoreCoord, DataFormat
from ttprefill.device.sim_device import SimError

HERE = Path(__file__).parent
FAULTS = HERE / "faults" / "kernels"
X = (np.arange(64 * 64, dtype=np.float32).reshape(64, 64) / 100 - 20.0)  # negative and positive values
CORE = CoreCoord(0, 0)


def run_with_compute(sim, source: Path, x: np.ndarray, cb_pages: int = 2) -> np.ndarray:
    ta = sim.upload(x, DataFormat.Float16_b)
    to = sim.allocate(x.shape, DataFormat.Float32)
    try:
        p = tile_op_program(sim, {}, ta, None, to, compute=source, cb_pages=cb_pages)
        sim.run(p)
        return sim.download(to)
    finally:
        sim.free(ta)
        sim.free(to)


def test_sdpa_in_place_patterns_are_legal_and_compute_what_the_device_does(sim):
    """In place over a waited page, into a page the kernel popped itself, ReLU + L1 accumulation onto its
    own pushed page and a pop of that page without a wait: c_16 gets 2x + max(x, 0) per element."""
    out = run_with_compute(sim, HERE / "kernels" / "cb_rules" / "inplace_patterns.cpp", X, cb_pages=1)
    x = bf16(X).astype(np.float64)
    # 2x is exact in bf16; the L1 accumulation adds max(x, 0) in fp32 and rounds the sum to bf16 once.
    expected = bf16((2 * x + np.maximum(x, 0)).astype(np.float32)).astype(np.float64)
    np.testing.assert_allclose(out, expected, rtol=2.0**-8, atol=0)
    # The ReLU acts on the datum added, not on the sum: negative x leave 2x (negative) in place.
    neg = x < 0
    assert (out[neg] < 0).all() and np.allclose(out[neg], 2 * x[neg], rtol=2.0**-8)


def fails(sim, source: str, pattern: str):
    ta = sim.upload(X, DataFormat.Float16_b)
    to = sim.allocate(X.shape, DataFormat.Float32)
    try:
        p = tile_op_program(sim, {}, ta, None, to, compute=FAULTS / source)
        with pytest.raises(SimError) as e:
            sim.run(p)
    finally:
        sim.free(ta)
        sim.free(to)
    msg = str(e.value)
    assert re.search(pattern, msg), msg
    assert "core (0,0)" in msg and source in msg, msg
    out = run_tile_op(sim, {"OP_COPY": "1"}, X)  # the device stays usable
    np.testing.assert_array_equal(out, bf16(X))


def test_pack_over_pages_another_kernel_pushed_and_nobody_read_is_a_fault(sim):
    fails(sim, "pack_over_unread.cpp",
          r"pack_tile: output tile 0 of CB 0 is past the 0 pages reserved, over page 0 which riscv_1 kernel "
          r".*reader_tiles.cpp pushed and which has not been popped: the pack would overwrite data not yet read")


def test_pack_onto_a_page_the_consumer_freed_without_reserving_is_a_fault(sim):
    """The writer's pop is not ordered before the pack (no cb_reserve_back waited for it). Depending on how
    far the writer got in the simulator's order of events the page is popped or still unread; both stop."""
    fails(sim, "pack_after_foreign_pop.cpp",
          r"pack_tile: output tile 0 of CB 16 is past the 0 pages reserved, (on a page riscv_0 kernel .*writer_tiles.cpp "
          r"popped: nothing orders that pop before this pack|over page 0 which)")


def test_rewriting_a_pushed_page_another_kernel_consumes_is_a_fault(sim):
    """Caught at the pack when the writer has already shown itself as c_16's consumer, else (as here, where
    the compute kernel runs ahead) at the writer's wait for the rewritten page."""
    fails(sim, "rewrite_consumed.cpp",
          r"(cb_wait_front\(16, 1\): page 1 was rewritten in place by compute kernel .*rewrite_consumed.cpp's packer "
          r"after that kernel pushed it"
          r"|pack_tile: output tile 1 of CB 16 is past the 0 pages reserved, over page 1 which compute kernel)")


@pytest.mark.parametrize("approx", [True, False])
def test_exp_scale_follows_tt_llk(sim, approx):
    """tt-llk's approximate exp bakes exp_tile_init's scale into its constants and ignores exp_tile's
    scale_en; the accurate exp ignores the init's scale and applies exp_tile's (sdpa's scaled exp uses
    exp_tile_init<true, scale>() then exp_tile<true, false>())."""
    init_scale, call_scale = 0.125, 0.5  # fp32 0x3E000000, bf16 0x3F00
    a = "true" if approx else "false"
    # The approximate path: the call's scale_en must be ignored; the accurate path: the init's scale.
    defines = {"OP_SFPU": "1", "SFPU_INIT": f"exp_tile_init<{a}, 0x3E000000u>",
               "SFPU_CALL(d)": f"exp_tile<{a}, true>(d, VectorMode::RC, 0x3F00)"}
    x = X / 4
    out = run_tile_op(sim, defines, x)
    factor = init_scale if approx else call_scale
    np.testing.assert_allclose(out, np.exp(factor * bf16(x).astype(np.float64)), rtol=2.0**-7)


def test_a_wait_covers_the_whole_push_it_lands_in(sim):
    """The compute kernel pushes tiles in pairs; the writer waits for one page and pops two. On the device
    the received count moved by the pair at once, so the second page is there: no fault (tt-metal's
    layernorm pops a full tail block after waiting for its valid tiles). The writer writes the first tile
    of each pair. With one push per tile the same writer faults (tests/faults test_pop_more_than_waited)."""
    ta = sim.upload(X, DataFormat.Float16_b)
    to = sim.allocate(X.shape, DataFormat.Float32)
    try:
        p = tile_op_program(sim, {}, ta, None, to, compute=HERE / "kernels" / "cb_rules" / "copy_pairs.cpp")
        p.kernels[2] = replace(p.kernels[2], source=FAULTS / "writer_pop_unwaited.cpp")
        sim.run(p)
        out = sim.download(to)
    finally:
        sim.free(ta)
        sim.free(to)
    tiles = [(0, 0), (32, 0)]  # pages 0 and 2 of the 2 x 2 tile grid, row-major
    for r, c in tiles:
        np.testing.assert_array_equal(out[r:r + 32, c:c + 32], bf16(X[r:r + 32, c:c + 32]))
