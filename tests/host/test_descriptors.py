"""Programs translated into real ttnn descriptor objects, read back and checked (no card needed)."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

import pytest
from host_programs import copy_program

from ttprefill.device import ttnn_checks
from ttprefill.device.program import (
    ProgramError,
    L1_BYTES,
    CircularBuffer,
    CoreCoord,
    CoreRange,
    CoreRangeSet,
    DataFormat,
    Kernel,
    MathFidelity,
    Role,
    Semaphore,
)
from ttprefill.device.ttnn_checks import ProgramRejected, check_program_against_ttnn
from ttprefill.device.tt_device import program_to_descriptor

# tt::DataFormat as tt-metal numbers it (tt_metal/api/tt-metalium/tt_backend_api_types.hpp).
TT_DATA_FORMAT = {DataFormat.Float32: 0, DataFormat.Float16_b: 5, DataFormat.Bfp8_b: 6, DataFormat.Bfp4_b: 7,
                  DataFormat.Int32: 8, DataFormat.UInt32: 24}


def test_copy_program_passes_the_checks(ttnn):
    program = copy_program(2, 2, tiles_per_core=3)
    report = check_program_against_ttnn(program, ttnn)
    assert (report.kernels, report.circular_buffers, report.semaphores) == (3, 2, 1)
    # Two CBs of 2 pages of 2048 B on each of the four cores.
    assert report.cb_bytes_per_core == {(x, y): 2 * 2 * 2048 for x in range(2) for y in range(2)}
    assert report.problems == []


def test_descriptor_fields_read_back_from_ttnn(ttnn):
    program = copy_program(3, 2, tiles_per_core=4, fidelity=MathFidelity.LoFi)
    descriptor = program_to_descriptor(program, ttnn)
    reader, writer, compute = descriptor.kernels
    assert Path(reader.kernel_source).name == "reader_tiles.cpp"
    assert reader.core_ranges.num_cores() == 6
    assert list(reader.compile_time_args) == program.kernels[0].compile_time_args
    # Interleaved DRAM accessor args as ttnn emits them: the IsDram config bit, then the aligned page size.
    assert list(writer.compile_time_args) == [2, 2048]
    assert list(reader.runtime_args[2][1]) == program.kernels[0].runtime_args[CoreCoord(2, 1)]
    assert (reader.config.processor.name, reader.config.noc.name) == ("RISCV_1", "RISCV_1_default")
    assert (writer.config.processor.name, writer.config.noc.name) == ("RISCV_0", "RISCV_0_default")
    assert compute.config.math_fidelity.name == "LoFi"
    assert (compute.config.fp32_dest_acc_en, compute.config.math_approx_mode) == (False, True)
    assert dict(compute.defines) == {"OP_COPY": "1"}
    assert [list(k.compiler_include_paths) for k in descriptor.kernels][0] == [Path(reader.kernel_source).parent]
    sem = descriptor.semaphores[0]
    assert (sem.id, sem.initial_value, sem.core_ranges.num_cores()) == (1, 7, 6)


@pytest.mark.parametrize("data_format", list(DataFormat))
def test_cb_formats_and_page_sizes_match_tt_metal(ttnn, data_format):
    program = copy_program(1, 1, data_format=data_format)
    descriptor = program_to_descriptor(program, ttnn)
    for cb in descriptor.cbs:
        (fmt,) = cb.format_descriptors
        assert fmt.data_format_as_uint8 == TT_DATA_FORMAT[data_format]
        assert fmt.page_size == data_format.tile_bytes
        assert cb.total_size == 2 * data_format.tile_bytes
    check_program_against_ttnn(program, ttnn)


def test_overlapping_core_ranges_are_passed_core_by_core(ttnn):
    program = copy_program(2, 2)
    overlapping = CoreRangeSet((CoreRange(CoreCoord(0, 0), CoreCoord(1, 1)), CoreRange(CoreCoord(1, 1), CoreCoord(1, 1))))
    program.semaphores = [Semaphore(0, overlapping)]
    report = check_program_against_ttnn(program, ttnn)
    assert report.semaphores == 1


def test_program_limits_equal_the_cards():
    """Program.validate (which both backends run before dispatch) enforces the card's limits."""
    from ttprefill.device import program as prog

    assert ttnn_checks.HARDWARE_CB_BUDGET == prog.L1_BYTES - prog.L1_RESERVED_BYTES
    assert prog.MAX_RUNTIME_ARGS == ttnn_checks.MAX_RUNTIME_ARGS
    assert prog.MAX_SEMAPHORES == ttnn_checks.MAX_SEMAPHORES


def test_cbs_beyond_the_cards_l1_are_rejected_before_dispatch(ttnn):
    program = copy_program(1, 1)
    cores = CoreRangeSet.grid(1, 1)
    # Would fit L1 if firmware and the kernel config took no room; they do (L1_RESERVED_BYTES).
    pages = (L1_BYTES - 1024 - 2 * 2 * 2048) // 2048
    program.circular_buffers.append(CircularBuffer(1, DataFormat.Float16_b, 2048, pages, cores))
    with pytest.raises(ProgramError, match="lower the block sizes"):
        program.validate()


def test_semaphore_ids_beyond_tt_metals_sixteen_are_rejected(ttnn):
    program = copy_program(1, 1)
    program.semaphores = [Semaphore(16, CoreRangeSet.grid(1, 1))]
    with pytest.raises(ProgramError, match="semaphore id 16 out of range"):
        program.validate()


def test_two_kernels_on_one_processor_of_a_core_are_rejected(ttnn):
    program = copy_program(2, 1)
    extra = program.kernels[0]
    program.kernels.append(Kernel(extra.source, Role.RISCV_1, CoreRangeSet.of([(1, 0)]), list(extra.compile_time_args)))
    with pytest.raises(ProgramError, match=r"core \(1, 0\) has two riscv_1 kernels"):
        program.validate()


def test_too_many_runtime_args_are_rejected(ttnn):
    program = copy_program(1, 1)
    program.kernels[2].common_runtime_args = [0] * 340
    with pytest.raises(ProgramError, match="tt-metal allows 341"):
        program.validate()


def test_l1_constants_match_the_pinned_memory_map(tmp_path):
    """L1's size and its firmware part, recomputed from the pinned headers by the C preprocessor (the
    kernel-config part above it is a host setting: tests/host/mock reads the whole base from ttnn)."""
    from ttprefill.device.ttnn_env import headers_root

    wormhole = headers_root() / "internal" / "tt-1xx" / "wormhole"
    core_config = (wormhole / "core_config.h").read_text()
    dm = re.search(r"MaxDMProcessorsPerCoreType\s*=\s*(\d+)", core_config)
    source = tmp_path / "mem.cc"
    source.write_text(f'#include <cstdio>\nconstexpr int MaxDMProcessorsPerCoreType = {dm.group(1) if dm else 2};\n'
                      '#include "dev_mem_map.h"\nint main() { std::printf("%d %d\\n", MEM_L1_SIZE, MEM_MAP_END); }\n')
    exe = tmp_path / "mem"
    subprocess.run(["g++", f"-I{wormhole}", str(source), "-o", str(exe)], check=True)
    l1_size, map_end = map(int, subprocess.run([str(exe)], capture_output=True, text=True, check=True).stdout.split())
    from ttprefill.device import program as prog

    assert (l1_size, map_end) == (prog.L1_BYTES, prog.L1_FIRMWARE_BYTES)


def test_unpack_to_dest_and_bfp8_packing_reach_the_compute_config(ttnn):
    """Per-CB UnpackToDestFp32 and the precise Bfp8 packing are passed to ttnn and read back."""
    from dataclasses import replace

    program = copy_program(1, 1, data_format=DataFormat.Float32)
    compute = program.kernels[2]
    compute.compute_config = replace(compute.compute_config, fp32_dest_acc_en=True, unpack_to_dest_fp32=frozenset({0}))
    cfg = program_to_descriptor(program, ttnn).kernels[2].config
    modes = [m.name for m in cfg.unpack_to_dest_mode]
    assert len(modes) == 32 and modes[0] == "UnpackToDestFp32" and set(modes[1:]) == {"Default"}
    assert cfg.bfp8_pack_precise is True
    check_program_against_ttnn(program, ttnn)
    compute.compute_config = replace(compute.compute_config, fp32_dest_acc_en=False)
    with pytest.raises(ProgramRejected, match="UnpackToDestFp32 needs fp32_dest_acc_en"):
        check_program_against_ttnn(program, ttnn)


def test_cb_alias_is_one_descriptor_with_a_format_per_index(ttnn):
    from ttprefill.device.program import CBAlias

    program = copy_program(1, 1)
    cores = CoreRangeSet.grid(1, 1)
    program.circular_buffers.append(CircularBuffer(4, DataFormat.Float16_b, 2048, 4, cores,
                                                   aliases=(CBAlias(5, DataFormat.Float32, 4096),)))
    descriptor = program_to_descriptor(program, ttnn)
    shared = descriptor.cbs[-1]
    assert shared.total_size == 4 * 2048
    assert [(f.buffer_index, f.page_size, f.data_format_as_uint8) for f in shared.format_descriptors] == [
        (4, 2048, TT_DATA_FORMAT[DataFormat.Float16_b]), (5, 4096, TT_DATA_FORMAT[DataFormat.Float32])]
    report = check_program_against_ttnn(program, ttnn)
    assert report.problems == []
    # The alias takes no L1 of its own: the copy program's two CBs of 2 pages, then the shared 4 pages.
    assert report.cb_bytes_per_core == {(0, 0): 2 * 2 * 2048 + 4 * 2048}
