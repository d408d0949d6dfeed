"""A message built in a helper function and raised by its caller (issue #19): ``wrapped =
_wrap_fetch_error(url, e)`` then ``if isinstance(wrapped, FetchError): raise wrapped``, or
``raise _expr_error(node, "Unsupported expression")``. The entry's message is one of those the
helper's ``return``\\s construct, of the class the raise names (its ``isinstance`` test, else the
class the helper's returns show); a value the helper hands back as it was given says nothing of
this raise, nor does an exception of another class."""

from __future__ import annotations

import json

import pytest

from crawler.extract.ids import entry_id
from tests.helpers import MEANING_CONFIG, jsonl_bytes

ERRORS = """
class FetchError(Exception):
    def __init__(self, message, *, value=None):
        super().__init__(message)
        self.value = value


class OtherError(Exception):
    pass


class LimitError(Exception):
    def __init__(self, what, limit):
        super().__init__(f"{what} is over the limit of {limit}")
"""

CODE = '''
from pkg.errors import FetchError, LimitError, OtherError
from pkg.wrapping import imported_wrap


def _wrap_fetch_error(url: str, exc: Exception) -> FetchError | Exception:
    """Client errors become a FetchError; anything else is handed back as it came."""
    if isinstance(exc, KeyError):
        return exc
    if isinstance(exc, OSError):
        if exc.status in (408, 429):
            return exc
        if exc.status < 500:
            return FetchError(f"Failed to fetch media from URL: HTTP {exc.status} error", value=url)
        return exc
    if isinstance(exc, LookupError):
        return FetchError("Failed to fetch media from URL: Invalid URL format", value=url)
    if isinstance(exc, TypeError):
        return OtherError("an exception of another class says nothing of a FetchError raise")
    return exc


def _only_other(exc):
    if exc:
        return OtherError("never a FetchError")
    return exc


def _hand_back(exc):
    return exc


def _either(flag):
    if flag:
        return FetchError("the media could not be fetched at all")
    return OtherError("the media fetch went wrong another way")


def _expr_error(node, reason: str) -> ValueError:
    return ValueError(f"{reason}: {describe(node)}. Supported expressions are names and constants.")


def _quoted_error(reason) -> ValueError:
    return ValueError(f"Bad {reason!r} here")


def _cleaned_error(reason) -> ValueError:
    reason = reason.strip()
    return ValueError(f"{reason}, cleaned")


def _missing_error() -> ImportError:
    return ImportError("The widget format needs the widget package: pip install widget.")


class Connector:
    def load(self, url):
        try:
            data = self.fetch(url)
        except Exception as e:
            wrapped = _wrap_fetch_error(url, e)
            if isinstance(wrapped, FetchError):
                raise wrapped from e
            raise
        return data

ASYNC_LOAD
    def other_class(self, e):
        made = _only_other(e)
        if isinstance(made, FetchError):
            raise made
        return made

    def handed_back(self, e):
        same = _hand_back(e)
        if isinstance(same, FetchError):
            raise same
        return same

    def mixed(self, flag):
        err = _either(flag)
        raise err

    def rebound(self, e, other):
        err = _wrap_fetch_error("x", e)
        if other:
            err = other.error()
        if isinstance(err, FetchError):
            raise err

    def from_import(self, e):
        err = imported_wrap(e)
        if isinstance(err, FetchError):
            raise err

    def by_method(self, url):
        err = self._made_here(url)
        raise err

    def _made_here(self, url):
        return FetchError(f"The method made this for {url}")


def visit(node):
    raise _expr_error(node, "Unsupported expression")


def visit_name(node):
    raise _expr_error(node, f"Unknown name '{node.id}'")


def visit_keyword(node):
    raise _expr_error(node, reason="Given by keyword")


def quoted():
    raise _quoted_error("spaces")


def cleaned():
    raise _cleaned_error("  spaces  ")


def _limit_error(what):
    return LimitError(what, "ten widgets")


def over_limit():
    raise _limit_error("The widget count")


def over_limit_checked(n):
    err = _limit_error(f"{n} widgets")
    if isinstance(err, LimitError):
        raise err


def load_plugin():
    try:
        import widget  # noqa: F401
    except ImportError as exc:
        raise _missing_error() from exc
'''

# the same method, async (vLLM has both): the two raise the same errors
_LOAD = CODE[CODE.index("    def load(self, url):") : CODE.index("ASYNC_LOAD")]
CODE = CODE.replace("ASYNC_LOAD", _LOAD.replace("def load(", "async def load_async(").replace("self.fetch", "await self.fetch"))

WRAPPING = """
from pkg.errors import FetchError


def imported_wrap(exc):
    return FetchError("made in another module, not followed for exceptions")
"""


def crawl(cli, fixture_repo, tmp_path, code=CODE):
    fixture_repo.commit({"pkg/__init__.py": "", "pkg/errors.py": ERRORS, "pkg/wrapping.py": WRAPPING, "pkg/api.py": code}, tag="v1")
    target = tmp_path / "out"
    config = tmp_path / "errcat.toml"
    config.write_text(MEANING_CONFIG)
    result = cli("crawl", "--repo", fixture_repo.path, "--ref", "v1", "--config", config, "--upstream", "acme", "--out", target)
    assert result.exit_code == 0, result.output
    records = [json.loads(line) for line in jsonl_bytes(target / "acme" / "widgets").splitlines()]
    return records, target / "acme" / "widgets"


def by_function(records):
    out: dict[str, list] = {}
    for r in records:
        if r["location"]["path"] != "pkg/api.py":
            continue
        for s in r["sites"]:
            out.setdefault(s["qualname"].rpartition(".")[2], []).append(r)
    return out


FETCH_ALTERNATIVES = [
    "Failed to fetch media from URL: HTTP {exc.status} error",
    "Failed to fetch media from URL: Invalid URL format",
]


@pytest.mark.slow
def test_a_raised_value_a_helper_made_has_the_helpers_messages(cli, fixture_repo, tmp_path):
    records, data = crawl(cli, fixture_repo, tmp_path)
    got = by_function(records)
    entry = got["load"][0]
    assert entry["exception"]["qualname"] == "pkg.errors.FetchError"
    message = entry["message"]
    # the FetchErrors the helper constructs, not the OtherError, not the exceptions it hands back
    assert message["alternatives"] == FETCH_ALTERNATIVES
    assert message["form"] == "assembled" and not message["opaque"]
    assert message["text"] == "Failed to fetch media from URL: Invalid URL format"  # the most telling
    # the sync and async callers raise the same errors: one entry, keyed by its message
    assert got["load_async"][0]["id"] == entry["id"]
    assert sorted(s["qualname"] for s in entry["sites"]) == ["Connector.load", "Connector.load_async"]
    assert entry["id"] == entry_id("acme/widgets", ("message", "FetchError", "Failed to fetch media from URL: Invalid URL format"))
    # a method helper (no raise of its own, so never walked for a site) is read too
    assert got["by_method"][0]["message"]["alternatives"] == ["The method made this for {url}"]

    for pasted in ("FetchError: Failed to fetch media from URL: HTTP 404 error", "FetchError: Failed to fetch media from URL: Invalid URL format"):
        result = cli("match", pasted, "--data", data, "--json")
        assert result.exit_code == 0, result.output
        assert json.loads(result.stdout)["matches"][0]["id"] == entry["id"], pasted
    missed = cli("match", "FetchError: Failed to fetch media from URL: Connection reset", "--data", data, "--json")
    assert entry["id"] not in [m["id"] for m in json.loads(missed.stdout).get("matches", [])]

    page = cli("show", entry["id"], "--data", data, "--color", "never")
    assert page.exit_code == 0, page.output
    lines = page.stdout.splitlines()
    assert "    Failed to fetch media from URL: Invalid URL format" in lines  # under the page's Message heading
    assert [line for line in lines if line.startswith("Piece:")] == [f"Piece:      {a}" for a in FETCH_ALTERNATIVES]
    assert "OtherError" not in page.stdout and "another class" not in page.stdout


@pytest.mark.slow
def test_no_message_is_claimed_from_what_the_helper_does_not_make(cli, fixture_repo, tmp_path):
    records, _ = crawl(cli, fixture_repo, tmp_path)
    got = by_function(records)
    for fn in ("other_class", "handed_back", "rebound", "from_import"):
        (entry,) = got[fn]
        # the class the isinstance test names, and no message: the helper constructs none of that
        # class (another class, what it was handed, a second value of the name, another module's)
        assert entry["exception"]["name"] == "FetchError", fn
        assert entry["message"]["form"] == "none" and entry["message"]["alternatives"] == [], fn
        assert "never a FetchError" not in json.dumps(entry), fn
    # ids as before this rule: no message, keyed by the site
    assert got["other_class"][0]["id"] == entry_id("acme/widgets", ("site", "FetchError", "pkg.api", "Connector.other_class"))


@pytest.mark.slow
def test_mixed_classes_without_a_test_claim_no_class_but_every_message(cli, fixture_repo, tmp_path):
    """``err = _either(flag); raise err``: the helper makes a FetchError or an OtherError, so no
    one class is claimed (as before); each message it constructs is one the raise gives a user."""
    records, data = crawl(cli, fixture_repo, tmp_path)
    (entry,) = by_function(records)["mixed"]
    assert entry["exception"]["name"] == "(unknown)"
    assert entry["message"]["alternatives"] == ["the media could not be fetched at all", "the media fetch went wrong another way"]
    result = cli("match", "OtherError: the media fetch went wrong another way", "--data", data, "--json")
    assert json.loads(result.stdout)["matches"][0]["id"] == entry["id"]


@pytest.mark.slow
def test_a_raised_call_of_a_helper_has_its_message_with_the_arguments_put_in(cli, fixture_repo, tmp_path):
    records, data = crawl(cli, fixture_repo, tmp_path)
    got = by_function(records)
    texts = {fn: got[fn][0]["message"]["text"] for fn in ("visit", "visit_name", "visit_keyword", "quoted", "cleaned", "load_plugin")}
    assert texts == {
        "visit": "Unsupported expression: {describe(node)}. Supported expressions are names and constants.",
        "visit_name": "Unknown name '{node.id}': {describe(node)}. Supported expressions are names and constants.",
        "visit_keyword": "Given by keyword: {describe(node)}. Supported expressions are names and constants.",
        # ``{reason!r}`` is no longer the argument as passed, and a parameter the helper changes
        # is not what the call gave: both stay fields
        "quoted": "Bad {reason!r} here",
        "cleaned": "{reason}, cleaned",
        # a helper called with nothing: its message, where there was none
        "load_plugin": "The widget format needs the widget package: pip install widget.",
    }
    assert got["load_plugin"][0]["exception"]["qualname"] == "builtins.ImportError"
    # a class that builds its message in ``__init__``: the construction's arguments put in there
    # (the call's own argument first), not taken for the message
    assert got["over_limit"][0]["message"]["text"] == "The widget count is over the limit of ten widgets"
    assert got["over_limit_checked"][0]["message"]["alternatives"] == ["{n} widgets is over the limit of ten widgets"]
    pasted = "ValueError: Unsupported expression: foo(). Supported expressions are names and constants."
    result = cli("match", pasted, "--data", data, "--json")
    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout)["matches"][0]["id"] == got["visit"][0]["id"]


@pytest.mark.slow
def test_a_property_that_constructs_the_exception_gives_its_message(cli, fixture_repo, tmp_path):
    """``raise self.dead_error`` with ``dead_error`` a property returning ``DeadError()``: the same
    error as ``raise DeadError()``, whose ``__init__`` says the message: one entry."""
    errors = (
        ERRORS
        + """

class DeadError(Exception):
    MESSAGE = "The engine died. See the stack trace above for the cause."

    def __init__(self, *args):
        super().__init__(self.MESSAGE, *args)
"""
    )
    code = """
from pkg.errors import DeadError


class Engine:
    @property
    def dead_error(self):
        return DeadError()

    def check(self):
        if self.errored:
            raise self.dead_error

    def step(self):
        if self.errored:
            raise DeadError()
"""
    fixture_repo.commit({"pkg/__init__.py": "", "pkg/errors.py": errors, "pkg/engine.py": code}, tag="v1")
    target = tmp_path / "out"
    config = tmp_path / "errcat.toml"
    config.write_text(MEANING_CONFIG)
    result = cli("crawl", "--repo", fixture_repo.path, "--ref", "v1", "--config", config, "--upstream", "acme", "--out", target)
    assert result.exit_code == 0, result.output
    (entry,) = [json.loads(line) for line in jsonl_bytes(target / "acme" / "widgets").splitlines()]
    assert entry["message"]["text"] == "The engine died. See the stack trace above for the cause."
    assert sorted(s["qualname"] for s in entry["sites"]) == ["Engine.check", "Engine.step"]
