"""``assert cond, ValueError("...")``: older vLLM releases (0.4 to 0.10) give an assert an
exception instance as its message. Python prints ``AssertionError: <str of it>``, and the str of
an exception of one argument is that argument, so the entry's message is the argument's
template, not one opaque ``{ValueError(...)}`` field that no paste can match."""

from __future__ import annotations

import re

import pytest

from crawler.extract.visitor import extract_file

CODE = '''
def check(block_size, kind):
    assert block_size in (16, 32), ValueError(
        "Torch SPDA does not support block-sparse attention.")
    assert kind, RuntimeError(f"unknown kind {kind!r} for block size {block_size}")
    assert kind != "x", ValueError("two", "arguments")
    assert kind != "y", make_error("built elsewhere")
'''


def test_an_exception_given_as_an_asserts_message_is_read_for_its_argument():
    sites = {s["line"]: s for s in extract_file("pkg/check.py", CODE.encode())["sites"]}
    first, second = sites[3]["template"], sites[5]["template"]
    assert sites[3]["exception"] == "AssertionError"
    assert first["text"] == "Torch SPDA does not support block-sparse attention." and not first["opaque"]
    assert second["text"] == "unknown kind {kind!r} for block size {block_size}" and second["form"] == "fstring"
    assert re.fullmatch(second["pattern"], "unknown kind 'paged' for block size 8")


@pytest.mark.parametrize("line", [6, 7])
def test_an_exception_of_several_arguments_or_a_call_of_a_function_is_not_read_as_one(line):
    """str(ValueError("two", "arguments")) is the tuple's text, and make_error may return anything."""
    sites = {s["line"]: s for s in extract_file("pkg/check.py", CODE.encode())["sites"]}
    assert "two" not in sites[line]["template"]["text"].split("{")[0] or sites[line]["template"]["opaque"]
    assert sites[line]["template"]["text"] != "built elsewhere"
