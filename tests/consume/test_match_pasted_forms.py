"""errcat match on forms users paste, against a crawl of a fixture repository: a pydantic error's
last line alone ("Value error, ..." / "Assertion failed, ..." without the "N validation error for
X" header or the "[type=...]" marker), and an older wording that put a full stop where today's
message goes on."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

CONFIG = """
def check_count(count):
    if count <= 0:
        raise ValueError("Widget count must be positive for every pool of this engine.")


def check_pool(workers):
    assert workers > 0, "Widget pool must hold at least one worker before it starts."


def check_cache(free):
    if free <= 0:
        raise ValueError(
            "No room left for the widget cache. Try increasing `--pool-size` when starting "
            "the engine (this flag also sets how much the cache may spill to disk)."
        )


def check_name(name):
    raise ValueError(f"Widget failed to start with the name {name} given.")
"""


@pytest.fixture(scope="module")
def dataset(crawl_once) -> Path:
    out = crawl_once({"pkg/__init__.py": "", "pkg/config.py": CONFIG}, "--name", "acme/widgets", "--include", "pkg/**/*.py")
    return out / "acme" / "widgets"


def _id(dataset: Path, start: str) -> str:
    (entry,) = [e["id"] for e in json.loads((dataset / "search.json").read_text())["entries"] if e["text"].startswith(start)]
    return entry


def _answer(cli, dataset: Path, paste: str) -> dict:
    return json.loads(cli("match", "--json", "--data", dataset, paste).stdout)


@pytest.mark.slow
@pytest.mark.parametrize(
    ("paste", "start", "exception"),
    [
        ("Value error, Widget count must be positive for every pool of this engine.", "Widget count", "ValueError"),
        ("  Assertion failed, Widget pool must hold at least one worker before it starts.", "Widget pool", "AssertionError"),
        (
            "(APIServer pid=7) pydantic_core._pydantic_core.ValidationError: 1 validation error for EngineConfig\n"
            "(APIServer pid=7)   Value error, Widget count must be positive for every pool of this engine.\n"
            "(APIServer pid=7)     For further information visit https://errors.pydantic.dev/2.12/v/value_error",
            "Widget count",
            "ValueError",
        ),
    ],
    ids=["value-error-line", "assertion-line", "header-without-type-marker"],
)
def test_a_pydantic_line_without_its_type_marker_is_read(dataset, cli, paste, start, exception):
    """Matched only as a weak candidate before: the "Value error, " stayed part of the message."""
    out = _answer(cli, dataset, paste)
    assert [m["id"] for m in out["matches"]] == [_id(dataset, start)], out
    assert out["matches"][0]["exception_match"] == "same" and out["matches"][0]["reading"]["exception"] == exception


def test_an_older_wording_that_stopped_where_the_message_goes_on_is_a_match(dataset, cli):
    """It was a 90-odd percent weak candidate: the full stop kept it from being the beginning."""
    paste = "ValueError: No room left for the widget cache. Try increasing `--pool-size` when starting the engine."
    out = _answer(cli, dataset, paste)
    assert [(m["id"], m["match"], m["strength"]) for m in out["matches"]] == [(_id(dataset, "No room"), "prefix", "match")], out
    text = cli("match", "--data", dataset, paste).stdout
    assert text.splitlines()[1] == "no full match; entries this message is the beginning of:"


@pytest.mark.parametrize(
    "paste",
    [
        "ValueError: No room left for the widget cache. Try increasing `--pool-size` when starting the eng.",  # mid-word
        "ValueError: Widget failed.",  # too short to tell where an older wording stopped
        "ValueError: Widget failed to start with the name.",  # the full stop where a field's value stands
    ],
)
def test_a_full_stop_elsewhere_is_no_claim(dataset, cli, paste):
    assert _answer(cli, dataset, paste)["matches"] == []


@pytest.mark.parametrize(
    ("paste", "how"),
    [
        # the backticks a tracker's Markdown took for code and dropped (basalam/product-catalog-generator#10)
        (
            "ValueError: No room left for the widget cache. Try increasing --pool-size when starting the engine "
            "(this flag also sets how much the cache may spill to disk).",
            "full",
        ),
        ("No room left for the widget cache. Try increasing --pool-size when starting the engine.", "prefix"),  # an older wording's full stop too
        ("ValueError: No room left for the widget cache. Try increasing --pool-size when", "prefix"),  # and cut (deepseek-ai/DeepSeek-V2#83)
    ],
    ids=["whole", "stopped", "cut"],
)
def test_a_paste_that_lost_its_backticks_is_a_match(dataset, cli, paste, how):
    out = _answer(cli, dataset, paste)
    assert [(m["id"], m["match"], m["strength"]) for m in out["matches"]] == [(_id(dataset, "No room"), how, "match")], out


@pytest.mark.parametrize(
    "paste",
    [
        "ValueError: No room left for the widget cache. Try increasing -pool-size when starting the engine.",  # not a lost backtick: another word
        "ValueError: No room left for the widget cache. Try increasing `--pool-size when starting the engine.",  # one backtick kept: read as pasted
    ],
)
def test_backticks_are_read_as_lost_only_when_the_paste_has_none(dataset, cli, paste):
    assert [m["strength"] for m in _answer(cli, dataset, paste)["matches"]] != ["match"]


@pytest.mark.parametrize(
    "tail",
    [
        " /root/miniforge3/envs/vllm/lib/python3.10/multiprocessing/resource_tracker.py:224: UserWarning: resource_tracke",
        " /usr/lib/python3.12/warnings.py:110: DeprecationWarning: the pool is old",
    ],
)
def test_a_warning_run_on_after_the_message_is_read_off(dataset, cli, tail):
    """An issue title whose newlines were lost (vllm-project/vllm#20465): the warning after the message is no part of it."""
    paste = "[Bug]: ValueError: Widget count must be positive for every pool of this engine." + tail
    out = _answer(cli, dataset, paste)
    assert [(m["id"], m["match"], m["strength"]) for m in out["matches"]] == [(_id(dataset, "Widget count"), "full", "match")], out
    # only a warning's own head (file.py:line: SomethingWarning:) is read off: text after the message stays part of it
    other = "ValueError: Widget count must be positive for every pool of this engine. see config.py:12: UserNotice: x"
    assert _answer(cli, dataset, other)["matches"] == []


# Issue #31, part 4: the forms people paste that still missed. A package named vllm, so that a
# traceback's ".../site-packages/vllm/config/model.py" is the crawl's "vllm/config/model.py".
MODEL = """
class ModelConfig:
    def __post_init__(self):
        if self.runner not in ("generate", "pooling"):
            raise ValueError(f"{self.runner}: {self.reason}")
        if self.max_len <= 0:
            raise ValueError("Widget max_len must be positive; the engine's - and the pool's - limit is 1.")

    def verify(self, kind):
        if kind not in ("decoder", "encoder"):
            raise ValueError("Unknown KV cache group kind", kind)

    def check(self, workers):
        if workers is None:
            raise AssertionError
        if workers > 64:
            raise NotImplementedError
        assert workers > 0

    def helper(self):
        return self.runner
"""
FIELDS_LINE, MAX_LEN_LINE, KIND_LINE, BARE_LINE, ASSERT_LINE, HELPER_LINE = 4, 6, 10, 14, 17, 20  # the file's lines


@pytest.fixture(scope="module")
def vdataset(crawl_once) -> Path:
    out = crawl_once(
        {"vllm/__init__.py": "", "vllm/config/__init__.py": "", "vllm/config/model.py": MODEL}, "--name", "vllm-project/vllm", "--include", "vllm/**/*.py"
    )
    return out / "vllm-project" / "vllm"


def _entry_at(dataset: Path, line: int) -> str:
    (entry,) = [e["id"] for e in json.loads((dataset / "search.json").read_text())["entries"] if any(s["line"] == line for s in e["sites"])]
    return entry


def _matched(cli, dataset: Path, paste: str) -> list[tuple[str, str]]:
    return [(m["id"], m["strength"]) for m in _answer(cli, dataset, paste)["matches"]]


def _frame(line: int, function: str, code: str, path: str = "/usr/lib/python3.12/site-packages/vllm/config/model.py") -> str:
    return f'  File "{path}", line {line}, in {function}\n    {code}\n'


FIELDS_TB = (
    "Traceback (most recent call last):\n"
    + _frame(99, "<module>", "main()", "/app/serve.py")
    + _frame(FIELDS_LINE, "__post_init__", 'raise ValueError(f"{self.runner}: {self.reason}")')
    + "ValueError: transcription: the model 'openai/whisper-large-v3' supports only the transcription task\n"
)


@pytest.mark.slow
@pytest.mark.parametrize(
    "paste",
    [
        FIELDS_TB,
        FIELDS_TB.replace(f"line {FIELDS_LINE},", f"line {FIELDS_LINE - 2},"),  # a release a few lines apart
        FIELDS_TB.replace(f"line {FIELDS_LINE},", "line 140,"),  # moved further: the same function still
        FIELDS_TB.replace("/usr/lib/python3.12/site-packages/", "/home/me/src/"),  # a checkout: /vllm/... too
        "\n".join("(APIServer pid=7) ERROR 12-01 10:00:01 [api_server.py:9] " + line for line in FIELDS_TB.splitlines()),
        FIELDS_TB.removeprefix("Traceback (most recent call last):\n"),  # cut before its header
    ],
    ids=["same-line", "near-line", "same-function", "checkout-path", "logged", "no-header"],
)
def test_a_mostly_fields_message_is_matched_by_its_last_frame(vdataset, cli, paste):
    """The message alone ("{runner}: {reason}") is a weak fit; the frame that raised it makes it a match."""
    assert _matched(cli, vdataset, paste) == [(_entry_at(vdataset, FIELDS_LINE), "match")]
    # the message alone stays weak
    alone = _answer(cli, vdataset, paste.rstrip().rsplit("\n", 1)[1].split("] ")[-1])
    assert alone["matches"] == [] and _entry_at(vdataset, FIELDS_LINE) in [w["id"] for w in alone["weak"]]


@pytest.mark.parametrize(
    "paste",
    [
        # a frame in vllm's file, at a line with no entry, in a function that raises nothing
        "Traceback (most recent call last):\n"
        + _frame(HELPER_LINE, "helper", "return self.runner")
        + "ValueError: transcription: the model supports only the transcription task\n",
        # torch raised it: its last frame is torch's, not the entry's
        "Traceback (most recent call last):\n"
        + _frame(FIELDS_LINE, "__post_init__", "self.check()")
        + _frame(FIELDS_LINE, "__post_init__", "raise ValueError(msg)", "/usr/lib/python3.12/site-packages/torch/nn/modules/module.py")
        + "ValueError: transcription: the model supports only the transcription task\n",
        # the frame says another exception was raised there
        FIELDS_TB.replace("ValueError: transcription", "TypeError: transcription"),
        # a foreign error whose last frame is torch's stays foreign
        "Traceback (most recent call last):\n"
        + _frame(FIELDS_LINE, "__post_init__", "torch.cuda.synchronize()")
        + _frame(985, "synchronize", "return torch._C._cuda_synchronize()", "/usr/lib/python3.12/site-packages/torch/cuda/__init__.py")
        + "RuntimeError: CUDA error: an illegal memory access was encountered\n",
    ],
    ids=["line-without-entry", "torch-frame", "other-exception", "foreign-cuda"],
)
def test_a_last_frame_elsewhere_claims_nothing(vdataset, cli, paste):
    assert _matched(cli, vdataset, paste) == []


BARE_TB = "Traceback (most recent call last):\n" + _frame(BARE_LINE, "check", "raise AssertionError") + "AssertionError\n"


@pytest.mark.parametrize("paste", [BARE_TB, BARE_TB.removeprefix("Traceback (most recent call last):\n")], ids=["traceback", "cut-before-its-header"])
def test_a_bare_raise_is_found_at_its_frames_line_alone(vdataset, cli, paste):
    """``raise AssertionError`` (no message): the frame's line finds it, and only it: the function's
    other bare raise (NotImplementedError) is no match for an AssertionError."""
    assert _matched(cli, vdataset, paste) == [(_entry_at(vdataset, BARE_LINE), "match")]


def test_a_bare_assert_is_found_by_the_condition_its_frame_shows(vdataset, cli):
    """A message-less ``assert`` is an entry keyed by its condition: its traceback finds it, and the
    bare raise beside it in the function (also AssertionError, no message) is no match for it."""
    lines = {s["line"] for e in json.loads((vdataset / "search.json").read_text())["entries"] for s in e["sites"]}
    assert {ASSERT_LINE, BARE_LINE} <= lines
    moved = "Traceback (most recent call last):\n" + _frame(ASSERT_LINE + 30, "check", "assert workers > 0") + "AssertionError\n"
    assert _matched(cli, vdataset, moved) == [(_entry_at(vdataset, ASSERT_LINE), "match")]


@pytest.mark.parametrize(
    "paste",
    [
        "ValueError: ('Unknown KV cache group kind', 'full')",
        'ValueError: ("Unknown KV cache group kind", 3)',
        "Traceback (most recent call last):\n"
        + _frame(KIND_LINE, "verify", 'raise ValueError("Unknown KV cache group kind", kind)')
        + "ValueError: ('Unknown KV cache group kind', {'a': [1, (2, 3)]})\n",
    ],
    ids=["two-strings", "a-number", "in-a-traceback"],
)
def test_a_message_of_several_arguments_printed_as_a_tuple_is_read(vdataset, cli, paste):
    assert _matched(cli, vdataset, paste) == [(_entry_at(vdataset, KIND_LINE), "match")]


@pytest.mark.parametrize(
    "paste",
    [
        "ValueError: ('Unknown KV cache group kind' + 'x', 3)",  # not a repr: no claim from a part of it
        "ValueError: ('Unknown KV cache group kind full', 3)",
    ],
)
def test_a_tuple_that_is_not_the_entrys_claims_nothing(vdataset, cli, paste):
    assert _matched(cli, vdataset, paste) == []


MESSAGE = "Widget max_len must be positive; the engine's - and the pool's - limit is 1."


@pytest.mark.parametrize(
    "prefix",
    [
        "(APIServer pid=123) ERROR 12-01 10:00:01 [serving.py:200] ",
        "[rank0]: ",
        "(EngineCore_DP0 pid=42) ",
        "(VllmWorker rank=0 pid=123) ERROR 05-01 12:00:00 [core.py:123] ",
        "(VllmWorker TP0 pid=123) ",
        "ray::RayWorkerWrapper.execute_method() (pid=1234, ip=10.0.0.1, actor_id=9f3b2c7d1e0a) ",
        "(pid=1234, ip=10.0.0.1) ",
        "INFO:     127.0.0.1:5000 - ",
        "2024-05-01T10:00:00.123Z ",
        "2024-05-01T10:00:00+02:00 ",
        "worker-3 | ",
        "worker-3 | 2024-05-01T10:00:00.123Z (EngineCore_DP0 pid=42) ",
    ],
)
def test_a_products_prefix_before_the_message_is_stripped(vdataset, cli, prefix):
    """The bare message after the prefix (no exception name to find it by): the prefix must go."""
    assert _matched(cli, vdataset, prefix + MESSAGE) == [(_entry_at(vdataset, MAX_LEN_LINE), "match")]


@pytest.mark.parametrize(
    "paste",
    [
        f"**ValueError: {MESSAGE}**",
        f"**{MESSAGE}**",
        f"`{MESSAGE}`",
        f"### {MESSAGE}",
        f"```\n{MESSAGE}\n```",
        "```python\n" + BARE_TB + "```",
        "> " + "\n> ".join(FIELDS_TB.rstrip().splitlines()),
        "> " + "\n> ".join(BARE_TB.rstrip().splitlines()),
        f"> > {MESSAGE}",
    ],
)
def test_markdown_around_a_paste_is_read_off(vdataset, cli, paste):
    want = FIELDS_LINE if "runner" in paste else BARE_LINE if "AssertionError" in paste else MAX_LEN_LINE
    assert _matched(cli, vdataset, paste) == [(_entry_at(vdataset, want), "match")]


@pytest.mark.parametrize(
    "paste",
    [
        f"`ValueError`: {MESSAGE}",  # an issue title (https://github.com/vllm-project/vllm/issues/1282)
        f"**ValueError**: {MESSAGE}",
        f"[Bug]: `ValueError`: {MESSAGE}",
    ],
)
def test_an_exception_name_marked_alone_is_read_off(vdataset, cli, paste):
    assert _matched(cli, vdataset, paste) == [(_entry_at(vdataset, MAX_LEN_LINE), "match")]


@pytest.mark.parametrize(
    "paste",
    [
        # a server's startup line above the message pasted alone
        # (https://github.com/vllm-project/vllm/issues/4202, .../19050)
        f"INFO 04-19 17:25:10 api_server.py:149] vLLM API server version 0.4.0.post1\n{MESSAGE}",
        f"some words the reporter wrote first\n\n{MESSAGE}",
    ],
)
def test_a_message_alone_under_other_lines_is_read_by_itself(vdataset, cli, paste):
    assert _matched(cli, vdataset, paste) == [(_entry_at(vdataset, MAX_LEN_LINE), "match")]


@pytest.mark.parametrize(
    "paste",
    [
        # a V0 multiprocessing worker's log line, its traceback's header after the message
        # (https://github.com/vllm-project/vllm/issues/8933)
        "(VllmWorkerProcess pid=7) ERROR 01-12 08:36:38 multiproc_worker_utils.py:233] Exception in worker VllmWorkerProcess "
        f"while processing method initialize_cache: {MESSAGE}, Traceback (most recent call last):",
        f"Exception in worker VllmWorkerProcess while processing method load_model: {MESSAGE}",
    ],
)
def test_a_workers_wrapped_message_is_read_without_what_follows_it(vdataset, cli, paste):
    assert _matched(cli, vdataset, paste)[0] == (_entry_at(vdataset, MAX_LEN_LINE), "match")


@pytest.mark.parametrize(
    "paste",
    [
        # pydantic v1, as LangChain's VLLM wrapper printed vLLM's error
        # (https://github.com/vllm-project/vllm/issues/1711)
        f"ValidationError: 1 validation error for VLLM\n__root__\n  {MESSAGE} (type=value_error)",
        f"pydantic.error_wrappers.ValidationError: 1 validation error for VLLM\n__root__\n  {MESSAGE} (type=value_error; a=1)",
    ],
)
def test_a_pydantic_v1_listing_is_read_for_its_message(vdataset, cli, paste):
    assert _matched(cli, vdataset, paste) == [(_entry_at(vdataset, MAX_LEN_LINE), "match")]


def test_a_pydantic_v1_listing_of_another_error_claims_nothing(vdataset, cli):
    paste = "ValidationError: 1 validation error for VLLM\n__root__\n  Widget pool size must be even (type=value_error)"
    assert _matched(cli, vdataset, paste) == []


@pytest.mark.parametrize(
    "paste",
    [
        "valueerror: widget max_len must be positive; the engine's - and the pool's - limit is 1.",
        "VALUEERROR: WIDGET MAX_LEN MUST BE POSITIVE; THE ENGINE'S - AND THE POOL'S - LIMIT IS 1",
        "valueerror: unknown kv cache group kind",  # an issue's title: the whole message, another case
    ],
)
def test_another_letter_case_is_a_match(vdataset, cli, paste):
    want = KIND_LINE if "kind" in paste else MAX_LEN_LINE
    assert _matched(cli, vdataset, paste) == [(_entry_at(vdataset, want), "match")]


def test_another_letter_case_claims_no_other_message(vdataset, cli):
    assert _matched(cli, vdataset, "valueerror: unknown kv cache group kind full") == []
    assert _matched(cli, vdataset, "runtimeerror: cuda error: an illegal memory access was encountered") == []


@pytest.mark.parametrize(
    "paste",
    [
        "ValueError: Widget max_len must be positive; the engine\u2019s \u2013 and the pool\u2019s \u2013 limit is 1.",
        "ValueError: Widget max_len must be positive; the engine\u2032s \u2014 and the pool\u2018s \u2014 limit is 1\u2026",
        "ValueError:\u00a0Widget max_len must be\u00a0positive; the en\u200bgine\u2019s \u2013 and the pool's \u2013 limit is 1.",
        "ValueError: (\u2018Unknown KV cache group kind\u2019, \u2018full\u2019)",
    ],
)
def test_typographic_quotes_and_dashes_are_read_as_ascii(vdataset, cli, paste):
    want = KIND_LINE if "kind" in paste else MAX_LEN_LINE
    out = _matched(cli, vdataset, paste)
    assert out and out[0] == (_entry_at(vdataset, want), "match"), out


@pytest.mark.slow
@pytest.mark.parametrize(
    "paste",
    [
        "ValueError: ('" + "\\x" * 60000 + "', 3)",  # a tuple's first element, escapes that are no repr's
        "ValueError: (" * 20000 + ")" * 20000,
        "`" * 200000,
        ("> " * 16 + "**```" + "`" * 64 + "\n") * 4000,
        "### " * 60000,
        'Traceback (most recent call last):\n  File "x.py", line ' + "9" * 5000 + ", in f\n    raise X\nValueError: x",  # more digits than int() takes
        '  File "/site-packages/vllm/config/model.py", line 4, in __post_init__\n' + "AssertionError\n" * 20000,
        "ray::" + "a." * 60000 + "() (pid=1, " + "ip=" * 30000,
        "(pid=1, " * 30000,
        "(a=1 " * 50000,
        "INFO:     " + "1." * 60000 + ":80 - x",
        "2024-05-01T10:00:00" + ".1" * 60000,
        "valueerror: " + "widget max_len " * 15000,  # another letter case: the caseless fallback runs
        "\u2019\u2013\u200b\u00a0" * 60000,
        ("  " + "x " * 3000 + "(type=value_error" + "," * 300 + "\n") * 40,  # pydantic v1 lines that never close
        "`ValueError" * 25000,
        "Exception in worker w while processing method m: " + ", Traceback (most recent call last)" * 7000,
    ],
)
def test_hostile_pastes_are_read_in_linear_time(vdataset, paste):
    """Every form this part reads is bounded and tried once per line: a 256 KiB paste of each
    hostile shape is answered in well under the timeout (which only guards against a hang)."""
    import time

    from crawler.consume.match import Matcher, match

    matcher = Matcher.load(vdataset)
    start = time.monotonic()
    result = match(paste, [matcher])
    assert time.monotonic() - start < 30, len(paste)  # a hang guard (quadratic took minutes), not a speed check
    assert not any(m.entry.id == _entry_at(vdataset, FIELDS_LINE) for m in result.matches)
