"""Rich progress bars for every long loop (written to stderr, quiet when not a terminal)."""

from __future__ import annotations

from contextlib import contextmanager

from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

_console = Console(stderr=True)


class _Bar:
    def __init__(self, progress: Progress, task_id):
        self._p, self._t = progress, task_id

    def advance(self, n: int = 1) -> None:
        self._p.advance(self._t, n)


@contextmanager
def progress_bar(label: str, total: int | None = None):
    """Context manager yielding an object with ``advance(n=1)``; ``total=None`` = unknown."""
    with Progress(TextColumn(f"[bold]{label}"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(),
                  console=_console, transient=False, disable=not _console.is_terminal) as p:
        yield _Bar(p, p.add_task(label, total=total))
