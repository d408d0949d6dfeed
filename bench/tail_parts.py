"""The crawl's work after extraction, part by part: CPU (``time.process_time``, this process)
and wall seconds of each stage of a real ``errcat crawl`` run in this process.

    python bench/tail_parts.py [--inline] -- crawl --repo ../vllm --ref v0.33.0 --out OUT --cache-dir CACHE

Arguments after ``--`` are errcat's. For the cold crawl's tail without its extraction, give a
cache directory that holds only the extraction cache of an earlier crawl of the same commit
(``results.sqlite3`` copied alone: the joins, records and search rows are then all made again)
and an ``--out`` with no dataset. ``--inline``: the joins a crawl forks helpers for (the meanings,
the reproductions) run in this process, so that their CPU is counted too (the wall times are then
not the crawl's). A stage's figures include the stages it calls (``_assemble`` holds
``join_meaning``, which holds ``callers_by_id`` and ``related_by_id``; ``publish``'s render
helpers are other processes: only this process's share is counted). On a shared machine compare
CPU, not wall.
"""

from __future__ import annotations

import argparse
import collections
import importlib
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

TIMES: collections.defaultdict[str, list[float]] = collections.defaultdict(lambda: [0.0, 0.0, 0])


def wrap(module: Any, name: str, label: str | None = None) -> None:
    fn = getattr(module, name)

    def run(*args: Any, **kw: Any) -> Any:
        cpu, wall = time.process_time(), time.perf_counter()
        try:
            return fn(*args, **kw)
        finally:
            t = TIMES[label or name]
            t[0] += time.process_time() - cpu
            t[1] += time.perf_counter() - wall
            t[2] += 1

    setattr(module, name, run)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--inline", action="store_true", help="run the forked joins in this process")
    ap.add_argument("errcat", nargs=argparse.REMAINDER)
    opts = ap.parse_args()
    mod = importlib.import_module
    crawl, joins, callers = mod("crawler.crawl"), mod("crawler.catalogue.meaning_join"), mod("crawler.catalogue.callers")
    stages: list[tuple[Any, ...]] = [
        (crawl, "_inputs"),
        (crawl, "open_snapshot"),
        (crawl, "current_manifest"),
        (crawl, "extract_all"),
        (mod("crawler.extract.runner"), "decode_result", "decode_result (cached results)"),
        (mod("crawler.extract.runner"), "decode_part", "decode_part (cached, first part)"),
        (mod("crawler.extract.runner"), "complete", "complete (the rest, a join made)"),
        (mod("crawler.catalogue.cross_module_join"), "apply"),
        (mod("crawler.catalogue.hierarchy"), "apply_init_templates"),
        (mod("crawler.catalogue.hierarchy"), "resolve_exceptions"),
        (mod("crawler.catalogue.entries"), "build_entries"),
        (joins, "join_meaning"),
        (joins, "callers_by_id"),
        (joins, "related_by_id"),
        (joins, "meanings"),
        (joins, "memo_meanings"),
        (joins, "reproductions_by_id"),
        (joins, "build_tables"),
        (joins, "setting_names"),
        (mod("crawler.catalogue.explanations"), "curated_parts"),
        (mod("crawler.catalogue.action_memo"), "action"),  # (made: the memo's misses)
        (mod("crawler.catalogue.action_memo").Memo, "action", "Memo.action"),
        (mod("crawler.catalogue.joined"), "merge"),
        (crawl, "_assemble"),
        (mod("crawler.publish.dataset"), "previous_records"),
        (mod("crawler.publish.pins"), "pin"),
        (mod("crawler.catalogue.search"), "search_file"),
        (crawl, "publish"),
        (mod("crawler.publish.writer"), "_link_kept"),
        (mod("crawler.publish.writer"), "_write_rendered"),
        (mod("crawler.publish.record_memo"), "remember", "record_memo.remember"),
        (crawl, "_write"),
        (mod("crawler.cli.crawl"), "_warm_match_store"),
    ]
    for module, name, *label in [stage for stage in stages if hasattr(stage[0], stage[1])]:  # (an older tree lacks some)
        wrap(module, name, *label)
    graph_init = callers.Graph.__init__

    def timed_graph(self: Any, *args: Any, **kw: Any) -> None:
        cpu, wall = time.process_time(), time.perf_counter()
        graph_init(self, *args, **kw)
        t = TIMES["Graph (the call graph)"]
        t[0] += time.process_time() - cpu
        t[1] += time.perf_counter() - wall
        t[2] += 1

    callers.Graph.__init__ = timed_graph
    if opts.inline:
        setattr(crawl, "_aside", lambda: None)  # noqa: B010 - (a module attribute mypy cannot see through import_module)
    args = opts.errcat[1:] if opts.errcat[:1] == ["--"] else opts.errcat
    sys.argv = ["errcat", *args]
    from crawler.cli.main import main as errcat

    cpu, wall = time.process_time(), time.perf_counter()
    try:
        errcat()
    except SystemExit:
        pass
    print(f"{'stage':28s} {'CPU s':>7s} {'wall s':>7s}")
    for label, (c, w, n) in TIMES.items():
        if n:
            print(f"{label:28s} {c:7.2f} {w:7.2f}" + (f"  x{n:.0f}" if n > 1 else ""))
    print(f"{'all (this process)':28s} {time.process_time() - cpu:7.2f} {time.perf_counter() - wall:7.2f}")


if __name__ == "__main__":
    main()
