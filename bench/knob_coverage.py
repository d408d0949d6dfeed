"""Knob coverage of a written dataset, where issue #15 sets a target:

    python bench/knob_coverage.py output/vllm-project/vllm [--missing] [--sample N --seed S]

Prints how many entries have a knob (and one other than a name the message quotes), a trigger,
a fix, a reproduction and callers; the same for the raise and assert entries of the upstream's
settings files (``--prefix``, vLLM's by default); with ``--missing`` each of those without a knob:
its place, template and innermost guard; with ``--sample N`` N random knobs and N random
triggers (``--seed``) to check by hand.
"""

from __future__ import annotations

import argparse
import gzip
import random
from pathlib import Path

import orjson

PREFIXES = ("vllm/config/", "vllm/sampling_params.py", "vllm/engine/arg_utils.py")


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("dataset", type=Path)
    ap.add_argument("--prefix", action="append", help="a path prefix of the settings files (repeatable)")
    ap.add_argument("--missing", action="store_true")
    ap.add_argument("--sample", type=int, default=0)
    ap.add_argument("--seed", type=int, default=15)
    opts = ap.parse_args()
    prefixes = tuple(opts.prefix or PREFIXES)
    with gzip.open(opts.dataset / "errors.jsonl.gz") as f:
        records = [orjson.loads(line) for line in f]

    def count(rows: list[dict], label: str) -> None:
        m = [r["meaning"] for r in rows]
        print(
            f"{label}: {len(rows)} entries; knob {sum(1 for x in m if x['knobs'])} "
            f"(not only a quoted name: {sum(1 for x in m if any(k['kind'] != 'message_name' for k in x['knobs']))}), "
            f"trigger {sum(1 for x in m if x['trigger'])}, fix {sum(1 for x in m if x['fix'])}, "
            f"reproduction {sum(1 for x in m if x.get('reproductions'))}, callers {sum(1 for x in m if x.get('callers'))}"
        )

    raised = [r for r in records if r["kind"] in ("raise", "assert")]
    count(records, "all")
    count(raised, "raise/assert")
    settings = [r for r in raised if r["sites"][0]["path"].startswith(prefixes)]
    count(settings, "raise/assert in " + ", ".join(prefixes))
    if opts.missing:
        for r in sorted(settings, key=lambda r: (r["sites"][0]["path"], r["sites"][0]["line"])):
            if not r["meaning"]["knobs"]:
                s = r["sites"][0]
                guard = (s["facts"]["guards"] or ["-"])[-1]
                print(f"{s['path']}:{s['line']} {s['qualname']}\n    {r['sites'][0]['template']['text'][:100]!r}\n    guard: {guard[:100]}")
    if opts.sample:
        rng = random.Random(opts.seed)
        knobbed = [r for r in records if any(k["kind"] != "message_name" for k in r["meaning"]["knobs"])]
        print("\n# knobs")
        for r in rng.sample(knobbed, min(opts.sample, len(knobbed))):
            s = r["sites"][0]
            k = rng.choice([k for k in r["meaning"]["knobs"] if k["kind"] != "message_name"])
            print(
                f"{s['path']}:{s['line']} {s['qualname']} | {k['kind']} {k['name']} ({k['owner']}.{k['field']})"
                f"\n    {r['sites'][0]['template']['text'][:100]!r}\n    guard: {(s['facts']['guards'] or ['-'])[-1][:120]}"
            )
        print("\n# triggers")
        for r in rng.sample(records, min(opts.sample, len(records))):
            s = r["sites"][0]
            print(f"{s['path']}:{s['line']} {s['qualname']} [{r['kind']}]\n    {r['meaning']['trigger']}\n    guards: {s['facts']['guards']}")


if __name__ == "__main__":
    main()
