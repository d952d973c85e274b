"""How much of tt-metal's own kernel code compiles in the simulator.

Every Tensix kernel source of the pinned ttnn wheel under the operation families named in
`FAMILIES` is compiled with the simulator's JIT command (the same include path, force-included shim,
role defines and compute config macros), syntax only, and each failure is reduced to what it misses:
a header that does not exist in sim/include, or a symbol that is not declared. Results are cached by
the JIT's content hash, so a second report compiles only what changed.

This measures compilation, not behaviour: tests/upstream runs a subset of these kernels and checks
their numbers.
"""

from __future__ import annotations

import collections
import concurrent.futures
import json
import os
import re
import subprocess
from dataclasses import dataclass, field
from pathlib import Path

from .device import jit, metal2, ttnn_env
from .device.program import ComputeConfig, CoreRangeSet, DataFormat, Kernel, Role

# A kernel is compiled with the arguments a registered conformance program gives it (the CB formats too);
# one no program builds gets placeholders: enough compile-time words that no kernel indexes past them, each 2
# (an interleaved DRAM TensorAccessorArgs config word, a small count elsewhere), and every CB in bf16, so a
# kernel fails for what the simulator lacks rather than for args nobody supplied.
PLACEHOLDER_CT_ARGS = (2,) * 128
PLACEHOLDER_CB_FORMATS = {"TTSIM_CB_FORMATS": ",".join([str(int(DataFormat.Float16_b))] * 32)}

FAMILIES = ("eltwise", "matmul", "reduction", "normalization", "transformer", "data_movement")
OPERATIONS_SUBDIR = Path("ttnn") / "cpp" / "ttnn" / "operations"


@dataclass
class FileResult:
    path: str  # relative to the ttnn package
    role: str
    ok: bool
    missing_headers: list[str] = field(default_factory=list)
    missing_symbols: list[str] = field(default_factory=list)
    first_error: str = ""
    args_from: str = "placeholders"  # or the conformance program whose arguments it was compiled with


def operations_root() -> Path:
    return ttnn_env.package_root() / OPERATIONS_SUBDIR


def kernel_files(families: tuple[str, ...] = FAMILIES) -> list[Path]:
    """The Tensix kernel sources of these families: .cpp files under a folder named kernels*."""
    root = operations_root()
    out: list[Path] = []
    for family in families:
        for p in sorted((root / family).rglob("*.cpp")):
            rel = p.relative_to(root)
            if any(part.startswith("kernels") for part in rel.parts[:-1]):
                out.append(p)
    return out


def role_of(path: Path) -> Role:
    """Compute kernels live in a folder named compute (or have compute in the file name); the rest move data."""
    parts = [p.lower() for p in path.parts[-4:]]
    if any("compute" in p for p in parts):
        return Role.COMPUTE
    return Role.RISCV_0


_MISSING_HEADER = re.compile(r"fatal error: ([^:]+): No such file or directory")
_UNDECLARED = re.compile(
    r"error: (?:'([^']+)' (?:was not declared in this scope|has not been declared|is not a member of '[^']+'|"
    r"is not a class, namespace, or enumeration|does not name a type)|"
    r"'([^']+)' is not a member of '([^']+)'|no (?:matching )?(?:member )?function (?:for call to|named) '([^']+)')")
_NOT_MEMBER = re.compile(r"error: '([^']+)' is not a member of '([^']+)'")
_NO_MEMBER = re.compile(r"error: '([^']+)' has no member named '([^']+)'")
_NOT_TEMPLATE = re.compile(r"error: '([^']+)' is not a template")


def _symbols(stderr: str) -> list[str]:
    found: list[str] = []
    for m in _NOT_MEMBER.finditer(stderr):
        found.append(f"{m.group(2)}::{m.group(1)}")
    for m in _NO_MEMBER.finditer(stderr):
        found.append(f"{m.group(1)}.{m.group(2)}")
    for m in _UNDECLARED.finditer(stderr):
        name = m.group(1) or m.group(2) or m.group(4)
        if name and not any(name in f for f in found):
            found.append(name)
    for m in _NOT_TEMPLATE.finditer(stderr):
        found.append(m.group(1) + "<>")
    return list(dict.fromkeys(found))


# Part of each cached result's name: bump it when the way a compile is reduced to a FileResult changes.
_RESULT_VERSION = 2
_NAMED_CT_ARG = re.compile(r'get_named_compile_time_arg_val\(\s*"(\w+)"\s*\)')


def representative_kernels() -> dict[Path, tuple[str, Kernel, list]]:
    """source -> (program name, kernel, the program's CBs) for every kernel a registered conformance
    program builds (ttprefill.ops.upstream.registry entries that give `build`)."""
    from .device.offline_device import OfflineDevice
    from .ops.upstream import registry

    out: dict[Path, tuple[str, Kernel, list]] = {}
    for name, entry in sorted(registry.discover().items()):
        if entry.build is None:
            continue
        try:
            program = entry.build(OfflineDevice())
        except Exception:  # a builder that fails shows in the conformance count; placeholders stand in here
            continue
        for k in program.kernels:
            out.setdefault(k.source.resolve(), (name, k, program.circular_buffers))
    return out


def _request(path: Path, representative: tuple[str, Kernel, list] | None) -> tuple[jit.BuildRequest, str]:
    if representative is not None:
        name, kernel, cbs = representative
        return jit.BuildRequest.of(kernel, jit.cb_format_defines(kernel, cbs)), name
    role = role_of(path)
    kernel = Kernel(path, role, CoreRangeSet.of([(0, 0)]), compile_time_args=list(PLACEHOLDER_CT_ARGS),
                    compute_config=ComputeConfig() if role is Role.COMPUTE else None)
    kernel = metal2.with_placeholder_bindings(kernel)  # Metal 2.0 kernels need their generated names
    named = {n: 2 for n in _NAMED_CT_ARG.findall(path.read_text(errors="replace"))}
    if named:
        kernel.named_compile_time_args = {**named, **kernel.named_compile_time_args}
    return jit.BuildRequest.of(kernel, PLACEHOLDER_CB_FORMATS), "placeholders"


def _check(path: Path, package: Path, cache: Path, representative=None) -> FileResult:
    role = role_of(path) if representative is None else representative[1].role
    request, args_from = _request(path, representative)
    key = cache / f"{request.digest()}-{_RESULT_VERSION}.json"
    rel = str(path.relative_to(package))
    if key.exists():
        data = json.loads(key.read_text())
        data["path"] = rel
        data["args_from"] = args_from
        return FileResult(**data)
    cmd = request.command(Path(os.devnull))
    cmd = [c for c in cmd if c not in ("-shared", "-O2")]
    cmd.insert(1, "-fsyntax-only")
    # The C locale keeps g++'s quotes ASCII, which _symbols parses (a UTF-8 locale gives curly ones).
    proc = subprocess.run(cmd, capture_output=True, text=True, env={**os.environ, "LC_ALL": "C"})
    stderr = proc.stderr
    result = FileResult(rel, role.value, proc.returncode == 0, args_from=args_from)
    if proc.returncode != 0:
        result.missing_headers = sorted(set(_MISSING_HEADER.findall(stderr)))
        result.missing_symbols = _symbols(stderr)
        first = next((line for line in stderr.splitlines() if "error" in line), stderr[:300])
        result.first_error = first[:400]
    key.write_text(json.dumps({k: v for k, v in result.__dict__.items() if k not in ("path", "args_from")}))
    return result


def report(families: tuple[str, ...] = FAMILIES, jobs: int | None = None) -> dict:
    """Compile every kernel file of these families in the simulator (syntax only) and summarise."""
    package = ttnn_env.package_root()
    files = kernel_files(families)
    cache = jit.cache_dir() / "upstream-coverage"
    cache.mkdir(parents=True, exist_ok=True)
    jobs = jobs or max(1, os.cpu_count() or 1)
    representatives = representative_kernels()
    with concurrent.futures.ThreadPoolExecutor(jobs) as pool:
        results = list(pool.map(lambda p: _check(p, package, cache, representatives.get(p.resolve())), files))
    headers = collections.Counter(h for r in results for h in r.missing_headers)
    symbols = collections.Counter(s for r in results for s in r.missing_symbols)
    by_family = {}
    for family in families:
        fam = [r for r in results if r.path.startswith(str(OPERATIONS_SUBDIR / family) + "/")]
        by_family[family] = {"files": len(fam), "compiling": sum(r.ok for r in fam)}
    return {
        "upstream_kernel_files": len(results),
        "upstream_compiling": sum(r.ok for r in results),
        "by_family": by_family,
        "missing_headers": dict(headers.most_common()),
        "missing_symbols": dict(symbols.most_common()),
        "failing": [r.__dict__ for r in results if not r.ok],
    }


def main() -> None:  # pragma: no cover - a developer's tool: python -m ttprefill.upstream_coverage
    import argparse

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--family", action="append", help="limit to these families (default: all six)")
    ap.add_argument("--top", type=int, default=40, help="how many missing headers and symbols to list")
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args()
    r = report(tuple(args.family) if args.family else FAMILIES)
    if args.json:
        print(json.dumps(r, indent=1))
        return
    print(f"upstream kernel files: {r['upstream_kernel_files']}, compiling in the simulator: {r['upstream_compiling']}")
    for fam, v in r["by_family"].items():
        print(f"  {fam:15s} {v['compiling']:4d} / {v['files']}")
    print("missing headers (files):")
    for h, n in list(r["missing_headers"].items())[: args.top]:
        print(f"  {n:4d}  {h}")
    print("missing symbols (files):")
    for s, n in list(r["missing_symbols"].items())[: args.top]:
        print(f"  {n:4d}  {s}")


if __name__ == "__main__":  # pragma: no cover
    main()
