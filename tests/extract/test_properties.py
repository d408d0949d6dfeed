"""Property tests: the extractor on generated Python source (hypothesmith) and generated expressions.

Bounded (a few dozen examples each, no deadline) so the suite stays fast; set
``HYPOTHESIS_PROFILE=long`` for a deeper run.
"""

from __future__ import annotations

import ast
import os
import warnings
from unittest import mock

import hypothesmith
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from crawler.catalogue.entries import Identity, build_records
from crawler.extract import parse
from crawler.extract.templates import MessageBuilder, field
from crawler.extract.visitor import extract_file
from crawler.model.records import SCHEMA_VERSION, Manifest, RepoRef
from crawler.publish.writer import render_dataset

settings.register_profile(
    "ci", max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much, HealthCheck.data_too_large]
)
settings.register_profile("long", max_examples=2000, deadline=None, suppress_health_check=list(HealthCheck))
PROFILE = os.environ.get("HYPOTHESIS_PROFILE", "ci")
# hypothesmith compiles candidates such as ``1()``: their SyntaxWarnings are its, not ours
pytestmark = pytest.mark.filterwarnings("ignore::SyntaxWarning")

IDENTITY = Identity(
    repo=RepoRef(url="https://github.com/acme/widgets", owner="acme", name="widgets"),
    commit="0" * 40,
    commit_date="2026-01-01T00:00:00+00:00",
    upstream_commit=None,
    source="git",
)


def parses(code: str) -> bool:
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            ast.parse(code)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return False
    return True


def publishable(result: dict) -> None:
    """The result builds records that pass the schema and serialize (no lone surrogates, no NaN)."""
    manifest = Manifest.model_validate(
        {
            "schema_version": SCHEMA_VERSION,
            "errcat_version": "0",
            "extractor_version": "1",
            "repo": IDENTITY.repo.model_dump(mode="json"),
            "commit": IDENTITY.commit,
            "commit_date": IDENTITY.commit_date,
            "upstream_commit": None,
            "ref": None,
            "source": "git",
            "include": [],
            "exclude": [],
            "counts": {"files": 1, "parsed": 1, "skipped": 0, "sites": 0, "entries": 0, "bare_asserts": 0, "reraises": 0},
            "skipped": [],
            "curated_digest": None,
            "input_digest": "0" * 64,
            "content_digest": "",
        }
    )
    records = build_records(IDENTITY, result["sites"])
    render_dataset(records, manifest)


@pytest.mark.slow
@settings.get_profile(PROFILE)
@given(code=st.one_of(hypothesmith.from_grammar(), hypothesmith.from_node()))
def test_extractor_never_raises_on_a_valid_program(code: str) -> None:
    result = extract_file("pkg/generated.py", code.encode("utf-8", "surrogatepass"))
    if parses(code):
        assert result["status"] == "ok", result["reason"]
        publishable(result)
    else:  # too deep for this Python's parser: a skip with its reason, never an internal error
        assert result["status"] == "skipped" and result["reason"] and not result["reason"].startswith("internal error")


def _break(code: str, cut: int, junk: str) -> str:
    cut = cut % (len(code) + 1)
    return code[:cut] + junk + code[cut:]


@pytest.mark.slow
@settings.get_profile(PROFILE)
@given(code=hypothesmith.from_grammar(), cut=st.integers(min_value=0), junk=st.sampled_from(["(", ")", ":", "def", "\n  x", "'''", "@", "\\\n\\"]))
def test_an_invalid_program_emits_nothing(code: str, cut: int, junk: str) -> None:
    broken = _break(code, cut, junk)
    if parses(broken):
        return
    # No libcst child per example (slow); the fallback's own failure mode is the same "None".
    with mock.patch.object(parse, "parse_with_libcst_isolated", lambda text, timeout=0: None):
        result = extract_file("pkg/broken.py", broken.encode("utf-8", "surrogatepass"))
    assert result["status"] == "skipped" and result["sites"] == [] and result["classes"] == []
    assert result["reason"] and not result["reason"].startswith("internal error"), result["reason"]


# --------------------------------------------------------------------------- concatenation, iterative vs recursive


class RecursiveReference(MessageBuilder):
    """The recursive concatenation the iterative ``_concat`` replaced, kept as the reference."""

    def is_stringy(self, node):
        if type(node) is ast.BinOp:
            return type(node.op) in (ast.Add, ast.Mod) and (self.is_stringy(node.left) or self.is_stringy(node.right))
        return super().is_stringy(node)

    def _binop(self, node):
        if type(node.op) is ast.Add:
            if self.is_stringy(node.left) or self.is_stringy(node.right):
                return "concat", self.parts(node.left) + self.parts(node.right)
            return None
        return super()._binop(node)


ATOMS = st.sampled_from(["'a'", "'b{}'", "x", "y.z", "f(x)", "1", "(x * 2)", "'%s' % x", "s", "f'{x}!'"])


@st.composite
def chains(draw) -> str:
    terms = draw(st.lists(ATOMS, min_size=1, max_size=12))
    ops = draw(st.lists(st.sampled_from([" + ", " % ", " * "]), min_size=len(terms) - 1, max_size=len(terms) - 1))
    text = terms[0]
    for op, term in zip(ops, terms[1:], strict=True):
        text += op + (f"({term})" if draw(st.booleans()) else term)
    return text


@settings.get_profile(PROFILE)
@given(expr=chains())
def test_iterative_concatenation_equals_the_recursive_definition(expr: str) -> None:
    node = ast.parse(expr, mode="eval").body
    env = {"s": ("variable", ["held ", field("v")])}

    def segment(n):
        return ast.get_source_segment(expr, n)

    new, old = MessageBuilder(segment, env.get), RecursiveReference(segment, env.get)
    assert new.is_stringy(node) == old.is_stringy(node)
    assert new.build(node) == old.build(node)
