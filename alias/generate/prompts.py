"""The generation prompts of the ALIAS paper, verbatim.

Two prompts exist:

``frontier`` (paper, Appendix A)
    The instruction given to Claude Opus 4.8 (Anthropic Message Batches API) and
    GPT-5 (OpenAI Batch API), "with the description in place of {description}".
    The appendix prints it as one paragraph: the description follows
    ``System description:`` after one space, and nothing follows the description.

``finetuned`` (paper, Appendix E)
    The prompt the LoRA models are trained and tested with: "Generate a TLA+
    specification for the following system:", followed by the description and the
    line "TLA+ Specification:". Each part is its own line (joined with ``\\n``);
    the prompt ends with ``TLA+ Specification:`` and no newline, so training code
    joins prompt and reference specification with one ``\\n``.

The description is the only slot in either prompt: neither appendix inserts the
module name, the configuration or any required identifier. ``build_prompt`` accepts
``module_name`` so that callers can pass a task row uniformly, but it does not
change the text (see its docstring).

``PROMPT_VERSION`` names this exact text. Store it with every sample; change it
whenever a template changes, because the batch ledger refuses to mix two prompt
texts under one sample key.
"""

from __future__ import annotations

import hashlib
from typing import Literal

__all__ = [
    "PROMPT_VERSION",
    "PromptKind",
    "FRONTIER_PREFIX",
    "FINETUNED_PREFIX",
    "FINETUNED_SUFFIX",
    "TEMPLATES",
    "build_prompt",
    "has_description",
    "template_sha256",
]

PROMPT_VERSION = "alias-paper-A-E-v1"

PromptKind = Literal["frontier", "finetuned"]

# Appendix A, word for word; {description} is the final part of the text.
FRONTIER_PREFIX = (
    "You are a TLA+ specification engineer. You will receive a natural language "
    "description of a system. Produce a complete, syntactically correct TLA+ "
    "specification that faithfully captures the described behavior. The output must "
    "be a valid TLA+ module that passes the SANY parser. Include the MODULE "
    "declaration, EXTENDS, CONSTANTS, VARIABLES, Init, Next and Spec. Include all "
    "safety invariants and liveness properties described and any fairness conditions "
    "mentioned. Output only the TLA+ specification. System description: "
)

# Appendix E: the instruction line, the description, then the line "TLA+ Specification:".
FINETUNED_PREFIX = "Generate a TLA+ specification for the following system:\n"
FINETUNED_SUFFIX = "\nTLA+ Specification:"

# (prefix, suffix) around the description, per kind.
TEMPLATES: dict[str, tuple[str, str]] = {
    "frontier": (FRONTIER_PREFIX, ""),
    "finetuned": (FINETUNED_PREFIX, FINETUNED_SUFFIX),
}


def build_prompt(
    kind: PromptKind,
    description: str,
    module_name: str | None = None,
) -> str:
    """Return the prompt of ``kind`` for one task description.

    Args:
        kind: ``"frontier"`` (Appendix A) or ``"finetuned"`` (Appendix E).
        description: the task's natural-language description for the condition
            being generated (original, random or meaningful names). It is inserted
            exactly as given: no stripping, no escaping, braces are safe.
        module_name: accepted for call-site uniformity and ignored. The paper's
            prompts do not name the module; the model picks the MODULE name and the
            grader takes it from the output. Passing it never changes the text.

    Raises:
        ValueError: unknown ``kind``, or an empty / whitespace-only description.
    """
    del module_name  # not part of either prompt (see docstring)
    try:
        prefix, suffix = TEMPLATES[kind]
    except KeyError:
        raise ValueError(f"unknown prompt kind {kind!r}; expected one of {sorted(TEMPLATES)}") from None
    if not has_description(description):
        raise ValueError("description must be a non-empty string")
    return prefix + description + suffix


def has_description(description: object) -> bool:
    """Whether a task can be posed: its description is a string with a non-blank character
    (a corpus task with neither a TLA+-Bench description nor module comments has none)."""
    return isinstance(description, str) and bool(description.strip())


def template_sha256(kind: PromptKind) -> str:
    """SHA-256 of the template of ``kind`` (prefix, NUL, suffix): a fingerprint to store."""
    prefix, suffix = TEMPLATES[kind]
    return hashlib.sha256((prefix + "\0" + suffix).encode("utf-8")).hexdigest()
