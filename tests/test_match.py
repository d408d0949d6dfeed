"""errcat match and the search index, on a small hostile fixture dataset."""

from __future__ import annotations

import json
import random
import sys
from pathlib import Path

import pytest

import consumer_data as cd
from crawler.match import Matcher, match, read_query
from crawler.search import SearchIndex, anchor_tokens
from crawler.validate import check

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "bench"))
from match_real import render_template, wrappings  # noqa: E402

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
    for line in (dataset / "errors.jsonl").read_bytes().splitlines():
        r = json.loads(line)
        out.setdefault(r["message"]["text"], r["id"])
        out[(r["message"]["text"], r["exception"]["name"])] = r["id"]
    return out


def top(result):
    return [m for m in result.matches if m.key == result.matches[0].key]


try:  # Python 3.11+
    from re import _constants as _sre_c, _parser as _sre_p  # type: ignore[attr-defined]
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


@pytest.mark.parametrize("text, source, exception", [
    (KV_MESSAGE, "plain", None),
    (f"ValueError: {KV_MESSAGE}", "plain", "ValueError"),
    (PYDANTIC, "pydantic", "ValueError"),
    (json.dumps({"error": {"message": KV_MESSAGE, "type": "BadRequestError", "param": None, "code": 400}}), "json", None),
    (json.dumps({"object": "error", "message": KV_MESSAGE, "type": "BadRequestError", "code": 400}), "json", None),
    ("openai.BadRequestError: Error code: 400 - " + repr({"error": {"message": KV_MESSAGE, "type": "BadRequestError"}}), "json", None),
])
def test_the_kv_cache_error_is_found_however_it_is_pasted(matcher, ids, text, source, exception):
    result = match(text, [matcher])
    best = result.matches[0]
    assert best.entry.id == ids[cd.KV["text"]] and not best.tied
    assert best.reading.source == source and best.reading.exception == exception
    assert best.values == {"f0": "full", "f1": "decoder, encoder_only"}


def test_the_issues_elided_example_matches(matcher, ids):
    result = match("ValueError: Unknown KV cache group kind 'full' in backend_per_kind. Valid kinds are: ...", [matcher])
    assert result.matches[0].entry.id == ids[cd.KV["text"]]


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
    assert [m.entry.id for m in result.matches] == [ids[("", "NotImplementedError")]]
    assert result.matches[0].site_match == 2


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
    assert miss.exit_code == 1 and "nearest entries" in miss.stdout and ids[cd.KV["text"]] in miss.stdout
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
    from crawler.search import template_segments
    from crawler.templates import Field, make_template

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
    from crawler.search import SearchEntry, entry_row
    from consumer_data import records

    for record in records():
        row = entry_row(record)
        assert SearchEntry.model_validate(row).model_dump(mode="json") == row


def test_search_rows_from_derived_site_facts_equal_rows_from_the_record():
    """The crawl builds rows from facts derived in the workers; they must be the same rows."""
    from crawler.derive import derive_result
    from crawler.search import entry_row

    for record in cd.records():
        primary = derive_result({"sites": [dict(record["sites"][0])]})["sites"][0]
        assert entry_row(record, primary) == entry_row(record)
