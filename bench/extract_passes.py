"""CPU of each extraction pass over a real repository, in one process:
``python bench/extract_passes.py REPO REF`` (vLLM: ``python bench/extract_passes.py ../vllm v0.33.0``).

Reads the files a crawl selects (the upstream configuration REPO names, native trees and test
files included) from git once, then extracts each the way the crawl's workers do (the collector
off, as there) and prints the CPU seconds (``time.process_time``) each pass took: the parses
(``ast`` for Python source and test files; a native file's tree-sitter parse is timed alone
before, as the floor's), the walk (the visitor, with the call graph as its handler), the knob
readers, the call graph's end (resolving the calls), the rest of
``extract_file`` (decoding, the tree's deallocation), native extraction past its parse, the
headers' macros, the test-file reader past its parse, the derived facts and the cache encoding.
A pass's time excludes the passes it calls. ``--since OLD`` extracts only the files whose blob
differs from OLD's, as a crawl of REF over OLD's cache does. On a shared machine compare passes with ``parse.py``
of the same run: it is the same work every time.
"""

from __future__ import annotations

import argparse
import collections
import dataclasses
import gc
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from crawler.extract import cache, codefacts, derive, knobs, native, parse, runner, visitor
from crawler.extract.native_macros import header_macros
from crawler.extract.surface import Settings
from crawler.source.config import identify, load_config
from crawler.source.opener import open_snapshot

TIMES: collections.Counter[str] = collections.Counter()
_INNER: list[float] = []


def timed(label: str, fn: Callable[..., Any]) -> Callable[..., Any]:
    """``fn``, its CPU time added to ``TIMES[label]`` less that of the timed calls it makes."""

    def run(*args: Any, **kw: Any) -> Any:
        start = time.process_time()
        _INNER.append(0.0)
        try:
            return fn(*args, **kw)
        finally:
            inner = _INNER.pop()
            spent = time.process_time() - start
            TIMES[label] += spent - inner
            if _INNER:
                _INNER[-1] += spent

    return run


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("repo")
    ap.add_argument("ref")
    ap.add_argument(
        "--since", metavar="REF", help="only the files (and test files) whose blob differs from REF's: what a crawl of ref over REF's cache extracts"
    )
    opts = ap.parse_args()
    upstream = identify(opts.repo, None, None, load_config(None))
    kept: set[tuple[str, str]] = set()
    if opts.since:
        with open_snapshot(
            repo=opts.repo, ref=opts.since, pypi=None, upstream=upstream, include=list(upstream.include), exclude=list(upstream.exclude)
        ) as before:
            kept = {(e.path, e.blob) for e in (*before.files, *before.tests)}
    with open_snapshot(repo=opts.repo, ref=opts.ref, pypi=None, upstream=upstream, include=list(upstream.include), exclude=list(upstream.exclude)) as snapshot:
        files = [(e.path, data) for e, data in snapshot.read([e for e in snapshot.files if (e.path, e.blob) not in kept])]
        tests = [(e.path, data) for e, data in snapshot.read([e for e in snapshot.tests if (e.path, e.blob) not in kept])]
    settings = Settings.of(upstream)
    gc.disable()
    kind = ["py"]
    plain_parse = parse.parse_source
    parse.parse_source = lambda *a, **kw: timed(f"parse.{kind[0]}", plain_parse)(*a, **kw)
    # (the call graph is a handler of the visitor's walk: its reading of each statement is the walk's)
    visitor._Extractor.run = timed("walk: visitor + call graph", visitor._Extractor.run)
    visitor.knobs = type(sys)("knobs")  # (the visitor's own reference, so the module's other users are left as they are)
    visitor.knobs.__dict__.update(knobs.__dict__)
    visitor.knobs.declarations = timed("knobs", knobs.declarations)
    codefacts.GraphWalker.facts = timed("call graph, its end", codefacts.GraphWalker.facts)
    extract_file = timed("extract_file, the rest", visitor.extract_file)
    extract_native = timed("native, past its parse", native.extract_native)
    read_test_file = timed("test files, past their parse", codefacts.read_test_file)
    derive_result = timed("derive", derive.derive_result)
    encode = timed("encode", cache.encode_result)

    natives = [(path, data) for path, data in files if native.language_of(path)]
    start = time.process_time()
    for path, data in natives:
        native.parse_tree(path, data)
    TIMES["parse.native"] = time.process_time() - start
    TIMES["native, past its parse"] = -TIMES["parse.native"]
    start = time.process_time()
    macros = header_macros(((p, d) for p, d in files if runner._is_header(p)), native.parse_tree, native.CHECKS)
    TIMES["header macros"] = time.process_time() - start
    settings = dataclasses.replace(settings, macros=macros) if macros else settings
    for path, data in files:
        result = extract_native(path, data, settings.macros) if native.language_of(path) else extract_file(path, data, settings)
        result = derive_result(result)
        if not result.get("transient"):
            encode(result)
    kind[0] = "test"
    for path, data in tests:
        result = read_test_file(path, data)
        if not result.get("transient"):
            encode(result)
    parsing = sum(v for k, v in TIMES.items() if k.startswith("parse."))
    print(f"{len(files)} files ({len(natives)} native), {len(tests)} test files; CPU seconds:")
    for label, spent in TIMES.most_common():
        print(f"  {label:30s} {spent:6.2f}")
    print(f"  {'all but the parses':30s} {sum(TIMES.values()) - parsing:6.2f}")
    print(f"  {'all':30s} {sum(TIMES.values()):6.2f}")


if __name__ == "__main__":
    main()
