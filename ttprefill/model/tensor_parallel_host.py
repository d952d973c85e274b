"""The tensor-parallel split run on the host: N torch "chips", each a stack over its shard of the weights.

Each chip is a HybridStack over `plan.chip_config(chip)` and `plan.shard(weights, chip)` with the torch mixer
cores, so a chip's per-block math is the stack's own; this driver does what the mesh does between blocks:

    x = embed(tokens)                          host gather from the full table, the same rows to every chip
    per layer and block (mixer, then MLP):
        scheme all_reduce:     y_c = block_c(norm(x)) on every chip; x = x + sum_c y_c          (all-reduce)
        scheme reduce_scatter: chip c holds rows R_c of x; h = concat_c norm(x[R_c])            (all-gather)
                               y_c = block_c(h); x[R_c] += (sum_c' y_c')[R_c]                    (reduce-scatter)
    logits = concat_c lm_head_c(norm(x))       (all-gather of the vocabulary shards)

The sums run in chip order, as the simulated mesh's all-reduce does. What each chip keeps between chunks
(its GDN conv and recurrent states, its attention K/V) is a ModelState of its chip config.
"""

from __future__ import annotations

from functools import partial

import numpy as np
import torch

from ttprefill.model import torch_ops
from ttprefill.model.reference_model import ReferenceMixers
from ttprefill.model.stack import ChunkContext, HybridStack, ModelState
from ttprefill.model.tensor_parallel import TensorParallelError, TensorParallelPlan
from ttprefill.model.weights import layer_prefix
from ttprefill.ops.gdn import DEFAULT_CHUNK


class TensorParallelHostStack:
    """The stack split over `plan.tp` host chips; `forward` runs one chunk and updates every chip's state."""

    def __init__(self, plan: TensorParallelPlan, weights: dict[str, np.ndarray], dtype: torch.dtype = torch.float64,
                 gdn_chunk: int | None = DEFAULT_CHUNK):
        self.plan = plan
        self.config = plan.config
        self.dtype = dtype
        scan = torch_ops.gdn_scan_recurrent if gdn_chunk is None else partial(torch_ops.gdn_scan_chunked, chunk=gdn_chunk)
        self.embed = torch.as_tensor(np.asarray(weights["model.embed_tokens.weight"]), dtype=dtype)
        self.chips = []
        for chip in range(plan.tp):
            chip_config = plan.chip_config(chip)
            mixers = ReferenceMixers(chip_config, scan, torch_ops.causal_attention)
            self.chips.append(HybridStack(chip_config, plan.shard(weights, chip), mixers, dtype))

    def new_states(self) -> list[ModelState]:
        return [chip.new_state() for chip in self.chips]

    def _rows(self, tokens: int) -> list[slice]:
        n = self.plan.tp
        if tokens % n:
            raise TensorParallelError(f"the reduce_scatter scheme splits a chunk's {tokens} tokens over {n} chips: "
                                      f"use chunks of a multiple of {n} tokens or the all_reduce scheme")
        per = tokens // n
        return [slice(c * per, (c + 1) * per) for c in range(n)]

    @torch.no_grad()
    def forward(self, tokens, states: list[ModelState], start: int, last_only: bool = False) -> torch.Tensor:
        """Run tokens (1-D) at positions start.. on every chip; returns the gathered logits [T, vocab]
        (or [vocab] for the last token when last_only)."""
        cfg = self.config
        tokens = torch.as_tensor(np.asarray(tokens), dtype=torch.long).reshape(-1)
        if len(states) != len(self.chips):
            raise TensorParallelError(f"{len(states)} states for {len(self.chips)} chips: one ModelState a chip")
        if tokens.numel() == 0 or int(tokens.min()) < 0 or int(tokens.max()) >= cfg.vocab_size:
            raise ValueError(f"token ids must be a non-empty run in [0, {cfg.vocab_size})")
        if any(s.num_tokens != start for s in states):
            raise ValueError(f"every chip's state must hold {start} tokens; they hold {[s.num_tokens for s in states]}")
        context = ChunkContext(start, int(tokens.shape[0]))
        x = self.embed[tokens]
        for i in range(cfg.num_layers):
            p = layer_prefix(i)
            x = self._block(x, p + "input_layernorm.weight",
                            lambda chip, h, c=None: self._mixer(chip, i, h, states[c], context))
            x = self._block(x, p + "post_attention_layernorm.weight", lambda chip, h, c=None: chip._mlp(i, h))
        for s in states:
            s.num_tokens += context.num_tokens
        if last_only:
            x = x[-1:]
        logits = torch.cat([chip._norm(x, "model.norm.weight") @ chip.w["lm_head.weight"].T for chip in self.chips],
                           dim=-1)
        return logits[0] if last_only else logits

    def _mixer(self, chip: HybridStack, layer: int, h, state: ModelState, context: ChunkContext):
        if self.config.is_attention_layer(layer):
            return chip._attention_layer(layer, h, state, context)
        return chip._gdn_layer(layer, h, state, context)

    def _block(self, x, norm_name: str, block) -> torch.Tensor:
        """x + the block's output summed over chips, under the plan's collective scheme."""
        if self.plan.scheme == "all_reduce":
            partials = [block(chip, chip._norm(x, norm_name), c) for c, chip in enumerate(self.chips)]
            return x + _sum_in_chip_order(partials)
        rows = self._rows(x.shape[0])
        # each chip normalises its own rows; the all-gather hands every chip all of them
        h = torch.cat([chip._norm(x[r], norm_name) for chip, r in zip(self.chips, rows)], dim=0)
        total = _sum_in_chip_order([block(chip, h, c) for c, chip in enumerate(self.chips)])
        # reduce-scatter: chip c adds the sum's rows R_c to its rows of the residual stream
        return torch.cat([x[r] + total[r] for r in rows], dim=0)


def _sum_in_chip_order(parts: list[torch.Tensor]) -> torch.Tensor:
    total = parts[0]
    for part in parts[1:]:
        total = total + part
    return total
