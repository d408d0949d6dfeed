"""Scratch of diff, history and sync: in the cache directory, locked while its run lives, removed
by the next run once that run is gone (SIGKILL included)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from helpers import CHECK_CODE

from crawler.base.scratch import ROOT, run_dir

REPO_ROOT = Path(__file__).resolve().parents[2]
ARGS = ["--name", "acme/widgets", "--include", "pkg/**/*.py", "--jobs", "1"]
TAGS = [f"v1.{n}" for n in range(6)]


def env_for(cache: Path, tmp: Path) -> dict[str, str]:
    return dict(os.environ, PYTHONPATH=str(REPO_ROOT) + os.pathsep + os.environ.get("PYTHONPATH", ""), ERRCAT_CACHE_DIR=str(cache), TMPDIR=str(tmp))


def scratch_left(cache: Path, tmp: Path) -> list[Path]:
    """Whatever a run keeps its crawls in: this run's scratch, or $TMPDIR/errcat-* where it once was."""
    return sorted([*tmp.glob("errcat-*"), *(cache / ROOT).glob("*")])


@pytest.fixture
def tagged(fixture_repo):
    fixture_repo.commit({"pkg/__init__.py": ""})
    for n, tag in enumerate(TAGS):
        fixture_repo.commit({f"pkg/m{n}.py": CHECK_CODE.replace("positive", f"positive ({n})")}, tag=tag)
    return fixture_repo


@pytest.mark.slow
@pytest.mark.parametrize("command", ["history", "diff"])
def test_a_killed_run_leaves_no_scratch_once_the_next_has_run(tagged, tmp_path, command):
    cache, tmp = tmp_path / "cache", tmp_path / "tmp"
    tmp.mkdir()
    if command == "history":
        args = ["history", "--repo", str(tagged.path), *ARGS, "--out", str(tmp_path / "out"), *TAGS]
    else:
        args = ["diff", TAGS[0], TAGS[-1], "--repo", str(tagged.path), *ARGS]
    run = [sys.executable, "-m", "crawler", *args]
    proc = subprocess.Popen(run, env=env_for(cache, tmp), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:  # kill it as soon as its first crawl is under way
        deadline = time.monotonic() + 120
        while proc.poll() is None and time.monotonic() < deadline:
            if any(p.name.startswith("crawl-") for d in scratch_left(cache, tmp) if d.is_dir() for p in d.iterdir()):
                break
            time.sleep(0.002)
    finally:
        proc.send_signal(signal.SIGKILL)
        proc.wait()
    assert proc.returncode == -signal.SIGKILL, "the run ended before it could be killed"
    assert scratch_left(cache, tmp), "a killed run leaves its scratch behind"
    again = subprocess.run(run, env=env_for(cache, tmp), capture_output=True, timeout=300)
    assert again.returncode == 0, again.stderr.decode()
    assert scratch_left(cache, tmp) == []


# A run that forks a helper which outlives it (an extraction worker can): the helper must not
# keep the run's lock, or its scratch would never be removed.
ORPHANING_RUN = r"""
import os, sys, time
from pathlib import Path
from crawler.base.scratch import run_dir

with run_dir(Path(sys.argv[1])) as scratch:
    (scratch / "crawl-x").mkdir()
    if os.fork() == 0:
        os.write(1, f"helper {os.getpid()}\n".encode())  # past the fork: what it inherits is settled
        time.sleep(120)
        os._exit(0)
    os.write(1, f"run {scratch}\n".encode())  # one write each: the two lines never interleave
    time.sleep(120)
"""


def test_scratch_of_a_dead_run_goes_even_while_its_forked_helper_lives(tmp_path):
    cache = tmp_path / "cache"
    proc = subprocess.Popen([sys.executable, "-c", ORPHANING_RUN, str(cache)], env=env_for(cache, tmp_path), stdout=subprocess.PIPE, text=True)
    helper = None
    try:
        with proc.stdout:
            said = dict(proc.stdout.readline().split() for _ in range(2))
        dead, helper = said["run"], int(said["helper"])
        proc.send_signal(signal.SIGKILL)
        proc.wait(60)
        os.kill(helper, 0)  # the helper lives on, an orphan
        with run_dir(cache) as mine:
            assert not Path(dead).exists()
            assert [p.name for p in (cache / ROOT).iterdir()] == [mine.name]
        assert list((cache / ROOT).iterdir()) == []
    finally:
        proc.kill()
        proc.wait()
        if helper is not None:
            try:
                os.kill(helper, signal.SIGKILL)
            except ProcessLookupError:
                pass


def test_a_live_runs_scratch_is_never_taken(tmp_path):
    cache = tmp_path / "cache"
    with run_dir(cache) as first:
        (first / "crawl-a").mkdir()
        with run_dir(cache) as second:  # its sweep finds the first locked
            assert first.is_dir() and (first / "crawl-a").is_dir() and second != first
        assert first.is_dir() and not second.exists()
    assert not first.exists()


@pytest.mark.slow
def test_a_crawl_removes_what_killed_runs_left_and_keeps_a_live_one(fixture_repo, cli, cache_dir, tmp_path):
    fixture_repo.commit({"pkg/__init__.py": "", "pkg/a.py": CHECK_CODE}, tag="v1")
    dead = cache_dir / ROOT / "run-killed"
    (dead / "crawl-x" / "acme").mkdir(parents=True)
    with run_dir(cache_dir) as live:
        result = cli("crawl", "--repo", fixture_repo.path, "--ref", "v1", *ARGS, "--out", tmp_path / "out")
        assert result.exit_code == 0, result.output
        assert not dead.exists() and live.is_dir()


@pytest.mark.slow
def test_crawls_into_scratch_leave_no_record_memo_behind(tagged, cli, cache_dir, tmp_path):
    """The record memo is of the directory a dataset was written to; a crawl into a run's scratch
    (diff, sync) writes where no later run writes again, so its memo (1.3 MB for vLLM) would
    only pile up in the cache, one per run."""
    memos = cache_dir / "records"
    assert cli("crawl", "--repo", tagged.path, "--ref", TAGS[0], *ARGS, "--out", tmp_path / "out").exit_code == 0
    kept = sorted(memos.iterdir())
    assert len(kept) == 1  # a crawl's own output keeps its memo
    assert cli("diff", TAGS[0], TAGS[1], "--repo", tagged.path, *ARGS).exit_code == 0
    result = cli("sync", "--repo", tagged.path, "--ref", TAGS[2], *ARGS, "--out", tmp_path / "synced")
    assert result.exit_code == 0, result.output
    result = cli("sync", "--repo", tagged.path, "--ref", TAGS[3], *ARGS, "--out", tmp_path / "synced")
    assert result.exit_code == 0, result.output
    assert sorted(memos.iterdir()) == kept
