"""Time the related-errors computation on a written dataset, or on records made up to stress one
call path.

    python bench/related_bench.py output/vllm-project/vllm
    python bench/related_bench.py --synthetic 6000

Prints the entry count and the wall time of ``related.compute`` (best and median of 7 runs; 3
for --synthetic). A dataset's records are given their callers as the crawl gave them (each
record's ``meaning.callers``). ``--synthetic N``: N records on one call path, half raised in
``run`` and half in ``check``, which ``run`` calls; each candidate list on the path is thousands
long (what made the computation quadratic in the entries of one caller function).
"""

from __future__ import annotations

import argparse
import gzip
import statistics
import sys
import time
from pathlib import Path

import orjson

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from crawler.catalogue.related import compute


def dataset_records(dataset: Path) -> tuple[list[dict], dict[str, list[dict]]]:
    records = [orjson.loads(line) for line in gzip.decompress((dataset / "errors.jsonl.gz").read_bytes()).splitlines()]
    return records, {r["id"]: (r.get("meaning") or {}).get("callers") or [] for r in records}


def synthetic(n: int) -> tuple[list[dict], dict[str, list[dict]]]:
    """``n`` records on one call path: ``run`` (the first half) calls ``check`` (the rest)."""
    records, callers = [], {}
    for k in range(n):
        function = "run" if k < n // 2 else "check"
        rid = f"{k:016x}"
        records.append(
            {
                "id": rid,
                "title": f"Widget step {k} failed",
                "kind": "raise",
                "location": {"path": "pkg/engine.py", "line": k + 1, "qualname": f"Engine.{function}"},
                "sites": [{"module": "pkg.engine"}],
                "message": {"text": f"Widget step {k} failed in stage_{k % 97}", "fields": [], "opaque": False},
            }
        )
        if function == "check":
            callers[rid] = [{"path": "pkg/engine.py", "qualname": "Engine.run", "line": 1}]
    return records, callers


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("dataset", nargs="?", type=Path, default=Path("output/vllm-project/vllm"))
    parser.add_argument("--synthetic", type=int, metavar="N")
    args = parser.parse_args()
    records, callers = synthetic(args.synthetic) if args.synthetic else dataset_records(args.dataset)
    runs = 3 if args.synthetic else 7
    times = []
    for _ in range(runs):
        started = time.perf_counter()
        compute(records, callers)
        times.append(time.perf_counter() - started)
    print(f"{len(records)} entries: related in {min(times):.3f}s best, {statistics.median(times):.3f}s median of {runs}")


if __name__ == "__main__":
    main()
