"""A retired entry's successor found among every live entry, not only the added ones: a V0 check
removed while its V1 twin, slightly reworded in another file and added releases before, lives on."""

from __future__ import annotations

import json

import jsonschema
import pytest

from crawler.model.schemas import schema_for
from crawler.versions.diff import twins
from tests.versions.test_history import by_template, tree

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
    def check_cache(self, blocks):  # another class, module and file
        if blocks <= 0:
            raise ValueError(f"No available memory for the cache blocks. Try increasing `gpu_memory_utilization`, got {blocks} when initializing the engine")


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
    # the page and errcat match say where the twin is raised, not "reworded" (in the same function)
    page = cli("show", old["id"], "--data", out).stdout
    assert f"Replaced by: {new['id']}: a like message raised elsewhere, in pkg/v1/worker.py (GPUWorker.check_cache), now No available memory" in page
    assert "reworded" not in page
    got = json.loads(
        cli("match", "--data", out, "--json", "ValueError: No available memory for the cache blocks. Try increasing gpu_memory_utilization, got 0").stdout
    )
    jsonschema.validate(got, schema_for("match"))
    top = got["matches"][0]
    assert top["id"] == old["id"] and [(s["id"], s["how"]) for s in top["lineage"]["succeeded_by"]] == [(new["id"], "reworded elsewhere")]
    # worded only like it (a near entry, weak): the answer still leads to what raises it today
    near = cli("match", "--data", out, "ValueError: No free memory left for the cache blocks. Try to increase gpu_memory_utilization")
    assert near.exit_code == 1 and f"      succeeded by {new['id']} (reworded elsewhere; raised today" in near.stdout
    assert f"what raises it today, if the weak candidate is your error: errcat show {new['id']}" in near.stdout
    weak = json.loads(
        cli("match", "--data", out, "--json", "ValueError: No free memory left for the cache blocks. Try to increase gpu_memory_utilization").stdout
    )
    jsonschema.validate(weak, schema_for("match"))  # a near entry's lineage is not in schema 8's answer
    assert weak["weak"][0]["id"] == old["id"] and "lineage" not in weak["weak"][0]
    # the same run again: the same bytes
    again = tmp_path / "again"
    assert cli("history", "--repo", upstream.path, *ARGS, "--out", again, "--no-cache", "v1.0", "v1.1", "v2.0").exit_code == 0
    assert tree(out) == tree(again)


def key(text: str, exception: str = "ValueError") -> tuple[str, ...]:
    return ("message", exception, text)


def test_twins_best_first_one_successor_each_many_retired_to_one():
    gone = [
        ("a" * 16, key("Free memory on device ({}/{} GiB) on startup is less than desired GPU memory utilization")),
        ("b" * 16, key("Failed to infer device type")),
        ("f" * 16, key("Failed to infer the device type")),
    ]
    live = [
        ("c" * 16, key("Free memory on device {} ({}/{} GiB) on startup is less than desired GPU memory utilization ({}, {} GiB)")),
        ("d" * 16, key("Failed to infer device type, please set the environment variable `VLLM_LOGGING_LEVEL=DEBUG`")),
        ("e" * 16, key("Free memory on device {} is less than desired GPU memory utilization", "RuntimeError")),  # another exception
        ("g" * 16, key("Failed to infer the device type, please set `VLLM_LOGGING_LEVEL=DEBUG`")),
    ]
    found = twins(gone, live)
    assert [(o, n) for o, n, _ in found] == [("a" * 16, "c" * 16), ("b" * 16, "d" * 16), ("f" * 16, "g" * 16)]
    assert twins(list(reversed(gone)), list(reversed(live))) == found  # input order does not matter
    # a live entry may succeed several; a word of the retired one missing ("the": 5 of 6) is too many
    more = [*gone[1:], ("h" * 16, key("Failed to infer device type, please set the environment variable"))]
    assert twins(more, live[1:2]) == [("b" * 16, "d" * 16, 1.0), ("h" * 16, "d" * 16, 1.0)]


@pytest.mark.parametrize(
    ("old", "new"),
    [
        ("Pin memory is not supported on OpenVINO.", "Pin memory is not supported on CPU."),  # another platform
        ("num_cpu_blocks must be specified in kv_connector_extra_config", "cpu_bytes_to_use must be specified in kv_connector_extra_config"),
        ("Unknown update type: {}", "Unknown dtype: {}"),
        ("Multi-step execution is not implemented for HPU", "Speculative decoding is not implemented for HPU"),
        ("Invalid input {}", "Invalid input {} for the model"),  # too short to be told apart
        (
            "Custom allreduce is disabled because this process group spans across nodes.",
            "Custom quick allreduce is disabled because this process group spans across nodes.",
        ),
        ("Sliding window is not supported for this model.", "Disabling sliding window is not supported for this model."),
        (
            "Using irope in Ipex is not supported yet, it will fall back to global attention.",
            "Using irope in Pallas is not supported yet, it will fall back to global attention.",
        ),
        ("Chunked prefill is not supported with flashinfer yet.", "Chunked prefill is not supported with rocm_flash_attn yet."),
        ("Mxfp4 does not support non-batched experts format for EP", "Mxfp4 does not support batched experts format for EP"),
    ],
)
def test_a_different_error_is_no_twin(old, new):
    assert twins([("a" * 16, key(old))], [("b" * 16, key(new))]) == []
    assert twins([("a" * 16, ("site", "ValueError", "m", "f"))], [("b" * 16, ("site", "ValueError", "m", "f"))]) == []


@pytest.mark.slow
def test_a_fold_behind_a_catalogue_links_the_twin_the_catalogue_kept(fixture_repo, cli, tmp_path):
    """The V0 check gone by the catalogue (a sync past the last release), its V1 twin seen since
    v1.1: no entry new to the catalogue, so only the twin rule links them, across the gap."""
    fixture_repo.commit({"pkg/__init__.py": "", "pkg/v0/worker.py": V0}, tag="v1.0")
    fixture_repo.commit({"pkg/v1/worker.py": V1}, tag="v1.1")
    fixture_repo.commit({"pkg/v0/worker.py": None})
    out = tmp_path / "output"
    assert cli("sync", "--repo", fixture_repo.path, *ARGS, "--out", out).exit_code == 0
    assert cli("history", "--repo", fixture_repo.path, *ARGS, "--per-release", tmp_path / "r", "v1.0", "v1.1").exit_code == 0
    folded = cli("history", "--fold", tmp_path / "r", "--catalogue", out, "--out", tmp_path / "backfill")
    assert folded.exit_code == 0, folded.output
    records = by_template(tmp_path / "backfill" / "acme" / "widgets")
    old = next(r for t, r in records.items() if t.startswith("No available memory") and "engine" not in t)
    new = next(r for t, r in records.items() if t.startswith("No available memory") and "engine" in t)
    assert old["history"]["retired"] and old["history"]["replaced_by"] == new["id"]
    assert old["history"]["removed_in"]["version"] != "v1.1"  # removed by the catalogue, not where the twin began
    assert new["history"]["replaces"] == [old["id"]]
    assert records["the tokenizer mode is not supported here at all"]["history"]["replaced_by"] is None


@pytest.mark.slow
def test_a_retired_entry_with_too_many_alike_live_ones_gets_no_twin_and_is_said(fixture_repo, cli, tmp_path, monkeypatch):
    """Over ``MAX_TWIN_CANDIDATES`` live entries holding a retired one's words (lowered here to 3):
    no twin is picked among them, and the history says so in one line."""
    from crawler.versions import diff, sync

    monkeypatch.setattr(diff, "MAX_TWIN_CANDIDATES", 3)
    monkeypatch.setattr(sync, "MAX_TWIN_CANDIDATES", 3)
    alike = "".join(
        f'\n\ndef check{n}(x):\n    if x:\n        raise ValueError(f"the cache mode is not supported on this device {{x}} case {n}")\n' for n in range(4)
    )
    fixture_repo.commit(
        {
            "pkg/__init__.py": "",
            "pkg/old.py": 'def check(x):\n    raise ValueError(f"the cache mode is not supported on this device {x}")\n',
            "pkg/alike.py": alike,
        },
        tag="v1.0",
    )
    fixture_repo.commit({"pkg/old.py": None}, tag="v2.0")
    out = tmp_path / "out"
    result = cli("history", "--repo", fixture_repo.path, *ARGS, "--out", out, "v1.0", "v2.0")
    assert result.exit_code == 0, result.output
    old = next(r for t, r in by_template(out / "acme" / "widgets").items() if t.startswith("the cache mode") and "case" not in t)
    assert old["history"]["retired"] and old["history"]["replaced_by"] is None
    assert f"history: 1 retired entry given no twin: more than 3 live entries of their exception hold their words ({old['id']})" in result.stderr
