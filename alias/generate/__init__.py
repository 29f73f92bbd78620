"""Generation: the paper's prompts and durable batch clients for Anthropic and OpenAI.

``prompts``   the prompts of Appendix A (frontier models) and Appendix E (fine-tuned)
``batches``   ``run_batch`` / ``load_results`` / ``resolve_unconfirmed``
``backends``  the two SDK backends (wire formats documented there)
``ledger``    the SQLite ledger that makes a run resumable
``types``     ``SampleRequest``, ``SampleResult``, ``custom_id_for`` and the errors
``local``     ``generate_local`` (transformers, optional LoRA adapter); ``tiny`` a tiny model
``replay``    released outputs (JSONL/Parquet) -> samples table + errors with line numbers
``stage``     the DVC stages ``generate@KEY``, ``tiny_model`` and ``grade``
``fixture``   ``python -m alias.generate.fixture``: the committed replay fixture
"""

from .batches import load_results, resolve_unconfirmed, run_batch
from .prompts import PROMPT_VERSION, build_prompt
from .types import (
    BatchError,
    BatchFailed,
    LedgerBusy,
    LedgerConflict,
    MissingCredentials,
    PollTimeout,
    SampleRequest,
    SampleResult,
    UnconfirmedSubmission,
    custom_id_for,
)

__all__ = [
    "PROMPT_VERSION",
    "build_prompt",
    "run_batch",
    "load_results",
    "resolve_unconfirmed",
    "SampleRequest",
    "SampleResult",
    "custom_id_for",
    "BatchError",
    "BatchFailed",
    "LedgerBusy",
    "LedgerConflict",
    "MissingCredentials",
    "PollTimeout",
    "UnconfirmedSubmission",
]
