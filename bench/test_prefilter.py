"""Check that the test-file reader's shortcuts lose nothing, over a real tree, and time them:
``python bench/test_prefilter.py REPO REF`` (vLLM: ``python bench/test_prefilter.py ../vllm v0.33.0``).

Reads every test file a crawl of REF selects (the upstream configuration REPO names) from git
once, then reads each twice in one process:

- as the crawl does (``codefacts.read_test_file``): a file whose text calls no raises function
  is not parsed, and of the others only the top-level statements that can hold a block are
  (``extract.raises_regions``);
- as the crawl did before the statements were left out: each file that is parsed parsed whole
  (its result must be the very same);
- fully: every file decoded and parsed whole, every function body walked (``_TestWalker``
  with no lines to skip), whatever its text says.

and prints how many files each shortcut passed over, the CPU seconds (``time.process_time``) of
both readings, and every file whose blocks differ (none: exit 0; else exit 1). Equal blocks
link equal reproductions (``catalogue.reproductions`` reads nothing else of a test file).
"""

from __future__ import annotations

import argparse
import ast
import gc
import sys
import time
import warnings
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from crawler.extract import codefacts, parse
from crawler.extract.text import decode_source, module_name
from crawler.source.config import identify, load_config
from crawler.source.opener import open_snapshot


def full_blocks(path: str, data: bytes) -> list[dict] | None:
    """The raises blocks of a test file read whole (None: it does not decode or parse)."""
    try:
        text = decode_source(data)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            tree = parse.parse_source(text)
    except (SyntaxError, UnicodeDecodeError, LookupError, ValueError, parse.FallbackUnavailable):
        return None
    module, is_package = module_name(path)
    walker = codefacts._TestWalker(module, is_package, text.splitlines())
    walker.walk(tree.body)
    return walker.found


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("repo")
    ap.add_argument("ref")
    opts = ap.parse_args()
    upstream = identify(opts.repo, None, None, load_config(None))
    with open_snapshot(repo=opts.repo, ref=opts.ref, pypi=None, upstream=upstream, include=list(upstream.include), exclude=list(upstream.exclude)) as snapshot:
        tests = [(e.path, data) for e, data in snapshot.read(list(snapshot.tests))]
    gc.disable()
    parsed: list[str] = []
    reduced: list[str] = []
    plain_reduced = codefacts._reduced_tree

    def counting(text: str, said: str, named: list[int] | None) -> ast.Module | None:
        parsed.append(text)
        tree = plain_reduced(text, said, named)
        if tree is not None:
            reduced.append(text)
        return tree

    codefacts._reduced_tree = counting
    start = time.process_time()
    fast = [codefacts.read_test_file(path, data) for path, data in tests]
    fast_cpu = time.process_time() - start
    codefacts._reduced_tree = lambda text, said, named: None
    start = time.process_time()
    whole_parsed = [codefacts.read_test_file(path, data) for path, data in tests]
    whole_cpu = time.process_time() - start
    codefacts._reduced_tree = plain_reduced
    start = time.process_time()
    full = [full_blocks(path, data) for path, data in tests]
    full_cpu = time.process_time() - start
    differ = []
    for (path, _), got, plain in zip(tests, fast, whole_parsed, strict=True):
        if got != plain:
            differ.append(f"{path}: not the result it gives parsed whole")
    for (path, _), got, whole in zip(tests, fast, full, strict=True):
        if whole is None:
            if got["status"] == "ok" and got["tests"]:
                differ.append(f"{path}: does not parse whole, yet read as {len(got['tests'])} block(s)")
        elif got["status"] != "ok" or got["tests"] != whole:
            differ.append(
                f"{path}: {len(whole)} block(s) read whole, {len(got.get('tests') or ())} as the crawl reads it "
                f"({got['status']}{': ' + str(got['reason']) if got['reason'] else ''})"
            )
    blocks = sum(len(b) for b in full if b)
    with_blocks = sum(1 for b in full if b)
    print(f"{len(tests)} test files, {with_blocks} with raises blocks ({blocks} blocks read whole)")
    print(f"  not parsed (no call of a raises function in the text): {len(tests) - len(parsed)}")
    print(f"  parsed with the functions that cannot hold a block left out: {len(reduced)} of {len(parsed)}")
    print(
        f"  CPU: {fast_cpu:.2f} s as the crawl reads them, {whole_cpu:.2f} s with every file that is parsed parsed whole "
        f"({whole_cpu / fast_cpu:.2f}x), {full_cpu:.2f} s with every file read whole ({full_cpu / fast_cpu:.2f}x)"
    )
    for line in differ:
        print(f"  DIFFERS {line}")
    print("every file gives the blocks it gives read whole" if not differ else f"{len(differ)} file(s) differ")
    return 1 if differ else 0


if __name__ == "__main__":
    sys.exit(main())
