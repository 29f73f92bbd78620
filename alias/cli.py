"""The ``alias-cir`` command line: one command per DVC stage (built from
the stage registry, :mod:`alias.stages.registry`), plus ``query``, ``grade-file``,
``init-pipeline``, ``export`` and ``check-confinement``.

Every command reads the typed configuration once (``--params``, default ``params.yaml``).
An error that bad input or setup causes (:class:`alias.errors.AliasError`, a missing
file) is printed as one line and exits 1.
"""

from __future__ import annotations

import functools
import json
import os
import sys
import tempfile
from pathlib import Path
from typing import Any, Callable

import click
import duckdb
import numpy as np
import pandas as pd
from rich.console import Console
from rich.table import Table

from alias.api import grade_output, locate_store, settings_for
from alias.config import CONDITIONS, Config, ConfigError, load_config
from alias.errors import AliasError
from alias.grade.registry import grade_names
from alias.grade.run import GRADES
from alias.pipelines import DEFAULT_STAGES, init_pipeline
from alias.stages.common import tool_config
from alias.stages.registry import NAMES, StageInfo, describe
from alias.stages.registry import load as load_stage
from alias.store.db import ensure_store
from alias.tla.hostile import check

#: rows a table prints when --limit is not given
_TABLE_ROWS = 200
_PARAMS_HELP = "DVC parameters file; repeat to refine one file with another (a pipeline folder's)."
_PARAMS = click.option("--params", "params_file", default=("params.yaml",), show_default=True, multiple=True,
                       type=click.Path(dir_okay=False), help=_PARAMS_HELP)


def _guard(fn: Callable[[], Any]) -> Any:
    """Run ``fn``; an input or setup error becomes a one-line ``Error: <Type>: <message>``."""
    try:
        return fn()
    except (AliasError, FileNotFoundError) as e:
        raise click.ClickException(f"{type(e).__name__}: {e}") from e


def _config(params_file: tuple[str, ...]) -> Config:
    missing = [p for p in params_file if not Path(p).is_file()]
    if missing:
        raise click.ClickException(f"params file not found: {Path(missing[0]).absolute()} (run from the repository "
                                   "root; in a pipeline folder: --params ../../params.yaml --params params.yaml; "
                                   "or pass --params PATH)")
    try:
        return load_config(list(params_file))
    except ConfigError as e:
        raise click.ClickException(f"ConfigError: {e}{_pipeline_hint(params_file)}") from e
    except FileNotFoundError as e:
        raise click.ClickException(f"FileNotFoundError: {e}") from e


def _pipeline_hint(params_file: tuple[str, ...]) -> str:
    """In a pipeline folder (``pipelines/X``, whose params.yaml only refines the
    repository's), the options that load both files."""
    root = Path("../../params.yaml")
    if len(params_file) == 1 and Path("dvc.yaml").is_file() and root.is_file() \
            and Path(params_file[0]).resolve() != root.resolve():
        return f"; in a pipeline folder pass --params ../../params.yaml --params {params_file[0]}"
    return ""


class _InOrder(click.Group):
    """Commands listed in pipeline order, then ``query``, ``grade-file`` and
    ``init-pipeline``; a bad
    argument (``--limit -1``, an unknown option) is one line on stderr and exit status 2."""

    def list_commands(self, ctx: click.Context) -> list[str]:
        return list(self.commands)

    def main(self, *args: Any, **kwargs: Any) -> Any:
        try:
            return super().main(*args, standalone_mode=False, **kwargs)
        except click.UsageError as e:
            name = e.ctx.command_path if e.ctx else "alias-cir"
            click.echo(f"{name}: error: {e.format_message()} (see {name} --help)", err=True)
            sys.exit(e.exit_code)
        except click.ClickException as e:
            e.show()
            sys.exit(e.exit_code)
        except click.exceptions.Abort:
            click.echo("Aborted!", err=True)
            sys.exit(1)
        except click.exceptions.Exit as e:
            sys.exit(e.exit_code)


@click.group(cls=_InOrder)
@click.version_option(package_name="alias-cir")
def main() -> None:
    """ALIAS: consistent identifier renaming (CIR) studies of LLM-written TLA+ specs."""


def _stage_command(stage: StageInfo) -> click.Command:
    """One command for a stage: ``run(config, config.paths[, key])`` of its module
    (imported when the command runs), the summary printed as JSON."""
    help_text = stage.doc.strip().split("\n\n")[0].replace("\n", " ")

    def callback(params_file: tuple[str, ...], key: str | None = None) -> None:
        config = _config(params_file)
        if key is not None:
            section = [str(k) for k in functools.reduce(getattr, stage.keyed.split("."), config)]
            if key not in section:
                raise click.ClickException(f"no {stage.key_option} {key!r} in {stage.keyed} "
                                           f"(have: {', '.join(section) or 'none'})")
        args = (config, config.paths) + ((key,) if key is not None else ())
        summary = _guard(lambda: load_stage(stage.name).run(*args))
        _console().print_json(json.dumps(summary, default=str))

    params: list[click.Parameter] = [click.Option(["--params", "params_file"], default=("params.yaml",), multiple=True,
                                                  show_default=True, type=click.Path(dir_okay=False), help=_PARAMS_HELP)]
    if stage.keyed:
        params.append(click.Option([f"--{stage.key_option}", "key"], required=True,
                                   help=f"A key of params {stage.keyed}."))
    return click.Command(stage.name.replace("_", "-"), callback=callback, params=params, help=help_text)


for _name in NAMES:
    main.add_command(_stage_command(describe(_name)))


@main.command()
@click.argument("sql")
@click.option("--db", default=None, help="The DuckDB store, or a data folder holding alias.duckdb "
              "(default: paths.store of --params).")
@_PARAMS
@click.option("--limit", default=None, type=click.IntRange(min=1),
              help="Rows to print at most (default: 200 in a table, every row with --csv).")
@click.option("--csv", "as_csv", is_flag=True, help="Print CSV (every row and column, untruncated) instead of a table.")
def query(sql: str, db: str | None, params_file: tuple[str, ...], limit: int | None, as_csv: bool) -> None:
    """Run SQL against the store and print a table (or CSV) per statement that returns rows
    (several statements separated by ``;`` run in order on one read-only connection)."""
    if not sql.strip():
        raise click.ClickException("empty SQL: pass a statement, e.g. \"SELECT * FROM v_test_set\"")
    if db:
        path = _store_file(Path(db))
    else:
        paths = _config(params_file).paths
        path = _guard(lambda: ensure_store(paths.store, paths.snapshot))
    results = _run_sql(sql, path)
    if not results:
        raise click.ClickException("the statement returned no result set")
    for n, df in enumerate(results):
        if n:
            click.echo("")
        _print_result(df, limit, as_csv)


def _store_file(db: Path) -> Path:
    """``--db``: what :func:`alias.api.locate_store` accepts."""
    return _guard(lambda: locate_store(db))


def _run_sql(sql: str, db: Path) -> list:
    """The DataFrame of every statement of ``sql`` that returns rows, run in order on one
    read-only connection; a SQL error is one line."""
    try:
        con = duckdb.connect(str(db), read_only=True)
        try:
            out = []
            for statement in duckdb.extract_statements(sql):
                cur = con.execute(statement)
                if cur.description:
                    out.append(cur.df())
            return out
        finally:
            con.close()
    except Exception as e:  # a SQL error is the user's to fix: one line, no traceback
        raise click.ClickException(f"{type(e).__name__}: {' '.join(str(e).split())}") from e


def _print_result(df, limit: int | None, as_csv: bool) -> None:
    if as_csv:
        click.echo((df if limit is None else df.head(limit)).to_csv(index=False), nl=False)
        return
    limit = limit or _TABLE_ROWS
    _print_table(df.head(limit))
    if len(df) > limit:
        _console().print(f"({len(df) - limit} more rows)")


def _console() -> Console:
    """A console on the current stdout; piped, it keeps every column (rich would otherwise
    fit a table to 80 columns)."""
    return Console(width=None if sys.stdout.isatty() else 10_000)


def _print_table(df) -> None:
    table = Table(show_lines=False)
    for c in df.columns:
        table.add_column(str(c))
    for row in df.itertuples(index=False):
        table.add_row(*[_cell(v) for v in row])
    _console().print(table)


def _cell(v: Any) -> str:
    """A table cell: empty for a missing value (None, NaN, NA), as CSV prints it."""
    if isinstance(v, np.ndarray):
        return str(v.tolist())
    if isinstance(v, (list, tuple, dict)):
        return str(v)
    return "" if v is None or pd.isna(v) else str(v)


def _grade_list(_ctx, _param, value: str) -> list[str]:
    """``--grades`` as a list of registered grade names (a usage error names the known ones)."""
    wanted = [g.strip() for g in value.split(",") if g.strip()]
    unknown = [g for g in wanted if g not in grade_names()]
    if unknown or not wanted:
        raise click.BadParameter(f"{', '.join(unknown) or 'none given'}: the registered grades are "
                                 f"{', '.join(grade_names())}")
    return wanted


@main.command("grade-file")
@click.argument("file", type=click.Path(exists=True, dir_okay=False))
@click.option("--task", "task_id", required=True, help="The task_id to grade against (see v_test_set).")
@click.option("--condition", type=click.Choice(CONDITIONS), default="original", show_default=True)
@click.option("--grades", default=",".join(GRADES), show_default=True, callback=_grade_list,
              help=f"Comma-separated registered grades ({', '.join(grade_names())}).")
@click.option("--store", default=None, help="DuckDB store or data folder (default: paths.store of --params); "
              "graded with the settings it was built with unless --params is given.")
@click.option("--json", "as_json", is_flag=True, help="Print the verdicts as JSON.")
@click.option("--params", "params_file", default=(), multiple=True, type=click.Path(dir_okay=False),
              help=_PARAMS_HELP + " Default: the settings the store was built with, else params.yaml.")
def grade_file(file: str, task_id: str, condition: str, grades: list[str], store: str | None, as_json: bool,
               params_file: tuple[str, ...]) -> None:
    """Grade one model output FILE (raw text: fences, prose and Unicode are handled) by
    registered grades (parse, name, behavior, tlabench, ...) against a task of the built
    test set."""
    text = Path(file).read_text(encoding="utf-8", errors="replace")
    if store is None:
        config = _config(params_file or ("params.yaml",))
        store = _guard(lambda: ensure_store(config.paths.store, config.paths.snapshot))
    else:
        config = _config(params_file) if params_file else _store_or_local_config(store)
    verdicts = _guard(lambda: grade_output(text, task_id, condition, store, grades, config=config))
    if as_json:
        click.echo(json.dumps(verdicts, indent=2, default=str))
        return
    keys = ("grade", "passed", "reason", "tlc_kind", "distinct_states", "method", "mapping", "cfg_changes",
            "error_text")
    table = Table(show_lines=True)
    for k in keys:
        table.add_column(k)
    for v in verdicts:
        table.add_row(*["" if v.get(k) is None else str(v.get(k)) for k in keys])
    _console().print(table)


def _store_or_local_config(store: str):
    """The settings ``store`` was built with, else ``params.yaml`` here, saying so in one
    line (a store built before ``load`` recorded its settings grades with this folder's
    library folders, jar and limits, which need not be its pipeline's)."""
    config = _guard(lambda: settings_for(store))
    if config is None:
        click.echo(f"warning: {store} records no settings (stage tables, or a store of an older load stage); grading with "
                   f"{Path.cwd() / 'params.yaml'}: pass --params from its pipeline folder if that differs", err=True)
        config = _config(("params.yaml",))
    return config


@main.command("init-pipeline")
@click.argument("name")
@click.option("--corpus", "corpus", required=True, type=click.Path(exists=True, file_okay=False),
              help="A folder of .tla/.cfg files (corpus.kind: folder).")
@click.option("--library", multiple=True, type=click.Path(exists=True, file_okay=False),
              help="A library module folder for TLC (repeat for several).")
@click.option("--descriptions", default=None, type=click.Path(exists=True, dir_okay=False),
              help="A JSON file of descriptions: {module: text} or TLA+-Bench's format.")
@click.option("--timeout", "timeout_s", default=None, type=click.FloatRange(min=0, min_open=True),
              help="TLC time limit per run in seconds (tla.timeout_s; the original's run over it is "
                   "excluded as tlc_original_timeout).")
@click.option("--stages", default=",".join(DEFAULT_STAGES), show_default=True,
              help="Comma-separated stages of the repository's dvc.yaml.")
@click.option("--root", default=".", type=click.Path(exists=True, file_okay=False),
              help="The repository (holding dvc.yaml and params.yaml).")
@click.option("--force", is_flag=True, help="Write the folder again if it exists.")
def init_pipeline_command(name: str, corpus: str, library: tuple[str, ...], descriptions: str | None,
                          timeout_s: float | None, stages: str, root: str, force: bool) -> None:
    """Write pipelines/NAME (dvc.yaml, params.yaml) for a folder of TLA+ specifications;
    then `cd pipelines/NAME && dvc repro`."""
    keep = tuple(s.strip() for s in stages.split(",") if s.strip())
    folder = _guard(lambda: init_pipeline(root, name, corpus, library=library, descriptions=descriptions,
                                          timeout_s=timeout_s, stages=keep, force=force))
    click.echo(f"wrote {folder}/params.yaml and dvc.yaml; run: cd {Path(os.path.relpath(folder))} && dvc repro")


@main.command("export")
@click.option("--store", default=None, help="DuckDB store, snapshot or data folder (default: paths.store of --params).")
@click.option("--out", default="export", show_default=True, type=click.Path(file_okay=False),
              help="Folder to write: dataset/ (Hugging Face) and logs/ (Inspect).")
@_PARAMS
def export(store: str | None, out: str, params_file: tuple[str, ...]) -> None:
    """Write the store's test set as a Hugging Face dataset (OUT/dataset: Parquet per condition
    and a dataset card) and its verdicts as Inspect logs (OUT/logs: one per model and
    condition; `inspect view --log-dir OUT/logs`). Needs the `inspect` extra."""
    config = _config(params_file)
    try:
        from alias.inspect.export import export_dataset, export_logs
    except ImportError as e:
        raise click.ClickException(f"export needs the inspect extra (pip install -e '.[inspect]'): {e}") from e
    where = Path(store) if store else _guard(lambda: ensure_store(config.paths.store, config.paths.snapshot))
    db = _guard(lambda: locate_store(where))
    rows = _guard(lambda: export_dataset(db, Path(out) / "dataset", config))
    logs = _guard(lambda: export_logs(db, Path(out) / "logs"))
    click.echo(json.dumps({"dataset": str(Path(out) / "dataset"), "rows": rows,
                           "logs": [str(p) for p in logs]}, indent=2))


@main.command("check-confinement")
@_PARAMS
@click.option("--out", default=None, type=click.Path(dir_okay=False), help="Also write the report (Markdown) here.")
@click.option("--demonstrate", is_flag=True,
              help="Also run the outputs that would get out UNCONFINED, with the overrides loaded (they touch only a "
                   "temporary bait folder and a loopback listener): what the confinement prevents.")
def check_confinement(params_file: tuple[str, ...], out: str | None, demonstrate: bool) -> None:
    """Say whether SANY/TLC runs are confined here and grade the hostile outputs of
    alias/tla/hostile.py through TLC (about a minute): exit status 1 unless each is a failed
    verdict, nothing gets out and the next output is graded normally."""
    config = _config(params_file)
    with tempfile.TemporaryDirectory(prefix="alias-check-") as root:
        outcomes, text = _guard(lambda: check(tool_config(config), Path(root), demonstrate=demonstrate))
    click.echo(text)
    if out:
        Path(out).write_text(text, encoding="utf-8")
    if not all(o.contained and o.next_ok for o in outcomes if o.mode == "confined"):
        raise click.ClickException("a hostile output was not contained (see the table)")


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
