"""The stage registry: what the command line reads from a stage's source without importing
it is what the imported module says, and every dvc.yaml stage has an entry."""

import sys
import subprocess
from pathlib import Path

import pytest
import yaml

from alias.stages import registry

ROOT = Path(__file__).resolve().parents[1]


@pytest.mark.parametrize("name", registry.NAMES)
def test_the_description_read_from_source_matches_the_module(name):
    info, module = registry.describe(name), registry.load(name)
    assert module.NAME == name
    assert info.doc == (module.__doc__ or "").strip()
    assert info.keyed == getattr(module, "KEYED", None)
    assert callable(module.run)


def test_every_dvc_stage_is_registered_and_unknown_names_are_refused():
    stages = yaml.safe_load((ROOT / "dvc.yaml").read_text())["stages"]
    assert {s.split("@")[0] for s in stages} <= set(registry.NAMES)
    assert list(registry.STAGES) == list(registry.NAMES)
    with pytest.raises(KeyError, match="no stage 'nosuch'"):
        registry.load("nosuch")


def test_help_imports_no_stage_module():
    code = ("import sys; from click.testing import CliRunner; from alias.cli import main; "
            "r = CliRunner().invoke(main, ['--help']); assert r.exit_code == 0, r.output; "
            "print(sorted(m for m in sys.modules if m.startswith('alias.stages.') and m not in "
            "('alias.stages.registry', 'alias.stages.common')))")
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"
