"""The corpus-layout registry (``corpus.kind``): each layout reads ``corpus.path`` into the
four ingest tables (``candidates``, ``tasks``, ``modules``, ``module_roles``) that rename,
verify, identifiers and controls read unchanged.

``examples``  the TLA+ Examples layout (``specifications/*/manifest.json``), :mod:`alias.corpus.ingest`
``tlabench``  TLA+-Bench's release folder (``eval100.jsonl``, ``specs/``), :mod:`alias.corpus.tlabench`
``folder``    any folder tree of ``.tla``/``.cfg`` files, :mod:`alias.corpus.folder`
"""

from __future__ import annotations

from typing import Callable

import pandas as pd

from alias.config import CORPUS_KINDS, CorpusConfig
from alias.corpus.folder import ingest_folder
from alias.corpus.ingest import ingest
from alias.corpus.tlabench import ingest_tlabench

__all__ = ["LAYOUTS", "ingest_corpus"]

Progress = Callable[[], None]

#: ``corpus.kind`` -> ``read(corpus config, progress) -> tables``.
LAYOUTS: dict[str, Callable[[CorpusConfig, Progress], dict[str, pd.DataFrame]]] = {
    "examples": lambda c, p: ingest(c.path, c.descriptions or None, list(c.library), c.max_expected_runtime_s,
                                    progress=p),
    "tlabench": lambda c, p: ingest_tlabench(c.path, c.ids or None, c.library, progress=p),
    "folder": lambda c, p: ingest_folder(c.path, c.descriptions or None, c.library, progress=p),
}
assert tuple(LAYOUTS) == CORPUS_KINDS, "alias.config.CORPUS_KINDS names the layouts of this registry"


def ingest_corpus(corpus: CorpusConfig, progress: Progress | None = None) -> dict[str, pd.DataFrame]:
    """The ingest tables of ``corpus`` by its layout (:data:`LAYOUTS`)."""
    return LAYOUTS[corpus.kind](corpus, progress or (lambda: None))
