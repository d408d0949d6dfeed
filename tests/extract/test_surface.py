"""The error surface beyond raise (issue #19, Python): logged warnings and errors, HTTP error
responses, and messages assembled before the raise; extracted from fixture code, then crawled
from a real repository and read by every consumer (show, render, diff, match)."""

from __future__ import annotations

import gzip
import json
import textwrap
from pathlib import Path

import pytest

from crawler.extract import surface
from crawler.extract.visitor import extract_file
from crawler.source.config import ResponseBuilder, Upstream
from tests.helpers import crawl_with_config

SERVER = ResponseBuilder(
    call="create_error_response",
    params=["message", "err_type", "status_code"],
    error_type="err_type",
    status_code="status_code",
    default_error_type="BadRequestError",
    default_status_code=400,
)
BODY = ResponseBuilder(call="ErrorInfo", params=["message", "type", "code"], error_type="type", status_code="code")
ALL = surface.Settings(("raise", "assert", "log", "response"), (SERVER.model_dump(), BODY.model_dump()))


def sites(code: str, settings: surface.Settings = ALL, path: str = "pkg/mod.py") -> list[dict]:
    result = extract_file(path, textwrap.dedent(code).encode(), settings)
    assert result["status"] == "ok", result["reason"]
    return result["sites"]


def by_text(found: list[dict]) -> dict[str, dict]:
    return {s["template"]["text"]: s for s in found}


#: The response builders' case (tests/extract/cases/responses.py), with its settings: ``ALL``.
RESPONSES = (Path(__file__).parent / "cases" / "responses.py").read_text(encoding="utf-8")


def test_the_upstream_chooses_the_kinds():
    plain = surface.Settings()  # a plain Python repository: raises, asserts and logs
    code = RESPONSES + "\n\ndef f():\n    logger.warning('careful now')\n    raise ValueError('bad value')\n"
    assert {s["kind"] for s in sites(code, plain)} == {"log", "raise"}
    assert {s["kind"] for s in sites(code, surface.Settings(("raise",)))} == {"raise"}
    assert {s["kind"] for s in sites(code, surface.Settings(("response",), ALL.responses))} == {"response"}
    assert Upstream(name="x", url="https://github.com/o/n").kinds == ["raise", "assert", "log"]
    with pytest.raises(ValueError):
        Upstream(name="x", url="https://github.com/o/n", kinds=["raise", "shell"])


def test_a_list_of_pieces_stays_bounded():
    appends = "\n".join(f"    errors.append('reason number {i}')" for i in range(200))
    (site,) = sites(f"def f():\n    errors = []\n{appends}\n    raise ValueError('; '.join(errors))\n")
    assert len(site["template"]["alternatives"]) == 32


# --------------------------------------------------------------------------- a crawl, and its consumers

TOML = """
default = "acme"

[upstreams.acme]
url = "https://github.com/acme/server"
include = ["srv/**/*.py"]
kinds = ["raise", "assert", "log", "response"]

[[upstreams.acme.responses]]
call = "create_error_response"
params = ["message", "err_type", "status_code"]
error_type = "err_type"
status_code = "status_code"
default_error_type = "BadRequestError"
default_status_code = 400
"""

SERVER_CODE = """
import logging
from http import HTTPStatus

logger = logging.getLogger(__name__)


class Server:
    def bind(self, port):
        logger.warning("Address already in use. Retrying with a new port.")
        logger.error("\\x1b[31mred\\u202e <script>alert(1)</script> %s", port)

    def cancel(self, response_id):
        return self.create_error_response(f"Response with id '{response_id}' not found.",
                                          "NotFoundError", HTTPStatus.NOT_FOUND)


def configure(key):
    if key.startswith("OLD_"):
        logger.warning("Unknown setting detected: %s", key)
        return
    raise ValueError(f"Unknown setting detected: {key}")


def check(items):
    errors = []
    for item in items:
        errors.append(f"item {item} is negative")
    raise ValueError("\\n".join(errors))
"""


@pytest.fixture
def crawled(fixture_repo, cli, tmp_path):
    data, records = crawl_with_config(fixture_repo, cli, tmp_path, {"srv/__init__.py": "", "srv/server.py": SERVER_CODE}, TOML)
    return data, records, tmp_path / "errcat.toml"


@pytest.mark.slow
def test_a_crawl_writes_valid_records_of_each_kind(crawled, cli):
    data, records, _ = crawled
    assert cli("validate", data.parent.parent).exit_code == 0
    log = records["Address already in use. Retrying with a new port."]
    assert (log["kind"], log["log"], log["response"]) == ("log", {"level": "warning", "logger": "logger", "once": False}, None)
    # schema 6: a log names no exception (its level is log.level), nor its sites
    assert log["exception"] is None and (log["sites"][0]["exception"], log["sites"][0]["exception_qualname"]) == (None, None)
    response = records["Response with id '{response_id}' not found."]
    assert response["exception"] is None
    assert response["response"] == {
        "status_code": 404,
        "error_type": "NotFoundError",
        "builder": "create_error_response",
        "builder_qualname": response["response"]["builder_qualname"],
    }
    assert response["response"]["builder_qualname"].endswith("create_error_response")
    assert response["sites"][0]["response"] == response["response"]
    assert log["meaning"]["trigger"] == "Logged whenever `Server.bind` is called."
    assert response["meaning"]["trigger"] == "Answered whenever `Server.cancel` is called."
    assembled = records['{"\\n".join(errors)}']
    assert assembled["message"]["alternatives"] == ["item {item} is negative"]
    search = json.loads((data / "search.json").read_text())
    row = next(e for e in search["entries"] if e["id"] == assembled["id"])
    assert row["alternatives"] == [{"fragments": ["item ", " is negative"], "anchors": ["is"]}]  # the words at its ends may touch the next piece


@pytest.mark.slow
def test_show_and_render_say_how_the_error_reaches_users_escaped(crawled, cli, tmp_path):
    data, records, _ = crawled
    shown = cli("show", "--data", data, records["Response with id '{response_id}' not found."]["id"]).output
    assert "Kind:       response" in shown and "Answered:   HTTP 404 NotFoundError, built by create_error_response" in shown
    hostile = next(r for text, r in records.items() if "red" in text)
    shown = cli("show", "--data", data, hostile["id"]).output
    assert "Logged:     at ERROR by logger" in shown
    assert "\x1b" not in shown and "\u202e" not in shown and "\\x1b" in shown
    pieces = cli("show", "--data", data, records['{"\\n".join(errors)}']["id"]).output
    assert "Piece:      item {item} is negative" in pieces
    assert cli("render", "--data", data, "--out", tmp_path / "site").exit_code == 0
    page = (tmp_path / "site" / "errors" / f"{hostile['id']}.html").read_text()
    assert "<dt>Logged</dt><dd><code>at ERROR by logger</code></dd>" in page
    assert "<script>alert" not in page and "&lt;script&gt;alert(1)&lt;/script&gt;" in page
    assert cli("render", "--data", data, "--out", tmp_path / "md", "--format", "markdown").exit_code == 0
    md = (tmp_path / "md" / "errors" / f"{hostile['id']}.md").read_text()
    assert "- **Logged:** `at ERROR by logger`" in md


@pytest.mark.slow
@pytest.mark.parametrize(
    "paste",
    [
        "WARNING 11-30 14:21:45 [server.py:10] Address already in use. Retrying with a new port.",
        "(APIServer pid=123) WARNING 11-30 14:21:45 [server.py:10] Address already in use. Retrying with a new port.",
    ],
)
def test_match_finds_a_log_line_with_its_prefix(crawled, cli, paste):
    data, records, _ = crawled
    got = json.loads(cli("match", "--data", data, "--json", paste).stdout)
    assert got["matches"][0]["id"] == records["Address already in use. Retrying with a new port."]["id"]


@pytest.mark.slow
@pytest.mark.parametrize(
    "paste",
    [
        '{"error": {"message": "Response with id \'resp_1\' not found.", "type": "NotFoundError", "code": 404}}',
        '{"object": "error", "message": "Response with id \'resp_1\' not found.", "type": "NotFoundError", "code": 404}',
    ],
)
def test_match_finds_a_json_error_body(crawled, cli, paste):
    data, records, _ = crawled
    got = json.loads(cli("match", "--data", data, "--json", paste).stdout)
    assert got["matches"][0]["id"] == records["Response with id '{response_id}' not found."]["id"]


@pytest.mark.slow
def test_match_finds_an_assembled_message_by_its_pieces(crawled, cli):
    data, records, _ = crawled
    paste = 'Traceback (most recent call last):\n  File "x.py", line 1, in <module>\nValueError: item -3 is negative\nitem -1 is negative'
    got = json.loads(cli("match", "--data", data, "--json", paste).stdout)
    assert got["matches"][0]["id"] == records['{"\\n".join(errors)}']["id"]


@pytest.mark.slow
def test_diff_reports_a_changed_log_like_a_raise(crawled, fixture_repo, cli, tmp_path):
    data, records, config = crawled
    fixture_repo.commit({"srv/server.py": SERVER_CODE.replace("Retrying with a new port.", "Retrying with another port.")}, tag="v2")
    out = cli("diff", "v1", "v2", "--repo", fixture_repo.path, "--config", config, "--format", "json").stdout
    report = json.loads(out)
    changes = {c["kind"]: c for c in report["changes"]}
    assert changes["reworded"]["old_id"] == records["Address already in use. Retrying with a new port."]["id"]


@pytest.mark.slow
@pytest.mark.parametrize(
    "paste, kind",
    [
        ("(APIServer pid=7) WARNING 11-30 14:21:45 [server.py:20] Unknown setting detected: OLD_X", "log"),
        ("ValueError: Unknown setting detected: X", "raise"),
        ("ERROR 11-30 14:21:45 [server.py:20] ValueError: Unknown setting detected: X", "raise"),
        ("Unknown setting detected: X", "raise"),  # a bare message: a raise before a log of the same words
    ],
)
def test_a_log_prefix_picks_the_log_entry_and_an_exception_the_raise(crawled, cli, paste, kind):
    data, _, _ = crawled
    ids = {
        r["kind"]: r["id"]
        for r in map(json.loads, gzip.decompress((data / "errors.jsonl.gz").read_bytes()).splitlines())
        if r["message"]["text"] == "Unknown setting detected: {key}"
    }
    assert set(ids) == {"log", "raise"}
    got = json.loads(cli("match", "--data", data, "--json", paste).stdout)
    assert got["matches"][0]["id"] == ids[kind]
    assert [m["id"] for m in got["matches"]].count(ids[kind]) == 1


@pytest.mark.parametrize("bad", ['call = "a.b"', 'call = "x"\ndefault_status_code = 999', 'call = "x"\nshell = "rm -rf /"'])
def test_a_bad_response_builder_is_one_line(fixture_repo, cli, tmp_path, bad):
    fixture_repo.commit({"srv/server.py": SERVER_CODE}, tag="v1")
    config = tmp_path / "errcat.toml"
    config.write_text(TOML.split("[[upstreams.acme.responses]]")[0] + "[[upstreams.acme.responses]]\n" + bad + "\n")
    result = cli("crawl", "--repo", fixture_repo.path, "--ref", "v1", "--config", config, "--out", tmp_path / "out")
    assert result.exit_code == 2
    assert result.output.count("\n") == 1 and result.output.startswith("errcat: ") and "Traceback" not in result.output
    assert not (tmp_path / "out").exists()


def test_a_branch_that_calls_a_builtin_keeps_the_message_another_branch_sets():
    # err = str(e) in one branch is no helper, and must not hide "blocked." set in the other
    code = """
    def guard(e):
        if "No GPUs" in str(e):
            err_msg = "CUDA initialization is blocked."
        else:
            err_msg = str(e)
        raise RuntimeError(err_msg) from e
    """
    (site,) = sites(code)
    assert site["template"]["text"] == "CUDA initialization is blocked."
