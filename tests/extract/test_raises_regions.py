"""The test-file reader parses only the top-level statements that can hold a raises block
(``extract.raises_regions``) and gives what reading the whole file gives: every form of block the
reader understands is kept wherever it stands, what is left out yields nothing read whole, and
the layouts that fool a splitter by lines (strings, brackets, continuations, a class's imports)
are cut where the tokenizer cuts them. ``bench/test_prefilter.py`` holds the same over a real tree."""

from __future__ import annotations

import ast
import textwrap

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from crawler.extract import codefacts, raises_regions
from crawler.extract.codefacts import lines_naming, read_test_file


def _whole(text: str) -> list[dict]:
    """The blocks of ``text`` read whole: parsed whole, every body walked."""
    walker = codefacts._TestWalker("tests.t", False, text.splitlines())
    walker.walk(ast.parse(text).body)
    return walker.found


def _reduced(text: str) -> tuple[str, set[int]] | None:
    return raises_regions.reduced(text, lines_naming(["aises"], text, 1), lines_naming(["import"], text, 1))


#: Every form of block the reader understands, as the body of a test.
FORMS = [
    'with pytest.raises(ValueError, match="bad widget"):\n    make()',
    'with pytest.raises((ValueError, TypeError), match=r"bad \\w+ widget"):\n    make()',
    "with pytest.raises(ValueError, match=re.escape('bad [widget]')):\n    make()",
    'with pytest.raises(ValueError, match=f"bad {name} widget"):\n    make()',
    "with pytest.raises(KeyError):\n    errors.make()",
    'with raises(ValueError, match="bad widget"):\n    make()',
    "pytest.raises(ValueError, make, 1)",
    "self.assertRaises(ValueError, make, 1)",
    "with self.assertRaises(errors.BadWidget):\n    make()",
    'self.assertRaisesRegex(ValueError, "bad widget", make)',
    'with self.assertRaisesRegexp(ValueError, "bad widget"):\n    make()',
    'with self.assertRaisesRegex(ValueError, expected_regex="bad widget"):\n    make()',
]

HEAD = "import re\nimport pytest\nfrom pytest import raises\nfrom pkg import errors\nfrom pkg.make import make\n"

#: Top-level statements holding no block, the kinds a splitter by lines gets wrong among them.
PLAIN = [
    "def helper():\n    return 1\n",
    "async def ahelper():\n    return 1\n",
    '@pytest.fixture(\n    scope="module",\n)\ndef fixture():\n    return make()\n',
    "class Plain:\n    def method(self):\n        return 2\n",
    "class Imports:\n    from pkg.other import BadWidget\n",  # a class body's import is the module's to the walker
    'def doc():\n    """\ndef not_a_function():\nimport not_an_import\n"""\n    return 3\n',
    "def brackets():\n    return make(\n1, 2,\n)\n",
    "def continued():\n    x = 1 + \\\n2\n    return x\n",
    "def quoted():\n    return 'it''s' + \"a \\\" quote\" + '''\nclass X:\n''' # '''\n",
    "try:\n    import yaml\nexcept ImportError:\n    yaml = None\nelse:\n    pass\n",
    "from pkg.errors import BadWidget as Bad\n",
    "# a comment in column 0\nVALUE = {\n'a': 1,\n}\n",
    "if True:\n    from pkg import late\n",
]


def _test(i: int, form: str, method: bool) -> str:
    if method:
        return f"class TestThing{i}:\n    def test_{i}(self, name='x'):\n" + textwrap.indent(form, " " * 8) + "\n"
    return f"def test_{i}(self=None, name='x'):\n" + textwrap.indent(form, "    ") + "\n"


@pytest.mark.parametrize("form", FORMS)
@pytest.mark.parametrize("method", [False, True])
def test_every_form_of_block_is_kept_and_read_as_whole(form, method):
    text = HEAD + "".join(PLAIN) + _test(0, form, method) + "".join(reversed(PLAIN))
    assert _reduced(text) is not None  # (something is left out)
    found = read_test_file("tests/t.py", text.encode())
    assert found["status"] == "ok" and len(found["tests"]) == 1
    assert found["tests"] == _whole(text)


def test_what_is_left_out_yields_nothing_read_whole():
    text = HEAD + "".join(PLAIN) + "".join(_test(i, form, i % 2 == 1) for i, form in enumerate(FORMS))
    reduced, kept = _reduced(text)
    lines, kept_lines = text.split("\n"), reduced.split("\n")
    dropped = [old if new != old else "" for old, new in zip(lines, kept_lines, strict=True)]
    assert any(dropped) and len(lines) == len(kept_lines)
    # the statements left out, with the file's imports, as a file of their own: no block
    alone = HEAD + "\n".join(dropped[HEAD.count("\n") :])
    assert ast.parse(alone) and _whole(alone) == []
    assert len(_whole(text)) == len(FORMS)
    assert read_test_file("tests/t.py", text.encode())["tests"] == _whole(text)


def test_the_cuts_are_where_the_tokenizer_sees_statements_begin():
    text = "".join(PLAIN)
    starts = raises_regions.statement_lines(text)
    tree = ast.parse(text)
    expected = sorted({line for stmt in tree.body for line in (stmt.lineno, *(d.lineno for d in getattr(stmt, "decorator_list", ())))})
    assert starts == expected


def test_a_class_that_imports_is_kept_and_its_import_resolves_later_blocks():
    text = (
        "import pytest\nclass Names:\n    from pkg.errors import BadWidget\n"
        "def test_x():\n    with pytest.raises(BadWidget, match='bad widget'):\n        make()\n"
    )
    found = read_test_file("tests/t.py", text.encode())["tests"]
    assert found == _whole(text) and found[0]["exceptions"] == ["pkg.errors.BadWidget"]


def test_an_import_after_a_left_out_function_still_resolves():
    text = "import pytest\ndef helper():\n    return 1\nfrom pkg.errors import BadWidget\ndef test_x():\n    with pytest.raises(BadWidget):\n        make()\n"
    assert _reduced(text) is not None
    found = read_test_file("tests/t.py", text.encode())["tests"]
    assert found == _whole(text) and found[0]["exceptions"] == ["pkg.errors.BadWidget"]


def test_texts_it_does_not_cut_are_parsed_whole():
    body = "import pytest\ndef helper():\n    return 1\ndef test_x():\n    with pytest.raises(ValueError):\n        make()\n"
    for text in (body.replace("def helper", "\fdef helper"), body.replace("\n", "\r"), body.replace("return 1", "return\v1")):
        assert _reduced(text) is None
    crlf = body.replace("\n", "\r\n")
    assert _reduced(crlf) is not None
    assert read_test_file("tests/t.py", crlf.encode())["tests"] == _whole(crlf)


def test_a_syntax_error_where_blocks_are_is_still_refused():
    text = "import pytest\ndef helper():\n    return 1\ndef test_x():\n    with pytest.raises(ValueError):\n        make(\n"
    found = read_test_file("tests/t.py", text.encode())
    assert found["status"] == "skipped" and "syntax error" in found["reason"]


def test_a_cut_the_parser_does_not_confirm_falls_back_to_the_whole_text():
    # an "@" in column 0 inside brackets is a matrix product, not a decorator: no cut is made there
    text = "import pytest\nX = (a\n@ b)\ndef helper():\n    return 1\ndef test_x():\n    with pytest.raises(ValueError):\n        make()\n"
    assert 3 not in raises_regions.statement_lines(text)
    assert read_test_file("tests/t.py", text.encode())["tests"] == _whole(text)


@pytest.mark.slow
@settings(max_examples=200, deadline=None)
@given(st.lists(st.one_of(st.sampled_from(PLAIN), st.tuples(st.sampled_from(FORMS), st.booleans())), max_size=8))
def test_any_file_of_these_pieces_reads_as_whole(pieces):
    parts = [HEAD]
    for i, piece in enumerate(pieces):
        parts.append(piece if isinstance(piece, str) else _test(i, *piece))
    text = "".join(parts)
    assert read_test_file("tests/t.py", text.encode())["tests"] == _whole(text)
