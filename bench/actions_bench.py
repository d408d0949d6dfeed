#!/usr/bin/env python3
"""How many pages tell the person who hit the error what to do (#32)?

    python bench/actions_bench.py output/vllm-project/vllm [--sample 40 --seed 32]

Reads a dataset's ``errors.jsonl.gz`` and counts, over every entry, ``meaning.action``: who acts
(setting, request, model, environment, caller, internal) and whether the page says something
concrete to do. A page counts as concrete when it carries

- a fix direction derived from the guard (``meaning.fix``), or the message's own remedy
  (``action.remedy``), or a curated explanation (solutions or an example fix), or
- a who-acts step that names what to act on: a setting or request field by name (the entry's
  settings), a package to install, a method to implement, or, for an internal check, a report
  with its new-issue link filled in (GitHub upstreams: ``meaning_page.tracker_links``), a package
  to install by name (``Install `x```, the package that provides the import that failed, a build of
  the project's own extension), an environment variable to set or a setting bounding a wait, a
  field of the request to check (``Check `x` in your request``, the structured-output constraint it
  carries), the call to make first (``Call `x()` first``), the option to start the server with.

``--sample N`` prints N entries drawn at random (seeded) with their message, place and action,
for the check by hand against the source that the issue asks for; ``--open-sample N`` draws them
from the pages left open ("errcat cannot tell") alone, to group what is still open.
"""

from __future__ import annotations

import argparse
import collections
import gzip
import json
import random
import re
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))


def concrete(record: dict) -> str | None:
    """Why the page says what to do, or None when it says nothing concrete."""
    from crawler.consume.meaning_page import tracker_links

    meaning, ex = record["meaning"], record.get("explanation") or {}
    action = meaning.get("action") or {}
    if record.get("explanation_status") == "curated" and (ex.get("solutions") or ex.get("example_fix")):
        return "curated"
    if action.get("remedy"):
        return "remedy"
    if meaning.get("fix"):
        return "fix"
    actor, basis = action.get("actor"), action.get("basis", "")
    if actor in ("setting", "request") and any(k["kind"] != "message_name" for k in meaning.get("knobs") or []):
        return "named setting"
    if actor == "setting" and basis.startswith(("the message names", "raised while the configuration")):
        return "named setting"
    steps = " ".join(action.get("steps") or [])
    # (a package by name: "Install `x`", the package that provides the import that failed, a build of
    # the project's own extension; s45-rules: a basis saying a package is missing, with a step that
    # names none, "install or upgrade what is missing", no longer counts)
    if actor == "environment" and re.search(
        r"\bInstall (?:or upgrade )?(?:`[^`]+`|the package that provides `)|: install the package that provides it\b|\binstall a build of ", steps
    ):
        return "install"
    if actor == "environment" and re.search(r"\bSet the environment variable `[A-Z][A-Z0-9_]*`", steps):
        return "environment variable"
    if actor == "environment" and re.search(r"\braise `[a-z_]+_config\.[a-z_]+`", steps):
        return "named setting"
    if actor == "request" and re.search(r"`[a-z_][a-z0-9_.]*` in your request|\bthe structured-output constraint in your request\b", steps):
        return "request field"
    if actor == "caller" and "implement" in basis:
        return "implement"
    # (s46-rules: the call the message says comes first, and the option whose chosen class a check tests)
    if actor == "caller" and re.search(r"\bCall `[A-Za-z_][\w.]*\(\)` first\b", steps):
        return "call first"
    # (s46-rules3: "Start without `--moe-backend` ...", "start without that `--quantization` method")
    if actor == "setting" and re.search(r"\b[Ss]tart (?:the server )?(?:with|without)(?: that)? `--[a-z][a-z0-9-]*`", steps):
        return "named setting"
    if actor == "internal" and record["kind"] != "log" and any(label == "Report it" for label, _ in tracker_links(record)):
        return "report"
    return None


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("dataset", type=Path)
    parser.add_argument("--sample", type=int, default=0)
    parser.add_argument("--open-sample", type=int, default=0, help="draw the sample from the pages left open only")
    parser.add_argument("--seed", type=int, default=32)
    args = parser.parse_args()
    # every line may quote the dataset (a crawled message: a page's basis and steps quote a warning's
    # text as written): shown as errcat shows it, its controls and runner commands inert
    from crawler.base.sink import echo as say

    with gzip.open(args.dataset / "errors.jsonl.gz", "rt", encoding="utf-8") as f:
        records = [json.loads(line) for line in f]
    actors = collections.Counter((r["meaning"].get("action") or {}).get("actor") for r in records)
    why = collections.Counter(concrete(r) for r in records)
    total = len(records)
    done = total - why[None]
    say(f"entries {total:,}; who acts on {total - actors[None]:,} ({(total - actors[None]) / total:.1%})")
    say("who acts: " + ", ".join(f"{k} {v:,} ({v / total:.1%})" for k, v in actors.most_common()))
    unseen = sum("cannot tell whose" in ((r["meaning"].get("action") or {}).get("says") or "") for r in records)
    say(f"who acts left open (the page says errcat cannot tell, no actor claimed): {unseen:,} ({unseen / total:.1%})")
    say(f"says what to do: {done:,} ({done / total:.1%}): " + ", ".join(f"{k} {v:,}" for k, v in why.most_common() if k is not None))
    if args.sample or args.open_sample:
        from crawler.model.kinds import exception_word

        rng = random.Random(args.seed)
        pool = [r for r in records if "cannot tell whose" in ((r["meaning"].get("action") or {}).get("says") or "")] if args.open_sample else records
        for r in rng.sample(pool, min(args.open_sample or args.sample, len(pool))):
            a = r["meaning"].get("action") or {}
            say("")
            say(f"{r['id']}  {r['kind']} {exception_word(r)}  {r['location']['path']}:{r['location']['line']}  {r['location']['qualname']}")
            say(f"  message: {r['message']['text'][:240]!r}")
            # (an open page stores actor "internal" with the words "errcat cannot tell": shown as the page says it)
            shown = "open (the page: errcat cannot tell)" if "cannot tell whose" in (a.get("says") or "") else a.get("actor")
            say(f"  actor:   {shown}  ({a.get('basis')})")
            for step in a.get("steps") or []:
                say(f"  step:    {step}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
