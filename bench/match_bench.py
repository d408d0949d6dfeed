#!/usr/bin/env python3
"""How fast ``errcat match`` answers on a catalogue of 10,000 entries.

    python bench/match_bench.py                 # 10,000 synthetic entries
    python bench/match_bench.py --entries 50000
    python bench/match_bench.py --data output/vllm-project/vllm   # a real dataset

Synthetic entries look like real ones: a few common words ("must", "be", "not") in most
templates, rarer identifiers, 0 to 3 fields, some opaque. The benchmark writes search.json, then
reports the load time (read + parse + index) and the latency of single queries (messages rendered
from random templates with random values, plus misses), as median / 95th percentile / max.
"""

from __future__ import annotations

import argparse
import random
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from match_real import render_template

from crawler.base.jsonio import dumps_line
from crawler.consume.match import Matcher, match
from crawler.extract.segments import anchor_tokens, fragments, search_tokens, template_segments
from crawler.extract.templates import Field, make_template
from crawler.model.search import SearchEntry, SearchIndex, SearchSite
from crawler.publish.dataset import load_search_index

COMMON = "must be not is the a of for to in and got expected invalid unsupported value when with".split()
EXCEPTIONS = ["ValueError", "TypeError", "RuntimeError", "NotImplementedError", "AssertionError", "KeyError"]


def _word(rng: random.Random) -> str:
    return "".join(rng.choice("abcdefghijklmnopqrstuvwxyz_") for _ in range(rng.randint(3, 12))).strip("_") or "x"


def synth_entry(rng: random.Random, n: int, vocab: list[str]) -> SearchEntry:
    words = [rng.choice(COMMON) if rng.random() < 0.45 else rng.choice(vocab) for _ in range(rng.randint(3, 14))]
    nfields = rng.choice([0, 1, 1, 2, 2, 3])
    opaque = rng.random() < 0.05
    parts: list = []
    slots = sorted(rng.sample(range(len(words) + 1), min(nfields, len(words) + 1)))
    for i in range(len(words) + 1):
        if i in slots:
            expr = rng.choice(vocab)
            parts.append(Field(expr, expr))
        if i < len(words):
            parts.append((" " if i else "") + words[i] + rng.choice(["", "", "", ":", ",", "."]))
    if opaque:
        parts = [Field("msg", "msg")]
    template = make_template(parts, "fstring")  # as the extractor builds it
    segs = template_segments(template)
    text = template["text"]
    return SearchEntry(
        id=f"{n:016x}",
        title=text[:60],
        exception=rng.choice(EXCEPTIONS),
        catch_as=[],
        kind="raise",
        text=text,
        fields=[f["expr"] for f in template["fields"]],
        pattern=template["pattern"],
        fragments=fragments(segs),
        starts_literal=bool(segs) and segs[0][0] == "lit",
        ends_literal=bool(segs) and segs[-1][0] == "lit",
        anchors=list(dict.fromkeys(anchor_tokens(segs))),
        tokens=search_tokens(text),
        opaque=template["opaque"],
        explanation_status="absent",
        sites=[SearchSite(path=f"pkg/m{n % 300}.py", line=1 + n % 900, qualname=f"f{n}")],
    )


def render(entry: SearchEntry, rng: random.Random) -> str:
    """A runtime message of this template: each field replaced by a random value."""
    return render_template(entry.text, entry.fields, rng)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--entries", type=int, default=10_000)
    ap.add_argument("--queries", type=int, default=1_000)
    ap.add_argument("--data", type=Path, help="a real dataset directory instead of synthetic entries")
    ap.add_argument("--seed", type=int, default=8)
    args = ap.parse_args()
    rng = random.Random(args.seed)

    with tempfile.TemporaryDirectory() as tmp:
        if args.data:
            dataset = args.data
        else:
            vocab = [_word(rng) for _ in range(3000)]
            index = SearchIndex(repo="bench/synthetic", commit="0" * 40, entries=[synth_entry(rng, n, vocab) for n in range(args.entries)])
            dataset = Path(tmp)
            (dataset / "search.json").write_bytes(dumps_line(index))
        size = (dataset / "search.json").stat().st_size if (dataset / "search.json").is_file() else 0

        t0 = time.perf_counter()
        index = load_search_index(dataset)
        t1 = time.perf_counter()
        matcher = Matcher(index, "bench")
        t2 = time.perf_counter()
        load, read, build = t2 - t0, t1 - t0, t2 - t1

        literal = [e for e in matcher.index.entries if e.fragments]
        queries = [(e.id, render(e, rng)) for e in rng.sample(literal, min(args.queries, len(literal)))]
        queries += [(None, f"Something {_word(rng)} went wrong with {_word(rng)}") for _ in range(args.queries // 10)]
        times, hits, top = [], 0, 0
        for want, message in queries:
            t = time.perf_counter()
            result = match(message, [matcher])
            times.append(time.perf_counter() - t)
            if want is not None:
                ids = [m.entry.id for m in result.matches]
                hits += want in ids
                top += bool(ids) and (ids[0] == want or (want in ids and result.matches[ids.index(want)].tied and result.matches[0].tied))
        times.sort()
        ms = [t * 1000 for t in times]
        n = sum(1 for w, _ in queries if w is not None)
        print(f"entries {len(matcher.entries)}, search.json {size / 1e6:.1f} MB")
        print(f"load: {load * 1000:.0f} ms (read + validate {read * 1000:.0f} ms, index {build * 1000:.0f} ms)")
        print(f"queries {len(queries)}: median {statistics.median(ms):.2f} ms, p95 {ms[int(len(ms) * 0.95) - 1]:.2f} ms, max {ms[-1]:.2f} ms")
        print(f"rendered messages found: {hits}/{n}, ranked first (or tied first): {top}/{n}")


if __name__ == "__main__":
    main()
