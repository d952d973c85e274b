"""Kernel JIT for the simulator: compile a kernel source with the host g++ against the simulator's
kernel headers (sim/include, at the real TT-Metalium include paths), the way tt-metal's JIT builds a
kernel for a RISC-V core: compile-time args and defines on the command line, per-role defines.

Builds are cached by a content hash of the source, every header it can include, the args, the
defines, the compiler and its flags, so a second run compiles nothing.
"""

from __future__ import annotations

import functools
import hashlib
import os
import shutil
import subprocess
import tempfile
from dataclasses import dataclass
from pathlib import Path

from loguru import logger

from . import ttnn_env
from . import metal2
from .program import DRAM_BANKS, GRID_X, GRID_Y, ComputeConfig, Kernel, Role

REPO_ROOT = Path(__file__).resolve().parents[2]
SIM_INCLUDE = REPO_ROOT / "sim" / "include"
KERNELS_DIR = REPO_ROOT / "kernels"
HEADER_SUFFIXES = (".h", ".hpp", ".inl", ".inc")
# C++20, as tt-metal builds kernels: ttnn's kernel_lib headers use class-type template parameters.
CXX_FLAGS = ("-std=c++20", "-O2", "-fPIC", "-shared", "-fvisibility=hidden", "-w")


class KernelCompileError(RuntimeError):
    """g++ rejected a kernel; the message carries the kernel path and the compiler's output."""


def cache_dir() -> Path:
    root = os.environ.get("TTPREFILL_JIT_CACHE")
    path = Path(root) if root else Path(os.environ.get("XDG_CACHE_HOME", Path.home() / ".cache")) / "ttprefill" / "jit"
    path.mkdir(parents=True, exist_ok=True)
    return path


@functools.lru_cache(maxsize=1)
def compiler() -> tuple[str, str]:
    cxx = os.environ.get("CXX") or shutil.which("g++") or shutil.which("c++")
    if not cxx:
        raise KernelCompileError("no C++ compiler found (install g++ or set CXX)")
    version = subprocess.run([cxx, "--version"], capture_output=True, text=True, check=True).stdout
    return cxx, version


@functools.lru_cache(maxsize=1)
def upstream_include_dirs() -> tuple[Path, ...]:
    """ttnn's kernel helper folders, searched after sim/include and the kernel's own folder (ttnn_env)."""
    return tuple(ttnn_env.upstream_helper_include_dirs())


@functools.lru_cache(maxsize=1)
def _upstream_digest() -> str:
    """The pinned wheel's helper headers change only with its version: the version and place stand for them."""
    dirs = upstream_include_dirs()
    version = ttnn_env.headers_version(ttnn_env.headers_root()) if dirs else None
    return hashlib.sha256(repr((version, [str(d) for d in dirs])).encode()).hexdigest()


@functools.lru_cache(maxsize=1)
def _headers_digest() -> str:
    """Hash of every simulator header: any change to the kernel API rebuilds every kernel."""
    h = hashlib.sha256()
    for p in sorted(q for q in SIM_INCLUDE.rglob("*") if q.suffix in HEADER_SUFFIXES and q.is_file()):
        h.update(str(p.relative_to(SIM_INCLUDE)).encode())
        h.update(p.read_bytes())
    return h.hexdigest()


def _local_includes_digest(source: Path) -> str:
    """Hash of the files next to the kernel (kernel-local helpers it may #include)."""
    h = hashlib.sha256()
    for p in sorted(source.parent.glob("*")):
        if p.suffix in HEADER_SUFFIXES and p.is_file():
            h.update(p.name.encode())
            h.update(p.read_bytes())
    return h.hexdigest()


def device_defines() -> dict[str, str]:
    """The defines tt-metal's JIT sets for every kernel from the device it builds for: the DRAM and
    worker-L1 bank counts (bank-interleaved address generators divide by them)."""
    l1_banks = GRID_X * GRID_Y
    defines = {"NUM_DRAM_BANKS": str(DRAM_BANKS), "NUM_L1_BANKS": str(l1_banks),
               "LOG_BASE_2_OF_NUM_L1_BANKS": str(l1_banks.bit_length() - 1)}
    if DRAM_BANKS & (DRAM_BANKS - 1):  # set only when the count is not a power of two, as tt-metal's JIT does
        defines["IS_NOT_POW2_NUM_DRAM_BANKS"] = "1"
    return defines


def role_defines(role: Role, config: ComputeConfig | None) -> dict[str, str]:
    """The defines tt-metal's JIT sets per processor, plus the compute config as macros."""
    if role is Role.COMPUTE:
        assert config is not None
        return {
            "COMPILE_FOR_TRISC": "1",
            "MATH_FIDELITY": str(int(config.math_fidelity)),
            "DST_ACCUM_MODE": "true" if config.fp32_dest_acc_en else "false",
            "APPROX": "true" if config.math_approx_mode else "false",
        }
    return {
        "COMPILE_FOR_BRISC" if role is Role.RISCV_0 else "COMPILE_FOR_NCRISC": "1",
        "NOC_INDEX": str(role.noc),
    }


def _c_string(text: str) -> str:
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'


def named_args_header(named: tuple[tuple[str, int], ...]) -> Path:
    """The header that defines KERNEL_COMPILE_TIME_ARG_MAP for a kernel's named compile-time args.

    tt-metal's JIT writes this map into a generated header that it force-includes (one -D define
    could outgrow the per-argument length limit of the OS); we do the same, in the JIT cache, under a
    name derived from its content so concurrent builds never write different text to one file."""
    for name, _ in named:
        if not name or "\n" in name:
            raise KernelCompileError(f"named compile-time argument {name!r}: names must be non-empty single-line strings")
    pairs = ", ".join(f"{{{_c_string(name)}, {value}u}}" for name, value in named)
    text = f"// Generated by ttprefill.device.jit: the kernel's named compile-time arguments.\n#pragma once\n" \
           f"#define KERNEL_COMPILE_TIME_ARG_MAP {pairs}\n"
    folder = cache_dir() / "named_args"
    folder.mkdir(exist_ok=True)
    path = folder / f"{hashlib.sha256(text.encode()).hexdigest()[:32]}.h"
    if not path.exists():
        with tempfile.NamedTemporaryFile("w", dir=folder, suffix=".h", delete=False) as tmp:
            tmp.write(text)
        os.replace(tmp.name, path)
    return path


def generated_folder(files: tuple[tuple[str, str], ...]) -> Path:
    """A folder of the JIT cache holding these generated headers under their own names (tt-metal's), its
    name derived from their content so concurrent builds never write different text to one file."""
    folder = cache_dir() / "generated" / hashlib.sha256(repr(files).encode()).hexdigest()[:32]
    folder.mkdir(parents=True, exist_ok=True)
    for name, text in files:
        path = folder / name
        if not path.exists():
            with tempfile.NamedTemporaryFile("w", dir=folder, suffix=".tmp", delete=False) as tmp:
                tmp.write(text)
            os.replace(tmp.name, path)
    return folder


@dataclass(frozen=True)
class BuildRequest:
    source: Path
    role: Role
    compile_time_args: tuple[int, ...]
    defines: tuple[tuple[str, str], ...]
    named_compile_time_args: tuple[tuple[str, int], ...] = ()
    generated_headers: tuple[tuple[str, str], ...] = ()  # Metal 2.0: (file name, text), included first

    @classmethod
    def of(cls, kernel: Kernel, generated_defines: dict[str, str] | None = None) -> "BuildRequest":
        defines = dict(kernel.defines)
        defines.update(generated_defines or {})
        defines.update(device_defines())
        defines.update(role_defines(kernel.role, kernel.compute_config))
        if kernel.role is not Role.COMPUTE:
            defines["NOC_INDEX"] = str(kernel.noc_index)  # the kernel's own NoC, where its factory moved it
        named = tuple((str(n), int(v)) for n, v in kernel.named_compile_time_args.items())
        return cls(kernel.source.resolve(), kernel.role, tuple(int(a) for a in kernel.bound_compile_time_args()),
                   tuple(sorted(defines.items())), named, metal2.generated_headers(kernel))

    def command(self, output: Path) -> list[str]:
        cxx, _ = compiler()
        cmd = [cxx, *CXX_FLAGS, f"-I{SIM_INCLUDE}", f"-I{self.source.parent}",
               *(f"-I{d}" for d in upstream_include_dirs())]
        if self.named_compile_time_args:
            cmd += ["-include", str(named_args_header(self.named_compile_time_args))]
        cmd += ["-include", "ttsim/kernel_shim.h"]
        if self.generated_headers:
            folder = generated_folder(self.generated_headers)
            for name, _ in self.generated_headers:
                cmd += ["-include", str(folder / name)]
        args = ",".join(str(a) for a in self.compile_time_args)
        cmd.append(f"-DKERNEL_COMPILE_TIME_ARGS={args}")
        for name, value in self.defines:
            cmd.append(f"-D{name}={value}")
        cmd += [str(self.source), "-o", str(output)]
        return cmd

    def digest(self) -> str:
        h = hashlib.sha256()
        h.update(self.source.read_bytes())
        h.update(_local_includes_digest(self.source).encode())
        h.update(_headers_digest().encode())
        h.update(_upstream_digest().encode())
        h.update(repr((self.role.value, self.compile_time_args, self.defines, self.named_compile_time_args,
                       self.generated_headers, CXX_FLAGS)).encode())
        h.update(compiler()[1].encode())
        return h.hexdigest()[:32]


@dataclass
class JitStats:
    compiled: int = 0
    cached: int = 0
    compile_seconds: float = 0.0


STATS = JitStats()


# ---- compute-kernel descriptors --------------------------------------------------------------------
# tt-metal's JIT bakes each CB's data format into every kernel of a program (unpack_src_format,
# pack_dst_format, ... of its generated chlkc_*.h; data-movement kernels read them through
# get_dataformat); sim/include/chlkc_descriptors.h derives those arrays from one define.
NO_CB_FORMAT = 255


def cb_format_defines(kernel: Kernel, circular_buffers) -> dict[str, str]:
    """The data format of each CB index on the kernel's cores (255 where there is none)."""
    formats = [NO_CB_FORMAT] * 32
    cores = set(kernel.cores.cores())
    for cb in circular_buffers:
        if cores & set(cb.cores.cores()):
            for v in cb.views():
                formats[v.index] = int(v.data_format)
    return {"TTSIM_CB_FORMATS": ",".join(str(f) for f in formats)}
# ------------------------------------------------------------------------------------------------------


def build(kernel: Kernel, circular_buffers=()) -> Path:
    """Return the shared object for a kernel, compiling it only if the cache lacks it.

    circular_buffers: the program's CBs, whose formats a compute kernel is built with."""
    import time

    request = BuildRequest.of(kernel, cb_format_defines(kernel, circular_buffers))
    out = cache_dir() / f"{request.source.stem}-{request.digest()}.so"
    if out.exists():
        STATS.cached += 1
        return out
    logger.debug("JIT compiling {} ({})", kernel.name, kernel.role.value)
    t0 = time.perf_counter()
    with tempfile.NamedTemporaryFile(dir=out.parent, suffix=".so", delete=False) as tmp:
        tmp_path = Path(tmp.name)
    proc = subprocess.run(request.command(tmp_path), capture_output=True, text=True)
    if proc.returncode != 0:
        tmp_path.unlink(missing_ok=True)
        raise KernelCompileError(f"kernel {kernel.source} failed to compile for {kernel.role.value}:\n{proc.stderr.strip()}")
    os.replace(tmp_path, out)  # atomic: concurrent builders never see a half-written file
    STATS.compiled += 1
    STATS.compile_seconds += time.perf_counter() - t0
    return out
