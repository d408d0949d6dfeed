"""The kind registry (crawler/model/kinds.py): one spec per site kind, and every stage's table of
kinds built from it. A kind spelled in code outside the registry, or a table that leaves one out,
fails here: adding a kind is its spec, and this test lists what else still needs it."""

from __future__ import annotations

import ast
import subprocess
import typing
from pathlib import Path

import pytest

from crawler.model import kinds
from crawler.model.kinds import KINDS, exception_qualname, exception_word, read_exception_word
from crawler.model.records import SCHEMA_VERSION, Record, SiteKind
from crawler.model.schemas import schema_for

ROOT = Path(__file__).resolve().parents[2]

#: Modules that still spell a kind as a string, being rewritten by other work now. This list may
#: only shrink: a module listed that no longer spells one fails the test too.
EXEMPT: set[str] = set()


def test_every_kind_the_models_name_has_one_spec_and_no_spec_names_another():
    assert set(typing.get_args(SiteKind)) == set(KINDS)
    site = schema_for("record")["$defs"]["Site"]["properties"]["kind"]
    assert set(site["enum"]) == set(KINDS)
    for name, spec in KINDS.items():
        assert spec.name == name and spec.label and spec.changed and "{was}" in spec.was and spec.trigger_label
        assert set(spec.keyed_by) <= set(typing.get_args(kinds.KeyedBy)) and "message" in spec.keyed_by
        assert (spec.verb is None) == (spec.done is None)
        # a kind that raises nothing keys its entries apart from a raise and names its word elsewhere
        assert spec.raises or (spec.keyed_apart and spec.info is not None)


def test_every_stage_table_of_kinds_is_the_registry_s():
    from crawler.catalogue import meaning, related
    from crawler.consume import match, site_index
    from crawler.versions import diff

    assert site_index.KIND_LABEL == {n: s.label for n, s in KINDS.items()}
    assert match._KIND_RANK == {n: s.match_rank for n, s in KINDS.items()}
    assert diff.CHANGED_WORDS == {n: s.changed for n, s in KINDS.items()}
    assert meaning._VERBS == {n: s.verb for n, s in KINDS.items() if s.verb}
    assert related._DONE == {n: s.done for n, s in KINDS.items() if s.done}


def _kind_literals(tree: ast.AST, source: str) -> list[int]:
    """Lines comparing something named ``kind``/``kinds`` with a kind's name spelled as a string."""
    names = set(KINDS)
    found = []
    for node in ast.walk(tree):
        if not isinstance(node, ast.Compare):
            continue
        sides = [node.left, *node.comparators]
        spelled = [
            c for s in sides for c in ([s] if isinstance(s, ast.Constant) else getattr(s, "elts", [])) if isinstance(c, ast.Constant) and c.value in names
        ]
        if not spelled:
            continue  # first: each get_source_segment splits the whole source (actions.py's compares took 2 min)
        others = " ".join(ast.get_source_segment(source, s) or "" for s in sides if not isinstance(s, (ast.Constant, ast.Tuple, ast.Set)))
        if "kind" in others:
            found.append(node.lineno)
    return sorted(set(found))


@pytest.mark.slow  # parses every module of crawler/ (2 MB)
def test_no_module_spells_a_kind_outside_the_registry():
    files = subprocess.run(["git", "ls-files", "crawler/*.py"], cwd=ROOT, capture_output=True, text=True, check=True).stdout.split()
    spelled = {}
    for rel in files:
        if rel == "crawler/model/kinds.py":
            continue
        source = (ROOT / rel).read_text(encoding="utf-8")
        lines = _kind_literals(ast.parse(source), source)
        if lines:
            spelled[rel] = lines
    assert set(spelled) - EXEMPT == set(), f"compare kinds with crawler.model.kinds' names (kinds.LOG, KINDS[kind].raises): {spelled}"
    assert EXEMPT <= set(spelled), f"no longer spells a kind, drop it from EXEMPT: {EXEMPT - set(spelled)}"


def test_the_scan_finds_a_kind_spelled_as_a_string():
    source = 'if record["kind"] == "log" or kind in ("raise", "assert") or "native" in self.kinds:\n    pass\nif level == "log":\n    pass\n'
    assert _kind_literals(ast.parse(source), source) == [1]


@pytest.mark.parametrize(
    ("data", "word", "qualname"),
    [
        ({"kind": "raise", "exception": {"name": "ValueError", "qualname": "builtins.ValueError"}}, "ValueError", "builtins.ValueError"),
        ({"kind": "log", "exception": None, "log": {"level": "exception"}}, "ERROR", "logging.ERROR"),
        ({"kind": "response", "exception": None, "response": {"error_type": "NotFoundError", "builder_qualname": "a.b"}}, "NotFoundError", "a.b"),
        ({"kind": "response", "exception": None, "response": {"error_type": "not a name", "builder_qualname": "a.b"}}, "ErrorResponse", "a.b"),
        ({"kind": "response", "exception": None, "response": {"error_type": None, "builder_qualname": "a.b"}}, "ErrorResponse", "a.b"),
    ],
)
def test_the_exception_word_of_each_kind_is_what_schema_5_held_in_exception(data, word, qualname):
    assert exception_word(data) == word == read_exception_word(data)
    assert exception_qualname(data) == qualname


def test_a_record_of_a_kind_that_raises_nothing_names_no_exception():
    import json

    record = json.loads(next((ROOT / "tests/data/v5/acme/server/errors").glob("*.json")).read_text())
    assert read_exception_word({"kind": "log", "exception": None, "log": "WARNING"}) is None
    assert read_exception_word(["not", "a", "record"]) is None
    with pytest.raises(ValueError):  # schema 5's record of a raise, named as a log: the model refuses it
        Record.model_validate({**record, "schema_version": SCHEMA_VERSION, "kind": "log", "keyed_by": "message"})
