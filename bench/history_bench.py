#!/usr/bin/env python3
"""``errcat history`` over many releases: time per release and peak memory for 1, 3, 5, 10 ...
releases, against an up-to-date crawl, in one run.

    python bench/history_bench.py --repo /work/data/vllm-long v0.24.0 v0.25.0 ... v0.33.0   # 12 releases

The repository is one built by ../shared/tools/vllm-releases (or bench/bench.py). First one
history run over every release fills the extraction cache (not timed; ``--cache-dir`` keeps that
cache for the next bench run, which then fills only what is missing); then, with that cache:

- up-to-date crawl: ``errcat crawl`` of the newest release when its dataset is in place (the
  median of three), the unit the target is stated in;
- history over the newest 1, 3, 5, 10, ... releases and all of them (each the median of ``--repeat`` runs): seconds
  per release, its ratio to the up-to-date crawl (target <= 3x, judged on the longest run: the
  target is a backfill's, of about a hundred releases) and the peak memory of the
  process tree (target: flat in the number of releases); and the same ratio in CPU seconds
  (user + system), which a loaded machine moves far less than the wall time; then a straight line
  through the curve: the one-off cost and what each further release adds.

Every command runs as a child process of the real CLI; memory is sampled as bench.py does.

Each timed run is measured as a user meets it, not as the bench's own runs before it leave the
machine:

- the file system is synced first (``os.sync``), so that writing back the ~11,500 files the
  warm-up or the previous history run created does not land in the timed run's wall time (it
  is the previous command's cost, and a user's run does not follow one that wrote as much
  seconds before); the timed run's own write-back comes after it, as a user's does;
- the copy of the last history's errors.jsonl.gz that the cache keeps (``history_reuse``) is
  removed, so that no history is timed taking over the gzip members of the very history the
  warm-up (or its previous repeat) rendered: each timed history compresses the lines it writes
  for the first time, as a backfill that has reached a new release does (a live entry's line
  is unchanged, but a new or retired entry changes ~200 of the 256 members). Without this,
  five releases took over every member the warm-up made and one and three none, so the curve
  compared unlike runs.
"""

from __future__ import annotations

import argparse
import os
import resource
import shutil
import statistics
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
from bench import compile_errcat, measured  # noqa: E402

RATIO_TARGET = 3.0


def _children_cpu() -> tuple[float, float]:
    used = resource.getrusage(resource.RUSAGE_CHILDREN)
    return used.ru_utime, used.ru_stime


def run(args: list[str], env: dict[str, str]) -> tuple[float, int, str, float, float]:
    """Wall seconds, peak memory of the process tree (PSS, as bench.py measures it), stderr and
    CPU seconds (user + system, of the command and the processes it waited for) of one errcat
    command, and of those the system's: on a shared machine the CPU time moves far less with
    the load than the wall time, and most of what it does move is the kernel's (creating files
    on a disk others are deleting files on)."""
    user, system = _children_cpu()
    seconds, peak, _, err, status = measured(args, env)
    if status != 0:
        sys.exit(f"history_bench: errcat {' '.join(args)} failed ({status}):\n{err}")
    user_after, system_after = _children_cpu()
    return seconds, peak[0], err, user_after - user + system_after - system, system_after - system


def settled(cache: Path) -> None:
    """Before a timed run: the file system synced and the last history's gzip members forgotten
    (see the module docstring)."""
    shutil.rmtree(cache / "history", ignore_errors=True)
    os.sync()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--repo", type=Path, required=True, help="a git repo of vLLM releases")
    parser.add_argument("releases", nargs="+", help="release tags, oldest first (at least 5 for the full curve)")
    parser.add_argument("--repeat", type=int, default=1, help="runs of each history measurement; medians reported")
    parser.add_argument("--cache-dir", type=Path, help="the cache to use and keep (default: a fresh one, removed after)")
    opts = parser.parse_args()
    root = HERE.parent
    compile_errcat(root)
    env = dict(os.environ, PYTHONPATH=str(root) + os.pathsep + os.environ.get("PYTHONPATH", ""))
    common = ["--repo", str(opts.repo.resolve()), "--name", "vllm-project/vllm"]
    sizes = sorted({n for n in (1, 3, 5, 10, 20, 50, 100) if n <= len(opts.releases)} | {len(opts.releases)})
    (HERE / ".data").mkdir(exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="history-", dir=HERE / ".data") as tmp:
        work = Path(tmp)
        cache = opts.cache_dir.resolve() if opts.cache_dir is not None else work / "cache"
        env["ERRCAT_CACHE_DIR"] = str(cache)
        print(f"filling the extraction cache: history over {len(opts.releases)} releases...", file=sys.stderr)
        run(["history", *common, "--out", str(work / "warmup"), *opts.releases], env)
        newest = opts.releases[-1]
        run(["crawl", *common, "--ref", newest, "--out", str(work / "crawl")], env)
        up_to_date, up_to_date_cpu = [], []
        for _ in range(3):
            settled(cache)
            seconds, _, err, cpu, _ = run(["crawl", *common, "--ref", newest, "--out", str(work / "crawl")], env)
            if "is up to date" not in err:
                sys.exit(f"history_bench: the crawl of {newest} did not find its dataset up to date:\n{err}")
            up_to_date.append(seconds)
            up_to_date_cpu.append(cpu)
        unit, unit_cpu = statistics.median(up_to_date), statistics.median(up_to_date_cpu)
        curve = []
        for n in sizes:
            times, peaks, cpus, kernel = [], [], [], []
            for k in range(opts.repeat):
                settled(cache)
                seconds, peak, _, cpu, system = run(["history", *common, "--out", str(work / f"h{n}-{k}"), *opts.releases[-n:]], env)
                times.append(seconds)
                peaks.append(peak)
                cpus.append(cpu)
                kernel.append(system)
            curve.append((n, statistics.median(times), max(peaks), statistics.median(cpus), statistics.median(kernel)))
    print(f"up-to-date crawl of {newest}: {unit:.2f}s, {unit_cpu:.2f}s CPU (median of 3: {', '.join(f'{s:.2f}' for s in up_to_date)})")
    ok = True
    for n, seconds, peak, cpu, system in curve:
        per = seconds / n
        # The target is a backfill's (#18: "about a hundred releases ... time per cached release
        # at most 3x"): judged on the longest run; the shorter ones draw the curve, the one-off
        # cost of writing a dataset shared over fewer releases.
        verdict = ""
        if n == curve[-1][0]:
            met = per / unit <= RATIO_TARGET
            ok &= met
            verdict = f" (target <= {RATIO_TARGET}x) {'met' if met else 'MISSED'}"
        print(
            f"history over {n} release(s): {seconds:7.2f}s  {per:6.2f}s per release  {per / unit:5.2f}x the up-to-date crawl"
            f"{verdict}  peak {peak / 2**20:5.0f} MiB"
            f"  | CPU {cpu / n:5.2f}s per release ({system / n:4.2f}s of it system), {cpu / n / unit_cpu:5.2f}x the crawl's"
        )
    if len(curve) > 1:
        # A straight line through the curve (least squares): the one-off cost (the dataset
        # written once, the newest state's joins) and what each further release adds, the
        # per-release time a backfill of many releases tends to.
        ns, ss = [c[0] for c in curve], [c[1] for c in curve]
        step, fixed = statistics.linear_regression(ns, ss)
        print(
            f"a line through the curve: {fixed:.1f}s once + {step:.2f}s ({step / unit:.2f}x the up-to-date crawl) per release;"
            f" a backfill of 100 releases by it: {(fixed / 100 + step) / unit:.2f}x per release"
        )
        growth = curve[-1][2] / curve[0][2]
        print(f"peak memory {curve[-1][0]} releases / 1 release: {growth:.2f}x (flat: <= 1.25x) {'met' if growth <= 1.25 else 'MISSED'}")
        ok &= growth <= 1.25
    sys.exit(0 if ok else 1)


if __name__ == "__main__":
    main()
