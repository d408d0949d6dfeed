"""Titles cut at a word or field boundary (issue #20), never in the middle of a word."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from crawler.catalogue.entries import TITLE_WIDTH, cut_title, title_for

KV = "Unknown KV cache group kind '{kind}' in backend_per_kind. Valid kinds are: {', '.join(sorted(valid_kinds))}."


def test_the_issue_title_ends_at_a_word():
    title = title_for({"text": KV}, "ValueError", "f")
    assert title == "Unknown KV cache group kind '{kind}' in backend_per_kind.…"
    assert len(title) <= TITLE_WIDTH


@pytest.mark.parametrize(
    "text, expected",
    [
        # a field is never cut inside, even where it holds spaces
        ("Expected the number of attention heads in this model {num_heads if x else y} to divide", "Expected the number of attention heads in this model…"),
        # a field ending just before the limit is a boundary too
        ("The value given for gpu_memory_utilization must be {a}{b} and this goes on", "The value given for gpu_memory_utilization must be {a}{b}…"),
        # literal braces are not fields
        ("A dictionary literal {{ is not a field and the text goes on and on past sixty", "A dictionary literal {{ is not a field and the text goes on…"),
        # one long word after the first half: cut inside it rather than lose it all
        ("Could not read /a/very/long/path/that/never/ends/with/any/space/in/it/at/all/ok", "Could not read /a/very/long/path/that/never/ends/with/any/s…"),
    ],
)
def test_cut_points(text, expected):
    assert cut_title(text) == expected
    assert len(expected) <= TITLE_WIDTH


def test_a_title_cut_at_a_space_is_the_cut_it_always_was():
    """Titles are in every record's related list: one already cut between words stays as it was."""
    text = "a" * 50 + " bbbbbbbb cccccccccc"
    assert cut_title(text) == text[: TITLE_WIDTH - 1].rstrip() + "…" == "a" * 50 + " bbbbbbbb…"


def test_short_titles_are_whole():
    assert cut_title("x" * TITLE_WIDTH) == "x" * TITLE_WIDTH
    assert title_for({"text": "", "opaque": True}, "KeyError", "A.b") == "KeyError in A.b"


def _cut_points_char_by_char(text, end):
    """The cut points read one character at a time: what the search over marks must find."""
    points, depth, i = [], 0, 0
    while i < min(len(text), end):
        if depth == 0 and text.startswith(("{{", "}}"), i):
            i += 2
            continue
        if text[i] == "{":
            points += [i] if depth == 0 else []
            depth += 1
        elif text[i] == "}" and depth:
            depth -= 1
            points += [i + 1] if depth == 0 else []
        elif text[i] == " " and depth == 0:
            points.append(i)
        i += 1
    return points


@pytest.mark.slow
@given(st.text(alphabet="{} a}{", max_size=90), st.integers(min_value=0, max_value=100))
def test_cut_points_are_those_read_one_character_at_a_time(text, end):
    """Braces doubled across the end (``…{{`` at ``end - 1``), fields never closed, runs of braces."""
    from crawler.catalogue.entries import _cut_points

    assert _cut_points(text, end) == _cut_points_char_by_char(text, end)
