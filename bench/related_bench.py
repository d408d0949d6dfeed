"""Time the related-errors computation on a written dataset.

    python bench/related_bench.py output/vllm-project/vllm

Prints the entry count and the wall time of ``related.compute`` (best and median of 7 runs).
"""

from __future__ import annotations

import statistics
import sys
import time
from pathlib import Path

import orjson

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from crawler.catalogue.related import compute


def main(dataset: Path, runs: int = 7) -> None:
    records = [orjson.loads(line) for line in (dataset / "errors.jsonl").read_bytes().splitlines()]
    times = []
    for _ in range(runs):
        started = time.perf_counter()
        compute(records)
        times.append(time.perf_counter() - started)
    print(f"{len(records)} entries: related in {min(times):.3f}s best, {statistics.median(times):.3f}s median of {runs}")


if __name__ == "__main__":
    main(Path(sys.argv[1]) if len(sys.argv) > 1 else Path("output/vllm-project/vllm"))
