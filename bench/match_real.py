#!/usr/bin/env python3
"""Does ``errcat match`` find the right entry for messages a real catalogue's code would raise?

    python bench/match_real.py output/vllm-project/vllm            # 300 random templates
    python bench/match_real.py DATASET --samples 1000 --seed 3

For randomly chosen entries with literal text, a runtime message is rendered from the template
(each field replaced by a sample value: numbers, quoted names, lists, text with spaces, newlines
and regex metacharacters), then matched against the whole dataset, bare and wrapped the ways
users meet it: "ExcType: message", the end of a traceback, a pydantic ValidationError listing
(ValueError/AssertionError entries), and an OpenAI-compatible server's JSON error body. A hit is
the entry ranked first, or tied for first. Exits 1 when the bare hit rate is under --min.
"""

from __future__ import annotations

import argparse
import json
import random
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from crawler.consume.match import Matcher, match
from crawler.publish.dataset import load_search_index

VALUES = ["3", "0", "'full'", "None", "[1, 2]", "float16", "foo bar", "a.b.c", "x\ny", "(1+2)*[3]?", "<eos> & </s>", "{}"]


def render_template(text: str, fields: list[str], rng: random.Random) -> str:
    """A message the template produces: fields replaced by sample values, doubled braces undone."""
    out, i, k = [], 0, 0
    while i < len(text):
        if text.startswith(("{{", "}}"), i):
            out.append(text[i])
            i += 2
        elif k < len(fields) and text.startswith("{" + fields[k] + "}", i):
            out.append(rng.choice(VALUES))
            i += len(fields[k]) + 2
            k += 1
        else:
            out.append(text[i])
            i += 1
    return "".join(out)


def wrappings(message: str, exception: str, catch_as: list[str]) -> dict[str, str]:
    out = {
        "bare": message,
        "prefixed": f"{exception}: {message}",
        "traceback": (
            'Traceback (most recent call last):\n  File "/srv/app.py", line 3, in <module>\n    main()\n'
            f'  File "/srv/lib.py", line 9, in main\n    go()\n    ~~^^\n{exception}: {message}\n'
        ),
        "server json": json.dumps({"error": {"message": message, "type": "BadRequestError", "param": None, "code": 400}}),
    }
    kinds = {"ValueError": "Value error", "AssertionError": "Assertion failed"}
    for name in [exception, *catch_as]:
        if name in kinds:
            out["pydantic"] = (
                f"pydantic_core._pydantic_core.ValidationError: 1 validation error for Config\nfield\n"
                f"  {kinds[name]}, {message} [type={name == 'ValueError' and 'value_error' or 'assertion_error'}, "
                "input_value={'a': 1}, input_type=dict]\n    For further information visit https://errors.pydantic.dev/2.11/v/value_error"
            )
            break
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("dataset", type=Path)
    ap.add_argument("--samples", type=int, default=300)
    ap.add_argument("--seed", type=int, default=8)
    ap.add_argument("--min", type=float, default=0.95, help="fail below this bare hit rate")
    ap.add_argument("-v", "--verbose", action="store_true", help="list the misses")
    args = ap.parse_args()
    rng = random.Random(args.seed)

    t = time.perf_counter()
    matcher = Matcher(load_search_index(args.dataset), str(args.dataset))
    print(f"{len(matcher.entries)} entries loaded in {(time.perf_counter() - t) * 1000:.0f} ms")
    literal = [e for e in matcher.index.entries if e.fragments and not e.opaque]
    chosen = rng.sample(literal, min(args.samples, len(literal)))
    hits: dict[str, list[int]] = {}
    times: list[float] = []
    misses = []
    for e in chosen:
        message = render_template(e.text, e.fields, rng)
        for how, text in wrappings(message, e.exception, e.catch_as).items():
            t = time.perf_counter()
            result = match(text, [matcher])
            times.append(time.perf_counter() - t)
            top = [m for m in result.matches if m.key == result.matches[0].key] if result.matches else []
            ok = any(m.entry.id == e.id for m in top)
            hits.setdefault(how, []).append(ok)
            if not ok and how == "bare":
                misses.append((e, message, [m.entry.text for m in top[:3]]))
    for how, results in hits.items():
        print(f"{how:12} {sum(results)}/{len(results)} = {sum(results) / len(results):.1%} ranked first (or tied first)")
    times.sort()
    print(f"per query: median {times[len(times) // 2] * 1000:.2f} ms, max {times[-1] * 1000:.2f} ms")
    if args.verbose:
        for e, message, got in misses:
            print(f"MISS {e.id} {e.text!r}\n  message {message!r}\n  got {got!r}")
    bare = hits["bare"]
    return 0 if sum(bare) / len(bare) >= args.min else 1


if __name__ == "__main__":
    sys.exit(main())
