"""Plain fp64 numpy references for the hybrid layer stack, written from shared/GDN.md.

These are the yardsticks every kernel test and the engine test measure against. They are
slow on purpose: loops and small matrices that read like the spec, no fusion, no tricks.
They import numpy only, so the device/ops env without torch can use them too.

    gdn       - the Gated DeltaNet scan (recurrent and chunked forms) and the layer pieces
    attention - causal GQA softmax attention with an optional sigmoid output gate
    inputs    - the test-input distributions of GDN.md, including adversarial variants
    metrics   - pcc and rel_rms, the two accuracy numbers every report carries
"""

from ttprefill.reference.attention import causal_attention
from ttprefill.reference.gdn import (
    GdnLayerParams,
    causal_conv1d_silu,
    chunk_prepare,
    gated_rmsnorm,
    gates,
    gdn_chunked,
    gdn_layer_core,
    gdn_recurrent,
    l2norm,
)
from ttprefill.reference.inputs import ADVERSARIAL_KINDS, gdn_inputs
from ttprefill.reference.metrics import pcc, rel_rms

__all__ = [
    "ADVERSARIAL_KINDS",
    "GdnLayerParams",
    "causal_attention",
    "causal_conv1d_silu",
    "chunk_prepare",
    "gated_rmsnorm",
    "gates",
    "gdn_chunked",
    "gdn_inputs",
    "gdn_layer_core",
    "gdn_recurrent",
    "l2norm",
    "pcc",
    "rel_rms",
]
