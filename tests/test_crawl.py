"""The crawl end to end, through the real CLI, on real git repositories built here."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from helpers import jsonl_bytes

CONFIG = '''
from pydantic import field_validator


class AttentionConfig:
    backend_per_kind: dict

    @field_validator("backend_per_kind", mode="before")
    @classmethod
    def _check(cls, value):
        """Check the kinds.

        More words.
        """
        valid_kinds = {"full", "sliding"}
        for kind in value:
            if kind not in valid_kinds:
                raise ValueError(
                    f"Unknown KV cache group kind '{kind}' in backend_per_kind. "
                    f"Valid kinds are: {', '.join(sorted(valid_kinds))}."
                )
        return value


def load(path):
    if not path:
        raise NotImplementedError
    assert path.endswith(".json"), f"not json: {path!r}"
    assert path
    return path
'''

OTHER = """
from .config import AttentionConfig


def pick(kind):
    valid_kinds = ("a",)
    if kind not in valid_kinds:
        raise ValueError(f"Unknown KV cache group kind '{kind}' in backend_per_kind. Valid kinds are: {', '.join(sorted(valid_kinds))}.")
"""

MESSAGE = "Unknown KV cache group kind '{kind}' in backend_per_kind. Valid kinds are: {', '.join(sorted(valid_kinds))}."


def crawl_args(repo, out, ref="v1", *extra):
    return ["crawl", "--repo", repo.path, "--ref", ref, "--name", "acme/widgets", "--include", "pkg/**/*.py", "--out", out, *extra]


def read_tree(directory: Path) -> dict[str, bytes]:
    return {p.relative_to(directory).as_posix(): p.read_bytes() for p in sorted(directory.rglob("*")) if p.is_file()}


def records_by_message(dataset: Path) -> dict[str, dict]:
    records = [json.loads(line) for line in jsonl_bytes(dataset).splitlines()]
    return {r["message"]["text"]: r for r in records}


@pytest.fixture
def upstream(fixture_repo):
    fixture_repo.commit({"pkg/__init__.py": "", "pkg/config.py": CONFIG, "pkg/other.py": OTHER, "docs/x.py": "raise ValueError('not included')"}, tag="v1")
    return fixture_repo


@pytest.mark.slow
def test_crawl_writes_a_valid_dataset(upstream, cli, tmp_path):
    out = tmp_path / "out"
    result = cli(*crawl_args(upstream, out))
    assert result.exit_code == 0, result.output
    summary = result.stdout.strip().splitlines()[-1]
    assert summary.startswith("files 3, parsed 3, skipped 0, sites ")
    dataset = out / "acme" / "widgets"
    assert cli("validate", dataset).exit_code == 0
    manifest = json.loads((dataset / "manifest.json").read_text())
    commit = upstream.repo.head.commit.hexsha
    assert manifest["commit"] == commit and manifest["ref"] == "v1"
    assert manifest["counts"]["bare_asserts"] == 1

    entry = records_by_message(dataset)[MESSAGE]
    assert entry["exception"]["name"] == "ValueError"
    assert [(s["path"], s["line"]) for s in entry["sites"]] == [("pkg/config.py", 17), ("pkg/other.py", 7)]
    assert entry["location"]["permalink"] == f"https://github.com/acme/widgets/blob/{commit}/pkg/config.py#L17"
    assert entry["location"]["qualname"] == "AttentionConfig._check"
    assert "raise ValueError(" in entry["sites"][0]["snippet"]["code"]
    assert entry["title"] == "Unknown KV cache group kind '{kind}' in backend_per_kind.…"
    assert entry["provenance"]["commit"] == commit
    assert (dataset / "errors" / f"{entry['id']}.json").is_file()
    index = json.loads((dataset / "index.json").read_text())
    assert entry["id"] in {row["id"] for row in index["entries"]}


@pytest.mark.slow
def test_assert_messages_bare_asserts_and_bare_raises_are_entries(upstream, cli, tmp_path):
    out = tmp_path / "out"
    cli(*crawl_args(upstream, out))
    every = [json.loads(line) for line in jsonl_bytes(out / "acme" / "widgets").splitlines()]
    assertion = records_by_message(out / "acme" / "widgets")["not json: {path!r}"]
    assert assertion["kind"] == "assert" and assertion["exception"]["name"] == "AssertionError" and assertion["keyed_by"] == "message"
    bare = [r for r in every if r["exception"]["name"] == "NotImplementedError"]
    assert len(bare) == 1 and bare[0]["message"]["opaque"] and bare[0]["title"] == "NotImplementedError in load"
    assert bare[0]["keyed_by"] == "place"
    # the assert with no message: keyed by its condition, named by it
    checked = [r for r in every if r["keyed_by"] == "condition"]
    assert [(r["title"], r["sites"][0]["condition"], r["message"]["text"]) for r in checked] == [("assert path", "path", "")]


@pytest.mark.slow
def test_two_crawls_give_identical_bytes(upstream, cli, tmp_path):
    cli(*crawl_args(upstream, tmp_path / "a"))
    cli(*crawl_args(upstream, tmp_path / "b", "v1", "--no-cache"))
    assert read_tree(tmp_path / "a") == read_tree(tmp_path / "b")


@pytest.mark.slow
def test_a_moved_line_keeps_the_id(upstream, cli, tmp_path):
    cli(*crawl_args(upstream, tmp_path / "a"))
    upstream.commit({"pkg/config.py": "# moved\n\n\n" + CONFIG.replace("valid_kinds", "allowed")}, tag="v2")
    cli(*crawl_args(upstream, tmp_path / "b", "v2"))
    old = records_by_message(tmp_path / "a" / "acme" / "widgets")[MESSAGE]
    new = {r["id"]: r for r in records_by_message(tmp_path / "b" / "acme" / "widgets").values()}[old["id"]]
    assert [s["line"] for s in new["sites"]] == [21, 7]
    assert new["sites"][0]["template"]["text"] == MESSAGE.replace("valid_kinds", "allowed")


@pytest.mark.slow
def test_a_file_that_does_not_parse_is_skipped_with_its_reason(upstream, cli, tmp_path):
    upstream.commit({"pkg/broken.py": "def f(:\n", "pkg/nul.py": b"x = 1\x00\n"}, tag="v2")
    out = tmp_path / "out"
    result = cli(*crawl_args(upstream, out, "v2"))
    assert result.exit_code == 0
    manifest = json.loads((out / "acme" / "widgets" / "manifest.json").read_text())
    reasons = {s["path"]: s["reason"] for s in manifest["skipped"]}
    assert set(reasons) == {"pkg/broken.py", "pkg/nul.py"}
    assert "syntax" in reasons["pkg/broken.py"].lower()
    assert manifest["counts"]["parsed"] == 3 and manifest["counts"]["skipped"] == 2


@pytest.mark.slow
@pytest.mark.parametrize(
    "args, message",
    [
        (["--ref", "no-such-tag"], "no-such-tag"),
        (["--ref", "--upload-pack=touch /tmp/pwned"], "upload-pack"),
    ],
)
def test_bad_refs_exit_2_with_one_line(upstream, cli, tmp_path, args, message):
    result = cli("crawl", "--repo", upstream.path, "--name", "acme/widgets", "--out", tmp_path / "out", *args)
    assert result.exit_code == 2
    assert result.stderr.startswith("errcat: ") and message in result.stderr
    assert len(result.stderr.strip().splitlines()) == 1
    assert not (tmp_path / "out").exists()


@pytest.mark.parametrize("repo", ["ext::sh -c touch% /tmp/pwned", "file:///etc", "ssh://host/x", "git@github.com:a/b", "-oops", "/no/such/path"])
def test_bad_repos_exit_2_with_one_line(cli, tmp_path, repo):
    result = cli("crawl", "--repo", repo, "--ref", "main", "--out", tmp_path / "out")
    assert result.exit_code == 2, result.output
    assert result.stderr.startswith("errcat: ") and len(result.stderr.strip().splitlines()) == 1


@pytest.mark.slow
def test_a_failed_crawl_leaves_the_last_good_output(upstream, cli, tmp_path):
    out = tmp_path / "out"
    cli(*crawl_args(upstream, out))
    before = read_tree(out)
    assert cli(*crawl_args(upstream, out, "nope")).exit_code == 2
    assert read_tree(out) == before


@pytest.mark.slow
def test_show_lays_out_the_page(upstream, cli, tmp_path):
    out = tmp_path / "out"
    cli(*crawl_args(upstream, out))
    entry = records_by_message(out / "acme" / "widgets")[MESSAGE]
    result = cli("show", entry["id"][:8], "--data", out)
    assert result.exit_code == 0
    text = result.stdout
    for part in [
        "Exception:  builtins.ValueError",
        MESSAGE,
        "pkg/config.py:17 in AttentionConfig._check",
        entry["location"]["permalink"],
        "if kind not in valid_kinds",
        '@field_validator("backend_per_kind", mode="before")',
    ]:
        assert part in text
    assert cli("show", "0123456789abcdef", "--data", out).exit_code == 2
    assert cli("show", "../etc", "--data", out).exit_code == 2


@pytest.mark.slow
def test_validate_exit_codes(upstream, cli, tmp_path):
    out = tmp_path / "out"
    cli(*crawl_args(upstream, out))
    dataset = out / "acme" / "widgets"
    assert cli("validate", out).exit_code == 0
    record = next((dataset / "errors").glob("*.json"))
    data = json.loads(record.read_text())
    del data["exception"]
    record.write_text(json.dumps(data))
    result = cli("validate", out)
    assert result.exit_code == 1
    assert f'errors/{record.name}: "exception" is a required property' in result.stdout
    assert cli("validate", tmp_path / "nowhere").exit_code == 2


@pytest.mark.slow
def test_an_up_to_date_dataset_is_left_alone_and_a_damaged_one_rewritten(upstream, cli, tmp_path):
    out = tmp_path / "out"
    cli(*crawl_args(upstream, out))
    dataset = out / "acme" / "widgets"
    before = read_tree(out)
    stamps = {p: p.stat().st_mtime_ns for p in dataset.rglob("*.json")}
    again = cli(*crawl_args(upstream, out))
    assert "unchanged" in again.stderr and read_tree(out) == before
    assert {p: p.stat().st_mtime_ns for p in dataset.rglob("*.json")} == stamps
    victim = next((dataset / "errors").glob("*.json"))
    victim.write_text("{}")
    repaired = cli(*crawl_args(upstream, out))
    assert "wrote" in repaired.stderr and read_tree(out) == before
    manifest = json.loads((dataset / "manifest.json").read_text())
    manifest["counts"]["entries"] = 999  # an edit that keeps both digests
    (dataset / "manifest.json").write_text(json.dumps(manifest))
    assert "wrote" in cli(*crawl_args(upstream, out)).stderr and read_tree(out) == before
    (dataset / "stray.json").write_text("{}")
    assert "wrote" in cli(*crawl_args(upstream, out)).stderr and read_tree(out) == before


def test_the_result_cache_is_keyed_by_the_extraction_code(monkeypatch, tmp_path):
    """Editing any module of the extract package (its code shapes cached results) must change the
    cache key (no stale facts), and a new module there counts too."""
    from crawler.extract import runner

    package = tmp_path / "extract"
    package.mkdir()
    for path in runner.code_files():
        (package / path.name).write_bytes(path.read_bytes())
    assert {p.name for p in runner.code_files()} >= {"visitor.py", "templates.py", "derive.py", "segments.py", "ids.py"}
    monkeypatch.setattr(runner, "__file__", str(package / "runner.py"))
    try:
        for change in ("segments.py", "new_module.py"):
            runner.cache_version.cache_clear()
            key = runner.cache_version()
            target = package / change
            target.write_text((target.read_text() if target.exists() else "") + "\n# changed\n")
            runner.cache_version.cache_clear()
            assert runner.cache_version() != key, change
    finally:
        runner.cache_version.cache_clear()


@pytest.mark.slow
def test_the_crawl_command_warms_the_match_store_without_the_cycle_collector_and_gives_it_back(upstream, cli, tmp_path, monkeypatch):
    """The crawl leaves its search index alive for the match store: a collection started there
    (the store's import, its first allocations) would walk it all, for no cycle in it. Off until
    the store is warm, on again after, for a caller that runs the command in its own process."""
    import gc
    import importlib

    crawl_command = importlib.import_module("crawler.cli.crawl")  # (the package's `crawl` is the command)
    seen = []
    real = crawl_command._warm_match_store

    def warm(*a, **k):
        seen.append(gc.isenabled())
        return real(*a, **k)

    monkeypatch.setattr(crawl_command, "_warm_match_store", warm)
    assert gc.isenabled()
    result = cli(*crawl_args(upstream, tmp_path / "out"))
    assert result.exit_code == 0, result.output
    assert seen == [False] and gc.isenabled()
