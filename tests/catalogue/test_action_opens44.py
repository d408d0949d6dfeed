"""Who acts where the pages said "errcat cannot tell" (#32 items 1 and 3, round 44): a fixture
upstream written here, crawled once through the real CLI, read back as its records' ``meaning.action``.

- a check of an attention backend on the metadata its function is passed (``attn_metadata``, built
  by the project's own model runner for each step) is the code's own; the same test whose message
  states a limit ("supports causal attention only"), one under a guard on a setting, and one on a
  ``*_metadata`` parameter outside attention code are not given that basis;
- ``bench/actions_bench.py`` counts an environment variable to set and a request field to check as
  something concrete to do.
"""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import pytest
from helpers import action_starting as action
from helpers import meaning_records

BACKEND = """
class WidgetAttentionImpl:
    def forward(self, layer, query, attn_metadata):
        if attn_metadata.num_decode_tokens % attn_metadata.num_decodes != 0:
            raise RuntimeError("WidgetAttentionImpl got a query of uneven length")
        if attn_metadata.token_to_req_indices is None:
            raise RuntimeError("Widget prefill request mapping is missing.")
        if not attn_metadata.causal:
            raise NotImplementedError("WidgetAttentionImpl supports causal attention only")
        return query


class WidgetDecodeImpl:
    def __init__(self, cache_config):
        self.cache_config = cache_config

    def forward_decode(self, query, swa_metadata):
        if self.cache_config.enable_widget_table:
            if swa_metadata.widget_table is None:
                raise RuntimeError("Widget table metadata is missing.")
        return query
"""

OFFLOAD = """
class WidgetOffloadManager:
    def submit_store(self, job_metadata):
        if job_metadata.request_id is None:
            raise RuntimeError("Widget store job metadata is missing.")
"""

FILES = {
    "pkg/__init__.py": "",
    "pkg/attention/__init__.py": "",
    "pkg/attention/backends/__init__.py": "",
    "pkg/attention/backends/widget_attn.py": BACKEND,
    "pkg/offload.py": OFFLOAD,
}

_RUNNER = "which acme/widgets's own model runner builds for each step"


@pytest.fixture(scope="module")
def records(crawl_once) -> list[dict]:
    return meaning_records(crawl_once, FILES)


@pytest.mark.slow  # (the module's one crawl)
@pytest.mark.parametrize("message", ["WidgetAttentionImpl got a query of uneven length", "Widget prefill request mapping is missing."])
def test_a_backends_check_on_the_step_metadata_it_is_passed_is_the_codes_own(records, message):
    got = action(records, message)
    assert got["actor"] == "internal" and "the attention metadata its function is passed (`attn_metadata`)" in got["basis"], got
    assert _RUNNER in got["basis"] and "cannot tell" not in got["says"], got


@pytest.mark.slow  # (the module's one crawl)
def test_the_same_metadata_whose_message_states_a_limit_is_not_the_runners(records):
    got = action(records, "WidgetAttentionImpl supports causal attention only")
    assert "attention metadata" not in got["basis"], got


@pytest.mark.slow  # (the module's one crawl)
def test_a_metadata_check_under_a_guard_on_a_setting_is_not_the_runners(records):
    got = action(records, "Widget table metadata is missing.")
    assert "attention metadata" not in got["basis"], got


@pytest.mark.slow  # (the module's one crawl)
def test_a_metadata_parameter_outside_attention_code_is_not_the_runners(records):
    got = action(records, "Widget store job metadata is missing.")
    assert "attention metadata" not in got["basis"], got


def _bench():
    path = Path(__file__).resolve().parents[2] / "bench" / "actions_bench.py"
    spec = importlib.util.spec_from_file_location("actions_bench_opens44", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    sys.modules.pop("actions_bench_opens44", None)
    return module


def _page(actor: str, basis: str, step: str) -> dict:
    return {
        "kind": "raise",
        "meaning": {"action": {"actor": actor, "basis": basis, "steps": [step]}, "knobs": []},
        "explanation_status": "absent",
    }


@pytest.mark.parametrize(
    ("actor", "step", "why"),
    [
        ("environment", "Set the environment variable `WIDGET_PLUGIN_DIR` where it runs, then start it again.", "environment variable"),
        (
            "environment",
            "Check that the peer is up; if the transfers are only slow, raise `kv_connector_extra_config.transfer_timeout` and start again.",
            "named setting",
        ),
        ("request", "Check the structured-output constraint in your request (its regex, JSON schema or grammar) against the message.", "request field"),
        ("request", "Check `prompt_logprob_token_ids` in your request against the condition.", "request field"),
        ("environment", "Check the packages, driver and hardware this runs on against what the message names.", None),
        ("request", "Send the request again once it is corrected; nothing needs to change on the server.", None),
    ],
)
def test_the_bench_counts_an_environment_variable_a_bounding_setting_and_a_request_field_as_concrete(actor, step, why):
    assert _bench().concrete(_page(actor, "a basis", step)) == why
