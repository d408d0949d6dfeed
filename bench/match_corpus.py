#!/usr/bin/env python3
"""How often does ``errcat match`` answer real pasted errors right?

    python bench/match_corpus.py output/vllm-project/vllm [--corpus tests/data/pastes.jsonl] [-v]
    python bench/match_corpus.py history-root/ --old [--old-corpus tests/data/pastes_old.jsonl] [-v]

The corpus holds texts vLLM users pasted into the issue tracker (log prefixes, tracebacks, cut
excerpts), each with the entry it should find, or "foreign" (raised by torch, CUDA, ...) or
"none" (vLLM raises no such error today). Reported:

- top-1: pastes expecting an entry whose first answer (a match, or a weak candidate when there
  is no match) is that entry; "matched" counts those answered as a match;
- false claims: pastes answered with a *match* to a wrong entry (a weak candidate is no claim),
  and foreign/none pastes answered with any match;
- foreign: foreign pastes answered "not raised by vLLM".

Both figures are given: as pasted, and with the pastes vLLM has reworded since read in the
current words (their ``current`` field: the issue asks for the corpus "rendered against the
current wording where the wording changed"). Exits 1 when the latter's top-1 is under --min or
there is a false claim on a foreign/none paste.

``--old`` measures the older-wordings part instead (tests/data/pastes_old.jsonl): real texts in the
wording of an older vLLM release (V0-engine messages, messages reworded since), each with the
ids of the entries that raised that wording (several when two releases' templates print it
alike). Ids are hashes of the error, so an entry keeps its id in every catalogue that holds it:
DATA is a history catalogue, or an output root of several (a history plus old releases' wheel
datasets). Reported: found at full strength (the first answer is a match to an expected id), only
weakly (the first weak candidate is one), and false claims (a match to another id). Exits 1 on a
false claim.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

CORPUS = Path(__file__).resolve().parent.parent / "tests" / "data" / "pastes.jsonl"


def evaluate(rows: list[dict], matchers: list, current: bool = False) -> dict:
    """Figures over the corpus; ``current``: a paste whose message vLLM has reworded since is
    read as its ``current`` rendering (the same values in v0.33.0's words) when it has one."""
    from crawler.consume.match import match

    out = {"entry": 0, "top1": 0, "matched": 0, "false_claims": 0, "false_claims_foreign_none": 0,
           "foreign": 0, "foreign_answered": 0, "none": 0, "misses": []}
    for row in rows:
        result = match(row.get("current", row["text"]) if current else row["text"], matchers, 3)
        expect = row["expect"]
        top = result.matches[0] if result.matches else None
        weak = getattr(result, "weak", [])
        first = top.entry.id if top else (weak[0].entry.id if weak else None)
        foreign = getattr(result, "foreign", None)
        if expect in ("foreign", "none"):
            out[expect] += 1
            if top is not None:
                out["false_claims"] += 1
                out["false_claims_foreign_none"] += 1
                out["misses"].append((row["url"], expect, top.entry.id))
            if expect == "foreign" and foreign:
                out["foreign_answered"] += 1
            continue
        out["entry"] += 1
        if first == expect:
            out["top1"] += 1
            out["matched"] += top is not None and top.entry.id == expect
        else:
            if top is not None:
                out["false_claims"] += 1
            out["misses"].append((row["url"], expect, first))
    return out


def evaluate_old(rows: list[dict], matchers: list) -> dict:
    """Figures over the older-wordings corpus (see the module)."""
    from crawler.consume.match import match

    out = {"rows": 0, "strong": 0, "weak": 0, "false_claims": 0, "misses": []}
    for row in rows:
        result = match(row["text"], matchers, 3)
        out["rows"] += 1
        top = result.matches[0] if result.matches else None
        if top is not None and top.entry.id in row["expect"]:
            out["strong"] += 1
            continue
        if top is not None:
            out["false_claims"] += 1
        elif result.weak and result.weak[0].entry.id in row["expect"]:
            out["weak"] += 1
        out["misses"].append((row["url"], row["expect"], top.entry.id if top else (result.weak[0].entry.id if result.weak else None)))
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("data", type=Path)
    ap.add_argument("--corpus", type=Path, default=CORPUS)
    ap.add_argument("--min", type=float, default=0.0, help="Lowest acceptable top-1 share.")
    ap.add_argument("-v", "--verbose", action="store_true", help="List the misses.")
    ap.add_argument("--old", action="store_true", help="Measure the older-wordings corpus (DATA: a history catalogue, or a root of several).")
    ap.add_argument("--old-corpus", type=Path, default=CORPUS.with_name("pastes_old.jsonl"))
    args = ap.parse_args()
    from crawler.cli.consume import _matchers

    if args.old:
        rows = [json.loads(line) for line in args.old_corpus.read_text(encoding="utf-8").splitlines() if line.strip()]
        r = evaluate_old(rows, _matchers(args.data))
        print(f"older wordings: at full strength {r['strong']}/{r['rows']} ({r['strong'] / max(r['rows'], 1):.1%}), "
              f"only weakly {r['weak']}, false claims {r['false_claims']}")
        if args.verbose:
            for url, expect, got in r["misses"]:
                print(f"  {url}  expected {' or '.join(expect)}  got {got}")
        return 1 if r["false_claims"] else 0

    rows = [json.loads(line) for line in args.corpus.read_text(encoding="utf-8").splitlines() if line.strip()]
    matchers = _matchers(args.data)
    worst = 1.0
    for label, current in (("as pasted", False), ("reworded ones in current words", True)):
        r = evaluate(rows, matchers, current)
        share = r["top1"] / max(r["entry"], 1)
        worst = min(worst, share) if current else worst
        print(f"{label}: top-1 {r['top1']}/{r['entry']} ({share:.1%}), of them as a match {r['matched']}; "
              f"false claims {r['false_claims']} ({r['false_claims_foreign_none']} on {r['foreign']} foreign + {r['none']} none); "
              f"foreign answered {r['foreign_answered']}/{r['foreign']}")
        if args.verbose:
            for url, expect, got in r["misses"]:
                print(f"  {url}  expected {expect}  got {got}")
        if r["false_claims_foreign_none"]:
            return 1
    return 1 if worst < args.min else 0


if __name__ == "__main__":
    sys.exit(main())
