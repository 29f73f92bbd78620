"""`alias-cir query` on a plain DuckDB file: how many rows the table and the CSV print."""

import duckdb
from click.testing import CliRunner

from alias.cli import main


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
