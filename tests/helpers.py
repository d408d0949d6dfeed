"""Small helpers shared by several test modules (fixtures live in conftest.py)."""

from __future__ import annotations

import gzip
import json
import os
import resource
import shutil
import signal
import subprocess
import sys
import threading
import time
import traceback
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest


def jsonl_bytes(dataset: Path) -> bytes:
    """The lines of a dataset's errors.jsonl.gz, decompressed."""
    return gzip.decompress((dataset / "errors.jsonl.gz").read_bytes())


def write_jsonl(dataset: Path, data: bytes) -> None:
    """Replace a dataset's errors.jsonl.gz with these lines, compressed."""
    (dataset / "errors.jsonl.gz").write_bytes(gzip.compress(data, mtime=0))


#: A module with two raises, used by the history, sync and workflow tests.
CHECK_CODE = """
def check(x):
    if x < 0:
        raise ValueError(f"x must be positive, got {x}")
    if x > 10:
        raise OverflowError("x is far too large")
    return x
"""


#: A curated list of one foreign error (``curated/<owner>/<name>/foreign/errors.yaml``).
FOREIGN_YAML = """\
errors:
- name: cuda-illegal-memory-access
  origin: cuda
  match:
  - 'CUDA error: an illegal memory access was encountered'
  example: 'RuntimeError: CUDA error: an illegal memory access was encountered'
  urls:
  - https://github.com/vllm-project/vllm/issues/6976
  explanation: A GPU kernel read or wrote outside its memory.
  check:
  - rerun with CUDA_LAUNCH_BLOCKING=1
"""


def git(cwd: Path, *args: str | bytes, input: bytes | None = None, date: str = "1700000000 +0200") -> str:
    """Run git as a test author would, isolated from the machine's git configuration."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")}
    env.update(
        GIT_AUTHOR_NAME="T",
        GIT_AUTHOR_EMAIL="t@example.invalid",
        GIT_COMMITTER_NAME="T",
        GIT_COMMITTER_EMAIL="t@example.invalid",
        GIT_AUTHOR_DATE=date,
        GIT_COMMITTER_DATE=date,
        GIT_CONFIG_NOSYSTEM="1",
        GIT_CONFIG_GLOBAL=os.devnull,
    )
    out = subprocess.run(["git", "-c", "init.defaultBranch=main", *args], cwd=cwd, env=env, input=input, capture_output=True, check=True)
    return out.stdout.decode().strip()


def wheel(path: Path, files: dict[str, str | bytes], *, name: str, version: str, metadata: list[str] = ()) -> Path:
    """A wheel as a build backend writes one: the files, ``.dist-info/METADATA`` (with the given
    extra header lines, e.g. ``Project-URL: Source, https://github.com/o/n``), WHEEL and RECORD."""
    import base64
    import hashlib
    import zipfile

    info = f"{name}-{version}.dist-info"
    body = {rel: data.encode() if isinstance(data, str) else data for rel, data in files.items()}
    body[f"{info}/METADATA"] = "\n".join(["Metadata-Version: 2.1", f"Name: {name}", f"Version: {version}", *metadata, "", ""]).encode()
    body[f"{info}/WHEEL"] = b"Wheel-Version: 1.0\nGenerator: errcat-tests\nRoot-Is-Purelib: true\nTag: py3-none-any\n"
    record = []
    for rel, data in body.items():
        digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
        record.append(f"{rel},sha256={digest},{len(data)}")
    body[f"{info}/RECORD"] = ("\n".join([*record, f"{info}/RECORD,,"]) + "\n").encode()
    path.parent.mkdir(parents=True, exist_ok=True)
    with zipfile.ZipFile(path, "w", compression=zipfile.ZIP_DEFLATED) as z:
        for rel, data in body.items():
            entry = zipfile.ZipInfo(rel, date_time=(2025, 3, 4, 5, 6, 8))
            entry.external_attr = 0o100644 << 16
            z.writestr(entry, data)
    return path


def cached_wheel(cache_dir: Path, files: dict[str, str | bytes], *, name: str, version: str, metadata: list[str] = ()) -> Path:
    """A wheel where ``errcat crawl --pypi NAME==VERSION`` finds it already downloaded, so tests
    need no package index."""
    return wheel(cache_dir / "pypi" / f"{name}-{version}" / f"{name}-{version}-py3-none-any.whl", files, name=name, version=version, metadata=metadata)


def release_tree(short_commit: str, code: str = CHECK_CODE) -> dict[str, str]:
    """A release in vLLM's layout (the default upstream's include and version file): its
    ``vllm/_version.py`` records the upstream commit abbreviated, as vLLM's releases do
    (``'g5df63a720'``), so its manifest's upstream_commit has 9 digits, not 40."""
    return {"vllm/__init__.py": "", "vllm/_version.py": f"__commit_id__ = commit_id = 'g{short_commit}'\n", "vllm/check.py": code}


def write_wheel(path: Path, files: dict[str, str]) -> Path:
    """A wheel holding ``files`` (dedented code strings), as the package index serves one."""
    import textwrap
    import zipfile

    path.parent.mkdir(parents=True, exist_ok=True)
    with zipfile.ZipFile(path, "w", compression=zipfile.ZIP_DEFLATED) as z:
        for name, text in sorted(files.items()):
            z.writestr(zipfile.ZipInfo(name, date_time=(2026, 1, 2, 3, 4, 5)), textwrap.dedent(text).lstrip("\n"))
    return path


def readonly(directory: Path, argv: list[str]) -> list[str] | None:
    """``argv`` run with ``directory`` bind-mounted read-only over itself, in a mount namespace of
    its own (the mount goes when the process does: nothing to undo, nothing leaks into other
    tests). Root ignores file modes, so this is how a test run as root meets a read-only place.
    None where it cannot be done (no ``unshare``, no CAP_SYS_ADMIN)."""
    wrap = ["unshare", "--mount", "--propagation", "private", "sh", "-c", 'mount --bind -o ro "$0" "$0" && exec "$@"', str(directory)]
    if shutil.which("unshare") is None:
        return None
    probe = subprocess.run([*wrap, "sh", "-c", 'touch "$0/.probe" 2>/dev/null && exit 1 || exit 0', str(directory)], capture_output=True, timeout=60)
    return [*wrap, *argv] if probe.returncode == 0 else None


def _cap_file_size() -> None:
    """In the child: every file it writes is capped at 2,000 bytes; a write past that fails with
    EFBIG (SIGXFSZ ignored), as a full disk would refuse it."""
    signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
    resource.setrlimit(resource.RLIMIT_FSIZE, (2_000, resource.getrlimit(resource.RLIMIT_FSIZE)[1]))


def run_errcat(argv: list, how: str, place: Path) -> subprocess.CompletedProcess:
    """``errcat ARGV`` as a process whose writes the system refuses: ``how`` is ``read-only``
    (``place`` mounted read-only; skipped where that cannot be done) or ``file-size-limit``;
    anything else runs it as is."""
    env = dict(os.environ, PYTHONPATH=str(Path(__file__).resolve().parent.parent) + os.pathsep + os.environ.get("PYTHONPATH", ""))
    command: list[str] | None = [sys.executable, "-m", "crawler", *map(str, argv)]
    if how == "read-only":
        command = readonly(place, command)
        if command is None:
            pytest.skip("no read-only bind mount here (needs unshare and CAP_SYS_ADMIN)")
    return subprocess.run(command, env=env, capture_output=True, text=True, timeout=300, preexec_fn=_cap_file_size if how == "file-size-limit" else None)


def refused_in_one_line(proc: subprocess.CompletedProcess, start: str) -> None:
    """Exit 1, and the refusal is one ``errcat:`` line (the last one), starting with ``start``."""
    assert proc.returncode == 1, proc.stderr
    lines = [line for line in proc.stderr.splitlines() if line.startswith("errcat: ")]
    assert len(lines) == 1 and lines[0].startswith(start) and lines[0] == proc.stderr.splitlines()[-1], proc.stderr
    assert "Traceback" not in proc.stderr


def run_and_kill(argv: list[str], env: dict[str, str], *, delay: float | None, started: Callable[[], bool]) -> bool:
    """Start ``argv`` and SIGKILL it: after ``delay`` seconds, or (delay None) as soon as
    ``started()`` says it is writing. True if that was seen before the process ended."""
    proc = subprocess.Popen(argv, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    seen = False
    try:
        if delay is not None:
            try:
                proc.wait(delay)
            except subprocess.TimeoutExpired:
                pass
        else:
            deadline = time.monotonic() + 120
            while proc.poll() is None and time.monotonic() < deadline:
                if started():
                    seen = True
                    break
                time.sleep(0.0005)
    finally:
        proc.send_signal(signal.SIGKILL)
        proc.wait()
    return seen


#: A repository with call chains across modules (imports, a re-exported class, a route, a click
#: command) and tests of its own (pytest.raises with and without match=, assertRaisesRegex, the
#: callable form, a hostile pattern, a file that does not parse), for the derived meaning.
MEANING_TREE = {
    "pkg/__init__.py": "from .api import Engine\n",
    "pkg/config.py": """
        def check_size(size):
            if size < 0:
                raise ValueError(f"size must be at least 0, got {size}")
            return size


        def check_name(name):
            if not name:
                raise KeyError("name is required for a widget")
            return name


        def shout():
            raise ValueError("aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa!")
        """,
    "pkg/core.py": """
        from pkg.config import check_size
        from . import config as cfg


        def build(size, name):
            check_size(size)
            cfg.check_name(name)
            if name == "x":
                raise TypeError("build refuses the name x")
            return size


        def mystery(obj):
            return obj.check_size(3)
        """,
    "pkg/api.py": """
        from .core import build


        class Engine:
            def start(self, size):
                return build(size, "x")

            def _private(self):
                return build(1, "")
        """,
    "pkg/server.py": """
        from fastapi import APIRouter

        router = APIRouter()


        def validate_route_size(size):
            if size > 100:
                raise ValueError("route size over one hundred")


        @router.post("/v1/widgets")
        def create(size: int):
            validate_route_size(size)
        """,
    "pkg/cli.py": """
        import click

        from pkg.server import validate_route_size


        @click.command()
        def main():
            validate_route_size(5)
        """,
    "pkg/unrelated.py": """
        def lonely(x):
            if x:
                raise RuntimeError("lonely failure that no test reproduces")
            check_size(x)
        """,
    "tests/test_widgets.py": """
        import unittest

        import pytest
        from pytest import raises

        from pkg.config import check_name, check_size, shout


        def helper():
            raise RuntimeError("raised inside a test file, never an entry")


        def test_size():
            # <script>alert("size")</script> *bold* [link](x)
            with pytest.raises(ValueError, match=r"must be at least \\d+, got -1"):
                check_size(-1)


        def test_name_plain():
            with raises(KeyError):
                check_name("")


        def test_hostile():
            with pytest.raises(ValueError, match=r"^(a+)+$"):
                shout()


        class TestWidgets(unittest.TestCase):
            def test_regex(self):
                with self.assertRaisesRegex(KeyError, "required for a widget"):
                    check_name("")

            def test_callable(self):
                self.assertRaises(ValueError, check_size, -5)
        """,
    "tests/test_broken.py": "def test_broken(:\n    with pytest.raises(ValueError):\n        pass\n",
}

MEANING_CONFIG = """
default = "acme"

[upstreams.acme]
url = "https://github.com/acme/widgets"
include = ["pkg/**/*.py"]
tests = ["tests/**/*.py"]
"""


#: An upstream whose meaning conventions (``knob_kwargs``, ``request_models``) come from errcat.toml.
MEANING_TOML = """
[upstreams.widgets]
url = "https://github.com/acme/widgets"
include = ["pkg/**/*.py"]
knob_kwargs = ["get_kwargs"]
request_models = ["pkg/sampling.py"]
"""


def crawl_meaning_upstream(fixture_repo, cli, tmp_path: Path, files: dict[str, str]) -> list[dict]:
    """``files`` committed as v1 of the MEANING_TOML upstream, crawled through the CLI: its records."""
    import json

    fixture_repo.commit(files, tag="v1")
    (tmp_path / "errcat.toml").write_text(MEANING_TOML)
    out = tmp_path / "out"
    result = cli("crawl", "--repo", fixture_repo.path, "--ref", "v1", "--upstream", "widgets", "--config", tmp_path / "errcat.toml", "--out", out)
    assert result.exit_code == 0, result.output
    return [json.loads(line) for line in jsonl_bytes(out / "acme" / "widgets").splitlines()]


def meaning_records(crawl_once, files: dict[str, str]) -> list[dict]:
    """``crawl_meaning_upstream`` once for a module (the ``crawl_once`` fixture): the records."""
    out = crawl_once(files, "--upstream", "widgets", config=MEANING_TOML)
    return [json.loads(line) for line in jsonl_bytes(out / "acme" / "widgets").splitlines()]


def action_of(records: list[dict], start: str) -> dict:
    """The ``meaning.action`` of the one record whose message (or, with none, ``kind path qualname``)
    starts with ``start``."""
    (got,) = [
        r["meaning"]["action"]
        for r in records
        if (r["message"]["text"] or f"{r['kind']} {r['sites'][0]['path']} {r['sites'][0]['qualname']}").startswith(start)
    ]
    return got


def action_starting(records: list[dict], start: str) -> dict:
    """The ``meaning.action`` of the one record whose message starts with ``start``."""
    (got,) = [r["meaning"]["action"] for r in records if r["message"]["text"].startswith(start)]
    return got


def crawl_with_config(fixture_repo, cli, tmp_path: Path, files: dict[str, str], toml: str) -> tuple[Path, dict[str, dict]]:
    """Commit ``files`` as v1, crawl them under ``toml`` (an errcat.toml naming one upstream,
    acme/server) and return the dataset with its records by message text."""
    import json

    fixture_repo.commit(files, tag="v1")
    config = tmp_path / "errcat.toml"
    config.write_text(toml)
    out = tmp_path / "out"
    result = cli("crawl", "--repo", fixture_repo.path, "--ref", "v1", "--config", config, "--out", out)
    assert result.exit_code == 0, result.output
    data = out / "acme" / "server"
    return data, {r["message"]["text"]: r for r in map(json.loads, jsonl_bytes(data).splitlines())}


def best_match(cli, data: Path, paste: str) -> str | None:
    """The id of the entry ``errcat match --json`` ranks first for a paste, None without a match."""
    import json

    got = json.loads(cli("match", "--data", data, "--json", paste).stdout)
    return got["matches"][0]["id"] if got["matches"] else None


def crawl_widgets(cli, fixture_repo, out: Path, ref: str, *more) -> None:
    """``errcat crawl`` of the fixture repository's pkg/ as acme/widgets at ``ref`` into ``out``."""
    result = cli("crawl", "--repo", fixture_repo.path, "--ref", ref, "--name", "acme/widgets", "--include", "pkg/**/*.py", "--out", out, *more)
    assert result.exit_code == 0, result.output


class ChatAnswers(BaseHTTPRequestHandler):
    """An OpenAI-compatible server on a real socket: ``GET /v1/models`` lists ``model``; each chat
    answer is ``answer(prompt)``. Set the class attributes per test (monkeypatch); ``asked``
    counts the chat requests and ``seen`` keeps each one's Authorization header and body."""

    answer: Callable[[str], str] = staticmethod(lambda prompt: "{}")
    model = "fake-model"
    asked = 0
    seen: list[tuple[str | None, dict]] = []

    def log_message(self, *args: object) -> None:
        pass

    def _send(self, body: dict) -> None:
        data = json.dumps(body).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def do_GET(self) -> None:
        self._send({"object": "list", "data": [{"id": type(self).model}]})

    def do_POST(self) -> None:
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        type(self).asked += 1
        type(self).seen.append((self.headers.get("Authorization"), body))
        content = type(self).answer(body["messages"][-1]["content"])
        self._send(
            {"choices": [{"message": {"role": "assistant", "content": content}}], "usage": {"prompt_tokens": 100, "completion_tokens": 50, "total_tokens": 150}}
        )


class _Server(ThreadingHTTPServer):
    """The tests' local server. It never writes to the process's stderr, which a test's CLI run
    reads as its own (Click's runner swaps ``sys.stderr``, and a handler thread writes to
    whichever is in place): a client that hung up is swallowed, as a real server logs nothing to
    it, and any other error of a handler is kept for the test that served it (``serving``).
    Handler threads are not daemons, so ``server_close`` joins them: no request outlives its
    block into the next test; a socket time-out bounds a client that never sends."""

    daemon_threads = False
    block_on_close = True

    def __init__(self, handler: Callable[..., BaseHTTPRequestHandler]):
        super().__init__(("127.0.0.1", 0), handler)
        self.errors: list[str] = []

    def finish_request(self, request: Any, client_address: Any) -> None:
        request.settimeout(10)
        super().finish_request(request, client_address)

    def handle_error(self, request: Any, client_address: Any) -> None:
        error = sys.exc_info()[1]
        if error is not None and not isinstance(error, (ConnectionError, TimeoutError)):  # (BrokenPipe, reset)
            self.errors.append("".join(traceback.format_exception(error)))


@contextmanager
def serving(handler: Callable[..., BaseHTTPRequestHandler]) -> Iterator[str]:
    """``handler`` (a handler class, or a factory of one) served on 127.0.0.1, a free port, for
    the block: its base URL. The one local server of the tests (the package index's too). Every
    request has ended when the block does; a handler's own error fails the block (``_Server``)."""
    server = _Server(handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()
    assert not server.errors, "the test's HTTP server failed:\n" + "\n".join(server.errors)


def calls_of(monkeypatch, module, name: str) -> list:
    """Count the calls of ``module.name`` (the real function, still run): the first argument of
    each call, in order."""
    real = getattr(module, name)
    seen: list = []

    def counted(first, *args, **kwargs):
        seen.append(first)
        return real(first, *args, **kwargs)

    monkeypatch.setattr(module, name, counted)
    return seen
