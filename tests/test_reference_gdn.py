"""The fp64 GDN reference against itself (two forms of the scan) and against direct formulas."""

import numpy as np
import pytest

from ttprefill.reference import (
    ADVERSARIAL_KINDS,
    GdnLayerParams,
    causal_conv1d_silu,
    chunk_prepare,
    gated_rmsnorm,
    gates,
    gdn_chunked,
    gdn_inputs,
    gdn_layer_core,
    gdn_recurrent,
    l2norm,
    pcc,
    rel_rms,
)

K_DIM, V_DIM = 32, 16  # different on purpose: a K/V mix-up cannot go unnoticed
SCALES = (0.01, 0.1, 1.0, 10.0)


def assert_close(ref, out, tol):
    err = np.max(np.abs(np.asarray(ref) - np.asarray(out)))
    bound = tol * max(1.0, np.max(np.abs(ref)))
    assert err <= bound, f"max abs error {err:.3e} > {bound:.3e}"


def run_both(inputs, chunk, checkpoints=()):
    args = (inputs["q"], inputs["k"], inputs["v"], inputs["g"], inputs["beta"])
    rec = gdn_recurrent(*args, initial_state=inputs["initial_state"])
    chk = gdn_chunked(*args, chunk=chunk, initial_state=inputs["initial_state"], checkpoints=checkpoints)
    return rec, chk


# ---- the scan --------------------------------------------------------------------------------


@pytest.mark.parametrize("heads", [(1, 1), (2, 4)], ids=["H1_HV1", "H2_HV4"])
@pytest.mark.parametrize("T", [1, 63, 64, 65, 200])
@pytest.mark.parametrize("chunk", [16, 32, 64])
def test_chunked_equals_recurrent(chunk, T, heads):
    H, HV = heads
    rng = np.random.default_rng(1000 * chunk + T + 7 * HV)
    for s in SCALES:
        inputs = gdn_inputs(T, H, HV, K_DIM, V_DIM, s, rng)
        (o_rec, S_rec), (o_chk, S_chk, _) = run_both(inputs, chunk)
        assert o_chk.shape == (T, HV, V_DIM) and S_chk.shape == (HV, K_DIM, V_DIM)
        assert_close(o_rec, o_chk, 1e-10)
        assert_close(S_rec, S_chk, 1e-10)


@pytest.mark.parametrize("kinds", [(k,) for k in ADVERSARIAL_KINDS] + [ADVERSARIAL_KINDS], ids=str)
def test_chunked_equals_recurrent_adversarial(kinds):
    rng = np.random.default_rng(5)
    inputs = gdn_inputs(130, 2, 4, K_DIM, V_DIM, 1.0, rng, adversarial=kinds)
    (o_rec, S_rec), (o_chk, S_chk, _) = run_both(inputs, 64)
    assert_close(o_rec, o_chk, 1e-9)
    assert_close(S_rec, S_chk, 1e-9)


def test_checkpoints_equal_recurrent_state_on_prefix():
    rng = np.random.default_rng(2)
    inputs = gdn_inputs(100, 2, 4, K_DIM, V_DIM, 1.0, rng)
    _, (_, final, saved) = run_both(inputs, 32, checkpoints=(0, 32, 64, 96, 100))
    assert sorted(saved) == [0, 32, 64, 96, 100]
    assert np.array_equal(saved[0], inputs["initial_state"])
    assert np.array_equal(saved[100], final)
    for p in (32, 64, 96):
        _, state_p = gdn_recurrent(
            *(inputs[n][:p] for n in ("q", "k", "v", "g", "beta")), initial_state=inputs["initial_state"]
        )
        assert_close(state_p, saved[p], 1e-10)


def test_checkpoint_off_chunk_boundary_is_rejected():
    rng = np.random.default_rng(3)
    inputs = gdn_inputs(40, 1, 1, 8, 8, 1.0, rng)
    with pytest.raises(ValueError, match="chunk boundary"):
        gdn_chunked(*(inputs[n] for n in ("q", "k", "v", "g", "beta")), chunk=16, checkpoints=(20,))


def test_single_token_from_zero_state_matches_closed_form():
    # S = k (beta v)^T, so o = S^T q = beta (k . q) v.
    rng = np.random.default_rng(4)
    q, k = rng.standard_normal((1, 1, 8)), rng.standard_normal((1, 1, 8))
    v = rng.standard_normal((1, 1, 5))
    g, beta = np.array([[-0.3]]), np.array([[0.7]])
    o, S = gdn_recurrent(q, k, v, g, beta)
    assert np.allclose(o[0, 0], 0.7 * np.dot(k[0, 0], q[0, 0]) * v[0, 0], rtol=1e-14, atol=0)
    assert np.allclose(S[0], np.outer(k[0, 0], 0.7 * v[0, 0]), rtol=1e-14, atol=0)


def test_delta_rule_full_write_recalls_the_value():
    # With beta = 1, g = 0 and a unit key, the delta rule overwrites what the key recalls:
    # after the write S^T k == v exactly, whatever the state held before.
    rng = np.random.default_rng(6)
    k = l2norm(rng.standard_normal((1, 1, 16)), eps=0.0)
    v = rng.standard_normal((1, 1, 8))
    S0 = rng.standard_normal((1, 16, 8))
    _, S = gdn_recurrent(k, k, v, np.zeros((1, 1)), np.ones((1, 1)), initial_state=S0)
    assert np.allclose(S[0].T @ k[0, 0], v[0, 0], rtol=0, atol=1e-13)


def test_value_head_uses_its_group_query_key_head():
    # HV = 4 over H = 2: value heads 0,1 read q/k head 0 and heads 2,3 read q/k head 1.
    rng = np.random.default_rng(8)
    inputs = gdn_inputs(20, 2, 4, 8, 8, 1.0, rng)
    o, _ = gdn_recurrent(*(inputs[n] for n in ("q", "k", "v", "g", "beta")), inputs["initial_state"])
    for j in range(4):
        h = j // 2
        single = [inputs["q"][:, h : h + 1], inputs["k"][:, h : h + 1], inputs["v"][:, j : j + 1]]
        o_j, _ = gdn_recurrent(*single, inputs["g"][:, j : j + 1], inputs["beta"][:, j : j + 1],
                               inputs["initial_state"][j : j + 1])
        assert np.array_equal(o_j[:, 0], o[:, j])


def test_chunk_prepare_inverse_is_unit_lower_triangular_and_exact():
    rng = np.random.default_rng(9)
    d = gdn_inputs(64, 1, 1, K_DIM, V_DIM, 1.0, rng, adversarial=ADVERSARIAL_KINDS)
    prep = chunk_prepare(d["k"][:, 0], d["v"][:, 0], d["g"][:, 0], d["beta"][:, 0])
    T, A = prep["T"], prep["A"]
    assert np.array_equal(np.triu(A), np.zeros_like(A))
    assert np.allclose(np.diag(T), 1.0) and np.allclose(np.triu(T, 1), 0.0)
    assert np.allclose((np.eye(64) + A) @ T, np.eye(64), atol=1e-10)


def test_ragged_padding_does_not_leak_into_outputs():
    # The same 40 tokens give the same outputs whether they are followed by more tokens or not.
    rng = np.random.default_rng(10)
    d = gdn_inputs(70, 2, 4, 8, 8, 0.1, rng)
    args = [d[n] for n in ("q", "k", "v", "g", "beta")]
    o_long, _, saved = gdn_chunked(*args, chunk=32, initial_state=d["initial_state"], checkpoints=(64,))
    o_short, S_short, _ = gdn_chunked(*(x[:40] for x in args), chunk=32, initial_state=d["initial_state"])
    assert_close(o_long[:40], o_short, 1e-12)
    _, S_rec = gdn_recurrent(*(x[:40] for x in args), initial_state=d["initial_state"])
    assert_close(S_rec, S_short, 1e-12)


# ---- the layer pieces ------------------------------------------------------------------------


def test_conv_matches_numpy_convolve():
    rng = np.random.default_rng(11)
    T, C = 23, 6
    x, w = rng.standard_normal((T, C)), rng.standard_normal((C, 4))
    y, new_state = causal_conv1d_silu(x, w)
    for c in range(C):
        # np.convolve flips the kernel; the last tap must land on the current token.
        pre = np.convolve(x[:, c], w[c, ::-1])[:T]
        assert np.allclose(y[:, c], pre / (1 + np.exp(-pre)), rtol=1e-13, atol=1e-14)
    assert np.array_equal(new_state, x[-3:])


@pytest.mark.parametrize("cuts", [(1, 2, 5, 9), (2,), (7, 8, 9, 10, 11)])
def test_conv_with_state_carried_equals_one_shot(cuts):
    rng = np.random.default_rng(12)
    T, C = 15, 5
    x, w = rng.standard_normal((T, C)), rng.standard_normal((C, 4))
    y_full, state_full = causal_conv1d_silu(x, w)
    pieces, state = [], None
    for a, b in zip((0,) + cuts, cuts + (T,)):
        y, state = causal_conv1d_silu(x[a:b], w, state)
        pieces.append(y)
    assert np.allclose(np.concatenate(pieces), y_full, rtol=1e-14, atol=1e-15)
    assert np.array_equal(state, state_full)


def test_gates_match_direct_formula_and_do_not_overflow():
    rng = np.random.default_rng(13)
    a, b = rng.standard_normal((9, 3)), rng.standard_normal((9, 3))
    A_log, dt_bias = rng.standard_normal(3), rng.standard_normal(3)
    g, beta = gates(a, b, A_log, dt_bias)
    assert np.allclose(g, -np.exp(A_log) * np.log1p(np.exp(a + dt_bias)), rtol=1e-14)
    assert np.allclose(beta, 1 / (1 + np.exp(-b)), rtol=1e-14)
    g_big, _ = gates(np.full((1, 1), 800.0), np.zeros((1, 1)), np.zeros(1), np.zeros(1))
    assert g_big[0, 0] == pytest.approx(-800.0)


def test_l2norm_matches_direct_formula():
    rng = np.random.default_rng(14)
    x = rng.standard_normal((4, 3, 10)) * 5
    out = l2norm(x)
    for idx in np.ndindex(4, 3):
        assert np.allclose(out[idx], x[idx] / np.sqrt(np.sum(x[idx] ** 2) + 1e-6), rtol=1e-14)
    assert np.array_equal(l2norm(np.zeros((2, 4))), np.zeros((2, 4)))


def test_gated_rmsnorm_matches_direct_formula():
    rng = np.random.default_rng(15)
    x, z, w = rng.standard_normal((5, 2, 8)), rng.standard_normal((5, 2, 8)), rng.standard_normal(8)
    out = gated_rmsnorm(x, z, w)
    for idx in np.ndindex(5, 2):
        row = x[idx]
        expected = w * row / np.sqrt(np.mean(row**2) + 1e-6) * z[idx] / (1 + np.exp(-z[idx]))
        assert np.allclose(out[idx], expected, rtol=1e-13)


def _layer_inputs(rng, T, H=2, HV=4, K=8, V=8):
    C = 2 * H * K + HV * V
    params = GdnLayerParams(
        num_qk_heads=H, num_v_heads=HV, key_head_dim=K, value_head_dim=V,
        conv_weight=rng.standard_normal((C, 4)) * 0.5, A_log=np.log(rng.uniform(0.05, 1, HV)),
        dt_bias=rng.standard_normal(HV), norm_weight=1 + 0.1 * rng.standard_normal(V),
    )
    data = dict(qkv=rng.standard_normal((T, C)), z=rng.standard_normal((T, HV * V)),
                a=rng.standard_normal((T, HV)), b=rng.standard_normal((T, HV)))
    return params, data


def test_layer_core_chunked_equals_recurrent_and_pieces_equal_one_shot():
    rng = np.random.default_rng(16)
    params, d = _layer_inputs(rng, 50)
    conv0 = rng.standard_normal((3, d["qkv"].shape[1]))
    state0 = 0.3 * rng.standard_normal((4, 8, 8))
    y_rec, c_rec, s_rec = gdn_layer_core(d["qkv"], d["z"], d["a"], d["b"], params, conv0, state0, None)
    y_chk, c_chk, s_chk = gdn_layer_core(d["qkv"], d["z"], d["a"], d["b"], params, conv0, state0, 16)
    assert y_rec.shape == (50, 32)
    assert_close(y_rec, y_chk, 1e-10)
    assert_close(s_rec, s_chk, 1e-10)
    assert np.array_equal(c_rec, c_chk)
    pieces, conv, state = [], conv0, state0
    for a, b in ((0, 1), (1, 3), (3, 20), (20, 50)):
        y, conv, state = gdn_layer_core(d["qkv"][a:b], d["z"][a:b], d["a"][a:b], d["b"][a:b],
                                        params, conv, state, 16)
        pieces.append(y)
    assert_close(y_rec, np.concatenate(pieces), 1e-10)
    assert_close(s_rec, state, 1e-10)


# ---- inputs and metrics ----------------------------------------------------------------------


def test_inputs_follow_the_spec_distributions():
    K = 16
    d = gdn_inputs(4000, 2, 4, K, 8, 1.0, np.random.default_rng(17))
    assert np.allclose(np.linalg.norm(d["q"], axis=-1), K**-0.5)
    assert np.allclose(np.linalg.norm(d["k"], axis=-1), 1.0)
    assert np.all(d["g"] <= 0) and np.all(d["g"] >= np.log(0.5) - 1e-12)  # logsigmoid(U[0,1)) / 1
    assert 0.08 < np.mean(d["g"] == 0) < 0.17
    assert np.all((d["beta"] >= 0.5) & (d["beta"] < 1 / (1 + np.exp(-1))))
    assert np.std(d["initial_state"]) > 0.1
    strong = gdn_inputs(100, 1, 1, K, 8, 0.01, np.random.default_rng(17))["g"]
    assert np.min(strong) < -60  # logsigmoid(U) / 0.01 reaches -69


def test_adversarial_inputs_are_adversarial():
    d = gdn_inputs(64, 1, 1, 16, 8, 1.0, np.random.default_rng(18), adversarial=ADVERSARIAL_KINDS)
    keys = d["k"][:, 0]
    assert np.min(keys @ keys.T) > 0.99
    assert np.all(d["beta"] > 0.999) and np.all(np.abs(d["g"]) < 1e-4)
    with pytest.raises(ValueError, match="unknown adversarial"):
        gdn_inputs(4, 1, 1, 4, 4, 1.0, np.random.default_rng(0), adversarial="nearly_parallel")


def test_inputs_are_deterministic_for_a_seed():
    a = gdn_inputs(10, 1, 2, 4, 4, 0.1, np.random.default_rng(3))
    b = gdn_inputs(10, 1, 2, 4, 4, 0.1, np.random.default_rng(3))
    assert all(np.array_equal(a[n], b[n]) for n in a)


def test_pcc_and_rel_rms():
    rng = np.random.default_rng(19)
    ref = rng.standard_normal((3, 50))
    assert pcc(ref, ref) == pytest.approx(1.0)
    assert pcc(ref, -2 * ref + 3) == pytest.approx(-1.0)
    assert pcc(ref, rng.standard_normal((3, 50))) < 0.5
    assert rel_rms(ref, ref * 1.01) == pytest.approx(0.01)
    assert rel_rms(ref, ref) == 0.0
    const = np.full(7, 2.0)
    assert pcc(const, const) == 1.0
    assert pcc(const, const + 1) == 0.0
    assert pcc(const, np.arange(7.0)) == 0.0
    assert pcc(np.arange(7.0), const) == 0.0
    broken = ref.copy()
    broken[0, 0] = np.nan
    assert pcc(ref, broken) == 0.0 and rel_rms(ref, broken) == float("inf")
    assert rel_rms(np.zeros(4), np.zeros(4)) == 0.0 and rel_rms(np.zeros(4), np.ones(4)) == float("inf")
    with pytest.raises(ValueError, match="elements"):
        pcc(np.zeros(3), np.zeros(4))
