"""The one home of Wormhole's hardware figures the host side uses: clock, Tensix grid, L1 layout,
DRAM, NoC and FPU peaks, and tt-metal's per-program limits.

Every module that needs one of these imports it from here (device/program.py re-exports the layout
figures program builders have always read from it). The figures the simulator's timing model also
holds (sim/src/timing.h) are mirrors: tests/test_hw_constants.py reads the C++ constexprs and
compares them. Imports nothing from ttprefill, so every layer may import it.
"""

from __future__ import annotations

from contextlib import contextmanager
from contextvars import ContextVar

# ---- Clock
# 1 GHz (ISA doc BabyRISCV, MatrixUnit); mirrors timing.h kClockHz. Modeled seconds = cycles / CLOCK_HZ.
CLOCK_HZ = 1.0e9

# ---- Tensix grid, as tt-metal exposes it to kernels (WORMHOLE.md, tech_reports/GEMM_FLOPS)
GRID_X = 8
GRID_Y = 8
MAX_CORES = GRID_X * GRID_Y

# The worker cores the planners lay programs out on: the whole grid, or inside `compute_sub_device` those of a
# sub-device whose programs share the chip with another sub-device's (ttnn's SubDevice: e.g. the collectives'
# workers on the last cores). Planners read it when the caller gives no grid / core count. A sub-device holds the
# first cores in row-major order, where core_list lays cores out: programs that take a core count use all of
# them, those that need a rectangle (the 2D-multicast matmul, the binary eltwise) its whole rows.
_COMPUTE: ContextVar[tuple[tuple[int, int], int]] = ContextVar("compute_grid",
                                                               default=((GRID_X, GRID_Y), GRID_X * GRID_Y))


def compute_grid() -> tuple[int, int]:
    """(columns, rows) of the rectangle of the compute cores programs are planned on now."""
    return _COMPUTE.get()[0]


def compute_cores() -> int:
    """How many cores (the first, row by row) programs are planned on now."""
    return _COMPUTE.get()[1]


@contextmanager
def compute_sub_device(grid: tuple[int, int], cores: int | None = None):
    """Plans every program inside the block on the first `cores` cores of the worker grid (default: the
    rectangle's), the rectangular ones on `grid` = (columns, rows), whole rows of them."""
    cols, rows = grid
    cores = cols * rows if cores is None else cores
    if not (1 <= cols <= GRID_X and 1 <= rows <= GRID_Y):
        raise ValueError(f"a compute sub-device of {cols}x{rows} cores does not fit the {GRID_X}x{GRID_Y} worker "
                         f"grid; give 1..{GRID_X} columns and 1..{GRID_Y} rows")
    if not cols * rows <= cores <= MAX_CORES or (cores > cols * rows and cols != GRID_X):
        raise ValueError(f"a compute sub-device of {cores} cores around a {cols}x{rows} rectangle: give {cols * rows}"
                         f"..{MAX_CORES} cores, more than the rectangle's only with whole rows of {GRID_X}")
    token = _COMPUTE.set(((cols, rows), cores))
    try:
        yield
    finally:
        _COMPUTE.reset(token)

# ---- L1 of one Tensix core
# Usable L1 per core (WORMHOLE.md, TensixTile/L1.md).
L1_BYTES = 1_499_136
# Where circular buffers may start in L1, as the pinned ttnn lays a Wormhole worker core out: first
# firmware, mailboxes and fabric tables up to the memory map's MEM_MAP_END (dev_mem_map.h), then the
# kernel-config buffer tt-metal's host reserves above them for kernel binaries, runtime args and
# semaphores (69 KiB on Wormhole, a host-side setting with no header of its own). Their sum is
# ttnn.get_allocator_base_address(device, L1), where its L1 allocator and CB placement begin:
# tests/host/test_descriptors.py recomputes MEM_MAP_END from the headers, tests/host/mock reads the
# base from ttnn on the mock cluster.
L1_FIRMWARE_BYTES = 35_168
L1_KERNEL_CONFIG_BYTES = 69 * 1024
L1_RESERVED_BYTES = L1_FIRMWARE_BYTES + L1_KERNEL_CONFIG_BYTES
# What circular buffers may use of a core's L1: everything above the reserved bottom. ttnn's allocator
# places a program's CBs from that base up and rejects a program that reaches past L1_BYTES.
L1_CB_BUDGET_BYTES = L1_BYTES - L1_RESERVED_BYTES
CB_ALIGNMENT = 32  # circular buffers start on this boundary in L1


def cb_aligned(nbytes: int) -> int:
    """The L1 a circular buffer of `nbytes` takes: rounded up to CB_ALIGNMENT, as the next one starts there."""
    return -(-nbytes // CB_ALIGNMENT) * CB_ALIGNMENT


# ---- tt-metal's per-program limits
# Runtime args plus common runtime args of one kernel on one core: a 4096-byte dispatch packet shared
# by three kernels, 4096 / (3 * 4) = 341 (tt-metal's max_runtime_args).
MAX_RUNTIME_ARGS = 341
NUM_CIRCULAR_BUFFERS = 32
MAX_SEMAPHORES = 16  # per core (tt::tt_metal::NUM_SEMAPHORES)
SEMAPHORE_STRIDE = 16  # bytes between a core's semaphores in the simulator's L1

# ---- Tiles
# Rows and columns of a tile, the unit every engine of a Tensix core moves and computes on (32x32 in
# four 16x16 faces; ISA doc, TileFormats). Token counts a program splits come in whole tile rows.
TILE = 32

# ---- DST (the math engine's destination register)
# Tiles one DST acquire may use while the packer drains the other half (half-sync): 8 bf16 tiles, or 4 with fp32
# accumulation; the simulator enforces it (sim/src/compute.cpp require_dst_index), tt-metal's sub-block
# choices assume it.
DST_TILES_BF16, DST_TILES_FP32 = 8, 4

# ---- DRAM
DRAM_BANKS = 12
# GDDR6 per Wormhole chip (WORMHOLE.md, DRAMTile/README.md): what a device-resident cache can hold at most.
DRAM_BYTES_PER_CHIP = 12 * 2**30
DRAM_ALIGNMENT = 32  # page sizes are padded to this in DRAM (tt-metal's DRAM alignment)
# 24 GB/s per channel (DRAMTile/README.md); mirrors timing.h kDramChannelPeakBytesPerCycle.
DRAM_CHANNEL_PEAK_BYTES_PER_CYCLE = 24.0
# The chip's peak: 12 channels x 24 B/cycle = 288 B/cycle at 1 GHz (288 GB/s). Rooflines and bounds use it.
DRAM_PEAK_BYTES_PER_CYCLE = DRAM_BANKS * DRAM_CHANNEL_PEAK_BYTES_PER_CYCLE
# One core's own steady DRAM traffic (tt-metal data_movement perf plots, wormhole_b0); mirrors timing.h
# kCoreDramReadBytesPerCycle / kCoreDramWriteBytesPerCycle.
CORE_DRAM_READ_BYTES_PER_CYCLE = 22.2
CORE_DRAM_WRITE_BYTES_PER_CYCLE = 21.8
# What the attention planner expects the chip's DRAM to deliver under all cores' load: 12 banks at one
# core's read rate (22.2 B/cycle) at ~90 % efficiency under contention, about 240 B/cycle. An estimate
# for ranking plans (range ~200-246: timing.h's loaded DRAM efficiency 0.75-0.925 of the 12 x 22.2), not a
# peak: bounds use DRAM_PEAK_BYTES_PER_CYCLE.
DRAM_PLANNING_BYTES_PER_CYCLE = 240.0

# ---- NoC
# A NoC link: 30 B/cycle (tt-npe's link model); mirrors timing.h kNocLinkBytesPerCycle.
NOC_LINK_BYTES_PER_CYCLE = 30.0
# Each core injects into 2 NoCs at up to a link's rate each.
NOC_PORT_BYTES_PER_CYCLE = 2 * NOC_LINK_BYTES_PER_CYCLE

# ---- FPU
# An unpacker alone fetches at most 64 B/cycle from L1, and each UNPACR spends 2 cycles on its start address
# (ISA doc UNPACR_Regular.md, "Performance"); mirrors timing.h kUnpackBytesPerCycle / kUnpacrSetupCycles.
UNPACK_BYTES_PER_CYCLE = 64
UNPACR_SETUP_CYCLES = 2

# One 8x16 by 16x16 multiply per cycle per core at LoFi = 4096 FLOP/cycle; each fidelity phase divides
# it (WORMHOLE.md, tech_reports/matrix_engine).
FPU_FLOPS_PER_CYCLE_LOFI = 2 * 8 * 16 * 16


def fpu_peak_flops_per_cycle(cores: int, fidelity) -> float:
    """The FPU peak of `cores` cores at a math fidelity (anything with `.phases`: device.program.MathFidelity)."""
    return cores * FPU_FLOPS_PER_CYCLE_LOFI / fidelity.phases


# ---- Ethernet between chips (the mesh executor's collective timing; sources in docs/TIMING.md, "Ethernet")
# One Wormhole Ethernet link: 100 Gb/s per direction, headers included (tt-metal tech_reports/
# EthernetMultichip/BasicEthernetGuide.md, "Ethernet Link"; 12.5 GB/s per direction per link).
ETH_LINK_RAW_BYTES_PER_S = 12.5e9
# Share of the raw rate a collective gets, by cost setting (docs/TIMING.md "Cost settings"). The link alone
# loses 3-6 % to packet header, MAC, FEC and CRC for payloads above 1 KiB (same guide; its bandwidth curves
# peak for 4-16 KiB packets): low 0.97, central 0.95. The workers feeding the Ethernet data movers are not
# modeled; the high setting takes what the Qwen3.5 demos' authors state their prefill collectives reach,
# 55-65 % of the link (tt-metal tp_common.py `prefill_ccl_tuning`, docs/calibration_sources.md 4d), at 0.60.
ETH_PAYLOAD_EFFICIENCY_BY_SETTING = {"low": 0.97, "central": 0.95, "high": 0.60}
ETH_PAYLOAD_EFFICIENCY = ETH_PAYLOAD_EFFICIENCY_BY_SETTING["central"]
# One hop chip to chip: ~650 ns (same guide, "Ring Ping Latency": 8-hop ring round trip ~5.2 us with the
# payload-available signal merged into the packet; 690 ns in its older formulation, 530-620 ns one way
# on a single link).
ETH_HOP_LATENCY_S = 650e-9
# The start of a collective: each Ethernet data mover handshakes with its peer across the link before
# moving data (tech_reports/EthernetMultichip/CclDeveloperGuide.md, "Initialization"): one round trip,
# ~1100 ns (BasicEthernetGuide, "Single Ethernet Link Round-Trip Latency").
ETH_HANDSHAKE_S = 1.1e-6
# Links cabled between two neighbouring chips: 2, as ttnn's own fabric mesh graph descriptors declare for
# an n300 (1x2) and a T3000 (2x4) (ttnn wheel tt_metal/fabric/mesh_graph_descriptors/
# n300_mesh_graph_descriptor.textproto, t3k_mesh_graph_descriptor.textproto: channels count 2).
ETH_LINKS_PER_NEIGHBOUR_PAIR = 2
# Of those, the links a collective may use: 1. Fast dispatch reaches a chip without PCIe (an n300's second
# chip) over one of its two links (BasicEthernetGuide, "N300"), and ttnn 0.81.1's
# ttnn.operations.ccl.get_num_links, which leaves out planes reserved for dispatch, answers 1 on ttnn's
# mock n300 with FABRIC_1D (tests/host/mock/test_mock_mesh.py asks it).
ETH_DISPATCH_RESERVED_LINKS = 1
ETH_CCL_LINKS_PER_NEIGHBOUR_PAIR = ETH_LINKS_PER_NEIGHBOUR_PAIR - ETH_DISPATCH_RESERVED_LINKS

# ---- the worker-fed path of ttnn's collectives (the mesh model's second bound; docs/TIMING.md, "Ethernet")
# Payload of one fabric packet on a Wormhole 1D fabric: 4352 B, what ttnn 0.81.1's
# ttnn.get_tt_fabric_max_payload_size_bytes() answers under FABRIC_1D and FABRIC_1D_RING (asked on ttnn's
# mock n300 by tests/host/mock/mesh_driver.py). ttnn's all_gather packs whole pages into it.
FABRIC_MAX_PAYLOAD_BYTES = 4352
# A packet's pages land by one scatter write of at most 4 chunks (NOC_SCATTER_WRITE_MAX_CHUNKS, ttnn wheel
# tt_metal/hw/inc/hostdev/fabric_edm_packet_header.hpp; ccl_common.cpp validate_packet_size calls the most
# whole pages that fit, up to that many, a packet's ideal content): 2 bf16 tiles (4096 B) or 4 bfp8 tiles
# (4352 B) a packet.
FABRIC_SCATTER_WRITE_MAX_CHUNKS = 4
# The workers of one direction of one link share one fabric mux core, which owns the link's connection
# (ttnn 0.81.1 ccl/all_gather/device/all_gather_unicast_factory.cpp: 2 workers a direction on Wormhole,
# so a mux). Every packet of that direction passes it, at the rate tt-metal's fabric mux microbenchmark
# measures on Wormhole (tests/tt_metal/microbenchmarks/ethernet/fabric_mux_bandwidth_golden.csv,
# "full_size_channel_packet_size": 8 channels of 8 buffers, 10000 packets): bytes per cycle at the 1 GHz
# clock, by packet payload; device-measured. ttnn's reduce-scatter sends through the newer mux (v2), whose
# own benchmark forwards 8.5 GB/s with one 4352 B packet in flight and 16.9 with two
# (fabric_mux_v2_throughput_golden_wormhole_b0.csv); the same v1 rates are charged for it, an estimate
# inside that range.
FABRIC_MUX_BYTES_PER_CYCLE_BY_PAYLOAD = ((16, 0.158602), (1024, 3.13676), (2048, 5.64541), (4096, 9.65427))

# ---- the host link: a Wormhole card's PCIe (the modeled host transfers of bench ttft; docs/TIMING.md, "Host link")
# n150 and n300 cards attach by PCIe Gen4 x16. What the link delivers is not its raw rate but what tt-metal's fast
# dispatch moves through it: EnqueueWriteBuffer / EnqueueReadBuffer of an interleaved DRAM buffer, device 0 of
# tt-metal's host-device bandwidth benchmark (benchmark_rw_buffer over a MeshDevice, 512 MiB transfers; tt-metal
# PR #25791's table, MiB/s turned into bytes/s). The table names no card; its device-number column implies a
# multi-chip machine, read here as a Wormhole n300 / T3000: an assumption. By page size: a bf16 tile or a
# row-major page is 2048 B, an fp32 tile 4096 B. Linear between the points, flat outside them. Device-measured.
PCIE_H2D_BYTES_PER_S_BY_PAGE = ((1024, 12.771e9), (2048, 15.071e9), (4096, 15.009e9), (8192, 14.767e9))
PCIE_D2H_BYTES_PER_S_BY_PAGE = ((1024, 7.809e9), (2048, 9.427e9), (4096, 11.462e9), (8192, 12.177e9))
# Share of those rates a transfer gets, by cost setting. low and central: the benchmark's (no faster
# Wormhole measurement was found; the Gen4 x16 link's ~31.5 GB/s raw is a ceiling nobody reports reaching).
# high 0.5, an estimate: a card in an x8 slot halves the link (tt-metal #20518 compared n150s in x16 and x8
# slots and found an n300's local chip slower than an n150, tt-umd #790), and older dispatch measured
# 3.9 GB/s down and 1.1-1.9 GB/s up for the same benchmark (tt-metal PR #7759, WH, 2024).
PCIE_RATE_SHARE_BY_SETTING = {"low": 1.0, "central": 1.0, "high": 0.5}
# Fixed time of one blocking transfer call, by direction, the same benchmark's 32 KiB transfers: 32768 B took
# 121.6 us down (257 MiB/s) and 63.0 us up (496 MiB/s), nearly all of it not the bytes (2-3 us at the rates
# above). Central: those, less the bytes' time. high: the same. low: half, an estimate (a host that queues
# its reads without waiting on each would pay less; the engine waits on each).
PCIE_H2D_CALL_S = 119.4e-6
PCIE_D2H_CALL_S = 59.5e-6
PCIE_CALL_SHARE_BY_SETTING = {"low": 0.5, "central": 1.0, "high": 1.0}
# Chips behind one PCIe link: an n300 card has two, and only the first (its "L" chip) has PCIe; the second's
# host traffic crosses the first's Ethernet over the link reserved for dispatch (ETH_DISPATCH_RESERVED_LINKS;
# BasicEthernetGuide, "N300"). A T3000 is four n300 cards, each with its own link.
CHIPS_PER_PCIE_LINK_N300 = 2
