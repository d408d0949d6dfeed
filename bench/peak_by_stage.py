"""Where a crawl's memory peaks: the PSS of its process tree (the forked helpers' shared pages
counted once, as ``bench.py`` counts them) sampled every 100 ms, by the stage running then.

    python bench/peak_by_stage.py -- crawl --repo ../vllm --ref v0.33.0 --out OUT --cache-dir CACHE

Arguments after ``--`` are errcat's. The crawl runs as a child process (``_stages``: errcat's CLI
with the tail's stages wrapped to print ``STAGE <name> start|end`` on stderr as they run), and the
peak is printed with the last line the crawl printed before it, then the largest PSS seen after
each line. For the cold tail without its extraction, give a cache directory holding only the
``results.sqlite3`` of an earlier crawl of the same commit (see ``tail_parts.py``).
"""

from __future__ import annotations

import os
import subprocess
import sys
import threading
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from bench import _pss, _rss, tree_memory  # noqa: E402 - (bench.py beside this file)

#: The stages marked: (module, function); ``Graph`` is the call graph's constructor.
STAGES = [
    ("crawler.crawl", "extract_all"),
    ("crawler.catalogue.entries", "build_entries"),
    ("crawler.catalogue.meaning_join", "join_meaning"),
    ("crawler.catalogue.meaning_join", "build_tables"),
    ("crawler.catalogue.meaning_join", "callers_by_id"),
    ("crawler.catalogue.meaning_join", "related_by_id"),
    ("crawler.catalogue.meaning_join", "passed_by_id"),
    ("crawler.catalogue.joined", "merge"),
    ("crawler.publish.pins", "pin"),
    ("crawler.catalogue.search", "search_file"),
    ("crawler.crawl", "publish"),
]


def _stages(argv: list[str]) -> None:
    """errcat's CLI with :data:`STAGES` marked on stderr (run in the child)."""
    import importlib

    def marked(fn, name):
        def run(*args, **kw):
            print(f"STAGE {name} start", file=sys.stderr, flush=True)
            try:
                return fn(*args, **kw)
            finally:
                print(f"STAGE {name} end", file=sys.stderr, flush=True)

        return run

    for module, name in STAGES:
        mod = importlib.import_module(module)
        setattr(mod, name, marked(getattr(mod, name), name))
    callers = importlib.import_module("crawler.catalogue.callers")
    callers.Graph.__init__ = marked(callers.Graph.__init__, "Graph")
    sys.argv = ["errcat", *argv]
    from crawler.cli.main import main as errcat

    errcat()


def main() -> None:
    args = sys.argv[1:]
    if args[:1] == ["--child"]:
        _stages(args[1:])
        return
    args = args[1:] if args[:1] == ["--"] else args
    start = time.perf_counter()
    env = dict(os.environ, PYTHONPATH=str(HERE.parent) + os.pathsep + os.environ.get("PYTHONPATH", ""))
    proc = subprocess.Popen([sys.executable, __file__, "--child", *args], env=env, stderr=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    last = ["start"]
    lines: list[tuple[float, str]] = []
    samples: list[tuple[float, int, int, str]] = []

    def read() -> None:
        for line in proc.stderr or ():
            last[0] = line.strip()[:90]
            lines.append((time.perf_counter() - start, last[0]))

    reader = threading.Thread(target=read, daemon=True)
    reader.start()
    while proc.poll() is None:
        samples.append((time.perf_counter() - start, tree_memory(proc.pid, _pss), tree_memory(proc.pid, _rss), last[0]))
        time.sleep(0.1)
    reader.join()
    out = (proc.stdout.read() if proc.stdout else "").strip().splitlines()
    print(out[-1] if out else f"(no summary: exit {proc.returncode})")
    if not samples:
        return
    peak = max(samples, key=lambda s: s[1])
    print(f"peak PSS {peak[1] / 2**20:.0f} MiB at {peak[0]:.1f}s, after: {peak[3]}")
    most: dict[str, tuple[int, int]] = {}
    for _, pss, rss, line in samples:
        seen = most.get(line, (0, 0))
        most[line] = (max(seen[0], pss), max(seen[1], rss))
    for at, line in lines:
        if line in most and not line.startswith("extracting:"):
            pss, rss = most.pop(line)
            print(f"{at:7.1f}s {pss / 2**20:6.0f} MiB PSS {rss / 2**20:6.0f} MiB RSS sum  {line}")
    sys.exit(proc.returncode)


if __name__ == "__main__":
    main()
