#!/usr/bin/env python3
"""Is the fold's memory flat in the number of releases? ``errcat history --fold`` of the newest N
per-release datasets under ROOT (as ``--per-release`` or ``bench/backfill_bench.py`` writes them),
for each N, in a child process whose resident memory is read from ``/proc`` every 0.2 s: the
peak, and the memory as the fold begins each release (its progress line), so a fold of 100
shows whether its 100th release costs more than its 10th.

    python bench/fold_memory.py /work/scratch-backfill/run/releases-warm --work DIR 10 30 101

Prints, for each N: wall seconds, peak RSS (MiB), the records written; then for the largest N the
RSS at every tenth release folded. The fold is the real CLI (``python -m crawler``).
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import subprocess
import sys
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
STEP = re.compile(rb"history: folding (\S+) \((\d+)/(\d+)\)")


def rss_mib(pid: int) -> int:
    """The resident memory of process ``pid`` in MiB (0 once it is gone)."""
    try:
        status = Path(f"/proc/{pid}/status").read_text()
    except OSError:
        return 0
    found = re.search(r"VmRSS:\s+(\d+) kB", status)
    return int(found.group(1)) // 1024 if found else 0


def newest(root: Path, n: int) -> list[Path]:
    """The newest ``n`` release directories under ``root`` (each ROOT/VERSION/...), by PEP 440."""
    from packaging.version import InvalidVersion, Version

    def key(p: Path) -> Version:
        try:
            return Version(p.name)
        except InvalidVersion:
            raise SystemExit(f"{p}: not a release directory (ROOT/VERSION/...)") from None

    releases = sorted((p for p in root.iterdir() if p.is_dir()), key=key)
    return releases[-n:]


def fold(datasets: list[Path], out: Path, log: Path) -> tuple[float, int, list[tuple[int, str, int]], int]:
    """(wall s, peak MiB, [(step, version, MiB as that step began)], records written)."""
    shutil.rmtree(out, ignore_errors=True)
    env = dict(os.environ, PYTHONPATH=str(ROOT), ERRCAT_PROGRESS="lines")
    cmd = [sys.executable, "-m", "crawler", "history", "--fold", *map(str, datasets), "--out", str(out)]
    start = time.monotonic()
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, env=env, cwd=ROOT)
    peak = 0
    done = threading.Event()

    def sample() -> None:
        nonlocal peak
        while not done.is_set():
            peak = max(peak, rss_mib(proc.pid))
            time.sleep(0.2)

    sampler = threading.Thread(target=sample, daemon=True)
    sampler.start()
    steps: list[tuple[int, str, int]] = []
    assert proc.stdout is not None
    with open(log, "wb") as keep:
        for line in proc.stdout:
            keep.write(line)
            found = STEP.search(line)
            if found:
                now = rss_mib(proc.pid)
                peak = max(peak, now)
                steps.append((int(found.group(2)), found.group(1).decode(), now))
    code = proc.wait()
    done.set()
    sampler.join()
    wall = time.monotonic() - start
    if code != 0:
        raise SystemExit(f"the fold of {len(datasets)} failed ({code}): see {log}")
    manifest = next(out.rglob("manifest.json"))
    return wall, peak, steps, sum(1 for p in (manifest.parent / "errors").rglob("*") if p.is_file())


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("root", type=Path, help="per-release datasets, ROOT/VERSION/owner/name/")
    ap.add_argument("counts", nargs="+", type=int, help="how many of the newest releases to fold, e.g. 10 30 101")
    ap.add_argument("--work", type=Path, required=True, help="scratch directory (the folds' output and logs)")
    args = ap.parse_args()
    args.work.mkdir(parents=True, exist_ok=True)
    load = os.getloadavg()
    print(f"load average at start: {load[0]:.1f} {load[1]:.1f} {load[2]:.1f}; {os.cpu_count()} cores", flush=True)
    print("| releases folded | oldest | wall s | peak MiB | records |\n| ---: | --- | ---: | ---: | ---: |")
    last: list[tuple[int, str, int]] = []
    for n in args.counts:
        datasets = newest(args.root, n)
        wall, peak, steps, records = fold(datasets, args.work / f"fold-{n}", args.work / f"fold-{n}.log")
        print(f"| {len(datasets)} | {datasets[0].name} | {wall:.1f} | {peak} | {records:,} |", flush=True)
        last = steps
    if last:
        print(f"\nRSS as each release's fold began (fold of {len(last)}):")
        print(", ".join(f"{n} ({v}): {mib}" for n, v, mib in last if n == 1 or n % 10 == 0 or n == len(last)))
    load = os.getloadavg()
    print(f"\nload average at end: {load[0]:.1f} {load[1]:.1f} {load[2]:.1f}")


if __name__ == "__main__":
    main()
