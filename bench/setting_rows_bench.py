#!/usr/bin/env python3
"""How many knob rows of the pages say "Setting" (#32 item 3: no setting where none exists)?

    python bench/setting_rows_bench.py output/vllm-project/vllm ROWS.jsonl

Reads a dataset's ``errors.jsonl.gz``, lays out each entry's "Derived from the code" rows as the
page does (``meaning_page.rows`` with ``actions.settable``) and counts the knob rows by label and
knob kind; ROWS.jsonl gets one line per row (id, label, kind, owner, name, text, actor, place), to
compare two branches' labels over one dataset (the rows are made when a page is shown).
"""

import collections
import gzip
import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from crawler.catalogue.actions import settable
from crawler.consume.meaning_page import rows

data, out = sys.argv[1], sys.argv[2]
c = collections.Counter()
with gzip.open(f"{data}/errors.jsonl.gz", "rt") as f, open(out, "w") as o:
    for line in f:
        r = json.loads(line)
        m = r.get("meaning") or {}
        rs = rows(m, "When", lambda k, r=r: settable(r, k))
        knobs = m.get("knobs") or []
        i = 0
        for label, text in rs:  # (one row per knob, in order, between the trigger and the fix)
            if label in ("Setting", "Reads", "Request field", "Named in the message"):
                k = knobs[i]
                i += 1
                c[(label, k["kind"])] += 1
                row = {"id": r["id"], "label": label, "kind": k["kind"], "owner": k.get("owner"), "name": k["name"], "flags": k.get("flags"), "text": text}
                row |= {"actor": (m.get("action") or {}).get("actor"), "path": r["location"]["path"], "qualname": r["location"]["qualname"]}
                o.write(json.dumps(row) + "\n")
for k, v in sorted(c.items()):
    print(*k, v, sep="\t")
print("total", sum(c.values()))
