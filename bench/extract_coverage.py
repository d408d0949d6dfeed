"""Coverage of message templates on a real repository: ``python bench/extract_coverage.py REPO REF``.

Reads every ``vllm/**/*.py`` (or ``--prefix``) blob of REF straight from git's object database
(``git ls-tree`` + ``git cat-file --batch``), runs ``extract_file`` on each and prints: sites by
template form, the share of sites whose template is not opaque, each remaining opaque form with
one example, skipped files, and wall time next to the time of ``ast.parse`` alone.
"""

from __future__ import annotations

import argparse
import ast
import collections
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench import selected_files
from crawler.extract.visitor import extract_file


def read_blobs(repo: str, ref: str, prefix: str) -> list[tuple[str, bytes]]:
    entries = selected_files(Path(repo), ref, prefix)
    proc = subprocess.run(
        ["git", "-C", repo, "cat-file", "--batch"],
        input="".join(f"{sha}\n" for _, sha in entries).encode(),
        capture_output=True,
        check=True,
    )
    out, pos, blobs = proc.stdout, 0, []
    for path, _ in entries:
        header_end = out.index(b"\n", pos)
        size = int(out[pos:header_end].split()[2])
        blobs.append((path, out[header_end + 1 : header_end + 1 + size]))
        pos = header_end + 1 + size + 1
    return blobs


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("repo")
    ap.add_argument("ref")
    ap.add_argument("--prefix", default="vllm/")
    ap.add_argument("--examples", type=int, default=1)
    args = ap.parse_args()

    blobs = read_blobs(args.repo, args.ref, args.prefix)

    # Interleaved per file, so load drift on a shared machine hits both timings alike.
    parse_only = total = 0.0
    results = []
    clock = time.perf_counter
    for path, data in blobs:
        t0 = clock()
        try:
            ast.parse(data)
        except (SyntaxError, ValueError):
            pass
        t1 = clock()
        results.append(extract_file(path, data))
        t2 = clock()
        parse_only += t1 - t0
        total += t2 - t1

    forms = collections.Counter()
    opaque = collections.Counter()
    examples: dict[str, list[str]] = collections.defaultdict(list)
    sites = rendered = bare = reraises = 0
    skipped = []
    for r in results:
        if r["status"] != "ok":
            skipped.append((r["path"], r["reason"]))
            continue
        bare += r["bare_asserts"]
        reraises += r["reraises"]
        for s in r["sites"]:
            sites += 1
            t = s["template"]
            forms[t["form"]] += 1
            if t["opaque"]:
                opaque[t["form"]] += 1
                if len(examples[t["form"]]) < args.examples:
                    examples[t["form"]].append(f"{s['path']}:{s['line']}: {s['snippet']['code'].splitlines()[s['line'] - s['snippet']['start_line']].strip()}")
            else:
                rendered += 1

    print(f"files: {len(blobs)}  skipped: {len(skipped)}  sites: {sites}  bare asserts: {bare}  re-raises: {reraises}")
    print("sites by form:")
    for form, n in forms.most_common():
        print(f"  {form:10} {n:6}")
    share = rendered / sites if sites else 1.0
    print(f"rendered (not opaque): {rendered}/{sites} = {share:.2%}")
    with_message = sites - forms["none"]
    print(f"rendered among sites with a message (form != none): {rendered}/{with_message} = {rendered / max(with_message, 1):.2%}")
    print("opaque by form (one example each):")
    for form, n in opaque.most_common():
        print(f"  {form:10} {n:6}")
        for ex in examples[form]:
            print(f"      {ex}")
    for path, reason in skipped:
        print(f"skipped: {path}: {reason}")
    print(
        f"time: extract {total:.2f}s  ast.parse only {parse_only:.2f}s  overhead {total - parse_only:.2f}s ({(total / parse_only - 1) if parse_only else 0:.0%})"
    )


if __name__ == "__main__":
    main()
