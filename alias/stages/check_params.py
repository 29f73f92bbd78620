"""Check the settings before any stage runs (paths.checked): every stage depends on this one,
so a bad value (``dvc exp run -S grade.timeout_s=abc``) stops ``dvc repro`` here, before
DVC removes any other stage's outputs."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from alias.config import Config, ConfigError, Paths

NAME = "check_params"
#: The marker's text: the same whatever the settings, so no stage reruns because of it.
MARKER = "params.yaml checked by alias-cir check-params: every stage's settings are valid\n"


def run(config: Config, paths: Paths) -> dict[str, Any]:
    """The command line has loaded and checked every setting when this runs; check here
    what only the file system tells (the corpus folder, the library folders, a jar that
    is named), then write the marker ``paths.checked``. Raises :class:`ConfigError` naming
    the setting."""
    c = config.corpus
    wanted = {"corpus.path": Path(c.path), **{f"corpus.library[{i}]": Path(d) for i, d in enumerate(c.library)}}
    if config.tla.jar:
        wanted["tla.jar"] = Path(config.tla.jar)
    for key, p in wanted.items():
        if not p.exists():
            raise ConfigError(f"{key}: {p} does not exist")
    paths.checked.parent.mkdir(parents=True, exist_ok=True)
    paths.checked.write_text(MARKER, encoding="utf-8")
    return {"checked": str(paths.checked)}
