"""Built-in workloads: prompts that look like serving traffic, deterministic from a seed."""

from __future__ import annotations

import numpy as np


def multi_turn_chat(vocab_size: int, *, users: int = 3, turns: int = 2, system_tokens: int = 384,
                    user_tokens: int = 96, reply_tokens: int = 64, seed: int = 0) -> list[list[int]]:
    """Requests of several users sharing one system prompt; each turn resends the whole conversation
    (system prompt, earlier turns and replies, new message), as chat serving does. Returned in
    arrival order: turn by turn, users interleaved."""
    rng = np.random.default_rng(seed)
    system = rng.integers(0, vocab_size, system_tokens).tolist()
    history = [list(system) for _ in range(users)]
    requests = []
    for _turn in range(turns):
        for u in range(users):
            history[u] += rng.integers(0, vocab_size, user_tokens).tolist()
            requests.append(list(history[u]))
            history[u] += rng.integers(0, vocab_size, reply_tokens).tolist()  # the model's reply
    return requests


def shared_prefix(vocab_size: int, *, requests: int, prompt_tokens: int, shared_fraction: float,
                  seed: int = 0) -> list[list[int]]:
    """Prompts whose first shared_fraction of tokens are the same (e.g. a long document + questions)."""
    rng = np.random.default_rng(seed)
    shared = rng.integers(0, vocab_size, int(prompt_tokens * shared_fraction)).tolist()
    return [shared + rng.integers(0, vocab_size, prompt_tokens - len(shared)).tolist() for _ in range(requests)]
