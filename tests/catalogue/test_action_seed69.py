"""Who acts, the wrong claims and open pages of round 45's blind seed 69 (s45-judge3, #32) as rules:
a fixture upstream whose code is written here, crawled through the real CLI, read back as its
records' ``meaning.action``; beside each rule a near case it must not take.

- a check that finds a config object None which the engine's config class declares with its settings
  class and nothing that admits None (``model_config: WidgetModelConfig``) is internal (s45-rules4's
  "noticed"); one declared ``| None`` (``lora_config``: a feature that is off) is not that rule;
- a weight-transfer engine's "Call init_transfer_engine() first" is the caller's, with the step
  "call it first" (O3); the same words in a helper the engine drives itself (a router's "call
  bind() first"), or outside the weight-transfer API, are not that rule;
- a raise in a loop over the request's messages whose message names the key it reads of a message
  (``tool_calls``) is the request's, not a setting (W19); the same shape over a config's list is not
  that rule;
- an ``isinstance`` test of the reasoning parser a parser holds, built from the class
  ``--reasoning-parser`` names, is that option's (O27); one of the parser's private object is not;
- a raise whose every call is in a ``try`` that catches every exception and only logs at debug is
  handled, nothing to do (O21); one of a method also called outside such a ``try``, or whose
  ``try`` re-raises, is not that rule.
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
class WidgetModelConfig:
    dtype: str = "auto"


@dataclass
class WidgetCacheConfig:
    block_size: int = 16


@dataclass
class WidgetLoRAConfig:
    max_loras: int = 1


@dataclass
class StructuredOutputsConfig:
    reasoning_parser: str = ""


@dataclass
class VllmConfig:
    model_config: WidgetModelConfig = None
    cache_config: WidgetCacheConfig = field(default_factory=WidgetCacheConfig)
    lora_config: WidgetLoRAConfig | None = None
    structured_outputs_config: StructuredOutputsConfig = field(default_factory=StructuredOutputsConfig)
"""

ARGS = """
from pkg.config import StructuredOutputsConfig, get_kwargs


def add_cli_args(parser):
    structured_outputs_kwargs = get_kwargs(StructuredOutputsConfig)
    parser.add_argument("--reasoning-parser", **structured_outputs_kwargs["reasoning_parser"])
"""

FUSION = """
import logging

logger = logging.getLogger(__name__)


class WidgetFusionPass:
    def __init__(self, config) -> None:
        if config.model_config is None:
            logger.warning("Widget fusion pass is disabled for missing model_config.")
            return
        if config.lora_config is None:
            logger.warning("Widget fusion pass is disabled for missing lora_config.")
            return
"""

LAYER = """
class WidgetGatedAttention:
    def __init__(self, vllm_config) -> None:
        self.model_config = vllm_config.model_config
        self.cache_config = vllm_config.cache_config

    def get_state_dtype(self):
        if self.model_config is None or self.cache_config is None:
            raise ValueError("Widget model_config and cache_config must be set")
        return self.model_config.dtype
"""

TRANSFER = """
class WidgetWeightTransferEngine:
    def __init__(self) -> None:
        self.model_update_group = None

    def init_transfer_engine(self, info) -> None:
        self.model_update_group = info

    def receive_weights(self, names) -> None:
        if self.model_update_group is None:
            raise RuntimeError("Widget weight transfer not initialized. Call init_transfer_engine() first.")


class WidgetRouter:
    def __init__(self) -> None:
        self._produce_methods = []

    def bind(self, methods) -> None:
        self._produce_methods = list(methods)

    def _bound(self) -> None:
        if not self._produce_methods:
            raise RuntimeError("WidgetRouter has no producers bound; call bind() first.")
"""

EPLB = """
class WidgetEplbCommunicator:
    def __init__(self) -> None:
        self._layer_idx = None

    def set_transfer_context(self, layer_idx) -> None:
        self._layer_idx = layer_idx

    def add_recv(self, row) -> None:
        if self._layer_idx is None:
            raise RuntimeError("set_transfer_context() must be called before widget add_recv()")
"""

TOKENIZER = """
from pydantic import ValidationError


def maybe_serialize_widget_tool_calls(request) -> None:
    for i, message in enumerate(request.messages):
        if message.get("role") == "assistant":
            if (tool_calls_validator := message.get("tool_calls", None)) is not None:
                try:
                    validated_tool_calls = list(tool_calls_validator)
                except ValidationError as e:
                    raise ValueError(
                        "Validating widget messages' `tool_calls` raised an error. Please ensure `tool_calls` are iterable of tool calls."
                    ) from e
                request.messages[i]["tool_calls"] = validated_tool_calls


class WidgetLayout:
    def check_sections(self) -> None:
        for i, section in enumerate(self.layout.sections):
            if (widths := section.get("widths", None)) is not None:
                try:
                    list(widths)
                except TypeError as e:
                    raise ValueError("Validating widget sections' `widths` raised an error. Please ensure `widths` are iterable.") from e
"""

PARSER = """
class DelegatingParser:
    reasoning_parser_cls = None

    def __init__(self, tokenizer) -> None:
        self.reasoning_parser = self.reasoning_parser_cls(tokenizer) if self.reasoning_parser_cls else None
        self._parser = None


class GptOssReasoningParser:
    pass


class StreamableParser:
    pass


class WidgetHarmonyParser(DelegatingParser):
    def __init__(self, tokenizer) -> None:
        super().__init__(tokenizer)
        if self.reasoning_parser and not isinstance(self.reasoning_parser, GptOssReasoningParser):
            raise ValueError(f"Widget Harmony requires GptOssReasoningParser, got {self.reasoning_parser.__class__.__name__}.")
        if self._parser is not None and not isinstance(self._parser, StreamableParser):
            raise ValueError("Widget Harmony's own stream parser is not a StreamableParser")
"""

FUSER = """
import logging

logger = logging.getLogger(__name__)


class WidgetGLUFuser:
    def update_forward(self, module) -> None:
        if module.act is not module.gate:
            raise ValueError("Widget activation does not directly wrap the gate")


class WidgetQKVFuser:
    def rewrite_forward(self, module) -> None:
        if module.q is None:
            raise ValueError("Widget q projection is missing")

    def pack_forward(self, module) -> None:
        if module.k is None:
            raise ValueError("Widget k projection is missing")


def fusers_for(module, fusers):
    found = []
    for fuser in fusers:
        try:
            fuser.update_forward(module)
        except Exception as exc:
            logger.debug("Widget fuse failed: %s", exc)
            continue
        found.append(fuser)
    return found


def rewrite_all(module, fusers):
    for fuser in fusers:
        try:
            fuser.rewrite_forward(module)
        except Exception as exc:
            logger.debug("Widget rewrite failed: %s", exc)
            continue
    fusers[0].rewrite_forward(module)


def pack_all(module, fusers):
    for fuser in fusers:
        try:
            fuser.pack_forward(module)
        except Exception as exc:
            logger.debug("Widget pack failed: %s", exc)
            raise
"""

FILES = {
    "pkg/__init__.py": "",
    "pkg/model_executor/models/widget/fuser.py": FUSER,
    "pkg/config.py": CONFIG,
    "pkg/engine/arg_utils.py": ARGS,
    "pkg/compilation/passes/widget_fusion.py": FUSION,
    "pkg/model_executor/layers/widget/gated_attention.py": LAYER,
    "pkg/distributed/weight_transfer/widget_engine.py": TRANSFER,
    "pkg/distributed/eplb/widget_communicator.py": EPLB,
    "pkg/tokenizers/widget.py": TOKENIZER,
    "pkg/parser/widget_harmony.py": PARSER,
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


@pytest.mark.slow
def test_a_config_object_the_engine_always_has_found_none_is_internal(records):
    got = action_starting(records, "Widget fusion pass is disabled for missing model_config")
    assert got["actor"] == "internal" and "`vllm_config.model_config`" in got["basis"] and "always has" in got["basis"], got
    assert "setting of yours" not in got["says"], got


@pytest.mark.slow
def test_two_such_objects_in_one_condition_are_internal(records):
    got = action_starting(records, "Widget model_config and cache_config must be set")
    assert got["actor"] == "internal" and "`vllm_config.cache_config`" in got["basis"] and "`vllm_config.model_config`" in got["basis"], got


@pytest.mark.slow
def test_a_config_object_declared_optional_is_not_that_rule(records):
    got = action_starting(records, "Widget fusion pass is disabled for missing lora_config")
    assert "always has" not in got["basis"], got


@pytest.mark.slow
def test_a_weight_transfer_engines_call_first_is_the_callers(records):
    got = action_starting(records, "Widget weight transfer not initialized")
    assert got["actor"] == "caller" and "`init_transfer_engine()`" in got["basis"] and "`WidgetWeightTransferEngine`" in got["basis"], got
    assert any(s.startswith("Call `init_transfer_engine()` first") for s in got["steps"]), got
    assert "cannot tell" not in got["says"], got


@pytest.mark.slow
def test_a_helper_the_engine_binds_itself_is_not_that_rule(records):
    got = action_starting(records, "WidgetRouter has no producers bound")
    assert "must come first" not in got["basis"], got


@pytest.mark.slow
def test_call_first_outside_the_weight_transfer_api_is_not_that_rule(records):
    got = action_starting(records, "set_transfer_context() must be called before widget add_recv()")
    assert got["actor"] != "caller" and "must come first" not in got["basis"], got


@pytest.mark.slow
def test_a_key_of_the_requests_messages_the_message_names_is_the_requests(records):
    got = action_starting(records, "Validating widget messages' `tool_calls`")
    assert got["actor"] == "request" and "`tool_calls`" in got["basis"] and "`messages`" in got["basis"], got
    assert not any("Check the options and config values" in s for s in got["steps"]), got


@pytest.mark.slow
def test_the_same_shape_over_a_configs_list_is_not_that_rule(records):
    got = action_starting(records, "Validating widget sections' `widths`")
    assert got["actor"] != "request", got


@pytest.mark.slow
def test_the_class_of_the_reasoning_parser_an_option_chose_is_that_options(records):
    got = action_starting(records, "Widget Harmony requires GptOssReasoningParser")
    assert got["actor"] == "setting" and "`--reasoning-parser`" in got["basis"] and "`GptOssReasoningParser`" in got["basis"], got
    assert any("`--reasoning-parser`" in s and "`GptOssReasoningParser`" in s for s in got["steps"]), got
    assert "`--reasoning-parser`" in got["says"], got


@pytest.mark.slow
def test_the_class_of_a_parsers_private_object_is_not_that_rule(records):
    got = action_starting(records, "Widget Harmony's own stream parser")
    assert "option `--reasoning-parser`" not in got["basis"], got


@pytest.mark.slow
def test_a_raise_every_call_catches_quietly_is_handled(records):
    got = action_starting(records, "Widget activation does not directly wrap the gate")
    assert got["actor"] == "internal" and "`update_forward`" in got["basis"] and "the one call" in got["basis"], got
    assert got["steps"][0].startswith("Nothing to do about this error itself"), got
    assert "does not reach you" in got["says"] and "likely a bug" not in got["says"], got


@pytest.mark.slow
def test_a_raise_also_called_outside_the_try_is_not_that_rule(records):
    got = action_starting(records, "Widget q projection is missing")
    assert "caught by every call" not in got["basis"], got


@pytest.mark.slow
def test_a_raise_whose_try_raises_again_is_not_that_rule(records):
    got = action_starting(records, "Widget k projection is missing")
    assert "caught by every call" not in got["basis"], got


def test_the_extractor_counts_only_the_calls_a_quiet_try_holds():
    import ast

    from crawler.extract.knob_passes import passes

    got = passes(ast.parse(FUSER), FUSER)
    assert got["quiet"] == {"rewrite_forward": 1, "update_forward": 1}, got["quiet"]
    assert got["called"]["rewrite_forward"] == 2 and "pack_forward" not in got["quiet"], got


HANDLERS = """
import logging

logger = logging.getLogger(__name__)


class Runner:
    def keeps(self, step):
        try:
            step.kept_call()
        except Exception as exc:
            self._error = exc

    def answers(self, step):
        try:
            step.answered_call()
        except Exception:
            return self.create_error_response("failed")

    def prints(self, step):
        try:
            step.printed_call()
        except Exception:
            logger.exception("step failed")

    def narrower(self, step):
        try:
            try:
                step.narrow_call()
            except (RuntimeError, AssertionError) as error:
                logger.warning("step failed: %s", error)
                raise
        except Exception:
            logger.debug("outer")

    def falls_back(self, step):
        try:
            step.fallback_call()
        except BaseException:
            logger.debug("fell back")
            return None
"""


def test_a_handler_that_keeps_answers_prints_or_is_inside_another_try_is_not_quiet():
    # what the caught error goes on to (kept for later, answered with, printed with its traceback, or a
    # narrower try's handler that raises it again) reaches someone: only the last call is quiet, and the
    # inner handler's own log call, which the outer try's quiet handler catches
    import ast

    from crawler.extract.knob_passes import passes

    assert passes(ast.parse(HANDLERS), HANDLERS)["quiet"] == {"fallback_call": 1, "warning": 1}
