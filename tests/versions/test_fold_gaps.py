"""What a fold records where it has no files to compare (#18): the gap between a backfill's newest
release and the catalogue's first state, and a release (or a sync) whose crawl skipped a source
file. The gap is one step of the history like any other (moves, links); a skipped file's entries
are unread at that state, never "removed" there."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from helpers import CHECK_CODE, jsonl_bytes

ARGS = ["--name", "acme/widgets", "--include", "pkg/**/*.py"]
CHECK = "x must be positive, got {x}"
LOAD = "\n\ndef load(p):\n    raise FileNotFoundError(f'{}: {{p}}')\n"


def rows(dataset: Path) -> dict[str, dict]:
    return {r["id"]: r for r in map(json.loads, jsonl_bytes(dataset).splitlines())}


def by_message(dataset: Path) -> dict[str, dict]:
    return {r["message"]["text"]: r for r in rows(dataset).values()}


def lineage(record: dict) -> dict:
    """What a history says, by commit (a sync's head has no version; a history run names it by its ref)."""
    h = record["history"]
    return {
        "first_seen": h["first_seen"]["commit"],
        "retired": h["retired"],
        "replaces": h["replaces"],
        "replaced_by": h["replaced_by"],
        "removed_in": (h["removed_in"] or {}).get("commit"),
        "moved": [(m["commit"], m["from_path"], m["to_path"]) for m in h["moved"]],
    }


@pytest.mark.slow
def test_the_gap_between_the_releases_and_the_catalogue_is_a_step_of_the_history(fixture_repo, cli, tmp_path):
    """v1.9 and v2.0 are backfilled behind a catalogue first synced at v2.5 and synced again at
    head. Between v2.0 and v2.5, check() went from pkg/a.py to pkg/checks.py and load's message
    was reworded; at head checks.py became validation.py and load was reworded again. The fold
    has no dataset of v2.5's files to compare, only the catalogue's records: it records the move
    at v2.5 (before the catalogue's own at head) and links v2.0's wording to v2.5's, retired in
    the catalogue, not to head's, which succeeded v2.5's there. One history run over every
    state says the same. Before, the fold recorded no move across the gap and linked v2.0's
    wording to head's."""
    head_code = "# the checks\n\n" + CHECK_CODE
    v19 = fixture_repo.commit({"pkg/__init__.py": "", "pkg/a.py": CHECK_CODE + LOAD.format("no such widget file")}, tag="v1.9")
    fixture_repo.commit({"pkg/a.py": "# widgets\n" + CHECK_CODE + LOAD.format("no such widget file")}, tag="v2.0")
    v25 = fixture_repo.commit({"pkg/a.py": LOAD.format("no widget file"), "pkg/checks.py": CHECK_CODE}, tag="v2.5")
    head = fixture_repo.commit({"pkg/a.py": LOAD.format("no widget file was found"), "pkg/checks.py": None, "pkg/validation.py": head_code})
    out = tmp_path / "output"
    assert cli("sync", "--repo", fixture_repo.path, *ARGS, "--ref", "v2.5", "--out", out).exit_code == 0
    assert cli("sync", "--repo", fixture_repo.path, *ARGS, "--out", out).exit_code == 0
    assert cli("history", "--repo", fixture_repo.path, *ARGS, "--per-release", tmp_path / "r", "v1.9", "v2.0").exit_code == 0
    folded = cli("history", "--fold", tmp_path / "r", "--catalogue", out, "--out", tmp_path / "backfill", "--changelog", tmp_path / "changelog.md")
    assert folded.exit_code == 0, folded.output
    assert cli("validate", tmp_path / "backfill").exit_code == 0
    dataset = tmp_path / "backfill" / "acme" / "widgets"
    after = by_message(dataset)

    moves = [(v25, "pkg/a.py", "pkg/checks.py"), (head, "pkg/checks.py", "pkg/validation.py")]
    for message in (CHECK, "x is far too large"):
        history = after[message]["history"]
        assert [(m["commit"], m["from_path"], m["to_path"]) for m in history["moved"]] == moves
        assert history["moved"][0]["version"] == "v2.5"  # the catalogue's first version with the new path
        assert history["first_seen"] == {"version": "v1.9", "commit": v19} and not history["retired"]
    old, mid, new = (after[f"no {w}: {{p}}"] for w in ("such widget file", "widget file", "widget file was found"))
    assert old["history"]["retired"] and old["history"]["replaced_by"] == mid["id"]
    assert old["history"]["removed_in"] == {"version": "v2.5", "commit": v25}
    assert mid["history"]["replaces"] == [old["id"]] and mid["history"]["replaced_by"] == new["id"]
    assert new["history"]["replaces"] == [mid["id"]]

    # One history run over every state records the same (its head is named by the ref it was given).
    one = tmp_path / "one"
    assert cli("history", "--repo", fixture_repo.path, *ARGS, "--out", one, "v1.9", "v2.0", "v2.5", head).exit_code == 0
    truth = rows(one / "acme" / "widgets")
    assert {rid: lineage(r) for rid, r in rows(dataset).items()} == {rid: lineage(r) for rid, r in truth.items()}

    changelog = (tmp_path / "changelog.md").read_text()
    # The catalogue's row: two wordings no release had, one replacing v2.0's, which retired there; two entries moved.
    assert f"| `{head[:12]}` (the catalogue in place, after `v2.0`) | 2 | 1 | 1 | 2 |" in changelog
    page = cli("show", after[CHECK]["id"], "--data", tmp_path / "backfill", "--color=never")
    assert page.exit_code == 0 and f"Moved: pkg/a.py -> pkg/checks.py in v2.5 ({v25[:12]})" in page.stdout


def generated(count: int, words: int = 40) -> str:
    """A module of ``count`` functions, each raising its own long message (most of a dataset's bytes)."""
    filler = " ".join(f"w{i}" for i in range(words))
    return "".join(f"def f{i}(x):\n    raise ValueError(f'case {i}: {filler} {{x}}')\n\n\n" for i in range(count))


def size_bound(cli, repo, ref: str, scratch: Path) -> int:
    """A max_output_bytes that ``ref``'s crawl meets only by leaving out pkg/gen.py."""
    assert cli("crawl", "--repo", repo.path, "--ref", ref, *ARGS, "--out", scratch).exit_code == 0
    sizes = [p.stat().st_size for p in (scratch / "acme" / "widgets").rglob("*") if p.is_file()]
    return max(sizes) * 3 // 5


def skipped(dataset: Path) -> list[str]:
    return [s["path"] for s in json.loads((dataset / "manifest.json").read_text())["skipped"]]


@pytest.mark.slow
def test_a_release_that_skipped_a_file_for_size_leaves_its_entries_unread_not_removed(fixture_repo, cli, tmp_path):
    """v1.1's dataset left pkg/gen.py out (max_output_bytes): its entries are unread at v1.1, not
    removed there. Before, the fold retired them at v1.1 (one v1.2 removed for real read
    "removed in v1.1", when v1.1 had it), linked one to v1.1's TypeError of the same words (a live
    entry "replaced" by another), and found one raised in gen.py and base.py, which v1.2's
    base.py no longer raises, moved from base.py to gen.py (v1.1's record had base.py alone)."""
    words = " ".join(f"w{i}" for i in range(40))
    ok_typed = f"\n\ndef typed(x):\n    raise TypeError(f'case 0: {words} {{x}}')\n"
    base = f"def base(x):\n    raise ValueError(f'case 3: {words} {{x}}')\n"  # gen.py's f3 too: one entry, two files
    v10 = fixture_repo.commit({"pkg/__init__.py": "", "pkg/ok.py": CHECK_CODE, "pkg/gen.py": generated(12), "pkg/base.py": base}, tag="v1.0")
    fixture_repo.commit({"pkg/ok.py": CHECK_CODE + ok_typed}, tag="v1.1")
    v12 = fixture_repo.commit({"pkg/gen.py": generated(12).replace("raise ValueError(f'case 1:", "print(f'case 1:"), "pkg/base.py": ""}, tag="v1.2")
    rel = tmp_path / "r"
    assert cli("history", "--repo", fixture_repo.path, *ARGS, "--per-release", rel, "v1.0", "v1.2").exit_code == 0
    bound = size_bound(cli, fixture_repo, "v1.1", tmp_path / "scratch")
    result = cli("crawl", "--repo", fixture_repo.path, "--ref", "v1.1", *ARGS, "--max-output-bytes", bound, "--out", rel / "v1.1")
    assert result.exit_code == 0, result.output
    assert skipped(rel / "v1.1" / "acme" / "widgets") == ["pkg/gen.py"]

    folded = cli("history", "--fold", rel, "--out", tmp_path / "o", "--changelog", tmp_path / "changelog.md")
    assert folded.exit_code == 0, folded.output
    assert cli("validate", tmp_path / "o").exit_code == 0
    after = rows(tmp_path / "o" / "acme" / "widgets").values()  # (gen.py's f0 and ok.py's typed share their words)
    kept = [r for r in after if r["message"]["text"].startswith("case ") and r["exception"]["name"] == "ValueError"]
    assert len(kept) == 12
    for record in kept:
        h = record["history"]
        if record["message"]["text"].startswith("case 1:"):  # removed for real in v1.2, unread in v1.1
            assert h["retired"] and h["removed_in"] == {"version": "v1.2", "commit": v12}
            assert h["retired_note"] == "removed after v1.0, by v1.2" and h["last_seen"]["version"] == "v1.0"
            assert h["replaced_by"] is None
        else:
            assert not h["retired"] and h["last_seen"] is None and h["replaced_by"] is None and h["moved"] == []
            assert h["first_seen"] == {"version": "v1.0", "commit": v10}
    (both,) = [r for r in kept if r["message"]["text"].startswith("case 3:")]
    assert [s["path"] for s in both["sites"]] == ["pkg/gen.py"]  # base.py's site went in v1.2; gen.py raised it all along
    typed = [r for r in after if r["exception"]["name"] == "TypeError"]
    assert len(typed) == 1 and typed[0]["message"]["text"] == f"case 0: {words} {{x}}"
    assert typed[0]["history"]["replaces"] == []  # nothing of gen.py was gone at v1.1 to be replaced
    table = (tmp_path / "changelog.md").read_text()
    assert "| `v1.1` | 1 | 0 | 0 | 0 |" in table and "| `v1.2` | 0 | 0 | 1 | 0 |" in table


@pytest.mark.slow
def test_the_newest_state_that_skipped_a_file_keeps_its_entries_unread(fixture_repo, cli, tmp_path):
    """A sync, and a fold behind a catalogue, whose crawl did not read pkg/gen.py (too many sites):
    its entries stay live, last seen where they were read, and the page says so; the next sync
    that reads the file takes them up again, never retired in between. Left out for size, they
    cannot fit the catalogue either: those that do not are left out of it (counts.omitted)
    before any retired record, and none is retired. Before, each of these retired them."""
    v10 = fixture_repo.commit({"pkg/__init__.py": "", "pkg/ok.py": CHECK_CODE, "pkg/gen.py": generated(12)}, tag="v1.0")
    v11 = fixture_repo.commit({"pkg/ok.py": CHECK_CODE.replace("far too large", "much too large")}, tag="v1.1")
    fixture_repo.commit({"pkg/ok.py": "# ok\n" + CHECK_CODE.replace("far too large", "much too large")}, tag="v1.2")
    out = tmp_path / "output"
    dataset = out / "acme" / "widgets"
    config = tmp_path / "errcat.toml"
    upstream = 'default = "w"\n[upstreams.w]\nurl = "https://github.com/acme/widgets"\ninclude = ["pkg/**/*.py"]\n'
    config.write_text(upstream)
    assert cli("sync", "--repo", fixture_repo.path, "--config", config, "--ref", "v1.0", "--out", out).exit_code == 0
    config.write_text(upstream + "max_file_sites = 10\n")  # gen.py has 12 raises: not read
    result = cli(
        "sync",
        "--repo",
        fixture_repo.path,
        "--config",
        config,
        "--ref",
        "v1.1",
        "--out",
        out,
        "--changelog",
        tmp_path / "sync.md",
        "--report",
        tmp_path / "sync.json",
    )
    assert result.exit_code == 0, result.output
    assert skipped(dataset) == ["pkg/gen.py"] and cli("validate", out).exit_code == 0
    # The pull request lists what changed in what was read: the rewording, not gen.py's entries as removed.
    report = json.loads((tmp_path / "sync.json").read_text())
    assert report["counts"]["removed"] == 0 and report["counts"]["reworded"] == 1
    assert "12 entries of source files this crawl did not read" in (tmp_path / "sync.md").read_text()
    gen = {rid: r for rid, r in rows(dataset).items() if r["message"]["text"].startswith("case ")}
    assert len(gen) == 12
    for record in gen.values():
        h = record["history"]
        assert not h["retired"] and h["removed_in"] is None and h["last_seen"] == {"version": "v1.0", "commit": v10}
    page = cli("show", next(iter(gen)), "--data", out, "--color=never")
    assert page.exit_code == 0
    assert f"Last seen: v1.0 ({v10[:12]}); not read since (a later crawl skipped one of its files)" in page.stdout

    # A backfill of v1.0 behind a catalogue first synced at v1.1, not reading gen.py: the same.
    fresh = tmp_path / "fresh"
    assert cli("sync", "--repo", fixture_repo.path, "--config", config, "--ref", "v1.1", "--out", fresh).exit_code == 0
    assert cli("history", "--repo", fixture_repo.path, *ARGS, "--per-release", tmp_path / "r", "v1.0").exit_code == 0
    folded = cli("history", "--fold", tmp_path / "r", "--catalogue", fresh, "--out", tmp_path / "backfill", "--changelog", tmp_path / "changelog.md")
    assert folded.exit_code == 0, folded.output
    assert cli("validate", tmp_path / "backfill").exit_code == 0
    backfilled = rows(tmp_path / "backfill" / "acme" / "widgets")
    assert {rid: backfilled[rid]["history"]["last_seen"] for rid in gen} == {rid: {"version": "v1.0", "commit": v10} for rid in gen}
    assert not any(backfilled[rid]["history"]["retired"] for rid in gen)
    assert "12 entries of `v1.0` the catalogue's crawl did not read" in (tmp_path / "changelog.md").read_text()

    # Read again: live as before, first seen where they were.
    config.write_text(upstream)
    assert cli("sync", "--repo", fixture_repo.path, "--config", config, "--ref", "v1.1", "--out", out).exit_code == 0
    for rid, record in rows(dataset).items():
        if rid in gen:
            h = record["history"]
            assert not h["retired"] and h["last_seen"] is None and h["first_seen"] == {"version": "v1.0", "commit": v10}

    # Left out for size at v1.2: none retired; what does not fit is left out and counted, the retired record kept.
    bound = size_bound(cli, fixture_repo, "v1.2", tmp_path / "scratch")
    config.write_text(upstream + f"max_output_bytes = {bound}\n")
    result = cli("sync", "--repo", fixture_repo.path, "--config", config, "--ref", "v1.2", "--out", out)
    assert result.exit_code == 0, result.output
    assert skipped(dataset) == ["pkg/gen.py"] and cli("validate", out).exit_code == 0
    manifest = json.loads((dataset / "manifest.json").read_text())
    now = rows(dataset)
    kept = gen.keys() & now.keys()
    assert manifest["counts"]["omitted"] == 12 - len(kept) > 0 and manifest["counts"]["retired"] == 1
    assert all(not now[rid]["history"]["retired"] and now[rid]["history"]["last_seen"]["commit"] == v11 for rid in kept)
    assert [r["message"]["text"] for r in now.values() if r["history"]["retired"]] == ["x is far too large"]


@pytest.mark.slow
def test_a_successor_across_the_gap_comes_after_the_releases(fixture_repo, cli, tmp_path):
    """A catalogue whose own history reaches back before the range (a history of v1.0 and v3.0)
    holds v1.0's wording, retired by v3.0: v2.0's wording, which only v2.0 had, was not succeeded
    by an entry first seen before it. It is retired after v2.0, by v3.0, with no successor."""

    def code(message: str) -> str:
        return f"def check(w):\n    if w:\n        raise ValueError(f'{message}: {{w}}')\n"

    fixture_repo.commit({"pkg/__init__.py": "", "pkg/a.py": code("widget is broken")}, tag="v1.0")
    fixture_repo.commit({"pkg/a.py": code("widget is broken now")}, tag="v2.0")
    v30 = fixture_repo.commit({"pkg/a.py": "def check(w):\n    return w\n"}, tag="v3.0")
    out = tmp_path / "output"
    assert cli("history", "--repo", fixture_repo.path, *ARGS, "--out", out, "v1.0", "v3.0").exit_code == 0
    assert cli("history", "--repo", fixture_repo.path, *ARGS, "--per-release", tmp_path / "r", "v2.0").exit_code == 0
    folded = cli("history", "--fold", tmp_path / "r", "--catalogue", out, "--out", tmp_path / "backfill")
    assert folded.exit_code == 0, folded.output
    after = by_message(tmp_path / "backfill" / "acme" / "widgets")
    old, new = after["widget is broken: {w}"]["history"], after["widget is broken now: {w}"]["history"]
    assert old["replaces"] == [] and old["removed_in"]["commit"] == v30
    assert new["retired"] and new["replaced_by"] is None and new["retired_note"] == "removed after v2.0, by v3.0"
