"""Messages built from what a function of ANOTHER module returns (issue #19): a list of reasons a
checker in one module builds and a caller in another joins into its raise, a message an imported
function returns, through each form of import. Crawled from a real repository and matched
through the real CLI."""

from __future__ import annotations

import json
import re

import pytest

from tests.extract.test_assembled import TOML  # acme/server: srv/**/*.py, raises, asserts and logs
from tests.helpers import best_match, crawl_with_config, jsonl_bytes

CHECKS = """
def check_config(cfg):
    reasons = []
    if cfg.dcp:
        reasons.append("DCP not supported")
    if cfg.pp > 1:
        reasons.append(f"pipeline parallel size {cfg.pp} not supported")
    return reasons


def why_invalid(cfg):
    if cfg.x:
        return f"x must be unset, got {cfg.x}"
    if cfg.y:
        return "y is deprecated; use z"
    return None



def lora_problems(cfg):
    out = []
    if cfg.lora:
        out.append("LoRA cannot be combined with speculative decoding")
    return out
"""

INIT = """from srv.checks import check_config as check_all
"""

RUN = """
import logging

from srv import check_all, checks
import srv.checks as c
from srv.checks import check_config, why_invalid
from thirdparty import external_reasons

logger = logging.getLogger(__name__)


def joined(cfg):
    reasons = check_config(cfg)
    if reasons:
        raise ValueError(f"Unsupported configuration: {', '.join(reasons)}")


def through_module(cfg):
    errors = checks.check_config(cfg)
    errors.append("the backend was built without it")
    raise RuntimeError("Cannot start the engine: " + "; ".join(errors))


def through_reexport(cfg):
    found = check_all(cfg)
    raise NotImplementedError(" | ".join(found))


def an_alias(cfg):
    found = c.lora_problems(cfg)
    raise TypeError("Bad combination: " + ", ".join(found))


def returned(cfg):
    msg = why_invalid(cfg)
    if msg:
        raise ValueError(msg)


def logged(cfg):
    reasons = check_config(cfg)
    logger.warning(", ".join(reasons))


def unseen(cfg):
    reasons = external_reasons(cfg)
    raise ValueError(f"External check failed: {', '.join(reasons)}")


def unseen_logged(cfg):
    reasons = external_reasons(cfg)
    logger.error(", ".join(reasons))
"""

FILES = {"srv/__init__.py": INIT, "srv/checks.py": CHECKS, "srv/run.py": RUN}


@pytest.fixture
def crawled(fixture_repo, cli, tmp_path):
    data, records = crawl_with_config(fixture_repo, cli, tmp_path, FILES, TOML)
    assert cli("validate", data).exit_code == 0
    return data, records


@pytest.mark.slow
def test_each_form_takes_the_imported_functions_pieces(crawled):
    _, records = crawled
    reasons = ["DCP not supported", "pipeline parallel size {cfg.pp} not supported"]
    assert records["Unsupported configuration: {', '.join(reasons)}"]["message"]["alternatives"] == reasons
    assert records['Cannot start the engine: {"; ".join(errors)}']["message"]["alternatives"] == [*reasons, "the backend was built without it"]
    assert records['{" | ".join(found)}']["message"]["alternatives"] == reasons  # a package's re-export
    assert records['Bad combination: {", ".join(found)}']["message"]["alternatives"] == ["LoRA cannot be combined with speculative decoding"]
    # a message the function returns: the entry shows its most telling text, with every one
    returned = records["y is deprecated; use z"]
    assert returned["message"]["alternatives"] == ["x must be unset, got {cfg.x}", "y is deprecated; use z"]
    assert returned["sites"][0]["qualname"] == "returned"
    # a log of the imported list alone says what the list holds
    assert records['{", ".join(reasons)}']["kind"] == "log"


@pytest.mark.slow
def test_a_function_errcat_cannot_see_leaves_the_message_as_its_file_gives_it(crawled):
    _, records = crawled
    unseen = records["External check failed: {', '.join(reasons)}"]
    assert unseen["message"]["alternatives"] == [] and unseen["message"]["pattern"].endswith("(?P<f0>.*?)$")
    # a log that would say nothing but the unseen list is no entry
    assert not any(r["kind"] == "log" and r["sites"][0]["qualname"] == "unseen_logged" for r in records.values())


@pytest.mark.slow
@pytest.mark.parametrize(
    "paste, text",
    [
        ("ValueError: Unsupported configuration: DCP not supported, pipeline parallel size 2 not supported", "Unsupported configuration: {', '.join(reasons)}"),
        ("RuntimeError: Cannot start the engine: DCP not supported; the backend was built without it", 'Cannot start the engine: {"; ".join(errors)}'),
        ("NotImplementedError: pipeline parallel size 4 not supported", '{" | ".join(found)}'),
        ("TypeError: Bad combination: LoRA cannot be combined with speculative decoding", 'Bad combination: {", ".join(found)}'),
        ("ValueError: x must be unset, got 3", "y is deprecated; use z"),
        ("WARNING 11-30 14:21:45 [run.py:40] DCP not supported, pipeline parallel size 8 not supported", '{", ".join(reasons)}'),
    ],
)
def test_match_finds_the_message_a_user_sees(crawled, cli, paste, text):
    data, records = crawled
    assert best_match(cli, data, paste) == records[text]["id"]


@pytest.mark.slow
def test_the_pattern_claims_no_piece_the_imported_function_does_not_build(crawled):
    _, records = crawled
    pattern = records["Unsupported configuration: {', '.join(reasons)}"]["message"]["pattern"]
    assert re.match(pattern, "Unsupported configuration: DCP not supported, pipeline parallel size 2 not supported")
    assert re.match(pattern, "Unsupported configuration: GPU on fire") is None


@pytest.mark.slow
def test_an_edit_of_the_imported_function_reaches_the_unchanged_callers_entry(crawled, fixture_repo, cli, tmp_path):
    """The caller's file is unchanged, so its result comes from the cache; the join runs anew."""
    fixture_repo.commit({"srv/checks.py": CHECKS.replace("DCP not supported", "decode context parallel is not supported")}, tag="v2")
    out = tmp_path / "out2"
    assert cli("crawl", "--repo", fixture_repo.path, "--ref", "v2", "--config", tmp_path / "errcat.toml", "--out", out).exit_code == 0
    again = {r["message"]["text"]: r for r in map(json.loads, jsonl_bytes(out / "acme" / "server").splitlines())}
    assert again["Unsupported configuration: {', '.join(reasons)}"]["message"]["alternatives"] == [
        "decode context parallel is not supported",
        "pipeline parallel size {cfg.pp} not supported",
    ]


@pytest.mark.slow
def test_a_crawl_of_the_same_files_takes_the_join_from_the_cache(crawled, fixture_repo, cli, tmp_path, monkeypatch):
    from crawler.catalogue import cross_module_join

    data, _ = crawled

    def no_join(*args):
        raise AssertionError("the join ran again for the same inputs")

    monkeypatch.setattr(cross_module_join, "_join", no_join)
    out = tmp_path / "again"
    assert cli("crawl", "--repo", fixture_repo.path, "--ref", "v1", "--config", tmp_path / "errcat.toml", "--out", out).exit_code == 0
    assert jsonl_bytes(out / "acme" / "server") == jsonl_bytes(data)


@pytest.mark.slow
def test_files_that_only_moved_take_the_join_from_the_cache_and_give_a_full_crawls_bytes(crawled, fixture_repo, cli, tmp_path, monkeypatch):
    """A comment put first in the imported function's file and in the caller's (the daily sync's
    usual change) moves every line of each: the join's kept changes hold no line and still fit,
    so it does not run; the dataset is byte for byte a full crawl's. A file changed otherwise
    runs it again."""
    from crawler.catalogue import cross_module_join

    tree = fixture_repo.path
    fixture_repo.commit(
        {"srv/checks.py": "# moved down\n" + (tree / "srv/checks.py").read_text(), "srv/run.py": "# moved\n\n" + (tree / "srv/run.py").read_text()}, tag="v2"
    )
    ran, real = [], cross_module_join._join

    def counted(*args):
        ran.append(True)
        return real(*args)

    monkeypatch.setattr(cross_module_join, "_join", counted)
    config = tmp_path / "errcat.toml"
    for out, extra in (("moved", ()), ("full", ("--no-cache",))):
        assert cli("crawl", "--repo", fixture_repo.path, "--ref", "v2", "--config", config, "--out", tmp_path / out, *extra).exit_code == 0
        assert ran == ([] if out == "moved" else [True])
    assert jsonl_bytes(tmp_path / "moved" / "acme" / "server") == jsonl_bytes(tmp_path / "full" / "acme" / "server")
    fixture_repo.commit({"srv/checks.py": (tree / "srv/checks.py").read_text().replace("DCP not", "DCP is not")}, tag="v3")
    ran.clear()
    assert cli("crawl", "--repo", fixture_repo.path, "--ref", "v3", "--config", config, "--out", tmp_path / "v3").exit_code == 0
    assert ran == [True]
    records = {r["message"]["text"]: r for r in map(json.loads, jsonl_bytes(tmp_path / "v3" / "acme" / "server").splitlines())}
    assert "DCP is not supported" in records["Unsupported configuration: {', '.join(reasons)}"]["message"]["alternatives"]


def test_the_join_leaves_the_results_it_is_given_as_they_are():
    """The join returns copies of the results it changes: a result kept in memory (the next
    release of a history, a cache's decoded row) still says which of its sites take an imported
    list, and a second join over the originals does the same again."""
    import copy

    from crawler.catalogue.cross_module_join import apply
    from crawler.extract.visitor import extract_file

    results = [extract_file("srv/checks.py", CHECKS.encode()), extract_file("srv/run.py", RUN.encode())]
    for r in results:
        r["module"] = r["path"][:-3].replace("/", ".")
    before = copy.deepcopy(results)
    joined = apply(results)
    assert results == before
    changed = [j for j, r in zip(joined, results, strict=True) if j is not r]
    assert changed and all("imported" not in j for j in changed)
    assert any("DCP not supported" in json.dumps(site["template"]) for j in changed for site in j["sites"])
    assert apply(results) == joined
