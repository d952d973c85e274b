"""The memory plan: device bytes of a model's resident weights, cache and states against a chip's DRAM.

Expected sizes are worked out here from the published Qwen3.5-9B dimensions (hidden 4096, 32 layers of which
8 attention, GDN 16 q/k heads and 32 v heads of 128, attention 16 q / 4 kv heads of 256, MLP 12288, vocab
248320) and tt-metal's tile sizes (bf16 2,048 bytes a tile, bfp8_b 1,088), not from the code under test.
"""

from __future__ import annotations

import pytest

from ttprefill.hw import DRAM_BYTES_PER_CHIP
from ttprefill.model.config import get_preset
from ttprefill.model.memory_plan import MemoryPlanError, plan_memory, state_bytes, weight_bytes

GB = 1e9


def _qwen35_9b_tiles():
    """(matrix tiles, fp32 vector/conv tiles) of Qwen3.5-9B without the embedding."""
    t = lambda rows, cols: (rows // 32) * (cols // 32)  # noqa: E731 - every dimension here is a multiple of 32
    gdn = t(2 * 16 * 128 + 32 * 128, 4096) + t(4096, 4096) + 2 * t(32, 4096) + t(4096, 4096)
    attention = t(16 * 2 * 256, 4096) + 2 * t(4 * 256, 4096) + t(4096, 16 * 256)
    mlp = 3 * t(12288, 4096)
    lm_head = t(248320, 4096)
    matrices = 24 * gdn + 8 * attention + 32 * mlp + lm_head
    # Vectors as one row-broadcast tile row each: 2 layer norms of 4096 (128 tiles each) per layer and the final
    # one; GDN: conv taps (each of the 4 taps a tile row of 8192 channels: 4 x 256 tiles), A_log and dt_bias
    # (1 tile each), the gated norm (4); attention: q_norm and k_norm of 256 (8 tiles each).
    vectors = 32 * 2 * 128 + 128 + 24 * (4 * 256 + 1 + 1 + 4) + 8 * (8 + 8)
    return matrices, vectors


@pytest.mark.parametrize("fmt,tile_bytes", [("bf16", 2048), ("bfp8", 1088)])
def test_weight_bytes_of_qwen35_9b_from_its_published_shapes(fmt, tile_bytes):
    matrices, vectors = _qwen35_9b_tiles()
    assert weight_bytes(get_preset("qwen3.5-9b"), fmt) == matrices * tile_bytes + vectors * 4096  # fp32 tiles


def test_gdn_states_are_a_ping_pong_pair_of_fp32_recurrent_and_bf16_conv_per_gdn_layer():
    """Recurrent [32 x 128, 128] in fp32 tiles (4 KB each), conv [3, 8192] in one row of bf16 tiles (2 KB each),
    twice (the state a chunk reads and the one it writes)."""
    per_layer = 2 * ((32 * 128 // 32) * (128 // 32) * 4096 + (8192 // 32) * 2048)
    assert state_bytes(get_preset("qwen3.5-9b")) == 24 * per_layer == 24 * 5_242_880


def test_held_checkpoint_reads_and_the_second_input_buffer_of_9b():
    """A 2048-token chunk with a checkpoint at each of its 31 inner 64-token block ends and its end: per GDN layer
    32 recurrent states of 2 MB (fp32 [4096, 128]) and 32 x 3 conv rows of 8192 bf16 values (8 pages of 2 KB each);
    the next chunk's 2048 x 4096 bf16 embeddings. Split over 2 chips the held states halve."""
    from ttprefill.model.memory_plan import checkpoint_read_bytes, input_buffer_bytes

    config = get_preset("qwen3.5-9b")
    held = 24 * (32 * 4096 * 128 * 4 + 32 * 3 * 8 * 2048)
    assert checkpoint_read_bytes(config, 2048, 64, 64) == held
    assert input_buffer_bytes(config, 2048) == 2048 * 4096 * 2
    one = plan_memory(config, weight_format="bfp8", cache_budget_bytes=0, chunk_tokens=2048, gdn_chunk=64,
                      block_tokens=64)
    two = plan_memory(config, weight_format="bfp8", cache_budget_bytes=0, chunk_tokens=2048, gdn_chunk=64,
                      block_tokens=64, chips=2)
    assert one.parts["checkpoint_reads"] == held and two.parts["checkpoint_reads"] == held // 2
    assert one.parts["input_buffer"] == two.parts["input_buffer"] == 2048 * 4096 * 2


def test_9b_needs_bfp8_weights_on_one_chip():
    config = get_preset("qwen3.5-9b")
    kv_32k = 8 * 2 * 4 * 256 * 32768 * 2  # 8 attention layers' K and V pages for 32k tokens, bf16
    with pytest.raises(MemoryPlanError) as e:
        plan_memory(config, weight_format="bf16", cache_budget_bytes=kv_32k, chunk_tokens=2048).check()
    message = str(e.value)
    assert "does not fit" in message and "bfp8 weights" in message and "weights 16.01" in message
    plan = plan_memory(config, weight_format="bfp8", cache_budget_bytes=kv_32k, chunk_tokens=2048).check()
    assert plan.fits and plan.total <= DRAM_BYTES_PER_CHIP


def test_a_setting_with_some_roles_in_bf16_is_told_to_try_bfp8_weights():
    """bf16 kept on some roles (a per-role setting) still leaves bfp8 weights as a way out, as "bf16" alone does."""
    config = get_preset("qwen3.5-9b")
    kv_32k = 8 * 2 * 4 * 256 * 32768 * 2
    for spec in ("bf16,mlp_gate_up=bfp4", "bfp8,mlp_down=bf16,mlp_gate_up=bf16"):
        with pytest.raises(MemoryPlanError, match="does not fit.*try bfp8 weights"):
            plan_memory(config, weight_format=spec, cache_budget_bytes=kv_32k, chunk_tokens=2048).check()
    with pytest.raises(MemoryPlanError) as e:  # nothing in bf16: bfp8 weights are no way out
        plan_memory(config, weight_format="bfp8", cache_budget_bytes=4 * kv_32k, chunk_tokens=2048).check()
    assert "does not fit" in str(e.value) and "try bfp8 weights" not in str(e.value)


def test_27b_needs_a_mesh_and_fits_eight_chips():
    config = get_preset("qwen3.5-27b")
    with pytest.raises(MemoryPlanError, match="more chips"):
        plan_memory(config, weight_format="bfp8", cache_budget_bytes=1 << 30, chunk_tokens=2048).check()
    plan = plan_memory(config, weight_format="bfp8", cache_budget_bytes=1 << 30, chunk_tokens=2048, chips=8)
    assert plan.fits
    assert plan.parts["weights"] < 27e9 * 1.0625 / 8 + 0.1 * GB


def test_bad_arguments_are_named():
    config = get_preset("tiny")
    with pytest.raises(MemoryPlanError, match="weight format 'fp8'"):
        plan_memory(config, weight_format="fp8", cache_budget_bytes=0, chunk_tokens=32)
    with pytest.raises(MemoryPlanError, match="chips"):
        plan_memory(config, weight_format="bf16", cache_budget_bytes=0, chunk_tokens=32, chips=0)


def test_resident_rope_tables_are_counted():
    config = get_preset("qwen3.5-9b")  # 64 rotary dims: cos and sin of 2 tiles' width, fp32
    plan = plan_memory(config, weight_format="bfp8", cache_budget_bytes=0, chunk_tokens=256, rope_positions=8192)
    assert plan.parts["rope_tables"] == 2 * 8192 * 64 * 4
    tiny = get_preset("tiny")  # 16 rotary dims, held a tile wide
    assert plan_memory(tiny, weight_format="bf16", cache_budget_bytes=0, chunk_tokens=32,
                       rope_positions=64).parts["rope_tables"] == 2 * 64 * 32 * 4


@pytest.mark.parametrize("preset,tokens", [("qwen3.5-9b", 256), ("tiny", 200)])
def test_a_chunks_activations_are_what_the_device_stack_allocates(preset, tokens):
    """The plan's activations against the simulator's DRAM allocator: the chunk's residual stream plus the
    largest of the three blocks' temporaries as the device stack's LayerRunner allocates them (shapes only,
    timing-only device), the GDN block with a checkpoint at every 64-token block boundary inside and at its end."""
    from ttprefill.device.sim_device import SimDevice
    from ttprefill.model.device_stack import (BF16, FP32, GdnDeviceState, LayerRunner, OpTimes,
                                              Scratch, WeightSource, layer_weights)
    from ttprefill.model.memory_plan import activation_bytes, checkpoint_read_bytes
    from ttprefill.ops.attention import KVCache, ResidentPageTable
    from ttprefill.ops.rope import RopeTables
    from ttprefill.model.stack import ChunkContext
    from ttprefill.options import EngineOptions

    import numpy as np

    cfg, o = get_preset(preset), EngineOptions()
    device = SimDevice(timing_only=True)
    src = WeightSource(device, None, "bfp8")
    gdn_w, attn_w = layer_weights(src, cfg, cfg.gdn_layers[0]), layer_weights(src, cfg, cfg.attention_layers[0])
    dims = cfg.gdn_dims
    state = GdnDeviceState(*(device.allocate(shape, fmt) for shape, fmt in (
        ((3, dims.conv_channels), BF16), ((3, dims.conv_channels), BF16),
        ((dims.v_heads * dims.key_dim, dims.value_dim), FP32), ((dims.v_heads * dims.key_dim, dims.value_dim), FP32))))
    pages = -(-tokens // 64)
    cache = KVCache.create(device, pages, 64, cfg.attn_num_kv_heads, cfg.attn_head_dim, o.kv_page_format)
    rope = RopeTables.upload(device, np.arange(pages * 64), cfg.rotary_dim, cfg.rope_theta)
    table = ResidentPageTable(device, pages)
    table.sync(range(pages), pages)
    runner = LayerRunner(cfg, device, gdn_chunk=64, gdn_fidelity=o.gdn_fidelity,
                         attention_fidelity=o.attention_fidelity, times=OpTimes())
    chunk = Scratch(device)
    x = chunk.alloc((tokens, cfg.hidden_size))
    # tensor bytes live (each tensor's pages; the allocator's per-bank rounding aside, which only small
    # tensors notice), and their peak
    live, peak, allocate, free = [0], [0], device.allocate, device.free

    def counting_allocate(*args):
        tensor = allocate(*args)
        live[0] += tensor.nbytes
        peak[0] = max(peak[0], live[0])
        return tensor

    def counting_free(tensor):
        live[0] -= tensor.nbytes
        free(tensor)

    device.allocate, device.free = counting_allocate, counting_free
    checkpoints = tuple(range(64, tokens, 64)) + (tokens,)
    peaks, helds = [], []
    for run in (lambda s: runner.gdn_block(s, x, gdn_w, state, checkpoints), lambda s: runner.mlp_block(s, x, gdn_w),
                lambda s: runner.attention_block(s, x, attn_w, cache, table.tensor,
                                                 ChunkContext(0, tokens, tuple(range(pages))), rope)):
        block = Scratch(device)
        before = peak[0] = live[0]
        kept = run(block)
        # the GDN block's checkpoint tensors (live from their allocation to the block's end here; the device stack
        # hands them to the chunk) are the plan's checkpoint_reads, not its activations
        held = 0 if kept is None else kept.conv_rows.tensor.nbytes + kept.recurrent.nbytes
        peaks.append(peak[0] - before - held)
        helds.append(held)
        block.free()
    measured = x.nbytes + max(peaks)
    planned = activation_bytes(cfg, tokens, 64, 64)
    assert measured * 0.98 <= planned <= measured * 1.05, (planned, measured)
    # per checkpoint: the state [HV K, V] in fp32 tiles, the conv rows (3 bf16 rows, each in whole 2 KB pages)
    each = (-(-dims.v_heads * dims.key_dim // 32) * -(-dims.value_dim // 32) * 4096
            + 3 * -(-dims.conv_channels // 1024) * 2048)
    assert helds == [len(checkpoints) * each, 0, 0]
    assert checkpoint_read_bytes(cfg, tokens, 64, 64) == len(cfg.gdn_layers) * helds[0]


def test_a_requests_page_table_is_counted(sim):
    from ttprefill.ops.attention.page_table import ResidentPageTable

    config = get_preset("qwen3.5-9b")
    # 1,025 uint32 entries need 33 rows of 32: two 32x32 tiles of 4 bytes, interleaved over 12 DRAM banks that
    # each reserve the same slots: one tile slot in every bank; 13,000 entries: 13 tiles, two slots a bank
    plan = plan_memory(config, weight_format="bfp8", cache_budget_bytes=0, chunk_tokens=256, kv_pages=1025)
    assert plan.parts["page_table"] == 12 * 32 * 32 * 4
    plan = plan_memory(config, weight_format="bfp8", cache_budget_bytes=0, chunk_tokens=256, kv_pages=13000)
    assert plan.parts["page_table"] == 24 * 32 * 32 * 4
    # what the device stack's resident table takes on the simulator, for a few pool sizes
    for pages in (1, 1024, 1025, 13000):
        before = sim.dram_bytes_in_use()
        table = ResidentPageTable(sim, pages)
        try:
            taken = sim.dram_bytes_in_use() - before
        finally:
            table.free()
        assert plan_memory(config, weight_format="bfp8", cache_budget_bytes=0, chunk_tokens=256,
                           kv_pages=pages).parts["page_table"] == taken


@pytest.mark.parametrize("mesh_shape", [(1, 2), (2, 2)])
@pytest.mark.parametrize("scheme", ["all_reduce", "reduce_scatter"])
@pytest.mark.parametrize("dtype", ["bf16", "bfp8"])
def test_a_chunks_activations_on_a_mesh_are_what_each_chip_allocates_at_its_peak(mesh_shape, scheme, dtype):
    """The plan's per-chip activations and GDN checkpoint tensors under each tensor-parallel scheme against the
    simulated chips' own high-water mark of live tensor bytes over one chunk (the device stack on a SimMesh,
    timing only): the bytes above what stays resident after the chunk. 200 tokens: the reduce_scatter split pads
    them (to 256 rows on either mesh), so the padded gather, partial sum and scatter outputs differ from the
    unpadded rows. tiny's largest block is its GDN block, so its own checkpoint tensors counted twice (in both
    parts) or a chip's conv rows taken as the whole model's divided (2x2: q/k heads shared) would show. Collectives
    in bf16 or bfp8 (EngineOptions.collective_dtype): the normed, gathered, partial and reduced rows in its formats."""
    from ttprefill.device.mesh import SimMesh
    from ttprefill.model.collective_dtype import CollectiveDtype
    from ttprefill.model.device_stack import DeviceStack
    from ttprefill.model.memory_plan import activation_bytes
    from ttprefill.model.stack import ChunkContext
    from ttprefill.model.weights import random_weights
    from ttprefill.options import EngineOptions

    import numpy as np

    cfg, o, tokens, page_tokens = get_preset("tiny"), EngineOptions(), 200, 256
    mesh = SimMesh(mesh_shape, timing_only=True)
    stack = DeviceStack(cfg, random_weights(cfg, seed=3), mesh, num_pages=2, page_tokens=page_tokens,
                        weight_format="bfp8", gdn_chunk=o.gdn_chunk, gdn_fidelity=o.gdn_fidelity,
                        attention_fidelity=o.attention_fidelity, page_format=o.kv_page_format, tp_scheme=scheme,
                        collective_dtype=CollectiveDtype.parse(dtype))
    try:
        for chip in mesh.chips:
            chip.reset_tensor_bytes_high_water()
        # a chunk that ends on a checkpoint (none inside it, shorter than a block): each GDN layer's checkpoint
        # tensors, one state slot and its conv rows, held from its block to the chunk's end
        stack.forward(np.arange(tokens) % cfg.vocab_size, stack.new_state(), ChunkContext(0, tokens, (0,)),
                      need_logits=False, sync_end=True)
        measured = [chip.tensor_bytes_high_water() - chip.tensor_bytes_in_use() for chip in mesh.chips]
    finally:
        stack.free()
    parts = plan_memory(cfg, weight_format="bfp8", cache_budget_bytes=0, chunk_tokens=tokens,
                        chips=mesh_shape[0] * mesh_shape[1], gdn_chunk=o.gdn_chunk, block_tokens=page_tokens,
                        mesh_shape=mesh_shape, scheme=scheme, collective_dtype=CollectiveDtype.parse(dtype)).parts
    assert parts["activations"] == activation_bytes(cfg, tokens, o.gdn_chunk, page_tokens, mesh_shape=mesh_shape,
                                                    scheme=scheme, collective_dtype=CollectiveDtype.parse(dtype))
    planned = parts["activations"] + parts["checkpoint_reads"]
    assert len(set(measured)) == 1, measured  # every chip runs the same shapes
    # tiny's widths are whole tiles and its attention rows a head the chunk's tile rows, so the count is exact;
    # a tolerance would hide the schemes' difference (on 2x2 32 KB, under 3%)
    assert planned == measured[0], (planned, measured[0])


@pytest.mark.parametrize("fmt", ["bfp8", "bf16", "bfp8,mlp_gate_up=bfp4"])
def test_weight_bytes_are_what_the_device_stack_holds(fmt):
    """The plan against the device stack's own tensors (the tiny model on one simulated chip): every matrix in its
    role's format, every vector and conv tap as the stack uploads it."""
    from ttprefill.device.sim_device import SimDevice
    from ttprefill.engine import EngineOptions, make_mixers
    from ttprefill.model.weights import random_weights

    tiny = get_preset("tiny")
    stack = make_mixers("sim", tiny, 8, EngineOptions(weight_format=fmt), SimDevice(),
                        weights=random_weights(tiny, seed=0))
    try:
        assert weight_bytes(tiny, fmt) == stack.weight_bytes
    finally:
        stack.free()
