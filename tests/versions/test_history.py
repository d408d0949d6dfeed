"""errcat history: first/last seen over tags, retired records, ids never reused, determinism."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from helpers import CHECK_CODE, jsonl_bytes

from crawler.base.errors import DataError
from crawler.catalogue.entries import Identity, build_records
from crawler.model.records import Record, RepoRef
from crawler.versions.history import Fold, version_of

ARGS = ["--name", "acme/widgets", "--include", "pkg/**/*.py"]

V1 = CHECK_CODE
V2 = V1.replace("must be positive", "must be strictly positive")  # reworded
V3 = (
    V2.replace(
        """    if x > 10:
        raise OverflowError("x is far too large")
""",
        "",
    )
    + "\n\ndef load(p):\n    raise FileNotFoundError(f'no such widget file: {p}')\n"
)


@pytest.fixture
def upstream(fixture_repo):
    fixture_repo.commit({"pkg/__init__.py": "", "pkg/a.py": V1}, tag="v1.0")
    fixture_repo.commit({"pkg/a.py": V2}, tag="v1.1")
    fixture_repo.commit({"pkg/a.py": V3}, tag="v2.0")
    return fixture_repo


def by_template(dataset: Path) -> dict[str, dict]:
    return {r["message"]["text"]: r for r in map(json.loads, jsonl_bytes(dataset).splitlines())}


def tree(directory: Path) -> dict[str, bytes]:
    return {p.relative_to(directory).as_posix(): p.read_bytes() for p in sorted(directory.rglob("*")) if p.is_file()}


@pytest.mark.slow
def test_history_over_tags(upstream, cli, tmp_path):
    out = tmp_path / "out"
    result = cli("history", "--repo", upstream.path, *ARGS, "--out", out, "v1.0", "v1.1", "v2.0")
    assert result.exit_code == 0, result.output
    assert result.stdout.strip() == "versions 3 (v1.0, v1.1, v2.0), entries 2, retired 2, first_seen 4/4"
    dataset = out / "acme" / "widgets"
    assert cli("validate", out).exit_code == 0
    records = by_template(dataset)
    commits = {t.name: t.commit.hexsha for t in upstream.repo.tags}

    strict = records["x must be strictly positive, got {x}"]["history"]
    assert strict["first_seen"] == {"version": "v1.1", "commit": commits["v1.1"]}
    assert strict["last_seen"] is None  # live: the manifest's commit (v2.0) has it; the record need not change
    assert not strict["retired"]

    old = records["x must be positive, got {x}"]
    assert old["history"]["retired"] and old["history"]["retired_note"] == "removed in v1.1"
    assert old["history"]["last_seen"]["version"] == "v1.0"
    assert old["history"]["replaced_by"] == records["x must be strictly positive, got {x}"]["id"]
    assert strict["replaces"] == [old["id"]]
    assert old["provenance"]["commit"] == commits["v1.0"]  # the retired page shows where it last was

    large = records["x is far too large"]["history"]
    assert large["first_seen"]["version"] == "v1.0" and large["last_seen"]["version"] == "v1.1"
    assert large["retired_note"] == "removed in v2.0" and large["removed_in"]["commit"] == commits["v2.0"]

    assert records["no such widget file: {p}"]["history"]["first_seen"]["version"] == "v2.0"

    index = json.loads((dataset / "index.json").read_text())
    assert sorted(row["retired"] for row in index["entries"]) == [False, False, True, True]
    manifest = json.loads((dataset / "manifest.json").read_text())
    assert manifest["commit"] == commits["v2.0"]
    assert (manifest["counts"]["entries"], manifest["counts"]["retired"]) == (2, 2)


@pytest.mark.slow
def test_range_and_list_give_the_same_bytes(upstream, cli, tmp_path):
    assert cli("history", "--repo", upstream.path, *ARGS, "--out", tmp_path / "a", "v1.0", "v1.1", "v2.0").exit_code == 0
    result = cli("history", "--repo", upstream.path, *ARGS, "--out", tmp_path / "b", "--range", "v1.0..v2.0", "--no-cache")
    assert result.exit_code == 0, result.output
    assert tree(tmp_path / "a") == tree(tmp_path / "b")


@pytest.mark.slow
def test_a_retired_error_that_comes_back_keeps_its_id_and_first_seen(upstream, cli, tmp_path):
    upstream.commit({"pkg/a.py": V1}, tag="v3.0")
    out = tmp_path / "out"
    assert cli("history", "--repo", upstream.path, *ARGS, "--out", out, "--range", "v1.0..v3.0").exit_code == 0
    back = by_template(out / "acme" / "widgets")["x is far too large"]["history"]
    assert not back["retired"] and back["removed_in"] is None
    assert back["first_seen"]["version"] == "v1.0" and back["last_seen"] is None


def test_an_id_is_never_reused_for_another_error():
    identity = Identity(RepoRef(url="https://github.com/o/n", owner="o", name="n"), "a" * 40, "2026-01-01T00:00:00+00:00", None, "git")
    site = {
        "path": "pkg/m.py",
        "line": 3,
        "end_line": 3,
        "module": "pkg.m",
        "qualname": "f",
        "kind": "raise",
        "exception": "ValueError",
        "exception_qualname": "builtins.ValueError",
        "template": {"text": "bad", "fields": [], "pattern": "^bad$", "form": "literal"},
        "snippet": {"start_line": 3, "end_line": 3, "code": "raise ValueError('bad')"},
        "facts": {},
    }
    (record,) = [Record.model_validate(r).model_dump(mode="json") for r in build_records(identity, [site])]
    fold = Fold()
    fold.add([record], "v1", "a" * 40)
    impostor = json.loads(json.dumps(record))
    impostor["sites"][0]["template"]["text"] = "something else entirely"
    with pytest.raises(DataError, match="ids are never reused"):
        fold.add([impostor], "v2", "b" * 40)


@pytest.mark.parametrize("ref, version", [("v0.33.0", "v0.33.0"), ("1.2", "1.2"), ("v2.0rc1", "v2.0rc1"), ("main", None), (None, None)])
def test_version_of(ref, version):
    assert version_of(ref) == version


@pytest.mark.slow
def test_a_history_dataset_has_its_search_index_and_validates_and_matches(upstream, cli, tmp_path):
    """history (and sync, which writes through it) wrote no search.json: match and render fell
    back to rebuilding it from errors.jsonl on every use. Its entries, retired ones too, are there."""
    out = tmp_path / "out"
    assert cli("history", "--repo", upstream.path, *ARGS, "--out", out, "v1.0", "v2.0").exit_code == 0
    dataset = out / "acme" / "widgets"
    search = json.loads((dataset / "search.json").read_text())
    records = [json.loads(line) for line in jsonl_bytes(dataset).decode("utf-8").splitlines()]
    assert [e["id"] for e in search["entries"]] == sorted(r["id"] for r in records)
    assert cli("validate", out).exit_code == 0
    result = cli("match", "--data", dataset, "no such widget file: /tmp/w")
    assert result.exit_code == 0, result.output
    assert by_template(dataset)["no such widget file: {p}"]["id"] in result.stdout


@pytest.mark.slow
def test_history_writes_no_dataset_per_release_and_keeps_records_as_bytes(upstream, cli, tmp_path, monkeypatch):
    """Each release was crawled into a scratch dataset (~8,000 files for vLLM), read back and
    deleted: most of a history run's time. Now a release is folded from memory and the one
    dataset written is the history's; the fold keeps no release's records as objects."""
    import crawler.crawl
    from crawler.versions import history as history_module

    def no_publish(*a, **k):
        raise AssertionError("a release's dataset was written")

    monkeypatch.setattr(crawler.crawl, "publish", no_publish)
    folds = []
    real_add = history_module.Fold.add

    def spy(self, records, version, commit, last=False, kept=None, skipped=frozenset(), files=False):
        real_add(self, records, version, commit, last, kept, skipped, files)
        folds.append((self, last, dict(self._last)))

    monkeypatch.setattr(history_module.Fold, "add", spy)
    result = cli("history", "--repo", upstream.path, *ARGS, "--out", tmp_path / "out", "v1.0", "v1.1", "v2.0")
    assert result.exit_code == 0, result.output
    assert (tmp_path / "out" / "acme" / "widgets" / "manifest.json").is_file()
    (fold,) = {f for f, _, _ in folds}
    assert len(fold) == 4 and all(isinstance(fold.packed(eid), bytes) for eid in fold._entries)
    # only the last release's records are kept as they came (the caller holds them anyway), for the final render
    assert [last for _, last, _ in folds] == [False, False, True] and [bool(kept) for _, _, kept in folds] == [False, False, True]


@pytest.mark.slow
def test_a_history_run_again_folds_the_releases_it_has_seen_from_the_cache(upstream, cli, tmp_path, cache_dir):
    first = cli("history", "--repo", upstream.path, *ARGS, "--out", tmp_path / "a", "v1.0", "v1.1", "v2.0")
    assert first.exit_code == 0, first.output
    kept = sorted((cache_dir / "releases").glob("*/*.jsonl.gz"))
    assert len(kept) == 3 and "its records from the cache" not in first.stderr
    again = cli("history", "--repo", upstream.path, *ARGS, "--out", tmp_path / "b", "v1.0", "v1.1", "v2.0")
    assert again.exit_code == 0, again.output
    assert again.stderr.count("its records from the cache") == 3
    assert tree(tmp_path / "a") == tree(tmp_path / "b")
    # A damaged or foreign file is a miss, never a failure: the release is assembled again.
    kept[0].write_bytes(kept[0].read_bytes()[:-20])
    kept[1].write_bytes(b"not gzip")
    third = cli("history", "--repo", upstream.path, *ARGS, "--out", tmp_path / "c", "v1.0", "v1.1", "v2.0")
    assert third.exit_code == 0, third.output
    assert third.stderr.count("its records from the cache") == 1
    assert tree(tmp_path / "a") == tree(tmp_path / "c")
    nocache = cli("history", "--repo", upstream.path, *ARGS, "--out", tmp_path / "d", "--no-cache", "v1.0", "v1.1", "v2.0")
    assert "its records from the cache" not in nocache.stderr and tree(tmp_path / "a") == tree(tmp_path / "d")
    # Another errcat's files can never be read again: the next save removes them.
    stale = cache_dir / "releases" / ("0" * 64)
    stale.mkdir()
    (stale / f"{'1' * 64}.jsonl.gz").write_bytes(b"")
    for path in kept:
        path.unlink()
    assert cli("history", "--repo", upstream.path, *ARGS, "--out", tmp_path / "e", "v1.0").exit_code == 0
    assert not stale.exists() and len(list((cache_dir / "releases").glob("*/*.jsonl.gz"))) == 1


@pytest.mark.slow
def test_history_with_its_search_rows_kept_writes_what_one_without_the_cache_writes(upstream, cli, cache_dir, tmp_path):
    """History keeps its search rows in the cache (``search.RowMemo``, apart from a crawl's):
    a second run takes them, and both write the bytes a run without the cache writes."""
    refs = ["v1.0", "v1.1", "v2.0"]
    for name in ("first", "again"):
        assert cli("history", "--repo", upstream.path, *ARGS, "--out", tmp_path / name, *refs).exit_code == 0
    memos = sorted(p.name for p in (cache_dir / "search").iterdir())
    assert memos and all(name.endswith("-history.json") for name in memos)
    assert cli("history", "--repo", upstream.path, *ARGS, "--out", tmp_path / "none", "--no-cache", *refs).exit_code == 0
    assert tree(tmp_path / "first") == tree(tmp_path / "again") == tree(tmp_path / "none")


BASE = 'default = "w"\n[upstreams.w]\nurl = "https://github.com/acme/widgets"\ninclude = ["pkg/**/*.py"]\n'
NATIVE = '#include <x.h>\nvoid f(int x) {\n  TORCH_CHECK(x > 0, "x must be positive, got ", x);\n}\n'
TEST = "import pytest\nfrom pkg.a import check\n\ndef test_big():\n    with pytest.raises(OverflowError):\n        check(11)\n"
LOGS = 'import logging\nlogger = logging.getLogger(__name__)\n\ndef g(n):\n    assert n, "n must be set"\n    logger.warning("n is odd: %s", n)\n'


@pytest.mark.slow
@pytest.mark.parametrize(
    ("setting", "changes"),
    [
        ('kinds = ["raise"]', True),
        ('kinds = ["raise", "assert", "log", "native"]\nnative = ["csrc/**"]', True),
        ('tests = ["tests/**/*.py"]', True),
        ('exclude = ["pkg/b.py"]', True),
        ("max_file_sites = 1", True),
        ("curated", True),
        ('branch = "main"\npypi = "widgets"\ntag = "v{version}"', False),  # nothing a record of a git commit says
    ],
)
def test_the_release_cache_follows_the_configuration_not_the_directory(fixture_repo, cli, tmp_path, monkeypatch, setting, changes):
    """A release kept under one configuration is served under another exactly when that gives the
    same records: the same errcat.toml read from another directory (--config) is a hit, a setting
    that changes the records (kinds, native trees, tests, include/exclude, limits, curated files; the
    meaning's conventions: tests/catalogue/test_meaning_memo_attacks.py) a miss whose output is the one without the cache, and one that changes none a hit."""
    fixture_repo.commit({"pkg/__init__.py": "", "pkg/a.py": V1, "pkg/b.py": LOGS, "csrc/k.cpp": NATIVE, "tests/test_a.py": TEST}, tag="v1.0")
    base, other, elsewhere = tmp_path / "base", tmp_path / "other", tmp_path / "elsewhere"
    for d in (base, other, elsewhere):
        d.mkdir()
    (base / "errcat.toml").write_text(BASE)
    monkeypatch.chdir(base)
    first = cli("history", "--repo", fixture_repo.path, "--out", tmp_path / "o-base", "v1.0")
    assert first.exit_code == 0 and "from the cache" not in first.stderr, first.output
    monkeypatch.chdir(elsewhere)  # the same configuration, read from another directory
    again = cli("history", "--repo", fixture_repo.path, "--config", base / "errcat.toml", "--out", tmp_path / "o-again", "v1.0")
    assert again.exit_code == 0 and "its records from the cache" in again.stderr, again.output
    assert tree(tmp_path / "o-again") == tree(tmp_path / "o-base")

    (other / "errcat.toml").write_text(BASE if setting == "curated" else BASE + setting + "\n")
    monkeypatch.chdir(other)
    if setting == "curated":
        rid = json.loads(jsonl_bytes(tmp_path / "o-base" / "acme" / "widgets").splitlines()[0])["id"]
        drafted = cli("curate", "draft", rid, "--data", tmp_path / "o-base")
        assert drafted.exit_code == 0 and (other / "curated" / "acme" / "widgets" / f"{rid}.yaml").is_file(), drafted.output
    cached = cli("history", "--repo", fixture_repo.path, "--out", tmp_path / "o-cached", "v1.0")
    fresh = cli("history", "--repo", fixture_repo.path, "--no-cache", "--out", tmp_path / "o-fresh", "v1.0")
    assert cached.exit_code == fresh.exit_code == 0, cached.output + fresh.output
    assert ("its records from the cache" in cached.stderr) is not changes, cached.stderr
    assert tree(tmp_path / "o-cached") == tree(tmp_path / "o-fresh")
    records = [jsonl_bytes(tmp_path / o / "acme" / "widgets") for o in ("o-fresh", "o-base")]
    assert (records[0] != records[1]) is changes


def _fold_records(sites: list[dict]) -> list[dict]:
    from consumer_data import IDENTITY

    return [Record.model_validate(r).model_dump(mode="json") for r in build_records(IDENTITY, sites, {})]


@pytest.mark.slow
def test_only_entries_that_can_pair_become_models_when_a_release_is_added(monkeypatch):
    """A release's gone and come entries are linked (reworded, another exception) only when their
    keys share the kind and the exception or the rest: the others, most of a release's, are never
    compared, so they are not made into models at all, on either side; the links are as before."""
    from consumer_data import site, template

    reworded_before = site(template("the cache block size ", ("n",), " is not supported"), "pkg/cache.py", 10, "Cache.check")
    reworded_after = site(template("the cache block size ", ("n",), " is not supported here"), "pkg/cache.py", 12, "Cache.check")
    other_exception = site(template("no such device ", ("d",)), "pkg/dev.py", 5, "pick", "ValueError")
    other_exception_after = site(template("no such device ", ("d",)), "pkg/dev.py", 5, "pick", "RuntimeError")
    gone_alone = [site(template(f"a gone error number {i}"), "pkg/old.py", 20 + i, f"old{i}", "KeyError") for i in range(5)]
    came_alone = [site(template(f"a new error number {i}"), "pkg/new.py", 20 + i, f"new{i}", "TypeError") for i in range(5)]
    kept = site(template("stays as it is"), "pkg/keep.py", 3, "keep")
    first = _fold_records([reworded_before, other_exception, kept, *gone_alone])
    second = _fold_records([reworded_after, other_exception_after, kept, *came_alone])
    fold = Fold()
    fold.add(first, "v1", "a" * 40)
    made = []
    real = Record.model_validate

    def counted(data, *a, **k):
        made.append(data["message"]["text"])
        return real(data, *a, **k)

    monkeypatch.setattr(Record, "model_validate", counted)
    fold.add(second, "v2", "b" * 40)
    assert sorted(made) == sorted(
        [
            reworded_before["template"]["text"],
            reworded_after["template"]["text"],
            other_exception["template"]["text"],
            other_exception_after["template"]["text"],
        ]
    )
    by_text = {fold.record(eid)["message"]["text"]: fold.record(eid) for eid in [r["id"] for r in first + second]}
    new, old = by_text[reworded_after["template"]["text"]], by_text[reworded_before["template"]["text"]]
    assert old["history"]["replaced_by"] == new["id"] and new["history"]["replaces"] == [old["id"]]
    moved = [r for r in second if r["exception"]["name"] == "RuntimeError"][0]
    was = [r for r in first if r["exception"]["name"] == "ValueError" and r["message"]["text"].startswith("no such")][0]
    assert fold.record(moved["id"])["history"]["replaces"] == [was["id"]]
    assert all(fold.record(r["id"])["history"]["replaced_by"] is None for r in first if r["message"]["text"].startswith("a gone"))


def test_entries_that_carry_the_same_history_forward_share_one_made_once_per_release(monkeypatch):
    """Most entries of a release have no move and no new link: their history is the one they
    had, seen now, made once for all the entries that had that very history rather than once
    per entry (a pydantic model each, ~11,500 a vLLM release); each record's history is as before."""
    from consumer_data import site, template

    from crawler.model.records import History
    from crawler.versions import history as history_module

    made = []

    class Counted(History):
        def __init__(self, **data):
            made.append(data)
            super().__init__(**data)

    monkeypatch.setattr(history_module, "History", Counted)
    records = _fold_records([site(template(f"error number {i} ", ("x",)), f"pkg/m{i % 3}.py", 10 + i, f"f{i}") for i in range(40)])
    fold = Fold()
    for n in (1, 2, 3):
        fold.add(records, f"v{n}", str(n) * 40)
    assert len(made) == 3
    for record in records:
        history = fold.record(record["id"])["history"]
        assert history["first_seen"]["version"] == "v1" and history["last_seen"]["version"] == "v3"
        assert history["moved"] == [] and history["replaces"] == [] and not history["retired"]


@pytest.mark.slow
def test_the_history_changelog_says_what_each_version_brought(upstream, cli, tmp_path):
    """A backfill's pull request body is this summary: it said only "3 version(s) ...: 2 entries, 2
    retired", so its reviewer could not tell which release reworded, retired or added what."""
    changelog = tmp_path / "changelog.md"
    result = cli("history", "--repo", upstream.path, *ARGS, "--out", tmp_path / "out", "v1.0", "v1.1", "v2.0", "--changelog", changelog)
    assert result.exit_code == 0, result.output
    text = changelog.read_text()
    assert text.startswith("## Error catalogue: `acme/widgets` history\n\n3 version(s), `v1.0 … v2.0`, up to ")
    assert text.endswith(
        "| Version | First seen | Of them replacing an entry (reworded, re-typed) | Retired | Moved to another file |\n"
        "| --- | ---: | ---: | ---: | ---: |\n"
        "| `v1.0` (the first covered: every entry) | 2 | 0 | 0 | 0 |\n"
        "| `v1.1` | 1 | 1 | 1 | 0 |\n"
        "| `v2.0` | 1 | 0 | 1 | 0 |\n"
    ), text
    # the same words from the per-release datasets a backfill folds
    releases, folded = tmp_path / "releases", tmp_path / "folded.md"
    assert cli("history", "--repo", upstream.path, *ARGS, "--per-release", releases, "v1.0", "v1.1", "v2.0").exit_code == 0
    assert cli("history", "--fold", releases, "--out", tmp_path / "fold-out", "--changelog", folded).exit_code == 0
    assert folded.read_text() == text
