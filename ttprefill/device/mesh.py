"""SimMesh: an executor of R x C simulated Wormhole chips, with ttnn's tensor placement and collectives.

What it mirrors of ttnn (0.81.1; the semantics are those of ttnn's mesh mappers and of the golden
functions ttnn attaches to its collectives, ttnn/operations/ccl.py):

- A mesh tensor has one shard per chip, all of the same shape, at the same DRAM address on every chip
  (ttnn allocates a MeshBuffer in lock step over the mesh). Its `shape` is the per-chip shape, as a
  ttnn mesh tensor's is; `global_shape` is what composing the shards gives.
- Placement, one entry per mesh axis: `Replicate()` or `Shard(dim)` (ttnn.PlacementReplicate /
  PlacementShard in a MeshMapperConfig). `shard_placements(dim)` splits one tensor dimension over every
  chip in row-major order, as ttnn.ShardTensorToMesh does; `REPLICATE` copies it to every chip
  (ReplicateTensorToMesh). Downloads compose as ConcatMeshToTensor / create_mesh_composer: shards of a
  sharded axis are concatenated in chip order, a replicated axis contributes its first chip's copy.
- Programs: `run(program)` runs the same Program on every chip (addresses coincide, so one Program fits
  all); `run_per_chip({(r, c): program})` gives chips their own programs, e.g. other runtime args, as
  ttnn.MeshProgramDescriptor does (every chip needs one). Chips run concurrently: a step's time is the
  slowest chip's.
- Collectives over a mesh axis (`cluster_axis`) or the whole mesh in row-major order (None; on a 2-D
  mesh ttnn's 1-D fabrics allow that for reductions only), on a line or a ring: all_gather(dim) concatenates a group's shards in chip order; reduce_scatter(dim) sums the
  group's tensors and gives position i of the group chunk i along dim; all_reduce sums. Gathers copy
  bytes exactly, in any format (ttnn's all_gather takes any dtype). Sums: each add is done in the
  reducing chip's DST and packed in the tensor's own format, so every partial sum a chip passes on, and
  the result, is stored in that format. ttnn 0.81.1's reduce-scatter kernels (reduce_scatter_minimal_async
  line_reduction.cpp / ring_reduction.cpp: add_tiles of the input CB and the received partial's CB, then
  pack_tile) run with the input's data format on every CB (input, intermediate, output) and its
  intermediate tensor in the input dtype (reduce_scatter_minimal_async_program.cpp; reduce_scatter
  docstring: "the output preserves the input dtype"), with fp32 DST only for FLOAT32 inputs
  (ccl_common.cpp resolve_fp32_acc_compute_kernel_config). So a bf16 or bfp8 partial is rounded to bf16 in
  the 16-bit DST, then packed to its format (a bfp8 tile's shared exponents per face row: bfp8 rounding
  at every hop, formats.py); fp32 partials stay fp32. all_reduce's docstring agrees ("the reduction is
  performed in BFLOAT16; BFLOAT8_B inputs are up-cast to BFLOAT16 for the reduction and cast back").
  The order of the adds is inferred from tt-metal's CCL developer guide, not read from
  the kernels: on a ring a chunk's partial starts at the chip after its owner and goes round to the
  owner, which adds its own last; on a line the partials from both ends meet at the owner. all_reduce
  is ttnn's composite: a reduce-scatter along the last dim, then an all-gather, when the last dim splits
  into whole tiles per chip, else an all-broadcast after which every chip sums in chip order.
- Time: each collective's modeled time is mesh_timing.collective_time (Ethernet links, hops,
  handshake; docs/TIMING.md). Collectives do not overlap programs.
"""

from __future__ import annotations

import time
from collections.abc import Mapping
from dataclasses import dataclass, field

import numpy as np

from ttprefill.hw import CLOCK_HZ, ETH_CCL_LINKS_PER_NEIGHBOUR_PAIR, TILE

from . import formats
from .executor import TO_DEVICE, TO_HOST, Capabilities, HostTraffic, RunReport
from .mesh_placement import (
    REPLICATE,
    Replicate,
    Shard,
    check_placements,
    compose,
    gather_label,
    global_shape,
    norm_dim,
    reduce_label,
    scatter_label,
    shard_placements,
    split,
)
from .mesh_timing import LINE, MESH_TOPOLOGIES, NO_FABRIC, RING, TOPOLOGIES, collective_time
from .program import GRID_X, GRID_Y, CoreCoord, DataFormat, Program
from .sim_device import DEFAULT_COST_SETTING, SimDevice
from .tensor import DeviceTensor

__all__ = ["MeshTensor", "REPLICATE", "Replicate", "Shard", "SimMesh", "WIRED_RINGS", "shard_placements"]


# Meshes whose wiring closes an axis into a ring: a T3000 opened as 1x8 is the ring round its 2x4
# perimeter (tech_reports/EthernetMultichip/BasicEthernetGuide.md, T3000). ttnn's fabric graph for the
# T3000 as 2x4 declares a mesh, not a torus, so neither of its axes is a ring.
WIRED_RINGS: dict[tuple[int, int], frozenset[int]] = {(1, 8): frozenset({1})}


@dataclass
class MeshTensor(DeviceTensor):
    """A tensor over the mesh: `shape` is each chip's shard, `shards` the per-chip tensors (row-major)."""

    placements: tuple = REPLICATE
    shards: list = field(default_factory=list, repr=False)

    @property
    def global_shape(self) -> tuple[int, ...]:
        return global_shape(self.shape, self.placements, self.device.mesh_shape)

    def __repr__(self) -> str:
        return (f"MeshTensor(shape={self.shape}, global_shape={self.global_shape}, format={self.data_format.name}, "
                f"placements={self.placements}, address={self.address:#x})")


def stored(values: np.ndarray, data_format: DataFormat) -> np.ndarray:
    """A reduction's partial sum as the reducing chip stores it: fp32 kept; otherwise rounded to bf16 (the
    16-bit DST the add lands in) and packed in `data_format` (for block floats the shared exponent of each
    face row of each 32x32 tile, so the array's last two dims are the tiled ones)."""
    values = np.asarray(values, np.float32)
    if data_format is DataFormat.Float32:
        return values
    values = formats.round_to_bf16(values)
    if data_format is DataFormat.Float16_b:
        return values
    return formats.from_device_bytes(formats.to_device_bytes(values, data_format), data_format, values.shape)


def _accumulate(values: list[np.ndarray], data_format: DataFormat) -> np.ndarray:
    """values[0] + values[1] + ... in order, each partial stored as the reducing chip stores it (`stored`).
    The inputs are read in their own format (a tensor of that format holds them exactly)."""
    acc = stored(values[0], data_format)
    for v in values[1:]:
        acc = stored(acc + stored(v, data_format), data_format)
    return acc


def _reduce_chunk(parts: list[np.ndarray], owner: int, topology: str, data_format: DataFormat) -> np.ndarray:
    """The sum that lands on group position `owner` (see the module docstring for the order)."""
    n = len(parts)
    if n == 1:
        return _accumulate(parts, data_format)
    if topology == RING and n > 2:
        return _accumulate([parts[(owner + k) % n] for k in range(1, n + 1)], data_format)
    left, right = parts[:owner], parts[owner + 1:][::-1]
    acc = parts[owner]
    for side in (left, right):
        if side:
            acc = _accumulate([_accumulate(side, data_format), acc], data_format)
    return _accumulate([acc], data_format)


class SimMesh:
    """R x C simulated Wormhole chips (each a SimDevice) joined by Ethernet, with ttnn's collectives."""

    grid = (GRID_X, GRID_Y)

    def __init__(self, mesh_shape: tuple[int, int] = (1, 2), topology: str = LINE, *,
                 links: int = ETH_CCL_LINKS_PER_NEIGHBOUR_PAIR, ring_axes=None, timing_only: bool = False,
                 trace: bool = False, costs: str = DEFAULT_COST_SETTING, spmd_first_chip_only: bool = False):
        shape = tuple(int(s) for s in mesh_shape)
        if len(shape) != 2 or any(s < 1 for s in shape):
            raise ValueError(f"mesh_shape must be two positive ints (rows, cols), got {mesh_shape!r}")
        if topology not in MESH_TOPOLOGIES:
            raise ValueError(f"unknown topology {topology!r}; choose one of {', '.join(MESH_TOPOLOGIES)} "
                             f"(ttnn's FABRIC_1D is a line, FABRIC_1D_RING a ring; {NO_FABRIC!r}: no fabric, no "
                             "collectives)")
        if links < 1:
            raise ValueError(f"links per neighbouring chip pair must be at least 1, got {links}")
        self.mesh_shape = shape
        self.topology = topology
        self.links = int(links)
        self.ring_axes = frozenset(WIRED_RINGS.get(shape, frozenset()) if ring_axes is None else ring_axes)
        if spmd_first_chip_only and not timing_only:
            raise ValueError("spmd_first_chip_only needs timing_only=True: with data every chip must compute its own")
        self.timing_only = timing_only
        # Timing only, one program on every chip: simulate the first chip and take its report for all. The
        # simulator is deterministic and a timing-only run's data are zeros, so chips running the same
        # program on same-shaped shards model the same cycles, unless a kernel's control flow or addressing
        # reads values the host wrote differently per chip (a page table that differs by chip, say): opt in.
        self.spmd_first_chip_only = spmd_first_chip_only
        self.trace = trace
        self.costs = costs
        self.chips = [SimDevice(timing_only=timing_only, trace=trace, costs=costs)
                      for _ in range(shape[0] * shape[1])]
        self.capabilities = Capabilities(models_time=True, holds_data=True, has_mesh=len(self.chips) > 1,
                                         mesh_shape=shape)
        self.host_traffic = HostTraffic()
        self.ethernet_bytes = 0  # modeled bytes over the busiest link direction, summed over collectives
        self.last_report: RunReport | None = None

    @property
    def num_chips(self) -> int:
        return len(self.chips)

    def chip(self, row: int, col: int) -> SimDevice:
        rows, cols = self.mesh_shape
        if not (0 <= row < rows and 0 <= col < cols):
            raise ValueError(f"chip ({row}, {col}) is outside the {rows}x{cols} mesh")
        return self.chips[row * cols + col]

    # ------------------------------------------------------------------ placement
    def compose(self, shards: list[np.ndarray], placements: tuple) -> np.ndarray:
        """One array from per-chip arrays (ttnn's ConcatMeshToTensor / create_mesh_composer)."""
        return compose(shards, placements, self.mesh_shape)

    # ------------------------------------------------------------------ tensors
    def _allocate_lockstep(self, shape, data_format: DataFormat, placements: tuple) -> MeshTensor:
        shards = [chip.allocate(shape, data_format) for chip in self.chips]
        addresses = {s.address for s in shards}
        if len(addresses) != 1:
            for chip, s in zip(self.chips, shards):
                chip.free(s)
            raise RuntimeError("the chips' allocators diverged (a tensor was allocated on one chip alone); allocate "
                               "mesh tensors through the SimMesh only")
        return MeshTensor(shards[0].shape, DataFormat(data_format), shards[0].address, self,
                          placements=placements, shards=shards)

    def allocate(self, shape: tuple[int, ...], data_format: DataFormat, placements=REPLICATE) -> MeshTensor:
        """A tensor of per-chip `shape` on every chip; `placements` says how its shards compose."""
        shape = tuple(int(s) for s in shape)
        return self._allocate_lockstep(shape, data_format, check_placements(placements, len(shape)))

    def upload(self, array: np.ndarray, data_format: DataFormat, placements=REPLICATE) -> MeshTensor:
        array = np.asarray(array)
        placements = check_placements(placements, array.ndim)
        parts = split(array, placements, self.mesh_shape)
        t = self._allocate_lockstep(parts[0].shape, data_format, placements)
        self._write_parts(t, parts)
        return t

    def write(self, tensor: MeshTensor, array: np.ndarray) -> None:
        """Write a whole (global) array, distributed by the tensor's placements."""
        self._check_live(tensor)
        array = np.asarray(array)
        if tuple(array.shape) != tensor.global_shape:
            raise ValueError(f"cannot write an array of shape {array.shape} into a mesh tensor of global shape "
                             f"{tensor.global_shape}")
        self._write_parts(tensor, split(array, tensor.placements, self.mesh_shape))

    def write_shard(self, tensor: MeshTensor, chip: int, array: np.ndarray) -> None:
        """Chip `chip`'s (row-major index) shard <- array, of the per-chip shape: one device's part of a mesh
        tensor built from per-chip host tensors (ttnn.from_host_shards), when every chip holds its own values."""
        self._check_live(tensor)
        if not 0 <= chip < self.num_chips:
            raise ValueError(f"chip {chip} is outside the {self.num_chips} chips of the mesh (0..{self.num_chips - 1})")
        array = np.asarray(array)
        if tuple(array.shape) != tuple(tensor.shape):
            raise ValueError(f"a shard of this mesh tensor is {tensor.shape}; got an array of shape {array.shape}")
        self.chips[chip].write(tensor.shards[chip], array)
        self.host_traffic.add(TO_DEVICE, "write", tensor.shards[chip].nbytes)

    def _write_parts(self, tensor: MeshTensor, parts: list[np.ndarray]) -> None:
        for chip, shard, part in zip(self.chips, tensor.shards, parts):
            chip.write(shard, part)
            self.host_traffic.add(TO_DEVICE, "write", shard.nbytes)

    def _check_replicated(self, tensor: MeshTensor, what: str) -> None:
        if tensor.placements != REPLICATE:
            raise ValueError(f"{what} addresses the pages of one copy; this tensor is {tensor.placements}: use "
                             "download_shards / write with the global array for a sharded tensor")

    def write_pages(self, tensor: MeshTensor, first_page: int, data: np.ndarray) -> None:
        """The same pages written to every chip's copy of a replicated tensor."""
        self._check_live(tensor)
        self._check_replicated(tensor, "write_pages")
        for chip, shard in zip(self.chips, tensor.shards):
            chip.write_pages(shard, first_page, data)
        self.host_traffic.add(TO_DEVICE, "write", len(data) * self.num_chips)

    def read_pages(self, tensor: MeshTensor, first_page: int, num_pages: int) -> np.ndarray:
        """Pages of the first chip's copy of a replicated tensor."""
        self._check_live(tensor)
        self._check_replicated(tensor, "read_pages")
        self.host_traffic.add(TO_HOST, "read", num_pages * tensor.page_size)
        return self.chips[0].read_pages(tensor.shards[0], first_page, num_pages)

    def read_shard_pages(self, tensor: MeshTensor, chip: int, first_page: int, num_pages: int) -> np.ndarray:
        """Pages of chip `chip`'s (row-major index) shard, of any tensor: one device's part read back alone."""
        self._check_live(tensor)
        if not 0 <= chip < self.num_chips:
            raise ValueError(f"chip {chip} is outside the {self.num_chips} chips of the mesh (0..{self.num_chips - 1})")
        self.host_traffic.add(TO_HOST, "read", num_pages * tensor.page_size)
        return self.chips[chip].read_pages(tensor.shards[chip], first_page, num_pages)

    def dram_bytes_in_use(self) -> int:
        """The fullest chip's DRAM in use (mesh tensors take the same bytes on every chip)."""
        return max(chip.dram_bytes_in_use() for chip in self.chips)

    def download_shards(self, tensor: MeshTensor) -> list[np.ndarray]:
        self._check_live(tensor)
        out = [chip.download(s) for chip, s in zip(self.chips, tensor.shards)]
        self.host_traffic.add(TO_HOST, "read", sum(s.nbytes for s in tensor.shards))
        return out

    def download(self, tensor: MeshTensor) -> np.ndarray:
        """The tensor composed by its placements (replicated axes read their first chip)."""
        return self.compose(self.download_shards(tensor), tensor.placements)

    def free(self, tensor: MeshTensor) -> None:
        self._check_live(tensor)
        for chip, s in zip(self.chips, tensor.shards):
            chip.free(s)
        tensor.freed = True

    def _check_live(self, tensor) -> None:
        if not isinstance(tensor, MeshTensor) or tensor.device is not self:
            raise ValueError("tensor belongs to another device (mesh tensors come from this SimMesh)")
        if tensor.freed:
            raise ValueError("tensor was freed")

    # ------------------------------------------------------------------ programs
    def worker_noc_coord(self, core: CoreCoord) -> tuple[int, int]:
        return self.chips[0].worker_noc_coord(core)

    def run(self, program: Program) -> RunReport:
        """The same program on every chip, concurrently: the step takes as long as the slowest chip."""
        if self.spmd_first_chip_only:
            t0 = time.perf_counter()
            first = self.chips[0].run(program)
            report = RunReport(program.name, time.perf_counter() - t0, first.cycles, first.cores, first.counters,
                               first.jit_compiled, first.jit_cached, zones=first.zones,
                               extra={"per_chip_cycles": {"0,0": first.cycles}, "simulated_chips": 1})
            self.last_report = report
            return report
        return self.run_per_chip({(r, c): program for r in range(self.mesh_shape[0])
                                  for c in range(self.mesh_shape[1])}, name=program.name)

    def run_per_chip(self, programs: Mapping[tuple[int, int], Program], name: str | None = None) -> RunReport:
        """Every chip runs its own program (ttnn.MeshProgramDescriptor). Every chip needs one: ttnn 0.81.1's
        generic_op crashes on a descriptor that leaves chips out (seen on its mock n300 and T3000)."""
        rows, cols = self.mesh_shape
        missing = [(r, c) for r in range(rows) for c in range(cols) if (r, c) not in programs]
        if missing:
            raise ValueError(f"run_per_chip needs a program for every chip of the {rows}x{cols} mesh; missing "
                             f"{missing} (give idle chips an empty program or use run() for one program on all)")
        t0 = time.perf_counter()
        per_chip = {}
        for coord, program in programs.items():
            per_chip[tuple(coord)] = self.chip(*coord).run(program)
        reports = list(per_chip.values())
        slowest = max(reports, key=lambda r: r.cycles)
        report = RunReport(name or slowest.program, time.perf_counter() - t0, slowest.cycles, slowest.cores,
                           slowest.counters, sum(r.jit_compiled for r in reports), sum(r.jit_cached for r in reports),
                           zones=slowest.zones,
                           extra={"per_chip_cycles": {f"{r},{c}": rep.cycles for (r, c), rep in per_chip.items()}})
        self.last_report = report
        return report

    # ------------------------------------------------------------------ collectives
    def groups(self, cluster_axis: int | None) -> list[list[int]]:
        """Chip indices (row-major) of each independent collective group, in group order."""
        rows, cols = self.mesh_shape
        if cluster_axis is None:
            return [list(range(rows * cols))]
        if cluster_axis == 0:
            return [[r * cols + c for r in range(rows)] for c in range(cols)]
        if cluster_axis == 1:
            return [[r * cols + c for c in range(cols)] for r in range(rows)]
        raise ValueError(f"cluster_axis must be 0, 1 or None (the whole mesh), got {cluster_axis!r}")

    def axes(self, cluster_axis: int | None) -> list[int]:
        """The mesh axes a collective runs over, in the order they run: the cluster axis, or for the whole
        mesh each axis of more than one chip, columns first (inferred: ttnn composes a whole-mesh
        reduce-scatter or all-reduce on a 1-D fabric axis by axis)."""
        if cluster_axis is not None:
            self.groups(cluster_axis)  # checks the axis
            return [cluster_axis]
        return [a for a in (1, 0) if self.mesh_shape[a] > 1] or [1]

    def _topology(self, cluster_axis: int | None, topology: str | None) -> str:
        if self.topology == NO_FABRIC:
            raise ValueError(f"a collective runs over the mesh's fabric, and this mesh was opened without one "
                             f"(topology {NO_FABRIC!r}, as for a pipeline split): open it with topology {LINE!r} or "
                             f"{RING!r}")
        topology = topology or self.topology
        if topology not in TOPOLOGIES:
            raise ValueError(f"unknown topology {topology!r}; choose one of {', '.join(TOPOLOGIES)}")
        if topology == RING:
            rows, cols = self.mesh_shape
            for axis in self.axes(cluster_axis):
                if self.mesh_shape[axis] > 2 and axis not in self.ring_axes:
                    raise ValueError(
                        f"the {rows}x{cols} mesh has no ring over axis {axis}: its wiring does not close it (rings: "
                        f"{sorted(self.ring_axes) or 'none'}); use topology='line' or open the mesh with "
                        f"ring_axes={{{axis}}} if the chips are cabled as a ring")
        return topology

    def _collective_report(self, kind: str, tensor: MeshTensor, cluster_axis: int | None, topology: str,
                           t0: float) -> None:
        """Time the collective stage by stage (one stage per mesh axis it runs over); the tensor's tiles are
        the pages its fabric packets carry."""
        nbytes, page_bytes = tensor.shards[0].nbytes, tensor.data_format.tile_bytes
        stages = []
        for axis in self.axes(cluster_axis):
            n = self.mesh_shape[axis]
            stages.append(collective_time(kind, nbytes, n, topology, self.links, self.costs, page_bytes))
            if kind == "reduce_scatter":
                nbytes = nbytes / n  # the next axis reduces the chunks this one left
        seconds = sum(t.seconds for t in stages)
        busiest = sum(t.busiest_link_bytes for t in stages)
        self.ethernet_bytes += int(busiest)
        self.last_report = RunReport(kind, time.perf_counter() - t0, int(round(seconds * CLOCK_HZ)),
                                     counters={"ethernet_busiest_link_bytes": int(busiest)},
                                     extra={"collective": [t.as_dict() for t in stages], "modeled_s": seconds})

    def _output(self, shape, tensor: MeshTensor, placements: tuple, per_chip: dict[int, np.ndarray] | None) -> MeshTensor:
        out = self._allocate_lockstep(tuple(shape), tensor.data_format, placements)
        if per_chip is not None:
            for i, chip in enumerate(self.chips):
                chip.write(out.shards[i], per_chip[i])
        return out

    def _inputs(self, tensor: MeshTensor) -> list[np.ndarray] | None:
        """Each chip's shard, read without counting host traffic (on the device it never leaves the mesh);
        None when timing only (kernels' writes are dropped, so outputs read as zeros)."""
        self._check_live(tensor)
        if self.timing_only:
            return None
        return [chip.download(s) for chip, s in zip(self.chips, tensor.shards)]

    def all_gather(self, tensor: MeshTensor, dim: int, cluster_axis: int | None = None,
                   topology: str | None = None) -> MeshTensor:
        """ttnn.all_gather: each chip ends with its group's shards concatenated along `dim` in group order."""
        t0 = time.perf_counter()
        rows, cols = self.mesh_shape
        if cluster_axis is None and rows > 1 and cols > 1:
            raise ValueError(f"all_gather over the whole {rows}x{cols} mesh needs a 2-D fabric; on a line or ring (1-D) "
                             "fabric ttnn requires cluster_axis: gather along axis 1, then along axis 0")
        dim = norm_dim(dim, len(tensor.shape))
        topology = self._topology(cluster_axis, topology)
        groups = self.groups(cluster_axis)
        n = len(groups[0])
        shards = self._inputs(tensor)
        per_chip = None
        if shards is not None:
            per_chip = {}
            for g in groups:
                gathered = np.concatenate([shards[i] for i in g], axis=dim)
                per_chip.update({i: gathered for i in g})
        shape = list(tensor.shape)
        shape[dim] *= n
        out = self._output(shape, tensor, gather_label(tensor.placements, dim), per_chip)
        self._collective_report("all_gather", tensor, cluster_axis, topology, t0)
        return out

    def _scatter_shape(self, tensor: MeshTensor, dim: int, n: int) -> list[int]:
        shape = list(tensor.shape)
        if shape[dim] % n:
            raise ValueError(f"cannot reduce-scatter dim {dim} of size {shape[dim]} over {n} chips: {shape[dim]} is not "
                             f"a multiple of {n}; pad dim {dim} to a multiple of {n} or use all_reduce")
        shape[dim] //= n
        return shape

    def reduce_scatter(self, tensor: MeshTensor, dim: int, cluster_axis: int | None = None,
                       topology: str | None = None) -> MeshTensor:
        """ttnn.reduce_scatter (sum): group position i ends with chunk i (along `dim`) of the group's sum."""
        t0 = time.perf_counter()
        dim = norm_dim(dim, len(tensor.shape))
        topology = self._topology(cluster_axis, topology)
        groups = self.groups(cluster_axis)
        n = len(groups[0])
        shape = self._scatter_shape(tensor, dim, n)
        shards = self._inputs(tensor)
        per_chip = None
        if shards is not None:
            per_chip = {}
            for g in groups:
                chunks = [np.split(shards[i], n, axis=dim) for i in g]
                for pos, i in enumerate(g):
                    per_chip[i] = _reduce_chunk([c[pos] for c in chunks], pos, topology, tensor.data_format)
        out = self._output(shape, tensor, scatter_label(tensor.placements, dim, cluster_axis, self.mesh_shape), per_chip)
        self._collective_report("reduce_scatter", tensor, cluster_axis, topology, t0)
        return out

    def all_reduce(self, tensor: MeshTensor, cluster_axis: int | None = None, topology: str | None = None) -> MeshTensor:
        """ttnn.all_reduce (sum): every chip of a group ends with the group's sum."""
        t0 = time.perf_counter()
        topology = self._topology(cluster_axis, topology)
        groups = self.groups(cluster_axis)
        n = len(groups[0])
        shards = self._inputs(tensor)
        per_chip = None
        if shards is not None:
            last = len(tensor.shape) - 1
            composite = tensor.shape[last] % (n * TILE) == 0
            per_chip = {}
            for g in groups:
                if composite:  # reduce-scatter along the last dim, then all-gather the chunks
                    chunks = [np.split(shards[i], n, axis=last) for i in g]
                    total = np.concatenate([_reduce_chunk([c[pos] for c in chunks], pos, topology, tensor.data_format)
                                            for pos in range(n)], axis=last)
                else:  # all-broadcast, then every chip sums the group in chip order
                    total = _accumulate([shards[i] for i in g], tensor.data_format)
                per_chip.update({i: total for i in g})
        out = self._output(tensor.shape, tensor, reduce_label(tensor.placements, cluster_axis), per_chip)
        self._collective_report("all_reduce", tensor, cluster_axis, topology, t0)
        return out
