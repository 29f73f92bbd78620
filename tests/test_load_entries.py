"""The load stage reads only the sample folders of the model entries in params.yaml: a
folder left by an entry since removed does not land in the store (issue 34)."""
from __future__ import annotations

import dataclasses

from alias.stages import load
from alias.store.db import query, write_table
from alias.store.models import Sample
from conftest import embedded_config


def test_a_removed_entrys_samples_folder_is_not_loaded(tmp_path):
    c = embedded_config({"generate.local": {}, "generate.providers": {}, "continuation.models": []})
    c = dataclasses.replace(c, paths=c.paths.under(tmp_path))
    row = {"task_id": "T", "condition": "original", "sample_idx": 0, "text": "x"}
    write_table([row | {"model": "kept"}], Sample, c.paths.samples / "fixture" / "samples.parquet")
    write_table([row | {"model": "gone"}], Sample, c.paths.samples / "removed" / "samples.parquet")
    load.run(c, c.paths)
    assert query("SELECT model FROM samples", c.paths.store).model.tolist() == ["kept"]
