"""TTDevice: runs a Program on a Wormhole card through ttnn.generic_op.

The translation Program -> ttnn.ProgramDescriptor (`program_to_descriptor`) needs ttnn but no card:
descriptor objects are plain host objects, so CI builds and checks them (tests/host). Opening a
device needs a card, or ttnn's mock cluster ($TT_METAL_MOCK_CLUSTER_DESC_PATH); without either
TTDevice fails at once with TTDeviceUnavailable.

Nothing here has run on silicon yet (no card is attached to the machines this was written on): the
descriptor translation is checked against the real ttnn package, and the device calls run on ttnn's
mock n150 and n300 in CI (tests/host/mock), where nothing executes and reads return zeros.
"""

from __future__ import annotations

import hashlib
import os
import time
from dataclasses import dataclass, field, fields
from functools import partial
from pathlib import Path

import numpy as np

from . import formats
from .program import GRID_X, GRID_Y, NUM_CIRCULAR_BUFFERS, CoreRangeSet, DataFormat, Kernel, MathFidelity, Program, ProgramError, Role
from .executor import TO_DEVICE, TO_HOST, Capabilities, HostTraffic, RunReport, run_each
from .mesh_placement import (
    REPLICATE,
    Shard,
    check_placements,
    compose,
    gather_label,
    global_shape,
    norm_dim,
    reduce_label,
    scatter_label,
    split,
)
from .tensor import DeviceTensor
from .mesh_timing import LINE, MESH_TOPOLOGIES, NO_FABRIC, RING
from .ttnn_env import import_ttnn

# ttnn's fabric configuration for each collective topology (set before the mesh opens); NO_FABRIC sets none.
FABRIC_CONFIGS = {LINE: "FABRIC_1D", RING: "FABRIC_1D_RING"}
DEVICE_NODES = Path("/dev/tenstorrent")  # the kernel driver's device nodes, one per PCIe chip
# Command queues the device opens with (ttnn.open_mesh_device's num_command_queues): programs and collectives go
# on the first, host transfers issued ahead (read_ahead, write_ahead) on the second, so they run beside the
# programs (tt-metal's two-command-queue pattern).
PROGRAM_QUEUE, TRANSFER_QUEUE = 0, 1
COMMAND_QUEUES = 2
# Sub-devices (open_sub_devices): the programs' cores are sub-device 0, the collectives' workers sub-device 1.
COMPUTE_SUB_DEVICE, COLLECTIVES_SUB_DEVICE = 0, 1
# When set, ttnn builds a mock cluster from this tt-umd cluster descriptor instead of opening chips:
# the host stack (allocators, JIT, dispatch, program cache) runs, no kernel executes, reads give zeros.
MOCK_CLUSTER_ENV = "TT_METAL_MOCK_CLUSTER_DESC_PATH"


def sub_device_core_ranges(compute_cores: int, grid: tuple[int, int] = (GRID_X, GRID_Y)):
    """The worker grid split in two, as inclusive (x0, y0, x1, y1) rectangles: the first `compute_cores` cores row by
    row (where the planners lay programs out, hw.compute_sub_device), and the rest (the collectives' workers)."""
    cols, rows = grid
    if not 0 < compute_cores < cols * rows:
        raise ValueError(f"a compute sub-device of {compute_cores} cores leaves no cores of the {cols}x{rows} grid to "
                         "the collectives (or has none): give 1 .. " + str(cols * rows - 1))

    def ranges(first: int, last: int) -> list[tuple[int, int, int, int]]:  # cores first .. last - 1, row by row
        out, core = [], first
        while core < last:
            y, x = divmod(core, cols)
            if x == 0 and last - core >= cols:  # whole rows at once
                full = (last - core) // cols
                out.append((0, y, cols - 1, y + full - 1))
                core += full * cols
            else:
                end = min(last, (y + 1) * cols)
                out.append((x, y, end - 1 - y * cols, y))
                core = end
        return out

    return ranges(0, compute_cores), ranges(compute_cores, cols * rows)


class TTDeviceUnavailable(RuntimeError):
    """No Tenstorrent card can be opened from this machine."""


class TTDeviceClosed(RuntimeError):
    """The device was closed (or its chips were handed to its stage devices): it can run nothing."""


def card_present() -> bool:
    """Whether the Tenstorrent kernel driver exposes at least one chip (no ttnn call needed)."""
    return DEVICE_NODES.is_dir() and any(DEVICE_NODES.iterdir())


def mock_cluster() -> Path | None:
    """The cluster descriptor ttnn will mock a cluster from, when $TT_METAL_MOCK_CLUSTER_DESC_PATH names one."""
    value = os.environ.get(MOCK_CLUSTER_ENV)
    return Path(value) if value else None


def chip_grids(ttnn, mesh) -> list[tuple[int, int, int]]:
    """(chip id, x, y) of each chip's worker grid. The mesh's own grid is its first chip's, so every
    chip of a larger mesh is asked through a one-chip submesh of its own."""
    if mesh.get_num_devices() == 1:
        g = mesh.compute_with_storage_grid_size()
        return [(int(mesh.get_device_ids()[0]), g.x, g.y)]
    out = []
    for sub in mesh.create_submeshes(ttnn.MeshShape(1, 1)):
        g = sub.compute_with_storage_grid_size()
        out.append((int(sub.get_device_ids()[0]), g.x, g.y))
    return out


# --------------------------------------------------------------------------- translation
def ttnn_data_type(ttnn, data_format: DataFormat):
    """The ttnn DataType whose tt::DataFormat is `data_format` (ttnn converts it back for CBs)."""
    table = {
        DataFormat.Float16_b: ttnn.bfloat16,
        DataFormat.Float32: ttnn.float32,
        DataFormat.Bfp8_b: ttnn.bfloat8_b,
        DataFormat.Bfp4_b: ttnn.bfloat4_b,
        DataFormat.Int32: ttnn.int32,
        DataFormat.UInt32: ttnn.uint32,
    }
    return table[DataFormat(data_format)]


# numpy element types of the host arrays for integer formats (every float format is float32 on the host).
_HOST_DTYPE = {DataFormat.UInt32: np.uint32, DataFormat.Int32: np.int32}


def ttnn_math_fidelity(ttnn, fidelity: MathFidelity):
    return getattr(ttnn.MathFidelity, MathFidelity(fidelity).name)


def ttnn_core_range_set(ttnn, cores: CoreRangeSet):
    """A ttnn.CoreRangeSet covering the same cores.

    ttnn rejects overlapping ranges, which a Program may hold (CoreRangeSet.of dedupes cores, but
    ranges built by hand can overlap); those are passed as one range per core instead.
    """
    ranges = list(cores.ranges)
    covered = sum((r.end.x - r.start.x + 1) * (r.end.y - r.start.y + 1) for r in ranges)
    if covered != len(cores.cores()):
        ranges = [r for c in cores.cores() for r in CoreRangeSet.of([c]).ranges]
    return ttnn.CoreRangeSet(
        [ttnn.CoreRange(ttnn.CoreCoord(r.start.x, r.start.y), ttnn.CoreCoord(r.end.x, r.end.y)) for r in ranges]
    )


def _u32(values) -> list[int]:
    return [int(v) & 0xFFFFFFFF for v in values]


def unpack_to_dest_modes(ttnn, cfg) -> list:
    """ttnn's per-CB unpack_to_dest_mode (one entry per CB index) from ComputeConfig.unpack_to_dest_fp32."""
    modes = ttnn.UnpackToDestMode
    return [modes.UnpackToDestFp32 if i in cfg.unpack_to_dest_fp32 else modes.Default for i in range(NUM_CIRCULAR_BUFFERS)]


def kernel_config(ttnn, kernel: Kernel):
    """The processor config: data-movement kernels name their RISC-V and NoC the way tt-metal's
    reader (RISCV_1, NoC 1) and writer (RISCV_0, NoC 0) configs do; compute kernels carry the
    compute config the simulator ran with."""
    if kernel.role is Role.COMPUTE:
        cfg = kernel.compute_config
        descriptor = ttnn.ComputeConfigDescriptor(
            math_fidelity=ttnn_math_fidelity(ttnn, cfg.math_fidelity),
            math_approx_mode=bool(cfg.math_approx_mode),
            fp32_dest_acc_en=bool(cfg.fp32_dest_acc_en),
            bfp8_pack_precise=bool(cfg.bfp8_pack_precise),
        )
        descriptor.unpack_to_dest_mode = unpack_to_dest_modes(ttnn, cfg)
        return descriptor
    processor = ttnn.DataMovementProcessor.RISCV_0 if kernel.role is Role.RISCV_0 else ttnn.DataMovementProcessor.RISCV_1
    if kernel.noc is not None:
        noc = ttnn.NOC.NOC_0 if kernel.noc == 0 else ttnn.NOC.NOC_1
    else:
        noc = ttnn.NOC.RISCV_0_default if kernel.role is Role.RISCV_0 else ttnn.NOC.RISCV_1_default
    return ttnn.DataMovementConfigDescriptor(processor=processor, noc=noc)


def kernel_descriptor(ttnn, kernel: Kernel):
    """One KernelDescriptor. The kernel file goes by absolute path (tt-metal's JIT accepts that) and
    its folder is an include path, for kernel-local helper headers. Role defines (COMPILE_FOR_*,
    NOC_INDEX, MATH_FIDELITY, ...) are not passed: tt-metal's JIT sets them itself from the config."""
    if kernel.is_metal2:
        raise ProgramError(f"kernel {kernel.name} uses Metal 2.0 bindings (args::, dfb::, tensor::, sem::), which "
                           "need tt-metal's ProgramSpec host API; TTDevice builds KernelDescriptors only")
    source = kernel.source.resolve()
    return ttnn.KernelDescriptor(
        kernel_source=str(source),
        source_type=ttnn.KernelDescriptor.SourceType.FILE_PATH,
        core_ranges=ttnn_core_range_set(ttnn, kernel.cores),
        compile_time_args=_u32(kernel.compile_time_args),
        named_compile_time_args=[(str(n), int(v)) for n, v in kernel.named_compile_time_args.items()],
        defines=sorted((str(k), str(v)) for k, v in kernel.defines.items()),
        runtime_args=[(ttnn.CoreCoord(c.x, c.y), _u32(args)) for c, args in sorted(kernel.runtime_args.items())],
        common_runtime_args=_u32(kernel.common_runtime_args),
        config=kernel_config(ttnn, kernel),
        compiler_include_paths=[str(source.parent)],
    )


def program_cache_key(program: Program) -> int:
    """The key of `program` in ttnn's program cache (set as ProgramDescriptor.custom_program_hash).

    ttnn 0.81.1 keys generic_op's cache on a hash of the descriptor that leaves out how many runtime
    args each core has, which cores have them, and the include paths; on a hit it copies the new
    runtime args into the cached program's slots unchecked. Two programs differing only there would
    share an entry, and the second would run with the first one's arg layout. This key covers every
    field of every kernel, circular buffer and semaphore (new fields included, as dataclass fields),
    with runtime args reduced to their count per core: their values (tensor addresses, offsets) are
    exactly what a cache hit is meant to replace. Include paths follow from the kernel source path.
    """
    parts: list = []
    for k in program.kernels:
        for f in fields(k):
            value = getattr(k, f.name)
            if f.name == "runtime_args":
                value = sorted((c.x, c.y, len(a)) for c, a in value.items())
            elif f.name == "common_runtime_args":
                value = len(value)
            elif f.name == "source":
                value = str(Path(value).resolve())
            elif f.name == "cores":
                value = sorted((c.x, c.y) for c in value.cores())
            parts.append((f.name, repr(value)))
    for cb in program.circular_buffers:
        parts.append(("cb", cb.index, int(cb.data_format), cb.page_size, cb.num_pages,
                      sorted((c.x, c.y) for c in cb.cores.cores())))
        parts += [("cb alias", a.index, int(a.data_format), a.page_size) for a in cb.aliases]
    for sem in program.semaphores:
        parts.append(("semaphore", sem.id, sem.initial_value, sorted((c.x, c.y) for c in sem.cores.cores())))
    return int.from_bytes(hashlib.blake2b(repr(parts).encode(), digest_size=8).digest(), "little")


def program_to_descriptor(program: Program, ttnn=None):
    """Translate a backend-neutral Program into a ttnn.ProgramDescriptor (needs ttnn, not a card)."""
    ttnn = ttnn or import_ttnn()
    program.validate()
    kernels = [kernel_descriptor(ttnn, k) for k in program.kernels]
    cbs = [
        ttnn.CBDescriptor(
            total_size=cb.total_size,
            core_ranges=ttnn_core_range_set(ttnn, cb.cores),
            format_descriptors=[
                ttnn.CBFormatDescriptor(
                    buffer_index=v.index,
                    data_format=ttnn_data_type(ttnn, v.data_format),
                    page_size=v.page_size,
                )
                for v in cb.views()
            ],
        )
        for cb in program.circular_buffers
    ]
    semaphores = [
        ttnn.SemaphoreDescriptor(
            id=s.id,
            core_type=ttnn.CoreType.WORKER,
            core_ranges=ttnn_core_range_set(ttnn, s.cores),
            initial_value=s.initial_value,
        )
        for s in program.semaphores
    ]
    descriptor = ttnn.ProgramDescriptor(kernels=kernels, semaphores=semaphores, cbs=cbs)
    descriptor.custom_program_hash = program_cache_key(program)
    return descriptor


# --------------------------------------------------------------------------- the device
@dataclass
class TTTensor(DeviceTensor):
    """A tiled, DRAM-interleaved tensor on the card; `address` is the buffer's real DRAM address."""

    ttnn_tensor: object = field(default=None, repr=False)
    placements: tuple = REPLICATE  # how the per-chip shards compose (device/mesh_placement.py)
    # Chip index -> host shard, for a tensor written chip by chip (TTDevice.write_shard) that has not had
    # every chip's shard yet; empty once written.
    pending_shards: dict = field(default_factory=dict, repr=False, compare=False)

    @property
    def global_shape(self) -> tuple[int, ...]:
        return global_shape(self.shape, self.placements, self.device.capabilities.mesh_shape)

    def accessor_args(self) -> list[int]:
        """The TensorAccessorArgs compile-time args ttnn itself emits for this buffer."""
        ttnn = import_ttnn()
        args = ttnn.TensorAccessorArgs(self.ttnn_tensor)
        if list(args.get_common_runtime_args()):
            raise NotImplementedError(
                "this tensor's TensorAccessorArgs need common runtime args, which the program builders do not pass "
                "(they expect interleaved DRAM tensors configured at compile time)"
            )
        return list(args.get_compile_time_args())


class TTDevice:
    """A Wormhole card (n150: one chip; n300: a 1x2 mesh), driven through ttnn.

    The public surface matches SimDevice: allocate/upload/write/download/free, read_pages/
    write_pages, run(program), worker_noc_coord. On a mesh (as SimMesh): tensors are placed with ttnn's
    mesh mappers (`placements`, replicated by default) and composed with its mesh composers on download;
    `write_shard` / `read_shard_pages` / `download_shards` write and read one chip's shard (what a tensor-parallel
    split, model/tensor_parallel_device.py's MeshSplit, needs for per-chip weights and states);
    `run` runs one program on every chip, `run_per_chip` one per chip through ttnn.MeshProgramDescriptor;
    all_gather / reduce_scatter / all_reduce are ttnn's, over the fabric opened with the mesh
    (FABRIC_1D for topology "line", FABRIC_1D_RING for "ring"; topology "none" opens the mesh without a fabric, for
    chips that run no collective, as the pipeline split's). Programs and collectives are issued, not waited
    for: the card runs them in queue order while the host goes on, and the host waits only for data it reads (and,
    with sub-devices, before a collective; on the mock, before a transfer that must come after the programs:
    _transfers_after_programs). The device opens with two command queues: programs and collectives on
    the first, read_ahead / write_ahead on the second, beside them (the device stack's checkpoint reads and
    next-chunk embeddings). `stage_devices` hands the chips to
    one one-chip TTDevice each, over ttnn submeshes (device/tt_stages.py), for the pipeline split.
    """

    grid = (GRID_X, GRID_Y)

    def __init__(self, mesh_shape: tuple[int, int] = (1, 1), topology: str = "line"):
        mock = mock_cluster() is not None
        if not mock and not card_present():
            raise TTDeviceUnavailable(
                f"no Tenstorrent card found ({DEVICE_NODES} has no device nodes; is the tt-kmd driver loaded and a "
                f"Wormhole n150/n300 installed?). Use --backend sim to run on the simulator."
            )
        ttnn = import_ttnn()
        try:
            available = ttnn.GetNumAvailableDevices()
        except RuntimeError as e:
            raise TTDeviceUnavailable(f"no Tenstorrent card found: ttnn could not enumerate chips ({e})") from None
        wanted = mesh_shape[0] * mesh_shape[1]
        if available < wanted:
            raise TTDeviceUnavailable(f"a {mesh_shape[0]}x{mesh_shape[1]} mesh needs {wanted} chips; ttnn sees {available}")
        if topology not in MESH_TOPOLOGIES:
            raise ValueError(f"unknown topology {topology!r}; choose one of {', '.join(MESH_TOPOLOGIES)}")
        # Collectives between chips run over ttnn's fabric, which is configured before the mesh opens.
        fabric = wanted > 1 and topology != NO_FABRIC
        if fabric:
            ttnn.set_fabric_config(getattr(ttnn.FabricConfig, FABRIC_CONFIGS[topology]))
        try:
            mesh = ttnn.open_mesh_device(ttnn.MeshShape(*mesh_shape), num_command_queues=COMMAND_QUEUES)
        except BaseException:
            if fabric:  # leave ttnn as it was: the next open would find a fabric configured
                ttnn.set_fabric_config(ttnn.FabricConfig.DISABLED)
            raise
        self._init_open(ttnn, mesh, tuple(mesh_shape), topology, mock=mock, fabric=fabric)

    @classmethod
    def over_open_mesh(cls, ttnn, mesh, mesh_shape: tuple[int, int], *, mock: bool) -> "TTDevice":
        """A device over a mesh someone else opened (a parent's one-chip submesh: device/tt_stages.py). Its close()
        closes that mesh only; the fabric stays as its opener configured it."""
        device = cls.__new__(cls)
        device._init_open(ttnn, mesh, tuple(mesh_shape), "line", mock=mock, fabric=False)
        return device

    def _init_open(self, ttnn, mesh, mesh_shape: tuple[int, int], topology: str, *, mock: bool, fabric: bool) -> None:
        """Every field of an open device, over `mesh` (opened by __init__, or given to over_open_mesh). `fabric`:
        whether close() disables ttnn's fabric (the device that configured it does)."""
        self._ttnn, self.mock, self.topology, self._fabric = ttnn, mock, topology, fabric
        self._mesh = mesh
        self._closed_why = "this TTDevice was closed"  # what `mesh` says once it is (a stage device's says why)
        # Sub-devices (open_sub_devices): the loaded manager, and by id(tensor) the collective output each event
        # on the collectives' sub-device stands for, waited for by the first program that reads it.
        self._sub_devices = None
        self._collective_done: dict[int, tuple] = {}
        # The one-chip devices this device's chips were handed to (stage_devices), once made; from then on this
        # device dispatches nothing itself (see `mesh`). Whether it ever made a tensor, which stage_devices refuses.
        self._stages: list | None = None
        self._made_tensors = False
        self._is_stage = False  # a stage device over a parent's submesh (set by tt_stages)
        self.last_report: RunReport | None = None
        self.host_traffic = HostTraffic()
        self._by_address: dict[int, TTTensor] = {}  # each live tensor by its DRAM address, for views of its rows
        # Transfers on the transfer queue, by id(tensor): (tensor, host copy, event) of each read_ahead, (tensor,
        # host tensor, event) of each write_ahead not yet waited for
        self._landed: dict[int, tuple] = {}
        self._inbound: dict[int, tuple] = {}
        chips = mesh.get_num_devices()
        self.capabilities = Capabilities(models_time=False, holds_data=True, has_mesh=chips > 1,
                                         mesh_shape=tuple(mesh_shape), zeroes_allocations=False,
                                         transfer_queue=COMMAND_QUEUES > TRANSFER_QUEUE)
        self.chip_grids = chip_grids(ttnn, mesh)
        small = [(chip, x, y) for chip, x, y in self.chip_grids if x < self.grid[0] or y < self.grid[1]]
        if small:
            self.close()
            raise TTDeviceUnavailable(
                "the worker grid of " + ", ".join(f"chip {chip} is {x}x{y}" for chip, x, y in small)
                + f"; the program builders assume {self.grid[0]}x{self.grid[1]} on every chip (a program runs on all of them)"
            )

    @property
    def mesh(self):
        """The ttnn MeshDevice this device drives. Refused once the device is closed, and on a device whose chips
        were handed to its stage devices (stage_devices), which shares their command queues and whose allocator
        does not see their buffers (device/tt_stages.py)."""
        if self._mesh is None:
            raise TTDeviceClosed(self._closed_why)
        if self._stages is not None:
            raise TTDeviceClosed(
                "this TTDevice handed its chips to its stage devices (stage_devices()): run on those. It runs nothing "
                "itself from then on (it would share their chips' command queues, and its allocator does not see "
                "their buffers); close() it when done, which closes them too")
        return self._mesh

    @property
    def closed(self) -> bool:
        return getattr(self, "_mesh", None) is None

    def stage_devices(self) -> list["TTDevice"]:
        """One one-chip TTDevice per chip of this device's mesh, row-major, each over a 1x1 submesh: the pipeline
        split's stages (device/tt_stages.py says what they share with this device and how they run). The same list
        on every call. This device keeps owning them (its close() closes them) but runs nothing itself from then on;
        a 1x1 mesh gives a one-element list, under the same rules."""
        from .tt_stages import open_stage_devices

        if self._stages is None:
            self._stages = open_stage_devices(self)
        return list(self._stages)

    def close(self) -> None:
        """Closes the stage devices (stage_devices), removes the sub-devices, closes the mesh and disables the fabric
        this device configured; each step runs even when one before it fails (the first error is raised after). A
        stage device closes its own submesh only."""
        mesh = getattr(self, "_mesh", None)
        if mesh is None:
            return
        from .tt_stages import close_with_parent

        def release() -> None:
            self._mesh = None
            if self._fabric:
                self._ttnn.set_fabric_config(self._ttnn.FabricConfig.DISABLED)

        run_each([*(partial(close_with_parent, stage) for stage in self._stages or ()), self.close_sub_devices,
                  partial(self._ttnn.close_mesh_device, mesh), release])

    def __enter__(self) -> "TTDevice":
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    # ------------------------------------------------------------------ tensors
    def _host_tensor(self, array: np.ndarray, data_format: DataFormat, device=None):
        ttnn = self._ttnn
        values = np.asarray(array, _HOST_DTYPE.get(data_format, np.float32))
        kwargs = {"device": device, "mem_config": ttnn.DRAM_MEMORY_CONFIG} if device is not None else {}
        return ttnn.Tensor(values, data_type=ttnn_data_type(ttnn, data_format), layout=ttnn.TILE_LAYOUT, **kwargs)

    def _wrap(self, shape, data_format: DataFormat, tt_tensor, placements: tuple = REPLICATE) -> TTTensor:
        t = TTTensor(tuple(int(s) for s in shape), DataFormat(data_format), int(tt_tensor.buffer_address()), self,
                     ttnn_tensor=tt_tensor, placements=placements)
        if t.aligned_page_size != tt_tensor.buffer_aligned_page_size() or t.num_pages != tt_tensor.buffer_num_pages():
            raise RuntimeError(
                f"ttnn laid out {shape} {data_format.name} as {tt_tensor.buffer_num_pages()} pages of "
                f"{tt_tensor.buffer_aligned_page_size()} B; the program builders expect {t.num_pages} of {t.aligned_page_size} B"
            )
        self._by_address[t.address] = t
        self._made_tensors = True
        return t

    def _checked(self, shape, placements) -> tuple[tuple[int, ...], tuple]:
        shape = tuple(int(s) for s in shape)
        if len(shape) < 2 or any(s <= 0 for s in shape):
            raise ValueError(f"device tensors need at least 2 positive dims, got {shape}")
        placements = check_placements(placements, len(shape))
        if self.num_chips == 1 and placements != REPLICATE:
            raise ValueError("a one-chip device holds whole tensors; allocate without placements")
        return shape, placements

    def allocate(self, shape: tuple[int, ...], data_format: DataFormat, placements=REPLICATE) -> TTTensor:
        """A tensor of per-chip `shape` on every chip (one MeshBuffer); `placements` says how its shards compose.
        Its values are whatever DRAM held (allocate_zeroed for zeros)."""
        ttnn = self._ttnn
        shape, placements = self._checked(shape, placements)
        tt_tensor = ttnn.allocate_tensor_on_device(
            ttnn.Shape(shape), ttnn_data_type(ttnn, data_format), ttnn.TILE_LAYOUT, self.mesh, ttnn.DRAM_MEMORY_CONFIG
        )
        return self._wrap(shape, data_format, tt_tensor, placements)

    def allocate_zeroed(self, shape: tuple[int, ...], data_format: DataFormat, placements=REPLICATE) -> TTTensor:
        """allocate, every value zero (ttnn.zeros on the mesh): DRAM keeps a freed tensor's data, and a caller
        may rely on rows no program writes being zero (the device stack's padded partial sums)."""
        ttnn = self._ttnn
        shape, placements = self._checked(shape, placements)
        tt_tensor = ttnn.zeros(ttnn.Shape(shape), dtype=ttnn_data_type(ttnn, data_format), layout=ttnn.TILE_LAYOUT,
                               device=self.mesh, memory_config=ttnn.DRAM_MEMORY_CONFIG)
        return self._wrap(shape, data_format, tt_tensor, placements)

    @property
    def num_chips(self) -> int:
        return self.mesh.get_num_devices()

    def mesh_mapper(self, placements: tuple):
        """ttnn's mapper for `placements`: ShardTensorToMesh's for one dim over all chips, ReplicateTensorToMesh's
        for a copy per chip, else create_mesh_mapper with a PlacementShard / PlacementReplicate per mesh axis."""
        ttnn = self._ttnn
        if placements == REPLICATE:
            return ttnn.replicate_tensor_to_mesh_mapper(self.mesh)
        if all(isinstance(p, Shard) for p in placements) and placements[0].dim == placements[1].dim:
            return ttnn.shard_tensor_to_mesh_mapper(self.mesh, placements[0].dim)
        config = ttnn.MeshMapperConfig(
            [ttnn.PlacementShard(p.dim) if isinstance(p, Shard) else ttnn.PlacementReplicate() for p in placements],
            ttnn.MeshShape(*self.capabilities.mesh_shape))
        return ttnn.create_mesh_mapper(self.mesh, config)

    def _distributed(self, array: np.ndarray, data_format: DataFormat, placements: tuple, device=None):
        """A host tensor split by ttnn's mapper (on `device` when given). The split is checked with our own
        rules first, so a dim that does not divide gets an error naming the numbers and the fix."""
        split(np.empty(array.shape, np.uint8), placements, self.capabilities.mesh_shape)  # raises if a dim does not divide
        host = self._host_tensor(array, data_format)
        if device is None:
            return self._ttnn.distribute_tensor(host, self.mesh_mapper(placements))
        return self._ttnn.distribute_tensor(host, self.mesh_mapper(placements), device)

    def upload(self, array: np.ndarray, data_format: DataFormat, placements=REPLICATE) -> TTTensor:
        array = np.asarray(array)
        data_format = DataFormat(data_format)
        placements = check_placements(placements, array.ndim)
        if self.num_chips == 1:
            if any(isinstance(p, Shard) for p in placements):
                raise ValueError("a one-chip device holds whole tensors; upload without placements")
            t = self._wrap(array.shape, data_format, self._host_tensor(array, data_format, self.mesh))
        else:
            tt_tensor = self._distributed(array, data_format, placements, self.mesh)
            if tt_tensor.storage_type() != self._ttnn.StorageType.DEVICE:
                tt_tensor = self._ttnn.to_device(tt_tensor, self.mesh, memory_config=self._ttnn.DRAM_MEMORY_CONFIG)
            t = self._wrap(tuple(tt_tensor.shape), data_format, tt_tensor, placements)
        self.host_traffic.add(TO_DEVICE, "write", t.nbytes * self.num_chips)
        return t

    def write(self, tensor: TTTensor, array: np.ndarray) -> None:
        """Write a whole array (global shape on a mesh), split by the tensor's placements."""
        self._check_live(tensor)
        array = np.asarray(array)
        want = tensor.global_shape if self.num_chips > 1 else tensor.shape
        if tuple(array.shape) != want:
            raise ValueError(f"cannot write an array of shape {array.shape} into a tensor of shape {want}")
        self._settled(tensor, overwritten=True)
        host = (self._distributed(array, tensor.data_format, tensor.placements) if self.num_chips > 1
                else self._host_tensor(array, tensor.data_format))
        self._ttnn.copy_host_to_device_tensor(host, tensor.ttnn_tensor)
        tensor.pending_shards = {}  # the whole array replaced any shards written so far
        self.host_traffic.add(TO_DEVICE, "write", tensor.nbytes * self.num_chips)

    def _to_numpy(self, host, data_format: DataFormat, shape) -> np.ndarray:
        if data_format is DataFormat.Float16_b:
            # numpy has no bfloat16: to_numpy() would return a 0-d object array wrapping the buffer.
            # Widening on the host is exact.
            host = self._ttnn.to_dtype(host, self._ttnn.float32)
        values = np.asarray(host.to_numpy())
        return values.astype(_HOST_DTYPE.get(data_format, np.float32)).reshape(shape)

    def write_shard(self, tensor: TTTensor, chip: int, array: np.ndarray) -> None:
        """Chip `chip`'s (row-major index) shard <- array, of the per-chip shape, when every chip holds its own
        values (a tensor-parallel split's weights and states). ttnn 0.81.1 writes a mesh tensor from a host
        tensor with a shard per chip (ttnn.from_host_shards, then copy_host_to_device_tensor), so shards are
        kept on the host, already in the device's format, until the last chip's arrives; the tensor cannot be
        read or run on before then."""
        self._check_live(tensor)
        chips = self.num_chips
        if not 0 <= chip < chips:
            raise ValueError(f"chip {chip} is outside the {chips} chips of the mesh (0..{chips - 1})")
        array = np.asarray(array)
        if tuple(array.shape) != tuple(tensor.shape):
            raise ValueError(f"a shard of this mesh tensor is {tensor.shape}; got an array of shape {array.shape}")
        tensor.pending_shards[chip] = self._host_tensor(array, tensor.data_format)
        if len(tensor.pending_shards) < chips:
            return
        self._settled(tensor, overwritten=True)
        ttnn = self._ttnn
        shards = [tensor.pending_shards[c] for c in range(chips)]
        host = ttnn.from_host_shards(shards, ttnn.MeshShape(*self.capabilities.mesh_shape)) if chips > 1 else shards[0]
        ttnn.copy_host_to_device_tensor(host, tensor.ttnn_tensor)
        tensor.pending_shards = {}
        self.host_traffic.add(TO_DEVICE, "write", tensor.nbytes * chips)

    def _check_written(self, tensor: TTTensor) -> None:
        if tensor.pending_shards:
            missing = sorted(set(range(self.num_chips)) - set(tensor.pending_shards))
            raise ValueError(f"a {list(tensor.shape)} tensor has its shards written for chips "
                             f"{sorted(tensor.pending_shards)} but not {missing}: write_shard every chip's shard "
                             "before the tensor is read or run on")

    def read_shard_pages(self, tensor: TTTensor, chip: int, first_page: int, num_pages: int) -> np.ndarray:
        """Pages of chip `chip`'s (row-major index) shard, of any tensor, in the device byte format: that chip's
        tensor (ttnn.get_device_tensors) comes up alone, whole (ttnn 0.81.1 has no region read; see read_pages)."""
        self._check_live(tensor)
        self._check_written(tensor)
        chips = self.num_chips
        if not 0 <= chip < chips:
            raise ValueError(f"chip {chip} is outside the {chips} chips of the mesh (0..{chips - 1})")
        if first_page < 0 or first_page + num_pages > tensor.num_pages:
            raise ValueError(f"pages [{first_page}, {first_page + num_pages}) outside the tensor's {tensor.num_pages} pages")
        ttnn = self._ttnn
        landed = self._landed_copy(tensor)
        if landed is not None:
            shard = ttnn.get_device_tensors(landed)[chip] if chips > 1 else landed
        else:
            self._await_write(tensor)
            device_shard = ttnn.get_device_tensors(tensor.ttnn_tensor)[chip] if chips > 1 else tensor.ttnn_tensor
            shard = ttnn.from_device(device_shard)
            self.host_traffic.add(TO_HOST, "read", tensor.nbytes)
        values = self._to_numpy(shard, tensor.data_format, tensor.shape)
        data = formats.to_device_bytes(values, tensor.data_format)
        return data[first_page * tensor.page_size:(first_page + num_pages) * tensor.page_size]

    def download_shards(self, tensor: TTTensor) -> list[np.ndarray]:
        """Each chip's shard, row-major over the mesh."""
        self._check_live(tensor)
        self._check_written(tensor)
        host = self._whole_to_host(tensor)
        shards = self._ttnn.get_device_tensors(host) if self.num_chips > 1 else [host]
        return [self._to_numpy(s, tensor.data_format, tensor.shape) for s in shards]

    def download(self, tensor: TTTensor) -> np.ndarray:
        """The tensor composed by its placements: ttnn's ConcatMeshToTensor (one dim over all chips) or
        create_mesh_composer (a dim per axis); with a replicated axis, that axis's first copy."""
        self._check_live(tensor)
        self._check_written(tensor)
        if self.num_chips == 1:
            return self.download_shards(tensor)[0]
        p = tensor.placements
        if not all(isinstance(x, Shard) for x in p):
            return compose(self.download_shards(tensor), p, self.capabilities.mesh_shape)
        ttnn = self._ttnn
        composer = (ttnn.concat_mesh_to_tensor_composer(self.mesh, p[0].dim) if p[0].dim == p[1].dim else
                    ttnn.create_mesh_composer(self.mesh, ttnn.MeshComposerConfig([p[0].dim, p[1].dim])))
        host = ttnn.aggregate_tensor(self._whole_to_host(tensor), composer)
        return self._to_numpy(host, tensor.data_format, tensor.global_shape)

    # ---- transfers on the transfer queue, beside the programs
    def _queue(self, queue: int):
        return self._ttnn.QueueId(queue)

    # ---- sub-devices: collectives beside the programs (the device stack's micro-batches)
    def open_sub_devices(self, compute_cores: int, load: bool = True) -> None:
        """Splits each chip's worker grid into two ttnn sub-devices, the first `compute_cores` cores for the
        programs (which the planners keep to, hw.compute_sub_device) and the rest for the collectives' workers
        (subdevice_id), and loads them (load=False: the manager made, not loaded). Then a collective issued after
        a program waits for the programs issued so far (the host waits for an event on the compute sub-device, as
        the two sub-devices' work is not in queue order), and a program that reads a collective's output waits for that
        collective (an event on the collectives' sub-device), so the other micro-batch's programs issued between
        them run beside the collective. ttnn 0.81.1's mock n300 accepts the manager and the collectives' and
        events' sub-device arguments but crashes loading the manager (tests/host/mock/test_mock_sub_devices.py)."""
        ttnn = self._ttnn
        if self._sub_devices is not None:
            raise ValueError("the sub-devices are open already")

        def core_ranges(rects):
            return ttnn.CoreRangeSet({ttnn.CoreRange(ttnn.CoreCoord(x0, y0), ttnn.CoreCoord(x1, y1))
                                      for x0, y0, x1, y1 in rects})

        compute, collectives = sub_device_core_ranges(compute_cores, self.grid)
        manager = self.mesh.create_sub_device_manager(
            [ttnn.SubDevice([core_ranges(compute)]), ttnn.SubDevice([core_ranges(collectives)])], 0)
        if not load:
            self.mesh.remove_sub_device_manager(manager)
            return
        if self.mock:
            self.mesh.remove_sub_device_manager(manager)
            raise TTDeviceUnavailable(
                "ttnn 0.81.1's mock cluster crashes loading a sub-device manager (a segfault in "
                "load_sub_device_manager), which micro-batches on a mesh need: run the mock with micro_batches 1, or "
                "micro-batches on the simulator (--backend sim)")
        ttnn.synchronize_device(self.mesh, self._queue(PROGRAM_QUEUE))
        self.mesh.load_sub_device_manager(manager)
        self._sub_devices = manager

    def close_sub_devices(self) -> None:
        if self._sub_devices is None:
            return
        ttnn = self._ttnn
        ttnn.synchronize_device(self.mesh, self._queue(PROGRAM_QUEUE))
        self._collective_done = {}
        self.mesh.clear_loaded_sub_device_manager()
        self.mesh.remove_sub_device_manager(self._sub_devices)
        self._sub_devices = None

    def _collective_kwargs(self) -> dict:
        """The collectives' sub-device for a ttnn collective, once the programs it reads are done; {} without."""
        if self._sub_devices is None:
            return {}
        ttnn = self._ttnn
        ttnn.event_synchronize(ttnn.record_event(self.mesh, self._queue(PROGRAM_QUEUE),
                                                 sub_device_ids=[ttnn.SubDeviceId(COMPUTE_SUB_DEVICE)]))
        return {"subdevice_id": ttnn.SubDeviceId(COLLECTIVES_SUB_DEVICE)}

    def _collective_issued(self, out: TTTensor, source: TTTensor) -> None:
        """An event after the collective on its sub-device: waited for before a program reads `out` or before
        `source` or `out` is freed (their memory must not be reused under the collective)."""
        if self._sub_devices is not None:
            ttnn = self._ttnn
            event = ttnn.record_event(self.mesh, self._queue(PROGRAM_QUEUE),
                                      sub_device_ids=[ttnn.SubDeviceId(COLLECTIVES_SUB_DEVICE)])
            for t in (out, source):
                self._collective_done[id(t)] = (t, event)

    def _await_collective(self, tensor: TTTensor) -> None:
        entry = self._collective_done.pop(id(tensor), None)
        if entry is not None and entry[0] is tensor:
            self._ttnn.event_synchronize(entry[1])

    def _transfers_after_programs(self) -> None:
        """Orders the next transfer on the transfer queue after everything issued on the programs' queue so far:
        on a card on the device (ttnn.wait_for_event on the transfer queue for an event recorded on the programs'
        queue), so the host goes on at once; on the mock on the host (ttnn.event_synchronize), because ttnn
        0.81.1's mock n150 and n300 crash in wait_for_event (a segfault in add_dispatch_wait) while the host-side
        wait orders the same way (and the mock runs nothing to wait for)."""
        ttnn = self._ttnn
        programs = ttnn.record_event(self.mesh, self._queue(PROGRAM_QUEUE))
        if self.mock:
            ttnn.event_synchronize(programs)
        else:
            ttnn.wait_for_event(self._queue(TRANSFER_QUEUE), programs)

    def read_ahead(self, tensor: TTTensor) -> None:
        """Starts bringing the whole tensor up on the transfer queue (ttnn.from_device, blocking=False), after the
        programs issued so far and beside those that follow, without the host waiting for them. The next download,
        download_shards, read_pages or read_shard_pages of the tensor takes that copy, waiting for it if it is
        still in flight; a program that writes the tensor, or freeing it, first waits for the read and drops the
        copy."""
        self._check_live(tensor)
        self._check_written(tensor)
        self._await_write(tensor)
        self._await_read(tensor)
        ttnn = self._ttnn
        self._transfers_after_programs()
        host = ttnn.from_device(tensor.ttnn_tensor, blocking=False, queue_id=self._queue(TRANSFER_QUEUE))
        self._landed[id(tensor)] = (tensor, host, ttnn.record_event(self.mesh, self._queue(TRANSFER_QUEUE)))
        self.host_traffic.add(TO_HOST, "read", tensor.nbytes * self.num_chips)

    def write_ahead(self, tensor: TTTensor, array: np.ndarray) -> None:
        """write() on the transfer queue (ttnn.copy_host_to_device_tensor with cq_id), after the programs issued so
        far (the buffer's earlier readers) and beside those that follow; the first program that names the tensor,
        or a read of it, waits for the write."""
        self._check_live(tensor)
        array = np.asarray(array)
        want = tensor.global_shape if self.num_chips > 1 else tensor.shape
        if tuple(array.shape) != want:
            raise ValueError(f"cannot write an array of shape {array.shape} into a tensor of shape {want}")
        self._await_read(tensor)
        self._landed.pop(id(tensor), None)
        host = (self._distributed(array, tensor.data_format, tensor.placements) if self.num_chips > 1
                else self._host_tensor(array, tensor.data_format))
        ttnn = self._ttnn
        self._transfers_after_programs()
        ttnn.copy_host_to_device_tensor(host, tensor.ttnn_tensor, cq_id=self._queue(TRANSFER_QUEUE))
        self._inbound[id(tensor)] = (tensor, host, ttnn.record_event(self.mesh, self._queue(TRANSFER_QUEUE)))
        tensor.pending_shards = {}
        self.host_traffic.add(TO_DEVICE, "write", tensor.nbytes * self.num_chips)

    def _landed_copy(self, tensor: TTTensor):
        """The host copy read_ahead started for `tensor`, once landed; None without one."""
        entry = self._landed.get(id(tensor))
        if entry is None or entry[0] is not tensor:
            return None
        self._ttnn.event_synchronize(entry[2])
        return entry[1]

    def _whole_to_host(self, tensor: TTTensor):
        """Every chip's tensor on the host: read_ahead's copy, or read now (blocking, on the programs' queue)."""
        landed = self._landed_copy(tensor)
        if landed is not None:
            return landed
        self._await_write(tensor)
        host = self._ttnn.from_device(tensor.ttnn_tensor)
        self.host_traffic.add(TO_HOST, "read", tensor.nbytes * self.num_chips)
        return host

    def _await_read(self, tensor: TTTensor) -> None:
        """Before the tensor is written or freed: its read in flight done, its copy dropped (stale after)."""
        entry = self._landed.pop(id(tensor), None)
        if entry is not None and entry[0] is tensor:
            self._ttnn.event_synchronize(entry[2])

    def _await_write(self, tensor: TTTensor) -> None:
        entry = self._inbound.pop(id(tensor), None)
        if entry is not None and entry[0] is tensor:
            self._ttnn.event_synchronize(entry[2])

    def _settled(self, tensor: TTTensor, *, overwritten: bool) -> None:
        """Before the device or the host uses the tensor: its write ahead landed and the collective making it (on
        the collectives' sub-device) done; before it is overwritten, also its read ahead taken."""
        self._await_write(tensor)
        self._await_collective(tensor)
        if overwritten:
            self._await_read(tensor)

    def read_pages(self, tensor: TTTensor, first_page: int, num_pages: int) -> np.ndarray:
        """Pages in the device byte format, like SimDevice.read_pages. On a mesh, the pages of the first chip's
        copy of a replicated tensor. ttnn 0.81.1 has no region read (from_device and copy_device_to_host_tensor
        move whole tensors; copy_host_to_device_tensor_partial writes sharded buffers only; ttnn.narrow's
        zero-copy view of a DRAM-interleaved tensor covers only whole tile rows from a page on DRAM bank 0,
        not used here), so any read brings the whole tensor up: the device stack's reads are whole-tensor reads by design (its checkpoint and row
        tensors hold only what is read; tests/test_chunk_checkpoints.py checks every read takes all pages)."""
        self._check_replicated(tensor, "read_pages")
        if first_page < 0 or first_page + num_pages > tensor.num_pages:
            raise ValueError(f"pages [{first_page}, {first_page + num_pages}) outside the tensor's {tensor.num_pages} pages")
        data = formats.to_device_bytes(self.download(tensor), tensor.data_format)
        return data[first_page * tensor.page_size:(first_page + num_pages) * tensor.page_size]

    def _check_replicated(self, tensor: TTTensor, what: str) -> None:
        if self.num_chips > 1 and tensor.placements != REPLICATE:
            raise ValueError(f"{what} addresses the pages of one copy; this tensor is {tensor.placements}: use "
                             "download_shards / write with the global array for a sharded tensor")

    def write_pages(self, tensor: TTTensor, first_page: int, data: np.ndarray) -> None:
        self._check_replicated(tensor, "write_pages")
        n = len(data) // tensor.page_size
        if first_page < 0 or first_page + n > tensor.num_pages:
            raise ValueError(f"pages [{first_page}, {first_page + n}) outside the tensor's {tensor.num_pages} pages")
        whole = np.array(formats.to_device_bytes(self.download(tensor), tensor.data_format), np.uint8)
        whole[first_page * tensor.page_size:(first_page + n) * tensor.page_size] = np.asarray(data, np.uint8)
        self.write(tensor, formats.from_device_bytes(whole, tensor.data_format, tensor.shape))

    def free(self, tensor: TTTensor) -> None:
        self._check_live(tensor)
        self._await_read(tensor)  # its memory must not be reused under a transfer in flight
        self._await_write(tensor)
        self._await_collective(tensor)
        self._ttnn.deallocate(tensor.ttnn_tensor)
        tensor.pending_shards = {}
        tensor.freed = True
        if self._by_address.get(tensor.address) is tensor:
            del self._by_address[tensor.address]

    def _check_live(self, tensor: DeviceTensor) -> None:
        if not isinstance(tensor, TTTensor) or tensor.device is not self:
            raise ValueError("tensor belongs to another device")
        if tensor.freed:
            raise ValueError("tensor was freed")

    # ------------------------------------------------------------------ programs
    def worker_noc_coord(self, core) -> tuple[int, int]:
        """NoC coordinates of a logical worker core (what multicasting kernels address)."""
        c = self.mesh.worker_core_from_logical_core(self._ttnn.CoreCoord(core.x, core.y))
        return (c.x, c.y)

    def io_tensors(self, program: Program) -> list:
        """generic_op's tensor list: inputs, then the pre-allocated outputs last."""
        out = []
        for name, t in [*program.inputs.items(), *program.outputs.items()]:
            t = self._program_tensor(program, name, t)
            self._check_written(t)
            self._settled(t, overwritten=name in program.outputs)
            # By identity: `in` would call ttnn.Tensor.__eq__, which is the device op ttnn.eq (a tensor,
            # always truthy), so it would drop tensors or fail.
            if not any(held is t.ttnn_tensor for held in out):
                out.append(t.ttnn_tensor)
        if not program.outputs:
            raise ValueError(f"{program.name}: generic_op needs at least one output tensor in program.outputs")
        if len(out) == 1:
            # A program that updates one tensor in place: generic_op takes an input and an output, so the
            # tensor goes in as both.
            out.append(out[0])
        return out

    def view_rows(self, tensor, rows: int) -> DeviceTensor:
        """The first `rows` rows of a 2-D tensor of this card (or of a view of one), as a view at its address (no
        copy): a program that names the view runs on the tensor it views (_program_tensor). The tensor keeps
        ownership: free it, not the view."""
        owner = self._viewed(tensor)
        if owner is None or len(tensor.shape) != 2 or not 0 < rows <= tensor.shape[0]:
            raise ValueError(f"cannot view the first {rows} rows of a {list(tensor.shape)} tensor: views are of the "
                             "first rows of a live 2-D tensor of this card")
        return DeviceTensor((rows, tensor.shape[1]), tensor.data_format, tensor.address, self)

    def _viewed(self, t) -> TTTensor | None:
        """The card tensor `t` is or views: a TTTensor of this card, or the one a view of its first rows stands
        for (a DeviceTensor at its address, of its format and width, with no more rows). A 2-D tensor's first
        rows are its first pages, so whatever addresses the view's pages reaches them in the whole tensor."""
        if isinstance(t, TTTensor):
            return t if t.device is self and not t.freed else None
        owner = self._by_address.get(t.address) if isinstance(t, DeviceTensor) and t.device is self else None
        if (owner is None or owner.freed or owner.data_format is not t.data_format or len(t.shape) != 2
                or len(owner.shape) != 2 or t.shape[1] != owner.shape[1] or t.shape[0] > owner.shape[0]):
            return None
        return owner

    def _program_tensor(self, program: Program, name: str, t) -> TTTensor:
        """The card tensor a program names (itself, or the one a view of its first rows stands for)."""
        owner = self._viewed(t)
        if owner is None:
            raise ValueError(f"{program.name}: tensor {name!r} is not a tensor on this card (nor a view of the first "
                             "rows of one)")
        return owner

    def run(self, program: Program) -> RunReport:
        """Issues the program on every chip and returns (the card runs it in queue order; the report's wall_s is
        the host's time to issue it)."""
        from .ttnn_checks import check_program_against_ttnn

        check_program_against_ttnn(program)  # raises on anything the card would reject
        t0 = time.perf_counter()
        descriptor = program_to_descriptor(program, self._ttnn)
        self._ttnn.generic_op(self.io_tensors(program), descriptor)
        self.last_report = RunReport(program.name, time.perf_counter() - t0)
        return self.last_report

    def run_per_chip(self, programs, name: str | None = None) -> RunReport:
        """A program per chip ({(row, col): Program}, every chip) as one ttnn.MeshProgramDescriptor: the programs
        may differ (runtime args above all) but read and write the same mesh tensors, as generic_op takes one
        tensor list."""
        from .ttnn_checks import check_program_against_ttnn

        ttnn = self._ttnn
        rows, cols = self.capabilities.mesh_shape
        # ttnn 0.81.1's generic_op crashes (a segfault in the go-signal writes to unused sub-grids) on a
        # MeshProgramDescriptor that leaves chips out, as its mock n300 and T3000 show.
        missing = [(r, c) for r in range(rows) for c in range(cols) if (r, c) not in programs]
        if missing:
            raise ValueError(f"run_per_chip needs a program for every chip of the {rows}x{cols} mesh; missing "
                             f"{missing} (give idle chips an empty program or use run() for one program on all)")
        io = None
        descriptor = ttnn.MeshProgramDescriptor()
        for (r, c), program in programs.items():
            if not (0 <= r < rows and 0 <= c < cols):
                raise ValueError(f"chip ({r}, {c}) is outside the {rows}x{cols} mesh")
            check_program_against_ttnn(program)
            tensors = self.io_tensors(program)
            if io is None:
                io = tensors
            elif len(tensors) != len(io) or any(a is not b for a, b in zip(tensors, io)):
                raise ValueError(f"{program.name}: every chip's program must list the same input and output tensors "
                                 "in the same order (generic_op takes one tensor list for the mesh)")
            coord = ttnn.MeshCoordinate(r, c)
            descriptor[ttnn.MeshCoordinateRange(coord, coord)] = program_to_descriptor(program, ttnn)
        t0 = time.perf_counter()
        ttnn.generic_op(io, descriptor)
        self.last_report = RunReport(name or "per_chip", time.perf_counter() - t0)
        return self.last_report

    # ------------------------------------------------------------------ collectives (ttnn's own)
    def _ttnn_topology(self):
        return self._ttnn.Topology.Ring if self.topology == RING else self._ttnn.Topology.Linear

    def _check_fabric(self, what: str) -> None:
        """A collective needs the fabric the mesh opened with; one opened without (topology "none") has none."""
        if self.topology == NO_FABRIC and self.capabilities.has_mesh:
            raise ValueError(f"{what} runs over ttnn's fabric, and this mesh was opened without one (topology "
                                f"{NO_FABRIC!r}, as for a pipeline split): open it with topology {LINE!r} or {RING!r}")

    def _collective_result(self, name: str, tensor: TTTensor, tt_tensor, placements: tuple, t0: float) -> TTTensor:
        self.last_report = RunReport(name, time.perf_counter() - t0)
        out = self._wrap(tuple(tt_tensor.shape), tensor.data_format, tt_tensor, placements)
        self._collective_issued(out, tensor)
        return out

    def all_gather(self, tensor: TTTensor, dim: int, cluster_axis: int | None = None) -> TTTensor:
        """ttnn.all_gather: the group's shards concatenated along `dim` on every chip of the group."""
        self._check_fabric("all_gather")
        self._check_live(tensor)
        self._check_written(tensor)
        self._settled(tensor, overwritten=False)
        t0 = time.perf_counter()
        dim = norm_dim(dim, len(tensor.shape))
        out = self._ttnn.all_gather(tensor.ttnn_tensor, dim, cluster_axis=cluster_axis,
                                    memory_config=self._ttnn.DRAM_MEMORY_CONFIG, **self._collective_kwargs())
        return self._collective_result("all_gather", tensor, out, gather_label(tensor.placements, dim), t0)

    def reduce_scatter(self, tensor: TTTensor, dim: int, cluster_axis: int | None = None) -> TTTensor:
        """ttnn.reduce_scatter (sum): chunk i along `dim` of the group's sum on group position i."""
        self._check_fabric("reduce_scatter")
        self._check_live(tensor)
        self._check_written(tensor)
        self._settled(tensor, overwritten=False)
        t0 = time.perf_counter()
        dim = norm_dim(dim, len(tensor.shape))
        out = self._ttnn.reduce_scatter(tensor.ttnn_tensor, dim, cluster_axis=cluster_axis,
                                        memory_config=self._ttnn.DRAM_MEMORY_CONFIG, topology=self._ttnn_topology(),
                                        **self._collective_kwargs())
        label = scatter_label(tensor.placements, dim, cluster_axis, self.capabilities.mesh_shape)
        return self._collective_result("reduce_scatter", tensor, out, label, t0)

    def all_reduce(self, tensor: TTTensor, cluster_axis: int | None = None) -> TTTensor:
        """ttnn.all_reduce (sum): the group's sum on every chip of the group."""
        self._check_fabric("all_reduce")
        self._check_live(tensor)
        self._check_written(tensor)
        self._settled(tensor, overwritten=False)
        t0 = time.perf_counter()
        out = self._ttnn.all_reduce(tensor.ttnn_tensor, cluster_axis=cluster_axis,
                                    memory_config=self._ttnn.DRAM_MEMORY_CONFIG, topology=self._ttnn_topology(),
                                    **self._collective_kwargs())
        return self._collective_result("all_reduce", tensor, out, reduce_label(tensor.placements, cluster_axis), t0)

    # ------------------------------------------------------------------ fused matmul + collective (ttnn's own)
    def all_gather_matmul(self, x: TTTensor, weight: TTTensor, blocking) -> tuple[TTTensor, TTTensor]:
        """ttnn.experimental.all_gather_matmul_async: x, each chip's [M, K / chips] columns (sharded on dim 1),
        gathered to [M, K] on every chip while the matmul gathered @ weight ([K, N] a chip) consumes it slice by
        slice, the gather on cores of its own (device/fused_ccl.py says what ttnn requires). `blocking`: the
        matmul's blocks (ops/linear/fused_blocking.all_gather_matmul_blocking). Returns (gathered, out); out is
        sharded like the weight's columns."""
        from .fused_ccl import all_gather_matmul, check_mesh

        self._check_fabric("all_gather_matmul")
        chips = check_mesh(self.capabilities.mesh_shape, self.topology, "all_gather_matmul")
        for t in (x, weight):
            self._check_live(t)
            self._check_written(t)
            self._settled(t, overwritten=False)
        (m, k_shard), (k, n) = x.shape, weight.shape
        t0 = time.perf_counter()
        gathered, out = all_gather_matmul(self._ttnn, self.mesh, x.ttnn_tensor, weight.ttnn_tensor, m, k_shard, k, n,
                                          chips, self.grid, blocking)
        self.last_report = RunReport("all_gather_matmul", time.perf_counter() - t0)
        return (self._wrap((m, k), x.data_format, self._ttnn.reshape(gathered, [m, k]), gather_label(x.placements, 1)),
                self._wrap((m, n), x.data_format, self._ttnn.reshape(out, [m, n]), weight.placements))

    def matmul_reduce_scatter(self, x: TTTensor, weight: TTTensor, blocking,
                              batches: int = 1) -> tuple[TTTensor, TTTensor]:
        """ttnn.experimental.matmul_reduce_scatter_async: x [M, K] @ weight [K, N] on every chip (a row-parallel
        projection's partial sums), their sum over the chips scattered along the columns ([M, N / chips] a chip),
        the rows cut into `batches` so each batch's reduce-scatter runs under the next batch's matmul. `blocking`:
        the matmul's blocks (ops/linear/fused_blocking.matmul_reduce_scatter_blocking, for the same batches).
        Returns (each chip's partial [M, N], the reduced and scattered sum)."""
        from .fused_ccl import check_mesh, matmul_reduce_scatter

        self._check_fabric("matmul_reduce_scatter")
        chips = check_mesh(self.capabilities.mesh_shape, self.topology, "matmul_reduce_scatter")
        for t in (x, weight):
            self._check_live(t)
            self._check_written(t)
            self._settled(t, overwritten=False)
        (m, k), (_, n) = x.shape, weight.shape
        t0 = time.perf_counter()
        mm, reduced = matmul_reduce_scatter(self._ttnn, self.mesh, x.ttnn_tensor, weight.ttnn_tensor, m, k, n, chips,
                                            batches, self.topology, self.grid, blocking)
        self.last_report = RunReport("matmul_reduce_scatter", time.perf_counter() - t0)
        label = scatter_label(REPLICATE, 1, None, self.capabilities.mesh_shape)
        return (self._wrap((m, n), x.data_format, self._ttnn.reshape(mm, [m, n]), REPLICATE),
                self._wrap((m, n // chips), x.data_format, self._ttnn.reshape(reduced, [m, n // chips]), label))
