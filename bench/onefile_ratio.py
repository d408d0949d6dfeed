"""``bench.py``'s one-file figure alone: the crawl of a commit that puts a comment first in one file,
over a dataset and cache of the release it changes, against the parse floor, for one or more
errcat trees, in one run.

    python bench/onefile_ratio.py --repo VLLM --data OUT --cache CACHE [--tree DIR ...] [--repeat 3]

``VLLM`` is a git repository holding ``--ref`` (default v0.33.0); ``OUT`` and ``CACHE`` a crawl of that
ref and its cache (copied, never written: each tree crawls its own copy). Each tree first crawls
``--ref`` over its copy (its memos are then its own code's), then each repeat measures the floor
(``bench.floor``) and, for each tree in turn, the one-file crawl (wall, as bench.py measures it,
and the CPU of its process tree), then crawls ``--ref`` again to put the dataset back. The ratios
are medians over medians of the same run; on a shared machine the CPU column is the steadier one.
Trees other than this checkout are run with ``PYTHONPATH`` at them (a ``git archive`` of a commit).
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

from bench import compile_errcat, floor, measured, one_file_commit  # noqa: E402 - (bench/ on the path first)


def children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def crawl(tree: Path, argv: list[str], cache: Path) -> tuple[float, float, str]:
    """Wall and CPU seconds (process tree, user + system) of one ``errcat crawl`` of ``tree``'s code, and its summary line."""
    env = dict(os.environ, PYTHONPATH=str(tree), ERRCAT_CACHE_DIR=str(cache))
    before, here = children_cpu(), Path.cwd()
    os.chdir(tree)  # (``python -m`` puts the working directory first on the path: the tree's own code, config and curated/)
    try:
        seconds, _, out, err, status = measured(["crawl", *argv], env)
    finally:
        os.chdir(here)
    if status != 0:
        sys.exit(f"onefile_ratio: crawl {' '.join(argv)} of {tree} failed ({status}):\n{err}")
    return seconds, children_cpu() - before, (out.strip().splitlines() or [""])[-1]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repo", type=Path, required=True, help="a git repository of vLLM releases")
    parser.add_argument("--ref", default="v0.33.0")
    parser.add_argument("--data", type=Path, required=True, help="the --out of a crawl of --ref (copied)")
    parser.add_argument("--cache", type=Path, required=True, help="that crawl's cache directory (copied)")
    parser.add_argument("--tree", type=Path, action="append", help="an errcat tree to run (repeatable; default: this checkout)")
    parser.add_argument("--include", default="vllm/", help="path prefix of the files the floor parses")
    parser.add_argument("--one-file", default="vllm/config/attention.py")
    parser.add_argument("--repeat", type=int, default=3)
    opts = parser.parse_args()
    trees = [t.resolve() for t in (opts.tree or [HERE.parent])]
    with tempfile.TemporaryDirectory(prefix="onefile-", dir=HERE / ".data" if (HERE / ".data").is_dir() else None) as tmp:
        work = Path(tmp)
        clone = one_file_commit(opts.repo.resolve(), work, opts.ref, opts.one_file)
        common = ["--repo", str(clone), "--name", "vllm-project/vllm"]
        places = []
        for n, tree in enumerate(trees):
            compile_errcat(tree)
            out, cache = work / f"out-{n}", work / f"cache-{n}"
            shutil.copytree(opts.data, out, symlinks=True)
            shutil.copytree(opts.cache, cache, symlinks=True)
            crawl(tree, [*common, "--ref", opts.ref, "--out", str(out)], cache)  # this tree's memos
            places.append((out, cache))
        floors: list[float] = []
        walls: list[list[float]] = [[] for _ in trees]
        cpus: list[list[float]] = [[] for _ in trees]
        summary = ""
        for _ in range(opts.repeat):
            floors.append(floor(opts.repo.resolve(), opts.ref, opts.include)[0])
            for n, (tree, (out, cache)) in enumerate(zip(trees, places, strict=True)):
                seconds, spent, summary = crawl(tree, [*common, "--ref", "one-file", "--out", str(out)], cache)
                walls[n].append(seconds)
                cpus[n].append(spent)
                crawl(tree, [*common, "--ref", opts.ref, "--out", str(out)], cache)  # the release's dataset back in place
    floor_s = statistics.median(floors)
    print(f"floor (read + ast.parse + tree-sitter, one process): {floor_s:.2f}s  (median of {opts.repeat}: {', '.join(f'{f:.2f}' for f in floors)})")
    for tree, wall, cpu in zip(trees, walls, cpus, strict=True):
        w, c = statistics.median(wall), statistics.median(cpu)
        print(
            f"{tree}: one file {w:.2f}s wall {w / floor_s:.2f}x floor ({', '.join(f'{x:.2f}' for x in wall)}); "
            f"CPU {c:.2f}s {c / floor_s:.2f}x ({', '.join(f'{x:.2f}' for x in cpu)})"
        )
    print(f"[{summary}]")


if __name__ == "__main__":
    main()
