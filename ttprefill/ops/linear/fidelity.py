"""Math fidelity of each projection of a Qwen3.5 layer: the one home of the defaults.

Wormhole's matrix unit multiplies a 7-bit slice of in0 (the activation, in srcB) by a 5-bit slice of in1
(the weight, in srcA) per pass; LoFi is that one pass, HiFi2 adds the weight's next 5 bits, HiFi3 the
activation's next 4, HiFi4 both low slices (tt-isa-documentation WormholeB0 MatrixUnit / SrcASrcB; the
simulator's model is sim/src/numerics.cpp). Each pass costs one matrix-unit pass over the tile, so a
compute-bound projection at LoFi takes about half HiFi2's math time. What LoFi drops for a bfp8 weight is
its two lowest mantissa bits (a bfp8 value carries at most 7 significant bits, LoFi's weight slice 5); a
bfp4 weight (at most 3) loses nothing at LoFi.

Roles (LayerRunner.linear's second argument):
    mlp_gate_up    gate_proj and up_proj, one paired projection with its SwiGLU (ops/linear/swiglu.py; K = hidden)
    mlp_down       down_proj (K = intermediate, or its share on a mesh)
    gdn_in         the GDN in-projections in_proj_qkv, z, b, a (K = hidden)
    gdn_out        GDN out_proj (K = value heads x value dim, or its share on a mesh)
    attention_in   attention's fused q|gate, k, v (K = hidden)
    attention_out  attention o_proj (K = q heads x head dim, or its share on a mesh)
    lm_head        the LM head on the last token's tile row
The same roles name each projection's weight format (ops/linear/weight_formats.py, EngineOptions.weight_format).

Defaults: the attention projections at LoFi, every other projection at HiFi2. Chosen by the measured
accuracy (`scripts/fidelity_accuracy`, simulated numerics against fp64) and by what tt-metal ships:
  * one projection (64 tokens, realistic inputs, bfp8 weights; module ttprefill/bench/fidelity_accuracy.py):
    LoFi doubles the error of HiFi2 at every 9B K (4096, 12288 and the n300 shares 2048, 6144): rel RMS
    0.023-0.026 against 0.011-0.016 (PCC 0.99980-0.99985 against 0.99988-0.99994); HiFi4 gains under 0.001
    on HiFi2. bfp4 weights cost rel RMS 0.13 (PCC 0.991) at any fidelity.
  * end to end, the tiny model's last-token logits (150 tokens) against transformers in fp64, rel RMS: all
    HiFi2 0.0142, HiFi4 0.0127; LoFi on the attention projections 0.0147, on the MLP down 0.0182, on the MLP
    gate/up 0.0226, on the GDN in/out 0.0229, on the whole MLP 0.0277, everywhere 0.0390 (tests hold the
    device to 0.03). Only LoFi on the attention projections costs little (+0.0005; the others +0.004 to +0.009).
  * tt-metal's Qwen3.5 demo on Wormhole (models/demos/blackhole/qwen36/tt): the attention QKV and wo
    prefill matmuls at LoFi with bfp8 weights (tp_common.py, COMPUTE_LOFI_NO_FP32_ACC: "qkv 2048x4096x5120
    HiFi2 1007.8us pcc=0.99992 -> LoFi 887.3us pcc=0.99985", wo 0.99987 -> 0.99981, the simulator's
    0.99993 -> 0.99984 above); the GDN in/out projections stay HiFi2 (gdn/tp.py: LoFi measured and
    rejected, the error compounding in the recurrent state); the MLP runs LoFi with bfp4 gate/up and bfp8
    down weights and fp32 DST, no packer L1 accumulation in prefill (mlp.py; SiLU fused into the gate matmul's
    program config, the multiply by up a separate ttnn.mul, gate and up outputs in L1 at prefill chunk sizes),
    a trade tt-transformers also makes in its "performance" setting
    (model_config.py ModelOptimizations.performance: FF1/FF3 bfp4 LoFi) but not its default (bfp8, HiFi2)
    or "accuracy" setting.
LoFi on the whole MLP as well would cut 9B's modeled matmul time at 32k on an n300 from 2.34 to 1.90 s (timing
model 2.4, mesh timing 4, bfp8 collectives; `bench ttft --model qwen3.5-9b --mesh 1x2 --seq 32768 --timing-only`)
but doubles the end-to-end error (above): an option, `--matmul-fidelity mlp_gate_up=LoFi,mlp_down=LoFi`.
"""

from __future__ import annotations

from dataclasses import dataclass, fields, replace

from ttprefill.device.program import MathFidelity

ROLES = ("mlp_gate_up", "mlp_down", "gdn_in", "gdn_out", "attention_in", "attention_out", "lm_head")


def parse_role_spec(spec: str, value, kind: str, error: type[ValueError]):
    """A per-role setting's text: a bare value for every role, then role=value pairs ('LoFi',
    'bfp8,mlp_gate_up=bfp4', 'mlp_down=LoFi'). Returns (the bare value or None, {role: value}); `value` reads one
    value's text (raising `error` for a bad one), `kind` names a value in the messages. Shared by the projections'
    fidelities (here) and weight formats (weight_formats.py)."""
    parts = [part.strip() for part in spec.split(",")]
    base = None
    if "=" not in parts[0]:
        base, parts = value(parts[0]), parts[1:]
    changes = {}
    for part in parts:
        role, sep, name = part.partition("=")
        role = role.strip()
        if not sep or role not in ROLES:
            raise error(f"{part!r} in {spec!r}: write role={kind} with a role of {', '.join(ROLES)} (only the first "
                        f"part may be a bare {kind})")
        if role in changes:
            raise error(f"{role} is set twice in {spec!r}")
        changes[role] = value(name)
    return base, changes


class FidelitySpecError(ValueError):
    """A projection-fidelity setting that cannot be read; the message names the part and the fix."""


class PerRole:
    """A setting per projection role, one dataclass field per role of ROLES (ProjectionFidelity here, WeightFormats
    in weight_formats.py): what reading and making one has in common. `_error`: the setting's error type;
    `_name(value)`: a value's name on the command line."""

    _error: type[ValueError] = ValueError

    @classmethod
    def uniform(cls, value):
        """Every role at `value`."""
        return cls(**{role: value for role in ROLES})

    def of(self, role: str):
        if role not in ROLES:
            raise self._error(f"unknown projection role {role!r}; choose one of {', '.join(ROLES)}")
        return getattr(self, role)

    def as_dict(self) -> dict[str, str]:
        return {role: self._name(getattr(self, role)) for role in ROLES}


@dataclass(frozen=True)
class ProjectionFidelity(PerRole):
    mlp_gate_up: MathFidelity = MathFidelity.HiFi2
    mlp_down: MathFidelity = MathFidelity.HiFi2
    gdn_in: MathFidelity = MathFidelity.HiFi2
    gdn_out: MathFidelity = MathFidelity.HiFi2
    attention_in: MathFidelity = MathFidelity.LoFi
    attention_out: MathFidelity = MathFidelity.LoFi
    lm_head: MathFidelity = MathFidelity.HiFi2

    def __post_init__(self):
        for f in fields(self):
            value = getattr(self, f.name)
            if not isinstance(value, MathFidelity):
                raise FidelitySpecError(f"ProjectionFidelity.{f.name} must be a MathFidelity (LoFi, HiFi2, HiFi3, "
                                        f"HiFi4), got {value!r}")

    def describe(self) -> str:
        """Compact text that parse() reads back: one name when every role agrees."""
        values = {getattr(self, r) for r in ROLES}
        if len(values) == 1:
            return values.pop().name
        return ",".join(f"{r}={getattr(self, r).name}" for r in ROLES)

    _error = FidelitySpecError

    @staticmethod
    def _name(value: MathFidelity) -> str:
        return value.name

    @classmethod
    def parse(cls, spec: str, base: "ProjectionFidelity | None" = None) -> "ProjectionFidelity":
        """'LoFi' (every role), 'role=Fidelity,...' over `base` (the defaults when None), e.g.
        'mlp_gate_up=LoFi,gdn_out=HiFi4', or both ('LoFi,mlp_down=HiFi2')."""
        base = base if base is not None else cls()
        spec = spec.strip()
        if not spec:
            raise FidelitySpecError("empty projection-fidelity setting: give a fidelity (LoFi, HiFi2, HiFi3, HiFi4) "
                                    f"or role=fidelity pairs with roles {', '.join(ROLES)}")
        uniform, changes = parse_role_spec(spec, _fidelity, "fidelity", FidelitySpecError)
        if uniform is not None:
            base = cls.uniform(uniform)
        return replace(base, **changes)


def _fidelity(name: str) -> MathFidelity:
    name = name.strip()
    if name not in MathFidelity.__members__:
        raise FidelitySpecError(f"unknown math fidelity {name!r}; choose one of {', '.join(MathFidelity.__members__)}")
    return MathFidelity[name]
