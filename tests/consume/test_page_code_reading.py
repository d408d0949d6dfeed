"""What an entry's page says of the code, on a crawl of a fixture repository: a message field the
source wraps over lines shown on one line; a ``while`` test listed once (its loop, not also as an
``if``); and a raise the same function always catches, said to be (derived from the code, and only
where the code shown proves it). The HTML page is read in a real browser in test_browser.py."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

WIDGETS = '''
import logging

logger = logging.getLogger(__name__)


def describe(kind, strict):
    raise ValueError(f"""Widget kind {kind} is not known in {'strict'
        if strict
        else 'lenient'} mode""")


def drain(queue):
    while queue.pending:
        if queue.broken:
            raise RuntimeError("Widget queue broke while draining")
        queue.step()


def probe(device):
    try:
        if device.free < 0:
            raise ValueError(f"Widget device reports negative free memory {device.free}")
        return device.free
    except Exception as exc:
        logger.warning("probe failed: %s", exc)
        return 0


def load(path, strict):
    try:
        if not path:
            raise ValueError("Widget path is empty")
    except ValueError:
        if strict:
            raise
        return None


def open_it(path):
    try:
        if not path:
            raise ValueError("Widget path must not be blank")
    except KeyError:
        return None


def long_one(path):
    try:
        if not path:
            raise ValueError("Widget path is missing in a long function")
        a = 1
        a = 2
        a = 3
        a = 4
        a = 5
        a = 6
        a = 7
        a = 8
        a = 9
        a = 10
        a = 11
        a = 12
        a = 13
        a = 14
        a = 15
        a = 16
        a = 17
        a = 18
        a = 19
        a = 20
        a = 21
        return a
    except Exception:
        if path is None:
            raise
        return None


class Abort(BaseException):
    pass


def stop(flag):
    try:
        if flag:
            raise Abort("Widget run was stopped by the operator")
    except Exception:
        return None
'''

ONE_LINE = "Widget kind {kind} is not known in {'strict' if strict else 'lenient'} mode"
CAUGHT = "It never reaches a caller: `except Exception as exc` (line 24) in this function catches it and does not raise again."


def crawl(fixture_repo, cli, tmp_path: Path) -> tuple[Path, dict[str, str]]:
    """The widgets crawled; the dataset and each entry's id by the first word after "Widget"."""
    fixture_repo.commit({"pkg/__init__.py": "", "pkg/widgets.py": WIDGETS}, tag="v1")
    out = tmp_path / "out"
    run = cli("crawl", "--repo", fixture_repo.path, "--ref", "v1", "--name", "acme/widgets", "--include", "pkg/**/*.py", "--out", out)
    assert run.exit_code == 0, run.output
    data = out / "acme" / "widgets"
    index = json.loads((data / "search.json").read_text(encoding="utf-8"))
    ids = {e["text"]: e["id"] for e in index["entries"]}
    return data, {
        "kind": ids["Widget kind {kind} is not known in {'strict'\n        if strict\n        else 'lenient'} mode"],
        "queue": ids["Widget queue broke while draining"],
        "device": ids["Widget device reports negative free memory {device.free}"],
        "empty": ids["Widget path is empty"],
        "blank": ids["Widget path must not be blank"],
        "long": ids["Widget path is missing in a long function"],
        "abort": ids["Widget run was stopped by the operator"],
    }


@pytest.fixture
def crawled(fixture_repo, cli, tmp_path):
    return crawl(fixture_repo, cli, tmp_path)


def _show(cli, data: Path, entry: str) -> str:
    run = cli("show", entry, "--data", data, "--no-pager")
    assert run.exit_code == 0, run.output
    return run.stdout


def _facts(page: str) -> list[str]:
    lines = page.splitlines()
    at = lines.index("How the code gets there (derived from the code)")
    return [line.strip() for line in lines[at + 2 : lines.index("", at)]]


@pytest.mark.slow
def test_show_puts_a_wrapped_field_on_one_line(crawled, cli):
    data, ids = crawled
    assert f"Message\n-------\n    {ONE_LINE}\n" in _show(cli, data, ids["kind"])


@pytest.mark.slow
def test_show_lists_a_while_test_once(crawled, cli):
    data, ids = crawled
    assert _facts(_show(cli, data, ids["queue"])) == ["if queue.broken", "in while queue.pending"]


@pytest.mark.slow
def test_show_says_a_raise_the_function_always_catches_never_reaches_a_caller(crawled, cli):
    data, ids = crawled
    assert _facts(_show(cli, data, ids["device"])) == ["if device.free < 0", CAUGHT]
    # a handler that may raise again, one that does not catch it, and one whose end the snippet
    # (25 lines) does not show: nothing is said
    # ... nor an exception `except Exception` does not catch (a BaseException of its own)
    for name in ("empty", "blank", "long", "abort"):
        assert "never reaches a caller" not in _show(cli, data, ids[name]), name


@pytest.mark.slow
def test_markdown_pages_say_the_same(crawled, cli, tmp_path):
    data, ids = crawled
    assert cli("render", "--data", data, "--out", tmp_path / "md", "--format", "markdown").exit_code == 0

    def page(name: str) -> str:
        return (tmp_path / "md" / "errors" / f"{ids[name]}.md").read_text(encoding="utf-8")

    assert f"## Message\n\n```\n{ONE_LINE}\n```" in page("kind")
    assert "`if queue.broken`" in page("queue") and "`if queue.pending`" not in page("queue")
    assert "It never reaches a caller: `except Exception as exc` \\(line 24\\) in this function catches it" in page("device")
    assert "never reaches a caller" not in page("empty")


@pytest.mark.slow
def test_a_hostile_snippet_is_read_for_nothing(crawled):
    """The snippet is the dataset's text: nested past the parser, far longer than a snippet, or not
    code at all, it says nothing (and is not parsed a hundred ways when far too long)."""
    import gzip

    from crawler.consume.meaning_page import swallowed

    data, ids = crawled
    records = {r["id"]: r for r in map(json.loads, gzip.decompress((data / "errors.jsonl.gz").read_bytes()).splitlines())}
    record = records[ids["device"]]
    assert swallowed(record) == CAUGHT
    site = record["sites"][0]
    for code in (
        "try:\n    x = " + "(" * 1000 + ")" * 1000 + "\nexcept Exception:\n    pass\n",
        "try:\n" + "    x = 1\n" * 3000 + "except Exception:\n    pass\n",
        "try:\n\x00\x1b[2J raise\nexcept Exception:\n    pass\n",
    ):
        hostile = {**record, "sites": [{**site, "line": site["snippet"]["start_line"] + 1, "snippet": {**site["snippet"], "code": code}}]}
        assert swallowed(hostile) is None
