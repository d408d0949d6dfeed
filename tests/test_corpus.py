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

ROOT = Path(__file__).resolve().parent.parent
VLLM = Path("/work/data/vllm")
sys.path.insert(0, str(ROOT / "bench"))

#: Floors: what the matcher reaches (85 of 95 entry pastes, 89%), less a small margin.
MIN_TOP1 = 0.87


@pytest.fixture(scope="module")
def vllm_dataset(tmp_path_factory):
    if not (VLLM / ".git").exists():
        pytest.skip("needs the local vLLM repository at /work/data/vllm")
    out = tmp_path_factory.mktemp("corpus")
    subprocess.run([sys.executable, "-m", "crawler", "crawl", "--repo", str(VLLM), "--ref", "v0.33.0", "--out", str(out)],
                   cwd=ROOT, check=True, capture_output=True, timeout=600)
    return out / "vllm-project" / "vllm"


def test_corpus_top1_and_no_false_claims(vllm_dataset):
    from match_corpus import CORPUS, evaluate

    from crawler.match import Matcher

    rows = [json.loads(line) for line in CORPUS.read_text(encoding="utf-8").splitlines() if line.strip()]
    assert len(rows) >= 100 and all(r["url"].startswith("https://github.com/vllm-project/vllm/issues/") for r in rows)
    r = evaluate(rows, [Matcher.load(vllm_dataset)])
    assert r["top1"] / r["entry"] >= MIN_TOP1, r["misses"]
    assert r["false_claims_foreign_none"] == 0, r["misses"]
    assert r["foreign_answered"] == r["foreign"]
