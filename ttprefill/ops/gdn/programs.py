"""The GDN program builders: each returns a Program over device tensors (kernels in kernels/gdn/).
ttprefill.ops.gdn's docstring says what each program fuses and why the layer is cut this way."""

from __future__ import annotations

from dataclasses import dataclass, replace

from ttprefill.device.formats import fp32_bits
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
    L1OverflowError,
    MathFidelity,
    Program,
    Role,
    Semaphore,
    float32_cbs,
)
from ttprefill.device.tensor import DeviceTensor
from ttprefill.hw import MAX_CORES, compute_cores

from .planner import (
    MAX_HEADS_PER_HELPER,
    MAX_PREP_CORES_PER_HEAD,
    MAX_SEQ_CORES_PER_HEAD,
    PIPELINE_RECORD_SLOTS,
    PipelinePlan,
    RECORD_SLOTS,
    balance_units,
    conv_unit_cost,
    conv_units,
    conv_value_width,
    core_list,
    default_value_block,
    fused_scan_by_default,
    helper_plan,
    offloaded_chunks,
    pipeline_plan,
    split_units,
)
from .shapes import (
    BF16,
    CONV_CONST_TILES,
    CONV_NORM_FIDELITY,
    CONV_WIDTH,
    DST_TILES,
    EPS,
    FP32,
    INVERSE_LANES,
    PREP_CONST_TILES,
    SCAN_FIDELITY,
    SOFTPLUS_THRESHOLD,
    TILE,
    GdnCheckpointError,
    GdnDims,
    GdnShapeError,
    HeadColumns,
    ScanShape,
)

GDN_KERNELS = KERNELS_DIR / "gdn"


def _unpack_copies_to_dest(kernel: Kernel, cbs: list[CircularBuffer], indices: tuple[int, ...]) -> None:
    """Put the fp32 CBs among `indices` that sit on the compute kernel's cores in UnpackToDestFp32 mode.

    Each call names the CBs its kernel reads only by copy_tile/transpose_tile (states, partial sums,
    constants, gate vectors): in that mode they reach fp32 DST exactly; otherwise they pass through
    srcA as TF32 and lose 13 mantissa bits. A CB an FPU op reads must not be named: the mode leaves
    srcA/srcB unconfigured for it, and the simulator refuses it.
    """
    on = set(kernel.cores.cores())
    mine = [cb for cb in cbs if any(c in on for c in cb.cores.cores())]
    kernel.compute_config = replace(kernel.compute_config, unpack_to_dest_fp32=float32_cbs(mine, indices))


def _cores_of(plan) -> CoreRangeSet:
    return CoreRangeSet.of([core for core, _, _ in plan])


def _check_tensor(name: str, t: DeviceTensor, rows: int, min_cols: int, fmt: DataFormat | None = None) -> None:
    if len(t.shape) != 2 or t.shape[0] != rows or t.shape[1] < min_cols:
        raise GdnShapeError(f"{name} tensor has shape {t.shape}; expected [{rows}, >= {min_cols}]")
    if fmt is not None and t.data_format != fmt:
        raise GdnShapeError(f"{name} tensor is {t.data_format.name}; the kernel reads {fmt.name}")



def _check_qkv(s: ScanShape, q: HeadColumns, k: HeadColumns, v: HeadColumns) -> None:
    for name, cols, width in (("q", q, s.qk_heads * s.key_tiles), ("k", k, s.qk_heads * s.key_tiles),
                              ("v", v, s.v_heads * s.value_tiles)):
        t = cols.tensor
        if t.data_format != q.tensor.data_format:
            raise GdnShapeError(f"q, k and v must share one data format; {name} is {t.data_format.name}")
        _check_tensor(name, t, s.tokens, 1)
        if cols.first_col_tile + width > t.tiles_w:
            raise GdnShapeError(f"{name} heads need column tiles [{cols.first_col_tile}, "
                                f"{cols.first_col_tile + width}) but the tensor has {t.tiles_w}")


def _check_gate_vectors(s: ScanShape, gate_vectors: DeviceTensor) -> None:
    _check_tensor("gate-vector", gate_vectors, s.gate_kinds * s.head_tiles * TILE, s.gate_row_tiles * TILE, FP32)


def _check_outputs(s: ScanShape, out: HeadColumns, final_state: DeviceTensor, initial_state: DeviceTensor,
                   checkpoint_states: DeviceTensor, checkpoint_chunks, block_tiles: int) -> None:
    for name, t in (("initial state", initial_state), ("final state", final_state)):
        _check_tensor(name, t, s.v_heads * s.key_dim, s.value_dim, FP32)
    if len(checkpoint_chunks) and checkpoint_states.num_pages < len(checkpoint_chunks) * s.v_heads * s.key_tiles * s.value_tiles:
        raise GdnShapeError("the checkpoint tensor is too small for the requested checkpoints")
    in_range = all(0 <= c < s.num_chunks for c in checkpoint_chunks)
    if list(checkpoint_chunks) != sorted(set(checkpoint_chunks)) or not in_range:
        raise GdnCheckpointError(f"checkpoint chunk indices {checkpoint_chunks} must be ascending, distinct and in "
                                 f"[0, {s.num_chunks})")
    _check_tensor("output", out.tensor, s.tokens, 1)
    if out.first_col_tile + s.v_heads * s.value_tiles > out.tensor.tiles_w:
        raise GdnShapeError(f"the output tensor {out.tensor.shape} has no room for {s.v_heads} value heads")
    if s.value_tiles % block_tiles:
        raise GdnShapeError(f"value block of {block_tiles} tiles does not divide the {s.value_tiles} value tiles "
                            f"of a head")


def gate_vectors_program(device, shape: ScanShape, g: DeviceTensor, beta: DeviceTensor,
                         gate_vectors: DeviceTensor, *, max_cores: int = MAX_CORES) -> Program:
    """The scan's per-chunk gate vectors (kernels/gdn/gate_vectors.h) of every value head from g and
    beta ([T, HV] fp32), 32 heads per unit: cumulative decays and their exps, in fp32."""
    s = shape
    for name, t in (("g", g), ("beta", beta)):
        _check_tensor(name, t, s.tokens, s.v_heads, FP32)
    _check_gate_vectors(s, gate_vectors)
    nt = s.chunk_tiles
    plan = split_units(s.num_chunks * s.head_tiles, max_cores)
    cores = _cores_of(plan)

    def cb(index, fmt, pages):
        return CircularBuffer(index, fmt, fmt.tile_bytes, pages, cores)

    cbs = [cb(0, FP32, 2 * nt), cb(1, FP32, 2 * nt), cb(2, BF16, 2), cb(16, FP32, 2 * nt * s.gate_kinds),
           *(cb(i, FP32, nt) for i in range(24, 31))]
    reader = Kernel(GDN_KERNELS / "gate_vectors_reader.cpp", Role.RISCV_1, cores, g.accessor_args(),
                    common_runtime_args=[g.address, beta.address, s.tokens, nt, s.head_tiles], noc=DRAM_READ_NOC)
    compute = Kernel(GDN_KERNELS / "gate_vectors_compute.cpp", Role.COMPUTE, cores,
                     common_runtime_args=[nt, s.tokens, s.head_tiles],
                     compute_config=ComputeConfig(math_fidelity=MathFidelity.HiFi4, fp32_dest_acc_en=True))
    writer = Kernel(GDN_KERNELS / "gate_vectors_writer.cpp", Role.RISCV_0, cores, gate_vectors.accessor_args(),
                    common_runtime_args=[gate_vectors.address, nt, s.head_tiles, s.token_tiles, s.gate_kinds],
                    noc=DRAM_WRITE_NOC)
    for core, first, count in plan:
        reader.runtime_args[core] = [first, count]
        compute.runtime_args[core] = [first, count]
        writer.runtime_args[core] = [first, count]
    _unpack_copies_to_dest(compute, cbs, (0, 1, 16, 24, 25, 26, 27, 28, 29, 30))
    return Program([reader, compute, writer], cbs, inputs={"g": g, "beta": beta},
                   outputs={"gate_vectors": gate_vectors},
                   name=f"gdn_gate_vectors_T{s.tokens}_hv{s.v_heads}_c{s.chunk}")


def _prep_cbs(s: ScanShape, qkv_fmt: DataFormat, cores, cb) -> list:
    """The chunk preparation's CBs (kernels/gdn/scan_prep_chunk.h), in either scan form."""
    nt, kt = s.chunk_tiles, s.key_tiles
    return [
        cb(0, qkv_fmt, 2 * nt * kt), cb(1, qkv_fmt, 2 * nt * kt),       # k, q
        cb(3, FP32, 2 * s.vector_tiles),                                 # gate vectors
        cb(5, BF16, PREP_CONST_TILES),                                   # constants
        cb(7, FP32, 2 * INVERSE_LANES), cb(9, FP32, INVERSE_LANES),       # inverse scratch
        cb(27, FP32, s.tri_tiles), cb(28, FP32, s.tri_tiles), cb(29, FP32, s.tri_tiles),          # decay, A, T
    ]


def _reader_args(s: ScanShape, q: HeadColumns, k: HeadColumns, v: HeadColumns, gate_vectors: DeviceTensor) -> list:
    """Common runtime args 0..15 of scan_prep_reader.cpp."""
    return [q.tensor.address, k.tensor.address, v.tensor.address, gate_vectors.address, s.head_tiles, s.tokens,
            s.num_chunks, s.chunk_tiles, s.key_tiles, s.value_tiles, s.group, q.tensor.tiles_w, q.first_col_tile,
            k.first_col_tile, v.tensor.tiles_w, v.first_col_tile]


def scan_prep_program(device, shape: ScanShape, q: HeadColumns, k: HeadColumns, v: HeadColumns,
                      gate_vectors: DeviceTensor, records: DeviceTensor, *,
                      fidelity: MathFidelity = SCAN_FIDELITY, max_cores: int = MAX_CORES) -> Program:
    """The per-(value head, chunk) preparation: chunk records P, T~, -T^ (see module docstring)."""
    s = shape
    _check_qkv(s, q, k, v)
    _check_gate_vectors(s, gate_vectors)
    units = s.v_heads * s.num_chunks
    if records.num_pages < units * s.record_tiles:
        raise GdnShapeError("the chunk-record tensor is too small for this shape (use allocate_scan_scratch)")
    plan = split_units(units, max_cores)
    cores = _cores_of(plan)
    rec_fmt = records.data_format

    def cb(index, fmt, pages):
        return CircularBuffer(index, fmt, fmt.tile_bytes, pages, cores)

    cbs = _prep_cbs(s, q.tensor.data_format, cores, cb) + [cb(16, rec_fmt, 8)]
    reader = Kernel(GDN_KERNELS / "scan_prep_reader.cpp", Role.RISCV_1, cores,
                    q.tensor.accessor_args() + gate_vectors.accessor_args(),
                    common_runtime_args=_reader_args(s, q, k, v, gate_vectors), noc=DRAM_READ_NOC)
    compute = Kernel(GDN_KERNELS / "scan_prep_compute.cpp", Role.COMPUTE, cores,
                     common_runtime_args=[s.chunk_tiles, s.key_tiles],
                     compute_config=ComputeConfig(math_fidelity=fidelity, fp32_dest_acc_en=True))
    writer = Kernel(GDN_KERNELS / "scan_prep_writer.cpp", Role.RISCV_0, cores, records.accessor_args(),
                    common_runtime_args=[records.address, s.record_tiles], noc=DRAM_WRITE_NOC)
    for core, first, count in plan:
        reader.runtime_args[core] = [first, count]
        compute.runtime_args[core] = [count]
        writer.runtime_args[core] = [first, count]
    _unpack_copies_to_dest(compute, cbs, (3, 16, 27))
    program = Program([reader, compute, writer], cbs,
                      inputs={"q": q.tensor, "k": k.tensor, "gate_vectors": gate_vectors},
                      outputs={"records": records},
                      name=f"gdn_scan_prep_T{s.tokens}_h{s.qk_heads}x{s.v_heads}_k{s.key_dim}v{s.value_dim}_c{s.chunk}")
    _validate_l1(program, f"chunk {s.chunk}", "lower the chunk to 64 or 32")
    return program


def _writer(s: ScanShape, cores, out: HeadColumns, final_state: DeviceTensor, checkpoint_states: DeviceTensor,
            ck: list[int], block: int) -> Kernel:
    return Kernel(GDN_KERNELS / "scan_seq_writer.cpp", Role.RISCV_0, cores,
                  out.tensor.accessor_args() + final_state.accessor_args(),
                  common_runtime_args=[out.tensor.address, final_state.address, checkpoint_states.address,
                                       s.num_chunks, s.chunk_tiles, s.key_tiles, s.value_tiles, block, s.v_heads,
                                       out.tensor.tiles_h, out.tensor.tiles_w, out.first_col_tile, len(ck), *ck],
                                       noc=DRAM_WRITE_NOC)


def _seq_cbs(s: ScanShape, block: int, rec_fmt: DataFormat, qkv_fmt: DataFormat, out_fmt: DataFormat, cb,
             pipelined: bool = False) -> list:
    """The sequential pass's CBs (scan_seq_compute.cpp, two-program form). Pipelined: PIPELINE_RECORD_SLOTS
    whole records in c_3, the slots the preparing cores write into (scan_pipeline.h), and no c_0."""
    nt, kt = s.chunk_tiles, s.key_tiles
    records = [cb(3, rec_fmt, PIPELINE_RECORD_SLOTS * s.record_tiles)] if pipelined else [
        cb(0, rec_fmt, 4 * s.tri_tiles), cb(3, rec_fmt, 2 * s.tri_tiles)]                   # T pairs, P
    return records + [
        cb(2, qkv_fmt, 2 * nt * kt),                                                         # q
        cb(4, qkv_fmt, 2 * nt * kt), cb(5, FP32, 2 * s.vector_tiles), cb(6, FP32, kt * block),  # k, vectors, state in
        cb(7, qkv_fmt, 2 * nt * block),                                                      # v block
        cb(16, out_fmt, 2 * nt * block), cb(17, FP32, DST_TILES),                            # O, state out
        cb(24, FP32, 2 * kt * block), cb(25, FP32, nt * block), cb(26, FP32, nt * block),    # h, Vnew, kh
        cb(27, FP32, kt * nt), cb(28, FP32, kt * nt),                                        # K~^T, q~
    ]


def _seq_kernels(s: ScanShape, cores, block: int, records: DeviceTensor, gate_vectors: DeviceTensor,
                 q: HeadColumns, k: HeadColumns, v: HeadColumns, initial_state: DeviceTensor, out: HeadColumns,
                 final_state: DeviceTensor, checkpoint_states: DeviceTensor, ck: list[int],
                 fidelity: MathFidelity, producers: int = 0) -> tuple[Kernel, Kernel, Kernel]:
    """The sequential pass's reader, compute and writer (runtime args left to the caller); producers > 0:
    the pipelined scan's, whose records arrive in L1 from the preparing cores (GDN_SEQ_PIPELINED)."""
    nt, kt = s.chunk_tiles, s.key_tiles
    defines = {"GDN_SEQ_PIPELINED": "1"} if producers else {}
    reader = Kernel(GDN_KERNELS / "scan_seq_reader.cpp", Role.RISCV_1, cores,
                    records.accessor_args() + initial_state.accessor_args() + q.tensor.accessor_args()
                    + gate_vectors.accessor_args(),
                    defines=defines,
                    common_runtime_args=[records.address, gate_vectors.address, initial_state.address,
                                         q.tensor.address, k.tensor.address, v.tensor.address, s.num_chunks, nt, kt,
                                         s.value_tiles, block, s.record_tiles, s.tokens, q.tensor.tiles_w,
                                         q.first_col_tile, k.first_col_tile, s.group, v.tensor.tiles_w,
                                         v.first_col_tile, s.head_tiles] + ([producers, PIPELINE_RECORD_SLOTS] if producers else []),
                    noc=DRAM_READ_NOC)
    compute = Kernel(GDN_KERNELS / "scan_seq_compute.cpp", Role.COMPUTE, cores,
                     common_runtime_args=[nt, kt, block, s.num_chunks, len(ck), *ck], defines=dict(defines),
                     compute_config=ComputeConfig(math_fidelity=fidelity, fp32_dest_acc_en=True))
    writer = _writer(s, cores, out, final_state, checkpoint_states, ck, block)
    return reader, compute, writer


def scan_seq_program(device, shape: ScanShape, records: DeviceTensor, gate_vectors: DeviceTensor, q: HeadColumns,
                     k: HeadColumns, v: HeadColumns, initial_state: DeviceTensor, out: HeadColumns,
                     final_state: DeviceTensor, checkpoint_states: DeviceTensor, checkpoint_chunks: list[int], *,
                     block_tiles: int | None = None, fidelity: MathFidelity = SCAN_FIDELITY,
                     max_cores: int = MAX_CORES) -> Program:
    """The sequential pass over chunks per (value head, value block): outputs, checkpoints, final state."""
    s = shape
    nt, kt = s.chunk_tiles, s.key_tiles
    block = block_tiles or default_value_block(s, max_cores, records.data_format)
    _check_qkv(s, q, k, v)
    _check_gate_vectors(s, gate_vectors)
    _check_outputs(s, out, final_state, initial_state, checkpoint_states, checkpoint_chunks, block)
    units = s.v_heads * (s.value_tiles // block)
    plan = split_units(units, max_cores)
    cores = _cores_of(plan)
    rec_fmt, qkv_fmt = records.data_format, q.tensor.data_format

    def cb(index, fmt, pages):
        return CircularBuffer(index, fmt, fmt.tile_bytes, pages, cores)

    cbs = _seq_cbs(s, block, rec_fmt, qkv_fmt, out.tensor.data_format, cb)
    ck = [int(c) for c in checkpoint_chunks]
    reader, compute, writer = _seq_kernels(s, cores, block, records, gate_vectors, q, k, v, initial_state, out,
                                           final_state, checkpoint_states, ck, fidelity)
    for core, first, count in plan:
        reader.runtime_args[core] = [first, count]
        compute.runtime_args[core] = [count]
        writer.runtime_args[core] = [first, count]
    _unpack_copies_to_dest(compute, cbs, (5, 6, 17))
    program = Program([reader, compute, writer], cbs,
                      inputs={"records": records, "gate_vectors": gate_vectors, "q": q.tensor, "k": k.tensor,
                              "v": v.tensor, "initial_state": initial_state},
                      outputs={"out": out.tensor, "final_state": final_state, "checkpoints": checkpoint_states},
                      name=f"gdn_scan_seq_T{s.tokens}_h{s.qk_heads}x{s.v_heads}_k{s.key_dim}v{s.value_dim}_c{s.chunk}")
    _validate_l1(program, f"chunk {s.chunk}", "lower the chunk to 64 or 32, or the value block")
    return program



def scan_fused_program(device, shape: ScanShape, q: HeadColumns, k: HeadColumns, v: HeadColumns,
                       gate_vectors: DeviceTensor, initial_state: DeviceTensor, out: HeadColumns,
                       final_state: DeviceTensor, checkpoint_states: DeviceTensor, checkpoint_chunks: list[int], *,
                       fidelity: MathFidelity = SCAN_FIDELITY, max_cores: int = MAX_CORES,
                       helpers: bool | None = None) -> Program:
    """The whole scan in one program, one value head per core: each chunk's preparation (P, T~, -T^)
    is formed in L1 right before the sequential step that consumes it, so the chunk records never make
    the DRAM round trip of the two-program form. The kernels are the two programs' own
    (scan_prep_reader.cpp and scan_seq_compute.cpp built with GDN_SCAN_FUSED, scan_seq_writer.cpp
    with the block equal to the head). With helpers (the default when the grid has idle cores for
    them: helper_plan), the idle cores prepare a share of every head's chunks and send the records to
    the heads' cores (kernels/gdn/scan_offload.h)."""
    s = shape
    nt, kt, vt = s.chunk_tiles, s.key_tiles, s.value_tiles
    hplan = helper_plan(s.v_heads, max_cores) if helpers in (None, True) else None
    if helpers and hplan is None:
        raise GdnShapeError(f"{s.v_heads} value heads leave no room for helper cores on {max_cores} cores "
                            f"(a helper takes at most {MAX_HEADS_PER_HELPER} heads); pass helpers=False")
    _check_qkv(s, q, k, v)
    _check_gate_vectors(s, gate_vectors)
    _check_outputs(s, out, final_state, initial_state, checkpoint_states, checkpoint_chunks, vt)
    plan = split_units(s.v_heads, max_cores)
    head_cores = [core for core, _, _ in plan]
    cores = _cores_of(plan)
    qkv_fmt, out_fmt = q.tensor.data_format, out.tensor.data_format

    def cb(index, fmt, pages, on=cores):
        return CircularBuffer(index, fmt, fmt.tile_bytes, pages, on)

    cbs = _prep_cbs(s, qkv_fmt, cores, cb) + [
        cb(2, qkv_fmt, 2 * nt * vt),                                           # v
        # The chunk's preparation in L1 (fp32: it costs no DRAM here) and the sequential part's CBs.
        cb(11, FP32, s.tri_tiles), cb(12, FP32, s.tri_tiles), cb(13, FP32, s.tri_tiles),  # P, T~, -T^
        cb(15, FP32, kt * vt),                                                 # initial state
        cb(16, out_fmt, 2 * nt * vt), cb(17, FP32, DST_TILES),                 # O (two chunks), state out
        cb(18, FP32, 2 * kt * vt), cb(19, FP32, nt * vt), cb(20, FP32, nt * vt),  # h, Vnew, kh
        cb(21, FP32, kt * nt), cb(23, FP32, kt * nt),                          # K~^T, q~
        cb(22, FP32, RECORD_SLOTS * s.record_tiles),                           # records from a helper
    ]
    offload = [hplan.offload_num, hplan.offload_den] if hplan else [0, 1]
    fused = {"GDN_SCAN_FUSED": "1"}
    ck = [int(c) for c in checkpoint_chunks]
    reader = Kernel(GDN_KERNELS / "scan_prep_reader.cpp", Role.RISCV_1, cores,
                    q.tensor.accessor_args() + gate_vectors.accessor_args() + initial_state.accessor_args(),
                    defines=fused, common_runtime_args=_reader_args(s, q, k, v, gate_vectors)
                    + [initial_state.address, *offload, s.record_tiles], noc=DRAM_READ_NOC)
    compute = Kernel(GDN_KERNELS / "scan_seq_compute.cpp", Role.COMPUTE, cores, defines=fused,
                     common_runtime_args=[nt, kt, vt, s.num_chunks, len(ck), *ck, *offload],
                     compute_config=ComputeConfig(math_fidelity=fidelity, fp32_dest_acc_en=True))
    writer = _writer(s, cores, out, final_state, checkpoint_states, ck, vt)
    kernels = [reader, compute, writer]
    semaphores = [Semaphore(0, cores, 0), Semaphore(1, cores, 0)]  # scan_offload.h: ready, message
    helper_cores = core_list(len(head_cores) + hplan.helpers)[len(head_cores):] if hplan else []
    for core, first, count in plan:
        reader.runtime_args[core] = [first, count, 0, 0, 0]
        compute.runtime_args[core] = [count]
        writer.runtime_args[core] = [first, count]
    if hplan:
        hcores = CoreRangeSet.of(helper_cores)
        cbs += _prep_cbs(s, qkv_fmt, hcores, lambda i, f, n: cb(i, f, n, hcores)) + [cb(16, FP32, 8, hcores)]
        semaphores += [Semaphore(i, hcores, 0) for i in range(MAX_HEADS_PER_HELPER * (1 + RECORD_SLOTS))]
        # When every helper's heads are one q/k group (the 27B shape: 3 heads per helper, groups of 3),
        # a helper reads k and q once per chunk and forms k k^T and q k^T once for its heads.
        head_sets = [range(j * hplan.heads_per_helper, min(s.v_heads, (j + 1) * hplan.heads_per_helper))
                     for j in range(hplan.helpers)]
        shared = all(len(hs) == hplan.heads_per_helper and len({h // s.group for h in hs}) == 1 for hs in head_sets)
        h_defines = {"GDN_SCAN_HELPER": "1", **({"GDN_HELPER_SHARED_QK": "1"} if shared else {})}
        if shared:
            cbs += [cb(12, FP32, s.tri_tiles, hcores), cb(13, FP32, s.tri_tiles, hcores)]  # k k^T, q k^T
        h_reader = Kernel(GDN_KERNELS / "scan_prep_reader.cpp", Role.RISCV_1, hcores,
                          q.tensor.accessor_args() + gate_vectors.accessor_args(), defines=h_defines,
                          common_runtime_args=_reader_args(s, q, k, v, gate_vectors) + [0, *offload], noc=DRAM_READ_NOC)
        h_compute = Kernel(GDN_KERNELS / "scan_prep_compute.cpp", Role.COMPUTE, hcores, defines=h_defines,
                           common_runtime_args=[nt, kt, hplan.heads_per_helper],
                           compute_config=ComputeConfig(math_fidelity=fidelity, fp32_dest_acc_en=True))
        h_sender = Kernel(GDN_KERNELS / "scan_prep_sender.cpp", Role.RISCV_0, hcores,
                          common_runtime_args=[s.num_chunks, s.record_tiles, *offload], noc=DRAM_WRITE_NOC)
        n_off = len(offloaded_chunks(s.num_chunks, hplan))
        for j, hcore in enumerate(helper_cores):
            heads = list(range(j * hplan.heads_per_helper, min(s.v_heads, (j + 1) * hplan.heads_per_helper)))
            h_reader.runtime_args[hcore] = [heads[0], len(heads)]
            h_compute.runtime_args[hcore] = [n_off * len(heads)]
            h_sender.runtime_args[hcore] = [len(heads)] + [x for h in heads
                                                            for x in device.worker_noc_coord(head_cores[h])]
            hx, hy = device.worker_noc_coord(hcore)
            for local, h in enumerate(heads):
                reader.runtime_args[head_cores[h]][2:] = [hx, hy, local]
        kernels += [h_reader, h_compute, h_sender]
        _unpack_copies_to_dest(h_compute, cbs, (3, 12, 13, 16, 27))
    _unpack_copies_to_dest(compute, cbs, (3, 15, 17, 27))
    program = Program(kernels, cbs, semaphores,
                      inputs={"q": q.tensor, "k": k.tensor, "v": v.tensor, "gate_vectors": gate_vectors,
                              "initial_state": initial_state},
                      outputs={"out": out.tensor, "final_state": final_state, "checkpoints": checkpoint_states},
                      name=f"gdn_scan_fused_T{s.tokens}_h{s.qk_heads}x{s.v_heads}_k{s.key_dim}v{s.value_dim}_c{s.chunk}")
    _validate_l1(program, f"chunk {s.chunk}", "lower the chunk to 64 or 32, or use the two-program scan (fused=False)")
    return program


def _multicast_rectangle(device, cores: list[CoreCoord]) -> list[int]:
    """[1, NoC x/y start, x/y end] when `cores` (two or more) are one segment of a grid row whose NoC
    rectangle holds nothing else (not across the DRAM column), named in the corner order of the preparing
    writer's NoC (DRAM_WRITE_NOC: NoC 1 starts at the high corner); else [0, 0, 0, 0, 0]: the writer
    sends to each core in turn (scan_prep_writer.cpp)."""
    noc = [device.worker_noc_coord(c) for c in cores]
    row = len(cores) > 1 and all(y == noc[0][1] and x == noc[0][0] + i for i, (x, y) in enumerate(noc))
    if not row:
        return [0, 0, 0, 0, 0]
    lo, hi = noc[0], noc[-1]
    return [1, *hi, *lo] if DRAM_WRITE_NOC == 1 else [1, *lo, *hi]


def scan_pipelined_program(device, shape: ScanShape, q: HeadColumns, k: HeadColumns, v: HeadColumns,
                           gate_vectors: DeviceTensor, records: DeviceTensor, initial_state: DeviceTensor,
                           out: HeadColumns, final_state: DeviceTensor, checkpoint_states: DeviceTensor,
                           checkpoint_chunks: list[int], *, plan: PipelinePlan | None = None,
                           fidelity: MathFidelity = SCAN_FIDELITY, max_cores: int = MAX_CORES) -> Program:
    """The preparation and the sequential pass of the two-program scan as one program on disjoint cores:
    one (value head, value block) unit per sequential core, and per value head plan.producers preparing
    cores, the j-th preparing chunks j, j + producers, ... in order. A preparing core writes each record
    into a record slot in the L1 of each of the head's sequential cores (kernels/gdn/scan_pipeline.h:
    the sequential core's reader names the free slot, the producer writes it and counts it on the
    consumer's semaphore); scan_prep_writer.cpp / scan_seq_reader.cpp built with GDN_PREP_PIPELINED /
    GDN_SEQ_PIPELINED. The sequential pass starts after the first chunk's preparation instead of after
    all of them, the cores the sequential units leave idle prepare, and the records never go through
    DRAM (`records` gives only their format). Same kernels, same arithmetic, same bits as the two
    programs."""
    s = shape
    plan = plan or pipeline_plan(s, max_cores)
    if plan is None:
        raise GdnShapeError(f"{s.v_heads} value heads of {s.value_tiles} tiles leave no core to prepare on "
                            f"{max_cores} cores; use the fused or two-program scan")
    block, producers = plan.block, plan.producers
    _check_qkv(s, q, k, v)
    _check_gate_vectors(s, gate_vectors)
    _check_outputs(s, out, final_state, initial_state, checkpoint_states, checkpoint_chunks, block)
    blocks = s.value_tiles // block
    units = s.v_heads * blocks
    if producers > MAX_PREP_CORES_PER_HEAD or units + s.v_heads * producers > max_cores:
        raise GdnShapeError(f"{units} sequential units and {producers} preparing cores per value head do not fit "
                            f"{max_cores} cores (at most {MAX_PREP_CORES_PER_HEAD} per head)")
    if blocks > MAX_SEQ_CORES_PER_HEAD:
        raise GdnShapeError(f"{blocks} value blocks of {block} tiles per head: a preparing core serves at most "
                            f"{MAX_SEQ_CORES_PER_HEAD} sequential cores; use a wider block")
    all_cores = core_list(units + s.v_heads * producers)
    seq_list, prep_list = all_cores[:units], all_cores[units:]
    seq_cores, prep_cores = CoreRangeSet.of(seq_list), CoreRangeSet.of(prep_list)
    rec_fmt, qkv_fmt = records.data_format, q.tensor.data_format

    def on(cores):
        return lambda index, fmt, pages: CircularBuffer(index, fmt, fmt.tile_bytes, pages, cores)

    cbs = (_seq_cbs(s, block, rec_fmt, qkv_fmt, out.tensor.data_format, on(seq_cores), pipelined=True)
           + _prep_cbs(s, qkv_fmt, prep_cores, on(prep_cores)) + [on(prep_cores)(16, rec_fmt, 8)])
    ck = [int(c) for c in checkpoint_chunks]
    reader, compute, writer = _seq_kernels(s, seq_cores, block, records, gate_vectors, q, k, v, initial_state, out,
                                           final_state, checkpoint_states, ck, fidelity, producers)
    for u, core in enumerate(seq_list):
        hv = u // blocks
        reader.runtime_args[core] = [u, 1] + [
            x for p in prep_list[hv * producers:(hv + 1) * producers] for x in device.worker_noc_coord(p)]
        compute.runtime_args[core] = [1]
        writer.runtime_args[core] = [u, 1]
    pipelined = {"GDN_PREP_PIPELINED": "1"}
    p_reader = Kernel(GDN_KERNELS / "scan_prep_reader.cpp", Role.RISCV_1, prep_cores,
                      q.tensor.accessor_args() + gate_vectors.accessor_args(), defines=pipelined,
                      common_runtime_args=_reader_args(s, q, k, v, gate_vectors), noc=DRAM_READ_NOC)
    p_compute = Kernel(GDN_KERNELS / "scan_prep_compute.cpp", Role.COMPUTE, prep_cores,
                       common_runtime_args=[s.chunk_tiles, s.key_tiles],
                       compute_config=ComputeConfig(math_fidelity=fidelity, fp32_dest_acc_en=True))
    p_writer = Kernel(GDN_KERNELS / "scan_prep_writer.cpp", Role.RISCV_0, prep_cores, records.accessor_args(),
                      defines=pipelined,
                      common_runtime_args=[records.address, s.record_tiles, s.num_chunks, PIPELINE_RECORD_SLOTS],
                      noc=DRAM_WRITE_NOC)
    for i, core in enumerate(prep_list):
        hv, first = divmod(i, producers)
        consumers = seq_list[hv * blocks:(hv + 1) * blocks]
        p_reader.runtime_args[core] = [hv, first, producers]
        p_compute.runtime_args[core] = [len(range(first, s.num_chunks, producers))]
        p_writer.runtime_args[core] = [hv, first, producers, len(consumers), *_multicast_rectangle(device, consumers)] + [
            x for c in consumers for x in device.worker_noc_coord(c)]
    _unpack_copies_to_dest(compute, cbs, (5, 6, 17))
    _unpack_copies_to_dest(p_compute, cbs, (3, 16, 27))
    # scan_pipeline.h: on a sequential core the ready count of each producer, then the word its reader sends
    # the slot address from; on a preparing core per sequential core a free count and an address per slot.
    semaphores = ([Semaphore(j, seq_cores, 0) for j in range(producers + 1)]
                  + [Semaphore(j, prep_cores, 0) for j in range(blocks * (1 + PIPELINE_RECORD_SLOTS))])
    program = Program([reader, compute, writer, p_reader, p_compute, p_writer], cbs, semaphores,
                      inputs={"q": q.tensor, "k": k.tensor, "v": v.tensor, "gate_vectors": gate_vectors,
                              "initial_state": initial_state},
                      outputs={"out": out.tensor, "final_state": final_state, "checkpoints": checkpoint_states},
                      name=f"gdn_scan_pipelined_T{s.tokens}_h{s.qk_heads}x{s.v_heads}_k{s.key_dim}v{s.value_dim}_c{s.chunk}")
    _validate_l1(program, f"chunk {s.chunk}", "lower the chunk to 64 or 32, or use the fused scan")
    return program


def _validate_l1(program: Program, what: str, fix: str) -> None:
    try:
        program.validate()
    except L1OverflowError as e:
        raise L1OverflowError(f"{what} does not fit L1: {e}; {fix}") from None



def scan_programs(device, shape: ScanShape, q: HeadColumns, k: HeadColumns, v: HeadColumns, g: DeviceTensor,
                  beta: DeviceTensor, scratch: "ScanScratch", initial_state: DeviceTensor, out: HeadColumns,
                  final_state: DeviceTensor, checkpoint_states: DeviceTensor, checkpoint_chunks: list[int], *,
                  fused: bool | None = None, block_tiles: int | None = None,
                  fidelity: MathFidelity = SCAN_FIDELITY, max_cores: int = MAX_CORES,
                  helpers: bool | None = None, pipelined: bool | None = None) -> list[Program]:
    """The scan's programs: the gate vectors, then the pipelined scan, the fused scan or preparation +
    sequential pass. With nothing asked for (fused, block_tiles and pipelined None) the pipelined scan
    runs wherever pipeline_plan finds room for it, else fused_scan_by_default picks (falling back to
    two programs when the fused one does not fit L1); an explicit value block (block_tiles) or
    fused=False means the two-program form, fused=True the fused one, pipelined=True the pipelined one."""
    if fused and block_tiles is not None:
        raise GdnShapeError("the fused scan works on whole value heads; drop block_tiles or pass fused=False")
    if pipelined and (fused or block_tiles is not None):
        raise GdnShapeError("the pipelined scan chooses its own value block and is not the fused scan; "
                            "drop fused / block_tiles or pipelined")
    gates = gate_vectors_program(device, shape, g, beta, scratch.gate_vectors, max_cores=max_cores)

    def pipelined_program():
        return scan_pipelined_program(device, shape, q, k, v, scratch.gate_vectors, scratch.records, initial_state,
                                      out, final_state, checkpoint_states, checkpoint_chunks, fidelity=fidelity,
                                      max_cores=max_cores)

    if pipelined:
        return [gates, pipelined_program()]
    if pipelined is None and fused is None and block_tiles is None \
            and pipeline_plan(shape, max_cores) is not None:
        try:
            return [gates, pipelined_program()]
        except L1OverflowError:
            pass

    def fused_program():
        return scan_fused_program(device, shape, q, k, v, scratch.gate_vectors, initial_state, out, final_state,
                                  checkpoint_states, checkpoint_chunks, fidelity=fidelity, max_cores=max_cores,
                                  helpers=helpers)

    if fused is None:
        fused = block_tiles is None and fused_scan_by_default(shape, max_cores)
        if fused:
            try:
                return [gates, fused_program()]
            except L1OverflowError:
                fused = False
    if fused:
        return [gates, fused_program()]
    return [gates,
            scan_prep_program(device, shape, q, k, v, scratch.gate_vectors, scratch.records, fidelity=fidelity,
                              max_cores=max_cores),
            scan_seq_program(device, shape, scratch.records, scratch.gate_vectors, q, k, v, initial_state, out,
                             final_state, checkpoint_states, checkpoint_chunks, block_tiles=block_tiles,
                             fidelity=fidelity, max_cores=max_cores)]


@dataclass
class ScanScratch:
    """DRAM the scan needs between its programs: the gate vectors and the chunk records."""

    gate_vectors: DeviceTensor
    records: DeviceTensor

    def free(self, device) -> None:
        device.free(self.gate_vectors)
        device.free(self.records)


def scan_scratch_shapes(shape: ScanShape, record_format: DataFormat = FP32) -> tuple[tuple, tuple]:
    """((shape, format) of the gate vectors, (shape, format) of the chunk records): what a scan allocates."""
    units = shape.v_heads * shape.num_chunks
    return (((shape.gate_kinds * shape.head_tiles * TILE, shape.gate_row_tiles * TILE), FP32),
            ((units * shape.record_tiles * TILE, TILE), record_format))


def allocate_scan_scratch(device, shape: ScanShape, record_format: DataFormat = FP32) -> ScanScratch:
    (vectors_shape, vectors_format), (records_shape, records_format) = scan_scratch_shapes(shape, record_format)
    return ScanScratch(device.allocate(vectors_shape, vectors_format), device.allocate(records_shape, records_format))



def conv_program(device, dims: GdnDims, tokens: int, x: DeviceTensor, conv_state: DeviceTensor,
                 tap_weights: DeviceTensor, out: DeviceTensor, conv_state_out: DeviceTensor, *,
                 max_cores: int = MAX_CORES) -> Program:
    """Causal conv1d + SiLU over [T, 2HK + HV V], L2-normalising q and k heads and scaling q by K^-1/2."""
    c = dims.conv_channels
    _check_tensor("qkv", x, tokens, c, BF16)
    _check_tensor("conv output", out, tokens, c, BF16)
    for name, t in (("conv state", conv_state), ("new conv state", conv_state_out)):
        _check_tensor(name, t, CONV_WIDTH - 1, c, BF16)
    _check_tensor("conv tap weights", tap_weights, CONV_WIDTH * TILE, c, FP32)
    units = conv_units(dims, tokens, max_cores)
    owned = balance_units([conv_unit_cost(u) for u in units], max_cores)
    cores = core_list(len(owned))
    core_set = CoreRangeSet.of(cores)
    width = max(dims.key_tiles, conv_value_width(dims, max_cores))
    cbs = [
        CircularBuffer(0, BF16, BF16.tile_bytes, 2 * width, core_set),                 # cur
        CircularBuffer(1, BF16, BF16.tile_bytes, 2 * width, core_set),                 # prev
        CircularBuffer(2, FP32, FP32.tile_bytes, 2 * CONV_WIDTH * width, core_set),    # tap weights
        CircularBuffer(3, BF16, BF16.tile_bytes, CONV_CONST_TILES, core_set),          # constants
        CircularBuffer(4, BF16, BF16.tile_bytes, 1, core_set),                         # state scratch
        CircularBuffer(5, BF16, BF16.tile_bytes, width, core_set),                     # carried tiles
        CircularBuffer(16, BF16, BF16.tile_bytes, 2 * width, core_set),                # output
        CircularBuffer(17, BF16, BF16.tile_bytes, width, core_set),                    # new conv state
        CircularBuffer(24, FP32, FP32.tile_bytes, width, core_set),                    # y of a head
        CircularBuffer(25, FP32, FP32.tile_bytes, 1, core_set),                        # sum of squares
        CircularBuffer(26, FP32, FP32.tile_bytes, 1, core_set),                        # rs
    ]
    reader = Kernel(GDN_KERNELS / "conv_reader.cpp", Role.RISCV_1, core_set,
                    x.accessor_args() + tap_weights.accessor_args(),
                    common_runtime_args=[x.address, conv_state.address, tap_weights.address, tokens, x.tiles_w],
                    noc=DRAM_READ_NOC)
    compute = Kernel(GDN_KERNELS / "conv_compute.cpp", Role.COMPUTE, core_set,
                     common_runtime_args=[fp32_bits(EPS), fp32_bits(dims.key_dim ** -0.5)],
                     compute_config=ComputeConfig(math_fidelity=CONV_NORM_FIDELITY, fp32_dest_acc_en=True))
    writer = Kernel(GDN_KERNELS / "conv_writer.cpp", Role.RISCV_0, core_set, out.accessor_args(),
                    common_runtime_args=[out.address, conv_state_out.address, tokens, out.tiles_w], noc=DRAM_WRITE_NOC)
    for core, mine in zip(cores, owned):
        args = [len(mine)] + [v for i in mine for v in units[i]]
        for k in (reader, compute, writer):
            k.runtime_args[core] = list(args)
    _unpack_copies_to_dest(compute, cbs, (2, 24, 26))
    program = Program([reader, compute, writer], cbs,
                      inputs={"qkv": x, "conv_state": conv_state, "tap_weights": tap_weights},
                      outputs={"mixed": out, "conv_state": conv_state_out},
                      name=f"gdn_conv_T{tokens}_c{c}")
    _validate_l1(program, "the conv", "this does not depend on T; report it")
    return program


def gates_program(device, tokens: int, v_heads: int, a: DeviceTensor | HeadColumns, b: DeviceTensor | HeadColumns,
                  dt_bias_rows: DeviceTensor, a_log_rows: DeviceTensor, g: DeviceTensor, beta: DeviceTensor, *,
                  max_cores: int = MAX_CORES) -> Program:
    """beta = sigmoid(b), g = -exp(A_log) softplus(a + dt_bias) on [T, HV] tiles. a and b: tensors of their own,
    or HeadColumns of wider ones (one projection's output holding z, b and a side by side)."""
    a, b = (t if isinstance(t, HeadColumns) else HeadColumns(t) for t in (a, b))
    head_tiles = -(-v_heads // TILE)
    for name, t in (("a", a), ("b", b)):
        _check_tensor(name, t.tensor, tokens, v_heads, BF16)
        if t.first_col_tile + head_tiles > t.tensor.tiles_w:
            raise GdnShapeError(f"{name}: {head_tiles} head column tiles from column tile {t.first_col_tile} pass "
                                f"the tensor's {t.tensor.tiles_w}")
    for name, t in (("dt_bias rows", dt_bias_rows), ("A_log rows", a_log_rows)):
        _check_tensor(name, t, TILE, v_heads, FP32)
    for name, t in (("g", g), ("beta", beta)):
        _check_tensor(name, t, tokens, v_heads, FP32)
    plan = split_units(g.num_pages, max_cores)
    cores = _cores_of(plan)
    cbs = [CircularBuffer(i, BF16 if i < 2 else FP32, (BF16 if i < 2 else FP32).tile_bytes, 2, cores) for i in range(4)]
    cbs += [CircularBuffer(16, FP32, FP32.tile_bytes, 2, cores), CircularBuffer(17, FP32, FP32.tile_bytes, 2, cores)]
    reader = Kernel(GDN_KERNELS / "gates_reader.cpp", Role.RISCV_1, cores,
                    a.tensor.accessor_args() + dt_bias_rows.accessor_args(),
                    common_runtime_args=[a.tensor.address, b.tensor.address, dt_bias_rows.address, a_log_rows.address,
                                         head_tiles, a.tensor.tiles_w, a.first_col_tile, b.tensor.tiles_w,
                                         b.first_col_tile],
                    noc=DRAM_READ_NOC)
    compute = Kernel(GDN_KERNELS / "gates_compute.cpp", Role.COMPUTE, cores,
                     common_runtime_args=[fp32_bits(SOFTPLUS_THRESHOLD)],
                     compute_config=ComputeConfig(math_fidelity=MathFidelity.HiFi4, fp32_dest_acc_en=True))
    writer = Kernel(GDN_KERNELS / "gates_writer.cpp", Role.RISCV_0, cores, g.accessor_args(),
                    common_runtime_args=[g.address, beta.address], noc=DRAM_WRITE_NOC)
    for core, first, count in plan:
        reader.runtime_args[core] = [first, count]
        compute.runtime_args[core] = [count]
        writer.runtime_args[core] = [first, count]
    _unpack_copies_to_dest(compute, cbs, (2, 3, 16, 17))
    inputs = {"a": a.tensor} | ({"b": b.tensor} if b.tensor is not a.tensor else {})
    return Program([reader, compute, writer], cbs, inputs=inputs, outputs={"g": g, "beta": beta},
                   name=f"gdn_gates_T{tokens}_hv{v_heads}")


def norm_program(device, tokens: int, v_heads: int, value_dim: int, o: HeadColumns, z: DeviceTensor,
                 weight_rows: DeviceTensor, y: DeviceTensor, *, max_cores: int = MAX_CORES) -> Program:
    """y = w * (o * rsqrt(mean(o^2) + eps)) * silu(z) per value head."""
    vt = value_dim // TILE
    _check_tensor("o", o.tensor, tokens, 1)
    if o.first_col_tile + v_heads * vt > o.tensor.tiles_w:
        raise GdnShapeError(f"o tensor {o.tensor.shape} has no room for {v_heads} value heads of {value_dim}")
    for name, t in (("z", z), ("y", y)):
        _check_tensor(name, t, tokens, v_heads * value_dim, BF16)
    _check_tensor("norm weight rows", weight_rows, TILE, value_dim, FP32)
    plan = split_units(-(-tokens // TILE) * v_heads, max_cores)
    cores = _cores_of(plan)
    ofmt = o.tensor.data_format
    cbs = [
        CircularBuffer(0, ofmt, ofmt.tile_bytes, 2 * vt, cores),
        CircularBuffer(1, BF16, BF16.tile_bytes, 2 * vt, cores),
        CircularBuffer(2, FP32, FP32.tile_bytes, vt, cores),
        CircularBuffer(3, BF16, BF16.tile_bytes, 1, cores),
        CircularBuffer(16, BF16, BF16.tile_bytes, 4, cores),
        CircularBuffer(24, FP32, FP32.tile_bytes, 1, cores),
        CircularBuffer(25, FP32, FP32.tile_bytes, 1, cores),
    ]
    if ofmt != BF16:
        raise GdnShapeError("the norm reads o in bf16 (it shares the accessor with z)")
    reader = Kernel(GDN_KERNELS / "norm_reader.cpp", Role.RISCV_1, cores,
                    z.accessor_args() + weight_rows.accessor_args(),
                    common_runtime_args=[o.tensor.address, z.address, weight_rows.address, v_heads, vt,
                                         o.tensor.tiles_w, o.first_col_tile, z.tiles_w], noc=DRAM_READ_NOC)
    compute = Kernel(GDN_KERNELS / "norm_compute.cpp", Role.COMPUTE, cores,
                     common_runtime_args=[vt, fp32_bits(1.0 / value_dim), fp32_bits(EPS)],
                     compute_config=ComputeConfig(math_fidelity=CONV_NORM_FIDELITY, fp32_dest_acc_en=True))
    writer = Kernel(GDN_KERNELS / "norm_writer.cpp", Role.RISCV_0, cores, y.accessor_args(),
                    common_runtime_args=[y.address, v_heads, vt, y.tiles_w], noc=DRAM_WRITE_NOC)
    for core, first, count in plan:
        reader.runtime_args[core] = [first, count]
        compute.runtime_args[core] = [count]
        writer.runtime_args[core] = [first, count]
    _unpack_copies_to_dest(compute, cbs, (2, 25))
    return Program([reader, compute, writer], cbs, inputs={"o": o.tensor, "z": z, "weight_rows": weight_rows},
                   outputs={"y": y}, name=f"gdn_norm_T{tokens}_hv{v_heads}_v{value_dim}")



@dataclass
class LayerTensors:
    """Device tensors of one layer-core call (inputs, weights, scratch and outputs)."""

    qkv: DeviceTensor            # [T, C] bf16, pre-conv
    z: DeviceTensor              # [T, HV V] bf16
    a: DeviceTensor              # [T, HV] bf16
    b: DeviceTensor              # [T, HV] bf16
    conv_state: DeviceTensor     # [3, C] bf16
    tap_weights: DeviceTensor    # [4 * 32, C] fp32
    dt_bias_rows: DeviceTensor   # [32, HV] fp32
    a_log_rows: DeviceTensor     # [32, HV] fp32
    norm_rows: DeviceTensor      # [32, V] fp32
    state: DeviceTensor          # [HV K, V] fp32, the recurrent state in
    mixed: DeviceTensor          # [T, C] bf16, conv output (q, k normalised)
    g: DeviceTensor              # [T, HV] fp32
    beta: DeviceTensor           # [T, HV] fp32
    scratch: ScanScratch
    o: DeviceTensor              # [T, HV V] bf16, scan output
    y: DeviceTensor              # [T, HV V] bf16, layer-core output
    conv_state_out: DeviceTensor
    final_state: DeviceTensor
    checkpoints: DeviceTensor    # [max(1, n) HV K, V] fp32


def allocate_layer_tensors(device, dims: GdnDims, tokens: int, chunk: int, num_checkpoints: int = 0,
                           record_format: DataFormat = FP32) -> LayerTensors:
    """Tensors for a layer-core call, without data (upload into them with device.write)."""
    s = ScanShape.of(dims, tokens, chunk)
    c, hv, vdim = dims.conv_channels, dims.v_heads, dims.value_dim
    al = device.allocate
    return LayerTensors(
        qkv=al((tokens, c), BF16), z=al((tokens, hv * vdim), BF16), a=al((tokens, hv), BF16), b=al((tokens, hv), BF16),
        conv_state=al((CONV_WIDTH - 1, c), BF16), tap_weights=al((CONV_WIDTH * TILE, c), FP32),
        dt_bias_rows=al((TILE, hv), FP32), a_log_rows=al((TILE, hv), FP32), norm_rows=al((TILE, vdim), FP32),
        state=al((hv * dims.key_dim, vdim), FP32), mixed=al((tokens, c), BF16), g=al((tokens, hv), FP32),
        beta=al((tokens, hv), FP32), scratch=allocate_scan_scratch(device, s, record_format),
        o=al((tokens, hv * vdim), BF16), y=al((tokens, hv * vdim), BF16),
        conv_state_out=al((CONV_WIDTH - 1, c), BF16), final_state=al((hv * dims.key_dim, vdim), FP32),
        checkpoints=al((max(1, num_checkpoints) * hv * dims.key_dim, vdim), FP32),
    )


def free_layer_tensors(device, t: LayerTensors) -> None:
    for name, value in vars(t).items():
        if name == "scratch":
            value.free(device)
        else:
            device.free(value)


def layer_programs(device, dims: GdnDims, tokens: int, chunk: int, t: LayerTensors, checkpoint_chunks=(), *,
                   block_tiles: int | None = None, fidelity: MathFidelity = SCAN_FIDELITY,
                   max_cores: int | None = None, fused: bool | None = None,
                   pipelined: bool | None = None) -> list[Program]:
    """The programs of one layer core, in order, over the tensors of `t`: conv, gates, the scan (one
    fused program or two, scan_programs), gated norm; on `max_cores` cores (default: the compute grid's)."""
    max_cores = max_cores if max_cores is not None else compute_cores()
    s = ScanShape.of(dims, tokens, chunk)
    hk_tiles = dims.qk_heads * dims.key_tiles
    return [
        conv_program(device, dims, tokens, t.qkv, t.conv_state, t.tap_weights, t.mixed, t.conv_state_out,
                     max_cores=max_cores),
        gates_program(device, tokens, dims.v_heads, t.a, t.b, t.dt_bias_rows, t.a_log_rows, t.g, t.beta,
                      max_cores=max_cores),
        *scan_programs(device, s, HeadColumns(t.mixed, 0), HeadColumns(t.mixed, hk_tiles),
                       HeadColumns(t.mixed, 2 * hk_tiles), t.g, t.beta, t.scratch, t.state, HeadColumns(t.o),
                       t.final_state, t.checkpoints, list(checkpoint_chunks), fused=fused, block_tiles=block_tiles,
                       fidelity=fidelity, max_cores=max_cores, pipelined=pipelined),
        norm_program(device, tokens, dims.v_heads, dims.value_dim, HeadColumns(t.o), t.z, t.norm_rows, t.y,
                     max_cores=max_cores),
    ]
