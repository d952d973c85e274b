"""ttprefill: prefill of hybrid Gated-DeltaNet / attention models on Tenstorrent Wormhole."""

__version__ = "0.1.0"
