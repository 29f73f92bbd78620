"""The generation prompts are the paper's, word for word (Appendix A and Appendix E)."""
from __future__ import annotations

import pytest

from alias.generate import prompts
from alias.generate.prompts import PROMPT_VERSION, build_prompt

DESCRIPTION = (
    "A barrier synchronizes N processes. Each process runs, then waits at the barrier "
    "until every process has arrived; only then may any process proceed. Use the "
    "constant N for the number of processes and {braces} stay as they are."
)

# Appendix A, copied from the paper text, with the description in place of {description}.
APPENDIX_A = (
    "You are a TLA+ specification engineer. You will receive a natural language description of a system. "
    "Produce a complete, syntactically correct TLA+ specification that faithfully captures the described "
    "behavior. The output must be a valid TLA+ module that passes the SANY parser. Include the MODULE "
    "declaration, EXTENDS, CONSTANTS, VARIABLES, Init, Next and Spec. Include all safety invariants and "
    "liveness properties described and any fairness conditions mentioned. Output only the TLA+ "
    "specification. System description: {description}"
)


def test_frontier_prompt_is_appendix_a_verbatim():
    expected = APPENDIX_A.replace("{description}", DESCRIPTION)
    assert build_prompt("frontier", DESCRIPTION, "Barrier") == expected
    assert expected.startswith("You are a TLA+ specification engineer. You will receive")
    assert expected.endswith("Output only the TLA+ specification. System description: " + DESCRIPTION)


def test_finetuned_prompt_is_appendix_e():
    # "Generate a TLA+ specification for the following system:", followed by the
    # description and the line "TLA+ Specification:".
    expected = (
        "Generate a TLA+ specification for the following system:\n"
        + DESCRIPTION
        + "\nTLA+ Specification:"
    )
    assert build_prompt("finetuned", DESCRIPTION, "Barrier") == expected
    assert expected.splitlines()[-1] == "TLA+ Specification:"


@pytest.mark.parametrize("kind", ["frontier", "finetuned"])
def test_only_the_description_is_inserted(kind):
    a = build_prompt(kind, DESCRIPTION, "Barrier")
    assert build_prompt(kind, DESCRIPTION, "Xqzvwab") == a  # module name is not part of the prompt
    assert build_prompt(kind, DESCRIPTION) == a
    assert "Barrier" not in a.replace(DESCRIPTION, "")
    assert a.count(DESCRIPTION) == 1
    # The description is inserted untouched (whitespace, braces, unicode).
    odd = "  Init ≜ x = 0 {description} %s \n"
    assert odd in build_prompt(kind, odd)


def test_renamed_description_changes_only_the_slot():
    renamed = DESCRIPTION.replace("N ", "Q ")
    a, b = build_prompt("frontier", DESCRIPTION), build_prompt("frontier", renamed)
    assert a[: len(prompts.FRONTIER_PREFIX)] == b[: len(prompts.FRONTIER_PREFIX)]
    assert b == prompts.FRONTIER_PREFIX + renamed


def test_bad_arguments():
    with pytest.raises(ValueError):
        build_prompt("chat", DESCRIPTION)
    with pytest.raises(ValueError):
        build_prompt("frontier", "   ")


def test_version_and_fingerprints():
    assert isinstance(PROMPT_VERSION, str) and PROMPT_VERSION
    assert prompts.template_sha256("frontier") != prompts.template_sha256("finetuned")
    assert len(prompts.template_sha256("frontier")) == 64
