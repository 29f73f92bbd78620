"""Inspect's mock model without network (README "Using ALIAS from Inspect", issue 34).

``inspect eval ... --model mockllm/model`` fills in the token usage of every mock answer by
counting tokens with tiktoken's ``o200k_base`` file, which tiktoken downloads on first use.
With no network and no copy in ``TIKTOKEN_CACHE_DIR`` every sample then errors before it
is scored. :func:`mock_counts_offline` lets the mock model, and no other, estimate the count
from the text's length where the file cannot be had; real providers report their own usage.
"""

from __future__ import annotations

#: characters per token of the estimate (tiktoken's encodings average about 4 on English)
CHARS_PER_TOKEN = 4


def estimate_tokens(text: str) -> int:
    """Tokens of ``text`` estimated from its length (at least 1), with the 10% margin that
    Inspect adds to its own tiktoken count."""
    return max(1, int(len(text) / CHARS_PER_TOKEN * 1.1))


def mock_counts_offline() -> bool:
    """Make Inspect's ``MockLLM.count_text_tokens`` fall back to :func:`estimate_tokens`
    where tiktoken cannot load its encoding (an ``OSError``: no network, no cached file).
    Idempotent; returns False where this Inspect has no such provider (nothing changed)."""
    try:
        from inspect_ai.model._providers.mockllm import MockLLM
    except ImportError:
        return False
    if getattr(MockLLM, "_alias_offline_counts", False):
        return True
    counted = MockLLM.count_text_tokens

    async def count_text_tokens(self, text: str) -> int:
        try:
            return await counted(self, text)
        except OSError:  # requests' ConnectionError included: the download failed
            return estimate_tokens(text)

    MockLLM.count_text_tokens = count_text_tokens
    MockLLM._alias_offline_counts = True
    return True
