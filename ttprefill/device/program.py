"""The backend-neutral description of a device program.

A program builder (ttprefill.ops.*) returns a `Program`; the simulator (SimDevice) and the card
backend (TTDevice) both execute that same object. Nothing here knows which one will run it, and
nothing here needs torch.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass, field
from pathlib import Path
from typing import Iterable, Iterator

# Hardware layout figures live in ttprefill.hw; program builders and backends read them from here too.
from ttprefill.hw import (  # noqa: F401
    compute_cores,
    CB_ALIGNMENT,
    cb_aligned,
    DRAM_ALIGNMENT,
    DRAM_BANKS,
    DRAM_BYTES_PER_CHIP,
    GRID_X,
    GRID_Y,
    L1_BYTES,
    L1_FIRMWARE_BYTES,
    L1_KERNEL_CONFIG_BYTES,
    L1_RESERVED_BYTES,
    MAX_CORES,
    MAX_RUNTIME_ARGS,
    MAX_SEMAPHORES,
    NUM_CIRCULAR_BUFFERS,
    SEMAPHORE_STRIDE,
)


class DataFormat(enum.IntEnum):
    """tt::DataFormat values as the Wormhole headers number them."""

    Float32 = 0
    Float16_b = 5
    Bfp8_b = 6
    Bfp4_b = 7
    Int32 = 8
    UInt32 = 24

    @property
    def tile_bytes(self) -> int:
        return TILE_BYTES[self]


# Bytes of one 32x32 tile (WORMHOLE.md, "Registers and formats").
TILE_BYTES = {
    DataFormat.Float32: 4096,
    DataFormat.Float16_b: 2048,
    DataFormat.Bfp8_b: 1088,
    DataFormat.Bfp4_b: 576,
    DataFormat.Int32: 4096,
    DataFormat.UInt32: 4096,
}


class MathFidelity(enum.IntEnum):
    """tt-metal's MathFidelity values; the number of multiplier phases is the value, LoFi = 1."""

    LoFi = 0
    HiFi2 = 2
    HiFi3 = 3
    HiFi4 = 4

    @property
    def phases(self) -> int:
        return max(1, int(self))


# Wormhole's preferred NoC for DRAM reads and for DRAM writes (tt-metal GetPreferredNOCForDRAMRead / Write):
# NoC 0 and NoC 1. tt-metal's ReaderDataMovementConfig puts a factory's reader (RISCV_1) on the first and
# WriterDataMovementConfig its writer (RISCV_0) on the second, the opposite of each processor's default
# NoC (Role.noc): on NoC 1 the data of the DRAM banks in NoC column 5 all climb that one column
# (sim/src/noc_routes.h), on NoC 0 it fans out along the banks' rows first.
DRAM_READ_NOC, DRAM_WRITE_NOC = 0, 1


class Role(enum.Enum):
    """Which RISC-V core(s) of a Tensix run a kernel.

    tt-metal's convention: the reader usually sits on RISCV_1 (NCRISC, NoC 1), the writer on
    RISCV_0 (BRISC, NoC 0), and a compute kernel is compiled for the three TRISCs.
    """

    RISCV_0 = "riscv_0"  # BRISC
    RISCV_1 = "riscv_1"  # NCRISC
    COMPUTE = "compute"

    @property
    def noc(self) -> int:
        return {Role.RISCV_0: 0, Role.RISCV_1: 1, Role.COMPUTE: 0}[self]


@dataclass(frozen=True, order=True)
class CoreCoord:
    x: int
    y: int

    def __iter__(self) -> Iterator[int]:
        yield self.x
        yield self.y


@dataclass(frozen=True)
class CoreRange:
    """An inclusive rectangle of logical cores."""

    start: CoreCoord
    end: CoreCoord

    def __post_init__(self) -> None:
        if self.start.x > self.end.x or self.start.y > self.end.y:
            raise ValueError(f"core range {self} has start after end")

    @classmethod
    def single(cls, x: int, y: int) -> "CoreRange":
        return cls(CoreCoord(x, y), CoreCoord(x, y))

    def cores(self) -> list[CoreCoord]:
        return [
            CoreCoord(x, y)
            for y in range(self.start.y, self.end.y + 1)
            for x in range(self.start.x, self.end.x + 1)
        ]


@dataclass(frozen=True)
class CoreRangeSet:
    ranges: tuple[CoreRange, ...]

    @classmethod
    def of(cls, cores: Iterable[CoreCoord | tuple[int, int]]) -> "CoreRangeSet":
        """One single-core range per core, in the order given (deduplicated)."""
        seen: list[CoreCoord] = []
        for c in cores:
            cc = c if isinstance(c, CoreCoord) else CoreCoord(*c)
            if cc not in seen:
                seen.append(cc)
        return cls(tuple(CoreRange(c, c) for c in seen))

    @classmethod
    def grid(cls, nx: int, ny: int) -> "CoreRangeSet":
        return cls((CoreRange(CoreCoord(0, 0), CoreCoord(nx - 1, ny - 1)),))

    def cores(self) -> list[CoreCoord]:
        out: list[CoreCoord] = []
        for r in self.ranges:
            for c in r.cores():
                if c not in out:
                    out.append(c)
        return out

    def __contains__(self, core: CoreCoord) -> bool:
        return any(
            r.start.x <= core.x <= r.end.x and r.start.y <= core.y <= r.end.y for r in self.ranges
        )


@dataclass(frozen=True)
class CBAlias:
    """A further CB index over the L1 of a CircularBuffer, with its own data format, page size and
    read/write pointers over the same bytes (ttnn: one CBDescriptor with several format_descriptors;
    tt-metal's matmul factories lay their partials CB over the output CB this way when the formats
    allow). Its page count is the allocation's size over its page size."""

    index: int
    data_format: DataFormat
    page_size: int


@dataclass(frozen=True)
class CBView:
    """One CB index as a kernel sees it: an allocation's own index or one of its aliases."""

    index: int
    data_format: DataFormat
    page_size: int
    num_pages: int


@dataclass(frozen=True)
class CircularBuffer:
    index: int
    data_format: DataFormat
    page_size: int
    num_pages: int
    cores: CoreRangeSet
    # Further CB indices sharing this allocation (no L1 of their own).
    aliases: tuple[CBAlias, ...] = ()

    @property
    def total_size(self) -> int:
        return self.page_size * self.num_pages

    def views(self) -> list[CBView]:
        """This CB's index and each alias, each with the pages it sees of the one allocation."""
        own = CBView(self.index, self.data_format, self.page_size, self.num_pages)
        return [own] + [CBView(a.index, a.data_format, a.page_size, self.total_size // a.page_size)
                        for a in self.aliases]


@dataclass(frozen=True)
class Semaphore:
    id: int
    cores: CoreRangeSet
    initial_value: int = 0


@dataclass(frozen=True)
class ComputeConfig:
    math_fidelity: MathFidelity = MathFidelity.HiFi2
    fp32_dest_acc_en: bool = True
    math_approx_mode: bool = False
    # CBs in UnpackToDestFp32 mode (ttnn's per-CB unpack_to_dest_mode): copy_tile moves their Float32
    # tiles into fp32 DST unchanged. Any other copy passes through srcA, which holds TF32 (13 mantissa
    # bits dropped). Only for CBs the kernel reads by copy_tile alone, and only with fp32_dest_acc_en.
    unpack_to_dest_fp32: frozenset[int] = frozenset()
    # tt-metal's precise Bfp8 packing (ComputeConfig bfp8_pack_precise), asked for wherever a kernel
    # packs Bfp8_b: the simulator rounds each value to nearest from its full DST value, the careful
    # conversion. Its effect on the card's packer could not be established on the mock cluster, so
    # the card's Bfp8_b rounding is unverified (README, "Running on a Wormhole card").
    bfp8_pack_precise: bool = True


def float32_cbs(circular_buffers: Iterable[CircularBuffer], indices: Iterable[int]) -> frozenset[int]:
    """Those of `indices` whose circular buffer holds Float32: what ComputeConfig.unpack_to_dest_fp32
    may name (the mode is for 32-bit data)."""
    wanted = set(indices)
    return frozenset(v.index for cb in circular_buffers for v in cb.views()
                     if v.index in wanted and v.data_format is DataFormat.Float32)


@dataclass(frozen=True)
class TensorBinding:
    """A tensor a Metal 2.0 kernel names (tensor::name): its TensorAccessorArgs compile-time words and
    its DRAM address (DeviceTensor.accessor_args() and .address)."""

    accessor_args: tuple[int, ...]
    address: int


@dataclass
class Kernel:
    """One kernel source placed on a set of cores in one role."""

    source: Path
    role: Role
    cores: CoreRangeSet
    compile_time_args: list[int] = field(default_factory=list)
    # get_named_compile_time_arg_val("name") in the kernel (ttnn.KernelDescriptor.named_compile_time_args)
    named_compile_time_args: dict[str, int] = field(default_factory=dict)
    defines: dict[str, str] = field(default_factory=dict)
    runtime_args: dict[CoreCoord, list[int]] = field(default_factory=dict)
    common_runtime_args: list[int] = field(default_factory=list)
    compute_config: ComputeConfig | None = None  # required for Role.COMPUTE
    # Metal 2.0 kernels (tt-metal's ProgramSpec host API) use names that tt-metal's JIT generates into
    # kernel_args_generated.h / kernel_bindings_generated.h (jit.py does the same):
    # args::name for runtime_args[core][i] (the values after the named ones are get_vararg(0), ...),
    # for common_runtime_args[i] (likewise get_common_vararg), and for each named compile-time arg;
    runtime_arg_names: list[str] = field(default_factory=list)
    common_runtime_arg_names: list[str] = field(default_factory=list)
    # dfb::name -> circular buffer index; tensor::name -> the tensor; sem::name -> semaphore id.
    dfb_bindings: dict[str, int] = field(default_factory=dict)
    # A tuple of bindings is a binding sequence: tensor::name is then a std::tuple of tokens.
    tensor_bindings: dict[str, TensorBinding | tuple[TensorBinding, ...]] = field(default_factory=dict)
    semaphore_bindings: dict[str, int] = field(default_factory=dict)
    # scratch::name -> size in bytes. The simulator allocates no scratchpad L1 yet: such a kernel
    # compiles, and constructing the Scratchpad stops the run.
    scratchpad_bindings: dict[str, int] = field(default_factory=dict)
    metal2: bool = False  # a Metal 2.0 kernel even without any of the names above (args:: of named CT args only)
    # The NoC a data-movement kernel's transfers use (tt-metal's DataMovementConfig.noc); None: its
    # processor's default (Role.noc). Program factories move some kernels to the other NoC to spread traffic.
    noc: int | None = None

    def __post_init__(self) -> None:
        if self.noc is not None and (self.role is Role.COMPUTE or self.noc not in (0, 1)):
            raise ValueError(f"kernel {self.source.name}: noc={self.noc!r}; a data-movement kernel takes NoC 0 or 1, "
                             "a compute kernel none (leave noc=None)")

    @property
    def noc_index(self) -> int:
        """The NoC this kernel's transfers use."""
        return self.role.noc if self.noc is None else self.noc

    @property
    def name(self) -> str:
        return f"{self.source.parent.name}/{self.source.name}"

    @property
    def is_metal2(self) -> bool:
        return bool(self.metal2 or self.runtime_arg_names or self.common_runtime_arg_names or self.dfb_bindings
                    or self.tensor_bindings or self.semaphore_bindings or self.scratchpad_bindings)

    def bound_tensors(self) -> list[TensorBinding]:
        """Every bound tensor in tensor_bindings order, sequences flattened."""
        return [t for b in self.tensor_bindings.values() for t in (b if isinstance(b, tuple) else (b,))]

    def bound_compile_time_args(self) -> list[int]:
        """compile_time_args, then each bound tensor's accessor args (in tensor_bindings order)."""
        out = list(self.compile_time_args)
        for t in self.bound_tensors():
            out += list(t.accessor_args)
        return out

    def bound_common_runtime_args(self) -> list[int]:
        """common_runtime_args, then each bound tensor's address (in tensor_bindings order)."""
        return list(self.common_runtime_args) + [t.address for t in self.bound_tensors()]


@dataclass
class Program:
    kernels: list[Kernel] = field(default_factory=list)
    circular_buffers: list[CircularBuffer] = field(default_factory=list)
    semaphores: list[Semaphore] = field(default_factory=list)
    # The device tensors the program touches, by name: what it reads and what it writes.
    inputs: dict[str, object] = field(default_factory=dict)
    outputs: dict[str, object] = field(default_factory=dict)
    name: str = "program"

    def all_cores(self) -> list[CoreCoord]:
        out: list[CoreCoord] = []
        for k in self.kernels:
            for c in k.cores.cores():
                if c not in out:
                    out.append(c)
        return sorted(out)

    def circular_buffers_on(self, core: CoreCoord) -> list[CircularBuffer]:
        return [cb for cb in self.circular_buffers if core in cb.cores]

    def l1_bytes_on(self, core: CoreCoord) -> int:
        """L1 a core needs: the reserved bottom plus every CB, each padded to CB_ALIGNMENT (aliases add none)."""
        return L1_RESERVED_BYTES + sum(cb_aligned(cb.total_size)
                                       for cb in self.circular_buffers_on(core))

    def validate(self) -> None:
        """Checks every backend needs before dispatch; raises ProgramError naming the problem."""
        for k in self.kernels:
            if not k.source.is_file():
                raise ProgramError(f"kernel source {k.source} does not exist")
            if k.role is Role.COMPUTE and k.compute_config is None:
                raise ProgramError(f"compute kernel {k.name} has no compute_config")
            for c in k.cores.cores():
                if not (0 <= c.x < GRID_X and 0 <= c.y < GRID_Y):
                    raise ProgramError(f"kernel {k.name} placed on core {tuple(c)} outside the {GRID_X}x{GRID_Y} grid")
            for c in k.runtime_args:
                if c not in k.cores:
                    raise ProgramError(f"kernel {k.name} has runtime args for core {tuple(c)} it does not run on")
            n = len(k.bound_common_runtime_args()) + max((len(a) for a in k.runtime_args.values()), default=0)
            if n > MAX_RUNTIME_ARGS:
                raise ProgramError(f"kernel {k.name} has {n} runtime + common args on a core; tt-metal allows "
                                   f"{MAX_RUNTIME_ARGS}: move bulk data (e.g. page tables) into a DRAM tensor")
        roles_on: dict[tuple[CoreCoord, Role], str] = {}
        for k in self.kernels:
            for c in k.cores.cores():
                if (c, k.role) in roles_on:
                    raise ProgramError(f"core {tuple(c)} has two {k.role.value} kernels ({roles_on[(c, k.role)]} and "
                                       f"{k.name}); each processor runs one kernel")
                roles_on[(c, k.role)] = k.name
        for cb in self.circular_buffers:
            if cb.page_size <= 0 or cb.num_pages <= 0:
                raise ProgramError(f"circular buffer {cb.index} needs a positive page size and page count")
            for a in cb.aliases:
                if a.page_size <= 0 or cb.total_size % a.page_size:
                    raise ProgramError(
                        f"circular buffer {a.index} aliases the {cb.total_size} B of circular buffer {cb.index} but "
                        f"its page of {a.page_size} B does not divide them; size the allocation in whole pages of both")
            for v in cb.views():
                if not 0 <= v.index < NUM_CIRCULAR_BUFFERS:
                    raise ProgramError(f"circular buffer index {v.index} is out of range 0..{NUM_CIRCULAR_BUFFERS - 1}")
        for core in self.all_cores():
            seen: set[int] = set()
            for cb in self.circular_buffers_on(core):
                for v in cb.views():
                    if v.index in seen:
                        raise ProgramError(f"circular buffer {v.index} defined twice on core {tuple(core)}")
                    seen.add(v.index)
            used = self.l1_bytes_on(core)
            if used > L1_BYTES:
                detail = ", ".join(
                    f"cb{cb.index}={cb.num_pages}x{cb.page_size}B" for cb in self.circular_buffers_on(core)
                )
                raise L1OverflowError(
                    f"{self.name}: circular buffers need {used} B of L1 on core {tuple(core)} but a core has "
                    f"{L1_BYTES} B ({detail}); lower the block sizes or page counts"
                )
        for s in self.semaphores:
            if not 0 <= s.id < MAX_SEMAPHORES:
                raise ProgramError(f"semaphore id {s.id} out of range 0..{MAX_SEMAPHORES - 1}")


class ProgramError(ValueError):
    """A program that no backend can run as described."""


class L1OverflowError(ProgramError):
    """The circular buffers of a program do not fit a core's L1."""


def core_list(count: int) -> list[CoreCoord]:
    """The first `count` cores of the grid, row by row."""
    if not 1 <= count <= MAX_CORES:
        raise ValueError(f"a program runs on 1..{MAX_CORES} cores; asked for {count}")
    return [CoreCoord(i % GRID_X, i // GRID_X) for i in range(count)]


def split_units(units: int, max_cores: int | None = None) -> list[tuple[CoreCoord, int, int]]:
    """Contiguous runs of work units per core: (core, first unit, count), as even as possible; over
    `max_cores` cores at most (default: the compute grid's, hw.compute_cores)."""
    n = min(units, max_cores if max_cores is not None else compute_cores())
    base, extra = divmod(units, n)
    out, first = [], 0
    for i, core in enumerate(core_list(n)):
        count = base + (1 if i < extra else 0)
        out.append((core, first, count))
        first += count
    return out
