#!/usr/bin/env python3
"""errcat's speed benchmark: every target as a ratio to the parse floor, measured in one run.

    python bench/bench.py                      # builds bench/.data/vllm from the package index
    python bench/bench.py --repo ../vllm-releases --old v0.32.0 --new v0.33.0

The floor is a loop that reads and parses the same files the crawl selects, in one process,
timed in this same run: ``ast.parse`` for the Python files, tree-sitter (the grammar the crawl
uses) for the C++/CUDA and Rust files of the upstream's native trees (``--no-native``: without
them, the crawls too, as before they were read). Then, each as a child process running the real CLI:

- cold:        empty cache and output, every record written and validated
- warm:        the same commit again
- incremental: the new commit when the old one was crawled before (only changed files parsed,
               the old dataset in place: records whose error did not change are kept)
- one file:    a commit on top of the new one that edits one file (``--one-file``: a comment
               line put first, which moves every line of that file), crawled over the new one's
               dataset with the cache warm: the daily sync's usual case

and, to show what bounds the incremental crawl from below, two figures that are not targets:
the floor over only the files that changed between the two commits, and a "rewrite" crawl of the
new commit with every file's extraction cached but no dataset in place (no parsing, every record
written and validated); and what bounds cold and incremental from below for this extractor: the
CPU of extracting every file (the changed files), in one process with nothing written
(``extract_passes.py``), divided by the number of cores, plus what must follow the extraction
(the joins group every file's sites): the rewrite run's time for cold, the one-file run's for
incremental.

The one-file commit is made in a shared bare clone in the run's directory: the repository given
is only read.

Each is run ``--repeat`` times (default 3), alternating with the floor, and the medians are
compared: on a shared machine single runs vary by 15%. Peak memory is the largest sum of the resident sizes of the crawl's process tree, sampled
every 20 ms from /proc. ast-grep's time is shown for comparison when it is installed.
The repository of real releases is built the way ../shared/tools/vllm-releases does: each
release's source distribution, fetched with pip, laid down as one tagged commit.
"""

from __future__ import annotations

import argparse
import ast
import os
import platform
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path

HERE = Path(__file__).resolve().parent
#: Issue #36's targets, each a ratio to the floor.
TARGETS = {"cold": 1.2, "warm": 0.1, "incremental": 0.8, "one file": 0.2}
MEMORY_TARGET_MIB = 1024


def git(repo: Path, *args: str, **kw) -> subprocess.CompletedProcess:
    return subprocess.run(["git", "-C", str(repo), *args], check=True, **kw)


def build_releases(dest: Path, versions: list[str]) -> None:
    """A local git repo whose commits are the given vLLM releases' source trees (tags v<version>)."""
    cache = dest.parent / ".sdists"
    if dest.exists():
        shutil.rmtree(dest)
    dest.mkdir(parents=True)
    git(dest, "init", "-q", "-b", "main")
    for version in versions:
        tree = cache / f"vllm-{version}"
        if not tree.is_dir():
            cache.mkdir(parents=True, exist_ok=True)
            with tempfile.TemporaryDirectory(dir=cache) as tmp:
                env = dict(os.environ, TMPDIR=tmp)
                # pip unpacks the sdist and then fails to build its metadata (it needs torch): --no-clean keeps it.
                subprocess.run(
                    [sys.executable, "-m", "pip", "download", "--no-clean", "--no-deps", "--no-binary", ":all:", f"vllm=={version}", "-d", f"{tmp}/dl"],
                    env=env,
                    capture_output=True,
                )
                found = sorted(Path(tmp).glob("pip-download-*/vllm_*"))
                if not found:
                    sys.exit(f"bench: could not fetch the source of vllm=={version}")
                shutil.move(str(found[0]), tree)
        for child in dest.iterdir():
            if child.name != ".git":
                shutil.rmtree(child) if child.is_dir() and not child.is_symlink() else child.unlink()
        shutil.copytree(tree, dest, dirs_exist_ok=True, symlinks=True, ignore=shutil.ignore_patterns("*.egg-info", "PKG-INFO"))
        git(dest, "add", "-A")
        git(dest, "-c", "user.name=bench", "-c", "user.email=bench@example.invalid", "commit", "-q", "-m", f"vllm {version}")
        git(dest, "tag", f"v{version}")


def one_file_commit(repo: Path, work: Path, ref: str, path: str) -> Path:
    """A bare clone of ``repo`` (sharing its objects, writing none into it) with a commit tagged
    ``one-file`` on top of ``ref`` whose only change is a comment line put first in ``path``."""
    clone = work / "one-file.git"
    if clone.exists():
        return clone
    git(work, "clone", "-q", "--bare", "--shared", str(repo), str(clone))
    text = git(clone, "show", f"{ref}:{path}", capture_output=True).stdout
    blob = git(clone, "hash-object", "-w", "--stdin", input=b"# edited by bench.py\n" + text, capture_output=True).stdout.decode().strip()
    env = dict(os.environ, GIT_INDEX_FILE=str(work / "one-file.index"))
    git(clone, "read-tree", ref, env=env)
    git(clone, "update-index", "--cacheinfo", f"100644,{blob},{path}", env=env)
    tree = git(clone, "write-tree", env=env, capture_output=True).stdout.decode().strip()
    commit = (
        git(
            clone,
            "-c",
            "user.name=bench",
            "-c",
            "user.email=bench@example.invalid",
            "commit-tree",
            tree,
            "-p",
            ref,
            "-m",
            f"one file: {path}",
            capture_output=True,
        )
        .stdout.decode()
        .strip()
    )
    git(clone, "tag", "one-file", commit)
    return clone


def _native_selection(native: bool):
    """The native files the crawl reads (the built-in vLLM upstream's native trees and excludes), or none."""
    if not native:
        return None
    sys.path.insert(0, str(HERE.parent))
    from crawler.source.config import VLLM
    from crawler.source.globs import Selection

    return Selection([], VLLM.exclude, VLLM.native_globs)


def selected_files(repo: Path, ref: str, include: str, native: bool = True) -> list[tuple[str, str]]:
    out = git(repo, "ls-tree", "-r", "-z", "--full-tree", ref, capture_output=True).stdout.decode()
    natives = _native_selection(native)
    rows = []
    for entry in out.split("\0"):
        if not entry:
            continue
        meta, path = entry.split("\t", 1)
        mode, kind, blob = meta.split()
        if kind != "blob" or mode not in ("100644", "100755"):
            continue
        if (path.startswith(include) and path.endswith(".py")) or (natives is not None and natives(path)):
            rows.append((path, blob))
    return rows


def _native_parse(path: str, data: bytes) -> None:
    """Parse a native file once with tree-sitter, with the grammar the crawl uses for it."""
    from crawler.extract.native import _grammar, _parser
    from crawler.source.globs import native_language

    language = native_language(path)
    _parser(_grammar(path, language)).parse(data)


def floor(repo: Path, ref: str, include: str, only: set[tuple[str, str]] | None = None, native: bool = True) -> tuple[float, int]:
    """Read every selected file from git in one cat-file session and parse it, in one process:
    Python files with ast.parse, the native trees' files (C++/CUDA, Rust) with tree-sitter
    (with ``only``: just those (path, blob) rows)."""
    if native:
        _native_parse("x.rs", b"")  # the grammars load before the clock starts, as in a crawl's workers
        _native_parse("x.cu", b"")
        _native_parse("x.cpp", b"")
    start = time.perf_counter()
    rows = selected_files(repo, ref, include, native)
    if only is not None:
        rows = [row for row in rows if row in only]
    proc = subprocess.Popen(["git", "-C", str(repo), "cat-file", "--batch"], stdin=subprocess.PIPE, stdout=subprocess.PIPE)

    def feed() -> None:  # from a thread: cat-file stops reading while its output is not drained
        proc.stdin.write("".join(f"{blob}\n" for _, blob in rows).encode())
        proc.stdin.close()

    writer = threading.Thread(target=feed, daemon=True)
    writer.start()
    parsed = 0
    for path, _blob in rows:
        header = proc.stdout.readline().split()
        data = proc.stdout.read(int(header[2]))
        proc.stdout.read(1)
        if not path.endswith(".py"):
            _native_parse(path, data)
            parsed += 1
            continue
        try:
            ast.parse(data)
            parsed += 1
        except (SyntaxError, ValueError):
            pass
    proc.wait()
    writer.join()
    return time.perf_counter() - start, parsed


def _tree(pid: int) -> Iterator[int]:
    """A process and all its descendants, from /proc (one gone meanwhile is left out)."""
    stack = [pid]
    while stack:
        p = stack.pop()
        yield p
        try:
            for task in os.listdir(f"/proc/{p}/task"):
                with open(f"/proc/{p}/task/{task}/children") as fh:
                    stack += [int(c) for c in fh.read().split()]
        except (OSError, ValueError):
            continue


def _rss(p: int) -> int:
    with open(f"/proc/{p}/statm") as fh:
        return int(fh.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")


def _pss(p: int) -> int:
    """Proportional set size (/proc/<pid>/smaps_rollup): a page shared by n processes counts 1/n
    in each, so the writer's forked children, which share the parent's pages copy-on-write, are
    not counted again as a sum of resident sizes counts them."""
    with open(f"/proc/{p}/smaps_rollup") as fh:
        for line in fh:
            if line.startswith("Pss:"):
                return int(line.split()[1]) * 1024
    return 0


def tree_memory(pid: int, size: Callable[[int], int]) -> int:
    """``size`` summed over a process and its descendants."""
    total = 0
    for p in _tree(pid):
        try:
            total += size(p)
        except (OSError, ValueError):
            continue
    return total


def measured(argv: list[str], env: dict[str, str]) -> tuple[float, tuple[int, int], str, str, int]:
    """Run ``python -m crawler ARGV``: wall seconds, peak memory of its process tree (PSS, and
    the sum of resident sizes), stdout, stderr and the exit status. RSS is sampled every 20 ms;
    PSS (the kernel walks every mapping for it) every 100 ms, so that the sampling takes little
    of the two cores the command runs on."""
    peak = rss_peak = 0
    start = time.perf_counter()
    proc = subprocess.Popen([sys.executable, "-m", "crawler", *argv], env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    done = threading.Event()

    def sample() -> None:
        nonlocal peak, rss_peak
        n = 0
        while not done.is_set():
            rss_peak = max(rss_peak, tree_memory(proc.pid, _rss))
            if n % 5 == 0:
                peak = max(peak, tree_memory(proc.pid, _pss))
            n += 1
            done.wait(0.02)

    sampler = threading.Thread(target=sample, daemon=True)
    sampler.start()
    out, err = proc.communicate()
    seconds = time.perf_counter() - start
    done.set()
    sampler.join()
    return seconds, (peak, rss_peak), out, err, proc.returncode


def run_crawl(args: list[str], env: dict[str, str], expect_unchanged: bool = False) -> tuple[float, tuple[int, int], str]:
    """Wall seconds, peak tree memory (PSS, RSS sum) and the summary line of one `errcat crawl`."""
    seconds, peak, out, err, status = measured(["crawl", *args], env)
    if status != 0:
        sys.exit(f"bench: crawl {' '.join(args)} failed ({status}):\n{err}")
    lines = out.strip().splitlines()
    if expect_unchanged and not any(line.startswith("unchanged ") for line in err.splitlines()):
        sys.exit(f"bench: the warm crawl did not find its dataset up to date:\n{err}")
    return seconds, peak, lines[-1]


def ast_grep_seconds(repo: Path, ref: str, include: str) -> float | None:
    # not "sg": on Linux that is usually newgrp's sibling, switch group
    exe = shutil.which("ast-grep") or shutil.which("ast-grep", path=str(Path(sys.executable).parent))
    if not exe:
        return None
    with tempfile.TemporaryDirectory() as tmp:
        archive = subprocess.run(["git", "-C", str(repo), "archive", ref, include], check=True, capture_output=True).stdout
        subprocess.run(["tar", "-x", "-C", tmp], input=archive, check=True)
        start = time.perf_counter()
        subprocess.run([exe, "run", "-p", "raise $E($$$)", "-l", "python", tmp], capture_output=True)
        return time.perf_counter() - start


def extraction_cpu(repo: Path, new: str, old: str | None, env: dict[str, str]) -> float:
    """CPU seconds of extracting what a crawl of ``new`` extracts (over ``old``'s cache: only the
    changed files), in one process, with nothing written: ``extract_passes.py``'s total."""
    argv = [sys.executable, str(HERE / "extract_passes.py"), str(repo), new, *(["--since", old] if old else [])]
    out = subprocess.run(argv, env=env, capture_output=True, text=True, check=True).stdout
    return float(next(words[1] for words in map(str.split, out.splitlines()) if len(words) == 2 and words[0] == "all"))


def compile_errcat(root: Path) -> None:
    """Byte-compile errcat's modules once, as installing a package does: with PYTHONDONTWRITEBYTECODE
    set (some shells set it) and a stale ``__pycache__``, every timed run would compile them again
    (0.1-0.15 s of CPU a crawl), a cost no installed errcat pays."""
    import compileall

    compileall.compile_dir(str(root / "crawler"), quiet=1)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--repo", type=Path, help="a git repo of vLLM releases (default: build bench/.data/vllm)")
    parser.add_argument("--old", default="v0.32.0")
    parser.add_argument("--new", default="v0.33.0")
    parser.add_argument("--include", default="vllm/", help="path prefix of the files the floor parses")
    parser.add_argument("--jobs", type=int, help="passed to errcat crawl --jobs")
    parser.add_argument(
        "--no-native", dest="native", action="store_false", help="leave the native trees (csrc/, rust/) out of the floor and the crawls, as before #19"
    )
    parser.add_argument("--repeat", type=int, default=3, help="runs of each measurement; medians are reported")
    parser.add_argument("--one-file", default="vllm/config/attention.py", help="the file the one-file commit edits")
    opts = parser.parse_args()

    repo = opts.repo
    if repo is None:
        repo = HERE / ".data" / "vllm"
        if not (repo / ".git").is_dir():
            print("building the releases repo (pip download of the sdists)...", file=sys.stderr)
            build_releases(repo, [opts.old.lstrip("v"), opts.new.lstrip("v")])
    repo = repo.resolve()
    root = Path(__file__).resolve().parent.parent
    compile_errcat(root)
    env = dict(os.environ, PYTHONPATH=str(root) + os.pathsep + os.environ.get("PYTHONPATH", ""))
    jobs = ["--jobs", str(opts.jobs)] if opts.jobs else []

    # On the project's disk, not /tmp: creating files in /tmp is several times slower on the
    # machines this was written on, and a crawl's output goes to the project's disk anyway.
    (HERE / ".data").mkdir(exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="run-", dir=HERE / ".data") as tmp:
        work = Path(tmp)
        # --include names the Python files only: the crawl then reads no native tree
        common = ["--repo", str(repo), "--name", "vllm-project/vllm", *jobs, *([] if opts.native else ["--include", "vllm/**/*.py"])]
        runs: dict[str, list[tuple[float, int, str]]] = {"cold": [], "warm": [], "incremental": [], "one file": [], "rewrite": []}
        clone = one_file_commit(repo, work, opts.new, opts.one_file)
        one_file = ["--repo", str(clone), "--name", "vllm-project/vllm", *jobs, "--ref", "one-file", *([] if opts.native else ["--include", "vllm/**/*.py"])]
        floors, changed_floors = [], []
        # what the incremental crawl extracts: results are cached by path and blob
        changed = set(selected_files(repo, opts.new, opts.include, opts.native)) - set(selected_files(repo, opts.old, opts.include, opts.native))
        for n in range(opts.repeat):
            floor_s, parsed = floor(repo, opts.new, opts.include, native=opts.native)
            floors.append(floor_s)
            env_a = dict(env, ERRCAT_CACHE_DIR=str(work / f"cache-a{n}"))
            out_a = ["--out", str(work / f"out-a{n}")]
            runs["cold"].append(run_crawl([*common, "--ref", opts.new, *out_a], env_a))
            runs["warm"].append(run_crawl([*common, "--ref", opts.new, *out_a], env_a, expect_unchanged=True))
            runs["one file"].append(run_crawl([*one_file, *out_a], env_a))
            runs["rewrite"].append(run_crawl([*common, "--ref", opts.new, "--out", str(work / f"out-r{n}")], env_a))
            changed_floors.append(floor(repo, opts.new, opts.include, only=changed, native=opts.native)[0])
            env_b = dict(env, ERRCAT_CACHE_DIR=str(work / f"cache-b{n}"))
            out_b = ["--out", str(work / f"out-b{n}")]
            run_crawl([*common, "--ref", opts.old, *out_b], env_b)
            runs["incremental"].append(run_crawl([*common, "--ref", opts.new, *out_b], env_b))
            # Nothing is deleted until the end: on ext4 with online discard, creating files right
            # after deleting a 100 MB dataset is several times slower, and that would be the
            # harness's doing, not the crawl's.
        grep_s = ast_grep_seconds(repo, opts.new, opts.include)
        extract_all = extraction_cpu(repo, opts.new, None, env) if opts.native else None
        extract_changed = extraction_cpu(repo, opts.new, opts.old, env) if opts.native else None

    # Each figure is the median of the repeats; the floor too, so a ratio compares like with like.
    floor_s = statistics.median(floors)
    cold, warm, incremental, one, rewrite = ((statistics.median(r[0] for r in rs), max(r[1] for r in rs), rs[-1][2]) for rs in runs.values())
    cpu = platform.processor() or platform.machine()
    print(f"machine: {os.cpu_count()} CPUs ({cpu}), Python {platform.python_version()}, {platform.system()}")
    print(f"files: {parsed} parsed by the floor ({opts.include}{' and the native trees' if opts.native else ''} at {opts.new})")
    print(
        f"floor (read + ast.parse{' + tree-sitter' if opts.native else ''}, one process): {floor_s:.2f}s  (median of {opts.repeat}: {', '.join(f'{f:.2f}' for f in floors)})"
    )
    ok = True
    peak_all = rewrite[1]
    for name, (seconds, peak, summary) in (("cold", cold), ("warm", warm), ("incremental", incremental), ("one file", one)):
        ratio = seconds / floor_s
        met = ratio <= TARGETS[name]
        ok &= met
        peak_all = max(peak_all, peak)
        print(
            f"{name:<12} {seconds:6.2f}s  {ratio:5.2f}x floor (target <= {TARGETS[name]}x) {'met' if met else 'MISSED'}"
            f"  peak {peak[0] / 2**20:6.0f} MiB (RSS sum {peak[1] / 2**20:.0f})  [{summary}]"
        )
    mem_ok = peak_all[0] <= MEMORY_TARGET_MIB * 2**20
    ok &= mem_ok
    print(
        f"peak memory  {peak_all[0] / 2**20:.0f} MiB PSS of the process tree (target <= {MEMORY_TARGET_MIB} MiB) "
        f"{'met' if mem_ok else 'MISSED'}; the sum of resident sizes, counting shared pages again: "
        f"{max(p[1] for p in (cold[1], warm[1], incremental[1], one[1], rewrite[1])) / 2**20:.0f} MiB"
    )
    changed_s = statistics.median(changed_floors)
    print(f"not targets, what bounds incremental from below (medians of {opts.repeat}):")
    print(
        f"  floor over the {len(changed)} files changed since {opts.old}: {changed_s:.2f}s  {changed_s / floor_s:.2f}x floor"
        f" ({changed_s / floor_s / 2:.2f}x on two cores, were nothing but the parse to run)"
    )
    print(f"  rewrite (extraction all cached, no dataset in place): {rewrite[0]:.2f}s  {rewrite[0] / floor_s:.2f}x floor")
    if extract_all is not None and extract_changed is not None:
        # The joins group every file's sites, so what follows extraction starts when the last file
        # is done: a crawl takes at least the extraction shared perfectly over the cores, then
        # that tail, which the rewrite run (every extraction cached, nothing in place) and the
        # one-file run (nearly all cached, the dataset in place) each measure alone.
        cores = os.cpu_count() or 1
        print(
            f"not targets, the least this extractor can take on {cores} core(s): its CPU in one process (nothing written)"
            " shared perfectly over the cores, then what must follow it:"
        )
        for name, spent, tail, what in (("cold", extract_all, rewrite[0], "the rewrite run"), ("incremental", extract_changed, one[0], "the one-file run")):
            alone = spent / cores / floor_s
            bound = alone + tail / floor_s
            print(
                f"  {name:<12} extraction {spent:6.2f}s CPU / {cores} = {alone:.2f}x floor, + {what} {tail / floor_s:.2f}x ="
                f" {bound:.2f}x ({'above' if bound > TARGETS[name] else 'within'} the {TARGETS[name]}x target)"
            )
    if grep_s is not None:
        print(f"ast-grep 'raise $E($$$)' (no templates): {grep_s:.2f}s  {grep_s / floor_s:.2f}x floor")
    else:
        print("ast-grep: not installed (pip install -e '.[bench]' to compare)")
    sys.exit(0 if ok else 1)


if __name__ == "__main__":
    main()
