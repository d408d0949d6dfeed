"""A dataset whose manifest names another schema_version is refused by show and match as diff,
render and history refuse it: one line, exit non-zero (they answered from it before)."""

from __future__ import annotations

import json

import consumer_data
import pytest


@pytest.fixture
def old_dataset(tmp_path):
    data = consumer_data.write(tmp_path)
    manifest = data / "manifest.json"
    document = json.loads(manifest.read_text(encoding="utf-8"))
    document["schema_version"] = "2"
    manifest.write_text(json.dumps(document), encoding="utf-8")
    return data


@pytest.mark.slow
def test_show_and_match_refuse_a_dataset_of_another_schema_version(old_dataset, tmp_path):
    from tests.helpers import run_errcat

    kv = next(r for r in consumer_data.records() if r["message"]["text"].startswith("Unknown KV"))
    for argv in (
        ["show", kv["id"], "--data", old_dataset, "--no-pager"],
        ["match", "Unknown KV cache group kind 'x' in backend_per_kind. Valid kinds are: y", "--data", old_dataset, "--cache-dir", tmp_path / "cache"],
    ):
        result = run_errcat(argv, "as is", tmp_path)
        assert result.returncode != 0 and result.stdout == "", (argv[0], result.stdout)
        assert result.stderr.startswith("errcat: ") and result.stderr.count("\n") == 1, result.stderr
        assert "manifest.json" in result.stderr and "schema_version" in result.stderr, result.stderr
