"""Who acts, the wrong claims of round 46's blind seed 73 (s46-judge4, #32) as rules: a fixture
upstream whose code is written here, crawled through the real CLI, read back as its records'
``meaning.action``; beside each rule a near case it must not take.

- a native check's bare name (``BLOCK_SIZE_K``, a kernel's parameter) is no environment variable even
  where a Python table of ``"BLOCK_SIZE_K": lambda args: ...`` declares that name (W4); a Python check
  on the same bare name still reads it as one;
- a check on a value read from ``hf_processor_mm_kwargs`` is the request's ``mm_processor_kwargs`` (W22);
  a check on what the processor returned (``out_mm_kwargs``) is not that rule;
- a divisibility assert in an online quantization module's helper, called by an online method, is the
  ``--quantization`` setting (W35); the same helper's ``weight.dim() == 3`` assert is not that rule.
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
class ModelConfig:
    quantization: str | None = None
    mm_processor_kwargs: dict | None = None
"""

ARGS = """
from pkg.config import ModelConfig, get_kwargs


def add_cli_args(parser):
    model_kwargs = get_kwargs(ModelConfig)
    parser.add_argument("--quantization", **model_kwargs["quantization"])
    parser.add_argument("--mm-processor-kwargs", **model_kwargs["mm_processor_kwargs"])
"""

HEURISTICS = """
import triton


@triton.heuristics(
    {
        "BLOCK_SIZE_K": lambda args: triton.next_power_of_2(args["topk"]),
    }
)
@triton.jit
def _widget_merge_kernel(x, topk, BLOCK_SIZE_K):
    pass


def widget_chunks(size):
    if size % BLOCK_SIZE_K != 0:
        raise ValueError("widget size must be a multiple of the python BLOCK_SIZE_K")
    return size
"""

GEMM = """
#include <torch/all.h>

torch::Tensor widget_wna16_gemm(torch::Tensor input, int64_t size_k, int64_t BLOCK_SIZE_K) {
  TORCH_CHECK(size_k % BLOCK_SIZE_K == 0, "size_k must divisible by BLOCK_SIZE_K");
  return input;
}
"""

ONLINE = """
import torch


def _quantize_widget_moe_weight(weight):
    assert weight.dim() == 3, f"expected 3D widget expert weights, got {weight.shape}"
    k = weight.shape[-1]
    assert k % 16 == 0, f"widget last dim must be a multiple of 16, got {k}"
    return weight


class WidgetOnlineMoEMethod:
    def _quantize_weights(self, layer):
        return _quantize_widget_moe_weight(layer.w13_weight)
"""

MODEL = """
import torch


class WidgetVLMultiModalProcessor:
    def _get_prompt_updates(self, mm_items, hf_processor_mm_kwargs, out_mm_kwargs):
        def get_video_replacement(item_idx):
            do_sample_frames = hf_processor_mm_kwargs.get("do_sample_frames")
            assert do_sample_frames is None or isinstance(do_sample_frames, bool)
            grid = out_mm_kwargs["video_grid"]
            assert isinstance(grid, torch.Tensor)
            return grid

        return [get_video_replacement]
"""

FILES = {
    "pkg/__init__.py": "",
    "pkg/config.py": CONFIG,
    "pkg/engine/arg_utils.py": ARGS,
    "pkg/ops/widget_topk.py": HEURISTICS,
    "pkg/model_executor/layers/quantization/online/widget_nvfp4.py": ONLINE,
    "pkg/model_executor/models/widget_vl.py": MODEL,
    "csrc/moe/widget_wna16.cu": GEMM,
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


def _record(records: list[dict], words: str) -> dict:
    (got,) = [r for r in records if words in (r["message"]["text"] or "") + json.dumps(r["sites"][0].get("facts"))]
    return got


def _having(records: list[dict], words: str) -> dict:
    return _record(records, words)["meaning"]["action"]


@pytest.mark.slow
def test_a_native_checks_bare_name_is_no_environment_variable(records):
    got = _record(records, "size_k must divisible by BLOCK_SIZE_K")
    assert not any(k["kind"] == "env_var" for k in got["meaning"]["knobs"]), got["meaning"]["knobs"]
    assert "setting of yours (`BLOCK_SIZE_K`)" not in got["meaning"]["action"]["says"], got["meaning"]["action"]


@pytest.mark.slow
def test_a_python_checks_bare_name_is_still_read_as_one(records):
    got = _record(records, "multiple of the python BLOCK_SIZE_K")
    assert any(k["kind"] == "env_var" and k["name"] == "BLOCK_SIZE_K" for k in got["meaning"]["knobs"]), got["meaning"]["knobs"]


@pytest.mark.slow
def test_a_check_on_the_processor_kwargs_is_the_request(records):
    got = _having(records, "isinstance(do_sample_frames, bool)")
    assert got["actor"] == "request" and "`hf_processor_mm_kwargs`" in got["basis"], got
    assert "`--mm-processor-kwargs`" in got["basis"], got
    assert any("`mm_processor_kwargs`" in s and "JSON boolean" in s for s in got["steps"]), got
    assert not any(s.startswith("Report it") for s in got["steps"]), got


@pytest.mark.slow
def test_a_check_on_what_the_processor_returned_is_not_that_rule(records):
    got = _having(records, "isinstance(grid, torch.Tensor)")
    assert got["actor"] != "request" and "processor keyword" not in got["basis"], got


@pytest.mark.slow
def test_a_divisibility_assert_in_an_online_quantization_helper_is_the_setting(records):
    got = _having(records, "widget last dim must be a multiple of 16")
    assert got["actor"] == "setting" and "`WidgetOnlineMoEMethod`" in got["basis"] and "`--quantization`" in got["basis"], got
    assert any("online quantization" in s and "`--quantization`" in s for s in got["steps"]), got
    assert not any(s.startswith("Report it") for s in got["steps"]), got


@pytest.mark.slow
def test_the_same_helpers_dimension_assert_is_not_that_rule(records):
    got = _having(records, "expected 3D widget expert weights")
    assert got["actor"] != "setting" and "online quantization" not in got["basis"], got
