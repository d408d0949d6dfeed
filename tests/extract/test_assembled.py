"""Messages assembled before the raise beyond one expression (issue #19): a message set to one text
per branch, and a list of messages a helper function builds and its caller joins. Extracted from
fixture code, then crawled from a real repository and matched through the real CLI."""

from __future__ import annotations

import json
import re
import textwrap

import pytest

from crawler.extract import surface
from crawler.extract.visitor import extract_file
from tests.helpers import best_match, crawl_with_config

ALL = surface.Settings(("raise", "assert", "log"))

BRANCHES = '''
import logging

logger = logging.getLogger(__name__)


def pick(kind, v):
    if kind == "a":
        msg = "Backend A is not available on this platform."
    elif kind == "b":
        msg = f"Backend B needs compute capability {v} or newer."
    else:
        msg = "No backend was selected."
    raise ValueError(msg)


def hinted(name):
    msg = f"Unknown model {name}."
    if name.startswith("hf"):
        msg = f"Unknown model {name}; did you mean a local path?"
    raise ValueError(f"Cannot load: {msg}")


def report(failure_type, msg, context):
    if msg:
        failure_type = f"{failure_type}. {msg}"
    logger.error("Transfer failure: %s | Context: %s", failure_type, context)


def warn(level):
    match level:
        case 1:
            text = "Cache is nearly full."
        case _:
            text = "Cache is full; requests wait."
    logger.warning(text)


def leaving(x):
    msg = "Input is empty."
    if x:
        msg = "Input is too long."
        raise TypeError(msg)
    raise ValueError(msg)
'''

HELPERS = '''
from other import external_reasons


class Adapter:
    def validate(self, limit):
        error_msg = self._features()
        if self.rank > limit:
            error_msg.append(f"Adapter rank {self.rank} is greater than max_rank {limit}.")
        if error_msg:
            raise ValueError(f"{' '.join(error_msg)}")

    def _features(self):
        found = []
        if self.dora:
            found.append("DoRA is not supported.")
        if self.bias:
            found.append("Adapter bias is not supported.")
        return found


def _reasons(cfg):
    out = []
    if cfg.tp > 1:
        out.append(f"tensor parallel size {cfg.tp} is not supported")
    return out


def check(cfg):
    why = _reasons(cfg)
    why.append("the backend was built without it")
    raise RuntimeError("Cannot use the backend: " + "; ".join(why))


def unseen(cfg):
    why = external_reasons(cfg)
    why.append("and one more")
    raise RuntimeError("Not valid: " + ", ".join(why))
'''


def templates(code: str) -> dict[str, dict]:
    result = extract_file("pkg/mod.py", textwrap.dedent(code).encode(), ALL)
    assert result["status"] == "ok", result["reason"]
    return {s["template"]["text"]: s["template"] for s in result["sites"]}


def test_a_message_set_per_branch_keeps_each_branch_as_an_alternative():
    found = templates(BRANCHES)
    # shown as its most telling alternative (a page shows a message, not `{msg}`; the id keys on it)
    picked = found["Backend B needs compute capability {v} or newer."]
    assert picked["form"] == "assembled" and not picked["opaque"]
    assert picked["alternatives"] == ["Backend A is not available on this platform.",
                                      "Backend B needs compute capability {v} or newer.", "No backend was selected."]
    assert re.fullmatch(picked["pattern"], "Backend B needs compute capability 8.0 or newer.")
    assert not re.fullmatch(picked["pattern"], "Backend C is fine.")
    # in an f-string, the field keeps its text and gains the alternatives: the one set before the if too
    hinted = found["Cannot load: {msg}"]
    assert hinted["alternatives"] == ["Unknown model {name}; did you mean a local path?", "Unknown model {name}."]
    assert re.fullmatch(hinted["pattern"], "Cannot load: Unknown model foo.")
    # a match with a catch-all case: its cases' texts, and no other
    assert found["Cache is full; requests wait."]["alternatives"] == ["Cache is nearly full.", "Cache is full; requests wait."]


def test_a_path_whose_value_is_unseen_leaves_the_name_unknown_not_the_last_branch():
    found = templates(BRANCHES)
    # failure_type is a parameter: without msg the message is the parameter alone, so no text is claimed for it
    logged = found["Transfer failure: {failure_type} | Context: {context}"]
    assert logged["alternatives"] == [] and re.fullmatch(logged["pattern"], "Transfer failure: handshake_failed | Context: {}")


def test_a_branch_that_leaves_gives_nothing_to_the_code_after_it():
    found = templates(BRANCHES)
    assert "Input is too long." in found and "Input is empty." in found
    assert found["Input is empty."]["form"] == "variable"


def test_a_list_a_helper_of_the_module_builds_joins_the_callers_pieces():
    found = templates(HELPERS)
    # a method defined further down, with no site of its own (walked only for what it returns)
    adapter = found["{' '.join(error_msg)}"]
    assert adapter["alternatives"] == ["DoRA is not supported.", "Adapter bias is not supported.",
                                       "Adapter rank {self.rank} is greater than max_rank {limit}."]
    assert re.fullmatch(adapter["pattern"], "Adapter rank 64 is greater than max_rank 16.")
    checked = found['Cannot use the backend: {"; ".join(why)}']
    assert checked["alternatives"] == ["tensor parallel size {cfg.tp} is not supported", "the backend was built without it"]
    # a helper errcat cannot see (imported): what its list held is a piece matching anything, and
    # only the caller's own appends are claimed
    unseen = found['Not valid: {", ".join(why)}']
    assert unseen["alternatives"] == ["{why}", "and one more"]
    assert re.fullmatch(unseen["pattern"], "Not valid: anything at all, and one more")
    assert re.fullmatch(unseen["pattern"], "Not valid: anything at all")


def test_a_helper_walked_for_its_list_adds_no_site_of_its_own():
    code = HELPERS + '''

class Late:
    def use(self):
        items = self._items()
        raise ValueError(", ".join(items))

    def _items(self):
        items = ["first reason"]
        if self.x:
            raise KeyError("a raise in the helper is one site")
        return items
'''
    result = extract_file("pkg/mod.py", textwrap.dedent(code).encode(), ALL)
    texts = [s["template"]["text"] for s in result["sites"]]
    assert texts.count("a raise in the helper is one site") == 1
    assert next(s for s in result["sites"] if s["qualname"] == "Late.use")["template"]["alternatives"] == ["first reason"]


TOML = '''
default = "acme"

[upstreams.acme]
url = "https://github.com/acme/server"
include = ["srv/**/*.py"]
kinds = ["raise", "assert", "log"]
'''


@pytest.fixture
def crawled(fixture_repo, cli, tmp_path):
    files = {"srv/__init__.py": "", "srv/branches.py": BRANCHES, "srv/helpers.py": HELPERS}
    data, records = crawl_with_config(fixture_repo, cli, tmp_path, files, TOML)
    assert cli("validate", data).exit_code == 0
    return data, records


@pytest.mark.slow
@pytest.mark.parametrize("paste, text", [
    ("ValueError: No backend was selected.", "Backend B needs compute capability {v} or newer."),
    ("ValueError: Backend B needs compute capability 9.0 or newer.", "Backend B needs compute capability {v} or newer."),
    ("ValueError: Cannot load: Unknown model foo.", "Cannot load: {msg}"),
    ("ERROR 11-30 14:21:45 [branches.py:21] Transfer failure: handshake_failed | Context: {'id': 1}",
     "Transfer failure: {failure_type} | Context: {context}"),
    ("ValueError: Adapter rank 64 is greater than max_rank 16.", "{' '.join(error_msg)}"),
    ("RuntimeError: Cannot use the backend: tensor parallel size 2 is not supported; the backend was built without it",
     'Cannot use the backend: {"; ".join(why)}'),
])
def test_match_finds_each_branch_and_each_helper_piece(crawled, cli, paste, text):
    data, records = crawled
    assert best_match(cli, data, paste) == records[text]["id"]


@pytest.mark.slow
def test_match_claims_no_text_the_branches_do_not_set(crawled, cli):
    data, records = crawled
    got = json.loads(cli("match", "--data", data, "--json", "ValueError: Backend C is broken.").stdout)
    assert records["Backend B needs compute capability {v} or newer."]["id"] not in [m["id"] for m in got["matches"]]



UNREADABLE_PIECE = '''
def validate(cls, head_size, dtype):
    invalid_reasons = []
    if not cls.supports_head_size(head_size):
        invalid_reasons.append("head_size not supported")
    combination_reason = cls.supports_combination(head_size, dtype)
    if combination_reason is not None:
        invalid_reasons.append(combination_reason)
    if invalid_reasons:
        raise ValueError(f"Backend not valid: {', '.join(invalid_reasons)}")


def tensors(xs):
    out = []
    for x in xs:
        out.append(x.shape)
    raise ValueError(f"Bad shapes: {', '.join(out)}")
'''


def test_a_list_given_a_message_errcat_cannot_read_keeps_the_pieces_it_can():
    """vLLM's validate_configuration appends what another method returns beside its own texts."""
    found = templates(UNREADABLE_PIECE)
    reasons = found["Backend not valid: {', '.join(invalid_reasons)}"]
    assert reasons["alternatives"] == ["head_size not supported", "{combination_reason}"]
    assert re.fullmatch(reasons["pattern"], "Backend not valid: head_size not supported, anything a subclass says")
    # a list of nothing errcat can read is no list of messages: no alternatives claimed
    assert found["Bad shapes: {', '.join(out)}"]["alternatives"] == []
