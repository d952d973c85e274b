"""Checks of a Program against the real ttnn package, without a card.

`check_program_against_ttnn(program)` translates the Program into real ttnn descriptor objects
and reads every field back from them, so what is checked is what ttnn holds, not what we meant to
pass: core ranges inside the 8x8 worker grid, circular-buffer totals within a core's L1 as the
pinned Wormhole memory map leaves it, argument counts within tt-metal's limits, and formats,
page sizes, arguments and compute config equal to what the Program says (which is what the
simulator ran). TTDevice.run calls it before dispatch; tests/host call it for every registered
program builder.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field

from .program import (
    GRID_X,
    GRID_Y,
    L1_BYTES,
    L1_RESERVED_BYTES,
    cb_aligned,
    CoreCoord,
    Kernel,
    Program,
    Role,
)
from .tt_device import program_to_descriptor
from .ttnn_env import import_ttnn

# The limits the card holds a program to (ttprefill.hw says where each comes from).
from ttprefill.hw import L1_CB_BUDGET_BYTES as HARDWARE_CB_BUDGET
from ttprefill.hw import MAX_RUNTIME_ARGS, MAX_SEMAPHORES, NUM_CIRCULAR_BUFFERS  # noqa: F401


class ProgramRejected(ValueError):
    """A Program the card would reject, or one whose ttnn descriptors differ from it."""


@dataclass
class DescriptorReport:
    program: str
    kernels: int = 0
    circular_buffers: int = 0
    semaphores: int = 0
    cb_bytes_per_core: dict[tuple[int, int], int] = field(default_factory=dict)
    problems: list[str] = field(default_factory=list)

    @property
    def l1_headroom(self) -> int:
        """Bytes left under HARDWARE_CB_BUDGET on the fullest core."""
        return HARDWARE_CB_BUDGET - max(self.cb_bytes_per_core.values(), default=0)


def _cores_of(crs) -> list[tuple[int, int]]:
    out = []
    for r in crs.ranges():
        for y in range(r.start.y, r.end.y + 1):
            for x in range(r.start.x, r.end.x + 1):
                out.append((x, y))
    return out


def _check_cores(what: str, crs, expected: list[CoreCoord], problems: list[str]) -> None:
    got = _cores_of(crs)
    outside = [c for c in got if not (0 <= c[0] < GRID_X and 0 <= c[1] < GRID_Y)]
    if outside:
        problems.append(f"{what}: cores {outside[:4]} outside the {GRID_X}x{GRID_Y} worker grid")
    if sorted(got) != sorted((c.x, c.y) for c in expected):
        problems.append(f"{what}: ttnn holds cores {sorted(got)[:8]}..., the program has {[tuple(c) for c in expected][:8]}...")


def _check_kernel(ttnn, kernel: Kernel, kd, problems: list[str]) -> None:
    what = f"kernel {kernel.name} ({kernel.role.value})"
    if kd.kernel_source != str(kernel.source.resolve()):
        problems.append(f"{what}: source {kd.kernel_source} != {kernel.source.resolve()}")
    _check_cores(what, kd.core_ranges, kernel.cores.cores(), problems)
    if list(kd.compile_time_args) != [int(a) & 0xFFFFFFFF for a in kernel.compile_time_args]:
        problems.append(f"{what}: compile-time args {list(kd.compile_time_args)} != {kernel.compile_time_args}")
    if dict(kd.defines) != {str(k): str(v) for k, v in kernel.defines.items()}:
        problems.append(f"{what}: defines {dict(kd.defines)} != {kernel.defines}")
    common = list(kd.common_runtime_args)
    if common != [int(a) & 0xFFFFFFFF for a in kernel.common_runtime_args]:
        problems.append(f"{what}: common runtime args {common} != {kernel.common_runtime_args}")
    for core, args in kernel.runtime_args.items():
        got = list(kd.runtime_args[core.x][core.y])
        if got != [int(a) & 0xFFFFFFFF for a in args]:
            problems.append(f"{what}: runtime args on {tuple(core)} {got} != {args}")
        if len(got) + len(common) > MAX_RUNTIME_ARGS:
            problems.append(
                f"{what}: {len(got)} runtime args + {len(common)} common on core {tuple(core)} exceed tt-metal's "
                f"{MAX_RUNTIME_ARGS}"
            )
    cfg = kd.config
    if kernel.role is Role.COMPUTE:
        want = kernel.compute_config
        if not isinstance(cfg, ttnn.ComputeConfigDescriptor):
            problems.append(f"{what}: config is {type(cfg).__name__}, not a compute config")
        elif (cfg.math_fidelity.name, cfg.fp32_dest_acc_en, cfg.math_approx_mode) != (
            want.math_fidelity.name, want.fp32_dest_acc_en, want.math_approx_mode
        ):
            problems.append(
                f"{what}: compute config ({cfg.math_fidelity.name}, fp32_dest={cfg.fp32_dest_acc_en}, "
                f"approx={cfg.math_approx_mode}) != {want}"
            )
        else:
            held = {i for i, m in enumerate(cfg.unpack_to_dest_mode) if m.name == "UnpackToDestFp32"}
            if held != set(want.unpack_to_dest_fp32):
                problems.append(f"{what}: CBs in UnpackToDestFp32 mode {sorted(held)} != {sorted(want.unpack_to_dest_fp32)}")
            if bool(cfg.bfp8_pack_precise) != bool(want.bfp8_pack_precise):
                problems.append(f"{what}: bfp8_pack_precise {cfg.bfp8_pack_precise} != {want.bfp8_pack_precise}")
            if held and not want.fp32_dest_acc_en:
                problems.append(f"{what}: UnpackToDestFp32 needs fp32_dest_acc_en")
    else:
        want_processor = "RISCV_0" if kernel.role is Role.RISCV_0 else "RISCV_1"
        if not isinstance(cfg, ttnn.DataMovementConfigDescriptor) or cfg.processor.name != want_processor:
            problems.append(f"{what}: not configured for data-movement processor {want_processor}")
        elif cfg.noc.value != kernel.noc_index:  # NOC_0 and RISCV_0_default are one value, 0; NOC_1 and RISCV_1_default 1
            problems.append(f"{what}: NoC {cfg.noc.name} (NoC {cfg.noc.value}) != NoC {kernel.noc_index} the simulator used")


def check_program_against_ttnn(program: Program, ttnn=None, raise_on_problem: bool = True) -> DescriptorReport:
    """Build the real ttnn descriptors for `program` and check them (see the module docstring)."""
    ttnn = ttnn or import_ttnn()
    descriptor = program_to_descriptor(program, ttnn)
    report = DescriptorReport(program.name, len(descriptor.kernels), len(descriptor.cbs), len(descriptor.semaphores))
    problems = report.problems

    if len(descriptor.kernels) != len(program.kernels):
        problems.append(f"ttnn holds {len(descriptor.kernels)} kernels, the program {len(program.kernels)}")
    roles_on_core: dict[tuple[int, int, Role], int] = {}
    for number, (kernel, kd) in enumerate(zip(program.kernels, descriptor.kernels)):
        _check_kernel(ttnn, kernel, kd, problems)
        for c in kernel.cores.cores():
            other = roles_on_core.setdefault((c.x, c.y, kernel.role), number)
            if other != number:
                problems.append(f"core {tuple(c)} runs two {kernel.role.value} kernels: "
                                f"{program.kernels[other].name} and {kernel.name}")

    cb_bytes: dict[tuple[int, int], int] = defaultdict(int)
    for cb, cbd in zip(program.circular_buffers, descriptor.cbs):
        what = f"circular buffer {cb.index}"
        _check_cores(what, cbd.core_ranges, cb.cores.cores(), problems)
        formats_held = list(cbd.format_descriptors)
        views = cb.views()  # the CB's own index, then each alias sharing its allocation
        if len(formats_held) != len(views):
            problems.append(f"{what}: {len(formats_held)} format descriptors, expected {len(views)}")
            continue
        if cbd.total_size != cb.total_size:
            problems.append(f"{what}: total size {cbd.total_size} != {cb.total_size}")
        for fd, view in zip(formats_held, views):
            index_what = what if view.index == cb.index else f"{what}, alias {view.index}"
            if fd.buffer_index != view.index or not 0 <= fd.buffer_index < NUM_CIRCULAR_BUFFERS:
                problems.append(f"{index_what}: buffer index {fd.buffer_index} (valid 0..{NUM_CIRCULAR_BUFFERS - 1})")
            if fd.page_size != view.page_size:
                problems.append(f"{index_what}: page size {fd.page_size} != {view.page_size}")
            if cbd.total_size % fd.page_size:
                problems.append(
                    f"{index_what}: total size {cbd.total_size} is not a whole number of {fd.page_size}-byte pages")
            # ttnn converts the DataType to tt::DataFormat itself; its raw value must be the one the simulator used.
            if fd.data_format_as_uint8 != int(view.data_format):
                problems.append(f"{index_what}: ttnn's tt::DataFormat {fd.data_format_as_uint8} != "
                                f"{int(view.data_format)} ({view.data_format.name})")
        for x, y in _cores_of(cbd.core_ranges):
            cb_bytes[(x, y)] += cb_aligned(cbd.total_size)
    report.cb_bytes_per_core = dict(cb_bytes)
    for core, used in sorted(cb_bytes.items()):
        if used > HARDWARE_CB_BUDGET:
            problems.append(
                f"core {core}: circular buffers need {used} B but Wormhole L1 leaves at most {HARDWARE_CB_BUDGET} B "
                f"({L1_BYTES} B less {L1_RESERVED_BYTES} B of firmware and kernel config)"
            )

    for s, sd in zip(program.semaphores, descriptor.semaphores):
        what = f"semaphore {s.id}"
        _check_cores(what, sd.core_ranges, s.cores.cores(), problems)
        if sd.id != s.id or not 0 <= sd.id < MAX_SEMAPHORES:
            problems.append(f"{what}: id {sd.id} (tt-metal has {MAX_SEMAPHORES} per core)")
        if sd.initial_value != s.initial_value:
            problems.append(f"{what}: initial value {sd.initial_value} != {s.initial_value}")

    if problems and raise_on_problem:
        raise ProgramRejected(f"{program.name}: " + "; ".join(problems))
    return report
