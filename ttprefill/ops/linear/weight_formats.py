"""The tile format of each projection's resident weight (EngineOptions.weight_format): the one home of its names.

The roles are the fidelity roles (ops/linear/fidelity.py ROLES: mlp_gate_up, mlp_down, gdn_in, gdn_out,
attention_in, attention_out, lm_head), so a projection's weight format and its math fidelity are set by the same
name. The formats, by their command-line names:

    bf16   Float16_b tiles, 2,048 bytes a 32 x 32 tile
    bfp8   Bfp8_b: one shared 8-bit exponent per 16 values and a sign + 7-bit mantissa byte each, 1,088 bytes
    bfp4   Bfp4_b: the same 64 exponents and a sign + 3-bit mantissa nibble each, 576 bytes

A setting is one format for every role ("bfp8") or a base with per-role changes ("bfp8,mlp_gate_up=bfp4"); a
setting that names only roles ("mlp_gate_up=bfp4") changes the defaults (bfp8 everywhere). bfp4 is taken by
every projection: the dense matmul and the SwiGLU read their weight through CBs whose page is the format's tile
(the planners size L1 from DataFormat.tile_bytes) and the unpacker turns Bfp4_b into srcA's operand like Bfp8_b.
Its accuracy and time are the README's (bfp4 gate/up); tt-metal's Qwen3.5 demo runs its MLP at LoFi with bfp4
gate/up and bfp8 down weights (ops/linear/fidelity.py). Norm weights, GDN vectors and RoPE tables are never
block formats (device_stack keeps them bf16 / fp32).
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, fields, replace

from ttprefill.device.program import DataFormat
from ttprefill.ops.linear.fidelity import ROLES, PerRole, parse_role_spec

FORMATS = {"bf16": DataFormat.Float16_b, "bfp8": DataFormat.Bfp8_b, "bfp4": DataFormat.Bfp4_b}
DEFAULT_FORMAT = "bfp8"


class WeightFormatError(ValueError):
    """A weight-format setting that cannot be read; the message names the part and the fix."""


def format_name(fmt: DataFormat) -> str:
    """The command line's name of a weight format (bf16, bfp8, bfp4)."""
    for name, value in FORMATS.items():
        if value == fmt:
            return name
    raise WeightFormatError(f"{fmt!r} is not a weight format; the weights take {', '.join(FORMATS)}")


def _format(name: str, spec: str) -> DataFormat:
    name = name.strip()
    if name not in FORMATS:
        raise WeightFormatError(f"unknown weight format {name!r} in {spec!r}; choose one of {', '.join(FORMATS)}")
    return FORMATS[name]


@dataclass(frozen=True)
class WeightFormats(PerRole):
    mlp_gate_up: DataFormat = FORMATS[DEFAULT_FORMAT]
    mlp_down: DataFormat = FORMATS[DEFAULT_FORMAT]
    gdn_in: DataFormat = FORMATS[DEFAULT_FORMAT]
    gdn_out: DataFormat = FORMATS[DEFAULT_FORMAT]
    attention_in: DataFormat = FORMATS[DEFAULT_FORMAT]
    attention_out: DataFormat = FORMATS[DEFAULT_FORMAT]
    lm_head: DataFormat = FORMATS[DEFAULT_FORMAT]

    def __post_init__(self):
        assert tuple(f.name for f in fields(self)) == ROLES, "WeightFormats' fields are fidelity.ROLES"
        for role in ROLES:
            value = getattr(self, role)
            if value not in FORMATS.values():
                raise WeightFormatError(f"WeightFormats.{role} must be one of "
                                        f"{', '.join(f.name for f in FORMATS.values())}, got {value!r}")

    def describe(self) -> str:
        """Text parse() reads back: one name when every role agrees, else the most common format and the others."""
        names = {role: format_name(getattr(self, role)) for role in ROLES}
        counts = Counter(names.values())
        base = max(FORMATS, key=lambda n: (counts[n], n == DEFAULT_FORMAT))
        return ",".join([base] + [f"{role}={name}" for role, name in names.items() if name != base])

    _error = WeightFormatError
    _name = staticmethod(format_name)

    @classmethod
    def parse(cls, spec: "str | WeightFormats") -> "WeightFormats":
        """'bfp8' (every role), 'bfp8,mlp_gate_up=bfp4' (a base, then roles), or 'mlp_gate_up=bfp4' (over the
        defaults)."""
        if isinstance(spec, WeightFormats):
            return spec
        if not isinstance(spec, str) or not spec.strip():
            raise WeightFormatError(f"weight format {spec!r}: give a format ({', '.join(FORMATS)}) for every "
                                    f"matrix, optionally followed by role=format pairs (roles {', '.join(ROLES)}), "
                                    "e.g. bfp8,mlp_gate_up=bfp4")
        uniform, changes = parse_role_spec(spec, lambda name: _format(name, spec), "format", WeightFormatError)
        base = cls() if uniform is None else cls.uniform(uniform)
        return replace(base, **changes)
