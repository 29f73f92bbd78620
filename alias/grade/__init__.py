"""Grading LLM outputs: extraction of one TLA+ module from raw model text."""
