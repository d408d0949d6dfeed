#!/usr/bin/env python3
"""Build bench/judged.jsonl from the blind judges' sections of bench/RESULTS.md (#32).

    python bench/judged_build.py [--check]

One row per judged page: {"id", "seed", "section", "verdict", "said", "right", "why"}. ``said`` is the
actor the page gave (setting, request, model, environment, caller, internal, open); ``right`` is the
actor the judge says is right: ``said`` for R and R*, the actor the judge names for O and W, null when
the judge names none (or names a pair this script does not read). Actors are read by pattern from the
judge's words; ``FIXED`` holds the ones read by hand where the words say it another way. Only ids and
short reviewer text are kept. ``--check`` exits non-zero when the file on disk differs from what the
sections give (a section edited since, or the file edited by hand).
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
ACTORS = ("setting", "request", "model", "environment", "caller", "internal", "open")
ID = r"[0-9a-f]{16}"
# words a judge uses for an actor
SYNONYMS = {
    "env var": "environment",
    "environment variable": "environment",
    "hardware": "environment",
    "deployment": "environment",
    "the device": "environment",
    "the platform": "environment",
    "the build": "environment",
    "plugin": "caller",
    "config.json": "model",
    "checkpoint": "model",
}
# a word that starts a judge's reading and names no actor
NOBODY = re.compile(r"^(?:nobody|no action|no one|none|nothing)\b", re.I)
ACTOR_WORD = re.compile(r"\b(" + "|".join(ACTORS) + r")s?\b")
VERDICT = re.compile(r"^(R\*|R|O|W)\b")

# read by hand: (seed, id) -> the right actor (None: the judge names none)
FIXED: dict[tuple[int, str], str | None] = {
    (45, "95164a56e112650d"): "internal",  # "not the user's request: vLLM's own hf3fs worker posts ..."
    (45, "94d147afa61215c4"): "setting",  # "`--enable-lora` not set"
    (49, "fceab3274f7d6bca"): "request",  # "mostly the request's media, sometimes the model"
    (66, "a8a63fc4341856d1"): "environment",  # "the daemon is the user's process (environment)"
    (66, "5f2bdf70caba68fc"): "setting",  # "`--kv-cache-dtype`"
    (68, "a0e3844cce772929"): "internal",  # "a request cannot make it None; internal"
    (69, "2b7a07b05d2123f4"): "setting",  # "a setting (`--eplb-config`, ...)"
    (70, "3d5144ab1c4334cd"): "internal",  # "Right: nobody (internal, unreachable)"
}


def actor_at_start(text: str) -> str | None:
    """The actor a reading opens with ("internal: ...", "should be internal", "a setting (...)")."""
    t = re.sub(r"^[\s:;,.(*`\"'-]+|^(?:should be|it is|is|but|the|a|an|→|->)\s+", "", text.strip(), flags=re.I)
    t = re.sub(r"^(?:should be|it is|the|a|an)\s+", "", t, flags=re.I)
    m = re.match(r"(" + "|".join(ACTORS) + r")s?\b", t, re.I)
    if m:
        return m.group(1).lower()
    for word, actor in SYNONYMS.items():
        if t.lower().startswith(word):
            return actor
    return None


def actor_named(text: str) -> str | None:
    """The actor an O/W reading names: at its start, or after its last colon ("...: environment")."""
    named = re.search(r"\b(?:[Aa]ctor(?: is)?:?|Right:) (" + "|".join(ACTORS[:-1]) + r")\b", text)
    if named:
        return named.group(1)
    last = re.search(r"[:;,] (?:is |so |hence )?(" + "|".join(ACTORS[:-1]) + r")\W*$", text)
    if last:
        return last.group(1)
    first = actor_at_start(text)
    if first or NOBODY.match(text.strip(" :(*")):
        return first
    for part in reversed(re.split(r":\s+|\bshould say:?\s*|\bShould say:?\s*", text)[1:]):
        got = actor_at_start(part)
        if got:
            return got
    m = re.search(r"(?:^|[:;] )\s*(?:a |the )?(" + "|".join(ACTORS[:-1]) + r")\b(?: \(|[,;.:]|$)", text)
    return m.group(1) if m else None


def said_actor(text: str) -> str | None:
    """The actor a page gave, as the judge quotes it; a page that defers to the exception it caught
    (or carries) stores actor internal, one that cannot tell is open."""
    t = text.strip().strip("`\"' ")
    m = re.match(r"(?:\*\*)?(" + "|".join(ACTORS) + r")\b", t, re.I)
    if m:
        return m.group(1).lower()
    if "cannot tell" in t:
        return "open"
    if re.search(r"\bcaught\b|\bexception\b|\bwrapper\b", t):
        return "internal"
    return None


def sections(text: str):
    """(section title, seed, lines) for each judged table or list; a section with several seeds is
    cut at its "Seed N" lines."""
    parts = re.split(r"^(?=## )", text, flags=re.M)
    for part in parts:
        title = part.splitlines()[0] if part else ""
        if not re.search(r"blind seeds? \d", title) or "rules" in title.split(":")[0]:
            continue
        name = re.search(r"\b(s\d+-judge\d*)\b", title)
        section = name.group(1) if name else title
        seeds = [int(s) for s in re.findall(r"\d+", re.search(r"blind seeds? ([\d-]+)", title).group(1))]
        if len(seeds) == 2 and seeds[1] - seeds[0] > 1:
            seeds = list(range(seeds[0], seeds[1] + 1))
        seed, chunks = seeds[0], {}
        for line in part.splitlines():
            m = re.match(r"^Seed (\d+)\b", line)
            if m and int(m.group(1)) in seeds:
                seed = int(m.group(1))
            chunks.setdefault(seed, []).append(line)
        for s, lines in chunks.items():
            yield section, s, lines


def table_row(line: str):
    cells = [c.strip() for c in re.split(r"(?<!\\)\|", line.strip().strip("|"))]
    if len(cells) < 4 or not re.fullmatch(ID, cells[1]):
        return None
    for i in range(2, len(cells)):
        v = re.fullmatch(r"(R\*|R|O|W)(?: \([a-z ]+\))?", cells[i].replace("**", ""))
        if v:
            said = cells[i - 1] if i > 2 else ""
            return cells[1], v.group(1), said, " | ".join(cells[i + 1 :]), cells[i]
    return None


def list_items(lines: list[str]):
    """The "N. ID place message: said. V: why" items, a wrapped item joined."""
    items: list[str] = []
    for line in lines:
        if re.match(r"^\d+\. " + ID + r"\b", line):
            items.append(line)
        elif items and line.strip() and not re.match(r"^(?:\d+\.|#|\||- |\*\*)", line) and not items[-1].endswith("\n"):
            items[-1] += " " + line.strip()
        elif items:
            items[-1] += "\n"
    for item in items:
        item = item.strip()
        ident = re.match(r"^\d+\. (" + ID + r")\s+(.*)$", item, re.S).group(2 - 1)
        rest = item.split(ident, 1)[1]
        m = re.search(r"[.;] (?:\*\*)?(R\*|R|O|W)(?:\*\*)?(?=[.:;,( ]|$)", rest)
        if not m:
            yield ident, None, None, rest
            continue
        head = rest[: m.start()]
        head = re.sub(r"\([^()]*\)", "", head)
        said = re.split(r":\s+", head)[-1] if ": " in head else ""
        yield ident, m.group(1), said, rest[m.end() :]


def rows(text: str):
    seen: set[tuple[int, str]] = set()
    for section, seed, lines in sections(text):
        found = []
        for line in lines:
            if line.startswith("|"):
                got = table_row(line)
                if got:
                    found.append(got[:4])
        if not found:
            found = list(list_items(lines))
        for ident, verdict, said_text, why in found:
            if verdict is None or (seed, ident) in seen:
                continue
            seen.add((seed, ident))
            # (an O is a page that says errcat cannot tell; early ones are quoted by their basis, "internal (no setting ...")
            said = "open" if verdict == "O" else said_actor(said_text or "")
            if verdict in ("R", "R*"):
                right = said
            elif (seed, ident) in FIXED:
                right = FIXED[(seed, ident)]
            elif re.match(r"\W*(?:the )?actor (?:is )?right\b|\W*right actor\b|\W*(?:" + "|".join(ACTORS) + r") is (?:the )?right\b", why, re.I):
                right = said
            else:
                right = actor_named(why)
            why = re.sub(r"\s+", " ", re.sub(r"^[\s:.(]+", "", why)).strip()
            why = why if len(why) <= 200 else why[:199].rstrip() + "…"
            yield {"id": ident, "seed": seed, "section": section, "verdict": verdict, "said": said, "right": right, "why": why}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--results", type=Path, default=ROOT / "bench" / "RESULTS.md")
    parser.add_argument("--out", type=Path, default=ROOT / "bench" / "judged.jsonl")
    parser.add_argument("--check", action="store_true")
    args = parser.parse_args()
    made = "".join(json.dumps(r, ensure_ascii=False, sort_keys=True) + "\n" for r in rows(args.results.read_text(encoding="utf-8")))
    if args.check:
        if not args.out.is_file() or args.out.read_text(encoding="utf-8") != made:
            print(f"{args.out}: not what bench/judged_build.py makes from {args.results}", file=sys.stderr)
            return 1
        return 0
    args.out.write_text(made, encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
