"""A retired entry's successor found among every live entry, not only the added ones: a V0 check
removed while its V1 twin, slightly reworded in another file and added releases before, lives on."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from helpers import jsonl_bytes

from crawler.versions.diff import twins

ARGS = ["--name", "acme/widgets", "--include", "pkg/**/*.py"]

V0 = """
class Worker:
    def check_cache(self, blocks):
        if blocks <= 0:
            raise ValueError(f"No available memory for the cache blocks. Try increasing gpu_memory_utilization, got {blocks}")


def other(x):
    if x:
        raise ValueError("the tokenizer mode is not supported here at all")
"""
V1 = """
class GPUWorker:
    def check_cache(self, blocks):  # the same name in another class and module: a ratio of 0.85 is not needed
        if blocks <= 0:
            raise ValueError(f"No available memory for the cache blocks. Try increasing `gpu_memory_utilization` when initializing the engine, got {blocks}")


def unrelated(x):
    if x:
        raise ValueError("the scheduler mode is not supported by the V1 engine")
"""


@pytest.fixture
def upstream(fixture_repo):
    fixture_repo.commit({"pkg/__init__.py": "", "pkg/v0/worker.py": V0}, tag="v1.0")
    fixture_repo.commit({"pkg/v1/worker.py": V1}, tag="v1.1")  # the twin comes while V0 lives on
    fixture_repo.commit({"pkg/v0/worker.py": None}, tag="v2.0")  # V0 removed: nothing is added
    return fixture_repo


def by_template(dataset: Path) -> dict[str, dict]:
    return {r["message"]["text"]: r for r in map(json.loads, jsonl_bytes(dataset).splitlines())}


def tree(directory: Path) -> dict[str, bytes]:
    return {p.relative_to(directory).as_posix(): p.read_bytes() for p in sorted(directory.rglob("*")) if p.is_file()}


@pytest.mark.slow
def test_a_removed_check_is_succeeded_by_its_live_twin_in_another_file(upstream, cli, tmp_path):
    out = tmp_path / "out"
    result = cli("history", "--repo", upstream.path, *ARGS, "--out", out, "v1.0", "v1.1", "v2.0")
    assert result.exit_code == 0, result.output
    records = by_template(out / "acme" / "widgets")
    old = next(r for t, r in records.items() if t.startswith("No available memory") and "engine" not in t)
    new = next(r for t, r in records.items() if t.startswith("No available memory") and "engine" in t)
    assert old["history"]["retired"] and old["history"]["removed_in"]["version"] == "v2.0"
    assert old["history"]["replaced_by"] == new["id"]
    assert new["history"]["replaces"] == [old["id"]]
    assert not new["history"]["retired"] and new["history"]["first_seen"]["version"] == "v1.1"
    # another error of the same exception, a different message: retired with no successor
    gone = records["the tokenizer mode is not supported here at all"]["history"]
    assert gone["retired"] and gone["replaced_by"] is None
    assert records["the scheduler mode is not supported by the V1 engine"]["history"]["replaces"] == []
    # the same run again: the same bytes
    again = tmp_path / "again"
    assert cli("history", "--repo", upstream.path, *ARGS, "--out", again, "--no-cache", "v1.0", "v1.1", "v2.0").exit_code == 0
    assert tree(out) == tree(again)


def key(text: str, exception: str = "ValueError") -> tuple[str, ...]:
    return ("message", exception, text)


def test_twins_best_first_one_successor_each_many_retired_to_one():
    gone = [("a" * 16, key("Free memory on device {} is less than desired")), ("b" * 16, key("Free memory on device {} is less than wanted"))]
    live = [
        ("c" * 16, key("Free memory on device {} ({}/{} GiB) is less than desired")),
        ("d" * 16, key("Not enough memory on device {} for the weights")),
        ("e" * 16, key("Free memory on device {} is less than desired", "RuntimeError")),  # another exception
    ]
    found = twins(gone, live, lambda eid: "f")
    assert [(o, n) for o, n, _ in found] == [("a" * 16, "c" * 16), ("b" * 16, "c" * 16)]
    assert twins(gone, live, {"a" * 16: "f", "b" * 16: "g", "c" * 16: "f"}.__getitem__) == found[:1]  # 0.79 and no same name
    # input order does not matter
    assert twins(list(reversed(gone)), list(reversed(live)), lambda eid: "f") == found


def test_a_middling_ratio_needs_the_same_function_name():
    gone = [("a" * 16, key("Unsupported quantization method {} for this layer"))]
    live = [("b" * 16, key("Unsupported quantization scheme {} for MoE layers"))]
    names = {"a" * 16: "get_quant_method", "b" * 16: "get_quant_method"}
    assert twins(gone, live, names.__getitem__) != []
    names["b" * 16] = "create_weights"
    assert twins(gone, live, names.__getitem__) == []
    # nothing with no message, whatever its function
    assert twins([("a" * 16, ("site", "ValueError", "m", "f"))], [("b" * 16, ("site", "ValueError", "m", "f"))], lambda e: "f") == []
