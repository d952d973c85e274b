"""What each benchmark takes, as typed arguments. The command line (ttprefill.cli) builds these from its
flags; scripts and tests build them directly. None means: the benchmark's default for that shape."""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass(frozen=True)
class DeviceChoice:
    """Where a benchmark runs: the backend, and for the simulator timing-only mode, a trace file and the
    timing model's cost setting (None: the default, ttprefill.device.sim_device.DEFAULT_COST_SETTING)."""

    backend: str = "sim"
    timing_only: bool = False
    trace: str | None = None
    costs: str | None = None


@dataclass(frozen=True)
class SimBenchArgs:
    fidelity: str | None = None


@dataclass(frozen=True)
class MatmulBenchArgs:
    size: int | None = None  # M = K = N, a multiple of 32 (default 512)
    format: str | None = None  # "bf16" | "bfp8" operands
    fidelity: str | None = None
    device: DeviceChoice = field(default_factory=DeviceChoice)


@dataclass(frozen=True)
class AttentionBenchArgs:
    seq: int
    q_heads: int
    kv_heads: int
    head_dim: int
    chunk: int | None = None  # tokens per call (default: everything after the prefix at once)
    prefix: int = 0  # tokens already in the cache before the measured chunks
    page_tokens: int = 64
    format: str | None = None  # "bf16" | "bfp8": the cache pages
    fidelity: str | None = None
    check: str = "auto"  # "auto" | "yes" | "no": run the numerics and compare with fp64
    device: DeviceChoice = field(default_factory=DeviceChoice)


@dataclass(frozen=True)
class GdnBenchArgs:
    seq: int | None = None
    qk_heads: int | None = None
    v_heads: int | None = None
    key_dim: int | None = None
    value_dim: int | None = None
    chunk: int | None = None
    batch: int = 1  # independent sequences, run as extra heads
    fidelity: str | None = None
    format: str | None = None  # "fp32" | "bf16": the two-program scan's chunk records
    device: DeviceChoice = field(default_factory=DeviceChoice)


@dataclass(frozen=True)
class EngineBenchArgs:
    seq: int | None = None
    chunk: int | None = None
    kv_format: str | None = None  # "bf16" | "bfp8": the K/V pages (None: EngineOptions.kv_page_format)
    device: DeviceChoice = field(default_factory=DeviceChoice)


@dataclass(frozen=True)
class TtftBenchArgs:
    model: str = "qwen3.5-9b"
    seq: int = 8192
    weight_format: str | None = None  # "bf16" | "bfp8" (None: EngineOptions.weight_format)
    device: DeviceChoice = field(default_factory=DeviceChoice)
    chunk: int | None = None  # tokens per device chunk (None: EngineOptions.chunk_tokens)
    mesh: tuple[int, int] = (1, 1)  # chips (rows, cols): > 1 chip times a tensor-parallel split (bench/ttft_mesh.py)
    # the mesh's collectives: "line", or "ring" where the wiring closes one (None: line; the pipeline split refuses one)
    topology: str | None = None
    # the projections' math fidelity: "LoFi" (all) or "role=Fidelity,..." over EngineOptions' (ops/linear/fidelity.py)
    matmul_fidelity: str | None = None
    scheme: str | None = None  # the mesh's collective scheme (None: EngineOptions.tp_scheme)
    collective_dtype: object = None  # a CollectiveDtype: what the collectives carry (None: EngineOptions')
    # the matmul + collective pairs as ttnn's fused ops: "none" (what the card runs), "fused", "faster"
    # (bench/fused_pairs.py FUSED_MODES)
    fused_collectives: str = "none"
    # each chunk as this many micro-batches (None: EngineOptions.micro_batches); 2 on a mesh: the collectives
    # beside the other micro-batch's programs on sub-devices (device/sub_device_timing.py)
    micro_batches: int | None = None
    kv_format: str | None = None  # "bf16" | "bfp8": the K/V pages (None: EngineOptions.kv_page_format)
    # how the mesh's chips share the model: "tensor" (bench/ttft_mesh.py) or "pipeline" (bench/ttft_pipeline.py);
    # None: EngineOptions.parallel
    parallel: str | None = None


@dataclass(frozen=True)
class CalibrationBenchArgs:
    device: DeviceChoice = field(default_factory=DeviceChoice)
