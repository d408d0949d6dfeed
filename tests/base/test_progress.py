"""Progress on stderr: a bar on a terminal (a real pseudo-terminal here), plain lines in a log."""

from __future__ import annotations

import fcntl
import functools
import hashlib
import http.server
import io
import os
import pty
import re
import struct
import subprocess
import sys
import termios
import threading
import zipfile
from base64 import urlsafe_b64encode
from pathlib import Path

import consumer_data as cd
import pytest

from crawler.base.progress import Reporter, task
from crawler.source import wheel as source_wheel

ROOT = Path(__file__).resolve().parents[2]


class FakeClock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def test_lines_come_every_interval_with_counts_and_a_pace_based_eta():
    out, clock = io.StringIO(), FakeClock()
    reporter = Reporter(stream=out, mode="lines", interval=10, clock=clock)
    with reporter.task("validating", 100, "documents") as work:
        for _ in range(40):
            clock.now += 1
            work.advance()
    assert out.getvalue().splitlines() == [
        "validating: 100 documents",
        "validating: 10/100 documents (10%), 0:10, about 1:30 left",
        "validating: 20/100 documents (20%), 0:20, about 1:20 left",
        "validating: 30/100 documents (30%), 0:30, about 1:10 left",
        "validating: 40/100 documents (40%), 0:40, about 1:00 left",
        "validating: 40/100 documents in 40.0s",
    ]


def test_the_eta_follows_the_current_pace_not_a_slow_start():
    out, clock = io.StringIO(), FakeClock()
    reporter = Reporter(stream=out, mode="lines", interval=30, clock=clock)
    with reporter.task("validating", 1000, "documents") as work:
        clock.now += 20  # building the validator: the first document takes 20 s
        work.advance()
        for _ in range(30):  # then ten a second
            clock.now += 1
            work.advance(10)
    # ten a second with 899 to go: 1:29 (the average since the start would say 4:27)
    assert out.getvalue().splitlines()[1] == "validating: 101/1,000 documents (10%), 0:30, about 1:29 left"


def test_a_note_during_a_bar_erases_it_and_draws_it_again():
    out, clock = io.StringIO(), FakeClock()
    reporter = Reporter(stream=out, mode="bar", clock=clock)
    work = reporter.task("extracting", 10, "files")
    clock.now += 1
    work.advance(5)
    reporter("a worker process died; extracting 5 files one process each")
    clock.now += 1
    work.advance(5)
    work.close()
    frames = out.getvalue().split("\r\x1b[K")
    assert frames[0] == "" and all(len(f.rstrip("\n")) <= 79 for f in frames)
    assert frames[1] == "extracting  " + "-" * 33 + "  0/10 files    0%  0:00  ETA -:--"
    assert frames[2] == "extracting  " + "#" * 16 + "-" * 17 + "  5/10 files   50%  0:01  ETA 0:01"
    assert frames[3] == "a worker process died; extracting 5 files one process each\n"  # the bar erased first
    assert frames[4] == frames[2]  # and drawn again below the note
    assert frames[5] == "extracting  " + "#" * 32 + "  10/10 files  100%  0:02  ETA 0:00"
    assert frames[6:] == ["extracting: 10 files in 2.0s\n"]  # the bar gives way to a summary line


def test_bar_frames_are_throttled_to_ten_a_second():
    out, clock = io.StringIO(), FakeClock()
    reporter = Reporter(stream=out, mode="bar", clock=clock)
    with reporter.task("validating", 1000, "documents") as work:
        for _ in range(1000):
            clock.now += 0.001
            work.advance()
    assert 10 <= out.getvalue().count("\r\x1b[K") <= 14  # the first frame, one per 0.1 s, the last, the erase


def test_a_plain_callable_gets_one_note_and_counts_go_nowhere():
    notes: list[str] = []
    with task(notes.append, "extracting", 2989, "files") as work:
        work.advance(10)
    assert notes == ["extracting: 2,989 files"]


# --------------------------------------------------------------------------- the real command


def _errcat_in_a_terminal(args: list[str], columns: int = 100) -> tuple[bytes, bytes, int]:
    """Run errcat with stderr on a pseudo-terminal (stdout a pipe): (terminal bytes, stdout, exit code)."""
    master, slave = pty.openpty()
    fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", 30, columns, 0, 0))
    env = {k: v for k, v in os.environ.items() if not k.startswith("ERRCAT_PROGRESS")}
    env.update(TERM="xterm", PYTHONIOENCODING="utf-8", PYTHONPATH=str(ROOT))
    proc = subprocess.Popen([sys.executable, "-m", "crawler", *args], stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=slave, env=env)
    os.close(slave)
    screen = b""
    while True:
        try:
            chunk = os.read(master, 65536)
        except OSError:  # EIO: the terminal's last writer is gone
            break
        if not chunk:
            break
        screen += chunk
    os.close(master)
    with proc.stdout:  # closed here: left to the collector it warned (ResourceWarning) in a later test
        stdout = proc.stdout.read()
    return screen, stdout, proc.wait(timeout=120)


DOCUMENTS = 3 + 2 * len(cd.records())


@pytest.mark.slow
def test_validate_draws_a_bar_on_a_terminal_and_keeps_results_on_stdout(tmp_path):
    dataset = cd.write(tmp_path)
    screen, stdout, code = _errcat_in_a_terminal(["validate", str(dataset)], columns=len(str(dataset)) + 100)
    assert code == 0 and stdout == f"{dataset}: valid\n".encode()
    text = screen.decode("utf-8")
    frames = [f for f in text.split("\r\x1b[K") if f]
    docs = DOCUMENTS  # manifest, index, search.json, and each record twice (its file and its line)
    assert frames[0].startswith(f"validating {dataset}  ") and "░" in frames[0] and f"0/{docs} documents" in frames[0]
    assert any("█" * 10 in f and f"{docs}/{docs} documents  100%" in f for f in frames)
    assert re.search(rf": {docs} documents in \d+\.\ds\r?\n$", text)


@pytest.mark.slow
def test_validate_writes_plain_lines_when_stderr_is_not_a_terminal(tmp_path):
    dataset = cd.write(tmp_path)
    env = {**os.environ, "PYTHONPATH": str(ROOT), "ERRCAT_PROGRESS_INTERVAL": "0"}
    env.pop("ERRCAT_PROGRESS", None)
    proc = subprocess.run([sys.executable, "-m", "crawler", "validate", str(dataset)], capture_output=True, text=True, env=env, timeout=120)
    assert proc.returncode == 0 and proc.stdout == f"{dataset}: valid\n"
    lines = proc.stderr.splitlines()
    assert "\r" not in proc.stderr and "\x1b" not in proc.stderr
    assert lines[0] == f"validating {dataset}: {DOCUMENTS} documents"
    assert f"validating {dataset}: {DOCUMENTS}/{DOCUMENTS} documents (100%), 0:00" in lines
    assert re.fullmatch(rf"validating {re.escape(str(dataset))}: {DOCUMENTS} documents in \d+\.\ds", lines[-1])


# --------------------------------------------------------------------------- downloading a wheel


def _wheel(path: Path, payload: bytes) -> Path:
    """A real (if small) wheel: pkg/config.py with a raise, and a large incompressible data file."""
    files = {
        "pkg/__init__.py": b"",
        "pkg/config.py": b"def check(x):\n    if x < 0:\n        raise ValueError(f'x must be positive, got {x}')\n",
        "pkg/blob.bin": payload,
        "pkg-1.0.dist-info/METADATA": b"Metadata-Version: 2.1\nName: pkg\nVersion: 1.0\n",
        "pkg-1.0.dist-info/WHEEL": b"Wheel-Version: 1.0\nGenerator: test\nRoot-Is-Purelib: true\nTag: py3-none-any\n",
    }
    record = (
        "".join(f"{name},sha256={urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b'=').decode()},{len(data)}\n" for name, data in files.items())
        + "pkg-1.0.dist-info/RECORD,,\n"
    )
    with zipfile.ZipFile(path, "w", compression=zipfile.ZIP_STORED) as z:
        for name, data in files.items():
            z.writestr(name, data)
        z.writestr("pkg-1.0.dist-info/RECORD", record)
    return path


@pytest.fixture
def package_index(tmp_path):
    """A package index on the loopback interface serving one 1.5 MB wheel of pkg 1.0."""
    root = tmp_path / "index"
    (root / "simple" / "pkg").mkdir(parents=True)
    wheel = _wheel(root / "pkg-1.0-py3-none-any.whl", os.urandom(1_500_000))
    (root / "simple" / "pkg" / "index.html").write_text(f'<a href="/{wheel.name}">{wheel.name}</a>\n')
    handler = functools.partial(http.server.SimpleHTTPRequestHandler, directory=str(root))
    handler.log_message = lambda *a: None  # type: ignore[attr-defined]
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/simple/", wheel.stat().st_size
    finally:
        server.shutdown()
        server.server_close()


@pytest.mark.slow
def test_the_wheel_download_shows_its_bytes(package_index, tmp_path):
    if not source_wheel._pip_has_raw_progress():
        pytest.skip("pip older than 24.1 prints no progress lines (install requirements/bootstrap.txt)")
    url, size = package_index
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PIP_", "ERRCAT_PROGRESS"))}
    env.update(
        PIP_CONFIG_FILE=os.devnull,
        PIP_INDEX_URL=url,
        PIP_NO_CACHE_DIR="1",
        PIP_DISABLE_PIP_VERSION_CHECK="1",
        ERRCAT_CACHE_DIR=str(tmp_path / "cache"),
        ERRCAT_PROGRESS_INTERVAL="0",
        PYTHONPATH=str(ROOT),
    )
    proc = subprocess.run(
        [sys.executable, "-m", "crawler", "crawl", "--pypi", "pkg==1.0", "--name", "acme/pkg", "--include", "pkg/**/*.py", "--out", str(tmp_path / "out")],
        capture_output=True,
        text=True,
        env=env,
        timeout=300,
        cwd=tmp_path,
    )
    assert proc.returncode == 0, proc.stderr
    lines = proc.stderr.splitlines()
    mb = f"{size / 1e6:.1f}"
    assert lines[0] == "downloading pkg==1.0 ..."
    assert any(line.startswith(f"downloading pkg==1.0: 0.0/{mb} MB (0%), ") for line in lines), lines
    assert any(line.startswith(f"downloading pkg==1.0: {mb}/{mb} MB (100%), ") for line in lines), lines
    assert any(re.fullmatch(rf"downloading pkg==1\.0: {mb} MB in \d+\.\ds", line) for line in lines), lines
    assert "sites 1, entries 1" in proc.stdout
    assert sorted(p.name for p in (tmp_path / "cache" / "pypi" / "pkg-1.0").iterdir()) == ["pkg-1.0-py3-none-any.whl"]
