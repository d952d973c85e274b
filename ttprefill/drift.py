"""`ttprefill drift`: does our kernel API still match the pinned ttnn release's?

Four checks, each a table section:
  api      every function the simulator's headers (sim/include/api) declare is declared in the
           pinned ttnn's kernel headers (same relative path, or anywhere under api/ if it moved)
           with the same parameter and template-parameter types. Names may differ; a missing
           or different type is an error, a default-argument difference a warning.
  calls    every kernel-API function our kernels (kernels/**/*.cpp and their helper headers, tests/kernels/*.cpp) call is
           declared in the pinned headers with an overload taking that many arguments.
  deprecated  calls the pinned headers mark [[deprecated]] (warnings).
  syntax   the data-movement kernels compile with the host g++ (-fsyntax-only) against the real
           headers, with the defines tt-metal's JIT uses for a Wormhole BRISC build and a small
           generated stand-in for the per-program descriptor header. Compute kernels compile for
           the unpack, math and pack TRISCs as the JIT builds them (ttprefill.compute_syntax), with
           a stand-in for the SFPI toolchain's sfpi.h and lltt.h; the JSON report counts them
           (compute_kernels_checked of compute_kernels). Notes, not errors: a kernel no registered
           program builds that needs a program's generated headers (named compile-time args,
           Metal 2.0 bindings), and, with a host g++ older than 13, a header's never-instantiated
           static_assert(false) that g++ evaluates early (its only error).

Two progress figures for tt-metal's own kernels (issue 12) close the report; neither changes the exit status:
  upstream coverage   how many kernel files of six op families compile in the simulator
                      (ttprefill.upstream_coverage, cached by content hash), with the top missing headers
                      and symbols;
  upstream programs   how many conformance programs (ttprefill.ops.upstream.registry, the list tests/upstream
                      runs) pass on the simulator. They need the simulator extension: in an interpreter without
                      it (.venv-tt, where CI runs drift) the same registry runs in the repository's .venv through
                      a subprocess; with neither, the count is reported as not run, with the reason.

Exit status: 0 when there is no error (warnings allowed), 1 on any error, 2 when the pinned
headers cannot be found. `--json` prints one JSON object instead of the table.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import asdict, dataclass
from pathlib import Path

from ttprefill.cxx_decls import FunctionDecl, HeaderIndex, find_calls, index_headers, read_declarations, strip_source
from ttprefill.device import ttnn_env

REPO_ROOT = Path(__file__).resolve().parents[1]
SIM_API = REPO_ROOT / "sim" / "include" / "api"
KERNEL_GLOBS = ("kernels/**/*.cpp", "tests/kernels/*.cpp")
# Kernel-local helper headers: their API calls are checked like the kernels' own (not compiled alone).
KERNEL_HEADER_GLOBS = ("kernels/**/*.h", "kernels/**/*.hpp")
# Namespaces in the simulator's headers that hold its own machinery, not kernel API: ttsim, and any
# `detail` / `*_detail` namespace (tt-metal's own convention for implementation helpers that kernels
# do not call, e.g. ckernel::detail, experimental::detail, semaphore_detail).
SIM_PRIVATE_NAMESPACES = ("ttsim",)


def is_private_namespace(namespace: str) -> bool:
    parts = namespace.split("::")
    return parts[0] in SIM_PRIVATE_NAMESPACES or any(p == "detail" or p.endswith("_detail") for p in parts)

ERROR, WARN, OK, INFO = "error", "warn", "ok", "info"
_ORDER = {OK: 0, INFO: 0, WARN: 1, ERROR: 2}


@dataclass
class Finding:
    check: str  # api | calls | deprecated | syntax
    subject: str  # the function or kernel
    status: str  # ok | warn | error | info
    where: str  # file:line it concerns
    detail: str


# ----------------------------------------------------------------------------- comparing declarations
# The real api/ headers include helpers from internal/ (get_noc_addr, InterleavedAddrGen, ...), so
# the whole kernel-side tree is indexed, less the other architectures' folders.
OTHER_ARCHITECTURES = ("/blackhole/", "tt-2xx/", "quasar")
# Quasar's #ifdef branches in shared headers (DataflowBuffer is a class template
# only under ARCH_QUASAR): drift compares against the Wormhole build, where it is undefined. Blackhole
# branches are still read: the simulator declares a few Blackhole-only SFPU calls (softcap_tile, ...).
OTHER_ARCHITECTURE_MACROS = frozenset({"ARCH_QUASAR"})


def index_real_headers(headers: Path) -> HeaderIndex:
    index = index_headers(headers, ("**/*.h", "**/*.hpp"), skip=OTHER_ARCHITECTURES,
                          undefined=OTHER_ARCHITECTURE_MACROS)
    # Kernel headers include host-device shared ones from tt_metal/hostdevcommon/api (SliceRange for
    # DPRINT in hostdevcommon/dprint_common.h): they are part of the kernel API too.
    hostdev = headers.parent.parent / "hostdevcommon" / "api"
    if hostdev.is_dir():
        index_headers(hostdev, ("**/*.h", "**/*.hpp"), undefined=OTHER_ARCHITECTURE_MACROS, index=index)
    return index


def _rank_path(real_path: str, sim_path: str) -> int:
    """Prefer the same file, then anything under api/, then internal helpers."""
    return 0 if real_path == sim_path else 1 if real_path.startswith("api/") else 2
def _erase_template_args(type_text: str, classes: set[str]) -> str:
    """'const TensorAccessor<$T0>&' -> 'const TensorAccessor&' for the named classes."""
    for cls in classes:
        out, i = [], 0
        pattern = re.compile(rf"\b{re.escape(cls)}<")
        while True:
            m = pattern.search(type_text, i)
            if not m:
                out.append(type_text[i:])
                break
            out.append(type_text[i:m.start()] + cls)
            depth, j = 0, m.end() - 1
            while j < len(type_text):
                depth += {"<": 1, ">": -1}.get(type_text[j], 0)
                if depth == 0:
                    break
                j += 1
            i = j + 1
        type_text = "".join(out)
    return type_text


def compare(sim: FunctionDecl, real: FunctionDecl, erased: set[str]) -> tuple[str, list[str]]:
    """How well a real declaration covers a simulator one: (ok|warn|error, notes)."""
    notes: list[str] = []
    level = OK
    sim_types = [_erase_template_args(t, erased) for t in sim.param_types()]
    real_types = [_erase_template_args(t, erased) for t in real.param_types()]
    for k, (a, b) in enumerate(zip(sim_types, real_types)):
        if a != b:
            return ERROR, [f"parameter {k + 1} is '{a}' in the simulator, '{b}' in ttnn"]
    if len(sim_types) > len(real_types) and not real.variadic:
        extra = ", ".join(map(str, sim.params[len(real_types):]))
        return ERROR, [f"the simulator takes extra parameters ttnn does not: {extra}"]
    if len(sim_types) < len(real_types):
        missing = real.params[len(sim_types):]
        if any(p.default is None for p in missing):
            return ERROR, [f"ttnn requires more parameters: {', '.join(map(str, missing))}"]
        level = WARN
        notes.append(f"the simulator omits trailing defaulted parameters: {', '.join(map(str, missing))}")
    for k, (a, b) in enumerate(zip(sim.params, real.params)):
        if a.default != b.default:
            level = WARN
            notes.append(f"default of parameter {k + 1} is {a.default!r} in the simulator, {b.default!r} in ttnn")
    # Template parameters: explicit template arguments bind by position.
    st, rt = sim.template or [], real.template or []
    for k, (a, b) in enumerate(zip(st, rt)):
        if (a.kind, a.variadic) != (b.kind, b.variadic):
            return ERROR, [f"template parameter {k + 1} is '{a}' in the simulator, '{b}' in ttnn"]
        if a.default != b.default:
            level = WARN
            notes.append(f"default of template parameter {k + 1} ({b.name}) is {a.default!r} in the simulator, "
                         f"{b.default!r} in ttnn")
    if len(st) > len(rt):
        return ERROR, [f"the simulator has extra template parameters: {', '.join(map(str, st[len(rt):]))}"]
    if len(st) < len(rt):
        real_param_text = " ".join(p.type for p in real.params)
        undeducible = [t for t in rt[len(st):]
                       if t.default is None and not (t.name and re.search(rf"\b{re.escape(t.name)}\b", real_param_text))]
        if undeducible:
            return ERROR, [f"ttnn needs template arguments the simulator does not take: {', '.join(map(str, undeducible))}"]
        level = WARN
        notes.append(f"the simulator omits template parameters ttnn defaults or deduces: "
                     f"{', '.join(map(str, rt[len(st):]))}")
    plain = sorted(c for c in erased if any(c in t for t in sim.param_types()))
    if plain:
        notes.append(f"{', '.join(plain)} is a class template in ttnn and a plain class in the simulator "
                     f"(compared without template arguments)")
    return level, notes


def _likeness(sim: FunctionDecl, real: FunctionDecl, erased: set[str]) -> float:
    """How alike two parameter lists are: 1 per equal type, 0.5 per type equal but for template arguments."""
    def bare(t: str) -> str:
        while re.search(r"<[^<>]*>", t):
            t = re.sub(r"<[^<>]*>", "", t)
        return t

    score = 0.0
    for a, b in zip(sim.param_types(), real.param_types()):
        a, b = _erase_template_args(a, erased), _erase_template_args(b, erased)
        score += 1.0 if a == b else 0.5 if bare(a) == bare(b) else 0.0
    return score - 0.25 * abs(len(sim.params) - len(real.params))


def _sim_api_decls(sim: HeaderIndex) -> list[FunctionDecl]:
    out = []
    for decls in sim.functions.values():
        for d in decls:
            if is_private_namespace(d.namespace) or d.name.startswith("_"):
                continue
            if d.access != "public":  # a class's own helpers: kernels cannot call them
                continue
            if d.owner and d.owner not in sim.classes:
                continue
            out.append(d)
    return out


def check_api(sim: HeaderIndex, real: HeaderIndex) -> list[Finding]:
    findings = []
    erased = {c for c, info in sim.class_info.items() if not info.is_template and real.class_info.get(c) is not None
              and real.class_info[c].is_template}
    for d in sorted(_sim_api_decls(sim), key=lambda d: (d.path, d.line)):
        where = f"sim/include/{d.path}:{d.line}"
        candidates = real.functions.get(d.key, [])
        if not candidates:
            if d.owner and d.owner not in real.classes:
                detail = f"class {d.owner} is not declared in the pinned headers"
            else:
                detail = "not declared in the pinned headers"
            findings.append(Finding("api", d.signature(), ERROR, where, detail))
            continue
        scored = []
        for r in candidates:
            level, notes = compare(d, r, erased)
            # Among failures, report against the closest overload: most leading parameter types alike.
            alike = _likeness(d, r, erased)
            scored.append((_ORDER[level], -alike, _rank_path(r.path, d.path), r.path, r.line, level, notes, r))
        scored.sort(key=lambda s: s[:5])
        level, notes, best = scored[0][5:]
        if best.path != d.path:
            notes = [f"declared in {best.path}:{best.line}, not {d.path}"] + notes
        if level == ERROR:
            overloads = "; ".join(f"{r.signature()} ({r.path}:{r.line})" for r in candidates[:4])
            notes = notes + [f"ttnn declares: {overloads}"]
        findings.append(Finding("api", d.signature(), level, where, "; ".join(notes) or f"{best.path}:{best.line}"))
    return findings


# ----------------------------------------------------------------------------- calls in kernels
def kernel_files(repo: Path = REPO_ROOT, globs: tuple[str, ...] = KERNEL_GLOBS) -> list[Path]:
    files: list[Path] = []
    for pattern in globs:
        files.extend(p for p in sorted(repo.glob(pattern)) if p.is_file())
    return files


def _local_index(kernel: Path) -> HeaderIndex:
    """What a kernel defines itself: its own functions and macros, and those of headers it
    includes by a path relative to its folder (kernel-local helpers)."""
    local = HeaderIndex(kernel.parent)
    read_declarations(kernel, kernel.name, local)
    _, _, includes = strip_source(kernel.read_text(errors="replace"))
    for inc, _line in includes:
        helper = kernel.parent / inc
        if helper.is_file():
            read_declarations(helper, inc, local)
    return local


def _takes_template_args(decl: FunctionDecl, count: int | None) -> bool:
    if count is None:
        return True
    template = decl.template or []
    return count <= len(template) or any(t.variadic for t in template)


def check_calls(sim: HeaderIndex, real: HeaderIndex, kernels: list[Path], repo: Path) -> list[Finding]:
    findings = []
    for kernel in kernels:
        code, _, _ = strip_source(kernel.read_text(errors="replace"))
        local = _local_index(kernel)
        # A callable the kernel's own functions take as a parameter (fill_tile(l1, value) calling value(i, j)).
        local_params = {p.name for decls in local.functions.values() for d in decls for p in d.params if p.name}
        rel = kernel.relative_to(repo).as_posix()
        seen: set[tuple] = set()
        for call in find_calls(code):
            if call.name in local.functions or call.name in local.macros or call.name in local.classes:
                continue
            if not call.member and call.name in local_params:
                continue
            key = (call.name, call.member, call.args, call.template_args)
            if key in seen:
                continue
            seen.add(key)
            where = f"{rel}:{call.line}"
            shown = f"{'.' if call.member else ''}{call.name}" + (f"<{call.template_args}>" if call.template_args else "")
            shown += f"({call.args} args)"
            if call.member:
                real_decls = real.methods.get(call.name, [])
                sim_decls = sim.methods.get(call.name, [])
            else:
                real_decls = [d for d in real.functions.get(call.name, []) if not d.owner or d.owner == d.name]
                sim_decls = [d for d in sim.functions.get(call.name, []) if not d.owner or d.owner == d.name]
            in_real = bool(real_decls) or (not call.member and (call.name in real.macros or call.name in real.classes))
            in_sim = bool(sim_decls) or (not call.member and (call.name in sim.macros or call.name in sim.classes))
            if not in_real:
                if in_sim:
                    findings.append(Finding("calls", shown, ERROR, where,
                                            "the simulator provides it, the pinned headers do not declare it"))
                elif call.name.isupper():
                    findings.append(Finding("calls", shown, INFO, where, "a macro from the program's defines (not checked)"))
                continue
            if not real_decls:  # a macro or a class (constructor, aggregate or deduction guide)
                kind = "macro" if call.name in real.macros else "class"
                findings.append(Finding("calls", shown, OK, where, f"{kind} in {real.macros.get(call.name) or real.classes.get(call.name)}"))
                continue
            fitting = [d for d in real_decls if d.min_args <= call.args <= d.max_args
                       and _takes_template_args(d, call.template_args)]
            if not fitting and call.member and call.name in local.methods:
                continue  # no tt-metal method fits, one of the kernel's own structs does (its obj.wait())
            if not fitting:
                overloads = "; ".join(f"{d.signature()} ({d.path}:{d.line})" for d in real_decls[:4])
                findings.append(Finding("calls", shown, ERROR, where,
                                        f"no overload in the pinned headers takes these arguments: {overloads}"))
                continue
            current = [d for d in fitting if not d.deprecated]
            if current:
                d = current[0]
                findings.append(Finding("calls", shown, OK, where, f"{d.path}:{d.line}"))
            else:
                d = fitting[0]
                findings.append(Finding("calls", shown, WARN, where, f"only deprecated overloads fit ({d.path}:{d.line})"))
                findings.append(Finding("deprecated", shown, WARN, where,
                                        f"{d.path}:{d.line} is [[deprecated]]: {d.deprecated}"))
    return findings


# ----------------------------------------------------------------------------- host syntax check
# Defines tt-metal's JIT passes for a Wormhole data-movement (BRISC) kernel build, with
# device-dependent values for an n150 (12 DRAM banks, 64 worker L1 banks, PCIe at NoC (0, 3)).
SYNTAX_DEFINES = {
    "ARCH_WORMHOLE": "1", "TENSIX_FIRMWARE": "1", "KERNEL_BUILD": "1", "LOCAL_MEM_EN": "0",
    "COMPILE_FOR_BRISC": "1", "PROCESSOR_INDEX": "0", "NOC_INDEX": "0", "NOC_MODE": "0",
    "NUM_DRAM_BANKS": "12", "IS_NOT_POW2_NUM_DRAM_BANKS": "1", "NUM_L1_BANKS": "64", "LOG_BASE_2_OF_NUM_L1_BANKS": "6",
    "PCIE_NOC_X": "0", "PCIE_NOC_Y": "3", "PROGRAMMABLE_CORE_TYPE": "0", "DISPATCH_MESSAGE_ADDR": "0",
}
# Overrides for a kernel placed on RISCV_1 (NCRISC, NoC 1), as the reader usually is.
NCRISC_DEFINES = {"COMPILE_FOR_NCRISC": "1", "PROCESSOR_INDEX": "1", "NOC_INDEX": "1"}
# Headers brisck.cc (tt-metal's BRISC kernel wrapper) includes before the kernel.
_WRAPPER_INCLUDES = ("risc_common.h", "tensix.h", "tensix_types.h", "noc.h", "noc_overlay_parameters.h",
                     "ckernel_structs.h", "stream_io_map.h", "c_tensix_core.h", "noc_nonblocking_api.h",
                     "internal/firmware_common.h", "api/dataflow/dataflow_api.h")
# The per-program descriptor header the JIT generates (formats and tile geometry of each CB).
_DESCRIPTOR_ARRAYS = {
    "unpack_tile_size": 2048, "pack_tile_size": 2048, "unpack_src_format": 5, "unpack_dst_format": 5,
    "pack_src_format": 5, "pack_dst_format": 5, "unpack_tile_r_dim": 32, "unpack_tile_c_dim": 32,
    "pack_tile_r_dim": 32, "pack_tile_c_dim": 32, "unpack_tile_num_faces": 4, "pack_tile_num_faces": 4,
    "unpack_tile_face_r_dim": 16, "pack_tile_face_r_dim": 16, "unpack_partial_face": 0, "pack_partial_face": 0,
    "unpack_narrow_tile": 0, "pack_narrow_tile": 0, "unpack_num_faces_r_dim": 2, "unpack_num_faces_c_dim": 2,
    "pack_num_faces_r_dim": 2, "pack_num_faces_c_dim": 2,
}
# Placeholder compile-time args for kernels no registered program supplies: an interleaved DRAM
# TensorAccessorArgs config word (2) and small sizes; a kernel that static_asserts on its args may
# reject them, which the report shows.
PLACEHOLDER_CT_ARGS = [2] * 64


def syntax_include_dirs(tt_metal: Path) -> list[Path]:
    wh = tt_metal / "hw" / "inc" / "internal" / "tt-1xx" / "wormhole"
    ck = tt_metal / "hw" / "ckernels" / "wormhole_b0" / "metal"
    llk = tt_metal / "tt-llk"
    return [
        tt_metal / "hw" / "inc", tt_metal / "hw" / "inc" / "internal" / "tt-1xx", wh, wh / "wormhole_b0_defines",
        wh / "noc", ck / "common", ck / "llk_io", ck / "llk_api", ck / "llk_api" / "llk_sfpu",
        llk / "tt_llk_wormhole_b0" / "common" / "inc", llk / "tt_llk_wormhole_b0" / "common" / "inc" / "sfpu",
        llk / "tt_llk_wormhole_b0" / "llk_lib", llk / "common", llk / "tools" / "include",
        tt_metal / "hostdevcommon" / "api", tt_metal, tt_metal / "api", tt_metal.parent,
    ]


def _build_defines(program_defines: dict[str, str]) -> dict[str, str]:
    """The JIT's defines for a data-movement build, switched to NCRISC when the program says so."""
    out = dict(SYNTAX_DEFINES)
    if "COMPILE_FOR_NCRISC" in program_defines:
        del out["COMPILE_FOR_BRISC"]
    out.update(program_defines)
    return out


def _is_compute(kernel: Path) -> bool:
    return '"api/compute/' in kernel.read_text(errors="replace")


def _first_error(stderr: str) -> str:
    for line in stderr.splitlines():
        if " error: " in line or "fatal error:" in line:
            return re.sub(r"^.*?site-packages/ttnn/", "ttnn/", line.strip())
    return stderr.strip().splitlines()[-1] if stderr.strip() else "g++ failed without a message"


def _gcc_major(cxx: str) -> int | None:
    try:
        out = subprocess.run([cxx, "-dumpversion"], capture_output=True, text=True).stdout.strip()
        return int(out.split(".")[0])
    except (OSError, ValueError):
        return None


_ERROR_AT = re.compile(r"^(?P<file>[^:\s][^:]*):(?P<line>\d+):\d+: error: (?P<msg>.*)$")


def eager_static_assert_false(stderr: str) -> tuple[list[str], bool]:
    """The errors that are a `static_assert(false, ...)` in a template, and whether there are others.

    Before GCC 13 (P2593), g++ evaluates `static_assert(false)` when it reads the template, even if no
    code ever instantiates it; tt-metal's headers use it for operations a type does not support
    (CoreLocalMem as a multicast destination), expecting the newer rule its RISC-V g++ follows. A host
    g++ 12 so rejects every kernel that includes such a header, whatever the kernel does."""
    eager, other = [], False
    for line in stderr.splitlines():
        if " error: " not in line and "fatal error:" not in line:
            continue
        m = _ERROR_AT.match(line.strip())
        if m and m.group("msg").startswith("static assertion failed"):
            try:
                src = Path(m.group("file")).read_text(errors="replace").splitlines()
                lineno = int(m.group("line"))
                # The static_assert this diagnostic points into: on its line, or a line or two above
                # when the call is wrapped.
                start = next((k for k in range(lineno - 1, max(-1, lineno - 4), -1) if "static_assert" in src[k]),
                             lineno - 1)
                context = " ".join(src[start:lineno])
            except (OSError, ValueError):
                context = ""
            if re.search(r"static_assert\s*\(\s*false\b", context):
                eager.append(re.sub(r"^.*?site-packages/ttnn/", "ttnn/", line.strip()))
                continue
        other = True
    return eager, other


# What a kernel reads from the headers a program generates for it (ttprefill.device.metal2 and jit.py
# write the simulator's): named compile-time args (KERNEL_COMPILE_TIME_ARG_MAP) and the Metal 2.0
# binding names (args::, dfb::, tensor::, sem::, get_vararg).
_PROGRAM_HEADER_USE = re.compile(r"\bget_named_compile_time_arg_val\s*\(|(?<![\w:])(?:args|dfb|tensor|sem)::\w"
                                 r"|\bget_(?:common_)?vararg\s*\(")


def needs_program_headers(kernel: Path) -> bool:
    code, _, _ = strip_source(kernel.read_text(errors="replace"))
    return bool(_PROGRAM_HEADER_USE.search(code))


def _representative_args() -> dict[Path, list[tuple[list[int], dict[str, str], str]]]:
    """Compile-time args and defines each kernel really gets, from the registered test programs."""
    out: dict[Path, list] = {}
    try:
        from ttprefill.ops.registry import discover

        programs = discover()
    except Exception as e:  # a broken builder must not hide the rest of the report
        print(f"drift: could not load the registered test programs ({e}); using placeholder args", file=sys.stderr)
        return out
    for name, build in sorted(programs.items()):
        try:
            program = build()
        except Exception as e:
            print(f"drift: test program {name} failed to build ({e})", file=sys.stderr)
            continue
        for k in program.kernels:
            defines = dict(k.defines)
            if k.role.value == "riscv_1":
                defines.update(NCRISC_DEFINES)
            out.setdefault(k.source.resolve(), []).append((list(k.compile_time_args), defines, name))
    return out


def check_syntax(headers: Path, kernels: list[Path], repo: Path, per_kernel: int = 2) -> list[Finding]:
    cxx = os.environ.get("CXX") or shutil.which("g++")
    if not cxx:
        return [Finding("syntax", "*", WARN, "", "no g++ on PATH: syntax check skipped")]
    tt_metal = headers.parent.parent
    if not (tt_metal / "tt-llk").is_dir():
        return [Finding("syntax", "*", WARN, str(tt_metal),
                        "these headers come without the rest of tt_metal (tt-llk, ckernels): syntax check skipped; "
                        "use the headers inside .venv-tt's installed ttnn")]
    includes = [f"-I{p}" for p in syntax_include_dirs(tt_metal)]
    gcc_major = _gcc_major(cxx)
    args_by_kernel = _representative_args()
    findings = []
    with tempfile.TemporaryDirectory(prefix="ttprefill-drift-") as tmp:
        tmpdir = Path(tmp)
        lines = ["#pragma once", "#include <cstdint>"]
        lines += [f"constexpr std::uint32_t {name}[32] = {{{', '.join([str(v)] * 32)}}};"
                  for name, v in _DESCRIPTOR_ARRAYS.items()]
        (tmpdir / "chlkc_descriptors.h").write_text("\n".join(lines) + "\n")
        compute = []
        for kernel in kernels:
            rel = kernel.relative_to(repo).as_posix()
            if _is_compute(kernel):
                compute.append(kernel)
                continue
            variants = args_by_kernel.get(kernel.resolve()) or [(PLACEHOLDER_CT_ARGS, {}, "placeholder args")]
            for ct_args, defines, origin in variants[:per_kernel]:
                wrapper = tmpdir / f"wrap_{kernel.stem}.cc"
                wrapper.write_text("".join(f'#include "{h}"\n' for h in _WRAPPER_INCLUDES) + f'#include "{kernel.resolve()}"\n')
                cmd = [cxx, "-std=c++20", "-fsyntax-only", "-w", "-Werror=deprecated-declarations",
                       f"-I{tmpdir}", f"-I{kernel.parent}", *includes,
                       *(f"-D{k}={v}" for k, v in _build_defines(defines).items()),
                       f"-DKERNEL_COMPILE_TIME_ARGS={','.join(str(a) for a in ct_args)}", str(wrapper)]
                proc = subprocess.run(cmd, capture_output=True, text=True)
                eager, other = eager_static_assert_false(proc.stderr)
                if proc.returncode == 0:
                    findings.append(Finding("syntax", rel, OK, rel, f"compiles against the pinned headers ({origin})"))
                elif eager and not other and gcc_major is not None and gcc_major < 13:
                    # Nothing else is wrong; whether the kernel instantiates the assertion cannot be told
                    # with this compiler (the simulator's headers carry the same assertions, dependent on
                    # a template parameter, so its build does catch a real misuse).
                    findings.append(Finding("syntax", rel, INFO, rel,
                                            f"({origin}) compiles but for g++ {gcc_major} evaluating a never-"
                                            f"instantiated static_assert(false) (GCC 13 and tt-metal's g++ defer "
                                            f"it to instantiation, P2593): {eager[0]}"))
                else:
                    first = _first_error("\n".join(line for line in proc.stderr.splitlines()
                                                   if re.sub(r"^.*?site-packages/ttnn/", "ttnn/", line.strip())
                                                   not in eager))
                    deprecated = "deprecated" in first
                    # A kernel no registered program builds gets placeholder args, but nothing stands in
                    # for the headers a program generates (named compile-time args, Metal 2.0 bindings):
                    # a kernel that needs them cannot compile here, so its failure is a note (the
                    # simulator's tests compile it with its program's).
                    unsuppliable = origin == "placeholder args" and needs_program_headers(kernel)
                    status = WARN if deprecated else INFO if unsuppliable else ERROR
                    findings.append(Finding("syntax", rel, status, rel, f"({origin}) {first}"))
    return findings + check_compute_syntax(headers, compute, repo, args_by_kernel, per_kernel)


def check_compute_syntax(headers: Path, kernels: list[Path], repo: Path, args_by_kernel: dict,
                         per_kernel: int = 2) -> list[Finding]:
    """Compute kernels for the three TRISCs the way tt-metal's JIT builds them (ttprefill.compute_syntax),
    with a stand-in for the SFPI toolchain's headers: each distinct set of defines a registered program
    gives the kernel (up to per_kernel), or placeholder args."""
    from ttprefill.compute_syntax import check_compute_kernels

    variants, labels = [], []
    for kernel in kernels:
        seen: list[dict] = []
        for ct_args, defines, origin in args_by_kernel.get(kernel.resolve()) or [(PLACEHOLDER_CT_ARGS, {}, "placeholder args")]:
            if defines not in seen and len(seen) < per_kernel:
                seen.append(defines)
                variants.append((kernel, ct_args, defines))
                labels.append(origin)
    results = check_compute_kernels(headers.parent.parent.parent, variants)
    # A kernel no registered program builds (a simulator test kernel) gets placeholder args and no
    # defines, which it may reject by design: its failure is a note, not an error.
    return [Finding("syntax", r.kernel.relative_to(repo).as_posix(),
                    OK if r.ok else (INFO if origin == "placeholder args" else ERROR),
                    r.kernel.relative_to(repo).as_posix(), f"compute ({origin}): {r.detail}")
            for r, origin in zip(results, labels)]


# ----------------------------------------------------------------------------- the command
def upstream_coverage_summary(top: int = 10) -> dict:
    """The upstream_coverage report, cut to what the drift report shows."""
    t0 = time.perf_counter()
    try:
        from ttprefill import upstream_coverage

        r = upstream_coverage.report()
    except Exception as e:  # no wheel, no compiler: say so instead of failing the API checks
        return {"upstream_kernel_files": None, "upstream_compiling": None,
                "upstream_coverage": {"error": f"{type(e).__name__}: {e}"}}
    return {
        "upstream_kernel_files": r["upstream_kernel_files"],
        "upstream_compiling": r["upstream_compiling"],
        "upstream_coverage": {
            "by_family": r["by_family"],
            "top_missing_headers": dict(list(r["missing_headers"].items())[:top]),
            "top_missing_symbols": dict(list(r["missing_symbols"].items())[:top]),
            "wall_s": round(time.perf_counter() - t0, 2),
        },
    }


def _has_simulator() -> bool:
    import importlib.util

    return importlib.util.find_spec("ttprefill._sim") is not None


def upstream_programs_summary(run_programs: bool = True, repo: Path = REPO_ROOT) -> dict:
    """Run the conformance registry here if this interpreter has the simulator, else in the repo's .venv."""
    from ttprefill.ops.upstream import registry

    total = len(registry.discover())
    out = {"upstream_programs": total, "upstream_programs_passed": None, "upstream_programs_run_in": None,
           "upstream_programs_note": "", "upstream_program_results": []}
    t0 = time.perf_counter()
    if not run_programs:
        out["upstream_programs_note"] = "not run (--no-programs)"
        return out
    if _has_simulator():
        outcomes = [asdict(o) for o in registry.run_all()]
        out["upstream_programs_run_in"] = sys.executable
    else:
        venv_python = repo / ".venv" / "bin" / "python"
        if not venv_python.is_file():
            out["upstream_programs_note"] = (f"not run: this Python ({sys.executable}) has no simulator extension "
                                             f"and {venv_python} does not exist")
            return out
        proc = subprocess.run([str(venv_python), "-m", "ttprefill.ops.upstream.registry", "--json"],
                              capture_output=True, text=True, cwd=repo)
        try:
            outcomes = json.loads(proc.stdout.strip().splitlines()[-1])
        except (json.JSONDecodeError, IndexError):
            out["upstream_programs_note"] = f"not run: the registry failed in {venv_python}: {proc.stderr.strip()[-500:]}"
            return out
        out["upstream_programs_run_in"] = str(venv_python)
    out["upstream_programs"] = len(outcomes)
    out["upstream_programs_passed"] = sum(o["passed"] for o in outcomes)
    out["upstream_program_results"] = [{k: o[k] for k in ("name", "family", "passed", "error", "wall_s")}
                                       for o in outcomes]
    out["upstream_programs_note"] = f"ran in {time.perf_counter() - t0:.1f} s"
    return out


def run(headers: Path | None = None, syntax: bool = True, repo: Path = REPO_ROOT, coverage: bool = True,
        programs: bool = True) -> dict:
    t0 = time.perf_counter()
    headers = headers or ttnn_env.headers_root()
    real = index_real_headers(headers)
    sim = index_headers(repo / "sim" / "include", ("api/**/*.h",))
    kernels = kernel_files(repo)
    helpers = kernel_files(repo, KERNEL_HEADER_GLOBS)
    findings = check_api(sim, real) + check_calls(sim, real, kernels + helpers, repo)
    if syntax:
        findings += check_syntax(headers, kernels, repo)
    counts = {s: sum(1 for f in findings if f.status == s) for s in (OK, WARN, ERROR, INFO)}
    report = {
        "ttnn_version": ttnn_env.headers_version(headers),
        "headers": str(headers),
        "kernels": [k.relative_to(repo).as_posix() for k in kernels],
        "counts": counts,
        "findings": [asdict(f) for f in findings],
    }
    compute = [f for f in findings if f.check == "syntax" and f.detail.startswith("compute (")]
    report["compute_kernels"] = len({f.subject for f in compute}) if syntax else 0
    report["compute_kernels_checked"] = len({f.subject for f in compute} - {f.subject for f in compute if f.status != OK})
    if coverage:
        report.update(upstream_coverage_summary())
    report.update(upstream_programs_summary(programs, repo))
    report["wall_s"] = round(time.perf_counter() - t0, 3)
    return report


def format_upstream(report: dict, top: int = 5) -> list[str]:
    """The short coverage section of the table."""
    from ttprefill.ops.upstream import registry

    lines = []
    cov = report.get("upstream_coverage")
    if cov is not None:
        if "error" in cov:
            lines.append(f"upstream coverage: not measured ({cov['error']})")
        else:
            lines.append(f"upstream coverage: {report['upstream_compiling']} of {report['upstream_kernel_files']} "
                         f"tt-metal kernel files compile in the simulator ({cov['wall_s']:.1f} s)")
            lines.append("  " + ", ".join(f"{fam} {v['compiling']}/{v['files']}" for fam, v in cov["by_family"].items()))
            for title, key in (("missing headers", "top_missing_headers"), ("missing symbols", "top_missing_symbols")):
                items = list(cov[key].items())[:top]
                if items:
                    lines.append(f"  top {title}: " + ", ".join(f"{name} ({n})" for name, n in items))
    passed, total = report.get("upstream_programs_passed"), report.get("upstream_programs")
    if passed is None:
        lines.append(f"upstream programs: {total} registered, {report.get('upstream_programs_note', '')}")
    else:
        lines.append(f"upstream programs: {passed} of {total} pass on the simulator "
                     f"({report.get('upstream_programs_note', '')})")
        for r in report.get("upstream_program_results", []):
            if not r["passed"]:
                lines.append(f"  FAIL {r['name']}: {registry.headline(r['error'])[:200]}")
    return lines


def format_table(report: dict, show_ok: bool = False) -> str:
    rows = [f for f in report["findings"] if show_ok or f["status"] not in (OK,)]
    lines = [f"drift against ttnn {report['ttnn_version'] or '(unknown version)'} headers at {report['headers']}"]
    widths = (10, 7, 58)
    header = f"{'check':<{widths[0]}} {'status':<{widths[1]}} {'subject':<{widths[2]}} detail"
    lines += [header, "-" * len(header)]
    order = {"api": 0, "calls": 1, "deprecated": 2, "syntax": 3}
    for f in sorted(rows, key=lambda f: (order[f["check"]], -_ORDER[f["status"]], f["subject"])):
        subject = f["subject"] if len(f["subject"]) <= widths[2] else f["subject"][:widths[2] - 3] + "..."
        lines.append(f"{f['check']:<{widths[0]}} {f['status']:<{widths[1]}} {subject:<{widths[2]}} {f['detail']}  [{f['where']}]")
    c = report["counts"]
    lines.append(f"{c['ok']} ok, {c['warn']} warnings, {c['error']} errors, {c['info']} notes "
                 f"({len(report['kernels'])} kernels, {report['wall_s']:.1f} s)")
    if report.get("compute_kernels"):
        lines.append(f"compute kernels: {report['compute_kernels_checked']} of {report['compute_kernels']} compile for "
                     "unpack, math and pack against the pinned LLK headers (SFPI stand-in)")
    lines += format_upstream(report)
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="ttprefill drift", description=__doc__.split("\n\n")[0])
    parser.add_argument("--json", action="store_true", help="print one JSON object instead of the table")
    parser.add_argument("--headers", type=Path, default=None,
                        help=f"ttnn's tt_metal/hw/inc (default: ${ttnn_env.HEADERS_ENV_VAR}, else .venv-tt's ttnn)")
    parser.add_argument("--no-syntax", action="store_true", help="skip the g++ syntax check")
    parser.add_argument("--all", action="store_true", help="list passing rows too")
    parser.add_argument("--no-coverage", action="store_true", help="skip compiling tt-metal's kernels in the simulator")
    parser.add_argument("--no-programs", action="store_true", help="skip running the upstream conformance programs")
    argv = list(sys.argv[1:] if argv is None else argv)
    if argv[:1] == ["--"]:  # `ttprefill drift -- --json` hands the separator through
        argv = argv[1:]
    args = parser.parse_args(argv)
    try:
        headers = args.headers or ttnn_env.headers_root()
    except FileNotFoundError as e:
        print(f"drift: {e}", file=sys.stderr)
        return 2
    if not (headers / "api").is_dir():
        print(f"drift: {headers} has no api/ directory (expected ttnn's tt_metal/hw/inc)", file=sys.stderr)
        return 2
    report = run(headers, syntax=not args.no_syntax, coverage=not args.no_coverage, programs=not args.no_programs)
    if args.json:
        print(json.dumps(report, indent=1))
    else:
        print(format_table(report, show_ok=args.all))
    return 1 if report["counts"][ERROR] else 0


if __name__ == "__main__":
    sys.exit(main())
