"""A dataset's path in `history --fold`'s and `validate`'s error lines: escaped, so a name an
artifact chose (a newline, ESC) neither splits the one line nor acts on a terminal."""

from __future__ import annotations

import json

import pytest
from test_backfill import ARGS, releases

EVIL = "v1.9\n::error::x\x1b[2J"
SHOWN = r"v1.9\n::error::x\x1b[2J"


def _not_json(manifest):
    manifest.write_text("{not json")


def _no_release(manifest):
    manifest.write_text(json.dumps({**json.loads(manifest.read_text()), "ref": "main"}))


@pytest.mark.slow
@pytest.mark.parametrize(
    ("tamper", "says"),
    [
        (_not_json, "manifest.json: not a valid manifest"),  # load_manifest's error
        (_no_release, "made from 'main', no release"),  # fold_datasets' own
    ],
    ids=["load_manifest", "fold_datasets"],
)
def test_a_folds_error_line_shows_a_dataset_path_escaped(fixture_repo, cli, tmp_path, tamper, says):
    repo = releases(fixture_repo)
    assert cli("history", "--repo", repo.path, *ARGS, "--per-release", tmp_path / "r", "v1.9").exit_code == 0
    (tmp_path / "r" / "v1.9").rename(tmp_path / "r" / EVIL)
    tamper(tmp_path / "r" / EVIL / "acme" / "widgets" / "manifest.json")
    result = cli("history", "--fold", tmp_path / "r", "--out", tmp_path / "o")
    assert result.exit_code in (1, 2) and "Traceback" not in result.output, result.output
    assert "\x1b" not in result.output
    (line,) = [ln for ln in result.output.splitlines() if ln.strip()]
    assert line.startswith("errcat: ") and SHOWN in line and says in line, line
    assert not (tmp_path / "o").exists()


@pytest.mark.slow
def test_validate_shows_a_record_files_name_escaped(fixture_repo, cli, tmp_path):
    repo = releases(fixture_repo)
    assert cli("crawl", "--repo", repo.path, *ARGS, "--ref", "v1.9", "--out", tmp_path / "o").exit_code == 0
    (dataset,) = {p.parent for p in (tmp_path / "o").rglob("manifest.json")}
    (dataset / "errors" / "evil\n::error::x\x1b[2J.json").write_text("{}")
    result = cli("validate", tmp_path / "o")
    assert result.exit_code == 1
    assert "\x1b" not in result.output
    lines = [line for line in result.output.splitlines() if not line.startswith("validating ")]  # (progress)
    assert all(line.startswith(str(dataset)) for line in lines), lines
    assert any(r"errors/evil\n::error::x\x1b[2J.json#/id: file name is not the record's id" in line for line in lines), lines
