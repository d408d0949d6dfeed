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
