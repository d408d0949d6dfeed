"""Curated explanations: merge, validation, related errors, the check, relinking, drafts."""

from __future__ import annotations

import json
import threading
from http.server import BaseHTTPRequestHandler, HTTPServer
from pathlib import Path

import pytest
from helpers import FOREIGN_YAML, jsonl_bytes

from crawler.catalogue.explanations import load_set, parse_file
from crawler.catalogue.related import compute
from crawler.extract.native import CHECKS
from crawler.extract.templates import text_parts
from crawler.model.kinds import NATIVE
from crawler.model.records import CuratedFile
from crawler.source.globs import native_language

ROOT = Path(__file__).resolve().parents[2]
SHIPPED = ROOT / "curated"

CONNECTORS = """
class KVConnectorBase:
    def __init__(self, vllm_config):
        if vllm_config.kv_transfer_config is None:
            raise ValueError("kv_transfer_config must be set for KVConnectorBase")
        self.config = vllm_config


def create_connector(config):
    if config.kv_transfer_config is None:
        raise ValueError("kv_transfer_config must be set to create a connector")
    if config.kv_role not in ("kv_producer", "kv_consumer"):
        raise ValueError(f"Unsupported kv_role: {config.kv_role}")
    return KVConnectorBase(config)
"""

MESSAGE_A = "kv_transfer_config must be set for KVConnectorBase"
MESSAGE_B = "KVConnectorBase needs a kv_transfer_config; pass --kv-transfer-config"

TEXT = """\
id: {id}
# a curator's comment survives every relink
what_it_means: >-
  The connector was built without a KV transfer configuration.
when_it_happens:
  trigger: "`vllm_config.kv_transfer_config` is None"
  common_situations:
    - Starting a disaggregated-prefill instance without --kv-transfer-config.
solutions:
  - Pass --kv-transfer-config with a connector name and role.
example_fix:
  before: |
    vllm serve m
  after: |
    vllm serve m --kv-transfer-config '{{"kv_connector":"X","kv_role":"kv_both"}}'
defensive_patterns:
  - strategy: validate before calling
    code: |
      if cfg.kv_transfer_config is None:
          raise SystemExit("set --kv-transfer-config")
prevention:
  - Keep the connector flags in one launch script.
review:
  status: {status}
  commit: {commit}
  exception: ValueError
  template: {template}
  guards:
    - vllm_config.kv_transfer_config is None
  path: pkg/connector.py
  qualname: KVConnectorBase.__init__
"""


def crawl(cli, repo, out, ref, curated, name="acme/widgets"):
    return cli("crawl", "--repo", repo.path, "--ref", ref, "--name", name, "--include", "pkg/**/*.py", "--out", out, "--curated", curated)


def records(out: Path, name="acme/widgets") -> dict[str, dict]:
    lines = jsonl_bytes(out / name).splitlines()
    return {r["message"]["text"]: r for r in map(json.loads, lines)}


def tree(directory: Path) -> dict[str, bytes]:
    return {p.relative_to(directory).as_posix(): p.read_bytes() for p in sorted(directory.rglob("*")) if p.is_file()}


@pytest.fixture
def upstream(fixture_repo):
    fixture_repo.commit({"pkg/__init__.py": "", "pkg/connector.py": CONNECTORS}, tag="v1")
    fixture_repo.commit({"pkg/connector.py": CONNECTORS.replace(MESSAGE_A, MESSAGE_B)}, tag="v2")
    return fixture_repo


def write_curated(curated: Path, eid: str, status="reviewed", template=MESSAGE_A, commit="a" * 40, name="acme/widgets") -> Path:
    path = curated / name / f"{eid}.yaml"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(TEXT.format(id=eid, status=status, commit=commit, template=json.dumps(template)), encoding="utf-8")
    return path


@pytest.mark.slow
def test_a_curated_file_reviewed_after_the_commit_crawled_is_said_to_be_expected(upstream, cli, tmp_path):
    """Crawling an older release than the one a file was reviewed at: its entry is not there yet,
    which is no orphan (told by the repository's history, not by the file's age or name)."""
    out, curated = tmp_path / "out", tmp_path / "curated"
    assert crawl(cli, upstream, out, "v2", curated).exit_code == 0
    later = records(out)[MESSAGE_B]["id"]
    write_curated(curated, later, template=MESSAGE_B, commit=upstream.repo.commit("v2").hexsha)
    older = crawl(cli, upstream, tmp_path / "old", "v1", curated)
    assert older.exit_code == 0, older.output
    assert (
        f"1 curated file(s) name no entry of this commit, as expected: they were reviewed at commits its history does not hold, "
        f"later ones (the errors they explain came, or were reworded, after it) or another branch's ({later}.yaml)"
    ) in older.stderr
    assert "curate check" not in older.stderr
    # the same file, reviewed at the older commit: now an orphan of the newer one, said as a problem
    write_curated(curated, later, template=MESSAGE_B, commit=upstream.repo.commit("v1").hexsha)
    upstream.commit({"pkg/connector.py": CONNECTORS.replace(MESSAGE_B, "a third wording of it")}, tag="v3")
    newer = crawl(cli, upstream, tmp_path / "new", "v3", curated)
    assert newer.exit_code == 0, newer.output
    assert f"1 curated file(s) reviewed at this commit or before it name no entry of it ({later}.yaml): run `errcat curate check`" in newer.stderr


@pytest.mark.slow
def test_a_curated_file_reviewed_at_an_abbreviated_commit_before_it_is_an_orphan(upstream, cli, tmp_path):
    """A review's commit may be abbreviated (the schema takes 7 to 40 hex digits, as ``curate
    check`` reads them): one reviewed at an ancestor of the crawled commit, named by its first 12
    digits, is an orphan to check like one named in full, not "expected"."""
    out, curated = tmp_path / "out", tmp_path / "curated"
    assert crawl(cli, upstream, out, "v1", curated).exit_code == 0
    old = records(out)[MESSAGE_A]["id"]
    write_curated(curated, old, commit=upstream.repo.commit("v1").hexsha[:12])
    newer = crawl(cli, upstream, tmp_path / "new", "v2", curated)
    assert newer.exit_code == 0, newer.output
    assert f"1 curated file(s) reviewed at this commit or before it name no entry of it ({old}.yaml): run `errcat curate check`" in newer.stderr
    assert "as expected" not in newer.stderr


@pytest.mark.slow
def test_a_curated_file_a_shallow_fetch_cannot_place_is_said_to_be_undecided(upstream, cli, tmp_path, monkeypatch):
    """A remote repository is fetched one commit deep: its history holds no ancestor, so a file
    reviewed at an older commit cannot be told from one of a later commit. The line says so, as
    for a package, rather than calling the file expected (which would hide every orphan of the
    scheduled sync, which fetches the upstream's URL)."""
    import subprocess

    import crawler.source.opener as opener
    from crawler.source.policy import RemoteURL
    from crawler.source.remote import open_remote

    out, curated = tmp_path / "out", tmp_path / "curated"
    assert crawl(cli, upstream, out, "v1", curated).exit_code == 0
    old = records(out)[MESSAGE_A]["id"]
    write_curated(curated, old, commit=upstream.repo.commit("v1").hexsha)  # reviewed at v1, reworded in v2
    bare = tmp_path / "remote.git"
    subprocess.run(["git", "clone", "-q", "--bare", str(upstream.path), str(bare)], check=True)
    remote = RemoteURL(url=bare.as_uri(), host="example.invalid", owner="acme", name="widgets")
    # the remote path, at the depth it fetches (a file URL is refused on the command line)
    monkeypatch.setattr(opener, "open_local", lambda path, shown, ref, **kw: open_remote(remote, ref, tmp_path / "repos", _allow_file=True, **kw))
    fetched = crawl(cli, upstream, tmp_path / "new", "v2", curated)
    assert fetched.exit_code == 0, fetched.output
    assert (next((tmp_path / "repos" / "repos").iterdir()) / "shallow").is_file()
    assert "as expected" not in fetched.stderr
    assert f"1 curated file(s) name no entry of this commit ({old}.yaml): expected if it is older than their reviews" in fetched.stderr


@pytest.mark.slow
def test_a_curated_file_a_release_read_from_its_package_lacks_is_said_to_be_undecided(tmp_path, monkeypatch, cli):
    """A wheel has no history: the file's review cannot be placed before or after it, and the
    line says what that means rather than calling it a problem."""
    import os

    from tests.package_index import release_wheel, serving

    curated = tmp_path / "curated"
    write_curated(curated, "0123456789abcdef", name="acme/relpkg")
    with serving(tmp_path / "index") as url:
        release_wheel(tmp_path / "index" / "files", "1.0", None)
        for name in [k for k in os.environ if k.startswith("PIP_")]:
            monkeypatch.delenv(name)
        monkeypatch.setenv("PIP_CONFIG_FILE", os.devnull)
        monkeypatch.setenv("PIP_INDEX_URL", url)
        monkeypatch.setenv("PIP_NO_CACHE_DIR", "1")
        result = cli("crawl", "--pypi", "relpkg==1.0", "--include", "relpkg/**/*.py", "--out", tmp_path / "out", "--curated", curated)
    assert result.exit_code == 0, result.output
    assert "1 curated file(s) name no entry of this release (0123456789abcdef.yaml): expected if it is older than their reviews" in result.stderr
    assert "run `errcat curate check`" not in result.stderr


def curate_first_error(cli, repo, tmp_path: Path) -> tuple[Path, Path, str, Path]:
    """Crawl v1, then write a reviewed file for MESSAGE_A's entry: (out, curated, id, file)."""
    out, curated = tmp_path / "out", tmp_path / "curated"
    crawl(cli, repo, out, "v1", curated)
    eid = records(out)[MESSAGE_A]["id"]
    return out, curated, eid, write_curated(curated, eid)


@pytest.mark.slow
def test_reworded_upstream_orphan_is_found_relinked_and_merged(upstream, cli, tmp_path):
    out, curated = tmp_path / "out", tmp_path / "curated"
    assert crawl(cli, upstream, out, "v1", curated).exit_code == 0
    old = records(out)[MESSAGE_A]
    assert old["explanation_status"] == "absent"
    path = write_curated(curated, old["id"], commit=upstream.repo.commit("v1").hexsha)  # reviewed at v1
    original = path.read_text()

    result = crawl(cli, upstream, out, "v1", curated)
    assert result.exit_code == 0 and "merged 1 curated" in result.stderr
    merged = records(out)[MESSAGE_A]
    assert merged["explanation_status"] == "curated"
    assert merged["explanation"]["what_it_means"] == "The connector was built without a KV transfer configuration."
    assert merged["explanation"]["defensive_patterns"][0]["strategy"] == "validate before calling"
    assert merged["explanation"]["example_fix"]["after"].startswith("vllm serve m --kv-transfer-config")
    index = json.loads((out / "acme/widgets/index.json").read_text())
    assert {r["id"]: r["explanation_status"] for r in index["entries"]}[old["id"]] == "curated"
    assert json.loads((out / "acme/widgets/manifest.json").read_text())["curated_digest"]
    assert cli("curate", "check", out, "--curated", curated).exit_code == 0

    # upstream rewords the message: a new id, the file is now an orphan
    reworded = crawl(cli, upstream, out, "v2", curated)
    assert reworded.exit_code == 0
    assert f"1 curated file(s) reviewed at this commit or before it name no entry of it ({old['id']}.yaml): run `errcat curate check`" in reworded.stderr
    new = records(out)[MESSAGE_B]
    assert new["id"] != old["id"] and new["explanation_status"] == "absent"
    report = cli("curate", "check", out, "--curated", curated)
    assert report.exit_code == 1
    lines = report.stdout.splitlines()
    orphan = next(i for i, line in enumerate(lines) if line.strip().startswith("orphan"))
    assert old["id"] in lines[orphan]
    assert f"candidate {new['id']}" in lines[orphan + 1] and "same function" in lines[orphan + 1]
    assert path.read_text() == original  # the crawl never rewrites a curated file

    moved = cli("curate", "move", old["id"], new["id"], "--curated", curated, "--data", out)
    assert moved.exit_code == 0, moved.output
    assert not path.exists()
    relinked = curated / "acme/widgets" / f"{new['id']}.yaml"
    text = relinked.read_text()
    assert "# a curator's comment survives every relink" in text
    entry = parse_file(relinked)
    assert entry.id == new["id"] and entry.review.template == MESSAGE_B and entry.review.status == "reviewed"
    assert entry.what_it_means == "The connector was built without a KV transfer configuration."
    clean = cli("curate", "check", out, "--curated", curated)
    assert clean.exit_code == 0 and "0 orphan(s), 0 stale, 0 invalid" in clean.stdout
    assert not any(line.split()[0] in ("orphan", "stale", "invalid") for line in clean.stdout.splitlines()[1:])

    assert crawl(cli, upstream, out, "v2", curated).exit_code == 0
    assert records(out)[MESSAGE_B]["explanation_status"] == "curated"


@pytest.mark.slow
def test_editing_curated_text_reaches_an_otherwise_unchanged_dataset(upstream, cli, tmp_path):
    out, curated, eid, path = curate_first_error(cli, upstream, tmp_path)
    crawl(cli, upstream, out, "v1", curated)
    path.write_text(path.read_text().replace("without a KV transfer", "with no KV transfer"))
    result = crawl(cli, upstream, out, "v1", curated)
    assert "wrote" in result.stderr
    assert records(out)[MESSAGE_A]["explanation"]["what_it_means"].startswith("The connector was built with no KV")
    assert "unchanged" in crawl(cli, upstream, out, "v1", curated).stderr


@pytest.mark.slow
@pytest.mark.parametrize(
    "edit, line, words",
    [
        (lambda t: t.replace("solutions:", "solution:"), 9, "solution: unknown key"),
        (lambda t: t.replace("prevention:", "what_it_means: again\nprevention:"), 21, "duplicate key 'what_it_means' (first on line 3)"),
        (lambda t: t.replace("  - Keep the connector flags in one launch script.", "  - {a: 1}"), 22, "prevention.0: Input should be a valid string"),
        (lambda t: t.replace("status: reviewed", "status: approved"), 24, "review.status: Input should be 'draft', 'reviewed' or 'retired'"),
        (lambda t: t.replace("what_it_means: >-\n  The", "what_it_means: [1]\nx_: >-\n  The"), 3, "what_it_means: Input should be a valid string"),
        (lambda t: t.replace("  status: reviewed\n", ""), 23, "review.status: Field required"),
        (lambda t: t.replace("key: [", "key: ").replace("guards:\n", "guards: [\n"), 29, "expected the node content"),
        # " #" in an unquoted value starts a comment: the text would silently end before it
        (lambda t: t.replace("launch script.", "launch script, as #2248 shows."), 22, "starts a YAML comment"),
        (lambda t: t.replace("  - Pass --kv-transfer-config with", "  - Pass --kv-transfer-config #2248 with"), 10, "starts a YAML comment"),
    ],
)
def test_an_invalid_file_stops_the_crawl_with_file_and_line(upstream, cli, tmp_path, edit, line, words):
    out, curated = tmp_path / "out", tmp_path / "curated"
    crawl(cli, upstream, out, "v1", curated)
    before = tree(out)
    eid = records(out)[MESSAGE_A]["id"]
    path = write_curated(curated, eid)
    path.write_text(edit(path.read_text()))
    result = crawl(cli, upstream, out, "v1", curated)
    assert result.exit_code == 2
    err = result.stderr.strip()
    assert len(err.splitlines()) == 1 and err.startswith(f"errcat: {path}:"), err
    assert f"{path}:{line}:" in err and words in err, err
    assert tree(out) == before  # nothing written
    check = cli("curate", "check", out, "--curated", curated)
    assert check.exit_code == 1 and f"invalid  {path}:{line}:" in check.stdout


@pytest.mark.slow
def test_an_issue_number_in_quoted_text_or_a_comment_line_is_kept_and_review_refuses_a_lost_one(upstream, cli, tmp_path):
    """Curated prose cites issues ("#2248"); quoted, the number is part of the text, and a
    comment on a line of its own is still a comment. Unquoted, the rest of the line would be
    dropped without a word, so errcat curate review refuses the file with its line as the crawl does."""
    out, curated, eid, path = curate_first_error(cli, upstream, tmp_path)
    path.write_text(
        path.read_text().replace(
            "  - Keep the connector flags in one launch script.", "  # see the reports\n  - 'Keep the connector flags in one launch script (#2248).'"
        )
    )
    assert crawl(cli, upstream, out, "v1", curated).exit_code == 0
    assert records(out)[MESSAGE_A]["explanation"]["prevention"] == ["Keep the connector flags in one launch script (#2248)."]
    path.write_text(
        path.read_text().replace("'Keep the connector flags in one launch script (#2248).'", "Keep the connector flags in one launch script (see #2248).")
    )
    result = cli("curate", "review", eid, "--data", out, "--curated", curated)
    err = result.stderr.strip()
    assert result.exit_code == 2 and len(err.splitlines()) == 1 and f"{path}:23:" in err and "starts a YAML comment" in err, err


@pytest.mark.slow
@pytest.mark.parametrize("filename, words", [("not-an-id.yaml", "file name must be <id>.yaml"), ("0123456789abcdef.yaml", "does not match the file name")])
def test_malformed_or_mismatched_ids_are_refused(upstream, cli, tmp_path, filename, words):
    out, curated, eid, good = curate_first_error(cli, upstream, tmp_path)
    good.rename(good.with_name(filename))
    result = crawl(cli, upstream, out, "v1", curated)
    assert result.exit_code == 2 and words in result.stderr and filename in result.stderr


@pytest.mark.slow
def test_a_changed_guard_makes_the_file_stale_and_the_record_a_draft(fixture_repo, cli, tmp_path):
    fixture_repo.commit({"pkg/__init__.py": "", "pkg/connector.py": CONNECTORS}, tag="v1")
    fixture_repo.commit(
        {"pkg/connector.py": CONNECTORS.replace("if vllm_config.kv_transfer_config is None:", "if not vllm_config.kv_transfer_config:")}, tag="v2"
    )
    out, curated, eid, _ = curate_first_error(cli, fixture_repo, tmp_path)
    crawl(cli, fixture_repo, out, "v2", curated)
    assert records(out)[MESSAGE_A]["explanation_status"] == "draft"  # same id, guard moved on
    result = cli("curate", "check", out, "--curated", curated)
    assert result.exit_code == 0 and "stale" in result.stdout and "guards changed" in result.stdout
    assert cli("curate", "check", out, "--curated", curated, "--strict").exit_code == 1
    assert cli("curate", "review", eid, "--curated", curated, "--data", out).exit_code == 0
    crawl(cli, fixture_repo, out, "v2", curated)
    assert records(out)[MESSAGE_A]["explanation_status"] == "curated"
    report = json.loads(cli("curate", "check", out, "--curated", curated, "--json").stdout)[0]
    assert report["stale"] == [] and report["curated_entries"] == 1 and report["entries"] == 3
    assert report["packages"] == {"pkg.connector": {"curated": 1, "drafts": 0, "entries": 3}}


@pytest.mark.slow
def test_retire_keeps_the_text_and_clears_the_orphan(upstream, cli, tmp_path):
    out, curated, eid, path = curate_first_error(cli, upstream, tmp_path)
    crawl(cli, upstream, out, "v2", curated)
    assert cli("curate", "check", out, "--curated", curated).exit_code == 1
    assert cli("curate", "retire", eid, "--note", "reworded in v2", "--curated", curated, "--data", out).exit_code == 0
    entry = parse_file(path)
    assert entry.review.status == "retired" and entry.review.note == "reworded in v2"
    assert "The connector was built without" in path.read_text()
    result = cli("curate", "check", out, "--curated", curated)
    assert result.exit_code == 0 and "1 retired" in result.stdout


@pytest.mark.slow
def test_a_retired_text_explains_the_older_release_that_raises_its_error(fixture_repo, cli, tmp_path):
    """A text kept for an error gone upstream (status retired) is no orphan of today's crawl, and
    explains the older release that still raises the error as it was reviewed for: its crawl, and
    a history's retired record, say curated; code that moved on since gets nothing from it."""
    upstream = fixture_repo
    upstream.commit({"pkg/__init__.py": "", "pkg/connector.py": CONNECTORS}, tag="v1.0")
    upstream.commit({"pkg/connector.py": CONNECTORS.replace(MESSAGE_A, MESSAGE_B)}, tag="v2.0")
    out, curated = tmp_path / "out", tmp_path / "curated"
    crawl(cli, upstream, out, "v1.0", curated)
    eid = records(out)[MESSAGE_A]["id"]
    write_curated(curated, eid, status="retired", commit=upstream.repo.commit("v1.0").hexsha)
    assert crawl(cli, upstream, out, "v1.0", curated).exit_code == 0
    old = records(out)[MESSAGE_A]
    assert old["explanation_status"] == "curated" and old["explanation"]["what_it_means"].startswith("The connector was built")
    report = json.loads(cli("curate", "check", out, "--curated", curated, "--json").stdout)[0]
    assert report["curated_entries"] == 1 and report["orphans"] == [] and len(report["retired"]) == 1
    today = tmp_path / "today"
    assert crawl(cli, upstream, today, "v2.0", curated).exit_code == 0
    assert all(r["explanation_status"] == "absent" for r in records(today).values())
    result = cli("curate", "check", today, "--curated", curated, "--strict")
    assert result.exit_code == 0 and "1 retired" in result.stdout and "0 orphan(s)" in result.stdout
    history = tmp_path / "history"
    folded = cli("history", "--fold", out, today, "--out", history)  # the two crawls, each with the curated files
    assert folded.exit_code == 0, folded.output
    kept = records(history)[MESSAGE_A]
    assert kept["history"]["retired"] and kept["explanation_status"] == "curated"
    assert cli("curate", "check", history, "--curated", curated, "--strict").exit_code == 0
    # the same text for a guard that is not v1's: stale there, and v1's record gets nothing
    path = curated / "acme/widgets" / f"{eid}.yaml"
    path.write_text(path.read_text().replace("- vllm_config.kv_transfer_config is None", "- vllm_config is None"))
    assert crawl(cli, upstream, out, "v1.0", curated).exit_code == 0
    assert records(out)[MESSAGE_A]["explanation_status"] == "absent"
    stale = cli("curate", "check", out, "--curated", curated, "--strict")
    assert stale.exit_code == 1 and "guards changed" in stale.stdout


@pytest.mark.slow
def test_move_refuses_to_overwrite_and_to_move_to_an_unknown_id(upstream, cli, tmp_path):
    out, curated = tmp_path / "out", tmp_path / "curated"
    crawl(cli, upstream, out, "v1", curated)
    recs = records(out)
    a, b = recs[MESSAGE_A]["id"], recs["kv_transfer_config must be set to create a connector"]["id"]
    write_curated(curated, a)
    write_curated(curated, b, template="kv_transfer_config must be set to create a connector")
    result = cli("curate", "move", a, b, "--curated", curated, "--data", out)
    assert result.exit_code == 2 and "already exists" in result.stderr
    assert cli("curate", "move", a, "0123456789abcdef", "--curated", curated, "--data", out).exit_code == 2
    assert cli("curate", "move", "../x", b, "--curated", curated, "--data", out).exit_code == 2
    assert (curated / "acme/widgets" / f"{a}.yaml").is_file()


@pytest.mark.slow
def test_related_errors_share_rare_terms_and_place(upstream, cli, tmp_path):
    out = tmp_path / "out"
    crawl(cli, upstream, out, "v1", tmp_path / "curated")
    recs = records(out)
    a = recs[MESSAGE_A]
    related = {r["id"]: r for r in a["related"]}
    other = recs["kv_transfer_config must be set to create a connector"]
    assert other["id"] in related
    assert "same module" in related[other["id"]]["reason"] and "kv_transfer_config" in related[other["id"]]["reason"]
    assert related[other["id"]]["title"] == other["title"]
    assert all(r["id"] != a["id"] for r in a["related"])


def _synthetic(n: int) -> list[dict]:
    recs = []
    for i in range(n):
        path = f"pkg/m{i % 97}.py"
        text = f"option_{i % 311} and flag_{i % 53} of kv_transfer_config {i % 7} must be set"
        recs.append(
            {
                "id": f"{i:016x}",
                "title": text[:60],
                "message": {"text": text, "fields": []},
                "location": {"path": path, "line": i + 1, "qualname": f"C{i % 13}.f{i % 29}"},
                "sites": [{"module": f"pkg.m{i % 97}"}],
            }
        )
    return recs


@pytest.mark.slow
def test_related_is_bounded_and_deterministic():
    recs = _synthetic(8300)
    first = compute(recs)
    assert all(len(v) <= 5 for v in first.values())
    assert all(r["id"] != rid for rid, rel in first.items() for r in rel)
    assert compute(list(reversed(recs))) == first  # input order does not matter


@pytest.mark.slow
def test_draft_from_facts_then_never_over_a_reviewed_file(upstream, cli, tmp_path):
    out, curated = tmp_path / "out", tmp_path / "curated"
    crawl(cli, upstream, out, "v1", curated)
    rec = records(out)[MESSAGE_A]
    result = cli("curate", "draft", rec["id"], "--curated", curated, "--data", out)
    assert result.exit_code == 0, result.output
    path = curated / "acme/widgets" / f"{rec['id']}.yaml"
    entry = parse_file(path)
    assert entry.review.status == "draft" and entry.review.template == MESSAGE_A
    assert entry.review.guards == ["vllm_config.kv_transfer_config is None"]
    assert "KVConnectorBase.__init__" in entry.what_it_means and "vllm_config.kv_transfer_config is None" in entry.when_it_happens.trigger
    assert entry.defensive_patterns[0].strategy == "Validate before calling"
    assert entry.related and set(entry.related) <= {r["id"] for r in rec["related"]}
    crawl(cli, upstream, out, "v1", curated)
    assert records(out)[MESSAGE_A]["explanation_status"] == "draft"
    assert cli("curate", "draft", rec["id"], "--curated", curated, "--data", out).exit_code == 0  # a draft may be redone
    path.write_text(path.read_text().replace("what_it_means: ", "what_it_means: Rewritten by a person. ", 1))
    assert cli("curate", "review", rec["id"], "--curated", curated, "--data", out).exit_code == 0
    before = path.read_bytes()
    refused = cli("curate", "draft", rec["id"], "--curated", curated, "--data", out)
    assert refused.exit_code == 2 and "reviewed" in refused.stderr and path.read_bytes() == before


class _Stub(BaseHTTPRequestHandler):
    mode = "ok"
    seen: list = []

    def log_message(self, *args):  # quiet
        pass

    def _send(self, code, body):
        data = body if isinstance(body, bytes) else json.dumps(body).encode()
        self.send_response(code)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def do_GET(self):
        self._send(200, {"data": [{"id": "stub-model"}]})

    def do_POST(self):
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        type(self).seen.append((self.path, body))
        if self.mode == "500":
            return self._send(500, {"error": "boom"})
        if self.mode == "garbage":
            content = "Sure! Here is an explanation."
        else:
            content = (
                "```json\n"
                + json.dumps(
                    {
                        "what_it_means": "The KV connector needs its transfer config.",
                        "when_it_happens": {"trigger": "no --kv-transfer-config", "common_situations": ["P/D setup"]},
                        "solutions": ["Pass --kv-transfer-config."],
                        "example_fix": {"before": "a", "after": "b"},
                        "defensive_patterns": [{"strategy": "type guard", "code": "assert cfg"}],
                        "prevention": ["Script the launch."],
                        "confidence": "high",
                    }
                )
                + "\n```"
            )
        self._send(200, {"choices": [{"message": {"role": "assistant", "content": content}}]})


@pytest.fixture
def stub_server():
    server = HTTPServer(("127.0.0.1", 0), _Stub)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    _Stub.seen = []
    yield server, f"http://127.0.0.1:{server.server_address[1]}"
    server.shutdown()
    server.server_close()


@pytest.mark.slow
def test_llm_draft_through_a_local_openai_compatible_stub(upstream, cli, tmp_path, stub_server):
    server, url = stub_server
    out, curated = tmp_path / "out", tmp_path / "curated"
    crawl(cli, upstream, out, "v1", curated)
    rec = records(out)[MESSAGE_A]
    _Stub.mode = "ok"
    result = cli("curate", "draft", rec["id"], "--llm", url, "--curated", curated, "--data", out, "--repo", upstream.path)
    assert result.exit_code == 0, result.output
    path_, body = _Stub.seen[-1]
    assert path_ == "/v1/chat/completions" and body["model"] == "stub-model"
    assert MESSAGE_A in body["messages"][-1]["content"] and "raise ValueError" in body["messages"][-1]["content"]
    entry = parse_file(curated / "acme/widgets" / f"{rec['id']}.yaml")
    assert entry.what_it_means == "The KV connector needs its transfer config." and entry.review.status == "draft"
    assert entry.defensive_patterns[0].strategy == "type guard" and entry.review.template == MESSAGE_A

    for mode, words in [("500", "HTTP 500"), ("garbage", "not the requested JSON object")]:
        _Stub.mode = mode
        failed = cli("curate", "draft", rec["id"], "--llm", url, "--model", "m", "--curated", curated, "--data", out, "--retries", "0", "--repo", upstream.path)
        assert failed.exit_code == 2 and words in failed.stderr and len(failed.stderr.strip().splitlines()) == 1
    server.shutdown()
    server.server_close()
    gone = cli(
        "curate",
        "draft",
        rec["id"],
        "--llm",
        url,
        "--model",
        "m",
        "--timeout",
        "2",
        "--curated",
        curated,
        "--data",
        out,
        "--retries",
        "0",
        "--repo",
        upstream.path,
    )
    assert gone.exit_code == 2 and "cannot connect" in gone.stderr


@pytest.mark.slow
def test_default_curated_dir_is_next_to_the_config(upstream, cli, tmp_path, monkeypatch):
    project = tmp_path / "project"
    project.mkdir()
    (project / "errcat.toml").write_text('default = "vllm"\n')
    out = tmp_path / "out"
    monkeypatch.chdir(tmp_path)
    cli(
        "crawl", "--repo", upstream.path, "--ref", "v1", "--name", "acme/widgets", "--include", "pkg/**/*.py", "--out", out, "--config", project / "errcat.toml"
    )
    eid = records(out)[MESSAGE_A]["id"]
    write_curated(project / "curated", eid)
    cli(
        "crawl", "--repo", upstream.path, "--ref", "v1", "--name", "acme/widgets", "--include", "pkg/**/*.py", "--out", out, "--config", project / "errcat.toml"
    )
    assert records(out)[MESSAGE_A]["explanation_status"] == "curated"


# --------------------------------------------------------------------------- the shipped files


def shipped_files() -> list[Path]:
    return sorted(p for p in SHIPPED.glob("*/*/*.yaml") if p.name != "evidence.yaml")


def test_the_shipped_evidence_validates_and_names_at_least_58_errors():
    from crawler.catalogue.evidence import load
    from crawler.model.records import RepoRef

    repo = RepoRef(url="https://github.com/vllm-project/vllm", owner="vllm-project", name="vllm")
    evidence = load(SHIPPED / "vllm-project" / "vllm", repo)  # raises on any problem
    assert len(evidence.reports) >= 58
    assert all(ev["url"].startswith("https://github.com/vllm-project/vllm/") for reports in evidence.reports.values() for ev in reports)


@pytest.mark.slow
def test_every_shipped_file_validates_and_is_reviewed_text():
    files = shipped_files()
    assert len(files) >= 115
    loaded = load_set(SHIPPED, "vllm-project", "vllm")  # strict: raises on any invalid file
    assert len(loaded) == len(files)
    for entry in loaded.entries.values():
        # reviewed, or retired: a reviewed text of an error only older releases raise (s43-curate)
        assert entry.review.status in ("reviewed", "retired")
        assert entry.solutions and entry.when_it_happens.trigger and entry.example_fix and entry.defensive_patterns


# A review records the error type, not the kind: vLLM's error responses carry these types (the
# vllm profile's create_error_response builder; no class of vLLM is named so) or a lower-case
# OpenAI type ("invalid_request_error"), logs their level.
RESPONSE_TYPES = frozenset({"BadRequestError", "NotFoundError", "InternalServerError", "ServiceUnavailableError"})
LOG_LEVELS = frozenset({"DEBUG", "INFO", "WARNING", "ERROR", "CRITICAL"})


def _raise_block(entry: CuratedFile, depth: int) -> list[str]:
    """This entry's raise behind its reviewed guards (asserts become ``if not (cond): raise
    AssertionError``, the same id and guards as an assert; an error response is
    ``return create_error_response(...)`` and a log ``logger.<level>(...)``, as their ids differ
    from a raise of the same words; a raise of an expression's type, ``raise type(err)(...)``,
    is written so, as upstream did). A template whose fields hold quotes or line breaks (a nested
    f-string) is written as a triple-quoted f-string, as upstream did."""
    template = entry.review.template
    lines = []
    for guard in entry.review.guards:
        lines.append("    " * depth + f"if (\n{guard}\n" + "    " * depth + "):")
        depth += 1
    literal = f"f'''{template}'''" if ("\n" in template or '"' in template) and "'''" not in template else f"f{json.dumps(template)}"
    exception = entry.review.exception
    if exception in RESPONSE_TYPES or (exception.isidentifier() and exception.islower()):
        lines.append("    " * depth + f"return create_error_response({literal}, err_type={json.dumps(exception)})")
    elif exception in LOG_LEVELS:
        lines.append("    " * depth + f"logger.{exception.lower()}({literal})")
    else:
        lines.append("    " * depth + f"raise {exception}({literal})")
    return lines


#: What a native review's exception says of the torch check that raised it (``native.CHECKS``);
#: ``STD_TORCH_CHECK`` is told by its template's prefix, as it surfaces as a RuntimeError too.
NATIVE_CHECKS = {exception: macro for macro, (exception, _) in CHECKS.items() if macro.startswith("TORCH_CHECK")}
STD_PREFIX = "{__func__}, {__FILE__}:{__LINE__}, "


def _native_check(entry: CuratedFile, depth: int) -> list[str]:
    """This native entry's torch check behind its reviewed guards, in C++: the last guard
    ``!(cond)`` is the check's own condition (``TORCH_CHECK(cond, ...)``), the others ``if``s
    around it; the template's text pieces are string literals streamed between its fields'
    expressions, ``STD_TORCH_CHECK`` when it opens with that macro's function, file and line. A
    review no torch check can give (a process exit) is refused, naming the entry."""
    review = entry.review
    template, guards = review.template, list(review.guards)
    if review.exception == CHECKS["STD_TORCH_CHECK"][0] and template.startswith(STD_PREFIX):
        macro, template = "STD_TORCH_CHECK", template[len(STD_PREFIX) :]
    elif review.exception in NATIVE_CHECKS and native_language(review.path) in ("cpp", "cuda"):
        macro = NATIVE_CHECKS[review.exception]
    else:
        raise ValueError(f"{entry.id}: no torch check raises {review.exception} in {review.path}; the fixture cannot rebuild it")
    last = guards[-1] if guards else ""
    cond = last[2:-1] if last.startswith("!(") and last.endswith(")") else "false"
    if cond != "false":
        guards.pop()
    args = [json.dumps(p, ensure_ascii=False) if isinstance(p, str) else p.expr for p in text_parts(template) if p != ""]
    lines = []
    for guard in guards:
        lines.append("  " * depth + f"if ({guard}) {{")
        depth += 1
    lines.append("  " * depth + f"{macro}({', '.join([cond, *args])});")
    lines.extend("  " * d + "}" for d in range(depth - 1, depth - 1 - len(guards), -1))
    return lines


def _native_file(entries: list[CuratedFile]) -> str:
    """One C++/CUDA file of these native entries' checks, each in its reviewed function
    (``ns::f``: ``f`` in namespace ``ns``, which a class's name is to the extractor too)."""
    chunks = []
    by_function: dict[str, list[CuratedFile]] = {}
    for entry in entries:
        by_function.setdefault(entry.review.qualname, []).append(entry)
    for qualname, members in sorted(by_function.items()):
        *spaces, name = qualname.split("::")
        if not all(part.isidentifier() for part in (*spaces, name)):
            raise ValueError(f"{members[0].id}: the fixture cannot write a function named {qualname!r}")
        depth = len(spaces)
        body = [line for entry in members for line in _native_check(entry, depth + 1)]
        head = [f"namespace {space} {{" for space in spaces] + ["  " * depth + f"void {name}() {{", *body, "  " * depth + "}"]
        chunks.append("\n".join(head + ["}" for _ in spaces]))
    return "\n\n".join(chunks) + "\n"


def _rust_literal(text: str) -> str:
    """A Rust string literal of ``text``."""
    escapes = {"\\": "\\\\", '"': '\\"', "\n": "\\n", "\t": "\\t", "\r": "\\r"}
    return '"' + "".join(escapes.get(c, c if c.isprintable() else f"\\u{{{ord(c):x}}}") for c in text) + '"'


def _rust_error(entry: CuratedFile) -> tuple[tuple[str, ...], str, bool, list[str]]:
    """This Rust entry's thiserror variant as the extractor reads it (``native._Rust.attribute``):
    (the modules around it, its type, whether the type is an enum, its ``#[error]`` and variant
    lines). ``m::Error::Variant`` whose exception is ``Error`` is a variant of ``enum Error`` in
    ``mod m``; ``m::Error`` whose exception is ``Error`` a ``struct Error``. Each field of the
    template is one of the variant's (``{0}``: a tuple variant's), or a named argument of
    ``#[error]`` when it is an expression; literal braces are doubled. A Rust review no
    ``#[error]`` gives (a ``bail!`` in a function, any guard) is refused, naming the entry."""
    review = entry.review
    *spaces, last = review.qualname.split("::")
    if spaces and spaces[-1] == review.exception and not review.guards:
        *spaces, owner, variant = review.qualname.split("::")
    elif last == review.exception and not review.guards:
        owner, variant = last, None
    else:
        raise ValueError(f"{entry.id}: no #[error] of {review.exception} is {review.qualname} in {review.path}; the fixture cannot rebuild it")
    if not all(part.isidentifier() for part in (*spaces, owner, variant or owner)):
        raise ValueError(f"{entry.id}: the fixture cannot write a Rust item named {review.qualname!r}")
    fmt, named, fields = [], [], []
    for part in text_parts(review.template):
        if isinstance(part, str):
            fmt.append(part.replace("{", "{{").replace("}", "}}"))
            continue
        name, colon, spec = part.expr.partition(":")
        if name.isidentifier() or name.isdigit():
            fields.append(name)
            fmt.append("{" + part.expr + "}")
        else:
            named.append(f"f{len(named)} = {part.expr}")
            fmt.append("{" + f"f{len(named) - 1}" + "}")
    kept = list(dict.fromkeys(fields))
    if kept and all(f.isdigit() for f in kept):
        body = "(" + ", ".join("String" for _ in range(max(map(int, kept)) + 1)) + ")"
    elif any(f.isdigit() for f in kept):
        raise ValueError(f"{entry.id}: the fixture cannot write a variant with both numbered and named fields")
    else:
        body = " { " + ", ".join(f"{f}: String" for f in kept) + " }" if kept else ""
    attribute = "#[error(" + ", ".join([_rust_literal("".join(fmt)), *named]) + ")]"
    return tuple(spaces), owner, variant is not None, [attribute, f"{variant}{body}," if variant else f"pub struct {owner}{body or ';'}"]


def _rust_file(entries: list[CuratedFile]) -> str:
    """One Rust file of these entries' thiserror types (``_rust_error``), each in its modules."""
    types: dict[tuple[tuple[str, ...], str, bool], list[str]] = {}
    for entry in entries:
        spaces, owner, is_enum, lines = _rust_error(entry)
        types.setdefault((spaces, owner, is_enum), []).extend(lines)
    chunks = []
    for (spaces, owner, is_enum), lines in sorted(types.items()):
        depth = len(spaces)
        pad = "    " * depth
        body = (
            [pad + "#[derive(Debug, Error)]", pad + f"pub enum {owner} {{", *(pad + "    " + line for line in lines), pad + "}"]
            if is_enum
            else [pad + line for line in lines]
        )
        head = [f"{'    ' * d}mod {space} {{" for d, space in enumerate(spaces)]
        chunks.append("\n".join(head + body + [f"{'    ' * d}}}" for d in range(depth - 1, -1, -1)]))
    return "use thiserror::Error;\n\n" + "\n\n".join(chunks) + "\n"


def _fixture_modules(entries: list[CuratedFile]) -> dict[str, str]:
    """Each reviewed raise rebuilt at its reviewed file and function (``Class.method`` as a method):
    an entry whose message has no literal text is keyed by module and function, so only the
    same place gives the same id. Raises of one function share its body. A native review (a
    C++/CUDA file) is rebuilt as its torch check (``_native_file``), a Rust one as its thiserror
    variant (``_rust_file``), each read by the real extractor."""
    files: dict[str, dict[str, list[str]]] = {}
    native: dict[str, list[CuratedFile]] = {}
    rust: dict[str, list[CuratedFile]] = {}
    for entry in entries:
        if native_language(entry.review.path) == "rust":
            rust.setdefault(entry.review.path, []).append(entry)
            continue
        if native_language(entry.review.path) is not None:
            native.setdefault(entry.review.path, []).append(entry)
            continue
        parts = entry.review.qualname.split(".")
        if len(parts) > 2 or not all(p.isidentifier() for p in parts):
            parts = [f"f_{entry.id}"]
        files.setdefault(entry.review.path, {}).setdefault(".".join(parts), []).append(entry.id)
    by_id = {e.id: e for e in entries}
    out = {}
    for path, functions in files.items():
        classes: dict[str, list[str]] = {}
        chunks = []
        for qualname, ids in sorted(functions.items()):
            cls, _, name = qualname.rpartition(".")
            depth = 2 if cls else 1
            body = [line for eid in ids for line in _raise_block(by_id[eid], depth)]
            head = "    " * (depth - 1) + (f"def {name}(self, *a):" if cls else f"def {name}(*a):")
            (classes.setdefault(cls, []) if cls else chunks).append("\n".join([head, *body]))
        for cls, methods in sorted(classes.items()):
            chunks.append(f"class {cls}:\n" + "\n\n".join(methods))
        out[path] = "\n\n\n".join(chunks) + "\n"
    for path, members in native.items():
        out[path] = _native_file(members)
    for path, members in rust.items():
        out[path] = _rust_file(members)
    return out


def _native_records(cli, repo: Path, out: Path) -> list[dict]:
    """The native records of a crawl of ``repo``'s v1 as vllm-project/vllm."""
    assert cli("crawl", "--repo", repo, "--ref", "v1", "--name", "vllm-project/vllm", "--out", out).exit_code == 0
    return [r for r in records(out, "vllm-project/vllm").values() if r["kind"] == NATIVE]


def _reviewed(r: dict) -> CuratedFile:
    """A review of record ``r`` as the record says it (its template, guards, file and function)."""
    site = r["sites"][0]
    review = {"status": "reviewed", "commit": "a" * 40, "exception": r["exception"]["name"], "template": r["message"]["text"]}
    review |= {"guards": site["facts"]["guards"], "path": site["path"], "qualname": site["qualname"]}
    return CuratedFile.model_validate({"id": r["id"], "what_it_means": "x", "review": review})


def _rebuilt(cli, tmp_path: Path, read: list[dict]) -> list[dict]:
    """The native records of a crawl of the fixture ``_fixture_modules`` builds from reviews of ``read``."""
    from tests.conftest import FixtureRepo

    rebuilt = FixtureRepo(tmp_path / "rebuilt")
    rebuilt.commit({"vllm/__init__.py": "", **_fixture_modules([_reviewed(r) for r in read])}, tag="v1")
    return _native_records(cli, rebuilt.path, tmp_path / "again")


KERNEL = r"""
#include <torch/all.h>

namespace vllm {
namespace attention {

void paged_attention(torch::Tensor& out, int64_t head_size, bool use_alibi) {
  if (use_alibi) {
    TORCH_CHECK(head_size == 64 || head_size == 128, "Unsupported head size: ", head_size, " (with \"alibi\")");
  } else {
    TORCH_CHECK_VALUE(false, "alibi is required here");
  }
  TORCH_CHECK(out.is_cuda());
}

}  // namespace attention
}  // namespace vllm

void fp8_insert(torch::stable::Tensor const& q_scale_inv, torch::stable::Tensor const& cache_scale_inv) {
  auto check_scale = [&](torch::stable::Tensor const& s, char const* n) {
    STD_TORCH_CHECK(s.device().is_cuda() && s.size(0) == 1, n);
  };
  check_scale(q_scale_inv, "q_scale_inv must be scalar float32 CUDA");
  STD_TORCH_CHECK(cache_scale_inv.dim() == 1, "cache_scale_inv has ", cache_scale_inv.dim(), " dims");
}
"""


@pytest.mark.slow
def test_a_native_review_is_rebuilt_as_the_check_the_extractor_read(fixture_repo, cli, tmp_path):
    """The shipped-files fixture rebuilds a C++/CUDA review as a torch check: every check of a
    kernel the real extractor read (torch's macros, STD_TORCH_CHECK's function/file/line prefix,
    a message from a parameter, keyed by its place, nested namespaces, an else branch's guard, a
    check with no message), reviewed as its record says, comes back with the same id, template
    and guards; a process exit, which no torch check raises, is refused by name."""
    fixture_repo.commit({"vllm/__init__.py": "", "csrc/attention/kernel.cu": KERNEL}, tag="v1")
    read = _native_records(cli, fixture_repo.path, tmp_path / "out")
    assert len(read) == 5, [r["message"]["text"] for r in read]

    def shape(r: dict) -> tuple:
        return r["id"], r["message"]["text"], tuple(r["sites"][0]["facts"]["guards"]), r["sites"][0]["qualname"], r["native"]["macro"]

    back = _rebuilt(cli, tmp_path, read)
    assert sorted(map(shape, back)) == sorted(map(shape, read))
    assert {r["keyed_by"] for r in read} == {"message", "place"}
    exit_ = _reviewed(read[0]).model_copy(update={"id": "0" * 16})
    exit_.review.exception = "SystemExit"
    with pytest.raises(ValueError, match="0000000000000000: no torch check raises SystemExit in csrc/attention/kernel.cu"):
        _fixture_modules([exit_])


RUST_ERRORS = r"""
use std::time::Duration;
use thiserror::Error;

pub mod client {
    pub mod error {
        #[derive(Debug, Error)]
        pub enum Error {
            #[error("engine core reported fatal failure")]
            EngineCoreDead,
            #[error("registration timed out after {timeout:?} (limit {{{limit}}})")]
            Timeout { timeout: Duration, limit: u64 },
            #[error(
                "rank {0} is not connected; \"connected\": {1:?}"
            )]
            Rank(u32, Vec<u32>),
            #[error("queue holds {n} of {cap}", n = items.len())]
            Full { items: Vec<u8>, cap: usize },
            #[error(transparent)]
            Io(#[from] std::io::Error),
        }
    }
}

#[derive(Debug, Error)]
#[error("invalid configuration: {message}")]
pub struct ConfigError {
    message: String,
}

pub fn start(ready: bool) -> anyhow::Result<()> {
    if !ready {
        anyhow::bail!("frontend is not ready");
    }
    Ok(())
}
"""


@pytest.mark.slow
def test_a_rust_review_is_rebuilt_as_the_error_variant_the_extractor_read(fixture_repo, cli, tmp_path):
    """The shipped-files fixture rebuilds a Rust review as its thiserror ``#[error]``: every
    variant the real extractor read (a unit, a struct and a tuple variant, a spec ``:?``, literal
    braces, a quote, an attribute over lines, a named argument's expression, nested modules, a
    ``#[error]`` struct), reviewed as its record says, comes back with the same id, template,
    qualname and macro; a ``bail!`` in a function, which no ``#[error]`` gives, is refused by name."""
    fixture_repo.commit({"vllm/__init__.py": "", "rust/src/client/error.rs": RUST_ERRORS}, tag="v1")
    read = _native_records(cli, fixture_repo.path, tmp_path / "out")
    assert sorted(r["native"]["macro"] for r in read) == ["#[error]"] * 5 + ["bail!"], [r["message"]["text"] for r in read]

    def shape(r: dict) -> tuple:
        return r["id"], r["message"]["text"], r["sites"][0]["qualname"], r["exception"]["qualname"], r["native"]["macro"]

    errors = [r for r in read if r["native"]["macro"] == "#[error]"]
    back = _rebuilt(cli, tmp_path, errors)
    assert sorted(map(shape, back)) == sorted(map(shape, errors))
    assert {r["sites"][0]["qualname"] for r in errors} >= {"client::error::Error::Rank", "ConfigError"}
    (bail,) = [r for r in read if r["native"]["macro"] == "bail!"]
    with pytest.raises(ValueError, match=f"{bail['id']}: no #\\[error\\] of Error is start in rust/src/client/error.rs"):
        _fixture_modules([_reviewed(bail)])


@pytest.mark.slow
def test_shipped_files_check_clean_against_a_fixture_built_from_their_reviews(fixture_repo, cli, tmp_path):
    """CI has no vLLM: rebuild each reviewed raise (exception, template, guards, file and function)
    in a fixture repo named vllm-project/vllm, crawl it, and run the real check over the shipped files."""
    entries = load_set(SHIPPED, "vllm-project", "vllm").entries
    fixture_repo.commit(_fixture_modules(list(entries.values())), tag="v1")
    out = tmp_path / "out"
    result = cli(
        "crawl", "--repo", fixture_repo.path, "--ref", "v1", "--name", "vllm-project/vllm", "--out", out, "--curated", SHIPPED
    )  # vLLM's own selection: vllm/**/*.py and the native trees (csrc/**), which --include would drop
    assert result.exit_code == 0, result.output
    report = json.loads(cli("curate", "check", out, "--curated", SHIPPED, "--json").stdout)[0]
    assert report["invalid"] == [] and report["orphans"] == []
    assert [s["id"] for s in report["stale"]] == []
    assert report["curated_entries"] == len(entries)


@pytest.mark.slow
@pytest.mark.parametrize(
    "body, words",
    [
        ("what_it_means: " + "[" * 20_000 + "]" * 20_000 + "\n", "nested deeper than 32 levels"),
        ("what_it_means: " + "{a: " * 5_000 + "b" + "}" * 5_000 + "\n", "nested deeper than 32 levels"),
        ("what_it_means: >-\n" + "  a curated page is prose, not this\n" * 250_000, "over the limit of 262144 bytes"),
        # a billion laughs: 12 levels of 10 aliases each (700 bytes; each level cost 10 times the
        # last: the check for comments walked every alias again, 0.46 s at 5 levels)
        (
            "x: &a0 [q, q, q, q, q, q, q, q, q, q]\n"
            + "".join(f"y{i}: &a{i} [{', '.join([f'*a{i - 1}'] * 10)}]\n" for i in range(1, 13))
            + "what_it_means: a\n",
            "an alias",
        ),
    ],
)
def test_a_deeply_nested_or_huge_curated_file_is_one_line(upstream, cli, tmp_path, body, words):
    """Curated files are a page of prose: a file nested 20,000 deep was a RecursionError, an
    85 MB one took 200 s and 1.7 GB, and one of aliases of aliases hung the crawl (exponential). Through the real CLI in its own process (a timeout guards
    against a hang), each is one line naming the file, exit 2, and nothing is written."""
    import subprocess
    import sys

    out, curated, eid, path = curate_first_error(cli, upstream, tmp_path)
    before = tree(out)
    path.write_text(f"id: {eid}\n{body}", encoding="utf-8")
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "crawler",
            "crawl",
            "--repo",
            str(upstream.path),
            "--ref",
            "v1",
            "--name",
            "acme/widgets",
            "--include",
            "pkg/**/*.py",
            "--out",
            str(out),
            "--curated",
            str(curated),
        ],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=ROOT,
    )
    assert proc.returncode == 2, proc.stderr
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith(f"errcat: {path}:") and words in lines[0], proc.stderr
    assert tree(out) == before


# --------------------------------------------------------------------------- foreign errors


@pytest.mark.slow
def test_the_foreign_list_is_carried_into_the_dataset_and_answers_match(upstream, cli, tmp_path):
    out, curated = tmp_path / "out", tmp_path / "curated"
    path = curated / "acme" / "widgets" / "foreign" / "errors.yaml"
    path.parent.mkdir(parents=True)
    path.write_text(FOREIGN_YAML)
    assert crawl(cli, upstream, out, "v1", curated).exit_code == 0
    data = json.loads((out / "acme" / "widgets" / "foreign.json").read_text())
    assert [e["name"] for e in data["errors"]] == ["cuda-illegal-memory-access"]
    run = cli("match", "--data", out, f"RuntimeError: CUDA error: an illegal memory access was encountered\n{MESSAGE_A}x")
    assert run.exit_code == 1 and "not raised by acme/widgets: raised by cuda (cuda-illegal-memory-access)" in run.stdout
    # the list is an input: changing it alone makes a new dataset
    path.write_text(FOREIGN_YAML.replace("origin: cuda", "origin: nvidia"))
    assert crawl(cli, upstream, out, "v1", curated).exit_code == 0
    assert json.loads((out / "acme" / "widgets" / "foreign.json").read_text())["errors"][0]["origin"] == "nvidia"


@pytest.mark.slow
def test_a_catalogue_with_a_foreign_list_is_adopted_whole(upstream, cli, tmp_path):
    """The sync's write job takes the crawl job's artifact: foreign.json is part of the dataset."""
    import shutil

    out, curated, artifact = tmp_path / "out", tmp_path / "curated", tmp_path / "artifact"
    path = curated / "acme" / "widgets" / "foreign" / "errors.yaml"
    path.parent.mkdir(parents=True)
    path.write_text(FOREIGN_YAML)
    assert crawl(cli, upstream, out, "v1", curated).exit_code == 0
    shutil.copytree(out / "acme" / "widgets", artifact / "output" / "acme" / "widgets")
    (artifact / "changelog.md").write_text("## Error catalogue\n", encoding="utf-8")
    result = cli("adopt", artifact, "--out", tmp_path / "checkout", "--name", "acme/widgets", "--changelog", tmp_path / "changelog.md")
    assert result.exit_code == 0, result.output
    assert tree(tmp_path / "checkout" / "acme" / "widgets") == tree(out / "acme" / "widgets")
    assert cli("validate", out).exit_code == 0
    foreign = out / "acme" / "widgets" / "foreign.json"
    foreign.write_text(foreign.read_text().replace("https://github.com/vllm-project/vllm/issues/6976", "javascript:alert(1)"))
    bad = cli("validate", out)
    assert bad.exit_code == 1 and "foreign.json" in bad.output, bad.output


@pytest.mark.slow
def test_the_foreign_list_goes_with_every_dataset_a_sync_or_a_history_writes(upstream, cli, tmp_path, monkeypatch):
    """sync, history and a backfill's fold write foreign.json as a crawl does (they render the
    records themselves): the daily sync's catalogue kept its manifest's claim to the list (its
    input digest names it) but dropped the file, and match no longer named foreign errors."""
    import subprocess

    monkeypatch.chdir(tmp_path)  # curated/ next to the (absent) config: the working directory
    path = tmp_path / "curated" / "acme" / "widgets" / "foreign" / "errors.yaml"
    path.parent.mkdir(parents=True)
    path.write_text(FOREIGN_YAML)
    assert crawl(cli, upstream, tmp_path / "crawled", "v2", tmp_path / "curated").exit_code == 0
    want = (tmp_path / "crawled" / "acme" / "widgets" / "foreign.json").read_bytes()
    args = ["--repo", upstream.path, "--name", "acme/widgets", "--include", "pkg/**/*.py"]
    for ref in ("v1", "v2"):  # the first sync, then one over the catalogue it wrote
        result = cli("sync", *args, "--ref", ref, "--out", tmp_path / "synced")
        assert result.exit_code == 0, result.output
        assert (tmp_path / "synced" / "acme" / "widgets" / "foreign.json").read_bytes() == want
    assert cli("history", *args, "--out", tmp_path / "history", "v1", "v2").exit_code == 0
    for tag in ("v1", "v2"):  # a fold orders its datasets by release: tags that name versions
        subprocess.run(["git", "-C", str(upstream.path), "tag", f"{tag}.0", tag], check=True)
    assert cli("history", *args, "--per-release", tmp_path / "releases", "v1.0", "v2.0").exit_code == 0
    folded = cli("history", "--fold", tmp_path / "releases", "--out", tmp_path / "folded")
    assert folded.exit_code == 0, folded.output
    for out in ("history", "folded"):
        assert (tmp_path / out / "acme" / "widgets" / "foreign.json").read_bytes() == want, out
        assert cli("validate", tmp_path / out).exit_code == 0
    run = cli("match", "--data", tmp_path / "synced", "RuntimeError: CUDA error: an illegal memory access was encountered")
    assert "raised by cuda (cuda-illegal-memory-access)" in run.stdout, run.stdout


@pytest.mark.parametrize(
    "edit, line, words",
    [
        (lambda t: t.replace("- name: cuda-illegal-memory-access", "- name: ../x"), 2, "errors.0.name"),
        (lambda t: t.replace("  origin: cuda\n", "  origin: cuda\n  origin: torch\n"), 4, "duplicate"),
        (lambda t: t.replace("  - 'CUDA error", "  - !!python/object 'CUDA error"), 5, ""),
        (lambda t: t.replace("https://github.com", "javascript://github.com"), 8, "errors.0.urls.0"),
    ],
)
def test_an_invalid_foreign_list_stops_the_crawl_with_file_and_line(upstream, cli, tmp_path, edit, line, words):
    out, curated = tmp_path / "out", tmp_path / "curated"
    path = curated / "acme" / "widgets" / "foreign" / "errors.yaml"
    path.parent.mkdir(parents=True)
    path.write_text(edit(FOREIGN_YAML))
    result = crawl(cli, upstream, out, "v1", curated)
    err = result.stderr.strip()
    assert result.exit_code == 2 and len(err.splitlines()) == 1 and f"{path}:{line}:" in err and words in err, err
    assert not out.exists() or not any(out.rglob("foreign.json"))
