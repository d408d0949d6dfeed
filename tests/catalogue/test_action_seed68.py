"""Who acts, the wrong claims and open pages of round 45's blind seed 68 (s45-judge2, #32) as rules:
a fixture upstream whose code is written here, crawled through the real CLI, read back as its
records' ``meaning.action``; beside each rule a near case it must not take.

- an assert that an object's own field is there, when the class's ``__post_init__`` fills it when
  None, is internal (W33), whatever request field it is; one on a field it does not fill is not;
- a warning in ``except Exception:`` of a warm-up is internal (W16); another caught warning is not
  that rule;
- a divisibility test of a runtime tensor's dimension by a group's size is internal (W32); one whose
  message names the tensor parallel size is not that rule;
- ``issubclass`` in a registration decorator's wrapper is the caller's (W15); the same test in a
  function that registers nothing is not that rule;
- a raise on a module's private state not set up yet ("slots are not configured") is internal (W28),
  one on a parameter is not that rule;
- a raise in a function called only from the model's config classes' ``__init__`` is the model's
  (O30); with another caller it is not that rule;
- a response whose message names a server option its condition finds unset does not say "nothing
  needs to change on the server" but names the option (W23); one it finds set is not that rule.
"""

from __future__ import annotations

import json

import pytest
from helpers import jsonl_bytes

SAMPLING = """
from dataclasses import dataclass


@dataclass
class WidgetSamplingParams:
    stop_token_ids: list[int] | None = None
    logit_bias: dict | None = None

    def __post_init__(self) -> None:
        if self.stop_token_ids is None:
            self.stop_token_ids = []
        else:
            self.stop_token_ids = list(self.stop_token_ids)

    def update_from_generation_config(self, eos_ids: set[int]) -> None:
        if eos_ids:
            assert self.stop_token_ids is not None
            eos_ids.update(self.stop_token_ids)

    def apply_bias(self) -> dict:
        assert self.logit_bias is not None
        return self.logit_bias
"""

RENDERER = """
import logging

logger = logging.getLogger(__name__)


class WidgetRenderer:
    def warmup_mm(self) -> None:
        try:
            self._warmup_mm_processor(self.mm_processor)
        except Exception:
            logger.warning("Widget multi-modal warmup failed")
        finally:
            self._done = True

    def load_cache(self) -> None:
        try:
            self._read(self.path)
        except Exception:
            logger.warning("Widget cache could not be read")
"""

COMMUNICATOR = """
class WidgetCommunicator:
    def reduce_scatter(self, input_, world_size: int):
        input_tensor = input_.contiguous()
        assert input_tensor.shape[0] % world_size == 0
        return input_tensor

    def scatter_heads(self, x, tp_size: int):
        assert x.shape[1] % tp_size == 0, "the tensor parallel size must divide the widget heads"
        return x
"""

REGISTRY = """
class WidgetQuantConfig:
    pass


def register_widget_quant_config(name: str):
    def _wrapper(quant_config_cls):
        if not issubclass(quant_config_cls, WidgetQuantConfig):
            raise ValueError("The widget quantization config must be a subclass of `WidgetQuantConfig`.")
        return quant_config_cls

    return _wrapper


def describe_widget_quant_config(quant_config_cls):
    if not issubclass(quant_config_cls, WidgetQuantConfig):
        raise ValueError("The widget quant description needs a `WidgetQuantConfig`.")
    return quant_config_cls.__name__
"""

HF_CONFIGS = """
class PretrainedConfig:
    pass


def _normalize_widget_sections(config, section: list[int]) -> None:
    found = getattr(config, "sections", None)
    if found is not None and list(found) != section:
        raise ValueError(f"Widget VL has conflicting sections: text={found}, top-level={section}")


def _widget_span(config, span: int) -> None:
    if span < 0:
        raise ValueError(f"widget span must not be negative: {span}")


class WidgetTextConfig(PretrainedConfig):
    def __init__(self, section=None, span=0, **kwargs) -> None:
        _normalize_widget_sections(self, section or [])
        _widget_span(self, span)


class WidgetVLConfig(PretrainedConfig):
    def __init__(self, section=None, **kwargs) -> None:
        _normalize_widget_sections(self, section or [])


def widget_span_of(config, span: int) -> None:
    _widget_span(config, span)
"""

SERVING = """
class WidgetOnlineRenderer:
    def validate_chat_template(self, request_chat_template, trust_widget_chat_template: bool):
        if not trust_widget_chat_template and request_chat_template is not None:
            return self.create_error_response(
                "Chat template is passed with request, but --trust-widget-chat-template is not set."
            )
        return None

    def validate_logprobs(self, request, widget_fast_prefill: bool):
        if widget_fast_prefill and request.prompt_logprobs is not None:
            return self.create_error_response("prompt_logprobs is incorrect with --widget-fast-prefill; disable it")
        return None

    def create_error_response(self, message: str):
        return {"error": message}
"""

DECODER = """
import threading


class _DecoderPool:
    def __init__(self) -> None:
        self.cond = threading.Condition()
        self.max_slots = None


_widget_decoder_pool = _DecoderPool()


def configure(max_slots: int) -> None:
    _widget_decoder_pool.max_slots = max_slots


class WidgetVideoBackend:
    @classmethod
    def _borrow_decoder_slot(cls):
        pool = _widget_decoder_pool
        with pool.cond:
            if pool.max_slots is None:
                raise RuntimeError("Widget decoder slots are not configured")
            return pool.max_slots

    def decode(self, frames):
        if frames is None:
            raise RuntimeError("Widget video frames are not configured")
        return frames
"""

FILES = {
    "pkg/__init__.py": "",
    "pkg/sampling_params.py": SAMPLING,
    "pkg/renderers/base.py": RENDERER,
    "pkg/distributed/device_communicators/base_device_communicator.py": COMMUNICATOR,
    "pkg/model_executor/layers/quantization/__init__.py": REGISTRY,
    "pkg/transformers_utils/configs/widget_vl.py": HF_CONFIGS,
    "pkg/renderers/online_renderer.py": SERVING,
    "pkg/multimodal/video_decoders/widget.py": DECODER,
}

TOML = """
[upstreams.widgets]
url = "https://github.com/acme/widgets"
include = ["pkg/**/*.py"]
kinds = ["raise", "assert", "log", "response"]
request_models = ["pkg/sampling_params.py"]

[[upstreams.widgets.responses]]
call = "create_error_response"
params = ["message"]
default_status_code = 400
"""


@pytest.fixture(scope="module")
def records(crawl_once) -> list[dict]:
    out = crawl_once(FILES, "--upstream", "widgets", config=TOML)
    return [json.loads(line) for line in jsonl_bytes(out / "acme" / "widgets").splitlines()]


def _starting(records: list[dict], start: str) -> dict:
    (got,) = [r for r in records if r["message"]["text"].startswith(start)]
    return got["meaning"]["action"]


def _assert_in(records: list[dict], qualname: str, has: str) -> dict:
    (got,) = [
        r
        for r in records
        if r["kind"] == "assert" and r["sites"][0]["qualname"] == qualname and has in ((r["sites"][0].get("facts") or {}).get("guards") or [""])[-1]
    ]
    return got["meaning"]["action"]


@pytest.mark.slow
def test_an_assert_on_a_field_its_post_init_fills_is_internal(records):
    got = _assert_in(records, "WidgetSamplingParams.update_from_generation_config", "stop_token_ids")
    assert got["actor"] == "internal" and "`WidgetSamplingParams.stop_token_ids`" in got["basis"] and "set-up" in got["basis"], got


@pytest.mark.slow
def test_an_assert_on_a_field_it_does_not_fill_is_not_that_rule(records):
    got = _assert_in(records, "WidgetSamplingParams.apply_bias", "logit_bias")
    assert "set-up gives a value" not in got["basis"], got


@pytest.mark.slow
def test_a_caught_warm_up_warning_is_internal(records):
    got = _starting(records, "Widget multi-modal warmup failed")
    assert got["actor"] == "internal" and "warm-up" in got["basis"], got
    assert not any("Check the options" in s for s in got["steps"]), got


@pytest.mark.slow
def test_another_caught_warning_is_not_the_warm_up_rule(records):
    got = _starting(records, "Widget cache could not be read")
    assert "warm-up" not in got["basis"], got


@pytest.mark.slow
def test_a_runtime_tensors_divisibility_by_the_group_is_internal(records):
    got = _assert_in(records, "WidgetCommunicator.reduce_scatter", "world_size")
    assert got["actor"] == "internal" and "divides evenly" in got["basis"], got


@pytest.mark.slow
def test_one_whose_message_names_the_tensor_parallel_size_is_not_that_rule(records):
    got = _starting(records, "the tensor parallel size must divide")
    assert "divides evenly" not in got["basis"], got


@pytest.mark.slow
def test_a_registration_decorators_subclass_check_is_the_callers(records):
    got = _starting(records, "The widget quantization config must be a subclass")
    assert got["actor"] == "caller" and "`WidgetQuantConfig`" in got["basis"] and "registration decorator" in got["basis"], got
    assert any("a subclass of `WidgetQuantConfig`" in s for s in got["steps"]), got


@pytest.mark.slow
def test_the_same_check_outside_a_registration_is_not_that_rule(records):
    got = _starting(records, "The widget quant description needs")
    assert "registration decorator" not in got["basis"], got


@pytest.mark.slow
def test_a_raise_called_only_from_the_model_config_classes_is_the_models(records):
    got = _starting(records, "Widget VL has conflicting sections")
    assert got["actor"] == "model" and "`WidgetTextConfig.__init__`" in got["basis"] and "config.json" in got["basis"], got
    assert "cannot tell" not in got["says"], got


@pytest.mark.slow
def test_a_raise_with_another_caller_is_not_that_rule(records):
    got = _starting(records, "widget span must not be negative")
    assert "model's configuration is built" not in got["basis"], got


@pytest.mark.slow
def test_a_response_naming_a_server_option_it_tests_names_it_in_the_steps(records):
    got = _starting(records, "Chat template is passed with request")
    assert got["actor"] == "request", got
    assert not any("nothing needs to change on the server" in s for s in got["steps"]), got
    assert any("`--trust-widget-chat-template`" in s for s in got["steps"]), got


@pytest.mark.slow
def test_a_response_naming_a_server_option_it_finds_set_does_not_say_start_with_it(records):
    got = _starting(records, "prompt_logprobs is incorrect with --widget-fast-prefill")
    assert got["actor"] == "request" and not any("start the server with" in s for s in got["steps"]), got


@pytest.mark.slow
def test_a_modules_own_state_not_set_up_yet_is_internal(records):
    got = _starting(records, "Widget decoder slots are not configured")
    assert got["actor"] == "internal" and "`_widget_decoder_pool`" in got["basis"], got


@pytest.mark.slow
def test_a_parameter_not_set_is_not_that_rule(records):
    got = _starting(records, "Widget video frames are not configured")
    assert "module's own state" not in got["basis"], got
