"""errcat match on a crawl of a fixture repository, as a user reads its answer: what it claims,
how sure it is, and where it sends them next."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

ENGINE = """
import logging

logger = logging.getLogger(__name__)


def run(pool):
    try:
        start(pool)
    except Exception:
        logger.exception("Widget engine failed to start.")
        raise


def start(pool):
    if pool.free <= 0:
        raise ValueError(f"Widget cache has no room left ({pool.free} free): increase --pool-size when starting the engine.")


def wait(procs):
    raise RuntimeError(f"Widget worker failed with error '{procs}', please check the stack trace above for the root cause")


def launch(done, extra):
    raise RuntimeError(f"Widget start failed. Failed procs: {done}{extra}")
"""

# vLLM's logger prints the traceback of the exception it handles after the message
# (logger.exception); the ValueError is worded as a release before this one worded it.
LOGGED_THEN_TRACEBACK = """\
(Engine pid=74) INFO 05-07 06:12:45 [loader.py:391] Loading weights took 62.80 seconds
(Engine pid=74) ERROR 05-07 06:12:45 [core.py:1136] Widget engine failed to start.
(Engine pid=74) ERROR 05-07 06:12:45 [core.py:1136] Traceback (most recent call last):
(Engine pid=74) ERROR 05-07 06:12:45 [core.py:1136]   File "/srv/pkg/engine.py", line 8, in run
(Engine pid=74) ERROR 05-07 06:12:45 [core.py:1136]     start(pool)
(Engine pid=74) ERROR 05-07 06:12:45 [core.py:1136]   File "/srv/pkg/engine.py", line 15, in start
(Engine pid=74) ERROR 05-07 06:12:45 [core.py:1136]     raise ValueError(
(Engine pid=74) ERROR 05-07 06:12:45 [core.py:1136] ValueError: Widget cache has no room left (0 free): increase --pool-size when starting an engine.
"""


@pytest.fixture(scope="module")
def dataset(crawl_once) -> Path:
    config = 'default = "w"\n[upstreams.w]\nurl = "https://github.com/acme/widgets"\ninclude = ["pkg/**/*.py"]\n'
    return crawl_once({"pkg/__init__.py": "", "pkg/engine.py": ENGINE}, config=config) / "acme" / "widgets"


def _ids(dataset: Path) -> dict[str, str]:
    index = json.loads((dataset / "search.json").read_text())
    return {e["text"].split(" ")[1]: e["id"] for e in index["entries"]}


@pytest.mark.slow
def test_a_log_line_a_traceback_follows_is_not_the_answer(dataset, cli):
    """logger.exception's message says something failed; the traceback printed after it says
    what. Matched alone, the log line was the answer (covers 100%) and the error it points at
    was not mentioned."""
    ids = _ids(dataset)
    out = json.loads(cli("match", "--json", "--data", dataset, LOGGED_THEN_TRACEBACK).stdout)
    assert [(m["id"], m["role"]) for m in out["matches"]] == [(ids["engine"], "umbrella")]
    assert out["weak"][0]["id"] == ids["cache"]  # the reworded ValueError, as the nearest
    text = cli("match", "--data", dataset, LOGGED_THEN_TRACEBACK).stdout
    assert "umbrella]" in text and "its root cause; nearest entries to the paste's other lines:" in text
    assert text.index(ids["cache"]) > text.index("nearest entries")
    # what to read next is the root cause's page, not the umbrella's
    assert text.splitlines()[-1] == f"the nearest one's page: errcat show {ids['cache']} --data {dataset}"


def test_an_umbrella_alone_is_not_offered_again_as_its_own_root_cause(dataset, cli):
    """A paste of one line pointing at a root cause: the nearest entries "to the other lines" were
    the matched entry itself (the same line read as 'RuntimeError: ...'), shown a second time."""
    ids = _ids(dataset)
    paste = "(EngineCore pid=209) ERROR 05-18 08:21:14 [core.py:1140] RuntimeError: Widget worker failed with error 'x', please check the stack trace above for the root cause"
    run = cli("match", "--data", dataset, paste)
    assert run.exit_code == 0
    assert f"  {ids['worker']}  " not in run.stdout  # listed once, as the match, not again as a candidate
    assert run.stdout.splitlines()[-2:] == [
        "it points at another error, its root cause, printed elsewhere in the log: paste the lines around it.",
        f"its page: errcat show {ids['worker']} --data {dataset}",
    ]


def test_adjacent_fields_are_given_their_value_together(dataset, cli):
    """'{done}{extra}' prints one run of text; which part is whose cannot be told. Shown field by
    field, the first was said to be empty and the second to hold it all: a claim about the
    user's values that the paste does not make."""
    text = cli("match", "--data", dataset, "RuntimeError: Widget start failed. Failed procs: {'engine-0': 1}").stdout
    assert "   {done}{extra} = {'engine-0': 1}  (these fields together)\n" in text
    assert "   {done} = " not in text and "   {extra} = " not in text


def test_a_saved_log_is_read_from_its_file(dataset, cli, tmp_path):
    """'errcat match server.log' matched the file's name ("no entry matches", exit 1)."""
    log = tmp_path / "server.log"
    log.write_text(LOGGED_THEN_TRACEBACK, encoding="utf-8")
    by_name = json.loads(cli("match", "--json", "--data", dataset, log).stdout)
    assert by_name == json.loads(cli("match", "--json", "--data", dataset, LOGGED_THEN_TRACEBACK).stdout)
    assert by_name["matches"]


def test_the_answer_says_where_its_page_is_and_why_a_weak_one_ranks_first(dataset, cli):
    """The output gave ids and no way to the page; and weak candidates came in an order their
    percentages did not explain ('92%, 49%, 59%'): the exception the paste names counts too."""
    ids = _ids(dataset)
    text = cli("match", "--data", dataset, "RuntimeError: Widget start failed. Failed procs: {}").stdout
    assert text.splitlines()[-1] == f"its page: errcat show {ids['start']} --data {dataset}"
    # the old wording of the ValueError: no match, a candidate worded almost alike, named alike
    text = cli("match", "--data", dataset, "ValueError: Widget cache has no room left (0 free): increase --pool-size.").stdout
    assert "no entry matches." in text
    (line,) = [line for line in text.splitlines() if ids["cache"] in line and "alike" in line]
    assert "% alike, same exception  ValueError: Widget cache" in line
    assert text.splitlines()[-1] == f"the nearest one's page: errcat show {ids['cache']} --data {dataset}"
    assert "page:" not in cli("match", "--data", dataset, "KeyError: nothing like any entry at all").stdout


def test_a_traceback_cut_at_an_f_string_raise_is_answered(dataset, cli):
    """A traceback cut before its exception line ends in the frame's ``raise X(f"...")``: its
    literals are the source's text, fields and all, matched in full by the entry with fields.
    The reading is marked cut, and the values of a cut reading were read at an ellipsis it does
    not have: StopIteration, a traceback out of errcat match (on vLLM v0.33.0 too, for
    ``raise ValueError(f"Unknown dtype: {dtype}")``). Its fields' values are unknown."""
    ids = _ids(dataset)
    paste = (
        "Traceback (most recent call last):\n"
        '  File "/srv/pkg/engine.py", line 15, in start\n'
        '    raise ValueError(f"Widget cache has no room left ({pool.free} free): increase --pool-size when starting the engine.")\n'
    )
    out = json.loads(cli("match", "--json", "--data", dataset, paste).stdout)
    assert out["matches"][0]["id"] == ids["cache"]
    assert out["matches"][0]["fields"] == [{"expr": "pool.free", "value": None}]
    text = cli("match", "--data", dataset, paste).stdout
    assert ids["cache"] in text and "{pool.free} = {pool.free}" not in text
