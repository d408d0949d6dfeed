"""Who acts, the wrong claims and open pages of round 46's blind seed 70 (s46-judge, #32) as rules:
a fixture upstream whose code is written here, crawled through the real CLI, read back as its
records' ``meaning.action``; beside each rule a near case it must not take.

- an ``isinstance`` assert in the branch left after branches on each other value of the same name's
  ``type`` narrows the type: internal, not the request (W36); an ``isinstance`` assert with no such
  branches is not that rule;
- a raise that looks a parameter up in a module's table, where the request's fields are only in the
  guards on the way there, is not the request's (W21); a lookup of a name the request gave (a local
  taken from ``tool_choice``) still is;
- a log whose remedy says to disable what a value its condition finds present holds (``sinks is not
  None``) is no setting when no option has that name (W26); one whose name is an option's is not that rule;
- a message that says the code takes "16-token blocks" is the setting ``--block-size`` (W27); a
  message about 16-token chunks is not that rule;
- a raise or log on the status a CUDA runtime call returned (``cudaHostRegister``) is the environment
  (O15); one on a release call (``cudaHostUnregister``) is not that rule;
- a key missing from a KV offloading config dict is ``--kv-transfer-config``'s (O7); the same words
  outside the offloading code are not that rule;
- "Either 'messages' or 'conversation' must be provided" of a public method that takes both is the
  caller's (O19); the same words in a model's ``forward`` are not that rule.
"""

from __future__ import annotations

import json

import pytest
from helpers import action_starting, jsonl_bytes

CONFIG = """
from dataclasses import dataclass, field


def get_kwargs(cls):
    return {}


@dataclass
class CacheConfig:
    block_size: int = 16


@dataclass
class KVTransferConfig:
    kv_connector: str = ""


@dataclass
class WidgetConfig:
    enable_thing: bool | None = None
"""

ARGS = """
from pkg.config import CacheConfig, KVTransferConfig, WidgetConfig, get_kwargs


def add_cli_args(parser):
    cache_kwargs = get_kwargs(CacheConfig)
    parser.add_argument("--block-size", **cache_kwargs["block_size"])
    kv_kwargs = get_kwargs(KVTransferConfig)
    parser.add_argument("--kv-transfer-config", dest="kv_transfer_config")
    widget_kwargs = get_kwargs(WidgetConfig)
    parser.add_argument("--enable-thing", **widget_kwargs["enable_thing"])
"""

PROTOCOL = """
def widget_outputs_from_format(outputs, response_format):
    if response_format is None or response_format.type == "text":
        return outputs
    if response_format.type == "json_object":
        overrides = {"json_object": True}
    elif response_format.type == "json_schema":
        overrides = {"json": response_format.json_schema}
    else:
        assert isinstance(response_format, (LegacyWidgetTagFormat, WidgetTagFormat))
        overrides = {"tag": response_format}
    return overrides


def widget_outputs_from_any(outputs, response_format):
    assert isinstance(response_format, (LegacyWidgetTagFormat, WidgetTagFormat)), "Widget response_format must be a tag format"
    return outputs
"""

REGISTRY = """
WIDGET_BUILTIN_TAG_MODELS = {"hermes", "harmony"}


def get_widget_structural_tag(model, tools, tool_choice):
    if not tools or tool_choice == "none":
        return None
    if model not in WIDGET_BUILTIN_TAG_MODELS:
        raise ValueError(f"Unknown widget format type: {model}")
    return model


def get_widget_named_tool(tools, tool_choice):
    if tool_choice is None or tools is None:
        return None
    tool_name = tool_choice.name
    tool_map = {tool.name: tool for tool in tools}
    if tool_name not in tool_map:
        raise ValueError(f"Widget tool '{tool_name}' has not been passed in `tools`.")
    return tool_map[tool_name]
"""

DECODE = """
import logging

logger = logging.getLogger(__name__)
_WARNED = False


def widget_decode_attention(query, sinks=None):
    global _WARNED
    if sinks is not None and not _WARNED:
        _WARNED = True
        logger.warning("Widget launcher: sinks ignored (NYI). Disable sinks if they are required for correctness.")
    return query


def widget_thing_attention(query, enable_thing=None):
    if enable_thing is not None:
        logger.warning("Widget thing is ignored here. Disable enable_thing if it is required for correctness.")
    return query


def widget_flint_attention(kv_cache):
    assert kv_cache.shape[2] == 16, "Widget decode attention needs the HND bf16 KV cache with 16-token blocks"
    return kv_cache


def widget_chunk_attention(kv_cache):
    assert kv_cache.shape[2] == 16, "Widget decode attention needs the bf16 KV cache in 16-token chunks"
    return kv_cache
"""

PINNED = """
import logging

import torch

logger = logging.getLogger(__name__)


class WidgetSharedRegion:
    def pin_memory(self) -> None:
        result = torch.cuda.cudart().cudaHostRegister(self._ptr, self._nbytes, 0)
        if result.value != 0:
            logger.warning("Widget cudaHostRegister failed (code=%d); transfers will be slower", result.value)

    def unpin_memory(self) -> None:
        result = torch.cuda.cudart().cudaHostUnregister(self._ptr)
        if result.value != 0:
            logger.warning("Widget cudaHostUnregister failed (code=%d)", result.value)
"""

TIER = """
class WidgetTierFactory:
    def create_tier(self, tier_config):
        config = dict(tier_config)
        bp_config = config.pop("backpressure", None)
        if bp_config is not None:
            bp_cls_name = bp_config.pop("backpressure_cls", None)
            if bp_cls_name is None:
                raise ValueError("backpressure config must include 'backpressure_cls' (e.g. 'WidgetDetector')")
        return config
"""

OTHER_TIER = """
class WidgetPlanFactory:
    def create_plan(self, plan_config):
        config = dict(plan_config)
        bp_config = config.pop("backpressure", None)
        if bp_config is not None:
            bp_cls_name = bp_config.pop("backpressure_cls", None)
            if bp_cls_name is None:
                raise ValueError("backpressure config must include 'backpressure_cls' (e.g. 'WidgetPlanner')")
        return config
"""

TOKENIZER = """
class WidgetAudioTokenizer:
    def apply_chat_template(self, messages=None, tools=None, **kwargs):
        conversation = messages if messages is not None else kwargs.get("conversation")
        if conversation is None:
            raise ValueError("Either 'messages' or 'conversation' must be provided.")
        return conversation
"""

MODEL = """
class WidgetModel:
    def forward(self, input_ids=None, inputs_embeds=None):
        if input_ids is None and inputs_embeds is None:
            raise ValueError("Either input_ids or inputs_embeds must be provided to WidgetModel.forward")
        return input_ids
"""

FILES = {
    "pkg/__init__.py": "",
    "pkg/config.py": CONFIG,
    "pkg/engine/arg_utils.py": ARGS,
    "pkg/entrypoints/generate/protocol.py": PROTOCOL,
    "pkg/tool_parsers/widget_registry.py": REGISTRY,
    "pkg/v1/attention/ops/widget_decode.py": DECODE,
    "pkg/distributed/ec_transfer/widget_region.py": PINNED,
    "pkg/v1/kv_offload/tiering/widget_factory.py": TIER,
    "pkg/v1/planning/widget_factory.py": OTHER_TIER,
    "pkg/tokenizers/widget_audio.py": TOKENIZER,
    "pkg/model_executor/models/widget.py": MODEL,
}

TOML = """
[upstreams.widgets]
url = "https://github.com/acme/widgets"
include = ["pkg/**/*.py"]
kinds = ["raise", "assert", "log"]
knob_kwargs = ["get_kwargs"]
"""


@pytest.fixture(scope="module")
def records(crawl_once) -> list[dict]:
    out = crawl_once(FILES, "--upstream", "widgets", config=TOML)
    return [json.loads(line) for line in jsonl_bytes(out / "acme" / "widgets").splitlines()]


def _at(records: list[dict], path: str, start: str = "") -> dict:
    (got,) = [r for r in records if r["sites"][0]["path"] == path and r["message"]["text"].startswith(start)]
    return got["meaning"]["action"]


@pytest.mark.slow
def test_an_isinstance_assert_after_the_branches_on_its_type_is_internal(records):
    (got,) = [r["meaning"]["action"] for r in records if r["kind"] == "assert" and r["sites"][0]["qualname"] == "widget_outputs_from_format"]
    assert got["actor"] == "internal" and "`response_format`" in got["basis"] and '`"json_schema"`' in got["basis"], got
    assert "request" not in got["says"], got


@pytest.mark.slow
def test_an_isinstance_assert_with_no_such_branches_is_not_that_rule(records):
    got = action_starting(records, "Widget response_format must be a tag format")
    assert "the branch left after" not in got["basis"], got


@pytest.mark.slow
def test_a_parameter_looked_up_in_a_table_past_the_requests_guards_is_not_the_requests(records):
    got = action_starting(records, "Unknown widget format type")
    assert got["actor"] == "internal" and "`model`" in got["basis"] and "`get_widget_structural_tag`" in got["basis"], got
    assert any("one of the values the message lists" in s for s in got["steps"]), got
    assert not any("nothing needs to change on the server" in s for s in got["steps"]), got


@pytest.mark.slow
def test_a_name_the_request_gave_looked_up_is_still_the_requests(records):
    got = action_starting(records, "Widget tool '")
    assert got["actor"] == "request" and "looks `" not in got["basis"], got


@pytest.mark.slow
def test_disabling_a_value_the_code_is_given_is_no_setting(records):
    got = action_starting(records, "Widget launcher: sinks ignored")
    assert got["actor"] == "internal" and "`sinks`" in got["basis"], got
    assert not any(s.startswith("Do what the message says") or "options and config values" in s for s in got["steps"]), got
    assert got["remedy"] is None, got


@pytest.mark.slow
def test_disabling_what_an_option_names_is_not_that_rule(records):
    got = action_starting(records, "Widget thing is ignored here")
    assert "remedy names" not in got["basis"], got


@pytest.mark.slow
def test_a_message_naming_16_token_blocks_is_the_block_size(records):
    got = action_starting(records, "Widget decode attention needs the HND bf16 KV cache with 16-token blocks")
    assert got["actor"] == "setting" and "`--block-size`" in got["basis"], got
    assert any("`--block-size 16`" in s for s in got["steps"]), got


@pytest.mark.slow
def test_16_token_chunks_are_not_that_rule(records):
    got = action_starting(records, "Widget decode attention needs the bf16 KV cache in 16-token chunks")
    assert "blocks of 16 tokens" not in got["basis"], got


@pytest.mark.slow
def test_a_cuda_runtime_calls_failed_status_is_the_environment(records):
    got = action_starting(records, "Widget cudaHostRegister failed")
    assert got["actor"] == "environment" and "`cudaHostRegister`" in got["basis"], got
    assert any("ulimit -l" in s for s in got["steps"]), got


@pytest.mark.slow
def test_a_failed_release_call_is_not_that_rule(records):
    got = action_starting(records, "Widget cudaHostUnregister failed")
    assert "CUDA runtime" not in got["basis"], got


@pytest.mark.slow
def test_a_key_missing_from_a_kv_offloading_config_is_the_kv_transfer_configs(records):
    got = _at(records, "pkg/v1/kv_offload/tiering/widget_factory.py")
    assert got["actor"] == "setting" and "`backpressure_cls`" in got["basis"] and "`--kv-transfer-config`" in got["basis"], got
    assert any('`"backpressure_cls"`' in s for s in got["steps"]), got


@pytest.mark.slow
def test_the_same_words_outside_the_offloading_code_are_not_that_rule(records):
    got = _at(records, "pkg/v1/planning/widget_factory.py")
    assert "`--kv-transfer-config`" not in got["basis"], got


@pytest.mark.slow
def test_either_of_two_arguments_of_a_public_method_is_the_callers(records):
    got = action_starting(records, "Either 'messages' or 'conversation'")
    assert got["actor"] == "caller" and "`messages`" in got["basis"] and "`conversation`" in got["basis"], got
    assert any(s.startswith("Pass `messages` (or `conversation`)") for s in got["steps"]), got


@pytest.mark.slow
def test_either_in_a_models_forward_is_not_that_rule(records):
    got = action_starting(records, "Either input_ids or inputs_embeds")
    assert got["actor"] != "caller", got
