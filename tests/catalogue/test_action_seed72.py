"""Who acts, the wrong claims and open pages of round 46's blind seed 72 (s46-judge3, #32) as rules:
a fixture upstream whose code is written here, crawled through the real CLI, read back as its
records' ``meaning.action``; beside each rule a near case it must not take.

- a Mamba kernel's dtype dispatch that rejects the state's dtype is the setting of the SSM state
  cache's dtype (W34); the same dispatch's rejection of the input's dtype is not that rule;
- a raise on a quantization scheme's ``symmetric`` under a platform test is this checkpoint on this
  device (W10); a raise on a parameter that is no property of the scheme, or on one an option sets
  (``--input-symmetric``), is not that rule;
- a message that says the project's own earlier call passed ``tokenize=False``, raised in a private
  method, is internal (W20); the same message in a public method is not that rule;
- a setting's warning that says the code falls back (or overrides a value) by itself gets no "the condition is what it fails"
  step but one that says nothing fails (R*9); an error-level log of the same words is not that rule;
- a model's count mismatch between ``pixel_values`` and another processor output is internal (O26);
  a mismatch against embeddings, which a request may carry, is not that rule.
"""

from __future__ import annotations

import json

import pytest
from helpers import jsonl_bytes

CONFIG = """
from dataclasses import dataclass


def get_kwargs(cls):
    return {}


@dataclass
class CacheConfig:
    mamba_ssm_cache_dtype: str = "auto"


@dataclass
class AttentionConfig:
    widget_backend: str = "auto"


@dataclass
class WidgetQuantConfig:
    input_symmetric: bool = True
"""

ARGS = """
from pkg.config import AttentionConfig, CacheConfig, WidgetQuantConfig, get_kwargs


def add_cli_args(parser):
    cache_kwargs = get_kwargs(CacheConfig)
    parser.add_argument("--mamba-ssm-cache-dtype", **cache_kwargs["mamba_ssm_cache_dtype"])
    attention_kwargs = get_kwargs(AttentionConfig)
    parser.add_argument("--widget-backend", **attention_kwargs["widget_backend"])
    quant_kwargs = get_kwargs(WidgetQuantConfig)
    parser.add_argument("--input-symmetric", **quant_kwargs["input_symmetric"])
"""

SCAN = """
#include <torch/all.h>

#define DISPATCH_WIDGET_ITYPE_AND_STYPE(ITYPE, STYPE, NAME, ...)                 \\
    if (ITYPE == at::ScalarType::Half) {                                         \\
        using input_t = at::Half;                                                \\
        if (STYPE == at::ScalarType::Half) {                                     \\
            using state_t = at::Half;                                            \\
            __VA_ARGS__();                                                       \\
        } else if (STYPE == at::ScalarType::Float) {                             \\
            using state_t = float;                                               \\
            __VA_ARGS__();                                                       \\
        } else {                                                                 \\
            TORCH_CHECK(false, #NAME " not implemented for state type '", STYPE, "'"); \\
        }                                                                        \\
    } else {                                                                     \\
        TORCH_CHECK(false, #NAME " not implemented for input type '", ITYPE, "'"); \\
    }

void widget_scan_fwd(torch::Tensor& u, torch::Tensor& ssm_states) {
  DISPATCH_WIDGET_ITYPE_AND_STYPE(u.scalar_type(), ssm_states.scalar_type(), "widget_scan_fwd", [&] {});
}
"""

OPS = """
from pkg.platforms import current_platform


def scaled_widget_quant(input, scale=None, symmetric=True):
    \"\"\"Quantize the input tensor to int8.\"\"\"
    if current_platform.is_xpu():
        if not symmetric:
            raise NotImplementedError("asymmetric int8 widget activation quantization is unsupported on XPU")
        return input
    return input


def option_widget_quant(input, input_symmetric=True):
    if current_platform.is_xpu():
        if not input_symmetric:
            raise NotImplementedError("optional asymmetric int8 widget quantization is unsupported on XPU")
        return input
    return input


def fast_widget_quant(input, fast=True):
    if current_platform.is_xpu():
        if not fast:
            raise NotImplementedError("slow int8 widget quantization is unsupported on XPU")
        return input
    return input
"""

RENDERER = """
_MISSING = (
    "Expected prompt_token_ids in the widget prompt when prompt_embeds are present. "
    "This indicates the chat template was invoked with tokenize=False."
)


class WidgetRenderer:
    @staticmethod
    def _apply_widget_embeds(prompt, embeds):
        token_ids = prompt.get("prompt_token_ids")
        if token_ids is None:
            raise RuntimeError(_MISSING)
        return token_ids

    def apply_widget_embeds(self, prompt, embeds):
        token_ids = prompt.get("prompt_token_ids")
        if token_ids is None:
            raise RuntimeError(
                "Expected prompt_token_ids in the public widget prompt. "
                "This indicates the chat template was invoked with tokenize=False."
            )
        return token_ids
"""

MODEL = """
class WidgetVLForCausalLM:
    def _split_tilings(self, pixel_values, tilings):
        expected = len(pixel_values)
        tiling_items = list(tilings)
        if len(tiling_items) != expected:
            raise ValueError(
                "Mismatch between the number of pixel_values entries "
                f"({expected}) and tilings ({len(tiling_items)})."
            )
        return tiling_items

    def _split_embeds(self, pixel_values, image_embeds):
        expected = len(pixel_values)
        if len(image_embeds) != expected:
            raise ValueError(
                "Mismatch between the number of pixel_values entries "
                f"({expected}) and image_embeds ({len(image_embeds)})."
            )
        return image_embeds
"""

SELECTOR = """
import logging

logger = logging.getLogger(__name__)


def select_widget_backend(vllm_config, dtype):
    if vllm_config.attention_config.widget_backend == "flash" and dtype == "float32":
        logger.warning("Widget flash backend does not support float32. Falling back to the Triton widget backend.")
        return "triton"
    if vllm_config.attention_config.widget_backend == "paged" and dtype == "float32":
        logger.error("Widget paged backend does not support float32. Falling back to the slow widget backend.")
        return "slow"
    if vllm_config.attention_config.widget_backend == "full" and dtype == "float16":
        logger.warning("Widget full backend does not take float16. Overriding widget_backend to paged.")
        return "paged"
    return vllm_config.attention_config.widget_backend
"""

FILES = {
    "pkg/__init__.py": "",
    "pkg/config.py": CONFIG,
    "pkg/engine/arg_utils.py": ARGS,
    "pkg/_custom_ops.py": OPS,
    "pkg/renderers/widget.py": RENDERER,
    "pkg/model_executor/models/widget_vl.py": MODEL,
    "csrc/mamba/widget_scan.cu": SCAN,
    "pkg/platforms/widget_select.py": SELECTOR,
}

TOML = """
[upstreams.widgets]
url = "https://github.com/acme/widgets"
include = ["pkg/**/*.py"]
kinds = ["raise", "assert", "log", "native"]
native = ["csrc/**"]
knob_kwargs = ["get_kwargs"]
"""


@pytest.fixture(scope="module")
def records(crawl_once) -> list[dict]:
    out = crawl_once(FILES, "--upstream", "widgets", config=TOML)
    return [json.loads(line) for line in jsonl_bytes(out / "acme" / "widgets").splitlines()]


def _having(records: list[dict], words: str) -> dict:
    (got,) = [r for r in records if words in (r["message"]["text"] or "")]
    return got["meaning"]["action"]


@pytest.mark.slow
def test_a_mamba_dispatch_rejecting_the_state_dtype_is_the_ssm_cache_dtype(records):
    got = _having(records, "not implemented for state type")
    assert got["actor"] == "setting" and "`--mamba-ssm-cache-dtype`" in got["basis"], got
    assert any("`--mamba-ssm-cache-dtype auto`" in s for s in got["steps"]), got
    assert not any(s.startswith("Report it") for s in got["steps"]), got


@pytest.mark.slow
def test_the_input_dtype_of_the_same_dispatch_is_not_that_rule(records):
    got = _having(records, "not implemented for input type")
    assert "--mamba-ssm-cache-dtype" not in got["basis"], got


@pytest.mark.slow
def test_a_raise_on_symmetric_under_a_platform_test_is_the_checkpoint_on_that_device(records):
    got = _having(records, "asymmetric int8 widget activation quantization")
    assert got["actor"] == "model" and "`symmetric`" in got["basis"] and "`xpu`" in got["basis"], got
    assert any("quantization config has `symmetric` true" in s for s in got["steps"]), got
    assert not any("options and config values you pass" in s for s in got["steps"]), got


@pytest.mark.slow
def test_a_raise_on_another_parameter_under_a_platform_test_is_not_that_rule(records):
    got = _having(records, "slow int8 widget quantization")
    assert "quantization scheme" not in got["basis"], got


@pytest.mark.slow
def test_a_symmetry_an_option_sets_is_not_that_rule(records):
    got = _having(records, "optional asymmetric int8 widget quantization")
    assert "quantization scheme" not in got["basis"], got


@pytest.mark.slow
def test_a_private_method_on_its_own_earlier_calls_keyword_is_internal(records):
    got = _having(records, "in the widget prompt when prompt_embeds")
    assert got["actor"] == "internal" and "`tokenize=False`" in got["basis"] and "_apply_widget_embeds" in got["basis"], got
    assert "model" not in got["says"].split(":")[0], got


@pytest.mark.slow
def test_the_same_message_in_a_public_method_is_not_that_rule(records):
    got = _having(records, "in the public widget prompt")
    assert "private method" not in got["basis"], got


@pytest.mark.slow
def test_a_count_mismatch_of_pixel_values_and_tilings_is_internal(records):
    got = _having(records, "and tilings (")
    assert got["actor"] == "internal" and "`pixel_values`" in got["basis"] and "`tilings`" in got["basis"], got
    assert "cannot tell" not in got["says"], got


@pytest.mark.slow
def test_a_count_mismatch_against_embeddings_is_not_that_rule(records):
    got = _having(records, "and image_embeds (")
    assert "compares the counts" not in got["basis"], got


@pytest.mark.slow
def test_a_settings_warning_that_falls_back_says_nothing_fails(records):
    got = _having(records, "Widget flash backend does not support float32")
    assert got["actor"] == "setting", got
    assert any(s.startswith("Nothing fails here: the code falls back by itself") for s in got["steps"]), got
    assert not any("is what it fails" in s or s.startswith("Check the options") for s in got["steps"]), got


@pytest.mark.slow
def test_a_settings_warning_that_overrides_a_value_says_nothing_fails(records):
    got = _having(records, "Widget full backend does not take float16")
    assert any(s.startswith("Nothing fails here: the code overrides the value by itself") for s in got["steps"]), got


@pytest.mark.slow
def test_an_error_that_falls_back_is_not_that_rule(records):
    got = _having(records, "Widget paged backend does not support float32")
    assert not any(s.startswith("Nothing fails here") for s in got["steps"]), got
