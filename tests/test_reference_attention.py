"""The fp64 causal attention reference against a naive per-query loop and its own properties."""

import math

import numpy as np
import pytest

from ttprefill.reference import causal_attention


def naive_attention(q, k, v, p0, scale):
    """One query, one head at a time, softmax written out term by term."""
    Sq, Hq, D = q.shape
    Hkv = k.shape[1]
    out = np.zeros((Sq, Hq, v.shape[2]))
    for i in range(Sq):
        for h in range(Hq):
            kv = h // (Hq // Hkv)
            visible = range(p0 + i + 1)
            scores = [scale * sum(q[i, h, d] * k[j, kv, d] for d in range(D)) for j in visible]
            top = max(scores)
            exps = [math.exp(s - top) for s in scores]
            total = sum(exps)
            for j, e in zip(visible, exps):
                out[i, h] += (e / total) * v[j, kv]
    return out


@pytest.mark.parametrize("heads", [(1, 1), (4, 2), (6, 1)], ids=["MHA", "GQA2", "MQA"])
@pytest.mark.parametrize("Sq,p0", [(1, 0), (9, 0), (5, 12), (1, 30)])
def test_matches_naive_loop(heads, Sq, p0):
    Hq, Hkv = heads
    D = 8
    rng = np.random.default_rng(Sq * 100 + p0 + Hq)
    q = rng.standard_normal((Sq, Hq, D))
    k = rng.standard_normal((p0 + Sq, Hkv, D))
    v = rng.standard_normal((p0 + Sq, Hkv, D))
    out = causal_attention(q, k, v, p0)
    assert out.shape == (Sq, Hq, D)
    assert np.allclose(out, naive_attention(q, k, v, p0, D**-0.5), rtol=1e-12, atol=1e-13)


def test_custom_scale_matches_naive_loop():
    rng = np.random.default_rng(1)
    q, k, v = rng.standard_normal((4, 2, 4)), rng.standard_normal((7, 1, 4)), rng.standard_normal((7, 1, 4))
    assert np.allclose(causal_attention(q, k, v, 3, scale=0.9), naive_attention(q, k, v, 3, 0.9), rtol=1e-12)


def test_suffix_with_p0_equals_slice_of_full_causal():
    rng = np.random.default_rng(2)
    S, Hq, Hkv, D = 40, 4, 2, 16
    q, k, v = rng.standard_normal((S, Hq, D)), rng.standard_normal((S, Hkv, D)), rng.standard_normal((S, Hkv, D))
    full = causal_attention(q, k, v, 0)
    for p0 in (1, 17, 39):
        assert np.allclose(causal_attention(q[p0:], k, v, p0), full[p0:], rtol=1e-13, atol=1e-14)


def test_first_query_sees_only_the_first_key():
    rng = np.random.default_rng(3)
    q, k, v = rng.standard_normal((5, 2, 4)), rng.standard_normal((5, 2, 4)), rng.standard_normal((5, 2, 4))
    assert np.allclose(causal_attention(q, k, v, 0)[0], v[0])


def test_gate_multiplies_by_sigmoid():
    rng = np.random.default_rng(4)
    q, k, v = rng.standard_normal((6, 4, 8)), rng.standard_normal((6, 2, 8)), rng.standard_normal((6, 2, 8))
    gate = rng.standard_normal((6, 4, 8)) * 3
    plain = causal_attention(q, k, v, 0)
    assert np.allclose(causal_attention(q, k, v, 0, gate=gate), plain / (1 + np.exp(-gate)), rtol=1e-14)


def test_huge_scores_are_stable_and_pick_the_best_key():
    # Scores of order 1e4 would overflow a naive exp: the result must be the argmax key's value.
    rng = np.random.default_rng(5)
    k = rng.standard_normal((10, 1, 8))
    v = rng.standard_normal((10, 1, 8))
    q = 1e4 * k[[3]]  # the query at position 9 aligns with key 3
    out = causal_attention(q, k, v, 9)
    best = np.argmax([np.dot(q[0, 0], k[j, 0]) for j in range(10)])
    assert np.all(np.isfinite(out)) and np.allclose(out[0, 0], v[best, 0])


def test_shape_errors_are_clear():
    q = np.zeros((3, 2, 4))
    with pytest.raises(ValueError, match="Skv == p0 \\+ Sq"):
        causal_attention(q, np.zeros((4, 1, 4)), np.zeros((4, 1, 4)), 0)
    with pytest.raises(ValueError, match="multiple of kv heads"):
        causal_attention(np.zeros((3, 3, 4)), np.zeros((3, 2, 4)), np.zeros((3, 2, 4)), 0)
