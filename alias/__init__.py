"""ALIAS: consistent identifier renaming (CIR) studies of LLM-written TLA+ specifications.

The package implements the study of the ALIAS paper as reusable stages; see README.md.
"""

__version__ = "0.1.0"
