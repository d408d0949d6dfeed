"""errcat match and the search index, on a small hostile fixture dataset."""

from __future__ import annotations

import json
import random
import re
import subprocess
import sys
from pathlib import Path

import consumer_data as cd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from crawler.consume.match import Matcher, match, read_query
from crawler.extract.segments import anchor_tokens
from crawler.model.search import SearchEntry, SearchIndex
from crawler.publish.validate import check

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "bench"))
from helpers import jsonl_bytes
from match_real import render_template, wrappings

KV_MESSAGE = "Unknown KV cache group kind 'full' in backend_per_kind. Valid kinds are: decoder, encoder_only."
PYDANTIC = (
    "Traceback (most recent call last):\n"
    '  File "/srv/app.py", line 4, in <module>\n'
    "    AttentionConfig(backend_per_kind={'full': 'FLASH_ATTN'})\n"
    "pydantic_core._pydantic_core.ValidationError: 1 validation error for AttentionConfig\n"
    "backend_per_kind\n"
    f"  Value error, {KV_MESSAGE} [type=value_error, input_value={{'full': 'FLASH_ATTN'}}, input_type=dict]\n"
    "    For further information visit https://errors.pydantic.dev/2.12/v/value_error\n"
)


@pytest.fixture(scope="module")
def dataset(tmp_path_factory) -> Path:
    return cd.write(tmp_path_factory.mktemp("data"))


@pytest.fixture(scope="module")
def matcher(dataset) -> Matcher:
    return Matcher.load(dataset)


@pytest.fixture(scope="module")
def ids(dataset) -> dict[str, str]:
    out = {}
    for line in jsonl_bytes(dataset).splitlines():
        r = json.loads(line)
        out.setdefault(r["message"]["text"], r["id"])
        out[(r["message"]["text"], r["exception"]["name"])] = r["id"]
    return out


def top(result):
    """The best answers: the matches tied first, or, with none, the weak candidates tied first
    (a template that is nearly all fields never makes a match, only a weak candidate)."""
    answers = result.matches or [w for w in result.weak if hasattr(w, "key")]
    return [m for m in answers if m.key == answers[0].key]


try:  # Python 3.11+
    from re import _constants as _sre_c  # type: ignore[attr-defined]
    from re import _parser as _sre_p  # type: ignore[attr-defined]
except ImportError:  # pragma: no cover
    import sre_constants as _sre_c  # type: ignore[no-redef]
    import sre_parse as _sre_p  # type: ignore[no-redef]

_ANCHORS = {_sre_c.AT_BEGINNING, _sre_c.AT_BEGINNING_STRING, _sre_c.AT_END, _sre_c.AT_END_STRING}


def segments(pattern: str) -> list:
    """An independent oracle: the pattern's literal runs and variable parts, read by Python's own
    regex parser (anchors dropped). The crawl gets them from the template instead.

    A pattern whose top level is not a plain sequence (an alternation, say) is one variable part.
    """
    try:
        parsed = _sre_p.parse(pattern)
    except Exception:  # noqa: BLE001 - a bad pattern has no usable fragments
        return [("var", None)]
    out: list = []
    run: list[str] = []

    def flush() -> None:
        if run:
            out.append(("lit", "".join(run)))
            run.clear()

    for op, av in parsed:
        if op is _sre_c.LITERAL:
            run.append(chr(av))
        elif op is _sre_c.AT and av in _ANCHORS:
            continue
        elif op is _sre_c.SUBPATTERN and av[0] is None and _is_literal(av[-1]):  # (?:literal)
            run.append(_literal_text(av[-1]))
        else:
            flush()
            if not out or out[-1][0] != "var":
                out.append(("var", None))
    flush()
    return out


def _is_literal(sub) -> bool:
    return all(op is _sre_c.LITERAL for op, _ in sub)


def _literal_text(sub) -> str:
    return "".join(chr(av) for _, av in sub)


def test_search_json_is_written_validated_and_complete(dataset):
    data = json.loads((dataset / "search.json").read_bytes())
    assert check("search", data, "search.json") == []
    index = SearchIndex.model_validate(data)
    assert len(index.entries) == len(cd.SITES) - 0  # every site here is its own entry
    kv = next(e for e in index.entries if e.text == cd.KV["text"])
    assert kv.fragments == ["Unknown KV cache group kind '", "' in backend_per_kind. Valid kinds are: ", "."]
    assert kv.starts_literal and kv.ends_literal and kv.fields == ["kind", "', '.join(sorted(valid_kinds))"]
    assert "backend_per_kind" in kv.anchors and "kind" in kv.tokens
    model = next(e for e in index.entries if e.exception == "UnsupportedModelError")
    assert model.catch_as == ["ModelError", "ValueError"]


def test_anchor_words_never_touch_a_field():
    segs = segments(r"^pre(?P<f0>.*?)fix\ whole\ wor(?P<f1>.*?)$")
    assert segs == [("lit", "pre"), ("var", None), ("lit", "fix whole wor"), ("var", None)]
    assert anchor_tokens(segs) == ["whole"]  # "pre" and "fix" run into the fields next to them


@pytest.mark.parametrize(
    "text, source, exception",
    [
        (KV_MESSAGE, "plain", None),
        (f"ValueError: {KV_MESSAGE}", "plain", "ValueError"),
        (PYDANTIC, "pydantic", "ValueError"),
        (json.dumps({"error": {"message": KV_MESSAGE, "type": "BadRequestError", "param": None, "code": 400}}), "json", None),
        (json.dumps({"object": "error", "message": KV_MESSAGE, "type": "BadRequestError", "code": 400}), "json", None),
        ("openai.BadRequestError: Error code: 400 - " + repr({"error": {"message": KV_MESSAGE, "type": "BadRequestError"}}), "json", None),
    ],
)
def test_the_kv_cache_error_is_found_however_it_is_pasted(matcher, ids, text, source, exception):
    result = match(text, [matcher])
    best = result.matches[0]
    assert best.entry.id == ids[cd.KV["text"]] and not best.tied
    assert best.reading.source == source and best.reading.exception == exception
    assert best.values == {"f0": "full", "f1": "decoder, encoder_only"}


def test_the_issues_elided_example_matches(matcher, ids):
    result = match("ValueError: Unknown KV cache group kind 'full' in backend_per_kind. Valid kinds are: ...", [matcher])
    assert result.matches[0].entry.id == ids[cd.KV["text"]]


@pytest.mark.parametrize("text", [KV_MESSAGE[:-1], KV_MESSAGE[:-1] + "  ", f"ValueError: {KV_MESSAGE[:-1]}\n"])
def test_a_message_quoted_without_its_full_stop_is_still_a_match(matcher, ids, text):
    """Quoted in a sentence or an issue title, a message loses its final full stop."""
    best = match(text, [matcher]).matches[0]
    assert best.entry.id == ids[cd.KV["text"]] and best.strong
    assert best.values == {"f0": "full", "f1": "decoder, encoder_only"}


def test_only_a_single_full_stop_is_given_back():
    from crawler.consume.match import _dropped_tail

    assert [_dropped_tail(f) for f in [".", ". ", "x.\n", "...", "x..", "x", "x: ", "x!"]] == [".", ". ", ".\n", "", "", "", " ", ""]


def test_chained_traceback_reads_the_last_exception_and_its_frame(matcher, ids):
    text = (
        "Traceback (most recent call last):\n"
        '  File "/x/site-packages/pkg/a.py", line 10, in parse\n'
        "    raise ValueError(f'Invalid value {x}')\n"
        "ValueError: Invalid value 3\n\n"
        "During handling of the above exception, another exception occurred:\n\n"
        "Traceback (most recent call last):\n"
        '  File "/x/site-packages/pkg/io.py", line 7, in load\n'
        "    raise NotImplementedError\n"
        "    ^^^^^^^^^^^^^^^^^^^^^^^^^\n"
        "NotImplementedError\n"
    )
    (reading,) = [r for r in read_query(text) if r.source == "traceback"]
    assert reading.exception == "NotImplementedError" and reading.message == "" and reading.frame.function == "load"
    result = match(text, [matcher])
    # the exception raised last comes first; the one it was raised while handling is a candidate too
    assert [m.entry.id for m in result.matches][:1] == [ids[("", "NotImplementedError")]]
    assert [m.reading.message for m in result.matches[1:]] == ["Invalid value 3"]
    assert result.matches[0].site_match == 3  # the frame's very line


def test_multiline_values_and_messages(matcher, ids):
    result = match("RuntimeError: boom\nTraceback?\nline one\nline two: first\nsecond", [matcher])
    assert not result.matches  # a message line inside a longer text is not the message
    result = match("line one\nline two: first\nsecond <&>", [matcher])
    assert result.matches[0].entry.id == ids["line one\nline two: {detail}"]
    assert result.matches[0].values == {"f0": "first\nsecond <&>"}


def test_ranking_prefers_more_literal_text_then_the_exception_and_shows_ties(matcher, ids):
    result = match("Invalid value 3 for foo", [matcher])
    assert [m.entry.id for m in result.matches] == [ids["Invalid value {x} for {name}"], ids["Invalid value {x}"]]
    expected = "Expected {n} items, got {len(items)}"
    tied = match("Expected 3 items, got 2", [matcher])
    assert {m.entry.id for m in tied.matches} == {ids[(expected, "ValueError")], ids[(expected, "TypeError")]}
    assert all(m.tied for m in tied.matches)
    typed = match("TypeError: Expected 3 items, got 2", [matcher])
    assert typed.matches[0].entry.id == ids[(expected, "TypeError")] and not typed.matches[0].tied
    # a subclass entry is found by the builtin the input names (pydantic says "Value error")
    sub = match("  Value error, Model 'x' is not supported by vllm. [type=value_error, input_value=1, input_type=int]", [matcher])
    assert sub.matches[0].entry.exception == "UnsupportedModelError" and sub.matches[0].exception_match == 1


def test_truncated_message_offers_prefix_matches(matcher, ids):
    text = "The model's max seq len (4096) is larger than the maximum number of tokens that can be stored in KV cache (20..."
    result = match(text, [matcher])
    assert result.matches[0].how == "prefix" and result.matches[0].entry.id == ids[cd.SITES[-1]["template"]["text"]]


def test_nothing_matches_offers_the_nearest(matcher, ids):
    result = match("Unknown KV cash grop kind", [matcher])
    assert not result.matches
    assert result.nearest[0].entry.id == ids[cd.KV["text"]]


def test_opaque_entries_are_not_offered_for_any_message(matcher):
    assert match("something nobody raises", [matcher]).matches == []


@pytest.mark.slow
def test_rendered_templates_are_found(matcher):
    """The fixture-sized version of bench/match_real.py: every template, every wrapping."""
    rng = random.Random(3)
    for entry in matcher.index.entries:
        if not entry.fragments:
            continue
        for _ in range(5):
            message = render_template(entry.text, entry.fields, rng)
            for how, text in wrappings(message, entry.exception, entry.catch_as).items():
                result = match(text, [matcher])
                assert entry.id in {m.entry.id for m in top(result)}, (how, text)


def test_cli_match_exit_codes_and_json(dataset, cli, ids):
    result = cli("match", "--data", dataset, "--json", f"ValueError: {KV_MESSAGE}")
    assert result.exit_code == 0
    data = json.loads(result.stdout)
    assert data["matches"][0]["id"] == ids[cd.KV["text"]]
    assert data["matches"][0]["fields"] == [{"expr": "kind", "value": "full"}, {"expr": "', '.join(sorted(valid_kinds))", "value": "decoder, encoder_only"}]
    stdin = cli("match", "--data", dataset.parent.parent, input=PYDANTIC)
    assert stdin.exit_code == 0 and ids[cd.KV["text"]] in stdin.stdout and "{kind} = full" in stdin.stdout
    miss = cli("match", "--data", dataset, "Unknown KV cash grop kind")
    assert miss.exit_code == 1 and "weak candidates (not a match)" in miss.stdout and ids[cd.KV["text"]] in miss.stdout
    assert cli("match", "--data", dataset / "nowhere", "x").exit_code == 2


def test_a_dataset_without_search_json_still_matches(dataset, tmp_path, ids):
    import shutil

    copy = tmp_path / "old"
    shutil.copytree(dataset, copy)
    (copy / "search.json").unlink()
    result = match(KV_MESSAGE, [Matcher.load(copy)])
    assert result.matches[0].entry.id == ids[cd.KV["text"]]


def test_template_segments_agree_with_the_pattern_they_build():
    """search.json's fragments come from the template; they must be what the pattern matches."""
    from crawler.extract.segments import template_segments
    from crawler.extract.templates import Field, make_template

    cases = [
        ["plain text"],
        ["Unknown kind '", Field("kind", "kind"), "' in x. Valid: ", Field("', '.join(v)", None), "."],
        [Field("a", "a"), " and ", Field("b!r", "b")],
        ["braces {x} literal ", Field("d['k']", None), " (100%)"],
        [Field("msg", "msg")],
        ["trailing ", Field("x", "x"), Field("y", "y")],
    ]
    for parts in cases:
        template = make_template(parts, "test")
        assert template_segments(template) == segments(template["pattern"]), parts


def test_search_rows_built_as_dicts_have_exactly_the_models_shape():
    from consumer_data import records

    from crawler.catalogue.search import entry_row
    from crawler.model.search import SearchEntry

    for record in records():
        row = entry_row(record)
        assert SearchEntry.model_validate(row).model_dump(mode="json") == row


def test_search_rows_from_derived_site_facts_equal_rows_from_the_record():
    """The crawl builds rows from facts derived in the workers; they must be the same rows."""
    from crawler.catalogue.search import entry_row
    from crawler.extract.derive import derive_result

    for record in cd.records():
        primary = derive_result({"sites": [dict(record["sites"][0])]})["sites"][0]
        assert entry_row(record, primary) == entry_row(record)


# --------------------------------------------------------------------------- hostile templates and inputs

_LITERAL = st.text(alphabet="ab {}", min_size=1, max_size=3)


def _search_entry(parts) -> SearchEntry:
    """The search row the crawl would write for a template built from ``parts``."""
    from crawler.extract.segments import fragments, template_segments
    from crawler.extract.templates import make_template
    from crawler.model.search import SearchSite

    tpl = make_template(parts, "fstring")
    segs = template_segments(tpl)
    return SearchEntry(
        id="0" * 16,
        title="t",
        exception="ValueError",
        kind="raise",
        text=tpl["text"],
        fields=[f["expr"] for f in tpl["fields"]],
        pattern=tpl["pattern"],
        fragments=fragments(segs),
        starts_literal=bool(segs) and segs[0][0] == "lit",
        ends_literal=bool(segs) and segs[-1][0] == "lit",
        explanation_status="absent",
        sites=[SearchSite(path="a.py", line=1, qualname="f")],
    )


@st.composite
def templates_and_messages(draw):
    from crawler.extract.templates import Field

    parts = []
    for i in range(draw(st.integers(1, 6))):
        parts.append(Field(f"x{i}", f"x{i}") if draw(st.booleans()) else draw(_LITERAL))
    entry = _search_entry(parts)
    if draw(st.booleans()):  # a message of the template, values from the same alphabet
        message = "".join(p if isinstance(p, str) else draw(st.text(alphabet="ab {}", max_size=3)) for p in parts)
    else:
        message = draw(st.text(alphabet="ab {}", max_size=10))
    return entry, message


@pytest.mark.slow
@settings(max_examples=400, deadline=None)
@given(templates_and_messages())
def test_fragment_matching_is_what_the_pattern_matches_and_captures(case):
    """Leftmost placement of the literal fragments accepts exactly the messages the entry's regex
    accepts, and its gaps are the values the regex's lazy groups capture."""
    from crawler.consume.match import Prepared, fragment_gaps

    entry, message = case
    expected = re.fullmatch(entry.pattern, message, re.DOTALL)
    gaps = fragment_gaps(entry.fragments, entry.starts_literal, entry.ends_literal, message)
    if not entry.fragments and not entry.fields:  # no message at all: the pattern is ^$
        assert (expected is not None) == (message == "")
        return
    assert (gaps is not None) == (expected is not None), (entry.text, message)
    if gaps is not None:
        assert Prepared(entry).values(message, gaps) == expected.groupdict()


@pytest.mark.slow
def test_twelve_adjacent_fields_match_a_hostile_message_at_once(dataset):
    """A pattern of twelve lazy groups apart by spaces backtracks for minutes on a near miss; the
    CLI answers (a real process, with a timeout as the hang guard)."""

    def run(message: str) -> subprocess.CompletedProcess:
        return subprocess.run(
            [sys.executable, "-m", "crawler", "match", "--json", "--data", str(dataset), message], capture_output=True, text=True, timeout=120
        )

    miss = run("ValueError: Bad " + " " * 40 + " end x")
    assert miss.returncode == 1 and json.loads(miss.stdout)["matches"] == []
    hit = run("ValueError: Bad " + " " * 40 + " end")
    assert hit.returncode == 0
    best = json.loads(hit.stdout)["matches"][0]
    assert best["template"] == cd.ADJACENT["text"]
    # as the regex captures them: eleven empty fields, the last takes what the spaces leave
    assert [f["value"] for f in best["fields"]] == [""] * 11 + [" " * 29]


_BIG_BODY = '{"a":' * 50_000 + ' {"error": {"message": "the server said no"}}'


@pytest.mark.parametrize(
    "name, text, expected",
    [
        ("unclosed JSON, then a body", _BIG_BODY, {"source": "json", "message": "the server said no", "exception": None}),
        ("escaped quotes outside strings", '{\\"' * 80_000 + ' {"message": "m"}', {"source": "json", "message": "m", "exception": None}),
        (
            "a traceback of blank lines",
            "Traceback (most recent call last):" + "\n" * 250_000 + "ValueError: boom",
            {"source": "traceback", "message": "boom", "exception": "ValueError", "frame": None},
        ),
        ("a log tail", "log starts\nValueError: boom\n" + "x\n" * 120_000, {"source": "plain", "exception": "ValueError", "message": "boom" + "\nx" * 120_000}),
        ("pydantic headers with no type", "Value error, \n" * 18_000, None),
    ],
)
def test_reading_hostile_input_is_linear(name, text, expected):
    """Each of these took from a minute to hours when a search restarted at every line or brace;
    now well under a second (the timeout only guards against a hang)."""
    code = (
        "import json, sys\nfrom crawler.consume.match import read_query\n"
        "rs = read_query(sys.stdin.read())\n"
        "print(json.dumps([dict(source=r.source, message=r.message, exception=r.exception,"
        " frame=r.frame and [r.frame.path, r.frame.line, r.frame.function]) for r in rs]))"
    )
    done = subprocess.run([sys.executable, "-c", code], input=text, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    readings = json.loads(done.stdout)
    if expected is None:  # the whole text and its last line, plain: no pydantic error in it
        assert [r["source"] for r in readings] == ["plain", "plain"]
    else:
        assert any(expected.items() <= r.items() for r in readings), readings[:3]


def _brace_end_by_rescanning(text: str) -> int | None:
    """The matching ``}`` of the ``{`` at text[0], scanned on its own (the quadratic definition)."""
    depth, quote, escape = 0, "", False
    for i, ch in enumerate(text):
        if quote:
            if escape:
                escape = False
            elif ch == "\\":
                escape = True
            elif ch == quote:
                quote = ""
        elif ch in "\"'":
            quote = ch
        elif ch == "{":
            depth += 1
        elif ch == "}":
            depth -= 1
            if depth == 0:
                return i
    return None


@settings(max_examples=300, deadline=None)
@given(st.text(alphabet="{}\"'\\x", max_size=40))
def test_brace_ends_found_in_one_pass_equal_a_scan_from_every_brace(text):
    from crawler.consume.match import _BRACE_SYNTAX, _brace_ends

    marks = [(m.start(), m.group()) for m in _BRACE_SYNTAX.finditer(text)]
    ends = _brace_ends(marks)
    for k, (pos, ch) in enumerate(marks):
        if ch == "{":
            end = ends[k]
            assert (None if end is None else marks[end][0]) == (lambda e: None if e is None else pos + e)(_brace_end_by_rescanning(text[pos:]))


@pytest.mark.slow
def test_input_beyond_the_limit_is_read_from_its_end(dataset):
    from crawler.consume.match import MAX_INPUT

    text = "noise\n" * (MAX_INPUT // 5) + f"ValueError: {KV_MESSAGE}\n"
    done = subprocess.run([sys.executable, "-m", "crawler", "match", "--data", str(dataset)], input=text, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0 and "{kind} = full" in done.stdout
    assert "longer than 256 KiB: matching its last 256 KiB" in done.stderr
    assert [r.message for r in read_query("x" * 10 + "y" * MAX_INPUT)] == ["y" * MAX_INPUT]


@pytest.mark.slow
def test_a_message_cut_inside_a_long_literal_costs_little():
    """Where a truncated message ends inside a literal, each length of the literal's beginning was
    copied and compared: quadratic in a long literal (a hostile upstream's 250,000 characters).
    Only the first MAX_OVERLAP characters of a literal are looked for at the message's end."""
    code = r"""
import json
from crawler.consume.match import MAX_OVERLAP, Matcher, match
from crawler.model.search import SearchEntry, SearchIndex, SearchSite

N = 250_000
literal = " alpha " + "\U0001f600" * N + " omega"
entries = [SearchEntry(id=f"{i:016x}", title="t", exception="ValueError", kind="raise", text="{x}" + literal, fields=["x"],
                       pattern="", fragments=[literal], starts_literal=False, ends_literal=True, anchors=["alpha", "omega"],
                       explanation_status="absent", sites=[SearchSite(path="a.py", line=1, qualname="f")]) for i in range(25)]
matcher = Matcher(SearchIndex(repo="a/b", commit="0" * 40, entries=entries))
out = {}
for name, message in (("long", "q alpha " + "\U0001f600" * N + "X"), ("short", "q alpha " + "\U0001f600" * (MAX_OVERLAP - 8))):
    out[name] = [[m.how, m.covered] for m in match(message, [matcher]).matches]
print(json.dumps(out))
"""
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    out = json.loads(done.stdout)
    assert out["long"] == []
    assert out["short"] == [["prefix", 1023]] * 25  # " alpha " and the emoji: the whole message but "q"


@pytest.mark.slow
def test_a_piped_match_says_nothing_on_stderr_but_what_matters(dataset, tmp_path):
    """A pipe consumer reads stderr for what went wrong: a plain match writes nothing there (it
    wrote an undocumented timing line, "opened N entries in X ms, matched in Y ms", every run)."""
    for _ in range(2):  # the match store built, then read
        done = subprocess.run(
            [sys.executable, "-m", "crawler", "match", "--data", str(dataset), "--cache-dir", str(tmp_path)],
            input=f"ValueError: {KV_MESSAGE}\n",
            capture_output=True,
            text=True,
            timeout=120,
        )
        assert done.returncode == 0 and "{kind} = full" in done.stdout
        assert done.stderr == ""
