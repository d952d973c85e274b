"""The attention and K/V-cache-write program builders (kernels in kernels/flash_attention/)."""

from __future__ import annotations

from dataclasses import replace

import numpy as np

from ttprefill.device.formats import bf16_bits
from ttprefill.device.jit import KERNELS_DIR
from ttprefill.device.program import (
    DRAM_READ_NOC,
    DRAM_WRITE_NOC,
    CircularBuffer,
    ComputeConfig,
    CoreCoord,
    CoreRangeSet,
    DataFormat,
    Kernel,
    MathFidelity,
    Program,
    Role,
    Semaphore,
    float32_cbs,
)
from ttprefill.device.tensor import DeviceTensor
from ttprefill.hw import MAX_CORES

from .cache import KVCache
from .planner import AttentionPlan, _ceil_div, plan_attention
from .shapes import (
    CB_KV_KEEP,
    CB_KV_NEW,
    CB_KV_PAGE,
    CB_TABLE,
    COPY_ONLY_FP32_CBS,
    KV_SHARE_ALONE,
    KV_SHARE_RECEIVER,
    KV_SHARE_SENDER,
    SEM_KV_READY,
    SEM_KV_VALID,
    TILE,
    FlashAttentionConfig,
    PageTableError,
    ShapeError,
)


KERNELS = KERNELS_DIR / "flash_attention"


def _core_set(cores: list[CoreCoord]) -> CoreRangeSet:
    return CoreRangeSet.of(cores)


def flash_attention_program(device, q: DeviceTensor, cache: KVCache, page_table: DeviceTensor, out: DeviceTensor,
                            *, p0: int, sq: int, gate: DeviceTensor | None = None, scale: float | None = None,
                            config: FlashAttentionConfig | None = None, plan: AttentionPlan | None = None) -> Program:
    """The attention program over device tensors.

    q, out (and gate): [Hq, rows, head_dim] bf16 with rows = plan.q_rows_per_head (Sq padded to whole
    query blocks; rows past Sq are ignored on input and garbage on output). The chunk's own K/V must
    already be in the cache (kv_cache_write_program). page_table: upload_page_table's tensor.
    """
    hq, rows, d = q.shape
    table_entries = page_table.shape[0] * page_table.shape[1]
    if plan is None:
        plan = plan_attention(hq, cache.kv_heads, d, sq, p0, cache.data_format, gate is not None, config,
                              table_entries)
    if d != cache.head_dim:
        raise ShapeError(f"q has head_dim {d} but the cache holds head_dim {cache.head_dim}")
    if rows != plan.q_rows_per_head:
        raise ShapeError(f"q has {rows} rows per head; this plan needs {plan.q_rows_per_head} "
                         f"(Sq={sq} padded to query blocks of {plan.bq * TILE} rows)")
    for name, t in (("out", out), ("gate", gate)):
        if t is not None and tuple(t.shape) != tuple(q.shape):
            raise ShapeError(f"{name} has shape {t.shape}; it must match q {q.shape}")
    for name, t in (("q", q), ("out", out), ("gate", gate)):
        if t is not None and t.data_format != DataFormat.Float16_b:
            raise ShapeError(f"{name} must be bf16 (Float16_b), got {t.data_format.name}")
    if p0 + sq > table_entries * cache.page_tokens:
        raise PageTableError(f"the page table tensor holds {table_entries} entries, too few for {p0 + sq} tokens")

    scale = plan.head_dim ** -0.5 if scale is None else float(scale)
    if not scale > 0:
        raise ShapeError(f"scale={scale}: the softmax scale must be positive")
    scale_bf16 = int(bf16_bits(np.array([scale], np.float32))[0])
    table_tiles = page_table.num_pages
    cores = plan.cores
    core_set = _core_set(cores)
    cbs = [CircularBuffer(i, fmt, fmt.tile_bytes, pages, core_set) for i, fmt, pages in plan.circular_buffers(table_tiles)]

    gate_args = gate.accessor_args() if gate is not None else out.accessor_args()
    reader = Kernel(KERNELS / "reader.cpp", Role.RISCV_1, core_set,
                    [plan.dt, plan.bk, plan.group, plan.hpu, cache.page_tiles, cache.kv_heads, table_tiles]
                    + q.accessor_args() + cache.k_pool.accessor_args() + cache.v_pool.accessor_args()
                    + page_table.accessor_args(), noc=DRAM_READ_NOC)
    guard = np.array([np.exp(plan.config.lazy_rescale_nats)], np.float32).view(np.uint32)[0]
    compute = Kernel(KERNELS / "compute.cpp", Role.COMPUTE, core_set,
                     [plan.dt, plan.bk, plan.hpu, scale_bf16, int(gate is not None), int(guard)],
                     compute_config=replace(plan.config.compute_config(),
                                            unpack_to_dest_fp32=float32_cbs(cbs, COPY_ONLY_FP32_CBS)))
    writer = Kernel(KERNELS / "writer.cpp", Role.RISCV_0, core_set,
                    [plan.dt, plan.hpu, int(gate is not None)] + out.accessor_args() + gate_args, noc=DRAM_WRITE_NOC)
    for i, (core, units, streamed) in enumerate(zip(cores, plan.core_units, plan.core_streamed)):
        units, streamed = list(units), list(streamed)
        reader.runtime_args[core] = [q.address, cache.k_pool.address, cache.v_pool.address, page_table.address,
                                     p0, sq, rows // TILE, plan.bq] + _share_args(device, plan, i) \
            + [len(units)] + units + streamed
        compute.runtime_args[core] = [p0, sq, plan.bq, plan.rt, plan.ct_s, plan.ct_o, len(units)] + units + streamed
        writer.runtime_args[core] = [out.address, gate.address if gate is not None else 0, rows // TILE, plan.bq,
                                     plan.rt, plan.ct_o, len(units)] + units
    inputs = {"q": q, "k_pool": cache.k_pool, "v_pool": cache.v_pool, "page_table": page_table}
    if gate is not None:
        inputs["gate"] = gate
    semaphores = [Semaphore(SEM_KV_READY, core_set, 0), Semaphore(SEM_KV_VALID, core_set, 0)]
    return Program(kernels=[reader, compute, writer], circular_buffers=cbs, semaphores=semaphores, inputs=inputs,
                   outputs={"out": out}, name=f"flash_attention[hq={hq},hkv={cache.kv_heads},d={d},sq={sq},p0={p0}]")


def _share_args(device, plan: AttentionPlan, core_index: int) -> list[int]:
    """The reader's K/V sharing args (role, receivers, their multicast rectangle, the sender's NoC
    coordinates, the two semaphore ids). A group is a segment of one grid row, its first core the sender;
    the reader's NoC (0) multicasts from the rectangle's low corner."""
    first, size = plan.share_group(core_index)
    cores = plan.cores
    if size == 1:
        return [KV_SHARE_ALONE, 0, 0, 0, 0, 0, 0, 0, SEM_KV_READY, SEM_KV_VALID]
    sender = device.worker_noc_coord(cores[first])
    lo, hi = device.worker_noc_coord(cores[first + 1]), device.worker_noc_coord(cores[first + size - 1])
    role = KV_SHARE_SENDER if core_index == first else KV_SHARE_RECEIVER
    return [role, size - 1, *lo, *hi, *sender, SEM_KV_READY, SEM_KV_VALID]


def kv_cache_write_program(device, cache: KVCache, k_new: DeviceTensor, v_new: DeviceTensor,
                           page_table: DeviceTensor, *, p0: int, max_cores: int = MAX_CORES) -> Program:
    """Writes a chunk's K and V into its cache pages.

    k_new, v_new: [kv_heads, rows, head_dim] bf16 whose row r is the token at position (p0 // 32) * 32 + r
    (aligned_chunk_kv builds them); rows before p0 % 32 are placeholders: the prefix rows already in the
    cache are kept.
    """
    hkv, rows, d = k_new.shape
    if tuple(v_new.shape) != tuple(k_new.shape):
        raise ShapeError(f"k_new {k_new.shape} and v_new {v_new.shape} must have the same shape")
    if hkv != cache.kv_heads or d != cache.head_dim:
        raise ShapeError(f"new K/V are [{hkv}, {rows}, {d}] but the cache holds {cache.kv_heads} kv heads of "
                         f"head_dim {cache.head_dim}")
    if rows % TILE:
        raise ShapeError(f"new K/V rows ({rows}) must be a multiple of 32; use aligned_chunk_kv")
    dt = d // TILE
    tile_rows = rows // TILE
    end_tokens = (p0 // TILE + tile_rows) * TILE
    table_entries = page_table.shape[0] * page_table.shape[1]
    if _ceil_div(end_tokens, cache.page_tokens) > table_entries:
        raise PageTableError(f"the page table tensor holds {table_entries} entries, too few for {end_tokens} tokens")
    items = hkv * tile_rows
    n_cores = min(max_cores, items)
    per_core = [items // n_cores + (1 if i < items % n_cores else 0) for i in range(n_cores)]
    cores = [CoreCoord(i % 8, i // 8) for i in range(n_cores)]
    core_set = _core_set(cores)
    table_tiles = page_table.num_pages
    cbs = [
        CircularBuffer(CB_KV_NEW, DataFormat.Float16_b, DataFormat.Float16_b.tile_bytes, 2 * dt, core_set),
        CircularBuffer(CB_KV_KEEP, cache.data_format, cache.data_format.tile_bytes, 1, core_set),
        CircularBuffer(CB_KV_PAGE, cache.data_format, cache.data_format.tile_bytes, 2 * dt, core_set),
        CircularBuffer(CB_TABLE, DataFormat.UInt32, DataFormat.UInt32.tile_bytes, table_tiles, core_set),
    ]
    reader = Kernel(KERNELS / "kv_write_reader.cpp", Role.RISCV_1, core_set,
                    [dt] + k_new.accessor_args() + v_new.accessor_args(), noc=DRAM_READ_NOC)
    compute = Kernel(KERNELS / "kv_write_compute.cpp", Role.COMPUTE, core_set,
                     compute_config=ComputeConfig(MathFidelity.HiFi4, fp32_dest_acc_en=True))
    writer = Kernel(KERNELS / "kv_write_writer.cpp", Role.RISCV_0, core_set,
                    [dt, cache.page_tiles, cache.kv_heads, table_tiles] + cache.k_pool.accessor_args()
                    + cache.v_pool.accessor_args() + page_table.accessor_args(), noc=DRAM_WRITE_NOC)
    first = 0
    for core, count in zip(cores, per_core):
        reader.runtime_args[core] = [k_new.address, v_new.address, first, count]
        compute.runtime_args[core] = [2 * dt * count]
        writer.runtime_args[core] = [cache.k_pool.address, cache.v_pool.address, page_table.address, p0 // TILE,
                                     p0 % TILE, tile_rows, first, count]
        first += count
    return Program(kernels=[reader, compute, writer], circular_buffers=cbs,
                   inputs={"k_new": k_new, "v_new": v_new, "page_table": page_table},
                   outputs={"k_pool": cache.k_pool, "v_pool": cache.v_pool},
                   name=f"kv_cache_write[hkv={hkv},d={d},rows={rows},p0={p0}]")
