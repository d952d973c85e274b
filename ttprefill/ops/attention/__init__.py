"""Causal flash-attention prefill over a paged K/V cache.

What it computes: for a chunk of Sq new query tokens at absolute positions [p0, p0 + Sq), softmax
attention against the keys/values at [0, p0 + Sq); query head h reads kv head h // (Hq / Hkv); the
key at position j is visible to the query at position p iff j <= p; optionally out * sigmoid(gate).
The reference is ttprefill.reference.attention.causal_attention.

Two programs per call:
* kv_cache_write: the chunk's own K and V go into their cache pages (converted to the page format;
  a chunk that starts inside a 32-token tile keeps the prefix rows already in that tile);
* flash_attention: reads Q, and K/V for every visible key from the pages, and writes O.

K/V cache (KVCache): two pools in DRAM, one for K and one for V, each a tiled tensor
[num_pages, kv_heads, page_tokens, head_dim] in bf16 or bfp8_b. A page holds page_tokens tokens of
every kv head. The page table (list of physical page ids, one per logical block of page_tokens
tokens; owned by the prefix cache) goes to DRAM as a UInt32 tensor [rows, 32] (entry i at row i // 32,
column i % 32) that the kernels read once into L1, so a 32k context costs no runtime args. The engine
keeps that tensor resident per request (page_table.ResidentPageTable) and writes a chunk's new page ids
into it with a small program of ours whose runtime args carry them, so no table goes down per chunk.

Work split: a work unit is (head group, query block): Bq query tile-rows of `hpu` query heads that
read the same kv head (hpu divides the GQA group), R = hpu * Bq rows that share every K/V block the unit
reads; that sharing keeps DRAM traffic below the FPU's appetite. plan_attention picks Bk, Bq and hpu
with a small cost model (busiest core vs DRAM traffic) and spreads the units over up to 64 cores by
longest-processing-time first: unit costs are causal (visible key tiles), so each core ends up with a
mix of early (cheap) and late (expensive) query blocks. Key blocks of Bk tiles are double-buffered;
blocks entirely above the diagonal are never read, tiles that straddle it start from a mask tile.

Numerics (kernels/flash_attention/compute.cpp has the details): bf16 Q/K/V/O, bf16 or bfp8_b pages;
the running shift m is subtracted inside the scores matmul (one extra k-step), so S - m forms in the
fp32 accumulator and P = exp(scale (S - m)) (scale folded in) comes straight out of DST; m only moves
when a block's probabilities under the old m would sum past e^lazy_rescale_nats (then O and l are
rescaled exactly, on the SFPU). Row sums: the packer sums each row's P tiles element-wise (bf16 partials, restarted each key block)
(L1 accumulation) and one REDUCE_ROW per row and key block finishes them; row sums and O are fp32 (O stays in L1 for the whole unit: each block's P V is added onto it by the packer's
L1 accumulation, so it is never unpacked); HiFi2 by default. With HiFi2 the matrix unit keeps 6 of bf16's 7 mantissa bits
of its first operand (the simulator's fidelity model), which truncates Q in Q K^T: scores shrink by
~0.3 % and outputs by about as much (the main error term against fp64; HiFi4 removes it). It also
truncates P in P V, while the row sums add the untruncated fp32 P, so that truncation no longer cancels
in O / l: rel RMS against fp64 ~0.0077 at 1k tokens, d128/d256.

Modules: shapes (limits, CB indices, config, errors), cache (KVCache, page tables), page_table (the
resident table and its update program), planner (block
sizes and work split), programs (the two program builders), host (numpy in, numpy out), work
(FLOPs), registered (representative programs for tests/host). The benchmark is ttprefill.bench.attention.
"""

from .cache import KVCache, check_page_table, page_table_tensor_shape, upload_page_table
from .page_table import PAGE_IDS_PER_DISPATCH, ResidentPageTable, page_table_update_program, write_page_ids
from .host import AttentionRun, aligned_chunk_kv, flash_attention, heads_major, write_kv_cache
from .planner import AttentionPlan, pack_unit, plan_attention
from .programs import flash_attention_program, kv_cache_write_program
from .shapes import (
    PAGE_FORMATS,
    SUPPORTED_HEAD_DIMS,
    CacheCapacityError,
    FlashAttentionConfig,
    FlashAttentionError,
    HeadCountError,
    HeadDimError,
    L1BudgetError,
    PageTableError,
    ShapeError,
)
from .work import attention_flops
