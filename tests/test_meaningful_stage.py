"""The ``meaningful`` stage (Appendix R) on the embedded corpus: the offline lexicon
proposer, replayed replies with bad maps, missing credentials, and an Anthropic proposer
behind a loopback server that speaks the Message Batches wire format."""
from __future__ import annotations

import dataclasses
import json
import shutil
from pathlib import Path

import pandas as pd
import pytest
import yaml
from click.testing import CliRunner

from alias.config import ConfigError, ModelEntry
from alias.corpus.testset import TestSet
from alias.errors import AliasError
from alias.generate.registry import read_replay_texts
from alias.rename.cir import RenameResult, leftover_identifiers
from alias.rename.meaningful import meaningful_identifiers, validate_name_map
from alias.rename.proposers import (
    NamingRequest, lexicon_map, lexicon_name, propose,
    spec_names,
)
from alias.stages import ingest, meaningful, rename
from alias.store.db import columns
from alias.store.models import MeaningfulMapRow, MeaningfulModule, MeaningfulProposal, MeaningfulTask
from conftest import embedded_config, folders_under
from test_batches import ANTHROPIC_KEY, FakeAnthropic  # tests/ is on sys.path under pytest
from test_meaningful import CLOCK_MAP

REPO = Path(__file__).resolve().parents[1]
SPECS = REPO / "alias" / "corpus" / "embedded" / "specifications"
CLOCK = "Clock.Clock.Clock"
TOKENRING = "TokenRing.TokenRing.MCTokenRing"
PETERSON = "Peterson.Peterson.Peterson"


LEXICON_MODEL = "alias-lexicon-v1"
PROPOSAL_COLUMNS, TASK_COLUMNS = columns(MeaningfulProposal), columns(MeaningfulTask)
MAP_COLUMNS, MODULE_COLUMNS = columns(MeaningfulMapRow), columns(MeaningfulModule)


def _raw(**meaningful) -> dict:
    over = {"tla.timeout_s": 60, "tla.memory_mb": 512, "tla.parallel": 2, "meaningful.poll_interval_s": 0}
    return over | {f"meaningful.{k}": v for k, v in meaningful.items()}


def _params(**meaningful):
    return embedded_config(_raw(**meaningful))


@pytest.fixture(scope="module")
def inputs(tmp_path_factory):
    """ingest + rename of the embedded corpus, and a ``test_set`` whose original TLC
    outcomes are the manifests' numbers (equal to TLC's own, test_pipeline checks it),
    so that only the meaningful copies go through TLC here."""
    d = tmp_path_factory.mktemp("meaningful_inputs")
    p = _params()
    paths = dataclasses.replace(p.paths, ingest=d / "ingest", rename=d / "rename", verify=d / "verify")
    ingest.run(p, paths)
    rename.run(p, paths)
    tasks = pd.read_parquet(d / "ingest" / "tasks.parquet")
    ts = pd.DataFrame({"task_id": tasks.task_id, "in_test_set": True, "original_kind": "success",
                       "original_distinct_states": tasks.expected_distinct_states.astype("Int64"),
                       "original_depth": tasks.expected_depth.astype("Int64")})
    (d / "verify").mkdir()
    ts.to_parquet(d / "verify" / "test_set.parquet", index=False)
    return d


def _paths(inputs: Path, out: Path):
    return dataclasses.replace(embedded_config().paths, ingest=inputs / "ingest", rename=inputs / "rename",
                               verify=inputs / "verify", meaningful=out, work=out.parent / "work")


def _run(inputs: Path, out: Path, c) -> dict:
    return meaningful.run(c, _paths(inputs, out))


def _tables(out: Path) -> dict[str, pd.DataFrame]:
    return {n: pd.read_parquet(out / f"{n}.parquet")
            for n in ("proposals", "meaningful_tasks", "meaningful_map", "meaningful_modules")}


# ------------------------------------------------------------------------ lexicon
def test_lexicon_names_are_words_plus_kind():
    assert lexicon_name("hr", "variable", set()) == "hourVariable"
    assert lexicon_name("msgs", "variable", set()) == "messagesVariable"
    assert lexicon_name("pc", "variable", set()) == "programCounterVariable"
    assert lexicon_name("N", "constant", set()) == "CountConstant"
    assert lexicon_name("n1", "constant", set()) == "n1Constant"
    assert lexicon_name("BufSize", "constant", set()) == "BufferSizeConstant"
    assert lexicon_name("MCTokenRing", "module", set()) == "ModelCheckTokenRingModule"
    assert lexicon_name("Init", "operator", set()) == "InitialOperator"
    assert lexicon_name("max_val", "let", set()) == "maximumValueLocal"
    # a name the spec already uses, or one taken before, gets the first free suffix
    assert lexicon_name("hr", "variable", {"hourVariable"}) == "hourVariable2"
    assert lexicon_name("hr", "variable", {"hourVariable", "hourVariable2"}) == "hourVariable3"
    m = lexicon_map([{"name": "buf", "kind": "variable"}, {"name": "buffer", "kind": "variable"},
                     {"name": "buf", "kind": "operator"}])
    assert m == {"buf": "bufferVariable", "buffer": "bufferVariable2"}


def test_lexicon_maps_are_valid_for_every_embedded_task():
    for folder in sorted(p for p in SPECS.iterdir() if p.is_dir()):
        mods = {p.stem: p.read_text(encoding="utf-8") for p in sorted(folder.glob("*.tla"))}
        ids = meaningful_identifiers(mods)
        m = lexicon_map(ids, spec_names(mods.values()))
        names = {r["name"] for r in ids}
        assert set(m) == names and validate_name_map(m, names) == [], folder.name
        assert all(len(m[n]) > len(n) for n in names)  # lengths change on purpose


def test_proposer_settings_and_replay_file_errors(tmp_path):
    assert _params().meaningful.proposer.backend == "lexicon"
    assert _params().meaningful.proposer.model == LEXICON_MODEL
    with pytest.raises(ConfigError, match="meaningful.proposer.backend: must be one of"):
        _params(proposer={"backend": "gpt"})
    with pytest.raises(ConfigError, match="meaningful.proposer.model: is required for backend anthropic"):
        _params(proposer={"backend": "anthropic", "enabled": True, "max_tokens": 10})
    with pytest.raises(ConfigError, match="meaningful.proposer.path: is required"):
        _params(proposer={"backend": "replay"})
    with pytest.raises(ConfigError, match="meaningful.view: must be original or random"):
        _params(view="sideways")
    f = tmp_path / "r.jsonl"
    f.write_text('{"task_id": "a", "reply": "{}"}\n\n{"task_id": "a", "reply": "x"}\n')
    with pytest.raises(AliasError, match=r"r.jsonl:3: task a given twice"):
        read_replay_texts(f)
    f.write_text('{"task_id": "a", "reply": 3}\n')
    with pytest.raises(AliasError, match=r"r.jsonl:1: expected an object"):
        read_replay_texts(f)
    with pytest.raises(FileNotFoundError):
        read_replay_texts(tmp_path / "nope.jsonl")
    req = NamingRequest("t", "prompt", ({"name": "hr", "kind": "variable", "module": "Clock"},))
    (reply,) = propose([req], ModelEntry(backend="lexicon", model=LEXICON_MODEL))
    assert json.loads(reply.text) == {"hr": "hourVariable"} and reply.status == "succeeded"


# -------------------------------------------------------------------------- stage
@pytest.mark.tlc
def test_stage_with_lexicon_on_embedded_corpus(inputs, tmp_path):
    out = tmp_path / "meaningful"
    s = _run(inputs, out, _params())
    assert s["status"] == "ok" and s["proposer"] == "lexicon" and s["model"] == LEXICON_MODEL
    assert (s["tasks"], s["replies"], s["valid_maps"], s["applied"], s["verified"]) == (6, 6, 6, 6, 5)
    # Peterson's longer names move the first bullet of a junction list: SANY rejects it
    assert s["reasons"] == {"sany_meaningful": 1}
    t = _tables(out)
    tasks = t["meaningful_tasks"].set_index("task_id")
    assert list(t["meaningful_tasks"].columns) == TASK_COLUMNS
    assert not tasks.loc[PETERSON, "verified"] and tasks.loc[PETERSON, "reason"] == "sany_meaningful"
    assert "Precedence conflict" in tasks.loc[PETERSON, "detail"]
    ok = tasks[tasks.verified]
    assert (ok.meaningful_kind == "success").all()
    assert (ok.meaningful_distinct_states == ok.original_distinct_states).all()
    assert (ok.meaningful_depth == ok.original_depth).all()
    assert tasks.loc[CLOCK, "meaningful_distinct_states"] == 48
    assert tasks.loc[CLOCK, "system_module"] == "ClockModule"
    assert tasks.loc[TOKENRING, "model_module"] == "ModelCheckTokenRingModule"
    assert tasks.loc[CLOCK, "cfg_text"].split("\n")[:3] == [
        "SPECIFICATION SpecOperator", "INVARIANT TypeOKOperator",
        "PROPERTIES MidnightRecursOperator NoonLeadsToOneOperator"]
    # proposals: valid lexicon maps, one per task
    props = t["proposals"].set_index("task_id")
    assert list(t["proposals"].columns) == PROPOSAL_COLUMNS
    assert props.valid.all() and (props.problems == "[]").all()
    assert json.loads(props.loc[CLOCK, "mapping"])["hr"] == "hourVariable"
    # the map rows cover every renamed name; modules and files only for verified tasks
    mp = t["meaningful_map"]
    assert list(mp.columns) == MAP_COLUMNS
    assert len(mp[mp.task_id == CLOCK]) == len(CLOCK_MAP)
    assert set(mp.loc[(mp.task_id == CLOCK) & (mp.old == "hr"), "kind"]) == {"variable"}
    mods = t["meaningful_modules"]
    assert list(mods.columns) == MODULE_COLUMNS
    assert set(mods.task_id) == set(ok.index)
    assert set(mods.loc[mods.task_id == TOKENRING, "module"]) == {
        "ModelCheckTokenRingModule", "TokenRingModule", "RingUtilModule"}
    assert not (out / "files" / PETERSON).exists()
    assert (out / "files" / CLOCK / "ClockModule.cfg").read_text() == tasks.loc[CLOCK, "cfg_text"]
    # no original author name survives outside comments and strings in a verified copy
    rmap = mp.groupby("task_id")
    for tid, g in mods.groupby("task_id"):
        mapping = dict(zip(rmap.get_group(tid).old, rmap.get_group(tid).new))
        res = RenameResult(mapping=mapping, identifiers=[], modules=dict(zip(g.module, g.text)),
                           module_names={}, cfg_text=None, library_modules={})
        assert leftover_identifiers(res) == [], tid
        assert Path(g.path.iloc[0]).read_text() == g.text.iloc[0]
    status = json.loads((out / "status.json").read_text())
    assert status["verified"] == 5 and status["status"] == "ok"
    # the third condition's references, for verified tasks only
    refs = TestSet.load(_paths(inputs, out), meaningful=True).references()
    assert {k[0] for k in refs if k[1] == "meaningful"} == set(ok.index)
    r = refs[(TOKENRING, "meaningful")]
    assert (r.system_module, r.model_module, r.wrapper_module) == (
        "TokenRingModule", "ModelCheckTokenRingModule", "ModelCheckTokenRingModule")
    assert sorted(r.variables) == ["holderVariable", "stateVariable"]
    assert (TOKENRING, "meaningful") not in TestSet.load(_paths(inputs, tmp_path / "none")).references()


def test_bad_maps_are_recorded_and_the_task_is_unverified(inputs, tmp_path):
    replies = tmp_path / "replies.jsonl"
    bad_clock = dict(CLOCK_MAP, qtr="hour")            # duplicate of hr -> hour
    del bad_clock["Tick"]                              # missing
    bad_clock["Nope"] = "Whatever"                     # unexpected
    replies.write_text(json.dumps({"task_id": CLOCK, "reply": "```json\n" + json.dumps(bad_clock) + "\n```"}) + "\n"
                       + json.dumps({"task_id": TOKENRING, "reply": "I would rather not."}) + "\n")
    out = tmp_path / "meaningful"
    p = _params(proposer={"backend": "replay", "path": str(replies)}, tasks=[CLOCK, TOKENRING, PETERSON])
    s = _run(inputs, out, p)
    assert (s["tasks"], s["replies"], s["valid_maps"], s["applied"], s["verified"]) == (3, 2, 0, 0, 0)
    assert s["reasons"] == {"invalid_map": 2, "no_reply": 1}
    t = _tables(out)
    props = t["proposals"].set_index("task_id")
    assert props.loc[CLOCK, "model"] == "replies.jsonl" and props.loc[CLOCK, "proposer"] == "replay"
    kinds = [(p["kind"], p["name"]) for p in json.loads(props.loc[CLOCK, "problems"])]
    assert kinds == [("missing", "Tick"), ("unexpected", "Nope"), ("duplicate", "hr"), ("duplicate", "qtr")]
    assert json.loads(props.loc[CLOCK, "mapping"])["qtr"] == "hour"   # the reply's map is kept as given
    assert [p["kind"] for p in json.loads(props.loc[TOKENRING, "problems"])] == ["no_json"]
    assert props.loc[PETERSON, "reply_status"] == "missing" and pd.isna(props.loc[PETERSON, "reply"])
    tasks = t["meaningful_tasks"].set_index("task_id")
    assert not tasks.verified.any() and not tasks.applied.any()
    assert tasks.loc[CLOCK, "reason"] == "invalid_map" and "missing: no new name for Tick" in tasks.loc[CLOCK, "detail"]
    assert tasks.loc[PETERSON, "reason"] == "no_reply"
    assert t["meaningful_map"].empty and t["meaningful_modules"].empty and not (out / "files").exists()
    # the store's views count them
    import duckdb

    from alias.store.db import build_store

    root = tmp_path / "root"
    (root / "data").mkdir(parents=True)
    shutil.copytree(out, root / "data" / "meaningful")
    build_store(tmp_path / "a.duckdb", folders_under(root), REPO / "sql")
    con = duckdb.connect(str(tmp_path / "a.duckdb"), read_only=True)
    assert con.execute("SELECT proposed, replies, valid_maps, applied, verified FROM v_meaningful_verified"
                       ).fetchone() == (3, 2, 0, 0, 0)
    assert con.execute("SELECT reason, tasks FROM v_meaningful_failures").fetchall() == [
        ("invalid_map", 2), ("no_reply", 1)]
    assert dict(con.execute("SELECT kind, problems FROM v_meaningful_problems").fetchall()) == {
        "duplicate": 2, "missing": 1, "unexpected": 1, "no_json": 1, "no_reply": 1}


def test_missing_credentials_skip_cleanly(inputs, tmp_path, monkeypatch):
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    wd = tmp_path / "wd"
    (wd / "data").mkdir(parents=True)
    for d in ("ingest", "rename", "verify"):
        shutil.copytree(inputs / d, wd / "data" / d)
    raw = yaml.safe_load((REPO / "params.yaml").read_text())
    raw["corpus"].update(path=str(REPO / "alias/corpus/embedded"),
                         descriptions=str(REPO / "alias/corpus/embedded/descriptions.json"))
    raw["meaningful"]["proposer"] = {"backend": "anthropic", "enabled": True, "model": "claude-opus-test",
                                     "max_tokens": 8192}
    (wd / "params.yaml").write_text(yaml.safe_dump(raw))
    monkeypatch.chdir(wd)
    from alias.cli import main

    res = CliRunner().invoke(main, ["meaningful"])
    assert res.exit_code == 0, res.output
    assert res.stderr.splitlines()[0] == ("meaningful: skipped, anthropic: no API key; set ANTHROPIC_API_KEY "
                                          "in the environment to query this provider")
    out = wd / "data" / "meaningful"
    status = json.loads((out / "status.json").read_text())
    assert status["status"] == "missing_credentials" and status["verified"] == 0
    assert "ANTHROPIC_API_KEY" in status["message"]
    t = _tables(out)
    assert all(df.empty for df in t.values())
    assert list(t["proposals"].columns) == PROPOSAL_COLUMNS and list(t["meaningful_tasks"].columns) == TASK_COLUMNS


class NamingAnthropic(FakeAnthropic):
    """The Message Batches fake of test_batches, answering every request with the
    reply ``replies[custom_id]`` (a naming answer) instead of a module."""

    def __init__(self, reply_for):
        super().__init__()
        self.reply_for = reply_for  # prompt -> reply text

    def _results(self, bid):
        code, body, ctype = super()._results(bid)
        if code != 200:
            return code, body, ctype
        prompts = {r["custom_id"]: r["params"]["messages"][0]["content"] for r in self.batches[bid]["requests"]}
        lines = []
        for line in body.decode().splitlines():
            d = json.loads(line)
            if d["result"]["type"] == "succeeded":
                d["result"]["message"]["content"] = [{"type": "text", "text": self.reply_for(prompts[d["custom_id"]])}]
            lines.append(json.dumps(d))
        return code, ("\n".join(lines) + "\n").encode(), ctype


@pytest.mark.tlc
def test_anthropic_batch_proposer_lands_a_verified_task(inputs, tmp_path, monkeypatch):
    seen = []

    def reply(prompt):
        seen.append(prompt)
        return "Here are meaningful names:\n```json\n" + json.dumps(CLOCK_MAP, indent=2) + "\n```\n"

    out = tmp_path / "meaningful"
    p = _params(proposer={"backend": "anthropic", "enabled": True, "model": "claude-opus-test", "max_tokens": 2048},
                tasks=[CLOCK])
    with NamingAnthropic(reply) as srv:
        monkeypatch.setenv("ANTHROPIC_API_KEY", ANTHROPIC_KEY)
        monkeypatch.setenv("ANTHROPIC_BASE_URL", srv.base_url)
        s = _run(inputs, out, p)
        assert len(srv.creates) == 1 and len(srv.creates[0]["custom_ids"]) == 1
        body = srv.creates[0]["body"]["requests"][0]
        assert body["params"]["model"] == "claude-opus-test" and body["params"]["max_tokens"] == 2048
        assert body["custom_id"].startswith("meaningful_0_Clock")
    assert (s["tasks"], s["replies"], s["valid_maps"], s["applied"], s["verified"]) == (1, 1, 1, 1, 1)
    assert len(seen) == 1 and "- qtr: variable, defined in module Clock" in seen[0]
    t = _tables(out)
    prop = t["proposals"].iloc[0]
    assert prop.proposer == "anthropic" and prop.response_model == "claude-opus-test-20990101"
    assert json.loads(prop.mapping) == CLOCK_MAP and prop.valid
    task = t["meaningful_tasks"].iloc[0]
    assert task.verified and task.meaningful_distinct_states == 48 and task.system_module == "QuarterClock"
    assert "hour' = IF quarter = 3" in t["meaningful_modules"].iloc[0].text
    assert (out.parent / "work/ledgers/meaningful.sqlite").exists()
    # a rerun reads the finished ledger: no key, no server, the same proposal
    monkeypatch.delenv("ANTHROPIC_API_KEY")
    monkeypatch.delenv("ANTHROPIC_BASE_URL")
    s2 = _run(inputs, out, p)
    assert s2 == s
    assert _tables(out)["proposals"].iloc[0].reply == prop.reply


@pytest.mark.tlc
def test_random_view_replay_composes_the_map(inputs, tmp_path):
    rmap = pd.read_parquet(inputs / "rename" / "rename_map.parquet")
    rnd = dict(zip(rmap[rmap.task_id == CLOCK].old, rmap[rmap.task_id == CLOCK].new))
    replies = tmp_path / "r.jsonl"
    replies.write_text(json.dumps({"task_id": CLOCK, "reply": json.dumps({rnd[o]: n for o, n in CLOCK_MAP.items()})}))
    out = tmp_path / "meaningful"
    s = _run(inputs, out, _params(proposer={"backend": "replay", "path": str(replies)}, view="random", tasks=[CLOCK]))
    assert s["verified"] == 1 and s["view"] == "random"
    t = _tables(out)
    assert dict(zip(t["meaningful_map"].old, t["meaningful_map"].new)) == CLOCK_MAP
    assert set(json.loads(t["proposals"].iloc[0].mapping)) == set(rnd.values())  # keyed as the reply was


def test_batch_poll_timeout_fails_the_stage_and_a_rerun_resumes(inputs, tmp_path, monkeypatch):
    from alias.generate.types import PollTimeout

    out = tmp_path / "meaningful"
    bad = "```json\n" + json.dumps(dict(CLOCK_MAP, hr="Len")) + "\n```"  # an invalid map: no TLC needed
    p = _params(proposer={"backend": "anthropic", "enabled": True, "model": "claude-opus-test", "max_tokens": 8192},
                tasks=[CLOCK], batch_timeout_s=0.2)
    with NamingAnthropic(lambda prompt: bad) as srv:
        monkeypatch.setenv("ANTHROPIC_API_KEY", ANTHROPIC_KEY)
        monkeypatch.setenv("ANTHROPIC_BASE_URL", srv.base_url)
        srv.hold = True                     # the batch never ends while held
        with pytest.raises(PollTimeout):
            _run(inputs, out, p)
        assert not (out / "status.json").exists() and (out.parent / "work/ledgers/meaningful.sqlite").exists()
        srv.hold = False
        s = _run(inputs, out, p)            # polls the recorded batch, creates none
        assert len(srv.creates) == 1
    assert (s["replies"], s["valid_maps"], s["verified"]) == (1, 0, 0) and s["reasons"] == {"invalid_map": 1}
    problems = json.loads(_tables(out)["proposals"].iloc[0].problems)
    assert [(q["kind"], q["name"]) for q in problems] == [("standard_operator", "hr")]
