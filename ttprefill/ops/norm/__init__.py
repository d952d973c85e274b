"""RMSNorms of the layer stack on the device, our own kernels (kernels/norm/rmsnorm_*.cpp).

    zero-centred   y = x * rsqrt(mean(x^2) + eps) * (1 + w)      decoder norms, final norm, q/k norms
    gated          y = w * (x * rsqrt(mean(x^2) + eps)) * silu(z)   the GDN output norm

Both over groups of tiles of a row: one group spanning the row (decoder norms: hidden 4096), or one
group per head (q/k norms: head_dim 256; gated: value_dim 128), groups possibly strided in x (q_proj's
output interleaves each head's query and gate, so q_norm reads every other group) and written back
to back in y.

Why our kernel and not tt-metal's rmsnorm: ttnn's rms_norm normalises whole rows against the gamma it
is given (1 + w would be prepared on the host, which is fine), but per-head norms would need the
tensor relaid out as [T * heads, D] tiles first, q_norm would need q_proj's query halves copied out,
and the gated form would be two more programs (silu, multiply). One kernel does all three with the
group layout the projections produce, in fp32 (tt-metal's rmsnorm mirrors for conformance live in
ops/upstream/normalization.py).

    shapes.py    NormShape: groups, strides, mode; the validation
    planner.py   units (token tile row x group) over the cores; buffering under the L1 budget
    program.py   the Program
    norm.py      NormWeight (resident weight rows) and rms_norm / gated_rms_norm on DeviceTensors
    add_norm.py  add_rms_norm: a residual add and the decoder norm of its result in one program
"""

from .add_norm import add_rms_norm
from .norm import NormWeight, gated_rms_norm, rms_norm
from .shapes import NormShape, NormShapeError

__all__ = ["NormShape", "NormShapeError", "NormWeight", "add_rms_norm", "gated_rms_norm", "rms_norm"]
