"""Real pastes from vLLM's issue tracker (tests/data/pastes.jsonl) against a crawl of vLLM.

Needs the local vLLM repository the corpus's entry ids were taken from (a v0.33.0 crawl); the
benchmark bench/match_corpus.py reports the same figures with the misses.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
VLLM = Path("/work/data/vllm")
sys.path.insert(0, str(ROOT / "bench"))

#: Floors of top-1 over the pastes expecting an entry: what the matcher reaches less one paste
#: (97/102 as pasted; 102/102 with reworded messages in v0.33.0's words).
MIN_TOP1 = {False: 0.92, True: 0.98}
#: Floors of the pastes answered with their entry as a match (not a weak candidate), likewise:
#: 66/102 as pasted, 73/102 in current words (62 and 70 before a pydantic error's last line
#: alone, and an older wording that stopped where today's goes on, were read).
MIN_MATCHED = {False: 0.63, True: 0.70}


@pytest.fixture(scope="module")
def vllm_dataset(tmp_path_factory):
    if not (VLLM / ".git").exists():
        pytest.skip("needs the local vLLM repository at /work/data/vllm")
    out = tmp_path_factory.mktemp("corpus")
    subprocess.run([sys.executable, "-m", "crawler", "crawl", "--repo", str(VLLM), "--ref", "v0.33.0", "--out", str(out)],
                   cwd=ROOT, check=True, capture_output=True, timeout=600)
    return out / "vllm-project" / "vllm"


@pytest.mark.parametrize("current", [False, True], ids=["as-pasted", "current-wording"])
def test_corpus_top1_and_no_false_claims(vllm_dataset, current):
    from match_corpus import CORPUS, evaluate

    from crawler.consume.match import Matcher

    rows = [json.loads(line) for line in CORPUS.read_text(encoding="utf-8").splitlines() if line.strip()]
    assert len(rows) >= 100 and all(r["url"].startswith("https://github.com/vllm-project/vllm/issues/") for r in rows)
    r = evaluate(rows, [Matcher.load(vllm_dataset)], current)
    assert r["top1"] / r["entry"] >= MIN_TOP1[current], r["misses"]
    assert r["matched"] / r["entry"] >= MIN_MATCHED[current], r["matched"]
    assert r["false_claims_foreign_none"] == 0, r["misses"]
    assert r["foreign_answered"] == r["foreign"]


def test_root_cause_comes_before_the_umbrella(vllm_dataset):
    from crawler.consume.match import Matcher, match

    paste = (
        "(EngineCore_DP0 pid=2331) ERROR 11-30 10:01:02 [core.py:1021] ValueError: Total number of attention heads (64) "
        "must be divisible by tensor parallel size (3).\n"
        "(APIServer pid=1) ERROR 11-30 10:01:03 [utils.py:785] RuntimeError: Engine core initialization failed. "
        "See root cause above. Failed core proc(s): {}\n"
    )
    result = match(paste, [Matcher.load(vllm_dataset)])
    assert [(m.entry.id, m.role) for m in result.matches[:2]] == [("4a4993d3387af5b8", "root cause"), ("100ad1acf3003567", "umbrella")]


def test_the_older_wordings_corpus_is_well_formed_and_read_alike_by_the_benchmark(tmp_path):
    """tests/data/pastes_old.jsonl: real texts in older vLLM wordings, each with its link and the
    ids of the entries that raised it; the benchmark's --old part counts a match to one of those
    ids as found, another match as a false claim (measured against a real history in
    bench/RESULTS.md: the data is not in the tests)."""
    import re

    from match_corpus import CORPUS, evaluate_old

    rows = [json.loads(line) for line in CORPUS.with_name("pastes_old.jsonl").read_text(encoding="utf-8").splitlines() if line.strip()]
    assert len(rows) >= 20
    for r in rows:
        assert re.fullmatch(r"https://github\.com/[\w.-]+/[\w.-]+/(issues|pull)/\d+", r["url"]), r
        assert r["text"].strip() and r["expect"] and all(re.fullmatch(r"[0-9a-f]{16}", e) for e in r["expect"]), r
        assert r["release"] is None or re.fullmatch(r"\d+\.\d+\.\d+(\.post\d+)?", r["release"]), r
    assert len({r["url"] for r in rows}) == len(rows)
    assert evaluate_old(rows, []) == {"rows": len(rows), "strong": 0, "weak": 0, "false_claims": 0,
                                      "misses": [(r["url"], r["expect"], None) for r in rows]}
