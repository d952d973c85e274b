"""Compute kernels syntax-checked against the pinned LLK headers, built the way tt-metal's JIT builds them.

tt-metal compiles a compute kernel three times, once per TRISC (unpack, math, pack): it writes
chlkc_{unpack,math,pack}.cpp (define the thread, include the kernel), chlkc_descriptors.h (CB formats,
math fidelity, DST mode) and defines_generated.h, then compiles its firmware wrapper trisck.cc with
the thread's defines. Here the host g++ does the same with -fsyntax-only. Three things stand in for
what only the SFPI RISC-V toolchain has:

- sfpi.h and lltt.h (ttprefill/sfpi_standin): the SFPI vector types, constants, intrinsics and
  conditional-execution macros, and the replay-buffer helpers, declared permissively. They let the
  headers parse; SFPU code itself is not checked.
- -fpermissive: the LLK headers cast L1 pointers to uint32_t, exact on the 32-bit RISC-V and a
  narrowing error on the 64-bit host (no 32-bit host toolchain is installed to use -m32).
- Headers with a `static_assert(false, ...)` in a discarded `if constexpr` branch are read through a
  mirror of the header tree in which those statements are dropped: GCC 13+ (the SFPI compiler is 15)
  ignores them there, the host's GCC 12 rejects them at the template's definition.

The defines and include folders are those tt-metal's JIT passed for a Wormhole TRISC build in the
mock-cluster runs (tests/host/mock checks them against its recorded compile commands).
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import tempfile
from dataclasses import dataclass
from pathlib import Path

STANDIN = Path(__file__).resolve().parent / "sfpi_standin"
# (thread, COMPILE_FOR_TRISC, PROCESSOR_INDEX) as the JIT numbers them.
THREADS = (("UNPACK", 0, 2), ("MATH", 1, 3), ("PACK", 2, 4))
# The JIT's defines for a Wormhole worker-core kernel build (bank counts and PCIe coordinates of an n150).
JIT_DEFINES = {
    "IS_NOT_POW2_NUM_DRAM_BANKS": "1", "LOG_BASE_2_OF_NUM_L1_BANKS": "6", "NUM_DRAM_BANKS": "12",
    "NUM_L1_BANKS": "64", "PCIE_NOC_X": "0", "PCIE_NOC_Y": "3", "TENSIX_FIRMWARE": None, "LOCAL_MEM_EN": "0",
    "ROUTING_FW_ENABLED": None, "PROGRAMMABLE_CORE_TYPE": "0", "ARCH_WORMHOLE": None, "DISPATCH_MESSAGE_ADDR": "0",
    "KERNEL_BUILD": None,
}
# Include folders of a TRISC build, relative to the ttnn package, in the JIT's order (the SFPI
# toolchain's include folder, runtime/sfpi/include, is where the stand-ins go).
JIT_INCLUDES = (
    ".", "ttnn", "ttnn/cpp", "tt_metal/hw/inc", "tt_metal/tt-llk/common", "tt_metal/tt-llk/tools/include",
    "tt_metal/hostdevcommon/api", "tt_metal/api", "runtime/sfpi/include",
    "tt_metal/hw/ckernels/wormhole_b0/metal/common", "tt_metal/hw/ckernels/wormhole_b0/metal/llk_io",
    "tt_metal/hw/inc/internal/tt-1xx", "tt_metal/hw/inc/internal/tt-1xx/wormhole",
    "tt_metal/hw/inc/internal/tt-1xx/wormhole/wormhole_b0_defines", "tt_metal/hw/inc/internal/tt-1xx/wormhole/noc",
    "tt_metal/tt-llk/tt_llk_wormhole_b0/common/inc", "tt_metal/tt-llk/tt_llk_wormhole_b0/llk_lib",
    "tt_metal/hw/ckernels/wormhole_b0/metal/llk_api", "tt_metal/hw/ckernels/wormhole_b0/metal/llk_api/llk_sfpu",
    "tt_metal/hw/firmware/src/tt-1xx",
)
# The header trees mirrored (so that a header found next to its includer is the mirror's copy too).
_MIRRORED = ("tt_metal/hw/inc", "tt_metal/hw/ckernels/wormhole_b0", "tt_metal/hw/firmware/src/tt-1xx",
             "tt_metal/tt-llk/common", "tt_metal/tt-llk/tools/include", "tt_metal/tt-llk/tt_llk_wormhole_b0",
             "tt_metal/hostdevcommon/api", "tt_metal/api")
_STATIC_ASSERT_FALSE = re.compile(r'static_assert\(\s*false\s*,\s*"(?:[^"\\]|\\.)*"\s*\)\s*;')
_TRISCK = "tt_metal/hw/firmware/src/tt-1xx/trisck.cc"


@dataclass
class Result:
    kernel: Path
    ok: bool
    detail: str  # "compiles", or the first error and the thread it came from


def _mirror(package: Path, dest: Path) -> Path:
    """The package's header trees under `dest`: file symlinks, except headers with static_assert(false)."""
    for sub in _MIRRORED:
        src = package / sub
        for path in src.rglob("*"):
            if not path.is_file():
                continue
            target = dest / sub / path.relative_to(src)
            target.parent.mkdir(parents=True, exist_ok=True)
            text = path.read_text(errors="replace") if path.suffix in (".h", ".hpp", ".cc", ".cpp") else ""
            if "static_assert(false" in text:
                target.write_text(_STATIC_ASSERT_FALSE.sub("/* static_assert(false) dropped: see compute_syntax.py */", text))
            else:
                target.symlink_to(path)
    # Everything else of the package as it is.
    for parent in ("", "tt_metal", "tt_metal/hw", "tt_metal/hw/ckernels", "tt_metal/hw/firmware",
                   "tt_metal/hw/firmware/src", "tt_metal/tt-llk", "tt_metal/hostdevcommon"):
        for entry in (package / parent).iterdir():
            target = dest / parent / entry.name
            if not target.exists() and entry.name != "runtime":
                target.parent.mkdir(parents=True, exist_ok=True)
                target.symlink_to(entry)
    (dest / "runtime" / "sfpi").mkdir(parents=True)
    (dest / "runtime" / "sfpi" / "include").symlink_to(STANDIN)
    return dest


def _descriptors(fidelity: int, approx: bool, fp32_dest: bool) -> str:
    """chlkc_descriptors.h as the JIT writes it, for Float16_b CBs (formats do not change what parses)."""
    def arr(ctype: str, name: str, value: int) -> str:
        return f"constexpr {ctype} {name}[32] = {{{','.join([str(value)] * 32)}}};"

    geometry = (("tile_num_faces", 4), ("partial_face", 0), ("tile_face_r_dim", 16), ("narrow_tile", 0),
                ("tile_r_dim", 32), ("tile_c_dim", 32), ("num_faces_r_dim", 2), ("num_faces_c_dim", 2))
    unpack = [arr("uint8_t", "unpack_src_format", 5), arr("uint8_t", "unpack_dst_format", 5)]
    unpack += [arr("uint8_t", f"unpack_{n}", v) for n, v in geometry] + [arr("uint16_t", "unpack_tile_size", 2048)]
    pack = [arr("unsigned char", "pack_src_format", 5), arr("unsigned char", "pack_dst_format", 5)]
    pack += [arr("uint8_t", f"pack_{n}", v) for n, v in geometry] + [arr("uint16_t", "pack_tile_size", 2048)]
    fid = ['#include "llk_defs.h"',
           f"constexpr ckernel::MathFidelity MATH_FIDELITY = static_cast<ckernel::MathFidelity>({fidelity});",
           f"constexpr bool APPROX = {'true' if approx else 'false'};"]
    lines = ["#pragma once", "#if defined(UCK_CHLKC_MATH) || defined(UCK_CHLKC_PACK)", *fid, "#endif",
             "#if !defined(UCK_CHLKC_PACK)", *unpack, "#endif",
             "#if !defined(UCK_CHLKC_MATH) && !defined(UCK_CHLKC_UNPACK)", *pack,
             "#if defined(UCK_CHLKC_PACK)", arr("uint8_t", "unpack_src_format", 5), "#endif", "#endif",
             f"constexpr bool DST_ACCUM_MODE = {'true' if fp32_dest else 'false'};",
             "#define DST_SYNC_MODE DstSync::SyncHalf"]
    return "\n".join(lines) + "\n"


def check_compute_kernels(package: Path, variants: list[tuple[Path, list[int], dict[str, str]]],
                          cxx: str | None = None) -> list[Result]:
    """Syntax-check each (kernel, compile-time args, defines) for the three TRISCs, as a registered
    program builds it. The descriptor header holds Float16_b CBs, HiFi4, exact exp and fp32 DST:
    formats and modes change which code paths run, not what must parse."""
    cxx = cxx or os.environ.get("CXX") or shutil.which("g++")
    if not cxx:
        return [Result(k, False, "no g++ on PATH") for k, _, _ in variants]
    out = []
    with tempfile.TemporaryDirectory(prefix="ttprefill-compute-syntax-") as tmp:
        root = _mirror(package, Path(tmp) / "ttnn")
        for n, (kernel, ct_args, defines) in enumerate(variants):
            gen = Path(tmp) / f"gen{n}"
            gen.mkdir()
            (gen / "chlkc_descriptors.h").write_text(_descriptors(4, False, True))
            (gen / "defines_generated.h").write_text(
                "#pragma once\n" + "".join(f"#define {k} {v}\n" for k, v in sorted(defines.items())))
            (gen / "named_args_generated.h").write_text("#pragma once\n")
            for thread, _, _ in THREADS:
                (gen / f"chlkc_{thread.lower()}.cpp").write_text(
                    f'#define TRISC_{thread}\n#include "defines_generated.h"\n#include "named_args_generated.h"\n'
                    f'void kernel_main();\n#include "{kernel.resolve()}"\n')
            failure = None
            for thread, trisc, processor in THREADS:
                flags = dict(JIT_DEFINES, PROCESSOR_INDEX=str(processor), COMPILE_FOR_TRISC=str(trisc),
                             KERNEL_COMPILE_TIME_ARGS=",".join(str(int(a) & 0xFFFFFFFF) for a in ct_args),
                             FULL_KERNEL_NAME=f'"{kernel.stem}/"', **{f"UCK_CHLKC_{thread}": None})
                cmd = [cxx, "-std=c++17", "-fsyntax-only", "-fpermissive", "-w", f"-I{gen}", f"-I{kernel.parent}",
                       *(f"-I{root / sub}" for sub in JIT_INCLUDES),
                       *((f"-D{k}" if v is None else f"-D{k}={v}") for k, v in flags.items()), str(root / _TRISCK)]
                proc = subprocess.run(cmd, capture_output=True, text=True)
                if proc.returncode != 0:
                    failure = f"{thread.lower()} thread: {_first_error(proc.stderr, root)}"
                    break
            out.append(Result(kernel, failure is None, failure or "compiles for unpack, math and pack"))
    return out


def _first_error(stderr: str, root: Path) -> str:
    for line in stderr.splitlines():
        if " error: " in line or "fatal error:" in line:
            return line.strip().replace(str(root) + "/", "")
    return stderr.strip().splitlines()[-1] if stderr.strip() else "g++ failed without a message"
