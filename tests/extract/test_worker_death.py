"""A worker killed mid-crawl (a crash in C code, the OOM killer): the files left are extracted
again in a bounded number of processes, with the results of a crawl where none died, and only
the file that killed its process is skipped."""

from __future__ import annotations

import gzip
import json
import os
import signal

import pytest

from crawler.extract import runner

FILES = {f"pkg/m{i:03}.py": f"def f{i}(x):\n    raise ValueError('m{i}: bad x')\n" for i in range(200)}
CULPRIT = "pkg/m037.py"


def _crawl(cli, repo, out):
    result = cli("crawl", "--repo", repo.path, "--ref", "v1", "--name", "acme/widgets", "--include", "pkg/**/*.py", "--out", out, "--jobs", "2", "--no-cache")
    assert result.exit_code == 0, result.output
    dataset = out / "acme" / "widgets"
    rows = [json.loads(line) for line in gzip.decompress((dataset / "errors.jsonl.gz").read_bytes()).splitlines()]
    return json.loads((dataset / "manifest.json").read_bytes()), {r["id"]: r for r in rows}


@pytest.mark.slow
def test_the_files_left_after_a_worker_died_take_a_bounded_number_of_processes(fixture_repo, cli, tmp_path, monkeypatch):
    fixture_repo.commit({"pkg/__init__.py": "", **FILES}, tag="v1")
    _, whole = _crawl(cli, fixture_repo, tmp_path / "whole")  # no worker dies

    real, log = runner.extract_file, tmp_path / "pids"

    def crashing(path: str, data: bytes, *settings):
        with log.open("a") as fh:
            fh.write(f"{os.getpid()}\n")
        if path == CULPRIT:
            os.kill(os.getpid(), signal.SIGKILL)
        return real(path, data, *settings)

    monkeypatch.setattr(runner, "extract_file", crashing)  # the workers are forked: they see it
    monkeypatch.setattr(runner, "CHUNK_BYTES", 20_000)  # (about ten files a chunk: twenty chunks)
    manifest, died = _crawl(cli, fixture_repo, tmp_path / "died")

    assert manifest["skipped"] == [{"path": CULPRIT, "reason": runner.DIED}]
    assert died == {rid: r for rid, r in whole.items() if r["location"]["path"] != CULPRIT}
    assert len(whole) == len(died) + 1
    # one process a file for the 160-odd files left was what the fallback did; now a fresh pool,
    # each chunk lost with the death alone, and the culprit's chunk halved down to its file
    processes = set(log.read_text().split())
    assert len(processes) <= 30, len(processes)
