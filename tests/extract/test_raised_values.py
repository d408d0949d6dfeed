"""A raise of a value, not a class (``raise dead_error``, ``raise err.to_exception()``): the
entry names the class the code shows, never the variable; a value caught or handed in is a
re-raise; a call whose class is unknown keeps its entry and id but claims no class."""

from __future__ import annotations

import json

import pytest

from crawler.extract.visitor import extract_file
from tests.helpers import MEANING_CONFIG, jsonl_bytes

ERRORS = """
class EngineDeadError(RuntimeError):
    pass


class RetryableRequestError(RuntimeError):
    pass


class GenerationError(RuntimeError):
    pass
"""

CODE = """
from pkg.errors import EngineDeadError, GenerationError, RetryableRequestError


def make_dead() -> EngineDeadError:
    return EngineDeadError("engine died while {}".format("x"))


def make_retry(message):
    return RetryableRequestError(message)


def make_either(flag):
    if flag:
        return RetryableRequestError("retry")
    return GenerationError("failed")


class Result:
    def to_exception(self) -> RetryableRequestError:
        return RetryableRequestError("request can be retried")

    def to_any(self) -> RetryableRequestError | GenerationError:
        return GenerationError("x")

    @property
    def dead_error(self):
        return EngineDeadError()

    def local_instance(self, ok):
        dead_error = EngineDeadError("engine is dead, restart it")
        if not ok:
            raise dead_error

    def branch_same(self, ok):
        if ok:
            err = RetryableRequestError("retry the request now")
        else:
            err = RetryableRequestError("retry the request later")
        raise err

    def branch_differ(self, ok):
        if ok:
            err = RetryableRequestError("the request failed in a way")
        else:
            err = GenerationError("the request failed in a way")
        raise err

    def either_instance(self, ok):
        err = RetryableRequestError("x") if ok else GenerationError("y")
        raise err

    def param(self, err: EngineDeadError):
        raise err

    def param_type(self, cls: type[GenerationError]):
        raise cls("generation went wrong here")

    def returned(self):
        raise self.to_exception()

    def returned_any(self):
        raise self.to_any()

    def returned_function(self):
        raise make_dead()

    def returned_function_plain(self, message):
        raise make_retry(message)

    def returned_either(self):
        raise make_either(True)

    def prop(self):
        raise self.dead_error

    def caught(self, fns):
        last_error = None
        for fn in fns:
            try:
                fn()
            except ValueError as e:
                last_error = e
        if last_error is not None:
            raise last_error

    def caught_nested(self, fns):
        first = None

        def attempt(fn):
            nonlocal first
            try:
                fn()
            except BaseException as exc:
                if first is None:
                    first = exc

        for fn in fns:
            attempt(fn)
        if first is not None:
            raise first

    def handed(self, failure: Exception | None = None):
        if failure is not None:
            raise failure

    def attribute(self, engine):
        raise engine.dead_error

    def queued(self, queue):
        output = queue.get()
        if isinstance(output, Exception):
            raise output

    def call_unknown(self, res):
        raise res.error.to_exception()

    def class_by_branch(self, strict):
        error = ValueError if strict else AssertionError
        raise error("frame recovery is not supported")

    def factory_param(self, bypass_cls):
        raise bypass_cls("Failed to pickle cache key")

    def plain(self):
        raise GenerationError("a class raised as ever")
"""


def crawl(cli, fixture_repo, tmp_path, code=CODE, tag="v1", out="out"):
    fixture_repo.commit({"pkg/__init__.py": "", "pkg/errors.py": ERRORS, "pkg/api.py": code}, tag=tag)
    target = tmp_path / out
    config = tmp_path / "errcat.toml"
    config.write_text(MEANING_CONFIG)
    result = cli("crawl", "--repo", fixture_repo.path, "--ref", tag, "--config", config, "--upstream", "acme", "--out", target)
    assert result.exit_code == 0, result.output
    records = [json.loads(line) for line in jsonl_bytes(target / "acme" / "widgets").splitlines()]
    manifest = json.loads((target / "acme" / "widgets" / "manifest.json").read_text())
    return records, manifest


def by_function(records):
    out: dict[str, list] = {}
    for r in records:
        for s in r["sites"]:
            out.setdefault(s["qualname"].rpartition(".")[2], []).append(r)
    return out


@pytest.mark.slow
def test_values_name_the_class_the_code_shows(cli, fixture_repo, tmp_path):
    records, manifest = crawl(cli, fixture_repo, tmp_path)
    got = {fn: [(r["exception"]["name"], r["exception"]["qualname"]) for r in rs] for fn, rs in by_function(records).items()}
    dead = ("EngineDeadError", "pkg.errors.EngineDeadError")
    retry = ("RetryableRequestError", "pkg.errors.RetryableRequestError")
    unknown = [("(unknown)", "")]
    assert got["local_instance"] == [dead]  # a local given an instance
    assert set(got["branch_same"]) == {retry}  # each branch, the same class
    assert got["param"] == [dead]  # a parameter annotated with the class
    assert got["param_type"] == [("GenerationError", "pkg.errors.GenerationError")]  # type[...]
    assert got["returned"] == [retry]  # a method's return annotation
    assert got["returned_function"] == [dead]  # a function that returns what it constructs
    assert got["returned_function_plain"] == [retry]
    assert got["prop"] == [dead]  # a property of the class
    # branches (or a return's union) giving different classes: a user may see either, none claimed
    assert got["branch_differ"] == unknown
    assert got["returned_any"] == unknown
    assert got["returned_either"] == unknown
    assert got["class_by_branch"] == unknown
    assert got["either_instance"] == unknown  # made here: an entry, not a re-raise
    # calls errcat cannot see into keep their entry, with their message, and claim no class
    assert got["call_unknown"] == unknown
    assert got["factory_param"] == unknown
    assert got["plain"] == [("GenerationError", "pkg.errors.GenerationError")]
    # values caught or handed in are re-raises: no entry, counted
    for fn in ("caught", "caught_nested", "handed", "attribute", "queued"):
        assert fn not in got, fn
    assert manifest["counts"]["reraises"] == 5
    # no entry anywhere names a variable or function as its exception
    for r in records:
        name = r["exception"]["name"]
        assert name == "(unknown)" or name[0].isupper(), name
        assert r["exception"]["qualname"] in ("", f"pkg.errors.{name}"), r["exception"]
    # the message of an unknown call is kept, and the title does not show the variable
    factory = by_function(records)["factory_param"][0]
    assert factory["message"]["text"] == "Failed to pickle cache key"
    call = by_function(records)["call_unknown"][0]
    assert call["title"] == "(unknown) in Result.call_unknown"
    assert call["sites"][0]["exception"] == "res.error.to_exception"  # the site keeps what is written


@pytest.mark.slow
def test_ids_stay_unless_the_exception_changed(cli, fixture_repo, tmp_path):
    """An entry whose class is unknown keeps the id it had when it was named by the variable
    (keyed by the name as written, as before); a resolved one is keyed by its class."""
    from crawler.extract.ids import entry_id, entry_key

    records, _ = crawl(cli, fixture_repo, tmp_path)
    call = by_function(records)["call_unknown"][0]
    before = {
        "exception_qualname": "res.error.to_exception",
        "exception": "res.error.to_exception",
        "template": call["sites"][0]["template"],
        "module": "pkg.api",
        "qualname": "Result.call_unknown",
        "kind": "raise",
    }
    assert call["id"] == entry_id("acme/widgets", entry_key(before))
    dead = by_function(records)["prop"][0]
    assert dead["id"] == entry_id("acme/widgets", ("site", "EngineDeadError", "pkg.api", "Result.prop"))


@pytest.mark.slow
def test_diff_says_the_exception_changed_to_unknown(cli, fixture_repo, tmp_path):
    old = CODE.replace("raise res.error.to_exception()", "raise RetryableRequestError(res.message)")
    crawl(cli, fixture_repo, tmp_path, code=old, tag="v0", out="old")
    crawl(cli, fixture_repo, tmp_path, code=CODE, tag="v1", out="new")
    result = cli("diff", tmp_path / "old" / "acme" / "widgets", tmp_path / "new" / "acme" / "widgets", "--format", "json")
    assert result.exit_code == 0, result.output
    changes = json.loads(result.stdout)["changes"]
    # a reviewer reads: the class was RetryableRequestError, now errcat does not know it (not "to_exception")
    assert [(c["kind"], c["old_exception"], c["exception"]) for c in changes] == [("exception-changed", "RetryableRequestError", "(unknown)")]


def test_extraction_resolves_without_running_the_code():
    """The resolution is read from the syntax tree: a module that would fail on import resolves."""
    code = "import does_not_exist\n" + CODE.replace("from pkg.errors import", "from pkg.errors import") + "\nraise SystemExit(1)\n"
    result = extract_file("pkg/api.py", code.encode())
    names = {s["qualname"]: s["exception"] for s in result["sites"]}
    assert names["Result.prop"] == "EngineDeadError"
    assert names["Result.returned"] == "RetryableRequestError"


def test_an_isinstance_test_names_the_class():
    code = (
        CODE
        + """

def wrap(url, e) -> "Wrapped | Exception":
    return e


def load(url):
    try:
        fetch(url)
    except Exception as e:
        wrapped = wrap(url, e)
        if isinstance(wrapped, GenerationError):
            raise wrapped from e
        raise


def validate(data):
    if isinstance(data, ValueError):
        raise data
    if isinstance(data, (KeyError, IndexError)):
        raise data
    if isinstance(data, Exception) and data:
        raise data
    return data
"""
    )
    result = extract_file("pkg/api.py", code.encode())
    got = [(s["qualname"], s["line"], s["exception"]) for s in result["sites"] if s["qualname"] in ("load", "validate")]
    assert got == [
        ("load", code.count("\n", 0, code.index("raise wrapped")) + 1, "GenerationError"),
        ("validate", code.count("\n", 0, code.index("raise data")) + 1, "ValueError"),
    ]
    # a tuple of classes or Exception says no one class: re-raises of what was handed in
    assert result["reraises"] == 5 + 2 + 1  # (the five of CODE, two in validate, the bare raise in load)


@pytest.mark.slow
def test_pages_say_the_class_is_not_known(cli, fixture_repo, tmp_path):
    records, _ = crawl(cli, fixture_repo, tmp_path)
    entry = by_function(records)["call_unknown"][0]
    data = tmp_path / "out" / "acme" / "widgets"
    page = cli("show", entry["id"], "--data", data, "--color", "never")
    assert page.exit_code == 0, page.output
    line = next(x for x in page.stdout.splitlines() if x.startswith("Exception:"))
    assert "not known" in line and "to_exception" not in line
    for fmt, ext, said in (("html", "html", '<dd id="exception">not known'), ("markdown", "md", "- **Exception:** not known")):
        site = tmp_path / f"site-{fmt}"
        built = cli("render", "--data", data, "--out", site, "--format", fmt)
        assert built.exit_code == 0, built.output
        text = next(site.rglob(f"{entry['id']}.{ext}")).read_text()
        assert said in text
        assert "res.error.to_exception" not in text.split("Exception", 1)[1].split("\n", 2)[0]


@pytest.mark.slow
def test_a_kept_id_whose_exception_became_unknown_is_an_exception_change(cli, fixture_repo, tmp_path):
    """The id of ``raise res.error.to_exception()`` keeps (keyed by the name as written), so the
    diff against a dataset written before, which named it ``to_exception``, pairs it by id: it
    says the exception changed, not that nothing did."""
    from crawler.versions.diff import diff_records, side_of
    from crawler.versions.sides import load_dataset

    crawl(cli, fixture_repo, tmp_path)
    data = load_dataset(tmp_path / "out" / "acme" / "widgets")
    entry = next(r for r in data.records if r.sites[0].qualname == "Result.call_unknown")
    written_before = entry.model_copy(update={"exception": entry.exception.model_copy(update={"name": "to_exception", "qualname": "res.error.to_exception"})})
    old = [written_before if r.id == entry.id else r for r in data.records]
    side = side_of(data.manifest, data.records)
    report = diff_records(old, data.records, old_side=side, new_side=side)
    assert [(c.kind.value, c.id, c.old_exception, c.exception) for c in report.changes] == [("exception-changed", entry.id, "to_exception", "(unknown)")]
    assert report.counts.unchanged == len(data.records) - 1
