"""Who acts, round 43's blind judges' wrong patterns left (s43-judge2, s43-verify; #32) as rules: a
fixture upstream whose code is written here, crawled once through the real CLI, read back as its
records' ``meaning.action``; beside each rule a near case it must not take.

- a native ``TORCH_CHECK(false, ...)`` that is the whole body of a function under a preprocessor
  test of the toolkit (``#if !defined(CUDA_VERSION) || CUDA_VERSION < 12040``) is the build's;
- an assert in a quantization method on what its ``quant_config`` (the checkpoint's, built by
  ``from_config``) holds is the model's, through the object's state too;
- a serving helper's check on what the tokenizer made (``token_type_ids``) is no request field;
- a ``ConnectionError`` raised when a non-blocking send finds the peer's queue full asks to
  install nothing;
- a raise in a pattern function handed to ``register_replacement`` is caught by the library;
- a handler that answers the client with an error is no quiet catch;
- a warning that says what the code does instead says that, not "if it comes with a failure".
"""

from __future__ import annotations

import json

import pytest
from helpers import action_of, jsonl_bytes

KERNEL = """
#include <torch/all.h>

#if !defined(CUDA_VERSION) || CUDA_VERSION < 12040
void widget_mla_decode(torch::Tensor const& out, int64_t splits) {
  TORCH_CHECK(false, "CUDA version must be >= 12.4 for widget_mla_decode");
}
#else
void widget_mla_decode(torch::Tensor const& out, int64_t splits) {
  TORCH_CHECK(splits > 0, "widget splits must be positive");
  if (out.numel() == 0) {
    TORCH_CHECK(false, "widget output is empty");
  }
}
#endif

#ifndef WIDGET_DEBUG
void widget_trace(int64_t level) {
  TORCH_CHECK(false, "widget tracing is compiled out");
}
#endif
"""

QUANT = """
class WidgetFp8Config:
    def __init__(self, activation_scheme, weight_block_size):
        self.activation_scheme = activation_scheme
        self.weight_block_size = weight_block_size

    @classmethod
    def from_config(cls, config):
        return cls(config["activation_scheme"], config.get("weight_block_size"))


class WidgetFp8MoEMethod:
    def __init__(self, quant_config, moe):
        self.quant_config = quant_config
        self.weight_block_size = self.quant_config.weight_block_size
        self.block_quant = self.weight_block_size is not None
        self.moe = moe
        self._made = False

    def create_weights(self, layer):
        if self.quant_config.activation_scheme == "static":
            assert not self.block_quant
            layer.w13_input_scale = 1.0

    def finish(self, layer):
        assert not self._made
        self._made = True
"""

SCORING = """
def compress_widget_type_ids(token_type_ids: list[int]) -> tuple[int, int]:
    first_one = len(token_type_ids)
    for i, type_id in enumerate(token_type_ids):
        if type_id not in (0, 1):
            raise ValueError("Widget token type ids are expected to be zeros followed by ones")
        if type_id == 1 and first_one == len(token_type_ids):
            first_one = i
    return first_one, len(token_type_ids)


def check_widget_top_n(top_n: int, documents: list[str]) -> None:
    for i, document in enumerate(documents):
        if top_n > len(documents):
            raise ValueError("Widget top_n is larger than the documents given")
"""

REALTIME = """
import numpy as np


class VLLMValidationError(ValueError):
    pass


class WidgetRealtimeConnection:
    async def handle_event(self, event):
        event_type = event["type"]
        if event_type == "input_audio_buffer.append":
            try:
                audio_array = np.frombuffer(event["audio"], dtype=np.int16)
                if len(audio_array) == 0:
                    raise VLLMValidationError("Can't process empty widget audio.")
                self.audio_queue.put_nowait(audio_array)
            except Exception as e:
                logger.error("Failed to decode widget audio: %s", e)
                await self.send_error("Invalid audio data", "invalid_audio")
        elif event_type == "input_audio_buffer.clear":
            try:
                if not self.audio_queue:
                    raise VLLMValidationError("Nothing to clear in the widget buffer.")
                self.audio_queue.clear()
            except Exception as e:
                logger.error("Failed to clear the widget buffer: %s", e)
"""

TRANSPORT = """
import queue

import zmq


class WidgetZmqConnection:
    def send(self, msg) -> None:
        try:
            self._dealer.send(msg, zmq.NOBLOCK)
        except zmq.Again as exc:
            raise ConnectionError(f"WidgetZmqConnection: send queue to {self.peer_id} is full") from exc

    def connect(self, address) -> None:
        try:
            self._dealer.connect(address)
        except zmq.ZMQError as exc:
            raise ConnectionError(f"WidgetZmqConnection: cannot connect to {address}") from exc
"""

FUSION = """
import torch


class WidgetNormPattern:
    def register(self, pm_pass) -> None:
        def pattern(qkv: torch.Tensor, weight: torch.Tensor):
            try:
                q, k = qkv.split([self.q_size, self.kv_size], dim=-1)
            except ValueError as e:
                # register_replacement treats RuntimeError as a trace mismatch.
                raise RuntimeError from e
            return q * weight, k

        def replacement(qkv: torch.Tensor, weight: torch.Tensor):
            return qkv, weight

        pm.register_replacement(pattern, replacement, self.inputs, pm.fwd_only, pm_pass)

    def build(self) -> None:
        def helper(x):
            if x is None:
                raise RuntimeError("widget helper needs an input")
            return x

        self.helpers = [helper]
"""

WARNINGS = """
import logging

logger = logging.getLogger(__name__)


def widget_serializer(obj):
    if not hasattr(obj, "__reduce__"):
        logger.warning("No serialization method found for %s. Falling back to pickle.", type(obj))
    return obj


def widget_stats(stats):
    if stats.dropped:
        logger.warning("Widget stats dropped %d samples", stats.dropped)
    return stats
"""

FILES = {
    "pkg/__init__.py": "",
    "csrc/widget_mla.cu": KERNEL,
    "pkg/model_executor/layers/quantization/widget_fp8.py": QUANT,
    "pkg/entrypoints/pooling/scoring/widget_utils.py": SCORING,
    "pkg/entrypoints/speech_to_text/realtime/widget_connection.py": REALTIME,
    "pkg/v1/kv_offload/widget_zmq.py": TRANSPORT,
    "pkg/compilation/passes/widget_fusion.py": FUSION,
    "pkg/multimodal/widget_hasher.py": WARNINGS,
}

CONFIG = """
[upstreams.widgets]
url = "https://github.com/acme/widgets"
include = ["pkg/**/*.py"]
kinds = ["raise", "assert", "log", "response", "native"]
native = ["csrc/**"]
"""


@pytest.fixture(scope="module")
def records(crawl_once) -> list[dict]:
    out = crawl_once(FILES, "--upstream", "widgets", config=CONFIG)
    return [json.loads(line) for line in jsonl_bytes(out / "acme" / "widgets").splitlines()]


def _ending(records: list[dict], end: str) -> dict:
    (got,) = [r["meaning"]["action"] for r in records if r["message"]["text"].endswith(end)]
    return got


@pytest.mark.slow
def test_a_native_stub_under_the_toolkits_if_is_the_builds(records):
    got = _ending(records, "CUDA version must be >= 12.4 for widget_mla_decode")
    assert got["actor"] == "environment", got
    assert "`!defined(CUDA_VERSION) || CUDA_VERSION < 12040`" in got["basis"] and "stub" in got["says"], got
    assert "prebuilt wheel" in got["steps"][0] and "another backend" in got["steps"][0], got["steps"]


@pytest.mark.slow
def test_a_native_check_in_the_real_function_or_under_another_if_is_not_the_builds(records):
    for end in ("widget splits must be positive", "widget output is empty", "widget tracing is compiled out"):
        got = _ending(records, end)
        assert got["actor"] == "internal", (end, got)


@pytest.mark.slow
def test_an_assert_on_the_checkpoints_quantization_config_is_the_models(records):
    got = action_of(records, "assert pkg/model_executor/layers/quantization/widget_fp8.py WidgetFp8MoEMethod.create_weights")
    assert got["actor"] == "model" and "`self.quant_config.weight_block_size`" in got["basis"], got
    assert "`quantization_config`" in got["steps"][0], got["steps"]


@pytest.mark.slow
def test_an_assert_on_the_methods_own_state_beside_it_is_not(records):
    got = action_of(records, "assert pkg/model_executor/layers/quantization/widget_fp8.py WidgetFp8MoEMethod.finish")
    assert got["actor"] == "internal", got


@pytest.mark.slow
def test_a_serving_helpers_check_on_what_the_tokenizer_made_is_not_the_requests(records):
    got = action_of(records, "Widget token type ids are expected")
    assert got["actor"] == "model" and "`token_type_ids`" in got["basis"], got
    assert "The request you sent" not in got["says"] and "`--tokenizer`" in got["steps"][0], got


@pytest.mark.slow
def test_a_serving_helpers_check_on_a_request_parameter_is_still_the_requests(records):
    got = action_of(records, "Widget top_n is larger")
    assert got["actor"] == "request", got


@pytest.mark.slow
def test_a_connection_error_when_the_peers_queue_is_full_asks_to_install_nothing(records):
    got = _ending(records, "is full")
    assert got["actor"] == "environment" and "`except zmq.Again as exc`" in got["basis"], got
    assert not any("install" in step.replace("no package", "") for step in got["steps"]), got["steps"]
    assert "peer" in got["says"], got


@pytest.mark.slow
def test_a_connection_error_for_a_refused_connect_is_not_the_full_queues(records):
    got = action_of(records, "WidgetZmqConnection: cannot connect")
    assert "queue full" not in got["basis"], got


@pytest.mark.slow
def test_a_raise_in_a_pattern_handed_to_register_replacement_is_caught_by_the_library(records):
    (got,) = [r["meaning"]["action"] for r in records if r["sites"][0]["qualname"] == "WidgetNormPattern.register.<locals>.pattern"]
    assert got["actor"] == "internal" and "`pm.register_replacement`" in got["basis"], got
    assert "does not reach you" in got["says"] and "traceback" not in got["steps"][0].partition("only if")[0], got


@pytest.mark.slow
def test_a_raise_in_a_nested_function_kept_in_a_list_is_not_handed_to_a_library(records):
    got = action_of(records, "widget helper needs an input")
    assert "handed to" not in got["basis"], got


@pytest.mark.slow
def test_a_handler_that_answers_the_client_with_an_error_is_no_quiet_catch(records):
    got = action_of(records, "Can't process empty widget audio.")
    assert got["actor"] == "request" and "caught where it is raised" not in got["basis"], got
    assert any('send_error("Invalid audio data", "invalid_audio")' in step for step in got["steps"]), got["steps"]


@pytest.mark.slow
def test_a_handler_that_only_logs_is_still_a_quiet_catch(records):
    got = action_of(records, "Nothing to clear in the widget buffer.")
    assert got["actor"] == "internal" and got["basis"].startswith("caught where it is raised"), got


@pytest.mark.slow
def test_a_warning_that_says_what_it_does_instead_says_that(records):
    got = action_of(records, "No serialization method found for")
    assert got["actor"] == "internal" and got["basis"].startswith("informational:"), got
    assert "Falling back to pickle." in got["steps"][0] and '(it says what it does instead: "No serialization' in got["says"], got
    assert not any(step.startswith(("If it comes with a failure", "Report it")) for step in got["steps"]), got["steps"]


@pytest.mark.slow
def test_a_warning_that_says_nothing_of_what_it_does_instead_keeps_its_step(records):
    got = action_of(records, "Widget stats dropped")
    assert not got["basis"].startswith("informational:"), got
