"""Who acts (``catalogue.actions``) over hostile message text from the crawled code: each pattern
read over a message is linear in it, so one raise never costs a crawl more than its share."""

from __future__ import annotations

import time

import pytest
from helpers import meaning_records

#: A message of four words parted by long runs of non-word characters (an ASCII table's rules):
#: ``(?:\W*\w+\W+){0,3}?failed`` split each run between two groups' \W+ and \W*, cubic in it.
RULED = "a" + "=" * 1600 + "b" + "=" * 1600 + "c" + "=" * 1600 + "d" + "=" * 1600 + "e"

SERVING = f'''
def create_completion(count):
    if count < 0:
        raise ValueError("{RULED}")
'''


@pytest.mark.slow
def test_a_message_of_long_rules_is_judged_in_linear_time(crawl_once):
    """In a request handler's file (where "<a few words> failed" is asked of the message): minutes
    for this one raise before (19 s at runs of 800, 8x that at twice it); a hang guard, not a speed check."""
    start = time.monotonic()
    records = meaning_records(crawl_once, {"pkg/__init__.py": "", "pkg/entrypoints/openai/serving.py": SERVING})
    assert time.monotonic() - start < 60
    (record,) = [r for r in records if r["message"]["text"] == RULED]
    assert record["meaning"]["action"]["actor"] == "request", record["meaning"]["action"]


def _cpu(call) -> float:
    start = time.process_time()
    call()
    return time.process_time() - start


def _grows_as_its_length(make, call, size: int) -> None:
    """``call(make(n))`` at 8 times the size costs at most a generous multiple of it at the size
    (linear: 8, quadratic 64), or nothing worth a ratio: work done, not wall time."""
    small = max(min(_cpu(lambda: call(make(size))) for _ in range(3)), 1e-4)
    large = min(_cpu(lambda: call(make(size * 8))) for _ in range(2))
    assert large < 0.02 or large / small < 24, (large, small)


@pytest.mark.parametrize(
    "make",
    [
        pytest.param(lambda n: "not this" + " and use that" * n, id="negated-ands"),
        pytest.param(lambda n: "use it" + "\n" * (10 * n), id="newlines"),
        pytest.param(lambda n: "x" + " or " * (3 * n) + "y", id="spaced-ors"),
        pytest.param(lambda n: "x" + " - " * (3 * n) + "y", id="spaced-dashes"),
        pytest.param(lambda n: "x (Could this error message be improved?" * (n // 4), id="torch-unclosed"),
    ],
)
def test_a_remedy_is_read_in_linear_time(make):
    """The remedy a message gives (``actions.remedy``): each "and"/"or" of a sentence read its
    prefix for a negation and its rest for a remedy (quadratic in the "and"s: 0.05 s at 20,000
    characters, 2 min at a megabyte), a run of line ends or spaces was split at each of its
    starts (``_INTRO``, ``_TORCH_BOILERPLATE``: 1 s at 10,000)."""
    from crawler.catalogue.actions import remedy

    _grows_as_its_length(make, lambda t: remedy({"message": {"text": t}, "meaning": {}}), 1500)


@pytest.mark.parametrize(
    ("code", "short"),
    [
        pytest.param(lambda n: "x = 'auto'" + " " * (10 * n) + "\n", "x = 'auto'\n", id="spaced-value"),
        pytest.param(lambda n: "x = a" + " " * (10 * n) + "b\n", "x = a b\n", id="spaced-values"),
        pytest.param(lambda n: "\n" * (10 * n) + "x = 'auto'\n", "x = 'auto'\n", id="blank-lines"),
    ],
)
def test_what_the_code_sets_itself_is_read_in_linear_time(code, short):
    """``phrasing.sets_itself`` over a crawled snippet: ``^\\s*`` ran over every blank line after each
    line start, and ``(.+?)\\s*$`` tried the rest of a line's spaces at each of them (0.31 s at
    8,000 spaces, 4 times that at twice it); the answer is as for the snippet kept short."""
    from crawler.catalogue.phrasing import sets_itself

    _grows_as_its_length(code, lambda c: sets_itself("x != 'auto'", c), 1500)
    assert sets_itself("x != 'auto'", code(1)) == sets_itself("x != 'auto'", short)
