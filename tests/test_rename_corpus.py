"""CIR over the real corpus (tlaplus-examples), folder by folder.

Each folder holding ``.tla`` files is one task: its modules are the author modules and
the Community Modules / TLAPS library in ``../shared/corpus/deps`` are the library.
"""
from __future__ import annotations

import collections
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from alias.rename.cir import RenameResult, leftover_identifiers, rename_task
from alias.tla.syntax import parse

pytestmark = pytest.mark.corpus

SHARED = Path(__file__).resolve().parents[1].parent / "shared"
SPECS = SHARED / "corpus" / "tlaplus-examples" / "specifications"
DEPS = SHARED / "corpus" / "deps"


def _folders() -> dict[Path, dict[str, str]]:
    out: dict[Path, dict[str, str]] = collections.defaultdict(dict)
    for p in sorted(SPECS.rglob("*.tla")):
        out[p.parent][p.stem] = p.read_text(encoding="utf-8")
    return dict(out)


def _library() -> dict[str, str]:
    return {p.stem: p.read_text(encoding="utf-8") for p in sorted(DEPS.rglob("*.tla"))}


def _rename(folder: Path, mods: dict[str, str], lib: dict[str, str]) -> RenameResult:
    lib = {k: v for k, v in lib.items() if k not in mods}
    return rename_task(mods, None, None, 0, folder.relative_to(SPECS).as_posix(), lib)


@pytest.fixture(scope="module")
def corpus():
    if not SPECS.is_dir():
        pytest.skip(f"corpus not found at {SPECS}")
    lib = _library()
    results: dict[Path, RenameResult | Exception] = {}
    folders = _folders()
    for folder, mods in folders.items():
        try:
            results[folder] = _rename(folder, mods, lib)
        except Exception as e:  # noqa: BLE001 - counted below
            results[folder] = e
    return folders, lib, results


def _ok(results):
    return {f: r for f, r in results.items() if isinstance(r, RenameResult)}


def test_most_folders_rename(corpus):
    folders, _, results = corpus
    ok = _ok(results)
    failed = {f.name: repr(r) for f, r in results.items() if f not in ok}
    assert len(ok) >= 0.98 * len(folders), failed


def test_same_length_names_and_bytes(corpus):
    folders, _, results = corpus
    for folder, r in _ok(results).items():
        for old, new in r.mapping.items():
            assert len(old) == len(new), (folder, old, new)
        inv = {v: k for k, v in r.module_names.items()}
        for new_name, text in r.modules.items():
            old_text = folders[folder][inv.get(new_name, new_name)]
            if old_text.isascii():
                assert len(text.encode()) == len(old_text.encode()), (folder, new_name)
                assert [len(x) for x in text.splitlines()] == \
                    [len(x) for x in old_text.splitlines()]


def test_no_leftover_identifiers(corpus):
    _, _, results = corpus
    left = {f.name: leftover_identifiers(r)[:5] for f, r in _ok(results).items()}
    assert {k: v for k, v in left.items() if v} == {}


def test_no_new_parse_errors(corpus):
    folders, _, results = corpus
    for folder, r in _ok(results).items():
        inv = {v: k for k, v in r.module_names.items()}
        for new_name, text in r.modules.items():
            old_text = folders[folder][inv.get(new_name, new_name)]
            if not parse(old_text).root_node.has_error:
                assert not parse(text).root_node.has_error, (folder, new_name)


def test_twice_byte_identical(corpus):
    folders, lib, results = corpus
    for folder, r in _ok(results).items():
        again = _rename(folder, folders[folder], lib)
        assert again.modules == r.modules and again.mapping == r.mapping, folder


def _sample(results, k: int = 20) -> list[tuple[Path, str]]:
    """Every n-th top-level corpus module (sorted), deterministic."""
    pool = sorted((f, m) for f, r in _ok(results).items() for m in r.module_names
                  if m in _FOLDER_MODULES(f))
    step = max(1, len(pool) // k)
    return pool[::step][:k]


def _FOLDER_MODULES(folder: Path) -> set[str]:
    return {p.stem for p in folder.glob("*.tla")}


@pytest.mark.tlc
def test_sany_on_sample_of_renamed_modules(corpus, sany):
    folders, _, results = corpus
    library = (str(DEPS / "community-modules"), str(DEPS / "tlaps-library"))
    sample = _sample(results)

    def check(item):
        folder, module = item
        r = results[folder]
        ok, out = sany(r.modules, r.module_names[module], library)
        if ok:
            return folder, module, True, True, ""
        originals = {p.stem: p.read_text(encoding="utf-8") for p in folder.glob("*.tla")}
        orig_ok, _ = sany(originals, module, library)
        return folder, module, orig_ok, False, out

    with ThreadPoolExecutor(2) as ex:
        rows = list(ex.map(check, sample))
    broke = [(f.name, m, out[-800:]) for f, m, orig_ok, ok, out in rows if orig_ok and not ok]
    assert len(sample) >= 15
    assert broke == []
    assert sum(ok for *_, ok, _ in rows) >= len(sample) // 2
