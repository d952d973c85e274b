"""The card path on ttnn's mock n150 and n300: what the host stack accepts, compiles and dispatches.

The mock runs everything of tt-metal's host side for real (device open, the L1 and DRAM allocators,
circular-buffer placement, semaphores, the JIT's compile commands and generated headers, ELF
loading, dispatch, the program cache) and executes no kernel: numerics are not tested here.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from ttprefill.device.program import L1_BYTES, L1_RESERVED_BYTES, Role
from ttprefill.device.ttnn_checks import HARDWARE_CB_BUDGET
from ttprefill.ops import registry

REGISTERED = registry.discover()
_BUILT: dict = {}


def _offline(name: str):
    """The registered program as built offline (no device): same kernels and compile-time args."""
    if name not in _BUILT:
        _BUILT[name] = REGISTERED[name]()
    return _BUILT[name]


def test_the_mesh_opens_with_an_8x8_worker_grid_on_every_chip(mock_run):
    r = mock_run.report
    assert r["mock"] is True
    chips = {"n150": 1, "n300": 2}[r["cluster"]]
    assert r["chip_grids"] == [[chip, 8, 8] for chip in range(chips)]


def test_l1_budget_is_the_real_allocators(mock_run):
    """Circular buffers start at ttnn's L1 allocator base and may grow to the top of L1."""
    r = mock_run.report
    assert r["l1_base"] == L1_RESERVED_BYTES
    assert r["l1_top"] == L1_BYTES
    assert r["allocator"]["at_budget"] == "accepted"
    assert r["allocator"]["over_by_32"].startswith("rejected")
    assert f"grow to {L1_BYTES + 32} B" in r["allocator"]["over_by_32"]
    assert HARDWARE_CB_BUDGET == r["l1_top"] - r["l1_base"]


@pytest.mark.parametrize("name", sorted(REGISTERED))
def test_every_registered_program_dispatches_and_hits_the_cache_on_rerun(mock_run, name):
    entry = mock_run.report["programs"][name]
    assert entry["dispatched"], entry.get("traceback", entry.get("error"))
    assert entry["cb_high_water"] <= mock_run.report["l1_top"]
    assert entry["cache_entries_added"] == [1, 0], "second run of the same program must be a cache hit"
    for out, (shape, dtype) in entry["downloads"].items():
        assert dtype in ("float32", "uint32"), out


def test_program_cache_tells_arg_layouts_apart(mock_run):
    """ttnn's own key for generic_op ignores per-core runtime-arg counts; ours does not (a hit would
    copy the new args into slots laid out for the old ones)."""
    assert mock_run.report["cache"] == {"first": 1, "new_arg_values": 0, "one_more_arg_on_one_core": 1,
                                        "a_core_without_args": 1}


def test_bfloat16_tensors_download_and_page_round_trip(mock_run):
    assert mock_run.report["bf16"] == {"shape": [64, 64], "dtype": "float32", "page_bytes": 2 * 2048}


def _kernel_compiles(commands: list[list[str]]) -> list[list[str]]:
    return [c for c in commands if "-c" in c and "-DKERNEL_BUILD" in c]


def test_every_kernel_is_compiled_with_its_folder_role_and_compile_time_args(mock_run):
    compiles = _kernel_compiles(mock_run.commands)
    assert compiles, "the stand-in compiler recorded no kernel compile"
    seen = set()
    for c in compiles:
        name = next(a for a in c if a.startswith("-DFULL_KERNEL_NAME=")).split("=", 1)[1].strip('"').split("/")[0]
        includes = {a[2:] for a in c if a.startswith("-I")}
        ctas = next((a.split("=", 1)[1] for a in c if a.startswith("-DKERNEL_COMPILE_TIME_ARGS=")), "")
        role = ("riscv_0" if "-DCOMPILE_FOR_BRISC" in c else "riscv_1" if "-DCOMPILE_FOR_NCRISC" in c
                else "compute" if any(a.startswith("-DCOMPILE_FOR_TRISC=") for a in c) else None)
        noc = next((a.split("=", 1)[1] for a in c if a.startswith("-DNOC_INDEX=")), None)
        seen.add((name, frozenset(includes), ctas, role, noc))
    for program_name in REGISTERED:
        for k in _offline(program_name).kernels:
            want_ctas = ",".join(str(int(a) & 0xFFFFFFFF) for a in k.compile_time_args)
            want_noc = None if k.role is Role.COMPUTE else str(k.noc_index)
            matches = [s for s in seen if s[0] == k.source.stem and str(k.source.resolve().parent) in s[1]
                       and s[2] == want_ctas and s[3] == k.role.value and (want_noc is None or s[4] == want_noc)]
            assert matches, f"{program_name}: no compile of {k.name} as {k.role.value} with args {want_ctas}"


def _generated(mock_run, kernel_stem: str, file: str) -> list[str]:
    return [p.read_text() for p in Path(mock_run.env.cache).glob(f"*/kernels/{kernel_stem}/*/{file}")]


def test_compute_config_reaches_the_generated_headers(mock_run):
    """DST accumulation mode and fidelity as tt-metal's JIT wrote them for the GDN scan's compute kernel."""
    program = _offline("gdn/scan_seq_T130_h2x4_k64v64_c32_ckpt")
    (compute,) = [k for k in program.kernels if k.role is Role.COMPUTE]
    texts = _generated(mock_run, compute.source.stem, "chlkc_descriptors.h")
    assert texts
    cfg = compute.compute_config
    want_accum = f"constexpr bool DST_ACCUM_MODE = {'true' if cfg.fp32_dest_acc_en else 'false'};"
    want_fidelity = f"static_cast<ckernel::MathFidelity>({int(cfg.math_fidelity)})"
    assert any(want_accum in t and want_fidelity in t for t in texts)


def _array(text: str, name: str) -> list[int]:
    body = re.search(name + r"\[32\] = \{\s*([0-9,\s]+)\};", text).group(1)
    return [int(v) for v in body.replace("\n", "").split(",") if v.strip()]


TF32, FLOAT32 = 4, 0  # tt::DataFormat values in the generated headers


@pytest.mark.parametrize("name", sorted(n for n in REGISTERED if n.startswith(("gdn/", "flash_attention/"))))
def test_unpack_to_dest_cbs_unpack_as_float32_and_other_fp32_cbs_as_tf32(mock_run, name):
    """What tt-metal's JIT configured the unpacker to produce for each fp32 CB of each compute kernel:
    Float32 (straight to DST) exactly for the CBs the program put in UnpackToDestFp32 mode."""
    program = _offline(name)
    for k in program.kernels:
        if k.role is not Role.COMPUTE:
            continue
        on = set(k.cores.cores())
        fp32 = {cb.index for cb in program.circular_buffers
                if cb.data_format.name == "Float32" and on & set(cb.cores.cores())}
        want = {i: (FLOAT32 if i in k.compute_config.unpack_to_dest_fp32 else TF32) for i in fp32}
        found = [_array(t, "unpack_dst_format") for t in _generated(mock_run, k.source.stem, "chlkc_descriptors.h")]
        assert any(all(f[i] == v for i, v in want.items()) for f in found), (k.name, want)


def test_a_bfp8_copy_with_precise_packing_dispatches(mock_run):
    """bfp8_pack_precise reaches tt-metal and compiles; which rounding the packer then does only a card shows."""
    assert mock_run.report["bfp8_copy"] == "copy_1x1"
    texts = [(d / "chlkc_descriptors.h").read_text() for d in Path(mock_run.env.cache).glob("*/kernels/compute_op/*")]
    assert any(_array(t, "pack_dst_format")[16] == 6 for t in texts)  # the Bfp8_b copy's output CB


def test_compile_command_count_is_reported(mock_run):
    links = [c for c in mock_run.commands if any(a.endswith(".elf") for a in c) and "-c" not in c]
    assert len(links) >= sum(len(_offline(n).kernels) for n in REGISTERED) // 2
    assert re.search(r"\(tenstorrent/sfpi:[^)]+\)", open(mock_run.env.root / "runtime/sfpi/compiler/bin/riscv-tt-elf-g++").read())


def test_compute_syntax_check_uses_the_jits_defines_and_include_folders(mock_run):
    """drift's compute check (ttprefill.compute_syntax) builds like tt-metal's JIT did in this run."""
    from ttprefill.compute_syntax import JIT_DEFINES, JIT_INCLUDES, THREADS

    root = str(mock_run.env.root)
    trisc = [c for c in _kernel_compiles(mock_run.commands) if any(a.startswith("-DUCK_CHLKC_") for a in c)]
    assert trisc
    for c in trisc:
        defines = {a[2:].split("=", 1)[0]: (a.split("=", 1)[1] if "=" in a else None) for a in c if a.startswith("-D")}
        for k, v in JIT_DEFINES.items():
            assert k in defines and (v is None or k == "DISPATCH_MESSAGE_ADDR" or defines[k] == v), (k, defines.get(k))
        thread = next(k[len("UCK_CHLKC_"):] for k in defines if k.startswith("UCK_CHLKC_"))
        want = {t: (str(trisc_), str(proc)) for t, trisc_, proc in THREADS}[thread]
        assert (defines["COMPILE_FOR_TRISC"], defines["PROCESSOR_INDEX"]) == want
        includes = [a[2:].rstrip("/") for a in c if a.startswith("-I") and a[2:].startswith(root)]
        rel = [str(Path(i).relative_to(root)) if i != root else "." for i in includes]
        assert rel == list(JIT_INCLUDES), rel
