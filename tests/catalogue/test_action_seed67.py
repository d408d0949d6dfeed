"""Who acts, the wrong claims and open pages of round 45's blind seed 67 (s45-judge, #32) as rules:
a fixture upstream whose code is written here, crawled through the real CLI, read back as its
records' ``meaning.action``; beside each rule a near case it must not take.

- a native check on a local the CUDA runtime filled through its address (``cudaDeviceGetAttribute(&x,
  ...)``) is the GPU's or the driver's (W6); one on a parameter beside it is not;
- an unguarded native throw inside ``#if defined(USE_ROCM)`` is the platform's (W12); a guarded one in
  the other branch is not;
- a platform's function that parses what the device reports is the hardware's (W9), one that checks
  the configuration is not;
- ``req.app.state.args.X`` is the server's option (W5), other state of the app stays the server's own;
- a dtype check on the layer's own parameters after the weights are loaded is the code's own (W16);
  one on the checkpoint's tensor in a weight loader stays the model's;
- a KV connector's "X requires ..." is a limit of the connector chosen (W18);
- a missing tokenizer in the serving code is ``--skip-tokenizer-init`` (W35);
- a raise for a task of its own that was cancelled is internal (O3); a file's kind tested with
  ``stat.S_ISLNK`` is the machine's (O19); a warning that the model's config is in a legacy form is
  the model's and asks nothing (O13);
- "(e.g. ...)" does not cut a remedy (R*38); "check the inputs" only where the check names an input (R*26).
"""

from __future__ import annotations

import json

import pytest
from helpers import action_of, jsonl_bytes

KERNEL = """
#include <torch/all.h>

void widget_repack(torch::Tensor const& b, int64_t size_k, int device_index) {
  int blocks;
  cudaDeviceGetAttribute(&blocks, cudaDevAttrMultiProcessorCount, device_index);
  int max_smem = 0;
  cudaDeviceGetAttribute(&max_smem, cudaDevAttrMaxSharedMemoryPerBlockOptin, device_index);
  TORCH_CHECK(max_smem > 0, "widget repack found no opt-in limit");
  TORCH_CHECK(blocks > 0 && size_k > 0, "widget repack size is empty");
}

void widget_reduce_scatter(int size) {
#if defined(USE_ROCM)
  throw std::runtime_error("widget multimem reduce-scatter is not supported on ROCm");
#else
  if (size <= 0)
    throw std::runtime_error("widget multimem reduce-scatter requires a non-empty input");
#endif
}
"""

PLATFORM = """
def _capability_from_gcn_arch(gcn_arch: str):
    major = int(gcn_arch[3:-2])
    if major < 9:
        raise ValueError(f"Parsed unknown widget architecture from GCN arch '{gcn_arch}': major={major}.")
    return major


class WidgetRocmPlatform:
    @classmethod
    def check_and_update_config(cls, vllm_config) -> None:
        if vllm_config.parallel_config.world_size > 8:
            raise ValueError("Widget ROCm architecture runs at most 8 ranks")
"""

HANDLERS = """
import logging

logger = logging.getLogger(__name__)


async def http_exception_handler(req, exc):
    if req.app.state.args.log_error_stack:
        logger.error("Widget HTTPException caught: %s", exc.detail)
    if req.app.state.engine_client is None:
        logger.error("Widget engine client is gone: %s", exc.detail)
    return exc
"""

QUANT = """
import torch

WIDGET_VALUE_DTYPE = torch.float8_e4m3fn


class WidgetMxFp8MoEMethod:
    def create_weights(self, layer, num_experts: int) -> None:
        layer.w13_weight = torch.nn.Parameter(torch.empty(num_experts, dtype=WIDGET_VALUE_DTYPE))

    @staticmethod
    def _check_weight_dtypes(layer) -> None:
        for name in ("w13_weight", "w2_weight"):
            actual = getattr(layer, name).dtype
            if actual != WIDGET_VALUE_DTYPE:
                raise ValueError(f"Widget expected {name} dtype {WIDGET_VALUE_DTYPE}, got {actual}.")

    def process_weights_after_loading(self, layer) -> None:
        self._check_weight_dtypes(layer)

    def weight_loader(self, param, loaded_weight) -> None:
        if loaded_weight.dtype != WIDGET_VALUE_DTYPE:
            raise ValueError(f"Widget checkpoint weight dtype {loaded_weight.dtype} is not {WIDGET_VALUE_DTYPE}")
        param.data.copy_(loaded_weight)
"""

CONNECTOR = """
class WidgetFSKVConnector:
    def register_kv_caches(self, kv_caches) -> None:
        self._kv_caches = kv_caches
        first = next(iter(kv_caches.values()))
        assert all(c.shape == first.shape for c in self._kv_caches.values()), "WidgetFS requires uniform KV cache shapes."
        assert len(self._kv_caches) < 4096, "widget cache table overflow"
"""

CONFIG = """
from dataclasses import dataclass


def get_kwargs(cls):
    return {}


@dataclass
class ModelConfig:
    skip_tokenizer_init: bool = False
"""

ARGS = """
from pkg.config import ModelConfig, get_kwargs


def add_cli_args(parser):
    model_kwargs = get_kwargs(ModelConfig)
    parser.add_argument("--skip-tokenizer-init", **model_kwargs["skip_tokenizer_init"])
"""

SERVING = """
class WidgetServingChat:
    async def _create_widget_completion(self, request):
        tokenizer = self.renderer.tokenizer
        assert tokenizer is not None
        engine = self.engine_client
        assert engine is not None, "widget engine client is unset"
        return tokenizer, engine
"""

BATCH = """
import asyncio
import os
import stat


class WidgetCacheUnavailableError(RuntimeError):
    pass


async def dispatch_widget_batch(tasks):
    failure = None
    for task in tasks:
        try:
            await task
        except BaseException as e:
            failure = e
    if failure is not None:
        if isinstance(failure, asyncio.CancelledError):
            raise RuntimeError("A widget batch request was cancelled before it completed") from failure
        raise RuntimeError("A widget batch request failed") from failure


def verify_widget_socket(socket_path: str) -> None:
    info = os.lstat(socket_path)
    if stat.S_ISLNK(info.st_mode):
        raise WidgetCacheUnavailableError(f"Refusing to connect to symlinked widget socket {socket_path}")
    if info.st_uid != os.getuid():
        raise WidgetCacheUnavailableError(f"Widget socket {socket_path} has another owner")
"""

HF_CONFIG = """
import logging

logger = logging.getLogger(__name__)


def patch_widget_rope_type(rope_parameters: dict) -> None:
    if rope_parameters.get("rope_type") == "mrope":
        logger.warning("Replacing legacy widget rope_type 'mrope' with 'default'")
        rope_parameters["rope_type"] = "default"
    if rope_parameters.get("rope_type") == "linear":
        logger.warning("Widget rope_type 'linear' scales positions")
"""

MODEL = """
import logging
import math

logger = logging.getLogger(__name__)


class WidgetTailKernel:
    def validate_configuration(self, b_prime_stages: int, latent_dim: int) -> None:
        if not 0 <= b_prime_stages <= math.ceil(latent_dim / 128):
            raise ValueError("widget b_prime_stages exceeds the GEMM K-tile count")

    def validate_images(self, num_images: int) -> None:
        if num_images > 4:
            raise ValueError("widget image count is not supported")


class WidgetEmulationExperts:
    def __init__(self) -> None:
        logger.warning(
            "Widget emulation experts dequantize weights on the fly. "
            "Consider using a device with native widget support (e.g. Nvidia Blackwell) for better performance."
        )
"""

FILES = {
    "pkg/__init__.py": "",
    "csrc/widget_repack.cu": KERNEL,
    "pkg/platforms/rocm.py": PLATFORM,
    "pkg/entrypoints/serve/handlers/http.py": HANDLERS,
    "pkg/model_executor/layers/quantization/widget_mxfp8.py": QUANT,
    "pkg/distributed/kv_transfer/kv_connector/v1/widgetfs/widgetfs_connector.py": CONNECTOR,
    "pkg/config.py": CONFIG,
    "pkg/engine/arg_utils.py": ARGS,
    "pkg/entrypoints/openai/chat_completion/serving.py": SERVING,
    "pkg/entrypoints/launchers/run_batch.py": BATCH,
    "pkg/transformers_utils/config.py": HF_CONFIG,
    "pkg/models/widget_k3/ops/tail.py": MODEL,
}

TOML = """
[upstreams.widgets]
url = "https://github.com/acme/widgets"
include = ["pkg/**/*.py"]
kinds = ["raise", "assert", "log", "response", "native"]
native = ["csrc/**"]
knob_kwargs = ["get_kwargs"]
"""


@pytest.fixture(scope="module")
def records(crawl_once) -> list[dict]:
    out = crawl_once(FILES, "--upstream", "widgets", config=TOML)
    return [json.loads(line) for line in jsonl_bytes(out / "acme" / "widgets").splitlines()]


def _ending(records: list[dict], end: str) -> dict:
    (got,) = [r["meaning"]["action"] for r in records if r["message"]["text"].endswith(end)]
    return got


def _assert_at(records: list[dict], qualname: str, line_has: str) -> dict:
    (got,) = [
        r["meaning"]["action"]
        for r in records
        if r["kind"] == "assert" and r["sites"][0]["qualname"] == qualname and line_has in (r["sites"][0].get("facts") or {}).get("guards", [""])[-1]
    ]
    return got


@pytest.mark.slow
def test_a_native_check_on_what_the_cuda_runtime_filled_is_the_gpus(records):
    got = _ending(records, "widget repack found no opt-in limit")
    assert got["actor"] == "environment" and "`max_smem`" in got["basis"] and "`cudaDeviceGetAttribute`" in got["basis"], got
    assert not any(s.startswith("Report it") for s in got["steps"]), got["steps"]


@pytest.mark.slow
def test_a_native_check_on_a_parameter_beside_a_filled_local_is_not(records):
    got = _ending(records, "widget repack size is empty")
    assert got["actor"] == "internal", got


@pytest.mark.slow
def test_an_unguarded_throw_in_the_rocm_branch_is_the_platforms(records):
    got = _ending(records, "widget multimem reduce-scatter is not supported on ROCm")
    assert got["actor"] == "environment" and "`#if defined(USE_ROCM)`" in got["basis"], got
    assert "config.json" not in " ".join(got["steps"]), got["steps"]


@pytest.mark.slow
def test_a_guarded_throw_in_the_other_branch_is_not(records):
    got = _ending(records, "widget multimem reduce-scatter requires a non-empty input")
    assert got["actor"] != "environment", got


@pytest.mark.slow
def test_a_platforms_parse_of_what_the_device_reports_is_the_hardware(records):
    got = action_of(records, "Parsed unknown widget architecture")
    assert got["actor"] == "environment" and "`_capability_from_gcn_arch`" in got["basis"], got
    assert "config.json" not in " ".join(got["steps"]), got["steps"]


@pytest.mark.slow
def test_a_platforms_check_of_the_configuration_is_not_the_hardware(records):
    got = action_of(records, "Widget ROCm architecture runs at most 8 ranks")
    assert "parses what the device reports" not in got["basis"], got


@pytest.mark.slow
def test_the_servers_parsed_args_an_http_handler_reads_are_its_option(records):
    got = action_of(records, "Widget HTTPException caught")
    assert got["actor"] == "setting" and "log_error_stack" in got["basis"] and "server's own state" not in got["basis"], got
    assert "logged because the server was started with" in got["steps"][0], got["steps"]


@pytest.mark.slow
def test_other_state_of_the_app_stays_the_servers_own(records):
    got = action_of(records, "Widget engine client is gone")
    assert got["actor"] == "internal", got


@pytest.mark.slow
def test_a_dtype_check_on_the_layers_own_parameters_after_loading_is_the_codes_own(records):
    got = action_of(records, "Widget expected {name} dtype")
    assert got["actor"] == "internal" and "`create_weights`" in got["basis"], got
    assert "prompt, images" not in " ".join(got["steps"]), got["steps"]


@pytest.mark.slow
def test_a_dtype_check_on_the_checkpoints_tensor_in_a_loader_stays_the_models(records):
    got = action_of(records, "Widget checkpoint weight dtype")
    assert got["actor"] == "model", got


@pytest.mark.slow
def test_a_kv_connectors_stated_requirement_is_the_connector_chosen(records):
    got = action_of(records, "WidgetFS requires uniform KV cache shapes.")
    assert got["actor"] == "setting" and "`WidgetFS`" in got["basis"] and "`--kv-transfer-config`" in got["basis"], got
    assert "another KV connector" in got["steps"][0], got["steps"]


@pytest.mark.slow
def test_a_kv_connectors_other_assert_stays_internal(records):
    got = action_of(records, "widget cache table overflow")
    assert got["actor"] == "internal", got


@pytest.mark.slow
def test_a_missing_tokenizer_in_the_serving_code_is_skip_tokenizer_init(records):
    got = _assert_at(records, "WidgetServingChat._create_widget_completion", "tokenizer")
    assert got["actor"] == "setting" and "`--skip-tokenizer-init`" in got["says"], got
    assert got["steps"][0].startswith("Start the server without `--skip-tokenizer-init`"), got["steps"]


@pytest.mark.slow
def test_another_missing_part_of_the_serving_code_is_not(records):
    got = action_of(records, "widget engine client is unset")
    assert "tokenizer" not in got["basis"], got


@pytest.mark.slow
def test_a_raise_for_its_own_task_that_was_cancelled_is_internal(records):
    got = action_of(records, "A widget batch request was cancelled")
    assert got["actor"] == "internal" and "`failure`" in got["basis"] and "errcat cannot tell" not in got["says"], got


@pytest.mark.slow
def test_a_raise_for_a_task_that_failed_otherwise_is_not_that_rule(records):
    got = action_of(records, "A widget batch request failed")
    assert "cancelled" not in got["basis"], got


@pytest.mark.slow
def test_a_files_kind_tested_with_stat_is_the_machines(records):
    got = action_of(records, "Refusing to connect to symlinked widget socket")
    assert got["actor"] == "environment" and "`stat.S_ISLNK(info.st_mode)`" in got["basis"], got
    assert "the real file" in got["steps"][0], got["steps"]


@pytest.mark.slow
def test_a_files_owner_is_not_that_rule(records):
    got = action_of(records, "Widget socket {socket_path} has another owner")
    assert "kind of a file" not in got["basis"], got


@pytest.mark.slow
def test_a_warning_that_the_models_config_is_in_a_legacy_form_is_the_models_and_asks_nothing(records):
    got = action_of(records, "Replacing legacy widget rope_type")
    assert got["actor"] == "model" and got["basis"].startswith("informational:"), got
    assert got["steps"][-1].startswith("Nothing to do"), got["steps"]


@pytest.mark.slow
def test_a_warning_on_the_same_config_without_a_legacy_form_is_not(records):
    got = action_of(records, "Widget rope_type 'linear' scales positions")
    assert "legacy" not in got["basis"], got


@pytest.mark.slow
def test_an_eg_in_parentheses_does_not_cut_the_remedy(records):
    got = action_of(records, "Widget emulation experts dequantize")
    assert got["remedy"] == "Consider using a device with native widget support (e.g. Nvidia Blackwell) for better performance.", got


@pytest.mark.slow
def test_a_model_codes_check_that_names_no_input_does_not_ask_to_check_the_inputs(records):
    got = action_of(records, "widget b_prime_stages exceeds")
    assert got["actor"] == "model" and "prompt, images" not in " ".join(got["steps"]), got


@pytest.mark.slow
def test_a_model_codes_check_that_names_an_input_still_does(records):
    got = action_of(records, "widget image count is not supported")
    assert got["actor"] == "model" and "prompt, images" in " ".join(got["steps"]), got
