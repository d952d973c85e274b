"""Flash attention's limits, circular-buffer indices, runtime-arg layout, config and errors."""

from __future__ import annotations

from dataclasses import dataclass, field

from ttprefill.device.program import ComputeConfig, DataFormat, L1OverflowError, MathFidelity
from ttprefill.hw import MAX_RUNTIME_ARGS, TILE, compute_cores

SUPPORTED_HEAD_DIMS = (64, 128, 256)
PAGE_FORMATS = (DataFormat.Float16_b, DataFormat.Bfp8_b)

# Circular-buffer indices; the kernels name the same numbers in flash_attention_common.h.
CB_Q, CB_K, CB_V, CB_MASK, CB_ONES, CB_GATE, CB_TABLE, CB_SPREAD = 0, 1, 2, 3, 4, 5, 6, 7
CB_OUT, CB_PSUM = 16, 17
CB_M_NEW, CB_BMAX, CB_L_INV, CB_O_TMP, CB_S, CB_P, CB_O, CB_M, CB_L, CB_SHIFT, CB_L_NEW, CB_ALPHA = (
    20, 21, 22, 23, 24, 25, 26, 27, 28, 29, 30, 31)
NUM_MASK_TILES = 3
# kv_cache_write's CBs (kv_write_*.cpp).
CB_KV_NEW, CB_KV_KEEP, CB_KV_PAGE = 0, 1, 16

# Runtime args before the list of units, per kernel (see the kernels' header comments); the reader and
# compute kernels take two per unit (the unit, then the key tiles streamed for it).
READER_FIXED_ARGS, COMPUTE_FIXED_ARGS, WRITER_FIXED_ARGS = 19, 7, 7
MAX_UNITS_PER_CORE = (MAX_RUNTIME_ARGS - max(READER_FIXED_ARGS, COMPUTE_FIXED_ARGS, WRITER_FIXED_ARGS)) // 2
# K/V sharing (kernels/flash_attention/kv_share.h): the cores of a group are a segment of one grid row, so
# the group sizes divide the row; the two semaphores of the hand-shake.
KV_SHARE_CHOICES = (1, 2, 4, 8)
SEM_KV_READY, SEM_KV_VALID = 0, 1
# A core's part in its group, as the reader takes it (kv_share.h kAlone, kSender, kReceiver).
KV_SHARE_ALONE, KV_SHARE_SENDER, KV_SHARE_RECEIVER = 0, 1, 2


# ------------------------------------------------------------------------------------------ errors


class FlashAttentionError(ValueError):
    """A flash-attention call that cannot run as asked; raised before anything is dispatched."""


class HeadCountError(FlashAttentionError):
    pass


class HeadDimError(FlashAttentionError):
    pass


class ShapeError(FlashAttentionError):
    pass


class PageTableError(FlashAttentionError):
    pass


class CacheCapacityError(FlashAttentionError):
    pass


class L1BudgetError(FlashAttentionError, L1OverflowError):
    """The circular buffers for the chosen block sizes do not fit a core's L1."""


# ------------------------------------------------------------------------------------------ config


@dataclass(frozen=True)
class FlashAttentionConfig:
    """Knobs of the attention program. None means: chosen automatically."""

    k_block_tiles: int | None = None  # Bk: key tiles per streamed K/V block
    q_block_tiles: int | None = None  # Bq: query tile-rows per head in a work unit
    heads_per_unit: int | None = None  # query heads of one GQA group in a work unit (divides the group)
    # Cores that share one read of each K/V block (one of KV_SHARE_CHOICES; 1: every core reads its own).
    kv_share_cores: int | None = None
    max_cores: int = field(default_factory=compute_cores)  # the compute grid's (hw.compute_sub_device)
    math_fidelity: MathFidelity = MathFidelity.HiFi2
    fp32_dest_acc: bool = True
    exp_approx: bool = True  # the SFPU's fast exp, as tt-metal's SDPA uses (the simulator computes exp exactly)
    scores_format: DataFormat = DataFormat.Float32
    # Lazy rescaling: a key block is scored against the row's current shift m (the max when it was last
    # set) and kept while no row's block sum of probabilities exceeds e^this; otherwise m moves to the new
    # max and O, l are rescaled. Larger: fewer rescales, larger (still exact in bf16/fp32) probabilities.
    lazy_rescale_nats: float = 20.0

    def compute_config(self) -> ComputeConfig:
        return ComputeConfig(math_fidelity=self.math_fidelity, fp32_dest_acc_en=self.fp32_dest_acc,
                             math_approx_mode=self.exp_approx)


DEFAULT_K_BLOCK_TILES = 8
# The compute kernel's fp32 CBs it reads only by copy_tile (the rescaled output chunk, the running row
# sum, the shift and the rescale factor): in UnpackToDestFp32 mode they reach fp32 DST exactly instead
# of as TF32. cb_o and cb_s are FPU operands too, which that mode does not allow (the simulator refuses it).
COPY_ONLY_FP32_CBS = (23, 28, 29, 31)
# e^30 ~ 1e13: probabilities that large still leave fp32 row sums over a million keys far from overflow.
MAX_LAZY_RESCALE_NATS = 30.0
