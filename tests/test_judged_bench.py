"""The blind judges' readings kept as a regression corpus (#32): ``bench/judged_build.py`` reads the
judges' sections of bench/RESULTS.md into ``bench/judged.jsonl``, and ``bench/actions_bench.py
--judged`` compares a dataset's pages with it: how many give the actor the judge found right, the
regressions first, the pages now right. A real crawl of a fixture repository gives the dataset; the
judged rows are written by the test against its ids."""

from __future__ import annotations

import gzip
import json
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
BENCH = ROOT / "bench"

SOURCE = """def check(x):
    assert x.ndim == 2


def load(name):
    if name not in ("a", "b"):
        raise ValueError(f"unknown format {name}")
"""

SECTIONS = """# results

## s99-judge: who acts, blind seed 90 (main 0000000)

| # | id | actor said | v | why |
|---|---|---|---|---|
| 1 | 1111111111111111 | internal | R | kernel arg check |
| 2 | 2222222222222222 | model | W | `#if defined(USE_ROCM)` throw: the ROCm build; the model has nothing to do with it: environment |
| 3 | 3333333333333333 | open | O | nobody: informational |

## s99-rules: blind seed 90's patterns as rules

| 1 | 4444444444444444 | internal | W | not a judge's line |

## s99-judge2: who acts, blind seed 91 (main 0000000)

1. 5555555555555555 eplb.py:399 limit <= 1023: internal "likely a bug". **W**: a value the user sets (`--eplb-config`). Actor setting:
   lower it.
2. 6666666666666666 api_router.py:83 logger.exception in except: "find the exception it caught". R.
3. 7777777777777777 factory.py:79 config must include a key: open, report. O: caller (the trainer's code).
"""


def _bench(*args: object) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, *map(str, args)], capture_output=True, text=True, cwd=ROOT)


def test_the_judges_sections_read_into_rows(tmp_path):
    (tmp_path / "RESULTS.md").write_text(SECTIONS, encoding="utf-8")
    run = _bench(BENCH / "judged_build.py", "--results", tmp_path / "RESULTS.md", "--out", tmp_path / "judged.jsonl")
    assert run.returncode == 0, run.stderr
    rows = {r["id"][0]: r for r in map(json.loads, (tmp_path / "judged.jsonl").read_text(encoding="utf-8").splitlines())}
    assert set(rows) == {"1", "2", "3", "5", "6", "7"}  # a rules section's line is no judge's
    assert (rows["1"]["seed"], rows["1"]["section"], rows["1"]["said"], rows["1"]["right"]) == (90, "s99-judge", "internal", "internal")
    assert (rows["2"]["verdict"], rows["2"]["said"], rows["2"]["right"]) == ("W", "model", "environment")
    assert rows["3"]["right"] is None  # the judge names nobody
    assert (rows["5"]["seed"], rows["5"]["said"], rows["5"]["right"]) == (91, "internal", "setting")  # a wrapped item joined
    assert rows["6"]["said"] == rows["6"]["right"] == "internal"  # a page that defers to the exception it caught
    assert (rows["7"]["said"], rows["7"]["right"]) == ("open", "caller")
    check = _bench(BENCH / "judged_build.py", "--results", tmp_path / "RESULTS.md", "--out", tmp_path / "judged.jsonl", "--check")
    assert check.returncode == 0, check.stderr


def test_the_kept_corpus_is_what_the_sections_give():
    run = _bench(BENCH / "judged_build.py", "--check")
    assert run.returncode == 0, run.stderr
    rows = [json.loads(line) for line in (BENCH / "judged.jsonl").read_text(encoding="utf-8").splitlines()]
    assert len({(r["seed"], r["id"]) for r in rows}) == len(rows) >= 40 * 6
    assert all(len(r["why"]) <= 200 and r["verdict"] in ("R", "R*", "O", "W") for r in rows)
    assert all(r["right"] == r["said"] for r in rows if r["verdict"] in ("R", "R*"))


@pytest.fixture(scope="module")
def dataset(crawl_once) -> Path:
    return crawl_once({"pkg/__init__.py": "", "pkg/mod.py": SOURCE}, "--name", "acme/widgets") / "acme" / "widgets"


def _actors(dataset: Path) -> dict[str, str]:
    sys.path.insert(0, str(BENCH))
    from actions_bench import actor_now

    with gzip.open(dataset / "errors.jsonl.gz", "rt", encoding="utf-8") as f:
        return {r["id"]: actor_now(r) for r in map(json.loads, f)}


def test_the_bench_says_which_judged_pages_moved(dataset, tmp_path):
    actors = _actors(dataset)
    assert len(actors) >= 2
    (kept, kept_actor), (lost, lost_actor) = sorted(actors.items())[:2]
    other = "request" if lost_actor != "request" else "model"
    rows = [
        {"id": kept, "seed": 1, "verdict": "R", "said": kept_actor, "right": kept_actor, "why": "right"},
        # (the judge found the page right, and now it gives another actor: a regression)
        {"id": lost, "seed": 1, "verdict": "R", "said": other, "right": other, "why": "gone \x1b[2J\x1b]0;owned\x07 wrong\n::error::owned"},
        # (open when judged, and now it gives the judge's actor)
        {"id": lost, "seed": 2, "verdict": "O", "said": "open", "right": lost_actor, "why": "now right"},
        {"id": "0123456789abcdef", "seed": 2, "verdict": "W", "said": "model", "right": "setting", "why": "not in this dataset"},
        {"id": kept, "seed": 2, "verdict": "O", "said": "open", "right": None, "why": "nobody named"},
    ]
    judged = tmp_path / "judged.jsonl"
    judged.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    run = _bench(BENCH / "actions_bench.py", dataset, "--judged", judged)
    assert run.returncode == 0, run.stderr
    said = run.stdout
    assert "judged pages 5; with a right actor 4; in this dataset 3" in said
    assert "seed 1: gives the right actor 1/2 (when judged 2)" in said
    assert "seed 2: gives the right actor 1/1 (when judged 0)" in said
    assert "overall: gives the right actor 2/3 (66.7%); when judged 2 (66.7%)" in said
    lines = said.splitlines()
    start = lines.index("regressions (gave the right actor when judged, no longer): 1")
    assert lines[start + 1].split()[:7] == [lost, "seed", "1", "now", lost_actor, "right", other]
    assert lines[start + 2] == "now right (open or wrong when judged): 1"
    assert lines[start + 3].split() == [lost, "seed", "2", "was", "open", "now", lost_actor]
    # the row's text (a judge's, or a dataset's) reaches the terminal inert
    assert "\x1b" not in said and "\x07" not in said and "gone" in said
    assert not any(line.lstrip().startswith("::") for line in lines), said


@pytest.mark.parametrize("text", ["not json\n", '{"id": 1, "seed": 2}\n', '{"id": "a", "seed": 2, "right": 3}\n'])
def test_a_bad_judged_file_is_one_line_and_a_non_zero_exit(dataset, tmp_path, text):
    judged = tmp_path / "judged.jsonl"
    judged.write_text(text, encoding="utf-8")
    run = _bench(BENCH / "actions_bench.py", dataset, "--judged", judged)
    assert run.returncode == 2 and "Traceback" not in run.stderr and len(run.stderr.splitlines()) == 1, run.stderr
    missing = _bench(BENCH / "actions_bench.py", dataset, "--judged", tmp_path / "absent.jsonl")
    assert missing.returncode == 2 and len(missing.stderr.splitlines()) == 1, missing.stderr
