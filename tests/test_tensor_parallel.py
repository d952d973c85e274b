"""The tensor-parallel plan (model/tensor_parallel.py) and its proof on host "chips".

The split stack (model/tensor_parallel_host.py: per-chip stacks over the plan's shards, explicit sums where the
plan reduces, concatenation where it gathers) is compared in fp64 with the unsplit ReferenceModel: last-token
logits, and every chip's GDN states and K/V against the slices of the full model's that the plan assigns it.
The index maps are checked against an ownership table built here from the weight layout (weights.py)
head by head, not from the plan's own arithmetic.
"""

import numpy as np
import pytest
import torch

from ttprefill.model.config import get_preset, hybrid_layer_types
from ttprefill.model.reference_model import ReferenceModel
from ttprefill.model.tensor_parallel import (
    TensorParallelError,
    TensorParallelPlan,
    TokenShards,
    collective_times,
    per_chip_ops,
    valid_tp_sizes,
)
from ttprefill.model.tensor_parallel_host import TensorParallelHostStack
from ttprefill.model.weights import parameter_shapes, random_weights

FP64_RTOL = 1e-9


def small_gqa_config(**changes):
    """Qwen3.5-27B's head ratios scaled down: GDN 8 q/k heads under 24 value heads (3 each), attention 24 q
    heads over 4 kv heads (6 each), so 8 chips hold 3 q heads each and every kv head sits on 2 chips. The
    vocabulary (515) does not divide by 2, 4 or 8: the last shards are one row shorter."""
    cfg = get_preset("tiny").with_changes(
        name="small-gqa", vocab_size=515, hidden_size=128, num_layers=8, layer_types=hybrid_layer_types(8),
        gdn_num_qk_heads=8, gdn_num_v_heads=24, gdn_key_head_dim=16, gdn_value_head_dim=16,
        attn_num_heads=24, attn_num_kv_heads=4, attn_head_dim=16, intermediate_size=256)
    return cfg.with_changes(**changes)


CONFIGS = {"tiny": lambda: get_preset("tiny"), "small-gqa": small_gqa_config}


# ---- the ownership table, from the layout ----------------------------------------------------------------
def owned_gdn_channels(cfg, v_heads):
    """in_proj_qkv rows of value heads `v_heads` and the q/k heads they read, walking the layout row by row."""
    H, HV, K, V = cfg.gdn_num_qk_heads, cfg.gdn_num_v_heads, cfg.gdn_key_head_dim, cfg.gdn_value_head_dim
    qk_heads = {j * H // HV for j in v_heads}
    rows = []
    for row in range(cfg.gdn_conv_channels):
        if row < H * K:
            owned = row // K in qk_heads
        elif row < 2 * H * K:
            owned = (row - H * K) // K in qk_heads
        else:
            owned = (row - 2 * H * K) // V in v_heads
        if owned:
            rows.append(row)
    return rows


@pytest.mark.parametrize("preset,tp", [("qwen3.5-27b", 8), ("qwen3.5-27b", 4), ("qwen3.5-9b", 2), ("tiny", 4)])
def test_index_maps_follow_the_heads(preset, tp):
    cfg = get_preset(preset)
    plan = TensorParallelPlan(cfg, tp)
    seen_v, seen_q, seen_ffn, seen_vocab = [], [], [], []
    for chip in range(tp):
        s = plan.shards[chip]
        seen_v += list(s.gdn_v_heads)
        seen_q += list(s.attn_q_heads)
        seen_ffn += list(s.ffn)
        seen_vocab += list(s.vocab)
        assert list(plan.gdn_qkv_channels(chip)) == owned_gdn_channels(cfg, set(s.gdn_v_heads))
        # every q head's kv head (GQA: q head h reads kv head h // group) is on the chip
        group = cfg.attn_num_heads // cfg.attn_num_kv_heads
        assert {h // group for h in s.attn_q_heads} == set(s.attn_kv_heads)
        D = cfg.attn_head_dim
        q_rows = [r for r in range(cfg.attn_num_heads * 2 * D) if r // (2 * D) in set(s.attn_q_heads)]
        assert list(plan.attn_q_rows(chip)) == q_rows
    # value heads, q heads, MLP features and vocabulary: each on exactly one chip
    assert sorted(seen_v) == list(range(cfg.gdn_num_v_heads))
    assert sorted(seen_q) == list(range(cfg.attn_num_heads))
    assert sorted(seen_ffn) == list(range(cfg.intermediate_size))
    assert sorted(seen_vocab) == list(range(cfg.vocab_size))


def test_t3000_replicates_kv_heads():
    plan = TensorParallelPlan(get_preset("qwen3.5-27b"), 8)
    kv = [tuple(plan.kv_heads(c)) for c in range(8)]
    assert kv == [(0,), (0,), (1,), (1,), (2,), (2,), (3,), (3,)]
    assert plan.replication("attn_kv") == 2 and plan.replication("gdn_qk") == 1
    chip = plan.chip_config(5)
    assert (chip.attn_num_heads, chip.attn_num_kv_heads, chip.gdn_num_qk_heads, chip.gdn_num_v_heads) == (3, 1, 2, 6)
    assert chip.intermediate_size == 17408 // 8 and chip.vocab_size == 248320 // 8


def test_shard_shapes_match_the_chip_config():
    cfg = small_gqa_config()
    weights = random_weights(cfg, seed=3)
    plan = TensorParallelPlan(cfg, 8)
    for chip in (0, 7):
        shard = plan.shard(weights, chip)
        assert {n: a.shape for n, a in shard.items()} == parameter_shapes(plan.chip_config(chip))


@pytest.mark.parametrize("preset,tp,numbers", [
    ("tiny", 3, ["GDN value heads (4)", "attention q heads (4)", "[1, 2, 4]"]),
    ("tiny", 8, ["GDN value heads (4) are not a multiple of 8", "[1, 2, 4]"]),
    ("qwen3.5-27b", 3, ["16 GDN value heads a chip", "groups of 3", "[1, 2, 4, 8]"]),
    ("qwen3.5-27b", 16, ["attention q heads (24) are not a multiple of 16", "[1, 2, 4, 8]"]),
])
def test_unsplittable_configs_name_the_numbers_and_the_sizes_that_work(preset, tp, numbers):
    with pytest.raises(TensorParallelError) as err:
        TensorParallelPlan(get_preset(preset), tp)
    for text in numbers:
        assert text in str(err.value)
    assert f"over {tp} chips" in str(err.value)


def test_valid_sizes_of_the_published_models():
    assert valid_tp_sizes(get_preset("qwen3.5-27b")) == [1, 2, 4, 8]
    assert valid_tp_sizes(get_preset("qwen3.5-9b")) == [1, 2, 4, 8, 16]


@pytest.mark.parametrize("bad", [0, -2, 1.5, True])
def test_bad_chip_counts_are_refused(bad):
    with pytest.raises(TensorParallelError, match="positive integer"):
        TensorParallelPlan(get_preset("tiny"), bad)


# ---- the host proof --------------------------------------------------------------------------------------
def prefill_both(cfg, tp, scheme, pieces, seed=11):
    """Prefill the same prompt, in the same pieces, through the reference and the split stack (fp64)."""
    weights = random_weights(cfg, seed=seed)
    tokens = np.random.default_rng(seed).integers(0, cfg.vocab_size, sum(pieces))
    ref = ReferenceModel(cfg, weights, dtype=torch.float64, gdn_chunk=16)
    split = TensorParallelHostStack(TensorParallelPlan(cfg, tp, scheme), weights, dtype=torch.float64, gdn_chunk=16)
    ref_state, chip_states = ref.new_state(), split.new_states()
    start = 0
    for n in pieces:
        ref_logits = ref.forward(tokens[start:start + n], ref_state, start, last_only=True)
        tp_logits = split.forward(tokens[start:start + n], chip_states, start, last_only=True)
        start += n
    return split.plan, ref_logits, tp_logits, ref_state, chip_states


def assert_close(got, want, what):
    scale = float(want.abs().max())
    err = float((got - want).abs().max())
    assert err <= FP64_RTOL * max(scale, 1.0), f"{what}: max error {err:.3g} against max |value| {scale:.3g}"


CASES = [("tiny", 1), ("tiny", 2), ("tiny", 4), ("small-gqa", 1), ("small-gqa", 2), ("small-gqa", 4),
         ("small-gqa", 8)]


@pytest.mark.parametrize("name,tp", CASES)
def test_split_stack_equals_the_reference(name, tp):
    cfg = CONFIGS[name]()
    plan, ref_logits, tp_logits, ref_state, chip_states = prefill_both(cfg, tp, "all_reduce", pieces=(21, 12))
    assert tp_logits.shape == (cfg.vocab_size,)
    assert_close(tp_logits, ref_logits, "last-token logits")
    assert int(tp_logits.argmax()) == int(ref_logits.argmax())
    for chip, state in enumerate(chip_states):
        assert state.num_tokens == 33
        for i in cfg.gdn_layers:
            assert_close(state.recurrent_states[i], ref_state.recurrent_states[i][plan.recurrent_state_heads(chip)],
                         f"chip {chip} layer {i} recurrent state")
            assert_close(state.conv_states[i], ref_state.conv_states[i][:, plan.conv_state_channels(chip)],
                         f"chip {chip} layer {i} conv state")
        for i in cfg.attention_layers:
            heads = plan.kv_heads(chip)
            assert_close(state.keys[i], ref_state.keys[i][:, heads], f"chip {chip} layer {i} K")
            assert_close(state.values[i], ref_state.values[i][:, heads], f"chip {chip} layer {i} V")


@pytest.mark.parametrize("name,tp", [("tiny", 2), ("small-gqa", 8)])
def test_reduce_scatter_scheme_equals_the_reference(name, tp):
    cfg = CONFIGS[name]()
    _, ref_logits, tp_logits, _, _ = prefill_both(cfg, tp, "reduce_scatter", pieces=(16, 8))
    assert_close(tp_logits, ref_logits, "last-token logits")


def test_tied_embeddings_split_with_the_head():
    cfg = get_preset("tiny").with_changes(tie_word_embeddings=True)
    _, ref_logits, tp_logits, _, _ = prefill_both(cfg, 4, "all_reduce", pieces=(9,))
    assert_close(tp_logits, ref_logits, "last-token logits")


def test_a_wrong_shard_is_caught():
    """The proof can fail: a plan whose conv taps are cut as one row range (not the chip's q, k, v runs)
    gives different logits."""
    cfg = get_preset("tiny")
    weights = random_weights(cfg, seed=5)
    plan = TensorParallelPlan(cfg, 2)
    split = TensorParallelHostStack(plan, weights, dtype=torch.float64, gdn_chunk=16)
    ref = ReferenceModel(cfg, weights, dtype=torch.float64, gdn_chunk=16)
    tokens = np.arange(10) * 7 % cfg.vocab_size
    want = ref.forward(tokens, ref.new_state(), 0, last_only=True)
    chip = split.chips[1]
    width = len(plan.gdn_qkv_channels(1))
    contiguous = np.arange(cfg.gdn_conv_channels - width, cfg.gdn_conv_channels)  # the naive row range
    i = cfg.gdn_layers[0]
    name = f"model.layers.{i}.linear_attn.in_proj_qkv.weight"
    chip.w[name] = torch.as_tensor(weights[name][contiguous], dtype=torch.float64)
    got = split.forward(tokens, split.new_states(), 0, last_only=True)
    assert float((got - want).abs().max()) > 1e-3


def test_reduce_scatter_needs_chunks_that_divide():
    cfg = get_preset("tiny")
    with pytest.raises(TensorParallelError, match="multiple of 4 tokens"):
        prefill_both(cfg, 4, "reduce_scatter", pieces=(10,))


# ---- per-chip ops and collective bytes -------------------------------------------------------------------
def test_per_chip_ops_of_27b_on_a_t3000():
    cfg = get_preset("qwen3.5-27b")
    ops = per_chip_ops(cfg, tp=8, seq=8192, chunk=4096, scheme="all_reduce")
    assert [c["tokens"] for c in ops["chunks"]] == [4096, 4096]
    first = ops["chunks"][0]["layers"]
    gdn = next(l for l in first if l["kind"] == "gdn")
    attn = next(l for l in first if l["kind"] == "attention")
    mm = {o["name"]: (o["m"], o["k"], o["n"]) for o in gdn["ops"] if o["op"] == "matmul"}
    # per chip: 6 of 48 value heads (2 of 16 q/k heads), 128 wide
    assert mm["in_proj_qkv"] == (4096, 5120, 2 * 2 * 128 + 6 * 128)
    assert mm["out_proj"] == (4096, 6 * 128, 5120)
    assert mm["down_proj"] == (4096, 17408 // 8, 5120)
    core = next(o for o in attn["ops"] if o["op"] == "attention")
    assert (core["q_heads"], core["kv_heads"], core["head_dim"], core["kv_len"]) == (3, 1, 256, 4096)
    second = next(l for l in ops["chunks"][1]["layers"] if l["kind"] == "attention")
    assert next(o for o in second["ops"] if o["op"] == "attention")["kv_len"] == 8192
    # two all-reduces a layer of the [4096, 5120] bf16 partial sums
    kinds = [(c["kind"], c["nbytes_per_chip"]) for c in gdn["collectives"]]
    assert kinds == [("all_reduce", 4096 * 5120 * 2)] * 2
    assert ops["head"]["collectives"][0]["shape"] == [1, 248320 // 8]
    assert ops["collective_bytes_per_chip"] == 2 * 64 * 2 * 4096 * 5120 * 2 + 248320 // 8 * 2


def test_collective_times_follow_the_ethernet_model():
    from ttprefill.device.mesh_timing import collective_time

    cfg = get_preset("qwen3.5-9b")
    ops = per_chip_ops(cfg, tp=2, seq=4096, chunk=4096, scheme="all_reduce")
    timed = collective_times(ops, mesh_shape=(1, 2), topology="line", links=1, costs="central")
    one = collective_time("all_reduce", 4096 * 4096 * 2, 2, "line", 1, "central").seconds
    assert timed["by_kind"]["all_reduce"]["count"] == 64
    assert timed["by_kind"]["all_reduce"]["seconds"] == pytest.approx(64 * one)
    assert timed["modeled"] is True


def test_single_chip_has_no_collectives():
    ops = per_chip_ops(get_preset("tiny"), tp=1, seq=64, chunk=32)
    assert ops["collective_bytes_per_chip"] == 0
    assert all(not l["collectives"] for c in ops["chunks"] for l in c["layers"])


def test_summary_lists_the_split_and_the_collectives():
    plan = TensorParallelPlan(get_preset("qwen3.5-27b"), 8, "reduce_scatter")
    s = plan.summary(tokens=256)
    assert s["attn_kv_replication"] == 2 and len(s["chips"]) == 8
    assert s["chips"][7]["attn_q_heads"] == [21, 24] and s["chips"][7]["gdn_v_heads"] == [42, 48]
    kinds = [(c["kind"], c["shape"]) for c in s["collectives_per_layer"]["gdn"]]
    # per block: the gather of each chip's 256 / 8 normed rows before its first projection, then the scatter
    assert kinds == [("all_gather", [32, 5120]), ("reduce_scatter", [256, 5120])] * 2


def test_reduce_scatter_ops_split_the_norms_and_gather_the_last_row():
    ops = per_chip_ops(get_preset("qwen3.5-9b"), tp=2, seq=512, chunk=256, scheme="reduce_scatter")
    layer = ops["chunks"][1]["layers"][3]
    # a middle layer's two block edges, each the residual add fused with the next norm, on the chip's rows
    norms = [(o["op"], o["rows"]) for o in layer["ops"] if o.get("width") == 4096]
    assert norms == [("add_rmsnorm", 128), ("add_rmsnorm", 128)]
    assert [(c["kind"], c["block"]) for c in layer["collectives"]] == [
        ("all_gather", "mixer"), ("reduce_scatter", "mixer"), ("all_gather", "mlp"), ("reduce_scatter", "mlp")]
    # each gather sits beside the matmul that reads it, each scatter beside the one whose sums it scatters
    assert [c["feeds"] or c["after"] for c in layer["collectives"]] == ["qkv_proj", "o_proj", "gate_up_proj",
                                                                         "down_proj"]
    # the final norm's tile row (32 rows: a tile is the gather's unit) from every chip, then the logits
    assert [(c["after"], c["shape"]) for c in ops["head"]["collectives"]] == [("final_norm", [32, 4096]),
                                                                              ("lm_head", [1, 248320 // 2])]
    # each reduce-scatter takes the whole partial sums the all-reduce scheme reduces
    plain = per_chip_ops(get_preset("qwen3.5-9b"), tp=2, seq=512, chunk=256, scheme="all_reduce")
    rs_layer_bytes = sum(c["nbytes_per_chip"] for c in layer["collectives"] if c["kind"] == "reduce_scatter")
    assert rs_layer_bytes == sum(c["nbytes_per_chip"] for c in plain["chunks"][1]["layers"][3]["collectives"])


@pytest.mark.parametrize("mesh_shape", [(1, 2), (2, 4)])
def test_mesh_layout_uploads_each_chip_its_shard(mesh_shape):
    """An equal-shard upload on the simulated mesh (ttnn's ShardTensorToMesh) of the plan's mesh layout puts
    on every chip exactly the plan's shard: the non-contiguous in_proj_qkv rows, o_proj's columns, kv rows
    replicated over chip pairs, and replicated norms."""
    from ttprefill.device.mesh import REPLICATE, SimMesh, shard_placements
    from ttprefill.device.program import DataFormat

    cfg = small_gqa_config(vocab_size=512)
    weights = random_weights(cfg, seed=2)
    tp = mesh_shape[0] * mesh_shape[1]
    plan = TensorParallelPlan(cfg, tp)
    mesh = SimMesh(mesh_shape)
    gdn, attn = cfg.gdn_layers[0], cfg.attention_layers[0]
    names = [f"model.layers.{gdn}.linear_attn.in_proj_qkv.weight", f"model.layers.{gdn}.linear_attn.out_proj.weight",
             f"model.layers.{attn}.self_attn.k_proj.weight", f"model.layers.{attn}.self_attn.o_proj.weight",
             f"model.layers.{attn}.self_attn.q_norm.weight", "lm_head.weight"]
    for name in names:
        array, dim = plan.mesh_layout(name, weights[name])
        if array.ndim == 1:  # device tensors are 2-D: a replicated vector goes up as one row
            assert dim is None
            array = array[None]
        t = mesh.upload(array, DataFormat.Float32, REPLICATE if dim is None else shard_placements(dim))
        for chip, got in enumerate(mesh.download_shards(t)):
            want = plan.shard(weights, chip)[name]
            np.testing.assert_array_equal(got.reshape(want.shape), want, err_msg=f"{name} chip {chip}")
        mesh.free(t)


def test_mesh_layout_refuses_uneven_vocabulary_shards():
    cfg = small_gqa_config()  # vocabulary 515
    plan = TensorParallelPlan(cfg, 2)
    with pytest.raises(TensorParallelError, match="pad each slice to 258 rows"):
        plan.mesh_layout("lm_head.weight", np.zeros((515, cfg.hidden_size), np.float32))


def test_whole_mesh_all_reduce_schedules_on_a_2x4():
    from ttprefill.device.mesh_timing import collective_time

    ops = per_chip_ops(get_preset("qwen3.5-27b"), tp=8, seq=256, chunk=256, scheme="all_reduce")
    x = 256 * 5120 * 2
    axis = collective_time("all_reduce", x, 4, "line", 1).seconds + collective_time("all_reduce", x, 2, "line", 1).seconds
    tree = (collective_time("reduce_scatter", x, 4, "line", 1).seconds
            + collective_time("all_reduce", x / 4, 2, "line", 1).seconds
            + collective_time("all_gather", x / 4, 4, "line", 1).seconds)
    for schedule, one in (("axis_by_axis", axis), ("hierarchical", tree)):
        timed = collective_times(ops, (2, 4), "line", links=1, schedule=schedule)
        assert timed["by_kind"]["all_reduce"]["seconds"] == pytest.approx(128 * one)
    assert tree < axis
    with pytest.raises(ValueError, match="no ring over axis 1"):
        collective_times(ops, (2, 4), "ring")


def test_reduce_scatter_pads_a_chunk_to_whole_tile_rows_a_chip():
    """A chunk whose tokens do not fill a tile row a chip is padded: 100 tokens over 4 chips are 4 x 32 rows (the
    collectives move whole tiles); the norms and adds run on those 32 rows a chip."""
    cfg = get_preset("qwen3.5-9b")
    ops = per_chip_ops(cfg, tp=4, seq=100, chunk=100, scheme="reduce_scatter")
    layer = ops["chunks"][0]["layers"][0]
    H = cfg.hidden_size
    assert [(c["kind"], c["shape"], c["nbytes_per_chip"]) for c in layer["collectives"]][:2] == [
        ("all_gather", [32, H], 32 * H * 2), ("reduce_scatter", [128, H], 128 * H * 2)]
    # the first layer's input norm, then the mixer's add + the MLP's norm, the MLP's add + the next layer's norm
    assert [o["rows"] for o in layer["ops"] if o["op"] in ("rmsnorm", "add_rmsnorm") and o["width"] == H] == [32] * 3
    # the LM head reads every chip's final-norm tile row up to the last token's: chip 3's row 3, 3 * 32 + 4 rows
    assert [(o["name"], o.get("rows"), o.get("m")) for o in ops["head"]["ops"]] == [("final_norm", 4, None),
                                                                                   ("lm_head", None, 100)]
    assert TokenShards(100, 4).home(99) == (3, 3) and TokenShards(20, 2).home(19) == (0, 19)


def test_per_chip_ops_list_the_device_stacks_fused_projections_and_norms():
    """Qwen3.5-27B on 8 chips, by hand: a GDN layer's z | b | a is one projection of 6 value heads' 6 * 128 z
    columns and b and a padded to a 32-column tile each; attention's q (query + gate) | k | v one projection of
    3 q heads' 3 * 2 * 256 rows and the one kv head's 2 * 256; each block ends with add + the next norm."""
    cfg = get_preset("qwen3.5-27b")
    ops = per_chip_ops(cfg, tp=8, seq=4096 + 40, chunk=4096, scheme="all_reduce")
    layers = ops["chunks"][0]["layers"]
    gdn = next(l for l in layers if l["kind"] == "gdn")
    attn = next(l for l in layers if l["kind"] == "attention")
    assert [(o["name"], o["n"]) for o in gdn["ops"] if o["op"] == "matmul"] == [
        ("in_proj_qkv", 2 * 2 * 128 + 6 * 128), ("in_proj_zba", 6 * 128 + 32 + 32), ("out_proj", 5120),
        ("gate_up_proj", 2 * 17408 // 8), ("down_proj", 5120)]
    # gate and up paired in one program that writes silu(gate) * up: no silu_mul pass
    assert [o.get("swiglu", False) for o in gdn["ops"] if o["op"] == "matmul"] == [False] * 3 + [True, False]
    assert not [o for o in gdn["ops"] if o["op"] == "silu_mul"]
    assert [(o["name"], o["n"]) for o in attn["ops"] if o["op"] == "matmul"][:2] == [
        ("qkv_proj", 3 * 2 * 256 + 2 * 256), ("o_proj", 5120)]
    edges = [[(o["op"], o["name"]) for o in l["ops"] if o["op"] in ("rmsnorm", "add", "add_rmsnorm")
              and o["width"] == 5120] for l in (layers[0], layers[1], layers[-1])]
    assert edges[0] == [("rmsnorm", "input_layernorm"), ("add_rmsnorm", "residual_post_attention_layernorm"),
                        ("add_rmsnorm", "residual_next_input_layernorm")]
    assert edges[1] == edges[0][1:]
    assert edges[2] == [("add_rmsnorm", "residual_post_attention_layernorm"), ("add", "residual")]
    # the last chunk holds 40 tokens: its last in the second tile row, 8 rows of it up to that token
    assert [(o["name"], o.get("rows"), o.get("m"), o.get("n")) for o in ops["head"]["ops"]] == [
        ("final_norm", 8, None, None), ("lm_head", None, 8, 248320 // 8)]
