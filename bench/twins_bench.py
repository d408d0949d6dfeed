"""``diff.twins`` against the pairwise comparison it replaced (the oracle in
tests/versions/test_twins_index.py), in one run on the same fixtures: N retired and N live
entries of one exception.

    python bench/twins_bench.py [--sizes 250 500 1000 2000]

Two fixtures at each size: "reworded" (each retired template of 8 plain words drawn from 400 is
live again with two words added: what a history holds) and "alike" (every live template holds every
word of every retired one, each pair passing the cheap word bound: the hostile case of
bench/RESULTS.md s41-security, which the cap ends). Prints CPU seconds (``time.process_time``),
the ratio, and whether both gave the same pairs.
"""

from __future__ import annotations

import argparse
import random
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from crawler.versions.diff import twins
from tests.versions.test_twins_index import pairwise_twins

#: 400 plain words (no digit, no capital: none names something, so no pair is refused by a name)
WORDS = [a + b + c for a in "bcdfghjklmnpqrstv" for b in "aeiou" for c in "bdgklmnprst"][:400]


def reworded(n: int) -> tuple[list, list]:
    rng = random.Random(n)
    gone, live = [], []
    for i in range(n):
        words = [rng.choice(WORDS) for _ in range(8)]
        gone.append((f"{i:016x}", ("message", "ValueError", " ".join(words))))
        live.append((f"{i + 10**7:016x}", ("message", "ValueError", " ".join([*words, "please", "retry"]))))
    return gone, live


def alike(n: int) -> tuple[list, list]:
    gone = [(f"{i:016x}", ("message", "ValueError", "the model is not supported here for {} at all")) for i in range(n)]
    live = [(f"{i + 10**7:016x}", ("message", "ValueError", f"the model is not supported here for {{}} at all, case {i}")) for i in range(n)]
    return gone, live


def timed(fn, *args) -> tuple[float, object]:
    start = time.process_time()
    out = fn(*args)
    return time.process_time() - start, out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--sizes", type=int, nargs="+", default=[250, 500, 1000, 2000])
    args = ap.parse_args()
    print("| fixture | N | pairwise (s) | index (s) | ratio | same pairs | twins | capped |")
    print("|---|---:|---:|---:|---:|---|---:|---:|")
    for make in (reworded, alike):
        for n in args.sizes:
            gone, live = make(n)
            old_s, old = timed(pairwise_twins, gone, live)
            capped: list[str] = []
            new_s, new = timed(twins, gone, live, capped)
            same = "yes" if old == new else f"no ({len(old)} against {len(new)})"
            print(f"| {make.__name__} | {n} | {old_s:.2f} | {new_s:.3f} | {old_s / max(new_s, 1e-6):.0f}x | {same} | {len(new)} | {len(capped)} |", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
