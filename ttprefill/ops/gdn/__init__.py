"""GDN prefill on the device: the stages of one Gated DeltaNet layer between its in-projections and its
out-projection (shared/GDN.md), as five or six programs (the scan is one fused program or two).

Programs and what each fuses (kernels in kernels/gdn/):

1. conv (conv_*.cpp): causal depthwise conv1d (kernel 4) + SiLU over the qkv channels, with the conv
   state in and out, fused with the L2 normalisation of every q and k head and the K^-1/2 scaling of
   q. Work unit: one head's channel tiles (a q or k head, or one v tile) over a range of token tiles.
   The conv is exact in fp32: 0/1 shift matrices (written by the reader) pick the earlier rows on the
   FPU, exactly for bf16 input; the taps are weighted and summed on the SFPU. The norm's sum of squares
   is a matmul with a ones tile that lands as a column broadcast, so the scaling is an SFPU product.
   The conv state is moved row by row by the reader: carried bits, never rounded.
2. gates (gates_*.cpp): beta = sigmoid(b), g = -exp(A_log) * softplus(a + dt_bias), fp32, element-wise
   on the compact [T, HV] tiles (32 heads per tile, so the SFPU work is small).
3. gate vectors (gate_vectors_*.cpp), the scan's first program: per (chunk, 32 value heads) the
   cumulative decay gam and every exp of it the scan needs (gate_vectors.h), still 32 heads per tile,
   written head-major so the scan's readers fetch one head's 32-token row in two 64-byte reads. This
   takes all the chunk-level exps off the scan's per-head cores: what is left there is one exp per
   diagonal decay tile.
4. scan preparation (scan_prep_*.cpp): per (value head, chunk), spread over the cores: the decay
   tiles, A, T = (I + A)^-1 and the record P, T~ = T diag(beta), -T^ = -T diag(beta exp(gam))
   (scan_prep_chunk.h says how each is formed and why it is accurate).
5. scan sequential pass (scan_seq_*.cpp): per (value head, block of value columns), chunk after chunk,
   with the fp32 state block resident in L1: k h, Vnew = T~ v + (-T^)(k h) (U - W h regrouped, so W
   and U are never formed), O and the state update, reading q, k, v (bf16), the gate vectors and the
   records; checkpoints and the final state written on the way. The value block is chosen by a small
   cost model (default_value_block): narrow blocks spread few heads over many cores, wide ones read
   each head's records once.
6. gated RMSNorm (norm_*.cpp): y = w * (o * rsqrt(mean(o^2) + eps)) * silu(z), per (token tile, value
   head).
4+5 fused (scan_fused_program): one value head per core, each chunk's preparation formed in L1 right
   before the sequential step that consumes it (scan_prep_reader.cpp and scan_seq_compute.cpp built with
   GDN_SCAN_FUSED; the preparation is shared code, scan_prep_chunk.h), so the records never make the
   DRAM round trip, and the state-side products that need no preparation (k h, K~^T) run in the waits of
   the inverse's dependent steps. The cores the heads leave idle are helpers (scan_offload.h,
   helper_plan): each prepares a share of the chunks of up to three heads (29 of every 64 for the 27B
   shape's 48 heads on 16 helpers, forming a q/k group's k k^T and q k^T once, while the first head's
   decay exps run on the pack thread) and writes the records straight into the heads' L1, so the head
   cores only prepare the rest. Same arithmetic, same bits as 4 then 5, with or without helpers. Chosen
   when the value heads fill at least a quarter of the cores (fused_scan_by_default: the 27B shape's 48 heads)
   and the pipelined form below does not fit; with few heads the two programs spread the work wider.
4|5 pipelined (scan_pipelined_program): programs 4 and 5 as one program on disjoint cores, one (value head,
   value block) unit per sequential core and per head two or more preparing cores, chunk c by the
   (c % producers)-th; each record goes straight into a slot in the L1 of the head's sequential cores
   (kernels/gdn/scan_pipeline.h), no DRAM round trip, so the sequential pass starts after the first chunk's preparation
   and the preparation runs on the cores the sequential units leave idle. Chosen by default wherever
   pipeline_plan finds room (the 9B's 16 heads per chip on 2 chips, 27B's 6 per chip on 8); same bits
   as 4 then 5. Both kinds of core are limited by their
   unpackers: fp32 operands (h, kh, Vnew, T~, -T^, P, K~^T, q~) cost twice a bf16 tile, the state's
   16 fp32 tiles are copied into DST every chunk for its decay, and the inverse is a chain of dependent
   steps (filled with independent work on head cores, less so on helpers).

Why these cuts: conv and norm are per-token and channel-parallel, the gates and gate vectors are tiny,
the scan's state-independent work parallelises over (head, chunk) and its sequential part over (head,
value block), so each program keeps the cores busy along its own parallel axis. The price of the
two-program scan is the chunk records' DRAM round trip (36 KB per (head, chunk) in fp32), hence the
fused form at large head counts. conv and norm are bound by SiLU on the SFPU (exp + reciprocal per
element in the timing model). Current modeled figures are in docs/bench and the README.

Layouts: token-major tiled tensors, q/k/v [T, channels] (the conv output [T, 2HK + HV V] is consumed
in place: a head is a column offset), g/beta [T, HV] fp32, gate vectors [quantities x HV, T] fp32
(head-major, gate_vectors.h), o [T, HV V], recurrent state [HV K, V] fp32 (head hv is rows hv*K..),
conv state [3, channels] bf16 (its values are bf16 activations).

Numerics (bf16 I/O, fp32 inside): gam is an fp32 SFPU cumsum (cumsum_tile), every exp is taken of an
fp32 difference (the off-diagonal decay tiles are products of two such exps, each in [0, 1]), the state
is decayed on the SFPU in fp32 and accumulated in fp32 DST, q, k, v and K^T enter matmuls as exact
bf16. The remaining error is the TF32 operand rounding of the FPU (h, kh, Vnew, P, T and its scaled
forms) and, at the default HiFi3 (SCAN_FIDELITY), the dropped product of the operands' low slices, of
the same size: P matches fp64 to ~1e-4 (~1e-6 at HiFi4), the gate vectors to ~1e-6, T~ and T^ to ~1e-3
(rel RMS, normal inputs), and the outputs and states to rel RMS 2-3e-3 (PCC > 0.99999), about twice
the bf16 rounding of the outputs themselves, at HiFi3 as at HiFi4. The inverse: recursive doubling on
the 32x32 diagonal tiles plus block forward substitution (scan_prep_chunk.h); every intermediate is a
block of the exact inverse, so nothing grows past T.

Conditioning limits (measured; tests/test_gdn_kernels.py): in the layer's regime (unit keys from its
L2 norm, beta in (0, 1)) every input set of GDN.md passes, including nearly parallel keys + beta
within 1e-3 of 1 + g near 0 together, the worst case: cond(I + A) ~ 40 / 80 / 160 at C = 32 / 64 / 128,
T diag(beta) off by 1.6e-3 / 1.6e-3 / 1.9e-3 (rel RMS), outputs and states still at rel RMS <= 3e-3
over 4096 tokens. That worst case (nothing decays, so nothing forgets) loses accuracy linearly with
length: state rel RMS 0.0073 at 8k and 0.012 at 16k tokens at HiFi3, 0.0050 / 0.0084 at HiFi4
(C = 64, measured once each, not in CI: minutes per run); published-style inputs stay at 1.5e-3 at 16k
either way. Outside the regime (keys longer than 1, beta = 1, so beta |k|^2 > 1 and I + A nears
singularity as beta |k|^2 -> 2) the rounding is amplified: rel RMS 0.01 holds up to beta |k|^2 ~ 1.6
at C = 32, ~1.5 at C = 64 and only ~1.1 at C = 128 (HiFi3; HiFi4: ~1.7 / ~1.55 / ~1.15); at 1.96
every chunk misses it (PCC stays >= 0.999); past 2 the recurrence itself diverges. Hence chunk 64 by
default, 128 only for unit keys, and fidelity=MathFidelity.HiFi4 for keys longer than unit length.

Non-finite inputs are not filtered (the reference semantics say nothing about them) and propagate
the way the arithmetic takes them, which the tests pin down on the simulator: a NaN/inf in q at token t
makes only token t's outputs of the value heads reading that q head non-finite; in v[t, hv, j] it
poisons value column j of head hv from the start of t's chunk on (outputs and state); in k, g or beta
it poisons every later output and the state of the affected value heads from the start of t's chunk.
Other heads and earlier chunks are untouched. The card's FPU/SFPU treat non-finite values their own
way, so only "non-finite in, non-finite out where the math says so" is promised there.

Ragged sequences: the last chunk is padded with zero tiles past the tensors' end, and the scan reader
zeroes g and beta on rows past T (no decay, no write), so the finite values the conv leaves in the
padding rows of the last token tile cannot reach real outputs or the state.

Modules: shapes (ScanShape, GdnDims, limits, defaults, errors), planner (work split, helpers, value
block, checkpoints), programs (the program builders), host (numpy in, numpy out), work (FLOPs, least
DRAM bytes, the bound), registered (representative programs for tests/host). The benchmark is
ttprefill.bench.gdn.
"""

from ttprefill.device.program import MathFidelity  # noqa: F401  (fidelity= arguments of the ops)

from .host import (
    broadcast_rows,
    conv_tap_rows,
    dims_of,
    gdn_chunk_prepare,
    gdn_conv,
    gdn_gate_vectors,
    gdn_gated_norm,
    gdn_gates,
    gdn_layer,
    gdn_scan,
    scan_shape_of,
    unpack_gate_vectors,
    unpack_records,
)
from .planner import (
    MAX_CHECKPOINTS_PER_CALL,
    MAX_HEADS_PER_HELPER,
    HelperPlan,
    PipelinePlan,
    checkpoint_chunk_indices,
    conv_units,
    default_value_block,
    fused_scan_by_default,
    helper_plan,
    offloaded_chunks,
    pipeline_plan,
    split_units,
)
from .programs import (
    LayerTensors,
    ScanScratch,
    allocate_layer_tensors,
    allocate_scan_scratch,
    conv_program,
    free_layer_tensors,
    gate_vectors_program,
    gates_program,
    layer_programs,
    norm_program,
    scan_fused_program,
    scan_pipelined_program,
    scan_prep_program,
    scan_programs,
    scan_seq_program,
)
from .shapes import (
    BF16,
    CONV_WIDTH,
    DEFAULT_CHUNK,
    FP32,
    PREP_CONST_TILES,
    SCAN_FIDELITY,
    SUPPORTED_CHUNKS,
    SUPPORTED_KEY_DIMS,
    SUPPORTED_VALUE_DIMS,
    GdnCheckpointError,
    GdnDims,
    GdnShapeError,
    HeadColumns,
    ScanShape,
)
from .work import bound_fraction, min_dram_bytes, nominal_flops, scan_min_dram_bytes
