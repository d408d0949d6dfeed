"""The extraction's CPU with some extract modules compiled by mypyc, against the pure-Python package.

``python bench/compiled.py REPO REF [MODULE ...]`` (vLLM: ``python bench/compiled.py ../vllm
v0.33.0 codefacts``) copies this checkout's ``crawler`` package into two temporary folders,
compiles the named modules of ``crawler/extract`` with mypyc in one of them (``codefacts`` when
none is named; mypyc comes with mypy, of the test extra, and needs a C compiler), and runs the
same extraction in a child process per side and round, the sides alternating: each source file
of REF the crawl selects, parsed once before the clock starts, then ``extract_file`` over all
(the walk, the call graph, the knobs, the rest past the parse). It prints the CPU seconds
(``time.process_time``) of each run and whether every file's result is the same on both sides.

Nothing is installed: errcat itself stays pure Python, which is what a fresh install runs.
"""

from __future__ import annotations

import argparse
import hashlib
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

#: What each child runs: the selected files read from git, parsed, then extracted on the clock;
#: it prints the CPU seconds, then one digest over every file's result.
CHILD = r"""
import gc, hashlib, json, sys, time
from crawler.extract import native, parse, visitor
from crawler.extract.surface import Settings
from crawler.source.config import identify, load_config
from crawler.source.opener import open_snapshot

repo, ref = sys.argv[1], sys.argv[2]
upstream = identify(repo, None, None, load_config(None))
with open_snapshot(repo=repo, ref=ref, pypi=None, upstream=upstream, include=list(upstream.include),
                   exclude=list(upstream.exclude)) as snapshot:
    files = [(e.path, d) for e, d in snapshot.read([e for e in snapshot.files if not native.language_of(e.path)])]
settings = Settings.of(upstream)
plain = parse.parse_source
trees = {}
for path, data in files:
    try:
        trees[path] = plain(data.decode("utf-8"))
    except Exception:  # noqa: BLE001 - such a file is parsed again, on the clock, as a crawl would
        pass
current = [""]
parse.parse_source = lambda text: trees[current[0]] if current[0] in trees else plain(text)
gc.disable()
digest = hashlib.sha256()
start = time.process_time()
results = []
for path, data in files:
    current[0] = path
    results.append(visitor.extract_file(path, data, settings))
spent = time.process_time() - start
for result in results:
    digest.update(json.dumps(result, sort_keys=True, default=repr).encode())
print(f"{spent:.2f} {digest.hexdigest()}")
"""


def _side(into: Path) -> Path:
    shutil.copytree(ROOT / "crawler", into / "crawler", ignore=shutil.ignore_patterns("__pycache__", "*.so"))
    shutil.copy(ROOT / "pyproject.toml", into / "pyproject.toml")
    return into


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("repo")
    ap.add_argument("ref")
    ap.add_argument("modules", nargs="*", default=["codefacts"], help="modules of crawler/extract to compile")
    ap.add_argument("--rounds", type=int, default=2)
    opts = ap.parse_args()
    with tempfile.TemporaryDirectory(prefix="errcat-mypyc-") as tmp:
        pure, compiled = _side(Path(tmp, "pure")), _side(Path(tmp, "compiled"))
        sources = [f"crawler/extract/{name}.py" for name in opts.modules]
        built = subprocess.run([sys.executable, "-m", "mypyc", *sources], cwd=compiled, capture_output=True, text=True)
        if built.returncode != 0:
            sys.exit(f"mypyc failed on {', '.join(opts.modules)}:\n{built.stdout[-2000:]}{built.stderr[-2000:]}")
        times: dict[str, list[float]] = {"pure": [], "compiled": []}
        digests: dict[str, set[str]] = {"pure": set(), "compiled": set()}
        for _ in range(opts.rounds):
            for name, side in (("pure", pure), ("compiled", compiled)):
                run = subprocess.run(
                    [sys.executable, "-c", CHILD, str(Path(opts.repo).resolve()), opts.ref],
                    cwd=side,
                    env={**os.environ, "PYTHONPATH": str(side)},
                    capture_output=True,
                    text=True,
                )
                if run.returncode != 0:
                    sys.exit(f"the {name} run failed:\n{run.stderr[-2000:]}")
                spent, digest = run.stdout.split()
                times[name].append(float(spent))
                digests[name].add(digest)
    same = len(digests["pure"] | digests["compiled"]) == 1
    print(f"compiled: {', '.join(opts.modules)}; extraction past the parse, CPU seconds per run (sides alternating):")
    for name, spent in times.items():
        print(f"  {name:9s} {' '.join(f'{t:.2f}' for t in spent)}   mean {sum(spent) / len(spent):.2f}")
    ratio = (sum(times["compiled"]) / len(times["compiled"])) / (sum(times["pure"]) / len(times["pure"]))
    print(f"  compiled / pure: {ratio:.2f}; every file's result the same on both sides: {'yes' if same else 'NO'}")
    print(f"  ({hashlib.sha256(''.join(sorted(digests['pure'])).encode()).hexdigest()[:12]} over the results)")
    if not same:
        sys.exit(1)


if __name__ == "__main__":
    main()
