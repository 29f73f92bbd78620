"""The ``alias`` command line: one command per DVC stage, plus ``alias query``."""

from __future__ import annotations

import json
import sys

import click
from rich.console import Console
from rich.table import Table

from alias.params import load_params

console = Console()


def _user_errors() -> tuple[type[BaseException], ...]:
    """Errors caused by input or setup: printed as one line, exit status 1."""
    from alias.corpus.ingest import IngestError
    from alias.generate.types import BatchError
    from alias.rename.proposers import ProposerError
    from alias.store.db import StoreError
    from alias.tla.cfg import CfgError
    from alias.tla.tools import ToolError

    return (IngestError, StoreError, CfgError, ToolError, FileNotFoundError, ProposerError, BatchError)


def _read_params(params_file: str) -> dict:
    """``load_params`` for a command: a missing or malformed file is a one-line error (a
    mistyped ``--params`` must not run silently on the defaults)."""
    import yaml
    from pathlib import Path

    if not Path(params_file).is_file():
        raise click.ClickException(f"params file {params_file!r} not found")
    try:
        return load_params(params_file)
    except (yaml.YAMLError, ValueError) as e:
        raise click.ClickException(f"params file {params_file!r}: {type(e).__name__}: {e}") from e


def _run(fn, params_file: str) -> None:
    params = _read_params(params_file)
    try:
        summary = fn(params)
    except _user_errors() as e:
        raise click.ClickException(f"{type(e).__name__}: {e}") from e
    console.print_json(json.dumps(summary, default=str))


@click.group()
@click.version_option(package_name="alias-cir")
def main() -> None:
    """ALIAS: consistent identifier renaming (CIR) studies of LLM-written TLA+ specs."""


def _stage(name: str, fn_name: str, help_text: str):
    @main.command(name=name, help=help_text)
    @click.option("--params", "params_file", default="params.yaml", show_default=True,
                  help="DVC parameters file.")
    def cmd(params_file: str) -> None:
        from alias import stages

        _run(getattr(stages, fn_name), params_file)

    return cmd


_stage("ingest", "ingest_stage", "Corpus directory -> tasks, modules, descriptions (data/ingest).")
_stage("rename", "rename_stage", "CIR-rename every task with same-length seeded names (data/rename).")
_stage("verify", "verify_stage", "SANY + TLC on original and renamed copies -> test set (data/verify).")
_stage("identifiers", "identifiers_stage", "Identifier kinds and hidden required names (data/identifiers).")
_stage("controls", "controls_stage", "Grader validation (Appendix J): controls and mutants graded (data/controls).")
_stage("meaningful", "meaningful_stage",
       "Meaningful names (Appendix R): proposed maps applied and re-verified (data/meaningful).")


def _generate_stage(name: str, fn_name: str, help_text: str):
    """A stage command whose function lives in :mod:`alias.generate.stage`."""
    @main.command(name=name, help=help_text)
    @click.option("--params", "params_file", default="params.yaml", show_default=True,
                  help="DVC parameters file.")
    def cmd(params_file: str) -> None:
        from alias.generate import stage

        _run(getattr(stage, fn_name), params_file)

    return cmd


_generate_stage("tiny-model", "tiny_model_stage", "Build the tiny local model of the embedded default (models/tiny).")


@main.command(name="grade")
@click.option("--params", "params_file", default="params.yaml", show_default=True, help="DVC parameters file.")
def grade_cmd(params_file: str) -> None:
    """Grade every generated sample (data/samples/*, data/exposure/samples.parquet) by parse,
    name and behavior (data/grades)."""
    from pathlib import Path

    from alias.exposure.stage import exposure_params
    from alias.generate.stage import grade_stage

    _run(lambda params: grade_stage(
        params, extra_samples=[Path(exposure_params(params)["out"]) / "samples.parquet"]), params_file)


@main.command(name="exposure")
@click.option("--params", "params_file", default="params.yaml", show_default=True, help="DVC parameters file.")
def exposure_cmd(params_file: str) -> None:
    """Experiment 2: split, LoRA adapters, fine-tuned samples, reference log-likelihoods
    (data/exposure, models/exposure)."""
    from alias.exposure.stage import exposure_stage

    try:
        _run(exposure_stage, params_file)
    except ValueError as e:
        raise click.ClickException(f"{type(e).__name__}: {e}") from e


@main.command(name="generate")
@click.option("--model", "key", required=True, help="A key of params generate.models.")
@click.option("--params", "params_file", default="params.yaml", show_default=True, help="DVC parameters file.")
def generate_cmd(key: str, params_file: str) -> None:
    """Generate (or replay) the samples of one model -> data/samples/KEY."""
    from alias.generate.replay import ReplayFileError
    from alias.generate.stage import GenerateConfigError, generate_stage
    from alias.generate.types import BatchError

    try:
        _run(lambda params: generate_stage(params, key), params_file)
    except (GenerateConfigError, ReplayFileError, BatchError) as e:
        raise click.ClickException(f"{type(e).__name__}: {e}") from e


@main.command(name="continuation")
@click.option("--params", "params_file", default="params.yaml", show_default=True, help="DVC parameters file.")
def continuation_cmd(params_file: str) -> None:
    """File continuation (Appendix L): each model of params continuation.models continues the
    first 40% of every test-set file and of its renamed copy -> data/continuation."""
    from alias.generate.continuation_stage import continuation_stage
    from alias.generate.stage import GenerateConfigError
    from alias.generate.types import BatchError

    try:
        _run(continuation_stage, params_file)
    except (GenerateConfigError, BatchError, ValueError) as e:
        raise click.ClickException(f"{type(e).__name__}: {e}") from e


_stage("load", "load_stage", "Build data/alias.duckdb from the stage tables and sql/ views.")
_stage("report", "report_stage", "Every table, figure (PNG + plot data) and metrics file under reports/.")


@main.command()
@click.argument("sql")
@click.option("--db", default="data/alias.duckdb", show_default=True)
@click.option("--limit", default=200, show_default=True, help="Rows to print at most.")
@click.option("--csv", "as_csv", is_flag=True, help="Print CSV (all columns, untruncated) instead of a table.")
def query(sql: str, db: str, limit: int, as_csv: bool) -> None:
    """Run SQL against the store and print a table."""
    from alias.store.db import StoreError, query as run_query

    if not sql.strip():
        raise click.ClickException("empty SQL: pass a statement, e.g. \"SELECT * FROM v_test_set\"")
    try:
        df = run_query(sql, db)
    except StoreError as e:
        raise click.ClickException(str(e)) from e
    except Exception as e:  # a SQL error is the user's to fix: print it, no traceback
        raise click.ClickException(f"{type(e).__name__}: {e}") from e
    if df is None:
        raise click.ClickException("the statement returned no result set")
    if as_csv:
        click.echo(df.head(limit).to_csv(index=False), nl=False)
        return
    table = Table(show_lines=False)
    for c in df.columns:
        table.add_column(str(c))
    for row in df.head(limit).itertuples(index=False):
        table.add_row(*["" if v is None else str(v) for v in row])
    console.print(table)
    if len(df) > limit:
        console.print(f"({len(df) - limit} more rows)")


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
