"""Who acts on the biggest groups of pages left open, second pass (#32, round 46, s46-opens2): a
fixture upstream written here, crawled once through the real CLI, read back as its records'
``meaning.action``; beside each rule a near case it must not take.

- a raise whose message says the code never gets there ("Should not be reached", "{self} should
  not be called") is internal; "should not be called with ..." (what a caller passes) is not that rule;
- a model's ``_parse_and_validate_*_input`` that tests the type of a value it pops from the
  processor's ``kwargs``, or that it is there, or raises ``AssertionError`` after the inputs it
  handles, is internal; the same test on embeddings (a request may carry them), on a parameter that
  is not ``kwargs``, and outside a model's code, are not that rule;
- its bare ``NotImplementedError`` when ``audio_embeds`` is there is the request's (embeddings this model
  does not take); a ``NotImplementedError`` on another value is not that rule.
"""

from __future__ import annotations

import pytest
from helpers import action_starting as action
from helpers import meaning_records

UTILS = """
import time


def with_widget_retry(func, max_retries=2):
    for attempt in range(max_retries):
        try:
            return func()
        except Exception:
            time.sleep(1)
    raise AssertionError("Widget retry: should not be reached")


class WidgetMissingLayer:
    def __call__(self, *args):
        raise RuntimeError(f"Widget missing layer {self} should not be called")

    def forward(self, x):
        if x.ndim != 2:
            raise ValueError("Widget forward should not be called with a tensor of another rank")
        return x
"""

MODEL = """
import torch


class WidgetForConditionalGeneration:
    def _parse_and_validate_image_input(self, **kwargs):
        pixel_values = kwargs.pop("pixel_values", None)
        image_embeds = kwargs.pop("image_embeds", None)
        grid_thw = kwargs.pop("grid_thw", None)
        if pixel_values is None and image_embeds is None:
            return None
        if pixel_values is not None:
            if not isinstance(pixel_values, (torch.Tensor, list)):
                raise ValueError(f"Widget incorrect type of pixel values: {type(pixel_values)}")
            if grid_thw is None:
                raise ValueError("Widget grid_thw is required alongside pixel_values")
            return pixel_values
        if image_embeds is not None:
            if not isinstance(image_embeds, torch.Tensor):
                raise ValueError(f"Widget incorrect type of image embeds: {type(image_embeds)}")
            return image_embeds
        raise AssertionError("Widget image input must contain pixels or embeddings")

    def _parse_and_validate_audio_input(self, **kwargs):
        audio_embeds = kwargs.pop("audio_embeds", None)
        features = kwargs.pop("input_features", None)
        if features is None and audio_embeds is None:
            return None
        if audio_embeds is not None:
            raise NotImplementedError
        if features.ndim == 3:
            raise NotImplementedError("Widget 3-D features")
        return features

    def _parse_and_validate_video_input(self, video):
        if not isinstance(video, torch.Tensor):
            raise ValueError(f"Widget video of another type: {type(video)}")
        return video
"""

PROCESSOR = """
import torch


def _parse_and_validate_widget_input(**kwargs):
    pixel_values = kwargs.pop("pixel_values", None)
    if not isinstance(pixel_values, torch.Tensor):
        raise ValueError(f"Widget processor input of another type: {type(pixel_values)}")
    return pixel_values
"""

FILES = {
    "pkg/__init__.py": "",
    "pkg/utils/retry.py": UTILS,
    "pkg/model_executor/models/widget_vl.py": MODEL,
    "pkg/multimodal/widget_inputs.py": PROCESSOR,
}


@pytest.fixture(scope="module")
def records(crawl_once) -> list[dict]:
    return meaning_records(crawl_once, FILES)


@pytest.mark.slow  # (the module's one crawl)
@pytest.mark.parametrize("message", ["Widget retry: should not be reached", "Widget missing layer"])
def test_a_raise_that_says_the_code_never_gets_there_is_internal(records, message):
    got = action(records, message)
    assert got["actor"] == "internal" and "never gets there" in got["basis"] and "cannot tell" not in got["says"], got


@pytest.mark.slow  # (the module's one crawl)
def test_should_not_be_called_with_a_value_is_not_that_rule(records):
    got = action(records, "Widget forward should not be called with")
    assert "never gets there" not in got["basis"], got


@pytest.mark.slow  # (the module's one crawl)
@pytest.mark.parametrize("message", ["Widget incorrect type of pixel values", "Widget grid_thw is required", "Widget image input must contain pixels"])
def test_a_models_check_of_the_processors_kwargs_is_internal(records, message):
    got = action(records, message)
    assert got["actor"] == "internal" and "multimodal processor builds" in got["basis"] and "cannot tell" not in got["says"], got


@pytest.mark.slow  # (the module's one crawl)
@pytest.mark.parametrize("message", ["Widget incorrect type of image embeds", "Widget video of another type", "Widget processor input"])
def test_embeddings_another_parameter_or_outside_a_model_are_not_that_rule(records, message):
    got = action(records, message)
    assert "multimodal processor builds" not in got["basis"], got


def _bare(records: list[dict], line_word: str) -> dict:
    """The action of the bare ``NotImplementedError`` in the audio parser whose own condition names ``line_word``."""
    (got,) = [
        r["meaning"]["action"]
        for r in records
        if r["sites"][0]["qualname"].endswith("_parse_and_validate_audio_input") and line_word in str(r["sites"][0].get("facts", {}).get("guards"))
    ]
    return got


@pytest.mark.slow  # (the module's one crawl)
def test_embeddings_a_model_does_not_take_are_the_requests(records):
    got = _bare(records, "audio_embeds is not None")
    assert got["actor"] == "request" and "`audio_embeds`" in got["basis"], got
    assert "audio embeddings it carries" in got["says"] and any("Send the audio itself" in s for s in got["steps"]), got


@pytest.mark.slow  # (the module's one crawl)
def test_a_not_implemented_on_another_value_is_not_the_requests(records):
    got = action(records, "Widget 3-D features")
    assert "embeddings in place of its media" not in got["basis"], got
