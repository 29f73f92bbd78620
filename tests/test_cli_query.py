"""`alias-cir query` on a plain DuckDB file: how many rows the table and the CSV print."""

from pathlib import Path

import duckdb
import pytest
from click.testing import CliRunner

from alias.api import load_test_set, locate_store
from alias.cli import main
from alias.store.db import StoreError, build_store, export_store


def _db(tmp_path):
    db = tmp_path / "s.duckdb"
    duckdb.connect(str(db)).close()
    return str(db)


def test_csv_prints_every_row_unless_a_limit_is_given(tmp_path):
    db = _db(tmp_path)
    full = CliRunner().invoke(main, ["query", "SELECT range AS i FROM range(500)", "--csv", "--db", db])
    assert full.exit_code == 0, full.output
    lines = full.output.splitlines()
    assert lines[0] == "i" and len(lines) == 501 and lines[-1] == "499"
    capped = CliRunner().invoke(main, ["query", "SELECT range AS i FROM range(500)", "--csv", "--limit", "3",
                                       "--db", db])
    assert capped.output.splitlines() == ["i", "0", "1", "2"]


def test_a_table_stops_at_200_rows_and_says_how_many_are_left(tmp_path):
    res = CliRunner().invoke(main, ["query", "SELECT range AS i FROM range(500)", "--db", _db(tmp_path)])
    assert res.exit_code == 0, res.output
    assert "(300 more rows)" in res.output and "199" in res.output and "│ 200 " not in res.output


def test_every_statement_that_returns_rows_is_printed_in_order(tmp_path):
    res = CliRunner().invoke(main, ["query", "SELECT 41 AS first_col; SELECT 42 AS second_col", "--csv",
                                    "--db", _db(tmp_path)])
    assert res.exit_code == 0, res.output
    assert res.output.splitlines() == ["first_col", "41", "", "second_col", "42"]


def test_a_piped_table_keeps_its_wide_columns(tmp_path):
    wide = "w" * 150
    res = CliRunner().invoke(main, ["query", f"SELECT '{wide}' AS a, '{wide}' AS b", "--db", _db(tmp_path)])
    assert res.exit_code == 0, res.output
    assert res.output.count(wide) == 2


def test_db_may_name_a_data_folder_and_a_missing_store_is_one_line(tmp_path):
    con = duckdb.connect(str(tmp_path / "alias.duckdb"))
    con.execute("CREATE TABLE t AS SELECT 7 AS v")
    con.close()
    ok = CliRunner().invoke(main, ["query", "SELECT v FROM t", "--csv", "--db", str(tmp_path)])
    assert ok.exit_code == 0 and ok.output.splitlines() == ["v", "7"], ok.output
    empty = tmp_path / "empty"
    empty.mkdir()
    bad = CliRunner().invoke(main, ["query", "SELECT 1", "--db", str(empty)])
    assert bad.exit_code == 1 and "holds no store" in bad.output
    missing = CliRunner().invoke(main, ["query", "SELECT 1", "--db", str(tmp_path / "nosuch.duckdb")])
    assert missing.exit_code == 1 and "no store at" in missing.output and "Traceback" not in missing.output


def test_grade_file_names_a_missing_store_as_query_does(tmp_path):
    out = tmp_path / "o.tla"
    out.write_text("---- MODULE M ----\n====\n")
    res = CliRunner().invoke(main, ["grade-file", str(out), "--task", "t", "--store", str(tmp_path / "no.duckdb")])
    assert res.exit_code == 1
    assert f"no store at {tmp_path / 'no.duckdb'}" in res.output and "tasks.parquet" not in res.output


def test_in_a_pipeline_folder_a_missing_setting_names_the_params_to_pass(tmp_path, monkeypatch):
    root = Path(__file__).resolve().parents[1]
    folder = tmp_path / "pipelines" / "x"
    folder.mkdir(parents=True)
    (tmp_path / "params.yaml").write_text((root / "params.yaml").read_text())
    (folder / "params.yaml").write_text("paths:\n  store: data/alias.duckdb\n")
    (folder / "dvc.yaml").write_text("stages: {}\n")
    monkeypatch.chdir(folder)
    res = CliRunner().invoke(main, ["query", "SELECT 1"])
    assert res.exit_code == 1
    assert "pass --params ../../params.yaml --params params.yaml" in res.output


def test_db_and_grade_file_store_may_name_a_snapshot_folder(tmp_path):
    """``data/store`` (what ``dvc pull`` brings) is rebuilt into the ``alias.duckdb`` beside
    it, for ``query --db`` and ``grade-file --store`` alike (the newcomer found grade-file
    asking for ``ingest/tasks.parquet`` there)."""
    (tmp_path / "sql").mkdir()
    (tmp_path / "sql" / "01.sql").write_text("CREATE VIEW v_seven AS SELECT 7 AS v;\n")
    folders = {k: tmp_path / "none" for k in ("continuation", "controls", "exposure", "grades", "identifiers",
                                              "ingest", "meaningful", "rename", "samples", "verify")}
    build_store(tmp_path / "built.duckdb", folders, sql_dir=tmp_path / "sql")   # every table, empty
    export_store(tmp_path / "built.duckdb", tmp_path / "data" / "store", sql_dir=tmp_path / "sql")
    res = CliRunner().invoke(main, ["query", "SELECT v, (SELECT count(*) FROM tasks) AS n FROM v_seven", "--csv",
                                    "--db", str(tmp_path / "data" / "store")])
    assert res.exit_code == 0 and res.output.splitlines() == ["v,n", "7,0"], res.output
    assert (tmp_path / "data" / "alias.duckdb").is_file()
    assert locate_store(tmp_path / "data") == tmp_path / "data" / "alias.duckdb"
    with pytest.raises(StoreError, match="holds no store"):
        load_test_set(tmp_path / "sql")


def test_a_table_prints_missing_values_empty_as_csv_does(tmp_path):
    res = CliRunner().invoke(main, ["query", "SELECT NULL::INT AS a, NULL::DOUBLE AS b, [1, 2] AS c, 'x' AS d",
                                    "--db", _db(tmp_path)])
    assert res.exit_code == 0, res.output
    row = [c.strip() for c in res.output.splitlines()[3].split("│")[1:-1]]
    assert row == ["", "", "[1, 2]", "x"], res.output


def test_grade_file_says_when_the_store_records_no_settings(tmp_path, monkeypatch):
    """A store whose ``store_settings`` table is empty (built by an older ``load``) is graded
    with ``params.yaml`` of the working folder, and ``grade-file`` says so in one line (the
    newcomer saw outputs that need the pipeline's library fail without a word)."""
    root = Path(__file__).resolve().parents[1]
    folders = {k: tmp_path / "none" for k in ("continuation", "controls", "exposure", "grades", "identifiers",
                                              "ingest", "meaningful", "rename", "samples", "verify")}
    (tmp_path / "sql").mkdir()
    build_store(tmp_path / "old.duckdb", folders, sql_dir=tmp_path / "sql")   # every table, empty
    (tmp_path / "params.yaml").write_text((root / "params.yaml").read_text())
    out = tmp_path / "o.tla"
    out.write_text("---- MODULE M ----\n====\n")
    monkeypatch.chdir(tmp_path)
    res = CliRunner().invoke(main, ["grade-file", str(out), "--task", "t", "--store", "old.duckdb"])
    warning = [ln for ln in res.output.splitlines() if ln.startswith("warning:")]
    assert len(warning) == 1 and "old.duckdb records no settings" in warning[0], res.output
    assert str(tmp_path / "params.yaml") in warning[0]
    assert res.exit_code == 1 and "Traceback" not in res.output
    quiet = CliRunner().invoke(main, ["grade-file", str(out), "--task", "t", "--store", "old.duckdb",
                                      "--params", "params.yaml"])
    assert "records no settings" not in quiet.output and quiet.exit_code == 1


def test_grade_file_says_to_rebuild_a_store_whose_settings_lack_a_newer_setting(tmp_path):
    """A store built before a setting existed (``controls.parts``) records settings that no
    longer load: one line that says to rebuild it, not a traceback or a bare "missing"."""
    import json

    from alias.config import config_to_dict, load_config

    root = Path(__file__).resolve().parents[1]
    folders = {k: tmp_path / "none" for k in ("continuation", "controls", "exposure", "grades", "identifiers",
                                              "ingest", "meaningful", "rename", "samples", "verify")}
    (tmp_path / "sql").mkdir()
    build_store(tmp_path / "old.duckdb", folders, sql_dir=tmp_path / "sql")
    params = config_to_dict(load_config(root / "params.yaml"))
    del params["controls"]["parts"]
    con = duckdb.connect(str(tmp_path / "old.duckdb"))
    con.execute("INSERT INTO store_settings VALUES ('params', ?, '.', '.')", [json.dumps(params)])
    con.close()
    out = tmp_path / "o.tla"
    out.write_text("---- MODULE M ----\n====\n")
    res = CliRunner().invoke(main, ["grade-file", str(out), "--task", "t", "--store", str(tmp_path / "old.duckdb")])
    assert res.exit_code == 1 and "Traceback" not in res.output, res.output
    assert "controls.parts: missing" in res.output and "rebuild it with `alias-cir load`" in res.output
    assert len([ln for ln in res.output.splitlines() if ln.strip()]) == 1, res.output
