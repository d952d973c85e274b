"""Model layer: config presets, HF-layout weights, and the torch reference of the whole stack.

config and weights import numpy only; reference_model and torch_ops need torch, so import
them by module (ttprefill.model.reference_model) where torch is available.
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
