"""Pastes as people make them: log prefixes, wrappers, weak candidates, foreign errors, cut
messages (crawler/consume/paste.py, foreign_match.py, match.py)."""

from __future__ import annotations

import json
from pathlib import Path

import consumer_data as cd
import pytest
from helpers import jsonl_bytes

from crawler.consume.match import Matcher, match
from crawler.consume.paste import candidates, clean

KV_MESSAGE = "Unknown KV cache group kind 'full' in backend_per_kind. Valid kinds are: decoder, encoder_only."
FOREIGN = {
    "errors": [
        {
            "name": "torch-cuda-oom",
            "origin": "torch",
            "match": ["CUDA out of memory. Tried to allocate"],
            "example": "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 MiB.",
            "urls": ["https://github.com/vllm-project/vllm/issues/15598"],
            "explanation": "PyTorch's allocator ran out of GPU memory.",
            "check": ["lower --gpu-memory-utilization"],
        }
    ]
}


@pytest.fixture(scope="module")
def dataset(tmp_path_factory) -> Path:
    data = cd.write(tmp_path_factory.mktemp("data"))
    (data / "foreign.json").write_text(json.dumps(FOREIGN))
    return data


@pytest.fixture(scope="module")
def matcher(dataset) -> Matcher:
    return Matcher.load(dataset)


@pytest.fixture(scope="module")
def ids(dataset) -> dict[str, str]:
    return {json.loads(line)["message"]["text"]: json.loads(line)["id"] for line in jsonl_bytes(dataset).splitlines()}


LOGGED = (
    "(EngineCore_DP0 pid=2331) ERROR 11-30 10:01:02 [core.py:1021] Traceback (most recent call last):\n"
    '(EngineCore_DP0 pid=2331) ERROR 11-30 10:01:02 [core.py:1021]   File "/x/pkg/config/attention.py", line 17, in _check\n'
    "(EngineCore_DP0 pid=2331) ERROR 11-30 10:01:02 [core.py:1021]     raise ValueError(\n"
    f"(EngineCore_DP0 pid=2331) ERROR 11-30 10:01:02 [core.py:1021] ValueError: {KV_MESSAGE}\n"
)


@pytest.mark.parametrize(
    "text",
    [
        LOGGED,
        f"vllm-1  | ERROR 09-27 06:46:46 engine.py:157] ValueError: {KV_MESSAGE}",
        f"[rank0]: ValueError: {KV_MESSAGE}",
        f"May 20 14:20:23 host vllm[32308]: ERROR 05-20 14:20:23 [engine.py:160] ValueError('{KV_MESSAGE}')",
        f"ray.exceptions.RayTaskError(ValueError): {KV_MESSAGE}",
        f"vllm serve: error: argument --attention-config: {KV_MESSAGE}",
        f"vllm.exceptions.VLLMValidationError: {KV_MESSAGE} (parameter=kind, value=full)",
        f"│ ERROR 09-27 06:46:46 engine.py:157] ValueError: {KV_MESSAGE}   │",
        # indented before a known prefix, as pasted out of a table or a CI log: the prefix goes
        f"  vllm-1  | ERROR 09-27 06:46:46 engine.py:157] ValueError: {KV_MESSAGE}",
        f"  | [2025-03-10T15:07:20Z] ERROR 03-10 08:07:20 [core.py:302] ValueError: {KV_MESSAGE}",  # Buildkite
        f"2025-06-27 12:57:51,690 - __main__ - ERROR - ValueError: {KV_MESSAGE}",  # logging.basicConfig
        f"E       ValueError: {KV_MESSAGE}",  # pytest
        # a prefix no pattern knows: the first exception named in the line starts the message
        f"2025-01-01T00:00:00.1234567Z pod-7 stderr F ValueError: {KV_MESSAGE}",
        f"[worker-3] ray.exceptions.RayTaskError(ValueError): {KV_MESSAGE}",
    ],
)
def test_wrapped_messages_are_matched(matcher, ids, text):
    result = match(text, [matcher])
    assert result.matches and result.matches[0].entry.id == ids[cd.KV["text"]] and result.matches[0].strong


@pytest.mark.parametrize(
    "text",
    [
        # the server's error body carries str(exc), VLLMValidationError's suffix and all (its
        # create_error_response: message = str(exc)); so does a message pasted bare
        '{"error": {"message": "' + KV_MESSAGE + ' (parameter=kind, value=full)", "type": "BadRequestError", "param": "kind", "code": 400}}',
        f"{KV_MESSAGE} (parameter=kind, value=full)",
    ],
)
def test_a_validation_errors_suffix_is_read_off_a_server_body_and_a_bare_message(matcher, ids, text):
    top = match(text, [matcher]).matches[0]
    assert top.entry.id == ids[cd.KV["text"]] and top.how == "full" and top.reading.message == KV_MESSAGE


def test_an_unknown_prefix_gives_the_first_exception_named_and_indentation_stays_code():
    text = clean(
        "node-1 | stderr RuntimeError: Worker failed with error 'AssertionError: x', see above\n  File \"/x/pkg/a.py\", line 3, in f\n    raise KeyError(k)\n"
    )
    assert [(c.exception, c.message) for c in candidates(text)] == [("RuntimeError", "Worker failed with error 'AssertionError: x', see above")]
    assert text.split("\n")[2] == "    raise KeyError(k)"  # a traceback's code line is no prefix


def test_every_exception_line_is_a_candidate():
    text = clean(LOGGED + "\nThe above exception was the direct cause of the following exception:\n\nRuntimeError: Engine died\n")
    assert [(c.exception, c.message) for c in candidates(text)] == [("RuntimeError", "Engine died"), ("ValueError", KV_MESSAGE)]


def test_a_template_of_fields_is_only_weak(matcher, ids):
    """'Bad {a0} ... {a11} end' covers a sliver of any message it fits: never a match."""
    result = match("Bad " + " ".join(["some long value here"] * 12) + " end", [matcher])
    assert result.matches == []
    assert result.weak and result.weak[0].entry.id == ids[cd.ADJACENT["text"]] and not result.weak[0].strong


def test_foreign_error_is_not_claimed(dataset, cli):
    text = "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 MiB. Invalid value 3"
    run = cli("match", "--data", dataset, text)
    assert run.exit_code == 1
    assert "not raised by acme/widgets: raised by torch (torch-cuda-oom)" in run.stdout
    out = json.loads(cli("match", "--json", "--data", dataset, text).stdout)
    assert out["matches"] == [] and [f["name"] for f in out["foreign"]] == ["torch-cuda-oom"]


def test_cut_message_leaves_the_last_value_unknown(matcher):
    result = match("ValueError: Unknown KV cache group kind 'full' in backend_per_kind. Valid kinds are: ...", [matcher])
    values = result.matches[0].values
    assert values["f0"] == "full" and values.get("f1") is None


@pytest.mark.parametrize(
    "text",
    [
        LOGGED,
        "Bad " + " x" * 20 + " end",
        "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2 MiB.",
        "nothing like any entry",
        "ValueError: Unknown KV cache group kind 'full' in backend_per_kind. Valid kinds are: ...",
    ],
)
def test_json_output_follows_its_schema(dataset, cli, text):
    import jsonschema

    from crawler.model.schemas import schema_for

    out = json.loads(cli("match", "--json", "--data", dataset, text).stdout)
    jsonschema.validate(out, schema_for("match"))
    if out["foreign"]:
        assert out["foreign"][0]["project"] == "acme/widgets"


@pytest.mark.parametrize("error", [{"name": "../x"}, {"urls": ["javascript:alert(1)"]}, {"match": "CUDA"}, {"match": ["ab"]}, {"extra": 1}])
def test_a_hostile_foreign_list_is_refused_in_one_line(tmp_path, cli, error):
    data = cd.write(tmp_path / "data")
    (data / "foreign.json").write_text(json.dumps({"errors": [{**FOREIGN["errors"][0], **error}]}))
    run = cli("match", "--data", data, "Invalid value 3")
    assert run.exit_code == 1 and "foreign.json: not a valid foreign error list: errors.0." in run.stderr
    assert len(run.stderr.strip().splitlines()) == 1 and "Traceback" not in run.output


def test_a_log_line_gives_its_level_and_message():
    from crawler.consume.paste import logged

    assert logged("(APIServer pid=123) ERROR 11-30 14:21:45 [api_server.py:123] Engine loop crashed") == ("ERROR", "Engine loop crashed")
    assert logged("vllm-1  | WARNING 11-30 14:21:45 [x.py:1] Address already in use.") == ("WARNING", "Address already in use.")
    assert logged("INFO 11-30 14:21:45 [x.py:1] Started") is None  # info is no error
    assert logged("WARNING in the message itself, no prefix") is None
    assert logged("ERROR 11-30 14:21:45 [x.py:1] ") is None


KEY_ERRORS = """
def adapter(name):
    raise KeyError(f"no LoRA adapter named {name!r}; loaded: {sorted(['a', 'b'])}")


def variant(kind):
    raise KeyError(f"unknown variant {kind} \\u2066(rtl)\\u2069 <b>bold</b>")
"""


def _traceback(code: str, call: str) -> str:
    """The traceback Python itself prints for ``call`` (KeyError's line is its message's repr)."""
    import subprocess
    import sys

    run = subprocess.run([sys.executable, "-c", code + "\n" + call], capture_output=True, text=True, check=False)
    assert run.returncode == 1 and "KeyError: " in run.stderr, run.stderr
    return run.stderr


@pytest.mark.slow
@pytest.mark.parametrize("call", ['adapter("it\'s")', "variant('x\\x1b[2J')"])
def test_a_key_errors_traceback_finds_its_entry(fixture_repo, cli, tmp_path, call):
    # Python prints a KeyError's message as its repr (KeyError: 'no LoRA adapter ...'), quoted and
    # escaped: the paste was 'no entry matches' with its own entry a weak candidate at 94%
    from tests.extract.test_native import CONFIG, crawl

    (tmp_path / "errcat.toml").write_text(CONFIG, encoding="utf-8")
    fixture_repo.commit({"pkg/__init__.py": "", "pkg/keys.py": KEY_ERRORS}, tag="v1")
    data = crawl(cli, fixture_repo, tmp_path / "out", tmp_path / "errcat.toml")
    paste = _traceback(KEY_ERRORS, call)
    answer = json.loads(cli("match", "--data", data, "--json", paste).stdout)
    assert len(answer["matches"]) == 1 and answer["matches"][0]["exception"] == "KeyError", answer
    shown = cli("match", "--data", data, paste)
    assert shown.exit_code == 0 and "\x1b" not in shown.stdout and "\u2066" not in shown.stdout


@pytest.mark.parametrize(
    ("line", "message"),
    [
        ("KeyError: 'plain'", "plain"),
        ('KeyError: "it\'s"', "it's"),
        ("KeyError: 'a\\'b\\\\n\\x1b\\u2066\\U0001f600'", "a'b\\n\x1b\u2066\U0001f600"),
        ("KeyError: 'cut short", "'cut short"),  # no closing quote: as it stands
        ("KeyError: 'a' and 'b'", "'a' and 'b'"),  # not one string
        ("KeyError: '\\ud800'", "'\\ud800'"),  # a lone surrogate is no character
        ("KeyError: 'bad \\q escape'", "'bad \\q escape'"),
        ("ValueError: 'quoted by the raiser'", "'quoted by the raiser'"),  # only KeyError quotes
    ],
)
def test_a_key_error_line_is_read_as_the_message_raised(line, message):
    assert [c.message for c in candidates(line)] == [message]
