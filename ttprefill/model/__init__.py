"""Model layer: config presets, HF-layout weights, and the hybrid stack.

stack: HybridStack runs one chunk (a ChunkContext) through every layer, its GDN and attention cores
through a TokenMixers object: ReferenceMixers (reference_model, K/V in the state), HostMixers
(host_mixers, K/V in host pages). On a device the whole model runs as programs instead:
device_stack.DeviceStack (weights, K/V pages and GDN states resident), one chunk per forward call.
config and weights import numpy only; the stack, the mixers and torch_ops need torch, so import
them by module (ttprefill.model.stack) where torch is available.
"""

from ttprefill.model.config import PRESETS, ModelConfig, from_hf_config, get_preset
from ttprefill.model.weights import load_weights, parameter_shapes, random_weights, save_safetensors

__all__ = [
    "PRESETS",
    "ModelConfig",
    "from_hf_config",
    "get_preset",
    "load_weights",
    "parameter_shapes",
    "random_weights",
    "save_safetensors",
]
