"""extract_file: sites, facts, name resolution, classes, skips; hierarchy; ast/libcst parity."""

import ast
import copy
import json
import textwrap
from pathlib import Path

import pytest

from crawler.catalogue.hierarchy import apply_init_templates, resolve_exceptions
from crawler.extract import parse
from crawler.extract import visitor as extract
from crawler.extract.guard_reads import READS
from crawler.extract.text import Source, module_name
from crawler.extract.visitor import EXTRACTOR_VERSION, extract_file
from crawler.model.records import ExceptionInfo, Site

FIXTURE = '''
"""Fixture module."""
import errno as _errno
from . import errors
from ..exceptions import BaseErr as Base
import pkg.sub.excs as excs

ERR = "constant message"


class LocalError(Base):
    def __init__(self, name, *, hint=None):
        super().__init__(f"bad name {name!r}")


def make_error(text):
    return LocalError(text)


class Config:
    @field_validator("backend_per_kind", mode="before")
    @classmethod
    def validate(cls, value):
        """Parse the map.

        Second paragraph.
        """
        for kind, backend in value.items():
            if kind not in valid_kinds:
                raise ValueError(f"Unknown kind '{kind}'")
            elif backend is None:
                raise errors.ConfigError("no backend")
            else:
                raise excs.Deep("deep") from None

    def method(self):
        def inner():
            try:
                import thing
            except ImportError as e:
                raise RuntimeError("thing missing") from e
        while self.busy:
            assert self.ok, "not ok"
        assert self.flag
        raise LocalError("x")


def reraiser():
    try:
        pass
    except KeyError as e:
        raise
    except ValueError as err:
        raise err
    raise make_error("via helper")


raise KeyError(ERR)
'''


@pytest.fixture(scope="module")
def result():
    return extract_file("src/pkg/config/mod.py", FIXTURE.encode())


def by_line(result, needle):
    lines = FIXTURE.splitlines()
    for s in result["sites"]:
        if needle in lines[s["line"] - 1]:
            return s
    raise AssertionError(needle)


def test_result_shape_and_models(result):
    assert result["status"] == "ok" and result["reason"] is None
    assert result["module"] == "pkg.config.mod" and result["path"] == "src/pkg/config/mod.py"
    for s in result["sites"]:
        kept = {k: v for k, v in s.items() if k != READS}  # (what its check reads: for the joins, never in a record)
        Site.model_validate({**kept, "permalink": "https://github.com/o/n/blob/" + "0" * 40 + "/" + s["path"] + "#L1"})
    json.dumps(result)
    assert [s["line"] for s in result["sites"]] == sorted(s["line"] for s in result["sites"])
    assert isinstance(EXTRACTOR_VERSION, str)


@pytest.mark.parametrize(
    "needle,qualname,exception,resolved",
    [
        ("Unknown kind", "Config.validate", "ValueError", "builtins.ValueError"),
        ("no backend", "Config.validate", "errors.ConfigError", "pkg.config.errors.ConfigError"),
        ('"deep"', "Config.validate", "excs.Deep", "pkg.sub.excs.Deep"),
        ("thing missing", "Config.method.<locals>.inner", "RuntimeError", "builtins.RuntimeError"),
        ("not ok", "Config.method", "AssertionError", "builtins.AssertionError"),
        ('LocalError("x")', "Config.method", "LocalError", "pkg.config.mod.LocalError"),
        ("via helper", "reraiser", "LocalError", "pkg.config.mod.LocalError"),
        ("KeyError(ERR)", "<module>", "KeyError", "builtins.KeyError"),
    ],
)
def test_sites(result, needle, qualname, exception, resolved):
    s = by_line(result, needle)
    assert (s["qualname"], s["exception"], s["exception_qualname"]) == (qualname, exception, resolved)


def test_facts(result):
    s = by_line(result, "Unknown kind")
    f = s["facts"]
    assert f["guards"] == ["kind not in valid_kinds"]
    assert f["loops"] == ["for kind, backend in value.items()"]
    assert f["decorators"] == ['field_validator("backend_per_kind", mode="before")', "classmethod"]
    assert f["docstring"] == "Parse the map."
    assert by_line(result, "no backend")["facts"]["guards"] == ["not (kind not in valid_kinds)", "backend is None"]
    deep = by_line(result, '"deep"')["facts"]
    assert deep["guards"] == ["not (kind not in valid_kinds)", "not (backend is None)"] and deep["cause"] == "None"
    inner = by_line(result, "thing missing")["facts"]
    assert inner["handler"] == "except ImportError as e" and inner["cause"] == "e" and inner["guards"] == []
    assrt = by_line(result, "not ok")
    assert assrt["kind"] == "assert" and assrt["facts"]["guards"] == ["self.busy", "not (self.ok)"]
    assert assrt["facts"]["loops"] == ["while self.busy"]
    assert by_line(result, "KeyError(ERR)")["template"]["text"] == "constant message"


def test_counts(result):
    assert result["bare_asserts"] == 1
    assert result["reraises"] == 2


def test_snippet_is_function_when_short(result):
    s = by_line(result, "via helper")
    code = s["snippet"]["code"]
    assert code.startswith("def reraiser():") and code.rstrip().endswith('raise make_error("via helper")')
    assert s["snippet"]["end_line"] - s["snippet"]["start_line"] == code.count("\n")


def test_snippet_window_when_function_long():
    body = "\n".join(f"    x{i} = {i}" for i in range(60))
    code = f"def f():\n{body}\n    raise ValueError('late')\n" + "\n".join(f"    y{i} = 1" for i in range(40))
    s = extract_file("m.py", code.encode())["sites"][0]
    assert s["snippet"]["end_line"] - s["snippet"]["start_line"] + 1 <= extract.SNIPPET_LINES
    assert s["snippet"]["start_line"] <= s["line"] <= s["snippet"]["end_line"]


def test_classes(result):
    cls = {c["name"]: c for c in result["classes"]}
    local = cls["LocalError"]
    assert local["qualname"] == "pkg.config.mod.LocalError"
    assert local["bases"] == ["pkg.exceptions.BaseErr"]
    assert local["init"]["params"] == ["name", "hint"]
    assert local["init"]["template"]["text"] == "bad name {name!r}"
    assert cls["Config"]["init"] is None


@pytest.mark.parametrize(
    "path,module",
    [("vllm/config/attention.py", "vllm.config.attention"), ("vllm/__init__.py", "vllm"), ("src/a/b.py", "a.b")],
)
def test_module_name(path, module):
    assert module_name(path)[0] == module


@pytest.mark.slow
@pytest.mark.parametrize(
    "data,reason",
    [
        (b"def f(:\n  pass\n", "syntax error: line 1"),
        (b"x = 1\x00\n", "invalid source: null bytes"),
        (b"x = '\xff'\n", "decode error"),
        (b"# -*- coding: klingon -*-\nx=1\n", "decode error"),
        (b"x = " + b"-" * 300000 + b"1\n", "too deeply nested"),
    ],
)
def test_skips_never_raise(data, reason):
    r = extract_file("bad.py", data)
    assert r["status"] == "skipped" and r["reason"].startswith(reason) and r["sites"] == []


HIER = {
    "pkg/exceptions.py": """
class PkgError(Exception):
    pass

class ValidationError(PkgError, ValueError):
    def __init__(self, message, *, parameter=None):
        super().__init__(message)

class LimitError(ValidationError):
    def __init__(self, limit):
        super().__init__(f"limit {limit} exceeded")
""",
    "pkg/__init__.py": "from pkg.exceptions import ValidationError\n",
    "pkg/use.py": """
from pkg import ValidationError
from .exceptions import LimitError

def f(n, x):
    raise ValidationError(f"bad {x}", parameter="x")

def g(n):
    raise LimitError(n)
""",
}


def test_hierarchy_and_init_templates():
    results = [extract_file(p, textwrap.dedent(c).encode()) for p, c in HIER.items()]
    info = resolve_exceptions(results)
    for v in info.values():
        ExceptionInfo.model_validate(v)
    v = info["pkg.ValidationError"]  # re-exported name resolves to the defining class
    assert v["qualname"] == "pkg.exceptions.ValidationError"
    assert v["builtin_ancestor"] == "ValueError"
    assert v["bases"][0] == "pkg.exceptions.PkgError" or v["bases"][0] == "builtins.ValueError"
    lim = info["pkg.exceptions.LimitError"]
    assert lim["bases"][0] == "pkg.exceptions.ValidationError" and lim["builtin_ancestor"] == "ValueError"
    given = copy.deepcopy(results)
    applied = apply_init_templates(results)
    assert results == given  # the results given are left as they were
    assert [a is r for a, r in zip(applied, results, strict=True)] == [True, True, False]  # only the file that changed is new
    changed = [s for s, before in zip(applied[2]["sites"], results[2]["sites"], strict=True) if s is not before]
    assert len(changed) == 2 and all(s["_derived"]["stamp"][0] == s["template"]["text"] for s in changed)
    use = {s["line"]: s for s in applied[2]["sites"]}
    texts = sorted(s["template"]["text"] for s in use.values())
    assert texts == ["bad {x}", "limit {n} exceeded"]
    assert all(s["template"]["form"] == "init" for s in use.values())


# --- parsers ------------------------------------------------------------------------------

PARITY_CORPUS = [
    FIXTURE,
    HIER["pkg/use.py"],
    """
def f(x, y):
    assert (
        x is not None
        and y  # trailing comment
    ), ("multi-line " f"{x!r}"
        "tail")
    if (a, b) == (1, 2):
        raise ValueError("%s-%s" % (a, b))
    for (i, j) in ((1, 2),):
        raise TypeError("{0}".format(i))
    match x:
        case [1, *rest] if rest:
            raise KeyError(f"caf\\u00e9 {rest}")
    msg = "é"
    msg += " ü"
    raise OSError(msg + f" {x}")
""",
    """
async def g():
    async with lock:
        async for item in stream():
            try:
                pass
            except* (ValueError, TypeError) as eg:
                raise RuntimeError(", ".join(["a", str(eg)])) from eg
""",
]


def _extract_with(tree, path, code):
    m, pkg = module_name(path)
    ex = extract._Extractor(path, m, pkg, Source(code))
    ex.run(tree)
    return {"sites": ex.sites, "classes": ex.classes, "calls": ex.calls, "b": ex.bare_asserts, "r": ex.reraises}


@pytest.mark.parametrize("code", PARITY_CORPUS)
def test_parity_ast_vs_libcst(code):
    code = textwrap.dedent(code)
    a = _extract_with(ast.parse(code), "pkg/m.py", code)
    c = _extract_with(parse.libcst_to_ast(code), "pkg/m.py", code)
    assert a["sites"], "corpus entry without sites proves nothing"
    assert a == c


@pytest.mark.slow
def test_newer_syntax_falls_back_to_libcst():
    code = textwrap.dedent(
        """
        type Alias = list[int]

        def first[T](xs: list[T]) -> T:
            if not xs:
                raise IndexError(f"empty {xs!r}")
            return xs[0]
        """
    )
    with pytest.raises(SyntaxError):
        ast.parse(code)  # this test is about Python 3.11
    r = extract_file("m.py", code.encode())
    assert r["status"] == "ok", r["reason"]
    (s,) = r["sites"]
    assert (s["qualname"], s["line"], s["template"]["text"]) == ("first", 6, "empty {xs!r}")
    assert s["facts"]["guards"] == ["not xs"]


@pytest.mark.slow
def test_a_libcst_child_that_cannot_finish_is_never_cached(tmp_path, monkeypatch):
    """A timeout says nothing about the file: the skip is reported, not cached, and the dataset
    is provisional; the next crawl decides again."""
    import subprocess
    from types import SimpleNamespace

    from crawler.extract import parse
    from crawler.extract import runner as engine
    from crawler.source.wheel import git_blob_id

    text = b"def f[T](x: T):\n    raise ValueError(f'bad {x}')\n"  # PEP 695: libcst's on 3.11
    entry = SimpleNamespace(path="pkg/new.py", blob=git_blob_id(text), size=len(text))
    snapshot = SimpleNamespace(files=[entry], read=lambda entries: ((e, text) for e in entries))

    def timeout(*a, **k):
        raise subprocess.TimeoutExpired("libcst", 1)

    monkeypatch.setattr(parse.subprocess, "run", timeout)
    first = engine.extract_all(snapshot, jobs=1, cache_dir=tmp_path).results
    assert first[0]["status"] == "skipped" and "timed out" in first[0]["reason"] and first[0]["transient"]
    monkeypatch.undo()
    second = engine.extract_all(snapshot, jobs=1, cache_dir=tmp_path).results
    assert second[0]["status"] == "ok" and len(second[0]["sites"]) == 1


@pytest.mark.slow
def test_extraction_leaves_no_cyclic_garbage():
    """Each file's syntax tree must be freed by reference counting when extraction ends: the
    crawl runs with the cycle collector off, so a cycle would keep every tree alive (it once
    grew workers to 700 MB), and with it on, walking them cost more than the parse."""
    import gc
    from pathlib import Path

    import crawler.source.snapshot as a_real_module

    source = Path(a_real_module.__file__).read_bytes()  # a big module with many raises
    extract_file("crawler/source.py", source)  # warm caches first
    gc.collect()
    gc.set_debug(gc.DEBUG_SAVEALL)
    try:
        result = extract_file("crawler/source.py", source)
        assert result["status"] == "ok" and result["sites"]
        assert gc.collect() == 0, [type(o).__name__ for o in gc.garbage[:10]]
    finally:
        gc.set_debug(0)
        gc.garbage.clear()


SKIPPABLE = """\
import errors as top_errors

def make_error(msg):
    return top_errors.Boom(msg)

class Widget:
    size = "small"

    def quiet(self, n):  # none of the four words: never walked
        from elsewhere import ValueError
        if n:
            total = n + 1
        return total

    def loud(self, n):
        if n > 1:
            raise ValueError(f"too big: {n}")

    def nests(self):
        class Local(Exception):
            pass
        return Local

    def mentions(self):
        return "raise is a word in this string"

    def __init__(self):
        super().__init__("a message the class builds")

def helper_user(x):
    raise make_error("built by a helper")
"""


def _extract_walking_everything(path, code, monkeypatch):
    with monkeypatch.context() as m:
        m.setattr(extract._Extractor, "_inert", lambda self, node, parent: False)
        return extract_file(path, code)


@pytest.mark.parametrize("line_end", ["\n", "\r\n", "\r"])
def test_skipping_inert_functions_changes_nothing(line_end, monkeypatch):
    code = SKIPPABLE.replace("\n", line_end).encode()
    fast = extract_file("pkg/widget.py", code)
    assert fast == _extract_walking_everything("pkg/widget.py", code, monkeypatch)
    assert [s["qualname"] for s in fast["sites"]] == ["Widget.loud", "helper_user"]
    assert fast["sites"][1]["exception"] == "top_errors.Boom"  # a module-level function is always walked
    assert [c["name"] for c in fast["classes"]] == ["Widget", "Local"]


def test_inert_functions_are_skipped():
    walked = []
    tree = ast.parse(SKIPPABLE)
    ex = extract._Extractor("pkg/widget.py", "pkg.widget", False, Source(SKIPPABLE))
    original = ex._scope
    ex._scope = lambda frame, body: (walked.append(frame.qualname), original(frame, body))
    ex.run(tree)
    assert "Widget.quiet" not in walked
    assert {"Widget.loud", "Widget.nests", "Widget.mentions", "Widget.__init__", "make_error"} <= set(walked)


@pytest.mark.slow
def test_skipping_changes_nothing_on_real_code(monkeypatch):
    """errcat's own modules and tests: every kind of statement, thousands of functions."""
    root = Path(__file__).resolve().parents[2]
    files = sorted([*root.joinpath("crawler").rglob("*.py"), *root.joinpath("tests").glob("*.py")])
    assert len(files) > 40
    for file in files:
        code = file.read_bytes()
        rel = file.relative_to(root).as_posix()
        assert extract_file(rel, code) == _extract_walking_everything(rel, code, monkeypatch), rel


TYPING_ONLY = """
import typing
from typing import TYPE_CHECKING
import logging

logger = logging.getLogger(__name__)

if TYPE_CHECKING:
    class _Base:
        def embed(self, ids):
            assert ids  # dead
            raise NotImplementedError("stub only")  # dead

    assert False, "checker view"  # dead
else:
    _Base = object
    if typing.TYPE_CHECKING:
        logger.warning("never logged")  # dead
    raise ImportError("runtime else")  # live


class Model(_Base):
    def forward(self, x):
        if not TYPE_CHECKING:
            raise ValueError("not checking")  # live
        else:
            raise TypeError("checking only")  # dead
        if x:
            pass
        elif TYPE_CHECKING:
            raise KeyError("elif stub")  # dead
        else:
            raise LookupError("after elif")  # live
"""


def test_a_site_under_if_type_checking_gives_no_entry():
    """``if TYPE_CHECKING:`` (or ``typing.TYPE_CHECKING``) never runs its body, and
    ``if not TYPE_CHECKING:`` never its ``else``: no site there, while the branch that runs keeps
    its sites and the stub's class is still recorded (blind judge, seed 49 #40)."""
    result = extract_file("pkg/typing_only.py", TYPING_ONLY.encode())
    lines = TYPING_ONLY.splitlines()
    said = sorted(lines[s["line"] - 1].split("#")[-1].strip() for s in result["sites"])
    assert said == ["live"] * 3, [lines[s["line"] - 1] for s in result["sites"]]
    assert result["bare_asserts"] == 0
    assert "_Base" in {c["name"] for c in result["classes"]}
