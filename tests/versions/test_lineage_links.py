"""Lineage links made by review (``curated/<owner>/<name>/lineage/links.yaml``): a V0 check whose
V1 check is worded anew has no successor a word rule can find; a reviewed link gives it one, the
history writes it, ``curate check`` holds it to the catalogue, and the page and ``errcat match``
say the link was made by review, not derived."""

from __future__ import annotations

import json
from pathlib import Path

import jsonschema
import pytest

from crawler.catalogue.lineage_links import apply, problems
from crawler.model.records import CuratedLinks
from crawler.model.schemas import schema_for
from tests.versions.test_history import by_template, tree

ARGS = ["--name", "acme/widgets", "--include", "pkg/**/*.py"]

V0 = """
def check_cache(max_len, blocks, block_size):
    if max_len > blocks * block_size:
        raise ValueError(f"The model's max seq len ({max_len}) is larger than the KV cache can store ({blocks * block_size})")
"""
V1 = """
def check_memory(needed, available):
    if needed > available:
        raise ValueError(f"To serve one request of the longest length, {needed} GiB of KV cache memory is needed, over the {available} GiB left")
"""
OLD_TEXT = "The model's max seq len ({max_len}) is larger than the KV cache can store ({blocks * block_size})"
NEW_TEXT = "To serve one request of the longest length, {needed} GiB of KV cache memory is needed, over the {available} GiB left"
REVIEW = {"why": "Both check that one request of max_len fits in the KV cache.", "reviewer": "a reviewer", "old_release": "v1.1", "commit": "0123456789abcdef"}


@pytest.fixture
def upstream(fixture_repo):
    fixture_repo.commit({"pkg/__init__.py": "", "pkg/v0/cache.py": V0}, tag="v1.0")
    fixture_repo.commit({"pkg/v1/kv.py": V1}, tag="v1.1")  # the V1 check comes while V0 lives on
    fixture_repo.commit({"pkg/v0/cache.py": None}, tag="v2.0")  # V0 removed
    return fixture_repo


def _links(home: Path, *links: tuple[str, str]) -> Path:
    path = home / "curated" / "acme" / "widgets" / "lineage" / "links.yaml"
    path.parent.mkdir(parents=True, exist_ok=True)
    body = "".join(f"- old: {old}\n  new: {new}\n  review:\n" + "".join(f"    {k}: {json.dumps(v)}\n" for k, v in REVIEW.items()) for old, new in links)
    path.write_text("links:\n" + body if body else "links: []\n")
    return path


@pytest.mark.slow
def test_a_reviewed_link_succeeds_a_check_worded_anew(upstream, cli, tmp_path, monkeypatch):
    home = tmp_path / "home"
    (home / "curated").mkdir(parents=True)
    monkeypatch.setenv("ERRCAT_HOME", str(home))
    out = tmp_path / "out"
    history = ("history", "--repo", upstream.path, *ARGS, "--out", out, "v1.0", "v1.1", "v2.0")
    assert cli(*history).exit_code == 0
    records = by_template(out / "acme" / "widgets")
    old, new = records[OLD_TEXT], records[NEW_TEXT]
    assert old["history"]["retired"] and old["history"]["replaced_by"] is None  # no word rule links them
    assert "replaced_by_review" not in old["history"]  # absent, as in schema 7, when no review linked it

    _links(home, (old["id"], new["id"]))
    check = cli("curate", "check", "--data", out)
    assert check.exit_code == 0, check.output
    assert "lineage  1 successor(s) linked by review hold" in check.stdout
    made = cli(*history)
    assert made.exit_code == 0, made.output
    assert "1 successor(s) linked by review" in made.output
    records = by_template(out / "acme" / "widgets")
    old, new = records[OLD_TEXT], records[NEW_TEXT]
    assert old["history"]["replaced_by"] == new["id"] and old["history"]["replaced_by_review"] == REVIEW
    assert new["history"]["replaces"] == [old["id"]]
    written = json.loads((out / "acme" / "widgets" / "errors" / f"{old['id']}.json").read_text())
    jsonschema.validate(written, schema_for("record"))
    assert written["schema_version"] == "8" and written["history"]["replaced_by_review"] == REVIEW

    page = cli("show", old["id"], "--data", out).stdout
    assert f"Replaced by: {new['id']}: linked by review, not derived from the words: Both check that one request" in page
    assert "read by a reviewer in v1.1 and at 0123456789ab" in page
    successor_page = cli("show", new["id"], "--data", out).stdout
    assert f"Replaces: {old['id']}: linked by review, not derived" in successor_page
    got = json.loads(cli("match", "--data", out, "--json", "ValueError: The model's max seq len (4096) is larger than the KV cache can store (2048)").stdout)
    jsonschema.validate(got, schema_for("match"))
    top = got["matches"][0]
    assert top["id"] == old["id"] and [(s["id"], s["how"]) for s in top["lineage"]["succeeded_by"]] == [(new["id"], "linked by review")]
    assert top["lineage"]["today"] == new["id"]
    text = cli("match", "--data", out, "ValueError: The model's max seq len (4096) is larger than the KV cache can store (2048)").stdout
    assert f"succeeded by {new['id']} (linked by review; raised today" in text

    # the same run again, from no cache: the same bytes
    again = tmp_path / "again"
    assert cli("history", "--repo", upstream.path, *ARGS, "--out", again, "--no-cache", "v1.0", "v1.1", "v2.0").exit_code == 0
    assert tree(out) == tree(again)

    # the link taken out of the file: taken out of the records
    _links(home)
    assert cli(*history).exit_code == 0
    records = by_template(out / "acme" / "widgets")
    assert records[OLD_TEXT]["history"]["replaced_by"] is None and "replaced_by_review" not in records[OLD_TEXT]["history"]
    assert records[NEW_TEXT]["history"]["replaces"] == []


@pytest.mark.slow
def test_curate_check_refuses_unknown_live_and_cyclic_links(upstream, cli, tmp_path, monkeypatch):
    home = tmp_path / "home"
    (home / "curated").mkdir(parents=True)
    monkeypatch.setenv("ERRCAT_HOME", str(home))
    out = tmp_path / "out"
    assert cli("history", "--repo", upstream.path, *ARGS, "--out", out, "v1.0", "v1.1", "v2.0").exit_code == 0
    records = by_template(out / "acme" / "widgets")
    old, new = records[OLD_TEXT]["id"], records[NEW_TEXT]["id"]
    path = _links(home, (old, "0123456789abcdef"))
    check = cli("curate", "check", "--data", out)
    assert check.exit_code == 1 and f"invalid  {path}: links[0] {old} -> 0123456789abcdef: 0123456789abcdef is not in this dataset" in check.stdout
    _links(home, (new, old))
    check = cli("curate", "check", "--data", out)
    assert check.exit_code == 1 and f"{new} is live here (a link names a retired entry's successor)" in check.stdout
    path.write_text("links:\n- old: nothex\n  new: 0123456789abcdef\n")
    check = cli("curate", "check", "--data", out)
    assert check.exit_code == 1 and f"invalid  {path}:2: links.0.old:" in check.stdout
    # a history run refuses a file that does not validate, in one line, and writes nothing
    before = tree(out)
    failed = cli("history", "--repo", upstream.path, *ARGS, "--out", out, "v1.0", "v1.1", "v2.0")
    assert failed.exit_code != 0 and failed.stderr.splitlines()[-1].startswith(f"errcat: {path}:2: links.0.old:") and "Traceback" not in failed.output
    assert tree(out) == before


@pytest.mark.slow
def test_a_history_that_starts_after_a_links_old_release_is_not_held_to_it(upstream, cli, tmp_path, monkeypatch):
    """A catalogue synced from a later release on (here v1.1) never held the entries of the
    releases a link was read in (v1.0): the link is neither refused nor applied there; a link
    read in a release the history does reach is held to it as before."""
    home = tmp_path / "home"
    (home / "curated").mkdir(parents=True)
    monkeypatch.setenv("ERRCAT_HOME", str(home))
    full, late = tmp_path / "full", tmp_path / "late"
    assert cli("history", "--repo", upstream.path, *ARGS, "--out", full, "v1.0", "v1.1", "v2.0").exit_code == 0
    assert cli("history", "--repo", upstream.path, *ARGS, "--out", late, "v1.1", "v2.0").exit_code == 0
    old, new = by_template(full / "acme" / "widgets")[OLD_TEXT]["id"], by_template(full / "acme" / "widgets")[NEW_TEXT]["id"]
    path = home / "curated" / "acme" / "widgets" / "lineage" / "links.yaml"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(
        f"links:\n- old: {'e' * 16}\n  new: {new}\n  review:\n"
        + "".join(f"    {k}: {json.dumps(v if k != 'old_release' else 'v1.0')}\n" for k, v in REVIEW.items())
    )
    check = cli("curate", "check", "--data", late)
    assert check.exit_code == 0, check.output
    assert "lineage  1 link(s) of releases older than this history reaches back to: not checked" in check.stdout
    # the full history reaches v1.0: the same link is held to it, and its unknown id refused
    check = cli("curate", "check", "--data", full)
    assert check.exit_code == 1 and f"{'e' * 16} is not in this dataset" in check.stdout
    # a link read in a release the late history holds (v1.1) is held to it: a good one holds, an unknown id is refused
    _links(home, (old, new))
    check = cli("curate", "check", "--data", late)
    assert check.exit_code == 0 and "lineage  1 successor(s) linked by review hold" in check.stdout, check.output
    _links(home, ("f" * 16, new))
    check = cli("curate", "check", "--data", late)
    assert check.exit_code == 1 and f"{'f' * 16} is not in this dataset" in check.stdout


def _record(eid: str, retired: bool, replaced_by: str | None = None, replaces: list[str] | None = None) -> dict:
    return {"id": eid, "history": {"retired": retired, "replaced_by": replaced_by, "replaces": replaces or []}}


def _of(*pairs: tuple[str, str]) -> CuratedLinks:
    return CuratedLinks.model_validate({"links": [{"old": o, "new": n, "review": REVIEW} for o, n in pairs]})


A, B, C = "a" * 16, "b" * 16, "c" * 16


def test_a_reviewed_link_replaces_a_derived_one_and_never_makes_a_cycle():
    records = [_record(A, True, replaced_by=C), _record(B, False, replaces=[]), _record(C, False, replaces=[A])]
    done = apply(records, _of((A, B)))
    assert done.applied == 1 and not done.notes
    assert records[0]["history"]["replaced_by"] == B and records[0]["history"]["replaced_by_review"] == REVIEW
    assert records[1]["history"]["replaces"] == [A] and records[2]["history"]["replaces"] == []  # the derived one taken back
    # B retired and succeeded by A: linking A to B would close a loop
    records = [_record(A, True), _record(B, True, replaced_by=A)]
    done = apply(records, _of((A, B)))
    assert done.applied == 0 and done.notes == [f"{A} -> {B}: would make a cycle, link left out"]
    assert records[0]["history"]["replaced_by"] is None
    assert problems(_of((A, B)), {r["id"]: r for r in records}, Path("links.yaml")) == {
        A: f"links.yaml: links[0] {A} -> {B}: makes a cycle ({B}'s successors lead back to {A})"
    }
    # a live old entry, an unknown one: left out and said
    records = [_record(A, False), _record(B, False)]
    assert apply(records, _of((A, B), (C, B))).notes == [
        f"{A} -> {B}: {A} is live, link left out",
        f"{C} -> {B}: {C} is not a record of this history, link left out",
    ]
    # no file at all: the records keep what they say
    records = [{"id": A, "history": {"retired": True, "replaced_by": B, "replaced_by_review": REVIEW, "replaces": []}}, _record(B, False, replaces=[A])]
    assert apply(records, None).applied == 0 and records[0]["history"]["replaced_by"] == B


def test_a_links_file_names_one_successor_for_each_entry():
    with pytest.raises(ValueError, match="linked twice"):
        _of((A, B), (A, C))
    with pytest.raises(ValueError, match="linked to itself"):
        _of((A, A))


@pytest.mark.slow
def test_an_invalid_links_file_is_refused_before_any_crawl_or_fold(upstream, cli, tmp_path, monkeypatch):
    """Each run that reads the links (a crawl, a history, a fold, a sync) refuses an invalid file
    in one line, file and line, before it crawls or folds a thing, and writes nothing."""
    home = tmp_path / "home"
    (home / "curated").mkdir(parents=True)
    monkeypatch.setenv("ERRCAT_HOME", str(home))
    releases, catalogue = tmp_path / "releases", tmp_path / "catalogue"
    assert cli("history", "--repo", upstream.path, *ARGS, "--per-release", releases, "v1.0", "v1.1").exit_code == 0
    assert cli("sync", "--repo", upstream.path, *ARGS, "--out", catalogue).exit_code == 0
    path = _links(home)
    path.write_text("links:\n- old: nothex\n  new: 0123456789abcdef\n")
    before = {root: tree(root) for root in (releases, catalogue)}
    runs = {
        "crawl": ("crawl", "--repo", upstream.path, *ARGS, "--ref", "v2.0", "--out", tmp_path / "crawled"),
        "history": ("history", "--repo", upstream.path, *ARGS, "--out", tmp_path / "history", "v1.0", "v1.1", "v2.0"),
        "per-release": ("history", "--repo", upstream.path, *ARGS, "--per-release", tmp_path / "each", "v1.0", "v1.1"),
        "fold": ("history", "--fold", releases, "--out", tmp_path / "folded"),
        "fold behind a catalogue": ("history", "--fold", releases, "--catalogue", catalogue, "--out", tmp_path / "behind"),
        "sync": ("sync", "--repo", upstream.path, *ARGS, "--out", catalogue),
    }
    for what, args in runs.items():
        failed = cli(*args)
        lines = failed.stderr.splitlines()
        assert failed.exit_code != 0, what
        assert lines[-1].startswith(f"errcat: {path}:2: links.0.old:") and "Traceback" not in failed.output, (what, failed.output)
        # nothing crawled, extracted or folded first
        assert not any(word in line for line in lines[:-1] for word in ("crawling", "extract", "carrying", "folding", "parsed")), (what, lines)
    for name in ("crawled", "history", "each", "folded", "behind"):
        assert not (tmp_path / name / "acme").exists(), name
    assert {root: tree(root) for root in (releases, catalogue)} == before


@pytest.mark.slow
def test_a_weak_answer_names_its_successor_too(fixture_repo, cli, tmp_path, monkeypatch):
    """A message of fields alone fits its retired entry only weakly; the answer still gives the
    chain of successors (here one linked by review) and today's page, as weak as it is."""
    home = tmp_path / "home"
    (home / "curated").mkdir(parents=True)
    monkeypatch.setenv("ERRCAT_HOME", str(home))
    fixture_repo.commit({"pkg/__init__.py": "", "pkg/run.py": 'def start(runner, reason):\n    raise ValueError(f"{runner}: {reason}")\n'}, tag="v1.0")
    fixture_repo.commit(
        {"pkg/run.py": None, "pkg/core.py": 'def launch(runner, why):\n    raise ValueError(f"The engine core of {runner} failed to start, because {why}")\n'},
        tag="v2.0",
    )
    out = tmp_path / "out"
    history = ("history", "--repo", fixture_repo.path, *ARGS, "--out", out, "v1.0", "v2.0")
    assert cli(*history).exit_code == 0
    records = by_template(out / "acme" / "widgets")
    old, new = records["{runner}: {reason}"], records["The engine core of {runner} failed to start, because {why}"]
    _links(home, (old["id"], new["id"]))
    assert cli(*history).exit_code == 0
    paste = "ValueError: worker-3: CUDA out of memory"
    got = json.loads(cli("match", "--data", out, "--json", paste).stdout)
    jsonschema.validate(got, schema_for("match"))
    assert got["matches"] == []
    weak = next(w for w in got["weak"] if w["id"] == old["id"])  # (after the successor itself, worded a little alike)
    assert weak["strength"] == "weak" and weak["match"] == "full"
    assert [(s["id"], s["how"]) for s in weak["lineage"]["succeeded_by"]] == [(new["id"], "linked by review")] and weak["lineage"]["today"] == new["id"]
    text = cli("match", "--data", out, paste)
    assert text.exit_code == 1  # no match: a weak candidate is none
    assert f"  {old['id']}  covers 8%, same exception  ValueError: {{runner}}: {{reason}}\n      retired: raised in v1.0, removed in v2.0\n" in text.stdout
    assert f"      succeeded by {new['id']} (linked by review; raised today" in text.stdout
