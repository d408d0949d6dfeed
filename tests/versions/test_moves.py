"""history.moved: a raise whose file was renamed is a move, on the record, the page and `errcat show`;
lines shifting, or a site dropped beside another, are no move."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from helpers import CHECK_CODE, jsonl_bytes

ARGS = ["--name", "acme/widgets", "--include", "pkg/**/*.py"]
SHIFTED = "# a comment that moves every line down\n\n" + CHECK_CODE
MESSAGE = "x must be positive, got {x}"


def records(dataset: Path) -> dict[str, dict]:
    return {r["message"]["text"]: r for r in map(json.loads, jsonl_bytes(dataset).splitlines())}


@pytest.fixture
def renamed(fixture_repo):
    """v1.0 raises in pkg/a.py; v1.1 shifts its lines; v2.0 renames the file; v3.0 shifts again."""
    fixture_repo.commit({"pkg/__init__.py": "", "pkg/a.py": CHECK_CODE}, tag="v1.0")
    fixture_repo.commit({"pkg/a.py": SHIFTED}, tag="v1.1")
    fixture_repo.commit({"pkg/a.py": None, "pkg/checks.py": SHIFTED}, tag="v2.0")
    fixture_repo.commit({"pkg/checks.py": "\n\n" + SHIFTED}, tag="v3.0")
    return fixture_repo


@pytest.mark.slow
def test_a_renamed_file_is_a_move_kept_over_releases_and_a_line_shift_is_none(renamed, cli, tmp_path):
    commits = {t.name: t.commit.hexsha for t in renamed.repo.tags}
    shifted = tmp_path / "shifted"
    assert cli("history", "--repo", renamed.path, *ARGS, "--out", shifted, "v1.0", "v1.1").exit_code == 0
    before = records(shifted / "acme" / "widgets")
    assert before[MESSAGE]["history"]["moved"] == [] and before[MESSAGE]["location"]["path"] == "pkg/a.py"

    out = tmp_path / "out"
    result = cli("history", "--repo", renamed.path, *ARGS, "--out", out, "v1.0", "v1.1", "v2.0", "v3.0")
    assert result.exit_code == 0, result.output
    assert cli("validate", out).exit_code == 0
    after = records(out / "acme" / "widgets")
    move = {"version": "v2.0", "commit": commits["v2.0"], "from_path": "pkg/a.py", "to_path": "pkg/checks.py"}
    for message in (MESSAGE, "x is far too large"):
        history = after[message]["history"]
        assert history["moved"] == [move]  # once: v3.0's line shift adds nothing
        assert history["first_seen"]["version"] == "v1.0" and not history["retired"] and not history["replaces"]
    assert after[MESSAGE]["id"] == before[MESSAGE]["id"]

    page = cli("show", after[MESSAGE]["id"], "--data", out, "--color=never")
    assert page.exit_code == 0, page.output
    assert f"Moved: pkg/a.py -> pkg/checks.py in v2.0 ({commits['v2.0'][:12]})" in page.stdout
    assert "Last seen: still present" in page.stdout  # a live record names no last_seen: the manifest's commit has it
    assert "Moved:" not in cli("show", before[MESSAGE]["id"], "--data", shifted, "--color=never").stdout

    site = tmp_path / "site"
    assert cli("render", "--data", out, "--out", site).exit_code == 0
    html = (site / "errors" / f"{after[MESSAGE]['id']}.html").read_text(encoding="utf-8")
    section = html[html.index('id="history"') : html.index("</section>", html.index('id="history"'))]
    v2 = commits["v2.0"][:12]
    assert f"<dt>Moved</dt><dd><code>pkg/a.py</code> &rarr; <code>pkg/checks.py</code> in <code>v2.0</code> (<code>{v2}</code>)</dd>" in section
    assert "<dt>Last seen</dt><dd>still present</dd>" in section
    markdown = tmp_path / "site-md"
    assert cli("render", "--data", out, "--out", markdown, "--format", "markdown").exit_code == 0
    md = next(markdown.rglob(f"{after[MESSAGE]['id']}.md")).read_text(encoding="utf-8")
    assert "## History" in md and f"- **Moved:** `pkg/a.py` → `pkg/checks.py` in `v2.0` \\(`{v2}`\\)" in md
    assert f"- **First seen:** `v1.0` \\(`{commits['v1.0'][:12]}`\\)" in md and "- **Last seen:** still present" in md


@pytest.mark.slow
def test_a_site_added_or_dropped_beside_another_is_no_move(fixture_repo, cli, tmp_path):
    fixture_repo.commit({"pkg/__init__.py": "", "pkg/a.py": CHECK_CODE, "pkg/b.py": CHECK_CODE}, tag="v1.0")
    fixture_repo.commit({"pkg/c.py": CHECK_CODE}, tag="v2.0")  # raised in one more file
    fixture_repo.commit({"pkg/a.py": None}, tag="v3.0")  # the primary's file drops it; b.py had it all along
    out = tmp_path / "out"
    assert cli("history", "--repo", fixture_repo.path, *ARGS, "--out", out, "v1.0", "v2.0", "v3.0").exit_code == 0
    record = records(out / "acme" / "widgets")[MESSAGE]
    assert [s["path"] for s in record["sites"]] == ["pkg/b.py", "pkg/c.py"]
    assert record["history"]["moved"] == []


@pytest.mark.slow
def test_a_moved_path_is_inert_on_the_page(fixture_repo, cli, tmp_path):
    hostile = "pkg/x<img src=x onerror=alert(1)>.py"
    fixture_repo.commit({"pkg/__init__.py": "", "pkg/a.py": CHECK_CODE}, tag="v1.0")
    fixture_repo.commit({"pkg/a.py": None, hostile: CHECK_CODE}, tag="v2.0")
    out = tmp_path / "out"
    result = cli("history", "--repo", fixture_repo.path, *ARGS, "--out", out, "v1.0", "v2.0")
    assert result.exit_code == 0, result.output
    record = records(out / "acme" / "widgets")[MESSAGE]
    assert record["history"]["moved"][0]["to_path"] == hostile
    site = tmp_path / "site"
    assert cli("render", "--data", out, "--out", site).exit_code == 0
    html = (site / "errors" / f"{record['id']}.html").read_text(encoding="utf-8")
    assert "<img" not in html
    assert "<dt>Moved</dt><dd><code>pkg/a.py</code> &rarr; <code>pkg/x&lt;img src=x onerror=alert(1)&gt;.py</code>" in html
