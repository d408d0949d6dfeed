"""``errcat curate draft --llm`` against hostile endpoints, on real sockets (127.0.0.1): answers that
quote the API key in some encoding, that quote it where a rejection or validation error would print
it, that drip their headers or body a byte at a time, that are too long for the curated reader,
that link to other hosts or that try to choose where the draft goes (security issue #35)."""

from __future__ import annotations

import base64
import codecs
import json
import socket
import threading
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from crawler.curate.llm import Endpoint, LLMFailure
from tests.curate.test_draft_all import CONFIG, KEY, _records, good
from tests.helpers import ChatAnswers, serving

#: The key as a model might echo it: every form ``curate.secret`` promises to find.
ENCODED = {
    "plain": KEY,
    "upper case": KEY.upper(),
    "base64": base64.b64encode(KEY.encode()).decode(),
    "urlsafe base64, unpadded, off by two": base64.urlsafe_b64encode(b"to" + KEY.encode()).decode().rstrip("="),
    "base64 of a longer text": base64.b64encode(f"Authorization: Bearer {KEY}\n".encode()).decode(),
    "hex": KEY.encode().hex().upper(),
    "percent-encoded": "".join(f"%{b:02x}" for b in KEY.encode()),
    "\\u escapes as text": "".join(f"\\u{ord(c):04x}" for c in KEY),
    "reversed": KEY[::-1],
    "spaced out": " ".join(KEY),
    "zero-width joined": "\u200b".join(KEY),
    "rot13": codecs.encode(KEY, "rot13"),
}


def _leaks(text: str) -> bool:
    """Whether ``text`` shows the key in a form of ``ENCODED``, or any 12 characters of it as it is
    (pydantic cuts a long value it quotes in its middle): checked here, not by the screen under test."""
    low = text.lower()
    return any(form.lower() in low for form in ENCODED.values()) or any(KEY[i : i + 12].lower() in low for i in range(len(KEY) - 11))


class Answers(ChatAnswers):
    """The shared chat server, answering a good draft unless a test says otherwise."""

    answer: Callable[[str], str] = staticmethod(lambda prompt: json.dumps(good()))


@pytest.fixture
def endpoint(monkeypatch):
    """A fresh answering server: set ``Answers.answer`` (and ``model``) per test."""
    monkeypatch.setattr(Answers, "answer", staticmethod(lambda prompt: json.dumps(good())))
    monkeypatch.setattr(Answers, "model", "fake-model")
    monkeypatch.setattr(Answers, "asked", 0)
    monkeypatch.setattr(Answers, "seen", [])
    monkeypatch.setenv("ERRCAT_LLM_API_KEY", KEY)
    with serving(Answers) as url:
        yield url


@pytest.fixture
def crawled(fixture_repo, cli, tmp_path):
    """A crawled dataset of CONFIG's errors and a way to draft one of them (``--limit 1``)."""
    fixture_repo.commit({"pkg/__init__.py": "", "pkg/config.py": CONFIG}, tag="v1")
    out, curated = tmp_path / "out", tmp_path / "curated"

    def crawl():
        return cli(
            "crawl", "--repo", fixture_repo.path, "--ref", "v1", "--name", "acme/widgets", "--include", "pkg/**/*.py", "--out", out, "--curated", curated
        )

    assert crawl().exit_code == 0

    def draft(url: str, *more: str):
        return cli(
            "curate",
            "draft",
            "--all",
            "--llm",
            url,
            "--curated",
            curated,
            "--data",
            out,
            "--repo",
            fixture_repo.path,
            "--timeout",
            "5",
            "--retries",
            "0",
            "--limit",
            "1",
            *more,
        )

    return type(
        "Crawled",
        (),
        {"out": out, "curated": curated, "crawl": staticmethod(crawl), "draft": staticmethod(draft), "records": staticmethod(lambda: _records(out))},
    )


def _files(root: Path) -> list[Path]:
    return sorted(p for p in root.rglob("*") if p.is_file()) if root.exists() else []


@pytest.mark.slow
def test_an_answer_quoting_the_key_in_any_encoding_is_rejected_and_nothing_written(crawled, endpoint, monkeypatch):
    for name, form in ENCODED.items():
        monkeypatch.setattr(Answers, "answer", staticmethod(lambda prompt, form=form: json.dumps(good(prevention=[f"Your key is {form}."]))))
        run = crawled.draft(endpoint)
        assert run.exit_code == 1, (name, run.output)
        assert "rejected" in run.stderr and "the answer quotes the API key" in run.stderr, name
        assert "drafts: 0 written, 1 rejected, 0 failed" in run.stderr, name
        assert not _leaks(run.output), name
        assert _files(crawled.curated) == [], name
    monkeypatch.setattr(Answers, "answer", staticmethod(lambda prompt: json.dumps(good())))
    assert crawled.draft(endpoint).exit_code == 0 and len(_files(crawled.curated)) == 1  # the same answer without it is drafted


@pytest.mark.slow
def test_a_model_name_quoting_the_key_is_refused_in_one_line(crawled, endpoint, monkeypatch):
    monkeypatch.setattr(Answers, "model", base64.b64encode(f"m-{KEY}".encode()).decode())
    run = crawled.draft(endpoint)
    assert run.exit_code == 2 and "names a model that quotes the API key" in run.stderr
    assert len(run.stderr.strip().splitlines()) == 1 and not _leaks(run.output) and Answers.asked == 0
    assert _files(crawled.curated) == []


@pytest.mark.slow
@pytest.mark.parametrize(
    "answer",
    [
        pytest.param(lambda: good(solutions=[f"Pass --{KEY} to the server."]), id="the key as a flag name"),
        # valid sections of a record, not of a curated file: refused by the curated model, whose error quotes the value
        pytest.param(lambda: good(accepted_as_is={"drafted_by": "model", "model": KEY}), id="the key in a value the curated model refuses"),
        pytest.param(lambda: good(when_it_happens={"trigger": "t", KEY: ["x"]}), id="the key as a key the schema refuses"),
    ],
)
def test_no_line_and_no_file_carries_the_key(crawled, endpoint, monkeypatch, cli, answer):
    monkeypatch.setattr(Answers, "answer", staticmethod(lambda prompt: json.dumps(answer())))
    for mode in ([], ["--concurrency", "1"]):
        run = crawled.draft(endpoint, *mode)
        assert run.exit_code == 1 and "rejected" in run.stderr
        assert not _leaks(run.output)
    assert _files(crawled.curated) == []
    one = crawled.records()["gpu_memory_utilization must be at most 1"]["id"]  # and one ID at a time
    single = cli("curate", "draft", one, "--llm", endpoint, "--curated", crawled.curated, "--data", crawled.out, "--timeout", "5", "--retries", "0")
    assert single.exit_code == 2 and len(single.stderr.strip().splitlines()) == 1 and not _leaks(single.output)
    assert _files(crawled.curated) == []


@pytest.mark.slow
@pytest.mark.parametrize("name", list(ENCODED))
def test_every_failure_leaving_the_endpoint_is_masked(endpoint, name):
    """What the caller's check raises (a validation error, a rejection quoting the answer) is
    masked where every failure leaves the endpoint, in every encoding the screen knows."""
    client = Endpoint.from_url(endpoint, retries=0)

    def check(content):
        raise LLMFailure(f"the draft does not validate: value {ENCODED[name]!s} is not allowed", rejected=True)

    with pytest.raises(LLMFailure) as info:
        client.chat("fake-model", "s", "p", check)
    assert info.value.reason.startswith(("the draft does not validate", "(withheld")) and not _leaks(info.value.reason)


class _Drip:
    """A raw TCP server that answers every connection by dripping one byte each 0.2 s, for at
    most 60 s: the status line and headers never end (``headers``), or they end and the body
    never does (``body``)."""

    def __init__(self, where: str) -> None:
        self.where = where
        self.stop = threading.Event()
        self.sock = socket.create_server(("127.0.0.1", 0))
        self.sock.settimeout(0.2)
        self.thread = threading.Thread(target=self._serve, daemon=True)
        self.thread.start()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.sock.getsockname()[1]}"

    def _serve(self) -> None:
        while not self.stop.is_set():
            try:
                conn, _ = self.sock.accept()
            except TimeoutError:
                continue
            threading.Thread(target=self._drip, args=(conn,), daemon=True).start()

    def _drip(self, conn: socket.socket) -> None:
        head = b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n"
        if self.where == "body":
            conn.sendall(head + b"Content-Length: 100000\r\n\r\n")
            drip = b'{"data": [{"id": "' + b"m" * 400
        else:
            drip = head + b"X-Pad: " + b"a" * 400
        with conn:
            deadline = time.monotonic() + 60
            for byte in drip:
                if self.stop.is_set() or time.monotonic() > deadline:
                    break
                try:
                    conn.sendall(bytes([byte]))
                except OSError:  # the client gave up
                    break
                time.sleep(0.2)

    def close(self) -> None:
        self.stop.set()
        self.thread.join(5)
        self.sock.close()


@pytest.mark.slow
@pytest.mark.parametrize("where", ["headers", "body"])
def test_a_server_that_drips_is_cut_off_at_the_deadline(where):
    server = _Drip(where)
    outcome: list = []

    def ask():
        started = time.monotonic()
        try:
            Endpoint(base=server.url, timeout=1, retries=0).first_model()
        except LLMFailure as failure:
            outcome.append((failure.reason, time.monotonic() - started))

    client = threading.Thread(target=ask, daemon=True)
    try:
        client.start()
        client.join(30)  # a hang guard, not a benchmark: the drip would last 60 s
        assert not client.is_alive(), "the attempt outlived its deadline"
    finally:
        server.close()
    ((reason, took),) = outcome
    # cut off at its deadline, not at the drip's end (60 s): the margin is a loaded machine's
    assert reason == "no answer within 1s" and took < 20


@pytest.mark.slow
def test_an_answer_too_long_for_the_reader_is_rejected_and_the_crawl_goes_on(crawled, endpoint, monkeypatch):
    prose = "The prompt does not fit the model's context, so it is refused. " * 4800  # 300 KB, over 256 KiB
    monkeypatch.setattr(Answers, "answer", staticmethod(lambda prompt: json.dumps(good(what_it_means=prose))))
    run = crawled.draft(endpoint)
    assert run.exit_code == 1 and "the crawl would refuse the draft" in run.stderr and "over the limit of 262144 bytes" in run.stderr
    assert len(run.stderr.strip().splitlines()) == 2  # the rejection and the count
    assert _files(crawled.curated) == []
    assert crawled.crawl().exit_code == 0


def _acme_config(tmp_path: Path, hosts: str) -> Path:
    path = tmp_path / "errcat.toml"
    path.write_text(f'[upstreams.widgets]\nurl = "https://github.com/acme/widgets"\ninclude = ["pkg/**/*.py"]\n{hosts}')
    return path


@pytest.mark.slow
@pytest.mark.parametrize(
    "text",
    [
        "See [the guide](https://evil.example/fix) first.",
        "See <https://evil.example/fix>.",
        "See [the guide][g].\n\n[g]: https://evil.example/fix",
        "See [the guide](https&#58;//evil.example/fix).",
        "See [the issue](https://evil.example\\@github.com/acme/widgets/issues/1).",
        "See [another fork](https://github.com/acme/widgets-fork/issues/1).",
        "See [the docs](https://docs.acme.dev.evil.example/x).",
        "Read https://evil.example/fix for more.",
    ],
)
def test_links_to_other_hosts_reject_the_draft(crawled, endpoint, monkeypatch, tmp_path, text):
    monkeypatch.setattr(Answers, "answer", staticmethod(lambda prompt: json.dumps(good(prevention=[text]))))
    run = crawled.draft(endpoint, "--config", _acme_config(tmp_path, 'draft_link_hosts = ["docs.acme.dev"]\n'))
    assert run.exit_code == 1 and "links off the upstream's pages (allowed: https://github.com/acme/widgets, https://docs.acme.dev" in run.stderr
    assert _files(crawled.curated) == []


@pytest.mark.slow
def test_a_bare_link_in_code_rejects_the_draft_too(crawled, endpoint, monkeypatch):
    code = "path = 'https://evil.example/x'\nload(path)\n"
    monkeypatch.setattr(Answers, "answer", staticmethod(lambda prompt: json.dumps(good(defensive_patterns=[{"strategy": "Check", "code": code}]))))
    run = crawled.draft(endpoint)
    assert run.exit_code == 1 and "links off the upstream's pages" in run.stderr and "https://evil.example/x" in run.stderr
    assert _files(crawled.curated) == []


@pytest.mark.slow
def test_links_to_the_upstreams_pages_and_its_draft_link_hosts_are_kept(crawled, endpoint, monkeypatch, tmp_path):
    from crawler.catalogue.explanations import parse_file

    text = (
        "Reported in [#7](https://github.com/acme/widgets/issues/7) and <https://GitHub.com/Acme/Widgets/pull/8>; "
        "see [the docs](https://docs.acme.dev/en/latest/config.html#max-model-len)."
    )
    code = "path = 'http://localhost:8000/v1/models'\nload(path)\n"
    monkeypatch.setattr(
        Answers, "answer", staticmethod(lambda prompt: json.dumps(good(prevention=[text], defensive_patterns=[{"strategy": "Ask the server", "code": code}])))
    )
    without = crawled.draft(endpoint, "--config", _acme_config(tmp_path, ""))
    assert without.exit_code == 1 and "https://docs.acme.dev/en/latest/config.html#max-model-len" in without.stderr
    assert "github.com/acme/widgets/issues/7" not in without.stderr.split("):", 1)[-1]  # the repository's own pages pass
    bad = crawled.draft(endpoint, "--config", _acme_config(tmp_path, 'draft_link_hosts = ["https://docs.acme.dev"]\n'))
    assert bad.exit_code == 2 and "draft_link_hosts" in bad.stderr and len(bad.stderr.strip().splitlines()) == 1
    run = crawled.draft(endpoint, "--config", _acme_config(tmp_path, 'draft_link_hosts = ["docs.acme.dev"]\n'))
    assert run.exit_code == 0, run.output
    (path,) = _files(crawled.curated)
    assert parse_file(path).prevention == [text]


@pytest.mark.slow
def test_an_answer_cannot_choose_where_the_draft_goes(crawled, endpoint, monkeypatch, tmp_path):
    """The file's place and id are the catalogue's: an answer's ``id``, ``review``, ``related`` or
    ``path`` are no sections, and are dropped."""
    from crawler.catalogue.explanations import parse_file

    evil = good(id="../../../escaped", path="../../../escaped.yaml", related=["0000000000000000"], review={"status": "reviewed", "commit": "0" * 40})
    monkeypatch.setattr(Answers, "answer", staticmethod(lambda prompt: json.dumps(evil)))
    before = set(_files(tmp_path))
    run = crawled.draft(endpoint)
    assert run.exit_code == 0, run.output
    new = set(_files(tmp_path)) - before
    curated_new = {p for p in new if crawled.curated in p.parents}
    (path,) = curated_new
    entry = parse_file(path)
    assert path.parent == crawled.curated / "acme" / "widgets" and path.stem == entry.id
    assert entry.id in {r["id"] for r in crawled.records().values()}
    assert entry.review.status == "draft" and "0000000000000000" not in entry.related  # the facts' related, not the answer's
    assert not any("escaped" in str(p) for p in new) and all(crawled.curated in p.parents or "cache" in p.parts for p in new)


def test_a_run_stops_asking_when_its_token_budget_is_spent(crawled, endpoint, cli, monkeypatch, fixture_repo):
    """Each answer costs what the server reports (150 tokens here): with a budget of 200 the
    first two answers spend it (two requests in flight at most), and every other entry is left
    unasked, "unstarted", which is no failure; --max-tokens reaches every request."""
    args = [
        "curate",
        "draft",
        "--all",
        "--llm",
        endpoint,
        "--curated",
        crawled.curated,
        "--data",
        crawled.out,
        "--repo",
        fixture_repo.path,
        "--timeout",
        "5",
        "--retries",
        "0",
        "--concurrency",
        "1",
    ]
    result = cli(*args, "--token-budget", "200", "--max-tokens", "300")
    assert result.exit_code == 0, result.output
    assert Answers.asked == 2 and all(body["max_tokens"] == 300 for _, body in Answers.seen)
    assert "drafts: 2 written, 0 rejected, 0 failed, 4 unstarted" in result.stderr
    assert "not asked: the run's token budget (200) is spent" in result.stderr
    again = cli(*args)  # the next run asks what was left, and nothing it drafted
    assert again.exit_code == 0 and Answers.asked == 6 and "drafts: 4 written" in again.stderr


def test_a_run_stops_asking_when_its_time_budget_is_spent(crawled, endpoint, cli, monkeypatch, fixture_repo):
    """An answer slower than the run's time left is cut off at the budget's end (the attempt's
    timeout is cut to what is left), and nothing is asked after it."""

    def slow(prompt):
        time.sleep(3)
        return json.dumps(good())

    monkeypatch.setattr(Answers, "answer", staticmethod(slow))
    started = time.monotonic()
    result = cli(
        "curate",
        "draft",
        "--all",
        "--llm",
        endpoint,
        "--curated",
        crawled.curated,
        "--data",
        crawled.out,
        "--repo",
        fixture_repo.path,
        "--timeout",
        "60",
        "--retries",
        "2",
        "--backoff",
        "0",
        "--concurrency",
        "1",
        "--time-budget",
        "1",
    )
    assert time.monotonic() - started < 30  # not 6 entries x 3 attempts x 3 s
    assert result.exit_code == 1 and Answers.asked == 1
    assert "no answer within 1s" in result.stderr or "no answer within 0." in result.stderr
    assert "drafts: 0 written, 0 rejected, 1 failed, 5 unstarted" in result.stderr
