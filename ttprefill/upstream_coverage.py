"""How much of tt-metal's own kernel code compiles in the simulator.

Every Tensix kernel source of the pinned ttnn wheel under the operation families named in
`FAMILIES` is compiled with the simulator's JIT command (the same include path, force-included shim,
role defines and compute config macros), syntax only, and each failure is reduced to what it misses:
a header that does not exist in sim/include, or a symbol that is not declared. Results are cached by
the JIT's content hash, so a second report compiles only what changed.

A kernel is compiled with what its program factory gives it: the arguments of a registered conformance
program that builds it, else placeholders with, on top, the defines and compile-time args that its
factory always passes (FACTORY_ARGS, one representative op per factory, each entry naming the tt-metal
source it is read from). A kernel compiled without the defines its factory always passes would fail
for the test, not for the simulator.

This measures compilation, not behaviour: tests/upstream runs a subset of these kernels and checks
their numbers.
"""

from __future__ import annotations

import collections
import concurrent.futures
import dataclasses
import fnmatch
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


@dataclass(frozen=True)
class FactoryArgs:
    """What an upstream program factory always gives the kernels it builds, where the kernel cannot
    compile without it (a define its source expands, a compile-time arg it checks): one representative
    choice where the factory's value varies with the op (add for a binary op, SUM over rows for a reduce).
    Applied over the placeholders to every kernel path matching the pattern, and only to kernels no
    conformance program builds."""
    factory: str  # the tt-metal source the values are read from
    defines: tuple[tuple[str, str], ...] = ()
    compile_time_args: tuple[int, ...] = ()  # the leading positional args; placeholders follow
    named_compile_time_args: tuple[tuple[str, int], ...] = ()
    fp32_dest_acc: bool | None = None  # the compute config's, where the kernel's DEST use depends on it


def factory_args_for(relative: str) -> list[FactoryArgs]:
    """The FACTORY_ARGS entries whose pattern matches a kernel path (relative to ttnn/cpp/ttnn/operations),
    in table order (a later entry's values win)."""
    return [a for pattern, a in FACTORY_ARGS if fnmatch.fnmatchcase(relative, pattern)]


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
    factories = factory_args_for(str(path.relative_to(operations_root())))
    defines: dict[str, str] = {}
    ct_args = list(PLACEHOLDER_CT_ARGS)
    named_given: dict[str, int] = {}
    config = ComputeConfig() if role is Role.COMPUTE else None
    for f in factories:
        defines.update(f.defines)
        ct_args[: len(f.compile_time_args)] = f.compile_time_args
        named_given.update(f.named_compile_time_args)
        if config is not None and f.fp32_dest_acc is not None:
            config = dataclasses.replace(config, fp32_dest_acc_en=f.fp32_dest_acc)
    kernel = Kernel(path, role, CoreRangeSet.of([(0, 0)]), compile_time_args=ct_args, defines=defines,
                    compute_config=config)
    kernel = metal2.with_placeholder_bindings(kernel)  # Metal 2.0 kernels need their generated names
    named = {n: 2 for n in _NAMED_CT_ARG.findall(path.read_text(errors="replace"))}
    kernel.named_compile_time_args = {**named, **kernel.named_compile_time_args, **named_given}
    args_from = "placeholders" + "".join(f" + {f.factory}" for f in factories)
    return jit.BuildRequest.of(kernel, PLACEHOLDER_CB_FORMATS), args_from


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


def _args_kind(args_from: str) -> str:
    """What a kernel was compiled with: a conformance program's arguments, its factory's defines and args
    over placeholders, or placeholders alone."""
    if not args_from.startswith("placeholders"):
        return "conformance program"
    return "factory args" if " + " in args_from else "placeholders"


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
        by_family[family] = {"files": len(fam), "compiling": sum(r.ok for r in fam),
                             "compiled_with": dict(collections.Counter(_args_kind(r.args_from) for r in fam))}
    return {
        "upstream_kernel_files": len(results),
        "upstream_compiling": sum(r.ok for r in results),
        "by_family": by_family,
        "missing_headers": dict(headers.most_common()),
        "missing_symbols": dict(symbols.most_common()),
        "failing": [r.__dict__ for r in results if not r.ok],
    }


# Per kernel path (fnmatch, relative to ttnn/cpp/ttnn/operations): the defines and compile-time args the
# factory that builds it always passes. Values are the factory's for one representative op.
_ACT = (("PROCESS_LHS_ACTIVATIONS(i)", ""), ("PROCESS_RHS_ACTIVATIONS(i)", ""), ("PROCESS_POST_ACTIVATIONS(i)", ""))
_BNG = "eltwise/binary_ng/device/"
_BNG_UTILS = "eltwise/binary_ng/device/binary_ng_utils.cpp"
_B_BCAST = (("BCAST_INPUT", "1"), ("SRC_BCAST", "0"), ("SRC_BCAST_B", "1"), ("BCAST_LLK", "1"))
# reduce_op_utils::get_defines names the enums with their namespace: the data-movement readers, which take
# the same defines, do not see ckernel's names unqualified.
_REDUCE = (("REDUCE_OP", "ckernel::PoolType::SUM"), ("REDUCE_DIM", "ckernel::ReduceDim::REDUCE_ROW"),
           ("ENABLE_FP32_DEST_ACC", "0"), ("DST_SYNC_FULL", "0"))


def _bcast(dim: str, chain_dim: str) -> tuple[tuple[str, str], ...]:
    return (("BCAST_OP", "add_tiles_bcast"), ("BCAST_LLKOP", "EltwiseBinaryType::ELWADD"),
            ("BCAST_DIM", f"BroadcastType::{dim}"), ("CHAIN_BCAST_OP", "compute_kernel_lib::BinaryFpuOp::Add"),
            ("CHAIN_BCAST_DIM", f"compute_kernel_lib::BroadcastDim::{chain_dim}"))


FACTORY_ARGS: tuple[tuple[str, FactoryArgs], ...] = (
    # Legacy element-wise binary (add): ELTWISE_OP / ELTWISE_OP_TYPE.
    ("eltwise/binary/device/kernels/compute/eltwise_binary_kernel.cpp", FactoryArgs(
        "eltwise/binary/device/binary_op_utils.cpp get_defines (ADD)",
        (("ELTWISE_OP", "add_tiles"), ("ELTWISE_OP_TYPE", "EltwiseBinaryType::ELWADD")))),
    # binary_ng: no activations (empty PROCESS_*_ACTIVATIONS), B the broadcast input, op add.
    (_BNG + "kernels*/compute/*.cpp", FactoryArgs(
        "eltwise/binary_ng/device/binary_ng_program_factory.cpp (add_activation_defines, broadcast B)",
        _ACT + _B_BCAST)),
    (_BNG + "kernels*/compute/eltwise_binary*.cpp", FactoryArgs(
        _BNG_UTILS + " OpConfig::as_defines (FPU ADD)",
        (("BINARY_OP", "add_tiles"), ("BINARY_OP_TYPE", "EltwiseBinaryType::ELWADD")))),
    (_BNG + "kernels*/compute/eltwise_binary_sfpu*.cpp", FactoryArgs(
        _BNG_UTILS + " OpConfig::as_defines (SFPU ADD, bf16)",
        (("BINARY_SFPU_INIT", "add_binary_tile_init();"), ("BINARY_SFPU_OP", "add_binary_tile")))),
    # where(cond, a, b) through binary_ng's SFPU path: four DST operands.
    (_BNG + "kernels*/compute/eltwise_where*.cpp", FactoryArgs(
        "eltwise/binary_ng/device/binary_ng_program_factory.cpp (WHERE, bf16)",
        (("BINARY_SFPU_INIT", "where_tile_init();"), ("BINARY_SFPU_OP", "where_tile<DataFormat::Float16_b>"),
         ("WHERE_DATA_FORMAT", "Float16_b")))),
    (_BNG + "kernels_ng/dataflow/reader_interleaved_*.cpp", FactoryArgs(
        _BNG_UTILS + " get_dataflow_defines (bf16 inputs)",
        tuple((f"{name}{suffix}", fn) for suffix in ("", "_B") for name, fn in (
            ("FILL_TILE_WITH_FIRST_COLUMN", "fill_tile_with_first_column_bfloat16"),
            ("FILL_TILE_WITH_FIRST_ROW", "fill_tile_with_first_row_bfloat16"),
            ("FILL_TILE_WITH_FIRST_ELEMENT", "fill_tile_with_first_element_bfloat16"),
            ("FILL_WITH_VALUE", "fill_with_val_bfloat16"),
            ("FILL_TILE_WITH_FIRST_COLUMN_RM", "fill_tile_with_first_column_rm_bfloat16"),
            ("FILL_TILE_WITH_FIRST_ROW_RM", "fill_tile_with_first_row_rm_bfloat16"))))),
    # Ternary: where on bf16; the addc kernels addcmul; the integer addcmul kernels Int32.
    ("eltwise/ternary/device/kernels/compute/*.cpp", FactoryArgs(
        "eltwise/ternary/device/ternary_op_utils.cpp get_compute_defines (WHERE, bf16)",
        (("TERNARY_SFPU_OP_INIT", "where_tile_init"), ("TERNARY_SFPU_OP_FUNC", "where_tile<DataFormat::Float16_b>")))),
    ("eltwise/ternary/device/kernels/compute/ternary_addc*.cpp", FactoryArgs(
        "eltwise/ternary/device/ternary_op_utils.cpp get_compute_defines (ADDCMUL, bf16)",
        (("TERNARY_SFPU_OP_INIT", "addcmul_tile_init"),
         ("TERNARY_SFPU_OP_FUNC", "addcmul_tile<DataFormat::Float16_b>")))),
    ("eltwise/ternary/device/kernels/compute/ternary_addcmul_int*.cpp", FactoryArgs(
        "eltwise/ternary/device ADDCMUL on INT32 (the format the kernel's Int ops take)",
        (("ADDCMUL_DATA_FORMAT", "DataFormat::Int32"),))),
    # A unary chain in get_block_defines' form (one op, relu, on DST tile 0).
    ("eltwise/unary/device/kernels/compute/mac_tss_kernel.cpp", FactoryArgs(
        "eltwise/unary/common/unary_op_utils.cpp get_block_defines (a one-op chain)",
        (("SFPU_OP_CHAIN_0", "SFPU_OP_CHAIN_0_INIT_0 SFPU_OP_CHAIN_0_FUNC_0"),
         ("SFPU_OP_CHAIN_0_INIT_0", "relu_tile_init();"), ("SFPU_OP_CHAIN_0_FUNC_0", "relu_tile(0);"),
         ("SFPU_OP_RELU_FAMILY_INCLUDE", "1")))),
    ("eltwise/unary_backward/device/kernels/compute/eltwise_bw_gelu_tanh*.cpp", FactoryArgs(
        "eltwise/unary_backward gelu_bw factory (bf16 output, no fp32 DST)",
        (("COPY_DEST_DATA_FORMAT", "DataFormat::Float16_b"),
         ("BF16_ROUNDING_MODE", "ckernel::DstRoundingMode::NearestEven")), fp32_dest_acc=False)),
    ("reduction/accumulation/device/kernels/compute/accumulation_compute.cpp", FactoryArgs(
        "reduction/accumulation/device/accumulation_program_factory.cpp (CUMSUM, float)",
        (("BINARY_OP_INIT", "add_binary_tile_init"), ("BINARY_OP", "add_binary_tile"),
         ("FILL_TILE", "fill_tile_bitcast")))),
    # Reduce: sum over rows; the readers carry the DEST config too (they size DEST_AUTO_LIMIT from it).
    ("reduction/generic/device/kernels/*", FactoryArgs(
        "reduction/generic/device/reduce_op_utils.cpp get_defines (SUM, W) + the reduce factories' DEST defines",
        _REDUCE)),
    ("reduction/generic/device/kernels/dataflow/reader_unary_reduce_universal_twopass_start_id.cpp", FactoryArgs(
        "reduction/generic/device Welford two-pass factory (a streaming CB of 8 tiles)",
        (("WELFORD_TWO_PASS", "1"), ("WELFORD_TWO_PASS_STREAMING_CB_TILES", "8")))),
    # topk route prep: CLAMP_BITS is the fp32 pattern of the lowest finite bf16; args bw_full, bw_last, cb in/out.
    ("reduction/topk/device/kernels/compute/topk_route_prep_untilize_clamp.cpp", FactoryArgs(
        "reduction/topk/device topk route-prep factory", (("CLAMP_BITS", "4286513152u"),), (1, 1, 0, 16))),
    # The gathered matmul names its per-batch output and partials CBs by index (cb_mm_out_<i>,
    # cb_mm_partials_<i>, i < 16), which its factory passes as named args: CBs 16.. and 24.. here.
    ("matmul/device/kernels/compute/bmm_large_block_zm_fused_bias_activation_gathered.cpp", FactoryArgs(
        "matmul/device 1D-multicast gather_in0 factory (per-batch CBs as named args)",
        named_compile_time_args=tuple((f"cb_mm_out_{i}", 16 + i % 8) for i in range(16))
        + tuple((f"cb_mm_partials_{i}", 24 + i % 8) for i in range(16)))),
    # argmax's reader: one processor doing the whole inner range [0, 2), owning the reduction, not reduce_all.
    ("reduction/argmax/device/kernels/reader_argmax_interleaved_multicore.cpp", FactoryArgs(
        "reduction/argmax/device/argmax_program_factory.cpp (multi-core, one data-movement processor)",
        named_compile_time_args=(("j_start", 0), ("j_end", 2), ("owns_reduction", 1), ("has_secondary_dm", 0),
                                 ("reduce_all", 0)))),
    # sdpa's compute kernels keep their raw-SFPI helpers under the TRISC thread defines tt-metal's JIT sets
    # per TRISC build; the simulator builds one image for the three (as ops/upstream/sdpa.py does).
    ("transformer/sdpa*/device/kernels/compute/*.cpp", FactoryArgs(
        "tt-metal's JIT (TRISC_UNPACK/MATH/PACK per thread build, ARCH_WORMHOLE)",
        (("TRISC_UNPACK", "1"), ("TRISC_MATH", "1"), ("TRISC_PACK", "1"), ("ARCH_WORMHOLE", "1")))),
    # The sdpa factories' defines: exp approximation and the DST granularities of 64-row chunks, head dim 64.
    ("transformer/sdpa*/device/kernels/*", FactoryArgs(
        "transformer/sdpa/device/sdpa_program_factory.cpp (q/k chunks of 2 tiles, head dim 2 tiles, bf16 DST)",
        (("EXP_APPROX_MODE", "1"), ("STATS_GRANULARITY", "2"), ("SUB_EXP_GRANULARITY", "2"),
         ("MUL_BCAST_GRANULARITY", "4"), ("DHT_GRANULARITY", "2"), ("REDUCE_GRANULARITY", "2")))),
    ("normalization/softmax/device/kernels/attention/compute/*.cpp", FactoryArgs(
        "normalization/softmax/device softmax factories (EXP_APPROX, ENABLE_FP32_DEST_ACC)",
        (("EXP_APPROX", "0"), ("ENABLE_FP32_DEST_ACC", "0")))),
    ("normalization/groupnorm/device/kernels/dataflow/welford_writer_*.cpp", FactoryArgs(
        "normalization/groupnorm/device groupnorm sharded factory (writer defines)", (("TILE_HW_VAL", "1024"),))),
    # bcast: add, H broadcasts a row, W a column, HW a scalar.
    ("data_movement/bcast/device/kernels/compute/bcast_h*.cpp", FactoryArgs(
        "data_movement/bcast/device/bcast_op_utils.cpp get_defines (ADD, H)", _bcast("ROW", "Row"))),
    ("data_movement/bcast/device/kernels/compute/bcast_w*.cpp", FactoryArgs(
        "data_movement/bcast/device/bcast_op_utils.cpp get_defines (ADD, W)", _bcast("COL", "Col"))),
    ("data_movement/bcast/device/kernels/compute/bcast_hw*.cpp", FactoryArgs(
        "data_movement/bcast/device/bcast_op_utils.cpp get_defines (ADD, HW)", _bcast("SCALAR", "Scalar"))),
    ("data_movement/fill_pad/device/kernels/compute/fill_pad_compute.cpp", FactoryArgs(
        "data_movement/fill_pad/device/fill_pad_program_factory.cpp (bf16)",
        (("FILL_PAD_DATA_FMT", "DataFormat::Float16_b"), ("FILL_PAD_FILL_FN", "fill_tile_bitcast"),
         ("FILL_PAD_FILL_ARG", "fill_bits"), ("MASK_ELEM_UINT", "uint16_t"), ("MASK_VALUE", "0x3F80u")))),
    ("data_movement/non_zero_indices/device/kernels/dataflow/non_zero_indices_sc_reader.cpp", FactoryArgs(
        "data_movement/non_zero_indices/device factory (bf16 elements)", (("NUM_BYTES", "2"), ("IS_FLOAT", "1")))),
    ("data_movement/pad/device/kernels/dataflow/writer_pad_dims_rm_sharded_stickwise.cpp", FactoryArgs(
        "data_movement/pad/device pad sharded (stickwise) factory, bf16: sticks of 64 B", named_compile_time_args=(
            ("padding_value_num_bytes", 2), ("padded_stick_bytes", 64)))),
    ("data_movement/untilize/codegen/kernels/reader_tile_interleaved_unified.cpp", FactoryArgs(
        "data_movement/untilize codegen factory: the identity page sequence, CB c_0",
        named_compile_time_args=(("seq_id", 0), ("cb_id", 0), ("batch", 1)))),
    # Welford H*W writer: 32-wide tiles, a 64 x 64 slab (Wt = 2), one reduce batch.
    ("reduction/generic/device/kernels/dataflow/writer_welford_hw.cpp", FactoryArgs(
        "reduction/generic/device Welford HW factory", named_compile_time_args=(
            ("Wt", 2), ("W", 64), ("tile_width", 32), ("H", 64), ("correction", 0), ("reduce_batch_size", 1)))),
    # Compute kernels taking their CB indices as the leading compile-time args (input c_0, output c_16).
    ("data_movement/tilize/device/kernels/compute/tilize.cpp", FactoryArgs(
        "data_movement/tilize/device tilize factories: {cb_in, cb_out, blocks, tiles per block}", (), (0, 16, 1, 1))),
    ("data_movement/untilize/device/kernels/compute/untilize.cpp", FactoryArgs(
        "data_movement/untilize/device untilize factories: {blocks, tiles per block, cb_in, cb_out}", (), (1, 1, 0, 16))),
    ("data_movement/untilize/device/kernels/compute/untilize_variable_num_blocks.cpp", FactoryArgs(
        "data_movement/untilize/device untilize factories: {tiles per block, cb_in, cb_out}", (), (1, 0, 16))),
    ("data_movement/concat/device/kernels/compute/concat_untilize_retilize.cpp", FactoryArgs(
        "data_movement/concat/device concat factory: {cb_in, cb_rm, cb_asm, cb_out, in_wt, out_wt, fp32}", (),
        (0, 1, 2, 16, 2, 2, 0))),
)


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
        kinds = ", ".join(f"{n} {k}" for k, n in sorted(v["compiled_with"].items()))
        print(f"  {fam:15s} {v['compiling']:4d} / {v['files']}   (compiled with: {kinds})")
    print("missing headers (files):")
    for h, n in list(r["missing_headers"].items())[: args.top]:
        print(f"  {n:4d}  {h}")
    print("missing symbols (files):")
    for s, n in list(r["missing_symbols"].items())[: args.top]:
        print(f"  {n:4d}  {s}")


if __name__ == "__main__":  # pragma: no cover
    main()
