#!/usr/bin/env python3
"""A backfill of vLLM's releases from their wheels, measured as a maintainer runs it: each release
crawled into its own dataset (``errcat history --pypi --per-release``, one process a release, as
a matrix job runs them one after another), cold (an empty cache directory: every wheel downloaded,
every file parsed) and warm (the same cache again: the wheels and the per-file results kept);
then the fold of every dataset into one catalogue (``history --fold``), that catalogue's size,
and the daily sync's one-file commit over it next to the same sync over one release's catalogue.

    python bench/backfill_bench.py --repo /work/vllm --work /work/scratch-history/bench \\
        0.4.3 0.5.5 0.6.6.post1 ... 0.33.0

Every command is the real CLI in a child process under ``/usr/bin/time`` (wall seconds, and the
peak RSS of the largest process of its tree, which is what the machine must hold). The sync's
one-file commit is made with git plumbing in a bare clone (nothing checked out): v0.33.0 with a
comment put first in one file. Prints a Markdown table for bench/RESULTS.md.
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

from packaging.version import Version

ROOT = Path(__file__).resolve().parent.parent
GITHUB_WARNING = 50 * 1024 * 1024


#: Each run's user + system CPU seconds, by its log's name (``errcat`` fills it): on a shared
#: machine wall time follows the load, CPU much less.
CPU: dict[str, float] = {}


def errcat(args: list[str], log: Path, env: dict[str, str]) -> tuple[float, int]:
    """Run ``errcat ARGS``: (wall seconds, peak RSS in MiB of the largest process); its CPU in ``CPU``."""
    timing = log.with_suffix(".time")
    cmd = ["/usr/bin/time", "-f", "%U %S %e %M", "-o", str(timing), sys.executable, "-m", "crawler", *args]
    with open(log, "wb") as out:
        proc = subprocess.run(cmd, stdout=out, stderr=subprocess.STDOUT, env=env, cwd=ROOT)
    if proc.returncode != 0:
        raise SystemExit(f"errcat {' '.join(args)} failed ({proc.returncode}): see {log}")
    user, system, wall, rss = timing.read_text().split()[-4:]
    CPU[log.name] = float(user) + float(system)
    return float(wall), int(rss) // 1024


def size_of(dataset: Path) -> tuple[int, int, str, int]:
    files = [p for p in dataset.rglob("*") if p.is_file()]
    biggest = max(files, key=lambda p: p.stat().st_size)
    return len(files), sum(p.stat().st_size for p in files), biggest.name, biggest.stat().st_size


def contents(root: Path) -> dict[str, bytes]:
    """Each file's SHA-256 under ``root``: what a commit of the sync's output would change."""
    import hashlib

    return {p.relative_to(root).as_posix(): hashlib.sha256(p.read_bytes()).digest() for p in root.rglob("*") if p.is_file()}


def packed_bytes(root: Path, message: str) -> int:
    """Commit ``root`` as it is into a git repository kept beside it (``root``.git, made on the
    first call) and repack: the bytes of its packs after that commit, so the difference between two
    calls is what a repository holding the catalogue pays for the second, after git's deltas and
    compression."""
    git = ["git", "--git-dir", str(root.with_name(root.name + ".git")), "--work-tree", str(root)]
    env = dict(os.environ, GIT_AUTHOR_NAME="bench", GIT_AUTHOR_EMAIL="b@example.invalid", GIT_COMMITTER_NAME="bench", GIT_COMMITTER_EMAIL="b@example.invalid")
    if not root.with_name(root.name + ".git").exists():
        subprocess.run(["git", "init", "-q", "--bare", str(root.with_name(root.name + ".git"))], check=True)
    subprocess.run([*git, "add", "-A", "."], check=True, env=env)
    subprocess.run([*git, "commit", "-q", "--allow-empty", "-m", message], check=True, env=env)
    subprocess.run([*git, "repack", "-a", "-d", "-f", "-q"], check=True, env=env)
    packs = root.with_name(root.name + ".git") / "objects" / "pack"
    return sum(p.stat().st_size for p in packs.glob("*.pack"))


def one_file_commit(repo: Path, clone: Path, ref: str, path: str) -> str:
    """``ref`` with a comment put first in ``path``, committed in a bare clone of ``repo``."""
    if not clone.exists():
        subprocess.run(["git", "clone", "-q", "--bare", "--shared", str(repo), str(clone)], check=True)
    git = ["git", "--git-dir", str(clone)]
    env = dict(
        os.environ,
        GIT_INDEX_FILE=str(clone / "bench-index"),
        GIT_AUTHOR_NAME="bench",
        GIT_AUTHOR_EMAIL="b@example.invalid",
        GIT_COMMITTER_NAME="bench",
        GIT_COMMITTER_EMAIL="b@example.invalid",
        GIT_AUTHOR_DATE="1767323045 +0000",
        GIT_COMMITTER_DATE="1767323045 +0000",
    )
    subprocess.run([*git, "read-tree", ref], check=True, env=env)
    old = subprocess.run([*git, "show", f"{ref}:{path}"], check=True, capture_output=True).stdout
    blob = (
        subprocess.run([*git, "hash-object", "-w", "--stdin"], input=b"# bench: one file changed\n" + old, check=True, capture_output=True)
        .stdout.decode()
        .strip()
    )
    mode = subprocess.run([*git, "ls-tree", ref, "--", path], check=True, capture_output=True, text=True).stdout.split()[0]
    subprocess.run([*git, "update-index", "--cacheinfo", f"{mode},{blob},{path}"], check=True, env=env)
    tree = subprocess.run([*git, "write-tree"], check=True, capture_output=True, text=True, env=env).stdout.strip()
    parent = subprocess.run([*git, "rev-parse", f"{ref}^{{commit}}"], check=True, capture_output=True, text=True).stdout.strip()
    return subprocess.run(
        [*git, "commit-tree", tree, "-p", parent, "-m", "bench: one file"], check=True, capture_output=True, text=True, env=env
    ).stdout.strip()


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("versions", nargs="+", help="releases, oldest first (e.g. the last patch of each minor)")
    ap.add_argument("--repo", type=Path, required=True, help="a local vLLM repository with the newest release's tag (for the sync)")
    ap.add_argument("--work", type=Path, required=True, help="scratch directory (caches, datasets, logs)")
    ap.add_argument("--sync-ref", default="v0.33.0", help="the git tag of the newest release (the sync's starting point)")
    ap.add_argument("--sync-file", default="vllm/config/__init__.py", help="the file the one-file commit changes")
    ap.add_argument("--skip-cold", action="store_true", help="keep the cache (the cold pass was run before)")
    ap.add_argument("--sync-only", action="store_true", help="only the syncs, over the fold a previous run left in --work")
    args = ap.parse_args()
    work = args.work.resolve()
    work.mkdir(parents=True, exist_ok=True)
    cache, logs = work / "cache", work / "logs"
    logs.mkdir(exist_ok=True)
    env = dict(os.environ, PYTHONPATH=str(ROOT), ERRCAT_CACHE_DIR=str(cache), ERRCAT_PROGRESS_INTERVAL="60")
    load = os.getloadavg()
    print(f"load average at start: {load[0]:.1f} {load[1]:.1f} {load[2]:.1f}; {os.cpu_count()} cores", flush=True)
    rows: dict[str, dict[str, tuple[float, int]]] = {}
    failures: list[str] = []
    passes = [] if args.sync_only else ["warm"] if args.skip_cold else ["cold", "warm"]
    if passes == ["cold", "warm"] and cache.exists():
        shutil.rmtree(cache)
    for name in passes:
        out = work / f"releases-{name}"
        shutil.rmtree(out, ignore_errors=True)
        for version in args.versions:
            try:
                rows.setdefault(version, {})[name] = errcat(["history", "--pypi", "--per-release", str(out), version], logs / f"{name}-{version}.log", env)
            except SystemExit as failed:  # one release failing must not cost the hour the others take: said, and the run goes on
                failures.append(f"{name} {version}: {failed}")
                print(f"{name} {version}: FAILED ({failed})", flush=True)
                continue
            wall, rss = rows[version][name]
            print(f"{name} {version}: {wall:.1f}s, {rss} MiB", flush=True)
    if failures:
        raise SystemExit("releases that failed:\n" + "\n".join(failures))
    releases = work / "releases-warm"
    folded = work / "folded"
    fold = (float("nan"), 0)
    if not args.sync_only:
        shutil.rmtree(folded, ignore_errors=True)
        fold = errcat(["history", "--fold", str(releases), "--out", str(folded)], logs / "fold.log", env)
    dataset = next(p.parent for p in folded.rglob("manifest.json"))
    files, total, biggest, biggest_bytes = size_of(dataset)
    print(
        f"fold of {len(args.versions)}: {fold[0]:.1f}s, {fold[1]} MiB; {files} files, {total / 1e6:.1f} MB, biggest {biggest} {biggest_bytes / 1e6:.1f} MB",
        flush=True,
    )

    # The daily sync: the folded catalogue taken to the newest tag in git once (not timed: the
    # switch from a wheel's dataset to git's), then a one-file commit (timed), twice (the first
    # day's and the next day's, below), against the same syncs over one release's catalogue.
    # The sync starts from a git tag: a catalogue folded past it (a release the tag predates, e.g.
    # 0.34.0 over a repository whose newest tag is v0.33.0) would be synced backwards, its newest
    # release's entries retired "in v0.33.0". The sync starts from the fold of the releases up to
    # the tag then, folded apart (and timed: a second fold, said so).
    upto = [v for v in args.versions if Version(v) <= Version(args.sync_ref.lstrip("v"))]
    start_dataset = dataset
    if len(upto) < len(args.versions):
        behind = work / "folded-sync"
        if not (args.sync_only and behind.is_dir()):
            shutil.rmtree(behind, ignore_errors=True)
            again = errcat(["history", "--fold", *(str(releases / v) for v in upto), "--out", str(behind)], logs / "fold-sync.log", env)
            print(f"fold of the {len(upto)} releases up to {args.sync_ref} (the sync's start): {again[0]:.1f}s, {again[1]} MiB", flush=True)
        start_dataset = next(p.parent for p in behind.rglob("manifest.json"))
        folded = behind
    commit = one_file_commit(args.repo.resolve(), work / "vllm.git", args.sync_ref, args.sync_file)
    next_day = one_file_commit(args.repo.resolve(), work / "vllm.git", commit, args.sync_file)  # its child: the file changed again
    first: dict[str, tuple[float, int]] = {}  # the first sync of the one-file commit
    synced: dict[str, tuple[float, int]] = {}  # the same sync again, the next day's (see below)
    churn: dict[str, tuple[int, int]] = {}
    packs: dict[str, tuple[int, int]] = {}  # (the catalogue packed in git, what the day's commit adds to the pack)
    for label, start in (("one release", None), ("history", start_dataset)):
        out = work / f"sync-{label.replace(' ', '-')}"
        shutil.rmtree(out, ignore_errors=True)
        if start is not None:
            shutil.copytree(start, out / start.relative_to(folded))
        errcat(["sync", "--repo", str(work / "vllm.git"), "--ref", args.sync_ref, "--out", str(out)], logs / f"sync0-{label}.log", env)
        time.sleep(1)
        os.sync()
        before = contents(out)
        stored = packed_bytes(out, "the catalogue")
        first[label] = errcat(["sync", "--repo", str(work / "vllm.git"), "--ref", commit, "--out", str(out)], logs / f"sync1-{label}.log", env)
        after = contents(out)
        changed = [rel for rel in after if before.get(rel) != after[rel]]
        churn[label] = (len(changed), sum((out / rel).stat().st_size for rel in changed))
        packs[label] = (stored, packed_bytes(out, "a day's sync") - stored)
        # The next day's sync, of the next one-file commit: the catalogue as the first left it,
        # and in the cache what it kept for the next (the retired records' memo,
        # ``versions.carried``, which a sync that found the catalogue up to date never wrote):
        # what the daily sync costs from then on, the figure compared.
        synced[label] = errcat(["sync", "--repo", str(work / "vllm.git"), "--ref", next_day, "--out", str(out)], logs / f"sync2-{label}.log", env)
        print(
            f"sync one-file commit over {label}: first {first[label][0]:.1f}s, {CPU[f'sync1-{label}.log']:.1f}s CPU, {first[label][1]} MiB; "
            f"{churn[label][0]} files changed, {churn[label][1]:,} bytes; the next day {synced[label][0]:.1f}s, "
            f"{CPU[f'sync2-{label}.log']:.1f}s CPU, {synced[label][1]} MiB",
            flush=True,
        )

    load = os.getloadavg()
    print(f"\nload average at end: {load[0]:.1f} {load[1]:.1f} {load[2]:.1f}\n")
    if rows:
        print("| release | cold s | cold MiB | warm s | warm MiB |\n| --- | ---: | ---: | ---: | ---: |")
    for version in rows:
        cold = rows[version].get("cold", (float("nan"), 0))
        warm = rows[version]["warm"]
        print(f"| {version} | {cold[0]:.1f} | {cold[1]} | {warm[0]:.1f} | {warm[1]} |")
    for name in passes:
        print(
            f"| **all {len(args.versions)}, {name}** | {sum(r[name][0] for r in rows.values()):.0f} s | max {max(r[name][1] for r in rows.values())} MiB | | |"
        )
    if not args.sync_only:
        print(
            f"\nfold: {fold[0]:.1f} s, peak {fold[1]} MiB; catalogue {files} files, {total:,} bytes; biggest {biggest} "
            f"{biggest_bytes:,} bytes ({'under' if biggest_bytes < GITHUB_WARNING else 'OVER'} GitHub's 50 MiB warning)"
        )
    for label, (wall, rss) in synced.items():
        print(
            f"sync, one-file commit, over {label}'s catalogue: {wall:.1f} s, {CPU[f'sync2-{label}.log']:.1f} s CPU (user + system), peak {rss} MiB "
            f"(the first: {first[label][0]:.1f} s, {CPU[f'sync1-{label}.log']:.1f} s CPU, {first[label][1]} MiB); a commit of it changes "
            f"{churn[label][0]} files, {churn[label][1]:,} bytes; in git (packed) the catalogue is {packs[label][0]:,} bytes and the day's commit adds {packs[label][1]:,}"
        )
    for name, runs, log in (("the next day", synced, "sync2"), ("the first", first, "sync1")):
        if len(runs) == 2:
            (_, (wall1, rss1)), (_, (wall2, rss2)) = runs.items()
            cpu1, cpu2 = (CPU[f"{log}-{label}.log"] for label in runs)
            print(f"history / one release, {name}: wall {wall2 / wall1:.2f}x, CPU {cpu2 / cpu1:.2f}x, peak memory {rss2 / rss1:.2f}x")


if __name__ == "__main__":
    main()
