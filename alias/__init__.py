"""ALIAS: consistent identifier renaming (CIR) studies of LLM-written TLA+ specifications.

The package implements the study of the ALIAS paper as reusable stages; see README.md.
``alias.grade_output(text, task_id, condition, store_or_data_dir, grades=...)`` grades one
model output (:func:`alias.api.grade_output`).
"""

__version__ = "0.1.0"
__all__ = ["grade_output", "__version__"]


def __getattr__(name: str):
    """``alias.grade_output``, imported on first use: running one stage must not import
    the grading stack (see ``tests/test_architecture.py``)."""
    if name == "grade_output":
        from alias.api import grade_output

        return grade_output
    raise AttributeError(f"module 'alias' has no attribute {name!r}")
