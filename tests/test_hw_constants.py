"""Python mirrors of C++ constants agree with the C++ they mirror: the hardware figures of ttprefill.hw
against the timing model (sim/src/timing.h), and the kernels' CB indices, constant-tile counts and
runtime-arg layouts against the program builders. The C++ side is read with
ttprefill.cxx_decls.constexpr_values, so a change on either side alone fails here."""

from __future__ import annotations

from pathlib import Path

import pytest

from ttprefill import hw
from ttprefill.cxx_decls import constexpr_values
from ttprefill.ops.attention import shapes as fa
from ttprefill.ops.gdn import planner as gdn_planner
from ttprefill.ops.gdn import shapes as gdn

REPO = Path(__file__).resolve().parents[1]
TIMING_H = REPO / "sim" / "src" / "timing.h"
FA = REPO / "kernels" / "flash_attention"
GDN = REPO / "kernels" / "gdn"


def _cxx(path: Path) -> dict:
    values = constexpr_values(path)
    assert values, f"no constants read from {path}"
    return values


def test_the_reader_evaluates_what_the_headers_write(tmp_path):
    src = tmp_path / "c.h"
    src.write_text("// constexpr uint32_t kComment = 9;\n"
                   "constexpr uint32_t kA = tt::CBIndex::c_16;  // trailing\n"
                   "constexpr double kB = 1.5e3;\n"
                   "inline constexpr uint32_t kC = (kA + 2u) * 4 / 3;\n"
                   "constexpr uint32_t kD = some_call(kA);\n"
                   "constexpr uint32_t kE = 0xffffffffu;\n")
    assert constexpr_values(src) == {"kA": 16, "kB": 1500.0, "kC": 24, "kE": 0xFFFFFFFF}


@pytest.mark.parametrize("python_name,cxx_name", [
    ("CLOCK_HZ", "kClockHz"),
    ("DRAM_CHANNEL_PEAK_BYTES_PER_CYCLE", "kDramChannelPeakBytesPerCycle"),
    ("CORE_DRAM_READ_BYTES_PER_CYCLE", "kCoreDramReadBytesPerCycle"),
    ("CORE_DRAM_WRITE_BYTES_PER_CYCLE", "kCoreDramWriteBytesPerCycle"),
    ("NOC_LINK_BYTES_PER_CYCLE", "kNocLinkBytesPerCycle"),
    ("UNPACK_BYTES_PER_CYCLE", "kUnpackBytesPerCycle"),
    ("UNPACR_SETUP_CYCLES", "kUnpacrSetupCycles"),
])
def test_hardware_figures_match_the_timing_model(python_name, cxx_name):
    assert getattr(hw, python_name) == _cxx(TIMING_H)[cxx_name]


def test_the_chip_peak_is_its_channels():
    assert hw.DRAM_PEAK_BYTES_PER_CYCLE == hw.DRAM_BANKS * _cxx(TIMING_H)["kDramChannelPeakBytesPerCycle"] == 288.0


def test_flash_attention_cb_indices_match_the_kernels():
    cxx = _cxx(FA / "flash_attention_common.h")
    kernel_cbs = {name: value for name, value in cxx.items() if name.startswith("cb_")}
    python_cbs = {name.lower(): getattr(fa, name) for name in dir(fa)
                  if name.startswith("CB_") and not name.startswith("CB_KV_")}
    assert kernel_cbs == python_cbs
    assert cxx["kNumMaskTiles"] == fa.NUM_MASK_TILES and cxx["kTileDim"] == fa.TILE


def test_kv_cache_write_cb_indices_match_the_kernels():
    kernels = {}
    for role in ("reader", "compute", "writer"):
        kernels.update(_cxx(FA / f"kv_write_{role}.cpp"))
    assert (kernels["cb_new"], kernels["cb_keep"], kernels["cb_page"]) == (fa.CB_KV_NEW, fa.CB_KV_KEEP, fa.CB_KV_PAGE)


@pytest.mark.parametrize("kernel,fixed", [("reader", fa.READER_FIXED_ARGS), ("compute", fa.COMPUTE_FIXED_ARGS),
                                          ("writer", fa.WRITER_FIXED_ARGS)])
def test_flash_attention_runtime_args_before_the_units_match_the_kernels(kernel, fixed):
    assert _cxx(FA / f"{kernel}.cpp")["kFirstUnitArg"] == fixed


def test_flash_attention_kv_share_roles_match_the_kernel():
    cxx = _cxx(FA / "kv_share.h")
    assert (cxx["kAlone"], cxx["kSender"], cxx["kReceiver"]) == (fa.KV_SHARE_ALONE, fa.KV_SHARE_SENDER,
                                                                 fa.KV_SHARE_RECEIVER)


@pytest.mark.parametrize("header,cxx_name,python_value", [
    ("scan_prep_consts.h", "kNumConsts", gdn.PREP_CONST_TILES),
    ("scan_prep_chunk.h", "kInverseLanes", gdn.INVERSE_LANES),
    ("gate_vectors.h", "kFromTileEnd", gdn.GATE_VECTOR_KINDS_BASE),
    ("gdn_compute.h", "kDstTiles", gdn.DST_TILES),
    ("conv_consts.h", "kConvNumConsts", gdn.CONV_CONST_TILES),
    ("conv_consts.h", "kConvWidth", gdn.CONV_WIDTH),
    ("conv_consts.h", "kNormNone", gdn_planner.CONV_NORM_NONE),
    ("conv_consts.h", "kNormL2", gdn_planner.CONV_NORM_L2),
    ("conv_consts.h", "kNormL2Scaled", gdn_planner.CONV_NORM_L2_SCALED),
    ("scan_offload.h", "kMaxHeadsPerHelper", gdn_planner.MAX_HEADS_PER_HELPER),
    ("scan_offload.h", "kRecordSlots", gdn_planner.RECORD_SLOTS),
])
def test_gdn_constants_match_the_kernels(header, cxx_name, python_value):
    assert _cxx(GDN / header)[cxx_name] == python_value


def test_conv_units_have_the_kernels_field_count():
    from ttprefill.ops.gdn import GdnDims, conv_units

    units = conv_units(GdnDims(2, 4, 64, 64), 100)
    assert units and all(len(u) == _cxx(GDN / "conv_consts.h")["kConvUnitArgs"] for u in units)


@pytest.mark.parametrize("kernel", ["norm/rms_steps.h", "gdn/gdn_compute.h"])
def test_the_fp32_dst_batch_of_the_kernels_is_hw_py(kernel):
    """Kernels that fill DST with fp32 accumulation batch by hw.DST_TILES_FP32, the planners' one figure."""
    assert _cxx(REPO / "kernels" / kernel)["kDstTiles"] == hw.DST_TILES_FP32
