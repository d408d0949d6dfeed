"""The extractor's cheap paths find what the plain definitions they stand for find: a text test
done once per file instead of per line or per statement, a walk of statements instead of every
node. Each is checked against its plain definition, written out here, on generated text and code:
the per-file results (and so the catalogue) must not depend on which of the two ran."""

from __future__ import annotations

import ast
import re
import textwrap
import unicodedata
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from crawler.extract import assembled, codefacts, knob_helpers, knobs, visitor
from crawler.extract.codefacts import child_nodes, lines_naming, statements_under
from crawler.extract.segments import anchor_tokens
from crawler.extract.visitor import _word_lines, _word_pattern, _word_patterns

CODE = textwrap.dedent("""
    import os
    class Config:
        x: int = 0
        def run(self, a, *args, **kw):
            async def inner(q=lambda v: v + 1):
                return q
            with open_it() as (h, [j, *rest]):
                self.x, d[k()] = h.read(), j
            try:
                y = [f(v) for v in a if not v]
            except (E1, E2) as err:
                self.y = err
            else:
                z: int = -1
            finally:
                close()
            match a:
                case [first, *others] if first > 1:
                    return others
                case _:
                    class Local:
                        def m(self):
                            return self.x
            for i in range(3):
                while i < 2:
                    i += 1
            else:
                pass
            return a or os.path.join(*args) + x @ y
    """)

#: Text pieces a generated file is made of: the words, what may stand before and after them
#: (a word character, a non-ASCII letter, a dot, a quote, a bracket) and line ends.
FRAGMENTS = [
    "raise",
    "assert",
    "class",
    "__init__",
    "type",
    "error",
    "error_once",
    "_",
    "x",
    "é",
    "1",
    ".",
    " ",
    "\t",
    "warn",
    "ing",
    "_once",
    "err",
    "ErrorInfo",
    "y",
    "=",
    '"',
    "'",
    "[",
    "]",
    "(",
    "\n",
    "\r\n",
    "\r",
    "f",
    "Z",
]
TEXTS = st.lists(st.sampled_from(FRAGMENTS), max_size=40).map("".join)


def _plain_word_lines(words: list[str], text: str) -> list[int]:
    """The lines (``\\n`` ends) holding a word not inside a longer one, ascending, each once."""
    starts = []
    for word in words:
        for match in re.finditer(re.escape(word) + r"(?!\w)", text):
            start = match.start()
            if start == 0 or not (text[start - 1].isalnum() or text[start - 1] == "_"):
                starts.append(start)
    return sorted({text.count("\n", 0, start) + 1 for start in starts})


@pytest.mark.slow
@settings(max_examples=300, deadline=None)
@given(TEXTS)
def test_word_lines_find_each_word_not_inside_a_longer_one(text):
    words = ["raise", "assert", "class", "__init__", "error", "error_once"]
    assert _word_lines(tuple(_word_pattern(w) for w in words), text) == _plain_word_lines(words, text)


@pytest.mark.slow
@settings(max_examples=500, deadline=None)
@given(
    TEXTS,
    st.lists(
        st.sampled_from(["warn", "warning", "warning_once", "error", "error_once", "err", "x.y", "ErrorInfo", "create_error_response", "_"]),
        min_size=1,
        max_size=6,
    ),
)
def test_words_that_begin_with_another_are_found_in_its_scan(text, words):
    # (one pattern per word no other begins: "warn" finds "warning" and "warning_once" as well)
    assert _word_lines(_word_patterns(tuple(words)), text) == _plain_word_lines(words, text)
    assert len(_word_patterns(("warn", "warning", "warning_once", "error", "error_once"))) == 2


def test_word_lines_on_the_edges():
    text = "raise\nxraise éraise _raise raise_ .raise\n__init__init__ __init__\n"
    assert _word_lines((_word_pattern("raise"), _word_pattern("__init__")), text) == [1, 2, 3]


_PLAIN_TYPE_GIVEN = re.compile(r"""(?<![\w.])type\s*=\s*[A-Za-z_]|\[["']type["']\]\s*=\s*[A-Za-z_]""")


@pytest.mark.slow
@settings(max_examples=300, deadline=None)
@given(TEXTS)
def test_type_lines_are_the_lines_the_per_line_pattern_matches(text):
    lines = text.split("\n")
    assert knob_helpers._type_lines(text) == [i for i, line in enumerate(lines, 1) if _PLAIN_TYPE_GIVEN.search(line)]


def test_type_lines_on_the_edges():
    text = 'type=f\ndtype=f\nx.type = f\nkw["type"] = g\n"type"]=h\ntype =\n  f\nétype=f\n[\'type\']=k\n'
    assert knob_helpers._type_lines(text) == [1, 4, 9]


@pytest.mark.slow
@settings(max_examples=300, deadline=None)
@given(TEXTS, st.integers(1, 5))
def test_lines_naming_are_the_lines_whose_text_names_a_word(text, first):
    words = ["error(", "x.", "_"]
    found = lines_naming(words, text, first)
    lines = text.split("\n")
    assert found == [first + i for i, line in enumerate(lines) if any(w in line for w in words)]


def test_statements_under_finds_every_statement_ast_walk_finds():
    tree = ast.parse(CODE)
    for node in ast.walk(tree):
        expected = {id(s) for s in ast.walk(node) if isinstance(s, ast.stmt) and s is not node}
        assert {id(s) for s in statements_under(node)} == expected


def test_child_nodes_are_iter_child_nodes_less_contexts_and_operators():
    leaves = (ast.expr_context, ast.operator, ast.unaryop, ast.boolop, ast.cmpop)
    for node in ast.walk(ast.parse(CODE)):
        assert child_nodes(node) == [c for c in ast.iter_child_nodes(node) if not isinstance(c, leaves)]


def _plain_returned_list(node: ast.AST) -> str | None:
    names = set()
    stack = list(node.body)
    while stack:
        stmt = stack.pop()
        if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda)):
            continue
        if type(stmt) is ast.Return:
            if type(stmt.value) is not ast.Name:
                return None
            names.add(stmt.value.id)
        stack.extend(ast.iter_child_nodes(stmt))
    return next(iter(names)) if len(names) == 1 else None


def test_returned_list_reads_the_returns_of_every_block_but_nested_definitions():
    code = textwrap.dedent("""
        def a(x):
            out = []
            try:
                return out
            except E:
                return out
            finally:
                pass
        def b(x):
            out = []
            match x:
                case 1:
                    return out
                case _:
                    return other
        def c(x):
            out = []
            def inner():
                return []
            f = lambda: out
            class K:
                def m(self):
                    return self
            return out
        def d(x):
            with ctx():
                if x:
                    for i in x:
                        return None
            return out
        """)
    functions = [s for s in ast.parse(code).body if isinstance(s, ast.FunctionDef)]
    assert [assembled.returned_list(f) for f in functions] == ["out", None, "out", None]
    for node in ast.walk(ast.parse(CODE)):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            assert assembled.returned_list(node) == _plain_returned_list(node)


def test_the_knobs_read_the_lines_they_read_when_they_split_the_text_themselves():
    """The extractor hands the knobs' readers its own lines only where they are the text's
    ``split("\\n")``: a file with old Mac line ends (which ``Source.lines`` splits, and a plain
    split does not) gives the declarations it gave before, whatever they are worth."""
    code = textwrap.dedent("""
        def _check(v):
            if v > 1:
                raise ValueError("too big")
        def api(n):
            m = n
            _check(m)
        class C:
            x: int = 0
            def f(self):
                y = self.x
                _check(y)
        """)
    for end in ("\n", "\r\n", "\r"):
        text = code.replace("\n", end)
        got = visitor.extract_file("pkg/m.py", text.encode())["declarations"]
        assert got == knobs.declarations(ast.parse(text), text, "pkg.m", False)
        assert got["aliases"] and (got["forwards"] or end == "\r")


def test_a_test_file_gives_the_same_blocks_when_functions_that_never_say_raises_are_not_walked():
    code = textwrap.dedent("""
        import pytest
        def helper():
            from pkg import errors as pytest
            return pytest
        class TestThing:
            from pkg.errors import BadThing
            def test_bad(self):
                with pytest.raises(BadThing, match="bad thing"):
                    make()
            def test_fine(self):
                assert make()
        def test_other():
            def inner():
                self.assertRaises(ValueError, make, 1)
            with pytest.raises(ValueError, match=r"no \\w+ here"):
                inner()
        """)
    for text in (code, code.replace("\n", "\r")):
        tree = ast.parse(text)
        plain = codefacts._TestWalker("tests.t", False, text.splitlines())
        plain.walk(tree.body)
        result = codefacts.read_test_file("tests/t.py", text.encode())
        assert result["tests"] == plain.found and [b["exceptions"] for b in plain.found] == [
            ["pkg.errors.BadThing"],
            ["builtins.ValueError"],
            ["builtins.ValueError"],
        ]


def _plain_anchor_tokens(segs):
    tokens = []
    for i, (kind, text) in enumerate(segs):
        if kind != "lit" or not text:
            continue
        var_before = i > 0 and segs[i - 1][0] == "var"
        var_after = i + 1 < len(segs) and segs[i + 1][0] == "var"
        for m in re.finditer(r"\w+", text):
            if (m.start() == 0 and var_before) or (m.end() == len(text) and var_after):
                continue
            tokens.append(m.group())
    return tokens


@pytest.mark.slow
@settings(max_examples=300, deadline=None)
@given(st.lists(st.one_of(st.just(("var", None)), st.tuples(st.just("lit"), st.text("ab_é1 .:{}", max_size=8))), max_size=6))
def test_anchor_tokens_leave_out_the_words_that_touch_a_field(segs):
    assert anchor_tokens(segs) == _plain_anchor_tokens(segs)


def test_the_knobs_unparse_names_as_ast_unparse_does():
    code = CODE + "\nx: é.b.c | list[int] = (1).real\ny: 'Fwd' = a().b\n"
    exprs = [n for n in ast.walk(ast.parse(code)) if isinstance(n, ast.expr) and not isinstance(n, ast.expr_context)]
    for node in exprs:
        text = ast.unparse(node)
        assert knobs._unparse(node) == text
        plain = text if type(node) in (ast.Name, ast.Attribute) and re.fullmatch(r"[A-Za-z_]\w*(?:\.[A-Za-z_]\w*)*", text) else None
        assert knobs._dotted(node) == plain


def _plain_blocks(text):
    """The raises blocks of a test file as its definition reads them: every file parsed, every body walked."""
    walker = codefacts._TestWalker("tests.t", False, text.splitlines())
    walker.walk(ast.parse(text).body)
    return walker.found


BLOCK_CALLEES = [
    "pytest.raises",
    "raises",
    "(pytest.raises)",
    "((pytest).raises)",
    "pytest . raises",
    "self.assertRaises",
    "self.assertRaisesRegex",
    "self.assertRaisesRegexp",
    "(self\n.assertRaisesRegex)",
]
GAPS = ["", " ", "\t", "\\\n", "  # a comment (with a paren\n", "\n", "\f"]


@pytest.mark.slow
@settings(max_examples=300, deadline=None)
@given(st.sampled_from(BLOCK_CALLEES), st.lists(st.sampled_from(GAPS), max_size=3), st.booleans(), st.sampled_from(["", ', match="bad"', ', "bad", make']))
def test_a_test_file_with_no_call_of_a_raises_function_in_its_text_is_not_parsed_and_gives_what_a_parse_gives(callee, gaps, as_block, rest):
    call = f"{callee}{''.join(gaps)}(ValueError{rest})"
    body = f"with ({call}):\n        make()" if as_block else f"({call})"
    text = f"import pytest\ndef test_x(self):\n    {body}\n"
    found = codefacts.read_test_file("tests/t.py", text.encode())
    assert found["status"] == "ok" and found["tests"] == _plain_blocks(text)
    assert found["tests"] or not as_block  # (a bare call that is not the callable form is no block)


def test_the_text_test_skips_only_files_whose_parse_finds_no_raises_block():
    cases = {
        # skipped (no call of a raises function in an ASCII text), and a parse finds nothing in them
        '"""Raises: ValueError."""\nimport pytest\nraises = pytest.raises\n': False,
        "def f():\n    # pytest.raises ValueError\n    return xraises(ValueError), raises_(ValueError)\n": False,
        "import pytest\nctx = pytest.raises\n": False,
        # parsed: a call of one, whatever stands between the name and its "("
        "import pytest\nwith (pytest.raises)(ValueError):\n    f()\n": True,
        "import pytest\nwith (pytest.raises  # why\n      (ValueError)):\n    f()\n": True,
        "import pytest\nwith pytest.raises \\\n (ValueError):\n    f()\n": True,
        # parsed: the parser reads an identifier as its NFKC form (this is `raises`), and the test
        # reads a non-ASCII text so too
        "import pytest\nwith pytest.\uff52aises(ValueError):\n    f()\n": True,
        "import pytest\nwith (pytest.raises  # \u00e9\uff08\n      (ValueError)):\n    f()\n": True,
        # skipped: not ASCII, and no call of a raises function in it normalized either
        "# \u00e9\nimport pytest\nctx = pytest.raises\n": False,
    }
    for text, parsed in cases.items():
        said = unicodedata.normalize("NFKC", text)
        assert (codefacts._BLOCK_CALL.search(said) is None) is not parsed, text
        assert codefacts.read_test_file("tests/t.py", text.encode())["tests"] == _plain_blocks(text), text
    assert _plain_blocks("import pytest\nwith pytest.\uff52aises(ValueError):\n    f()\n")  # (the test above means something)
    assert len(_plain_blocks("import pytest\nwith (pytest.raises  # why\n      (ValueError)):\n    f()\n")) == 1


def test_a_test_file_spelling_raises_only_as_the_parser_reads_it_is_parsed_and_walked():
    """The parser reads an identifier as its NFKC form and a file in its coding cookie's codec:
    `ｒａｉｓｅｓ` and utf-7's `r+AGEAaQBzAGUAcw-` are `raises` to it, though neither file's bytes
    nor (the first) its text say 'aises'; nor may the function holding one be passed over."""
    wide = "pytest.\uff52\uff41\uff49\uff53\uff45\uff53"
    texts = [
        f"import pytest\ndef test_x():\n    with {wide}(ValueError):\n        make()\n",
        f"import pytest  # raises\ndef test_x():\n    with {wide}(ValueError):\n        make()\n",
    ]
    for text in texts:
        assert len(_plain_blocks(text)) == 1  # (the test means something)
        assert codefacts.read_test_file("tests/t.py", text.encode())["tests"] == _plain_blocks(text), text
    seven = b"# coding: utf-7\nimport pytest\ndef test_x():\n    with pytest.r+AGEAaQBzAGUAcw-(ValueError):\n        make()\n"
    assert b"aises" not in seven
    found = codefacts.read_test_file("tests/t.py", seven)["tests"]
    assert found == _plain_blocks(seven.decode("utf-7")) and found[0]["exceptions"] == ["builtins.ValueError"]


PASSES = textwrap.dedent("""
    from pkg import envs

    def plain(a, b):
        return a + b

    def logs(x):
        logger.warning_once("odd %s", x)

    def takes(self_config, n):
        held = self_config.cache_config.block_size
        other = envs.VLLM_FLAG
        build(held, n, flag=other, size=self_config.model_config.max_len)

    class Runner:
        def run(self, k):
            if k:
                assert k > 1
            go(self.parallel_config.world_size, k)

        def quiet(self):
            return self.x
    """)


@pytest.mark.parametrize("code", [PASSES, CODE])
def test_the_passes_skip_only_functions_whose_lines_cannot_hold_a_pass_or_a_check(code):
    from crawler.extract import knob_passes

    tree = ast.parse(code)
    # (a text with a non-ASCII letter is read with no skipping: the plain definition)
    assert knob_passes.passes(tree, code) == knob_passes.passes(tree, code + "\n# é\n")
    if code is PASSES:
        found = knob_passes.passes(tree, code)
        # (``takes`` passes its own ``n`` on: the join follows it to its callers, ``catalogue.callers.Passed``)
        assert {s["function"] for s in found["signatures"]} == {"logs", "Runner.run", "takes"}
        assert {(p["function"], p["callee"]) for p in found["passes"]} == {("takes", "build"), ("Runner.run", "go")}


@pytest.mark.slow
def test_the_passes_of_this_package_are_the_same_with_the_skipping():
    from crawler.extract import knob_passes

    for path in sorted(Path(codefacts.__file__).parents[1].rglob("*.py")):
        code = path.read_text(encoding="utf-8")
        if code.isascii():
            tree = ast.parse(code)
            assert knob_passes.passes(tree, code) == knob_passes.passes(tree, code + "\n# é\n"), path
