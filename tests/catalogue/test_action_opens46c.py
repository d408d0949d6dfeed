"""Who acts on the groups of pages left open, third pass (#32, round 46, s46-opens3): a fixture
upstream written here, crawled once through the real CLI, read back as its records'
``meaning.action``; beside each rule a near case it must not take.

- a MoE model's set-up that finds no MoE layer among its layers ("No WidgetMoE layer found in
  model.layers.", after ``example_moe is None``) is the model's, raise or warning; the same words
  under another test are not that rule;
- a model's ``_process_*_input`` check of what the multimodal processor built (its shapes, counts)
  is internal; one that compares with the model's configuration ("configured merger count"), and
  the same name outside a model's code, are not that rule;
- a raise that refuses to set up or allocate while a CUDA graph is captured ("must be prepared
  before CUDA graph capture") is internal, and its step names the option that turns capture off
  where the repository declares one; a message that only names capture axes is not that rule, nor
  one that names an option;
- "has not been initialized" in a function only the project's own code calls is internal; with no
  caller seen, or a caller that is a route, it is not that rule;
- the else-branch after two or more ``isinstance`` tests of one value, in a function only the
  project's own code calls, is internal; the same in the multimodal package (media a user gives),
  or after tests of two values, is not that rule.
"""

from __future__ import annotations

import pytest
from helpers import action_starting as action
from helpers import meaning_records

CONFIG = """
from dataclasses import dataclass, field


def get_kwargs(cls):
    return {}


@dataclass
class WidgetModelConfig:
    enforce_eager: bool = False


@dataclass
class WidgetParallelConfig:
    pipeline_parallel_size: int = 1


@dataclass
class VllmConfig:
    model_config: WidgetModelConfig = field(default_factory=WidgetModelConfig)
    parallel_config: WidgetParallelConfig = field(default_factory=WidgetParallelConfig)
"""

ARGS = """
from pkg.config import WidgetModelConfig, WidgetParallelConfig, get_kwargs


def add_cli_args(parser):
    model_kwargs = get_kwargs(WidgetModelConfig)
    parallel_kwargs = get_kwargs(WidgetParallelConfig)
    parser.add_argument("--enforce-eager", **model_kwargs["enforce_eager"])
    parser.add_argument("--pipeline-parallel-size", **parallel_kwargs["pipeline_parallel_size"])
"""

MODEL = """
import logging

logger = logging.getLogger(__name__)


class WidgetMoE:
    pass


class WidgetMoeForCausalLM:
    def __init__(self, layers):
        self.layers = layers
        self.set_moe_parameters()

    def set_moe_parameters(self):
        self.moe_layers = []
        example_moe = None
        for layer in self.layers:
            if isinstance(layer.mlp, WidgetMoE):
                example_moe = layer.mlp
                self.moe_layers.append(layer.mlp)
        if example_moe is None:
            raise RuntimeError("No WidgetMoE layer found in model.layers.")
        if not self.moe_layers:
            raise RuntimeError("No WidgetMoE layer found in the language_model.")

    def _process_audio_input(self, audio_input):
        features = audio_input["input_features"]
        lengths = audio_input["feature_lengths"]
        if lengths.numel() != features.shape[0]:
            raise ValueError("Widget audio feature lengths must contain one length per audio chunk")
        merged = self.merge(features)
        if len(merged) < len(self.merger_list):
            raise RuntimeError("Widget output count does not match configured merger count.")
        return merged

    def extract_moe_parameters(self, example_moe):
        if example_moe is None:
            self.num_moe_layers = 0
            logger.warning("Widget: No WidgetDraftMoE layer found in model.layers.")
"""

CAPTURE = """
import torch

_PLANS = {}


def _widget_plan(key):
    plan = _PLANS.get(key)
    if plan is None:
        if torch.cuda.is_current_stream_capturing():
            raise RuntimeError(f"widget decode plan was not prepared before CUDA graph capture for {key}")
        plan = _PLANS[key] = object()
    return plan


def _widget_axes(axes):
    if any(len(axis) == 0 for axis in axes):
        raise ValueError("Widget cudagraph capture axes must be non-empty.")
    return axes


def _widget_scratch(key):
    if key not in _PLANS and torch.cuda.is_current_stream_capturing():
        raise RuntimeError("widget scratch must be sized before capture; pass --widget-warmup to size it")
    return _PLANS.get(key)


def widget_forward(key, axes):
    _widget_axes(axes)
    _widget_scratch(key)
    return _widget_plan(key)
"""

CURSOR = """
from dataclasses import dataclass


@dataclass
class WidgetPoolingMetadata:
    prompt_lens: list
    cursor: object | None = None
    other: object | None = None

    def get_cursor(self):
        cursor = self.cursor
        if cursor is None:
            raise RuntimeError("widget cursor has not been initialized. Call `build_cursor` first")
        return cursor

    def get_other(self):
        other = self.other
        if other is None:
            raise RuntimeError("widget other cursor has not been initialized")
        return other


def widget_pool(metadata: WidgetPoolingMetadata):
    return metadata.get_cursor()
"""

ROUTE = """
from fastapi import APIRouter

router = APIRouter()


class WidgetScores:
    def __init__(self):
        self.keys = None

    def encode(self):
        keys = self.keys
        if keys is None:
            raise RuntimeError("widget query keys were not initialized")
        return keys


@router.post("/widget/score")
async def create_widget_score(raw_request, scores: WidgetScores):
    return scores.encode()
"""

STORAGE = """
def widget_copy_to_buffer(data, view):
    if isinstance(data, bytes):
        view[:] = data
    elif isinstance(data, list):
        for item in data:
            view[: len(item)] = item
    else:
        raise ValueError(f"Widget invalid type for data: {type(data)}")


def widget_pair(first, second, view):
    if isinstance(first, bytes):
        view[:] = first
    elif isinstance(second, list):
        view[:] = second
    else:
        raise ValueError(f"Widget invalid type for pair: {type(first)}")


def widget_put(value, view):
    widget_copy_to_buffer(value, view)
    widget_pair(value, value, view)
"""

MEDIA = """
def _process_image_input(images):
    if images.dim() != 4:
        raise ValueError(f"Widget unexpected image shape: {images.shape}")
    return images


def widget_to_image(data):
    if isinstance(data, bytes):
        return data
    elif isinstance(data, str):
        return data.encode()
    else:
        raise ValueError(f"Widget invalid type for media: {type(data)}")


def widget_load(data):
    return widget_to_image(data)
"""

FILES = {
    "pkg/__init__.py": "",
    "pkg/config.py": CONFIG,
    "pkg/engine/arg_utils.py": ARGS,
    "pkg/model_executor/models/widget_moe.py": MODEL,
    "pkg/v1/attention/backends/widget_capture.py": CAPTURE,
    "pkg/v1/pool/widget_metadata.py": CURSOR,
    "pkg/serving/widget_scores.py": ROUTE,
    "pkg/distributed/widget_storage.py": STORAGE,
    "pkg/multimodal/widget_media.py": MEDIA,
}


@pytest.fixture(scope="module")
def records(crawl_once) -> list[dict]:
    return meaning_records(crawl_once, FILES)


@pytest.mark.slow  # (the module's one crawl)
def test_a_moe_model_that_finds_no_moe_layer_is_the_models(records):
    got = action(records, "No WidgetMoE layer found in model.layers.")
    assert got["actor"] == "model" and "found no MoE layer" in got["basis"] and "cannot tell" not in got["says"], got
    assert "builds no MoE layer" in got["says"] and any("config.json" in s and "`--pipeline-parallel-size`" in s for s in got["steps"]), got


@pytest.mark.slow  # (the module's one crawl)
def test_its_warning_says_a_dense_checkpoint_is_fine(records):
    got = action(records, "Widget: No WidgetDraftMoE layer found")
    assert got["actor"] == "model" and "found no MoE layer" in got["basis"], got
    assert any(s.startswith("If the checkpoint is dense here on purpose") for s in got["steps"]), got


@pytest.mark.slow  # (the module's one crawl)
def test_the_same_words_under_another_test_are_not_that_rule(records):
    got = action(records, "No WidgetMoE layer found in the language_model.")
    assert "found no MoE layer" not in got["basis"], got


@pytest.mark.slow  # (the module's one crawl)
def test_a_refusal_during_cuda_graph_capture_is_internal_and_names_eager(records):
    got = action(records, "widget decode plan was not prepared before CUDA graph capture")
    assert got["actor"] == "internal" and "CUDA graph is being captured" in got["basis"] and "cannot tell" not in got["says"], got
    assert any("`--enforce-eager`" in s for s in got["steps"]), got


@pytest.mark.slow  # (the module's one crawl)
@pytest.mark.parametrize("message", ["Widget cudagraph capture axes", "widget scratch must be sized before capture"])
def test_capture_axes_or_a_message_naming_an_option_are_not_that_rule(records, message):
    got = action(records, message)
    assert "CUDA graph is being captured" not in got["basis"], got


@pytest.mark.slow  # (the module's one crawl)
def test_not_initialized_in_code_only_the_project_calls_is_internal(records):
    got = action(records, "widget cursor has not been initialized")
    assert got["actor"] == "internal" and "has not run" in got["basis"] and "widget_pool" in got["basis"], got
    assert "cannot tell" not in got["says"], got


@pytest.mark.slow  # (the module's one crawl)
@pytest.mark.parametrize("message", ["widget other cursor has not been initialized", "widget query keys were not initialized"])
def test_not_initialized_with_no_caller_or_a_route_is_not_that_rule(records, message):
    got = action(records, message)
    assert "has not run" not in got["basis"] and "cannot tell" in got["says"], got


@pytest.mark.slow  # (the module's one crawl)
def test_an_isinstance_else_branch_the_project_reaches_is_internal(records):
    got = action(records, "Widget invalid type for data")
    assert got["actor"] == "internal" and "else-branch of `isinstance`" in got["basis"] and "`data`" in got["basis"], got
    assert "cannot tell" not in got["says"], got


@pytest.mark.slow  # (the module's one crawl)
@pytest.mark.parametrize("message", ["Widget invalid type for media", "Widget invalid type for pair"])
def test_media_or_tests_of_two_values_are_not_that_rule(records, message):
    got = action(records, message)
    assert "else-branch of `isinstance`" not in got["basis"] and "cannot tell" in got["says"], got


@pytest.mark.slow  # (the module's one crawl)
def test_a_models_check_of_the_processed_inputs_is_internal(records):
    got = action(records, "Widget audio feature lengths must contain one length")
    assert got["actor"] == "internal" and "multimodal processor built" in got["basis"] and "cannot tell" not in got["says"], got


@pytest.mark.slow  # (the module's one crawl)
@pytest.mark.parametrize("message", ["Widget output count does not match configured", "Widget unexpected image shape"])
def test_a_configured_count_or_outside_a_model_is_not_that_rule(records, message):
    got = action(records, message)
    assert "multimodal processor built" not in got["basis"] and "cannot tell" in got["says"], got
