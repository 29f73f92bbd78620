"""What several stage modules share: the TLA+ tool settings and the status file."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path
from typing import Any

from alias.config import Config
from alias.tla.tools import ToolConfig, check_java, find_jar

__all__ = ["tool_config", "grade_tool_config", "write_status"]


def tool_config(config: Config, *, check: bool = True) -> ToolConfig:
    """The :class:`~alias.tla.tools.ToolConfig` of ``config.tla`` with the corpus's library
    folders; ``check``: start Java once so that a missing Java is one setup error, not a
    failed run per task (raises :class:`~alias.tla.tools.ToolError`)."""
    t = config.tla
    tc = ToolConfig(java=t.java, jar=find_jar(t.jar or None),
                    library=tuple(str(Path(p).resolve()) for p in config.corpus.library),
                    timeout_s=t.timeout_s, memory_mb=t.memory_mb, workers=t.workers)
    if check:
        check_java(tc)
    return tc


def grade_tool_config(config: Config, *, check: bool = True) -> ToolConfig:
    """:func:`tool_config` with the grading time limit ``grade.timeout_s``."""
    return dataclasses.replace(tool_config(config, check=check), timeout_s=config.grade.timeout_s)


def write_status(path: Path, status: dict[str, Any]) -> None:
    """Write a stage's ``status.json`` (sorted keys, one trailing newline)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(status, indent=2, sort_keys=True, default=str) + "\n", encoding="utf-8")
