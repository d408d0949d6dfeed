"""``errcat curate draft --all --llm URL`` end to end, against a fake OpenAI-compatible server on a
real socket that answers well, slowly, with 5xx and 429, with malformed JSON and with invented names."""

from __future__ import annotations

import gzip
import json
import threading
import time
from http.server import BaseHTTPRequestHandler
from pathlib import Path

import pytest

from crawler.catalogue.explanations import parse_file
from crawler.curate.invented_names import Vocabulary, invented
from tests.helpers import serving

KEY = "sk-test-0123456789-do-not-print"

CONFIG = """
import os
from dataclasses import dataclass

CACHE_DIR = os.environ.get("ACME_CACHE_DIR", "")


@dataclass
class EngineConfig:
    max_model_len: int = 2048
    gpu_memory_utilization: float = 0.9


def check_len(config, prompt_len):
    if prompt_len > config.max_model_len:
        raise ValueError(f"prompt of {prompt_len} tokens is longer than max_model_len {config.max_model_len}")


def check_memory(config):
    if config.gpu_memory_utilization > 1:
        raise ValueError("gpu_memory_utilization must be at most 1")


def load(path):
    if not path:
        raise FileNotFoundError("no model path given")


def start(world_size):
    if world_size < 1:
        raise RuntimeError("world_size must be positive")


def tokenizer(name):
    if name is None:
        raise TypeError("tokenizer name missing")


def plugin(name):
    raise NotImplementedError(f"plugin {name} is not available")
"""


def good(**extra) -> dict:
    return {
        "what_it_means": "The prompt does not fit: `max_model_len` caps prompt and output together.",
        "when_it_happens": {"trigger": "A prompt longer than `EngineConfig.max_model_len`.", "common_situations": ["Long documents."]},
        "solutions": ["Raise --max-model-len, or shorten the prompt.", "Point ACME_CACHE_DIR at a larger disk."],
        "example_fix": {"before": "check_len(EngineConfig(), 4096)\n", "after": "config = EngineConfig(max_model_len=8192)\ncheck_len(config, 4096)\n"},
        "defensive_patterns": [{"strategy": "Check first", "code": "if n > config.max_model_len:\n    n = config.max_model_len\n"}],
        "prevention": ["Size `max_model_len` for the longest prompt."],
        **extra,
    }


class Fake(BaseHTTPRequestHandler):
    """Answers by which error the prompt is about; counts requests and requests in flight."""

    lock = threading.Lock()
    seen: list = []
    in_flight = 0
    most_in_flight = 0
    attempts: dict = {}
    keys: set = set()

    def log_message(self, *args):
        pass

    def _send(self, code, body, reason=None, headers=()):
        data = body if isinstance(body, bytes) else json.dumps(body).encode()
        self.send_response(code, reason)
        for k, v in headers:
            self.send_header(k, v)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        try:
            self.wfile.write(data)
        except BrokenPipeError:  # the client gave up waiting (the slow answer)
            pass

    def _chat(self, content):
        self._send(200, {"choices": [{"message": {"role": "assistant", "content": content}}]})

    def do_GET(self):
        type(self).keys.add(self.headers.get("Authorization"))
        self._send(200, {"object": "list", "data": [{"id": "fake-model"}]})

    def do_POST(self):
        cls = type(self)
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        prompt = body["messages"][-1]["content"]
        which = next(w for w in ("longer than", "gpu_memory", "no model path", "world_size", "tokenizer name", "plugin") if w in prompt)
        with cls.lock:
            cls.keys.add(self.headers.get("Authorization"))
            cls.seen.append((which, body))
            cls.attempts[which] = n = cls.attempts.get(which, 0) + 1
            cls.in_flight += 1
            cls.most_in_flight = max(cls.most_in_flight, cls.in_flight)
        try:
            if which == "gpu_memory" and n == 1:
                return self._send(429, {"error": "slow down"}, headers=[("Retry-After", "0")])
            if which == "no model path":  # a hostile 5xx echoing the request's key back
                return self._send(503, {"error": "down"}, reason=f"Unavailable {self.headers.get('Authorization')}")
            if which == "world_size":
                return self._chat('Sure! {"what_it_means": ')
            if which == "tokenizer name":
                return self._chat(json.dumps(good(solutions=["Pass --turbo-tokenizer or set ACME_MAGIC_TOKENIZER=1."])))
            if which == "plugin" and n == 1:
                time.sleep(3)  # past the client's --timeout: it gives up and asks again
            return self._chat("```json\n" + json.dumps(good()) + "\n```")
        finally:
            with cls.lock:
                cls.in_flight -= 1


@pytest.fixture
def fake():
    Fake.seen, Fake.attempts, Fake.keys, Fake.in_flight, Fake.most_in_flight = [], {}, set(), 0, 0
    with serving(Fake) as url:
        yield url


def _records(out: Path) -> dict[str, dict]:
    return {r["message"]["text"]: r for r in map(json.loads, gzip.decompress((out / "acme/widgets/errors.jsonl.gz").read_bytes()).splitlines())}


@pytest.mark.slow
def test_draft_all_against_a_fake_server(fixture_repo, cli, tmp_path, fake, monkeypatch):
    fixture_repo.commit({"pkg/__init__.py": "", "pkg/config.py": CONFIG}, tag="v1")
    out, curated = tmp_path / "out", tmp_path / "curated"

    def crawl():
        result = cli(
            "crawl", "--repo", fixture_repo.path, "--ref", "v1", "--name", "acme/widgets", "--include", "pkg/**/*.py", "--out", out, "--curated", curated
        )
        assert result.exit_code == 0, result.output
        return _records(out)

    recs = crawl()
    by_word = {w: next(r for t, r in recs.items() if w in t) for w in ("longer than", "gpu_memory", "no model path", "world_size", "tokenizer name", "plugin")}
    (curated / "acme/widgets").mkdir(parents=True)
    (curated / "acme/widgets/evidence.yaml").write_text(
        f"{by_word['plugin']['id']}:\n- url: https://github.com/acme/widgets/issues/7\n  quote: 'NotImplementedError: plugin x is not available'\n"
    )
    recs = crawl()
    monkeypatch.setenv("ERRCAT_LLM_API_KEY", KEY)
    args = [
        "curate",
        "draft",
        "--all",
        "--llm",
        fake,
        "--curated",
        curated,
        "--data",
        out,
        "--repo",
        fixture_repo.path,
        "--timeout",
        "1",
        "--retries",
        "2",
        "--backoff",
        "0.01",
        "--concurrency",
        "2",
    ]

    # hot first: the one reported entry is the one --limit 1 drafts; the slow first answer timed out and was asked again
    first = cli(*args, "--limit", "1")
    assert first.exit_code == 0, first.output
    assert [w for w, _ in Fake.seen] == ["plugin", "plugin"]
    prompt = Fake.seen[-1][1]["messages"][-1]["content"]
    assert "raise NotImplementedError" in prompt and "A user reported: NotImplementedError: plugin x is not available" in prompt
    assert Fake.seen[-1][1]["model"] == "fake-model" and Fake.keys == {f"Bearer {KEY}"}

    deadline = time.monotonic() + 30  # hang guard: the abandoned slow answer finishes in the server
    while Fake.in_flight and time.monotonic() < deadline:
        time.sleep(0.05)
    Fake.most_in_flight = 0
    run = cli(*args)
    assert run.exit_code == 1  # some entries could not be drafted: said, and the rest written
    assert Fake.most_in_flight <= 2
    assert "plugin" not in [w for w, _ in Fake.seen[2:]]  # resumable: a drafted entry is not asked again
    assert Fake.attempts["gpu_memory"] == 2 and Fake.attempts["no model path"] == 3 and Fake.attempts["world_size"] == 3
    err = run.stderr
    assert f"failed   {by_word['no model path']['id']}: HTTP 503 Unavailable Bearer *** (after 3 attempts)" in err
    assert f"rejected {by_word['world_size']['id']}: the model's answer is not the requested JSON object" in err
    assert (
        f"rejected {by_word['tokenizer name']['id']}: invented names (not in acme/widgets at {recs['gpu_memory_utilization must be at most 1']['provenance']['commit'][:12]}): "
        "--turbo-tokenizer, ACME_MAGIC_TOKENIZER"
    ) in err
    assert "drafts: 2 written, 2 rejected, 1 failed" in err
    assert KEY not in run.output + first.output

    files = {p.stem for p in (curated / "acme/widgets").glob("*.yaml")} - {"evidence"}
    assert files == {by_word[w]["id"] for w in ("longer than", "gpu_memory", "plugin")}
    entry = parse_file(curated / "acme/widgets" / f"{by_word['gpu_memory']['id']}.yaml")
    assert entry.review.status == "draft" and entry.review.model == "fake-model"
    assert entry.review.template == "gpu_memory_utilization must be at most 1" and "--max-model-len" in entry.solutions[0]
    assert (curated / "acme/widgets" / f"{entry.id}.yaml").read_text().startswith("# Machine-written by fake-model, not reviewed")

    again = cli(*args)  # only what is still missing is asked for
    assert {w for w, _ in Fake.seen[-9:]} == {"no model path", "world_size", "tokenizer name"}
    assert again.exit_code == 1

    recs = crawl()
    drafted = recs["gpu_memory_utilization must be at most 1"]
    assert drafted["explanation_status"] == "draft" and drafted["explanation"]["model"] == "fake-model"
    assert cli("validate", out).exit_code == 0
    unread = cli("curate", "review", entry.id, "--curated", curated, "--data", out)
    assert unread.exit_code == 2 and "the model fake-model wrote, unedited" in unread.stderr  # a model's text, as it wrote it
    assert cli("curate", "review", entry.id, "--read-and-accept-as-is", "--curated", curated, "--data", out).exit_code == 0
    reviewed = parse_file(curated / "acme/widgets" / f"{entry.id}.yaml")
    # the model stays named: the text is still its own, which the record and pages say
    assert reviewed.review.status == "reviewed" and reviewed.review.model == "fake-model" and reviewed.review.accepted_as_is is True
    assert (curated / "acme/widgets" / f"{entry.id}.yaml").read_text().startswith("id: ")  # "not reviewed" is gone with the review
    recs = crawl()
    assert recs["gpu_memory_utilization must be at most 1"]["explanation_status"] == "curated"
    assert "model" not in recs["gpu_memory_utilization must be at most 1"]["explanation"]
    assert recs["gpu_memory_utilization must be at most 1"]["explanation"]["accepted_as_is"] == {"drafted_by": "model", "model": "fake-model"}


@pytest.mark.parametrize(
    "argv, words",
    [
        (["--all"], "--all needs --llm"),
        ([], "give one ID or --all"),
        (["0123456789abcdef", "--all", "--llm", "http://127.0.0.1:9"], "give one ID or --all"),
        (["--all", "--llm", "ftp://x"], "expected an http:// or https:// URL"),
        (["0123456789abcdef", "--limit", "3"], "--limit goes with --all"),
    ],
)
def test_draft_refuses_bad_combinations_in_one_line(cli, tmp_path, argv, words):
    result = cli("curate", "draft", *argv, "--curated", tmp_path / "c", "--data", tmp_path / "o")
    assert result.exit_code == 2 and words in result.stderr and len(result.stderr.strip().splitlines()) == 1


@pytest.mark.slow
def test_a_redirect_is_not_followed_so_the_key_stays(cli, tmp_path, monkeypatch):
    from crawler.curate.llm import Endpoint, LLMFailure

    seen = []

    class Redirect(BaseHTTPRequestHandler):
        def log_message(self, *args):
            pass

        def do_GET(self):
            seen.append(self.headers.get("Authorization"))
            self.send_response(307)
            self.send_header("Location", f"http://127.0.0.1:{self.server.server_address[1]}/elsewhere")
            self.send_header("Content-Length", "0")
            self.end_headers()

    with serving(Redirect) as url:
        monkeypatch.setenv("ERRCAT_LLM_API_KEY", KEY)
        endpoint = Endpoint.from_url(f"{url}/v1", retries=0)
        with pytest.raises(LLMFailure, match="redirects"):
            endpoint.first_model()
        assert seen == [f"Bearer {KEY}"]  # asked once; the redirect's target never got the key


@pytest.mark.slow
def test_an_error_answer_closes_its_connection_before_the_failure_is_raised():
    """urllib's HTTPError is the open response: a failure that keeps it (as its context) kept the
    socket open through every retry, until the collector found it."""
    import gc
    import warnings

    from crawler.curate.llm import Endpoint, LLMFailure

    class Busy(BaseHTTPRequestHandler):
        def log_message(self, *args):
            pass

        def do_GET(self):
            body = b'{"error": "busy"}'
            self.send_response(503)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

    with serving(Busy) as url:
        endpoint = Endpoint.from_url(f"{url}/v1", retries=0)
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always", ResourceWarning)
            with pytest.raises(LLMFailure, match="HTTP 503") as info:
                endpoint.first_model()
            del info
            gc.collect()
        assert [str(w.message) for w in caught if issubclass(w.category, ResourceWarning)] == []


def test_invented_names_are_every_kind_the_commit_lacks():
    vocabulary = Vocabulary()
    vocabulary.add(b'max_model_len = 1\nos.environ["VLLM_USE_V1"]\nparser.add_argument("--kv-role")\nclass LLM:\n    def generate(self): ...\n')
    prose = [
        "Pass `--max-model-len 4096`, --kv-role, --no-max-model-len or --turbo-mode; set VLLM_USE_V1=0 or VLLM_MAGIC=1; "
        "see `model_config.max_model_len` and call `fast_path()`."
    ]
    code = ["llm = LLM(max_model_len=4096, speedup=2)\nout = llm.generate(p)\ndef helper(x):\n    return len(x)\nhelper(out)\n"]
    assert invented(vocabulary, prose, code) == ["--turbo-mode", "VLLM_MAGIC", "fast_path", "model_config", "speedup"]
