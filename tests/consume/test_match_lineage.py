"""errcat match over a history catalogue: a paste in any release's wording names the entry that
raised it at full strength, with the releases that raised it and what succeeds it today; a
release asked for (--version) or named by the paste puts what it raised first."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from crawler.consume.lineage import chain, live_in, predecessors, releases, version_key
from crawler.consume.paste import named_version

ARGS = ["--name", "acme/widgets", "--include", "pkg/**/*.py"]

V1 = {
    "pkg/__init__.py": "",
    "pkg/a.py": """
        def check(x):
            if x < 0:
                raise ValueError(f"widget size must be positive, got {x}")
            if x > 10:
                raise OverflowError("widget size is far too large for the frame")
            return x


        def load(path):
            raise FileNotFoundError(f"no widget file at {path}")


        def paint(colour):
            raise LookupError(f"unknown paint for the widget frame: {colour}")
        """,
}
V11 = {
    "pkg/a.py": """
        def check(x):
            if x < 0:
                raise ValueError(f"widget size must be strictly positive, got {x}")
            if x > 10:
                raise OverflowError("widget size is far too large for the frame")
            return x


        def paint(colour):
            raise LookupError(f"unknown paint for the widget frame: {colour}")
        """,
    "pkg/io.py": """
        def load(path):
            raise FileNotFoundError(f"no widget file at {path}")
        """,
}
V2 = {
    "pkg/a.py": """
        def check(x):
            if x < 0:
                raise ValueError(f"widget size must be strictly positive and whole, got {x}")
            return x


        def paint(colour):
            raise LookupError(f"unknown paint for the widget frame: {colour} (try red or blue)")
        """,
}


@pytest.fixture
def history(fixture_repo, cli, tmp_path) -> Path:
    fixture_repo.commit(V1, tag="v1.0")
    fixture_repo.commit(V11, tag="v1.1")
    fixture_repo.commit(V2, tag="v2.0")
    out = tmp_path / "out"
    result = cli("history", "--repo", fixture_repo.path, *ARGS, "--out", out, "v1.0", "v1.1", "v2.0")
    assert result.exit_code == 0, result.output
    return out


def by_template(out: Path) -> dict[str, dict]:
    records = [json.loads(p.read_text()) for p in (out / "acme" / "widgets" / "errors").glob("*.json")]
    return {r["message"]["text"]: r for r in records}


def answer(cli, out: Path, paste: str, *more: str) -> dict:
    import jsonschema

    from crawler.model.schemas import schema_for

    result = cli("match", "--data", out, "--json", *more, paste)
    assert result.exit_code in (0, 1), result.output
    got = json.loads(result.stdout)
    jsonschema.validate(got, schema_for("match"))  # the lineage and the release are in the output's schema
    return got


@pytest.mark.slow
def test_the_oldest_wording_names_its_entry_and_the_whole_chain(cli, history):
    records = by_template(history)
    first = records["widget size must be positive, got {x}"]
    second = records["widget size must be strictly positive, got {x}"]
    today = records["widget size must be strictly positive and whole, got {x}"]
    got = answer(cli, history, "ValueError: widget size must be positive, got -3")
    top = got["matches"][0]
    assert (top["id"], top["strength"], top["match"]) == (first["id"], "match", "full")
    lineage = top["lineage"]
    assert lineage["retired"] and lineage["raised_in"] == "v1.0"
    assert lineage["releases"] == {"first": "v1.0", "last": "v1.0", "retired": True, "removed_in": "v1.1"}
    assert [s["id"] for s in lineage["succeeded_by"]] == [second["id"], today["id"]]
    assert [s["how"] for s in lineage["succeeded_by"]] == ["reworded", "reworded"]
    assert [s["retired"] for s in lineage["succeeded_by"]] == [True, False]
    assert lineage["succeeded_by"][1]["raised_in"] == "since v2.0"
    assert lineage["today"] == today["id"]

    text = cli("match", "--data", history, "ValueError: widget size must be positive, got -3").stdout
    assert "retired: raised in v1.0, removed in v1.1" in text
    assert f"succeeded by {second['id']} (reworded; retired since)" in text
    assert f"then by {today['id']} (reworded; raised today, since v2.0)" in text
    assert f"what raises it today: errcat show {today['id']}" in text


@pytest.mark.slow
def test_a_middle_wording_and_a_retired_error_say_their_releases(cli, history):
    records = by_template(history)
    middle = answer(cli, history, "ValueError: widget size must be strictly positive, got -1")["matches"][0]
    assert middle["id"] == records["widget size must be strictly positive, got {x}"]["id"] and middle["strength"] == "match"
    assert middle["lineage"]["raised_in"] == "v1.1"
    assert [s["id"] for s in middle["lineage"]["succeeded_by"]] == [records["widget size must be strictly positive and whole, got {x}"]["id"]]

    gone = answer(cli, history, "OverflowError: widget size is far too large for the frame")["matches"][0]
    assert gone["strength"] == "match" and gone["lineage"]["raised_in"] == "v1.0 to v1.1"
    assert gone["lineage"]["releases"]["removed_in"] == "v2.0"
    assert gone["lineage"]["succeeded_by"] == [] and gone["lineage"]["today"] is None
    text = cli("match", "--data", history, "OverflowError: widget size is far too large for the frame").stdout
    assert "retired: raised in v1.0 to v1.1, removed in v2.0" in text and "what raises it today" not in text


@pytest.mark.slow
def test_a_moved_error_found_by_its_old_traceback_says_where_it_went(cli, history):
    paste = (
        'Traceback (most recent call last):\n  File "/srv/pkg/a.py", line 10, in load\n'
        '    raise FileNotFoundError(f"no widget file at {path}")\nFileNotFoundError: no widget file at /tmp/w.bin'
    )
    top = answer(cli, history, paste)["matches"][0]
    assert top["strength"] == "match" and top["path"] == "pkg/io.py"
    assert top["lineage"]["moved"] == [{"from_path": "pkg/a.py", "to_path": "pkg/io.py", "version": "v1.1"}]
    assert top["lineage"]["raised_in"] == "since v1.0" and not top["lineage"]["retired"]
    assert "moved: pkg/a.py -> pkg/io.py in v1.1" in cli("match", "--data", history, paste).stdout


PAINT = "LookupError: unknown paint for the widget frame: teal (try red or blue)"


@pytest.mark.slow
def test_the_release_asked_for_puts_what_it_raised_first(cli, history):
    records = by_template(history)
    old, new = records["unknown paint for the widget frame: {colour}"]["id"], records["unknown paint for the widget frame: {colour} (try red or blue)"]["id"]
    # both templates fit; today's covers more of the message and comes first unless v1.x is asked for
    assert [m["id"] for m in answer(cli, history, PAINT)["matches"]][:2] == [new, old]
    for release in ("v1.0", "1.1", "1.0.0"):
        got = answer(cli, history, PAINT, "--version", release)
        assert got["query"]["version"] == release and got["query"]["version_from"] == "option"
        assert [m["id"] for m in got["matches"]][:2] == [old, new]
    got = answer(cli, history, PAINT, "--version", "2.0")
    assert [m["id"] for m in got["matches"]][:2] == [new, old]
    assert [m["raised_by_release"] for m in got["matches"]][:2] == [True, False]
    text = cli("match", "--data", history, "--version", "1.0", PAINT).stdout
    assert "raised by 1.0]" in text and "not raised by 1.0]" in text


@pytest.mark.slow
@pytest.mark.parametrize(
    "named",
    [
        "INFO 03-01 10:00:00 [api_server.py:12] widgets API server version 1.1\n",
        'File "/usr/lib/python3.12/site-packages/widgets-1.1.dist-info/RECORD"\n',
        "installed with pip install widgets==1.1\n",
    ],
)
def test_a_paste_that_names_its_release_is_read_for_it(cli, history, named):
    records = by_template(history)
    got = answer(cli, history, named + PAINT)
    assert (got["query"]["version"], got["query"]["version_from"]) == ("1.1", "paste")
    assert got["matches"][0]["id"] == records["unknown paint for the widget frame: {colour}"]["id"]
    assert "release: 1.1 (named by the paste" in cli("match", "--data", history, named + PAINT).stdout
    # the option says otherwise
    assert (
        answer(cli, history, named + PAINT, "--version", "2.0")["matches"][0]["id"]
        == records["unknown paint for the widget frame: {colour} (try red or blue)"]["id"]
    )


@pytest.mark.slow
def test_a_bad_release_is_one_line(cli, history):
    result = cli("match", "--data", history, "--version", "latest; rm -rf", PAINT)
    assert result.exit_code == 2
    assert result.output.strip().splitlines() == ["errcat: --version: not a release such as 0.6.3 or v0.8.5: 'latest; rm -rf'"]
    # digits of another script are digits to Python's \d, not to PEP 440 (once an InvalidVersion traceback)
    other = cli("match", "--data", history, "--version", "\u0661.\u0662", PAINT)
    assert other.exit_code == 2
    assert other.output.strip().splitlines() == ["errcat: --version: not a release such as 0.6.3 or v0.8.5: '\u0661.\u0662'"]


def test_a_catalogue_without_history_answers_as_before(cli, fixture_repo, tmp_path):
    fixture_repo.commit(V1, tag="v1.0")
    out = tmp_path / "one"
    assert cli("crawl", "--repo", fixture_repo.path, *ARGS, "--ref", "v1.0", "--out", out).exit_code == 0
    paste = "LookupError: unknown paint for the widget frame: teal"
    got = answer(cli, out, paste, "--version", "1.0")
    assert got["matches"][0]["strength"] == "match" and "lineage" not in got["matches"][0]
    assert "raised by" not in cli("match", "--data", out, "--version", "1.0", paste).stdout


@pytest.mark.parametrize(
    ("text", "release"),
    [
        ("INFO 10-01 12:00:00 api_server.py:527] vLLM API server version 0.6.3.post1", "0.6.3.post1"),
        ("INFO 09-27 llm_engine.py:237] Initializing an LLM engine (v0.6.3) with config: model='m'", "v0.6.3"),
        ('File "/usr/local/lib/python3.10/site-packages/vllm-0.6.3+cu118.dist-info/x"', "0.6.3"),
        ("/root/.cache/vllm/0.5.4/torch_compile", "0.5.4"),
        ("vLLM Version: 0.7.2", "0.7.2"),
        ("vllm==0.5.4 at first, then vllm==0.6.0", None),  # an upgrade: no one release
        ('File "/opt/venv/lib/python3.12/site-packages/vllm/engine/llm_engine.py"', None),
        ("vllm-1  | ERROR something", None),  # docker compose's service name
        ("myvllm-1.2.3", None),
        ("pip install vllm==0.6.3+cu!", None),  # a release cut short where a tag is no tag: not 0.6
        ("pip install vllm==0.6.3+cu\u017f", None),  # (Unicode's IGNORECASE took "\u017f" for s: 0.6.3)
        ("vLLM ver\u017fion 0.6.3", None),
    ],
)
def test_named_version(text, release):
    assert named_version(text, "vllm") == release


def test_named_version_is_linear_on_hostile_text():
    import time

    start = time.process_time()
    named_version("vllm " * 50_000 + "vllm version " * 20_000 + "vllm-" * 40_000, "vllm")
    assert time.process_time() - start < 5  # a generous bound: quadratic would take minutes


def _h(first=None, last=None, removed=None, retired=False, replaced_by=None):
    def lt(v):
        return {"version": v, "commit": "0" * 40} if v else None

    return {"first_seen": lt(first), "last_seen": lt(last), "removed_in": lt(removed), "retired": retired, "replaced_by": replaced_by}


def test_lineage_reads_releases_and_stops_at_loops_and_unreadable_records():
    assert version_key("v0.6.3") == version_key("0.6.3") == version_key("0.6.3+cu118") < version_key("0.6.3.post1")
    old = _h("v0.4.0", "v0.6.6", "v0.7.0", True, "b" * 16)
    assert releases(old).text() == "v0.4.0 to v0.6.6" and releases(_h("v1.0")).text() == "since v1.0"
    assert releases(None) is None and releases(_h()) is None
    assert [live_in(old, v) for v in ("0.3.9", "0.4.0", "0.6.6", "0.6.9", "0.7.0", "1.0")] == [False, True, True, True, False, False]
    assert live_in(_h("v1.0"), "9.9") is True and live_in(_h(), "1.0") is None and live_in(old, "main") is None
    records = {
        "a" * 16: {"id": "a" * 16, "history": old},
        "b" * 16: {"id": "b" * 16, "history": _h("v0.7.0", "v0.8.0", "v0.9.0", True, "c" * 16)},
        "c" * 16: {"id": "c" * 16, "history": _h("v0.9.0", None, None, True, "a" * 16)},
    }  # a loop back to a
    assert [r["id"] for r in chain(records["a" * 16], records.get)] == ["b" * 16, "c" * 16]
    assert chain(records["a" * 16], lambda eid: None) == []
    assert [r["id"] for r in chain(records["a" * 16], lambda eid: {"id": "f" * 16} if eid == "b" * 16 else None)] == []
    assert predecessors(records, "c" * 16) == ["b" * 16, "a" * 16]


@pytest.mark.slow
def test_a_forged_record_gives_no_lineage_and_no_traceback(cli, history):
    from crawler.consume.lineage import read_record

    records = by_template(history)
    rid = records["widget size must be positive, got {x}"]["id"]
    errors = history / "acme" / "widgets" / "errors"
    assert read_record(errors, rid)["history"]["replaced_by"] == records["widget size must be strictly positive, got {x}"]["id"]
    data = json.loads((errors / f"{rid}.json").read_text())
    for forged in (
        {**data, "history": {**data["history"], "replaced_by": "../../etc/passwd"}},
        {**data, "history": {**data["history"], "first_seen": {"version": 3, "commit": "x"}}},
        {**data, "id": "f" * 16},
        [data],
    ):
        (errors / f"{rid}.json").write_text(json.dumps(forged))
        assert read_record(errors, rid) is None
        top = answer(cli, history, "ValueError: widget size must be positive, got -3")["matches"][0]
        assert top["id"] == rid and "lineage" not in top  # still the match its search row makes it
    assert read_record(errors, "../" + rid[3:]) is None


@pytest.mark.slow
def test_a_product_actor_tag_before_an_old_message_is_read_past(cli, history):
    """Xinference passes vLLM's error on as "ValueError: [address=..., pid=...] <message>"."""
    records = by_template(history)
    paste = "LookupError: [address=127.0.0.1:37657, pid=3125985] unknown paint for the widget frame: teal"
    top = answer(cli, history, paste)["matches"][0]
    assert top["strength"] == "match" and top["match"] == "full" and top["id"] == records["unknown paint for the widget frame: {colour}"]["id"]
    assert top["fields"][0]["value"] == "teal"


@pytest.mark.slow
@pytest.mark.parametrize("paste", ['"LookupError: unknown paint for the widget frame: teal"', '> "LookupError: unknown paint for the widget frame: teal"'])
def test_an_exception_line_in_double_quotes_is_read_inside_them(cli, history, paste):
    records = by_template(history)
    top = answer(cli, history, paste)["matches"][0]
    assert top["id"] == records["unknown paint for the widget frame: {colour}"]["id"] and top["fields"][0]["value"] == "teal"
    assert top["strength"] == "match"


def test_a_quoted_line_that_is_no_exception_line_keeps_its_quotes():
    from crawler.consume.paste import clean

    assert clean('"unknown paint"') == '"unknown paint"' and clean('" ValueError: x"') == '" ValueError: x"'
