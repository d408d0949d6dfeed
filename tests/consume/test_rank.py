"""Ranking candidates of near-equal wording by what the paste names (``match.agreement``).

vLLM's Rust frontend repeats the Python server's messages (its Python entry comes first), a message is often both logged and
raised, and a native check surfaces as a Python exception: wording alone cannot tell these apart,
the exception and the form of the paste can. Entries are built as the crawl writes them.
"""

from __future__ import annotations

from crawler.consume.match import Matcher, match
from crawler.extract.segments import anchor_tokens, fragments, template_segments
from crawler.extract.templates import Field, make_template
from crawler.model.search import SearchEntry, SearchIndex, SearchSite

LIMIT = ["At most ", Field("limit", "limit"), " ", Field("modality", "modality"), "(s) may be provided in one prompt."]
PY_LIMIT = [*LIMIT[:-1], "(s) may be provided in one prompt. Set `--limit-mm-per-prompt` to increase this limit."]


def entry(n: int, parts: list, exception: str, kind: str, path: str, catch_as: tuple[str, ...] = ()) -> SearchEntry:
    tpl = make_template(parts, "fstring")
    segs = template_segments(tpl)
    return SearchEntry(
        id=f"{n:016x}",
        title="t",
        exception=exception,
        catch_as=list(catch_as),
        kind=kind,
        text=tpl["text"],
        fields=[f["expr"] for f in tpl["fields"]],
        pattern=tpl["pattern"],
        fragments=fragments(segs),
        starts_literal=segs[0][0] == "lit",
        ends_literal=segs[-1][0] == "lit",
        anchors=anchor_tokens(segs),
        explanation_status="absent",
        sites=[SearchSite(path=path, line=1, qualname="f")],
    )


def first(text: str, entries: list[SearchEntry]) -> tuple[str, list[str]]:
    """The first weak answer's id, and the ids of the matches (which must stay empty)."""
    result = match(text, [Matcher(SearchIndex(repo="a/b", commit="0" * 40, entries=entries))])
    return result.weak[0].entry.id, [m.entry.id for m in result.matches]


RUST = entry(1, LIMIT, "Error", "native", "rust/src/chat/src/error.rs")
PYTHON = entry(2, PY_LIMIT, "ValueError", "raise", "vllm/multimodal/processing/context.py", ("Exception", "BaseException"))
OLD_WORDING = "At most 1 image(s) may be provided in one request."  # "request" since reworded "prompt": no match


def test_the_python_entry_comes_before_the_rust_frontends_repeat_worded_closer():
    """A paste that names no server (a bare message, a JSON body) worded like a Python entry and
    like the Rust frontend's repeat of it is the default server's: the Python entry first, though
    the repeat's shorter text is worded more like it; when both match, too."""
    matcher = Matcher(SearchIndex(repo="a/b", commit="0" * 40, entries=[RUST, PYTHON]))
    assert [n.entry.id for n in matcher.nearest(OLD_WORDING)] == [RUST.id, PYTHON.id]  # by wording alone
    assert first(OLD_WORDING, [RUST, PYTHON]) == (PYTHON.id, [])
    body = "openai.BadRequestError: Error code: 400 - {'object': 'error', 'message': '%s', 'type': 'BadRequestError'}"
    assert first(body % OLD_WORDING, [RUST, PYTHON]) == (PYTHON.id, [])
    twins = [entry(3, LIMIT, "Error", "native", "rust/src/chat/src/error.rs"), entry(4, LIMIT, "ValueError", "raise", "vllm/x.py")]
    result = match(body % "At most 1 image(s) may be provided in one prompt.", [Matcher(SearchIndex(repo="a/b", commit="0" * 40, entries=twins))])
    assert [m.entry.id for m in result.matches] == [twins[1].id, twins[0].id]


def test_a_python_traceback_prefers_the_python_entry_over_the_rust_frontends():
    paste = f'Traceback (most recent call last):\n  File "/srv/vllm/entrypoints/serve.py", line 9, in create\n    raise exc\nValueError: {OLD_WORDING}\n'
    assert first(paste, [RUST, PYTHON]) == (PYTHON.id, [])


def test_the_exception_a_paste_names_picks_the_native_check_surfacing_as_it():
    native = entry(
        3, ["Unsupported head sizes: ", Field("head_size", "head_size")], "RuntimeError", "native", "csrc/attention/kernels.cu", ("Exception", "BaseException")
    )
    python = entry(4, ["Unsupported head size: ", Field("head_size", "head_size")], "ValueError", "raise", "vllm/attention.py", ("Exception", "BaseException"))
    text = "Unsupported head-size: 80"  # neither's literal text: weak only
    assert first(text, [native, python])[0] == python.id  # wording alone (ties by id aside)
    assert first(f"RuntimeError: {text}", [native, python]) == (native.id, [])
    assert first(f"ValueError: {text}", [native, python]) == (python.id, [])


def test_a_bare_message_prefers_the_raise_to_the_log_line_of_its_first_sentence():
    sentence = [
        "The number of required ",
        Field("d", "device_str"),
        "s exceeds the total number of available ",
        Field("d", "device_str"),
        "s in the placement group.",
    ]
    log = entry(5, sentence, "WARNING", "log", "vllm/v1/executor/ray_utils.py")
    raised = entry(
        6,
        [*sentence, " Required number of devices: ", Field("n", "n"), "."],
        "ValueError",
        "raise",
        "vllm/v1/executor/ray_utils.py",
        ("Exception", "BaseException"),
    )
    text = "The number of required GPUs exceeds the total number of available GPUs in the placement group. For multi-node inference."
    assert first(text, [log, raised])[0] == raised.id
    # the level of a log line names the log entry
    assert first(f"WARNING 11-30 14:21:45 [ray_utils.py:364] {text}", [log, raised])[0] == log.id


def test_agreement_never_outweighs_a_much_closer_wording():
    other = entry(7, ["Something else entirely: ", Field("x", "x")], "ValueError", "raise", "vllm/x.py")
    assert first(f"ValueError: {OLD_WORDING}", [RUST, other]) == (RUST.id, [])


def test_the_python_entry_comes_first_when_its_message_is_set_per_branch():
    """vLLM's validate_num_items sets its message in two steps (``msg += " Set ..."`` under an
    ``if``): an assembled entry whose pieces are whole messages, the shorter one the Rust
    frontend's words exactly. Matched by that piece, it is still the message the check repeats."""
    from crawler.catalogue.search import alternative_rows

    tpl = make_template([Field("msg", "msg", (None, [PY_LIMIT, LIMIT]))], "variable")
    assert tpl["form"] == "assembled" and tpl["text"].endswith("to increase this limit.")  # shown as the longer
    segs = template_segments(tpl)
    assembled = SearchEntry(
        id=f"{5:016x}",
        title="t",
        exception="ValueError",
        kind="raise",
        text=tpl["text"],
        fields=[f["expr"] for f in tpl["fields"]],
        pattern=tpl["pattern"],
        fragments=fragments(segs),
        starts_literal=segs[0][0] == "lit",
        ends_literal=segs[-1][0] == "lit",
        anchors=anchor_tokens(segs),
        alternatives=alternative_rows(tpl["alternatives"], tpl),
        explanation_status="absent",
        sites=[SearchSite(path="vllm/multimodal/processing/context.py", line=1, qualname="f")],
    )
    assert first(OLD_WORDING, [RUST, assembled]) == (assembled.id, [])
