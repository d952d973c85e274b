"""Test inputs for the GDN scan, drawn as shared/GDN.md prescribes.

Normal inputs follow the published GDN tests: g = logsigmoid(U[0,1)) / s, with about one gate
in eight set to exactly 0 (no decay), beta = sigmoid(U[0,1)), q and k L2-normalised, v standard
normal, and a non-zero initial state.

Adversarial variants stress the (I + A)^-1 step of the chunked form:
    parallel_keys - every key of a head is one shared direction plus 1e-3 noise, so the
                    k_i . k_j in A are all close to 1;
    beta_one      - beta within 1e-3 of 1 (full-strength writes);
    g_zero        - |g| below 1e-4 (almost no decay, so nothing inside a chunk is damped).
They can be combined: adversarial=("parallel_keys", "beta_one", "g_zero") is the worst case.
"""

from __future__ import annotations

import numpy as np

ADVERSARIAL_KINDS = ("parallel_keys", "beta_one", "g_zero")

ZERO_GATE_FRACTION = 1 / 8
INITIAL_STATE_STD = 0.5


def _normalise_rows(x):
    return x / np.linalg.norm(x, axis=-1, keepdims=True)


def _log_sigmoid(x):
    return -np.logaddexp(0.0, -x)


def gdn_inputs(T, H, HV, K, V, scale_s, rng: np.random.Generator, adversarial=None):
    """Draw one set of scan inputs.

    scale_s is the s of g = logsigmoid(U) / s (GDN.md uses 0.01, 0.1, 1, 10: small s means
    strong decay). adversarial is None, one name from ADVERSARIAL_KINDS, or a tuple of names.

    Returns a dict of fp64 arrays:
        q [T, H, K]   L2-normalised and multiplied by K**-0.5, ready for the scan
        k [T, H, K]   L2-normalised
        v [T, HV, V], g [T, HV], beta [T, HV], initial_state [HV, K, V]
    """
    if HV % H != 0:
        raise ValueError(f"HV ({HV}) must be a multiple of H ({H})")
    if adversarial is None:
        kinds = ()
    elif isinstance(adversarial, str):
        kinds = (adversarial,)
    else:
        kinds = tuple(adversarial)
    unknown = [kind for kind in kinds if kind not in ADVERSARIAL_KINDS]
    if unknown:
        raise ValueError(f"unknown adversarial kind(s) {unknown}; choose from {ADVERSARIAL_KINDS}")

    q = _normalise_rows(rng.standard_normal((T, H, K)))
    if "parallel_keys" in kinds:
        shared = rng.standard_normal((1, H, K))
        k = _normalise_rows(shared + 1e-3 * rng.standard_normal((T, H, K)))
    else:
        k = _normalise_rows(rng.standard_normal((T, H, K)))
    v = rng.standard_normal((T, HV, V))

    if "g_zero" in kinds:
        g = -1e-4 * rng.random((T, HV))
    else:
        g = _log_sigmoid(rng.random((T, HV))) / scale_s
        g[rng.random((T, HV)) < ZERO_GATE_FRACTION] = 0.0

    if "beta_one" in kinds:
        beta = 1.0 - 1e-3 * rng.random((T, HV))
    else:
        beta = 1.0 / (1.0 + np.exp(-rng.random((T, HV))))

    initial_state = INITIAL_STATE_STD * rng.standard_normal((HV, K, V))
    return {
        "q": q * K**-0.5,
        "k": k,
        "v": v,
        "g": g,
        "beta": beta,
        "initial_state": initial_state,
    }
