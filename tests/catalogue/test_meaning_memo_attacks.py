"""Attacks on the kept meanings (``catalogue.meaning_memo``): each changes what a meaning reads
without touching the file of its raise (another file's declarations, the call graph, the
upstream's conventions, the memo itself, another repository in the same cache), then holds that
a crawl with the memo gives the bytes of a ``--no-cache`` crawl of the same commit over the same
dataset in place, and that the memo was used (so the attack met it)."""

from __future__ import annotations

import shutil
import sqlite3
import zlib
from pathlib import Path

import orjson
import pytest
from helpers import MEANING_TOML

import crawler.crawl
from crawler.catalogue import meaning_join, meaning_memo

CONFIG = """
from dataclasses import dataclass

from .shapes import Shape


@dataclass
class CacheConfig:
    block_size: int = 16
    shape: Shape | None = None

    def __post_init__(self):
        if self.block_size > 64:
            raise ValueError(f"block_size must be at most 64, got {self.block_size}")
        if self.shape.rank < 0:
            raise ValueError("the shape's rank must not be negative")
        if self.block_size == 0:
            self._verify_swap()

    def _verify_swap(self):
        if self.block_size is None:
            raise ValueError("no swap without a block size")
"""

SHAPES = """
from dataclasses import dataclass


@dataclass
class Shape:
    rank: int = 1
"""

ARGS = """
from .config import CacheConfig


def get_kwargs(cls):
    return {}


def add_cli_args(parser):
    cache_kwargs = get_kwargs(CacheConfig)
    parser.add_argument("--block-size", **cache_kwargs["block_size"])
"""

SAMPLING = SHAPES.replace("class Shape", "class SamplingParams").replace("rank: int = 1", "top_k: int = 0")

HANDLER = """
def handle(req):
    if req is None:
        raise ValueError("top_k must be given")


def handle_again(req):
    if not req:
        raise ValueError("top_k must not be empty")
"""

TREE = {
    "pkg/__init__.py": "",
    "pkg/config.py": CONFIG,
    "pkg/shapes.py": SHAPES,
    "pkg/arg_utils.py": ARGS,
    "pkg/sampling.py": SAMPLING,
    "pkg/handler.py": HANDLER,
}

#: Each attack: the files of its second commit (none of them raises what they change the meaning of).
ATTACKS = {
    # the option's spelling: a lookup of field_flags gives another value
    "option renamed": {"pkg/arg_utils.py": ARGS.replace("--block-size", "--cache-block-size")},
    # the option gone: a key of field_flags absent now, and CacheConfig no flag owner
    "option removed": {"pkg/arg_utils.py": ARGS.replace('    parser.add_argument("--block-size", **cache_kwargs["block_size"])\n', "")},
    # another settings class of the same simple name: by_name gives two, the chain self.shape.rank stops
    "class name shared": {"pkg/other.py": SHAPES},
    # the held class no longer a settings class
    "held class plain": {"pkg/shapes.py": SHAPES.replace("@dataclass\n", "")},
    # a field of the request model: the subject of a module-level function's message
    "request field gone": {"pkg/sampling.py": SAMPLING.replace("top_k", "top_p")},
    # a second request model with that field: which one the message is about is no longer known
    "request field shared": {"pkg/sampling.py": SAMPLING + SAMPLING.replace("SamplingParams", "BeamParams")},
    # a second caller elsewhere: the one guarded caller of _verify_swap is no longer alone
    "second caller": {"pkg/user.py": "from .config import CacheConfig\n\n\ndef use(c: CacheConfig):\n    CacheConfig._verify_swap(c)\n"},
}


@pytest.fixture
def in_process(monkeypatch):
    """The meanings made in this process (a crawl makes them in a forked helper), counted."""
    taken: list[int] = []
    real = meaning_memo.meanings

    def counting(records, results, settings, callers, memo, tables=None):
        out = real(records, results, settings, callers, memo, tables)
        taken.append(memo.taken)
        return out

    monkeypatch.setattr(meaning_join, "memo_meanings", counting)
    monkeypatch.setattr(crawler.crawl, "_aside", lambda: None)
    return taken


def _crawl(cli, repo: Path, config: Path, out: Path, ref: str, *extra: object) -> None:
    result = cli("crawl", "--repo", repo, "--ref", ref, "--upstream", "widgets", "--config", config, "--out", out, *extra)
    assert result.exit_code == 0, result.output


def files_of(out: Path) -> dict[str, bytes]:
    data = out / "acme" / "widgets"
    return {p.relative_to(data).as_posix(): p.read_bytes() for p in sorted(data.rglob("*")) if p.is_file() and p.name != "manifest.json"}


def same_as_fresh(cli, repo: Path, config: Path, out: Path, ref: str, tmp_path: Path) -> dict[str, bytes]:
    """Crawl ``ref`` with the cache into ``out`` and without it into a copy of ``out`` as it was:
    the two datasets (but for the manifests' digests) must be the same bytes."""
    fresh = tmp_path / f"fresh-{ref}"
    shutil.copytree(out, fresh, symlinks=True)
    _crawl(cli, repo, config, out, ref)
    _crawl(cli, repo, config, fresh, ref, "--no-cache")
    cached = files_of(out)
    assert cached == files_of(fresh)
    return cached


def warm(fixture_repo, cli, tmp_path: Path, toml: str = MEANING_TOML) -> Path:
    """v1 crawled cold, then v1b (one more file: the source join runs again, and keeps the memo)."""
    fixture_repo.commit(TREE, tag="v1")
    config = tmp_path / "errcat.toml"
    config.write_text(toml)
    _crawl(cli, fixture_repo.path, config, tmp_path / "out", "v1")
    fixture_repo.commit({"pkg/extra.py": 'def extra():\n    raise ValueError("one more")\n'}, tag="v1b")
    _crawl(cli, fixture_repo.path, config, tmp_path / "out", "v1b")
    return config


@pytest.mark.slow
@pytest.mark.parametrize("attack", sorted(ATTACKS))
def test_a_lookup_changed_in_another_file_gives_the_fresh_bytes(fixture_repo, cli, tmp_path, in_process, attack):
    config = warm(fixture_repo, cli, tmp_path)
    before = files_of(tmp_path / "out")
    fixture_repo.commit(ATTACKS[attack], tag="v2")
    in_process.clear()
    after = same_as_fresh(cli, fixture_repo.path, config, tmp_path / "out", "v2", tmp_path)
    assert in_process and in_process[-1] > 0  # the memo was met: some meanings were taken
    changed = {name for name in after if before.get(name) != after[name] and name.startswith("errors/")}
    assert changed  # the attack changed some record's meaning (else it tested nothing)


@pytest.mark.slow
def test_changed_conventions_in_errcat_toml_give_the_fresh_bytes(fixture_repo, cli, tmp_path, in_process):
    config = warm(fixture_repo, cli, tmp_path)
    config.write_text(
        MEANING_TOML.replace('knob_kwargs = ["get_kwargs"]', "knob_kwargs = []").replace('request_models = ["pkg/sampling.py"]', "request_models = []")
    )
    fixture_repo.commit({"pkg/extra.py": 'def extra():\n    raise ValueError("one more, again")\n'}, tag="v2")
    same_as_fresh(cli, fixture_repo.path, config, tmp_path / "out", "v2", tmp_path)


@pytest.mark.slow
def test_two_repositories_of_one_identity_sharing_a_cache_give_the_fresh_bytes(fixture_repo, cli, tmp_path, in_process):
    """Another clone, whose declarations differ, crawled into the same cache between two crawls of
    the first: each crawl's meanings are its own repository's."""
    config = warm(fixture_repo, cli, tmp_path)
    other = type(fixture_repo)(tmp_path / "other")
    other.commit({**TREE, **ATTACKS["option renamed"], **ATTACKS["second caller"]}, tag="v1b")
    other_out = tmp_path / "other-out"
    _crawl(cli, other.path, config, other_out, "v1b")
    other.commit({"pkg/extra.py": 'def extra():\n    raise ValueError("one more")\n'}, tag="v2")
    in_process.clear()
    same_as_fresh(cli, other.path, config, other_out, "v2", tmp_path)
    fixture_repo.commit({"pkg/extra.py": 'def extra():\n    raise ValueError("one more")\n'}, tag="v2")
    same_as_fresh(cli, fixture_repo.path, config, tmp_path / "out", "v2", tmp_path / "again")


def _memo_rows(cache_dir: Path) -> list[tuple[str, bytes]]:
    with sqlite3.connect(cache_dir / "joins" / "results.sqlite3") as db:
        return db.execute("SELECT key, value FROM results WHERE key LIKE '%:meanings:%'").fetchall()


def _rewrite(cache_dir: Path, change) -> None:
    """Each kept memo decoded, changed by ``change`` and put back as the cache encodes it."""
    with sqlite3.connect(cache_dir / "joins" / "results.sqlite3") as db:
        for key, value in db.execute("SELECT key, value FROM results WHERE key LIKE '%:meanings:%'").fetchall():
            head = 4 + int.from_bytes(value[:4], "big")
            kept = orjson.loads(zlib.decompress(value[head:]))
            change(kept)
            db.execute("UPDATE results SET value = ? WHERE key = ?", (value[:head] + zlib.compress(orjson.dumps(kept)), key))


def _knobs_the_schema_refuses(kept: dict) -> None:
    for row in kept["sites"].values():
        row[0] = [{"kind": "no such kind", "name": 5}]


@pytest.mark.slow
def test_a_memo_row_the_schema_refuses_gives_the_fresh_bytes(fixture_repo, cli, tmp_path, cache_dir, in_process):
    """A row that fits the memo's shape but whose knobs are no knobs: the records the schema
    refuses are found before anything is written, and the crawl runs its joins again."""
    config = warm(fixture_repo, cli, tmp_path)
    assert len(_memo_rows(cache_dir)) == 1
    _rewrite(cache_dir, _knobs_the_schema_refuses)
    fixture_repo.commit(ATTACKS["option renamed"], tag="v2")
    same_as_fresh(cli, fixture_repo.path, config, tmp_path / "out", "v2", tmp_path)


@pytest.mark.slow
def test_a_memo_kept_by_other_code_is_not_read(fixture_repo, cli, tmp_path, in_process, monkeypatch):
    config = warm(fixture_repo, cli, tmp_path)
    monkeypatch.setattr(crawler.crawl, "code_digest", lambda: "another errcat")
    fixture_repo.commit(ATTACKS["option renamed"], tag="v2")
    in_process.clear()
    same_as_fresh(cli, fixture_repo.path, config, tmp_path / "out", "v2", tmp_path)
    assert in_process == [0]  # (the source join ran, and took no meaning)


def _slim(named: dict, log: list) -> dict:
    """The tables with only the keys ``log`` read of each (a table it walked whole)."""
    whole = {name[: -len(meaning_memo.WHOLE)] for name, _ in log if name.endswith(meaning_memo.WHOLE)}
    read: dict[str, set] = {name: set() for name in named}
    for name, key in log:
        if name in read:
            read[name].add(key)
    slim = {}
    for name, table in named.items():
        if name in whole:
            slim[name] = table
        elif isinstance(table, dict):
            slim[name] = meaning_memo.TracedDict(name, {k: dict.__getitem__(table, k) for k in read[name] if dict.__contains__(table, k)})
        else:
            slim[name] = meaning_memo.TracedSet(name, {k for k in read[name] if set.__contains__(table, k)})
    return slim


def test_each_meaning_is_the_same_over_only_the_lookups_it_logged(fixture_repo, cli, tmp_path, monkeypatch):
    """What the memo keys a meaning by is complete: made again over tables that hold only the
    keys its lookups named (a read the tracing missed, ``len``, a set operation, a table made on
    first use, finds them gone), every record's meaning is the same. (vLLM v0.33.0: 11,581 of 11,581.)"""
    from dataclasses import replace

    from crawler.catalogue.meaning import build_tables, record_meaning

    checked: list[tuple[dict, dict]] = []

    def twice(records, results, settings, callers, tables=None):  # (tables: the join's, made anew here)
        tables, named = meaning_memo.traced(build_tables(results, settings), callers or {})
        out = {}
        for record in records:
            log: list = []
            meaning_memo._LOG[0] = log
            try:
                out[record["id"]] = record_meaning(tables, record, named["callers"])
                slim = _slim(named, log)
                meaning_memo._LOG[0] = []
                again = record_meaning(replace(tables, **{k: v for k, v in slim.items() if k != "callers"}), record, slim["callers"])
            finally:
                meaning_memo._LOG[0] = None
            checked.append((out[record["id"]], again))
        return out

    monkeypatch.setattr(meaning_join, "meanings", twice)
    monkeypatch.setattr(crawler.crawl, "_aside", lambda: None)
    fixture_repo.commit({**TREE, **ATTACKS["second caller"]}, tag="v1")
    config = tmp_path / "errcat.toml"
    config.write_text(MEANING_TOML)
    _crawl(cli, fixture_repo.path, config, tmp_path / "out", "v1", "--no-cache")
    assert len(checked) == 5 and any(made["knobs"] for made, _ in checked)
    assert [made for made, _ in checked] == [again for _, again in checked]


def test_a_read_of_a_whole_table_is_logged_however_it_is_made():
    """Its size (``len``, ``if table:``), a comparison, an operation with another set or dict:
    each reads every key, and a kept meaning that did one must be made anew when any changes."""
    table, members = meaning_memo.TracedDict("t", {"a": 1}), meaning_memo.TracedSet("s", {"x"})
    reads = [
        lambda: len(table),
        lambda: bool(table),
        lambda: table == {},
        lambda: {"b": 2} | table,
        lambda: table | {"b": 2},
        lambda: table.copy(),
        lambda: len(members),
        lambda: bool(members),
        lambda: members == {"x"},
        lambda: members <= {"x", "y"},
        lambda: {"x"} & members,
        lambda: members - {"y"},
        lambda: {"y"} | members,
        lambda: members.isdisjoint({"y"}),
        lambda: members.issubset({"x"}),
        lambda: members.union({"y"}),
    ]
    for read in reads:
        log: list = []
        meaning_memo._LOG[0] = log
        try:
            read()
        finally:
            meaning_memo._LOG[0] = None
        assert any(name.endswith(meaning_memo.WHOLE) for name, _ in log), log
