"""Who acts, for the patterns a blind hand check of vLLM found wrong (#32 item 1): each rule on a
fixture upstream whose code is written here, crawled through the real CLI; and that where the code
shows no actor the page says so instead of guessing."""

from __future__ import annotations

import pytest
from helpers import meaning_records

BENCH = """
def validate_args(args):
    if args.backend == "hf" and args.hf_max_batch_size is None:
        raise ValueError("HF max batch size is required for HF backend")
"""

FIELDS = """
from dataclasses import dataclass


@dataclass
class ParamMeta:
    name: str
    shape: tuple

    def __post_init__(self):
        if len(self.shape) > 8:
            raise ValueError(f"parameter {self.name!r} has too many dims: {len(self.shape)}")
"""

NET = """
import logging

logger = logging.getLogger(__name__)


def fetch(url, attempt):
    logger.warning("HTTP fetch failed for %s (attempt %d) -- retrying", url, attempt)


def tools(entries):
    for name in entries:
        if name is None:
            logger.warning("a tool entry has no name")
"""

MODEL = """
class Shard:
    def __init__(self, hidden_size, world_size):
        if hidden_size % world_size != 0:
            raise ValueError("hidden size must split evenly")

    def fuse(self, weight):
        if weight.device.type != "cuda":
            raise ValueError("this fusion runs on CUDA only")


def check_prompt(placeholders, items):
    if len(placeholders) != items:
        raise RuntimeError("Found too few placeholders: you forgot to include <image> in the prompt.")


def kernels():
    if fastkern is None:
        raise RuntimeError("This layer requires a usable fastkern installation")
"""

LORA = """
class LoRAModel:
    @classmethod
    def from_tensors(cls, tensor, vocab):
        if tensor.shape[1] != vocab:
            raise RuntimeError(f"The embedding LoRA size({tensor.shape[1]}) must match the vocabulary size({vocab}).")
"""

ENGINE = """
import logging

logger = logging.getLogger(__name__)


class Engine:
    def create(self):
        assert self.max_seqs is not None, "max_seqs must be set by this point"

    def embed(self, x, size):
        if x > size:
            raise NotImplementedError

    def toggle(self, ops, name):
        if f"+{name}" in ops and f"-{name}" in ops:
            raise ValueError(f"Cannot enable and disable {name}")

    def build(self, method):
        if not hasattr(method, "embedding"):
            raise NotImplementedError(f"The class {type(method).__name__} must implement the 'embedding' method")

    def step(self, result):
        if result is None:
            raise ValueError("the step produced nothing")

    def send(self, item):
        if self.closed:
            raise RuntimeError("Publisher is closed")
        if self.fused is None:
            logger.warning("Widgets are written one by one. Update fastkern to a build with strided writes to fuse them.")


class Registry:
    @classmethod
    def register_engine(cls, name, module_path, class_name=None):
        if class_name is None:
            raise ValueError("class_name is required when registering with module path")
"""

CLI = """
import argparse
import json


def kwargs_arg(value):
    loaded = json.loads(value)
    if not isinstance(loaded, dict):
        raise argparse.ArgumentTypeError(f"Not deserializable to dict: {value}")
    return loaded
"""

OPTIONAL = """
try:
    from fastkern.engine import TransferEngine
except ImportError:
    TransferEngine = None


class Worker:
    def __init__(self, parallel_config, worker_class, profiler):
        if TransferEngine is None:
            raise RuntimeError("Fastkern is not available")
        if profiler.formats is None:
            raise RuntimeError("The installed Fastkern profiler does not support selecting an output format")
        if parallel_config.worker_extension_cls:
            for attr in dir(worker_class):
                assert not hasattr(parallel_config, attr), f"{attr} conflicts with the worker_extension_cls given"
        if profiler.fused is None:
            logger.warning("Fusion disabled: fastkern is missing fused_ar. Upgrade fastkern past PR #2823 to enable it.")
"""

KERNEL_CONFIG = """
def run_first_valid(configs, key):
    if not configs:
        raise RuntimeError(f"No valid config for kernel key={key}")
"""

DECODER = """
def validate_max_dimensions(max_width, max_height):
    if max_width is None or max_height is None:
        raise ValueError("max_width and max_height must be set together")
"""

SERVING = """
import logging

logger = logging.getLogger(__name__)


async def stream(request, generator):
    try:
        async for chunk in generator:
            yield chunk
    except Exception:
        logger.exception("Error in chat completion stream generator.")
"""

PLATFORM = """
import logging

logger = logging.getLogger(__name__)


def communicator(torch):
    if not torch.distributed.is_xccl_available():
        logger.warning("xccl is not enabled in this torch build, communication is not available.")


def scheduler_metadata():
    logger.warning("get_scheduler_metadata is not implemented for xpu_ops, returning None.")
"""

LOADER = """
import math


class WidgetMoE:
    def load_expert_weight(self, name, weight):
        amax = float(weight.max())
        assert math.isfinite(amax) and amax > 0, f"bad input_amax: {amax}"

    def forward(self, x):
        assert x.dim() == 2, "x must be two-dimensional"
"""


@pytest.fixture(scope="module")
def records(crawl_once) -> dict[str, dict]:
    found = meaning_records(
        crawl_once,
        {
            "pkg/__init__.py": "",
            "pkg/benchmarks/__init__.py": "",
            "pkg/benchmarks/throughput.py": BENCH,
            "pkg/weights.py": FIELDS,
            "pkg/connections.py": NET,
            "pkg/lora/__init__.py": "",
            "pkg/lora/model.py": LORA,
            "pkg/engine.py": ENGINE,
            "pkg/models/__init__.py": "",
            "pkg/models/shard.py": MODEL,
            "pkg/cli.py": CLI,
            "pkg/models/widget_moe.py": LOADER,
            "pkg/worker.py": "import logging\n\nlogger = logging.getLogger(__name__)\n" + OPTIONAL,
            "pkg/triton_utils/force_first_config.py": KERNEL_CONFIG,
            "pkg/multimodal/video_decoders/dec.py": DECODER,
            "pkg/entrypoints/openai/serving.py": SERVING,
            "pkg/_xpu_ops.py": PLATFORM,
        },
    )
    return {r["message"]["text"] or f"{r['kind']} {r['location']['qualname']}": r for r in found}


def action(records: dict[str, dict], start: str) -> dict:
    (record,) = [r for text, r in records.items() if text.startswith(start)]
    return record["meaning"]["action"]


def test_a_benchmark_scripts_args_are_the_options_of_the_command_run(records):
    got = action(records, "HF max batch size")
    assert got["actor"] == "setting"
    assert "`args.backend`" in got["says"] and "`args.hf_max_batch_size`" in got["says"]


def test_a_field_of_an_object_the_code_builds_is_no_setting(records):
    got = action(records, "parameter {self.name!r} has too many dims")
    assert got["actor"] != "setting"
    assert "`shape`" not in got["says"] and not any("`shape`" in step for step in got["steps"])


def test_a_network_fetch_that_failed_is_the_environment(records):
    got = action(records, "HTTP fetch failed")
    assert (got["actor"], "network" in got["says"]) == ("environment", True)


def test_a_lora_adapters_check_is_the_adapter(records):
    got = action(records, "The embedding LoRA size")
    assert got["actor"] == "model" and "LoRA adapter" in got["says"]


def test_an_invariant_of_the_codes_own_order_is_internal(records):
    assert action(records, "max_seqs must be set by this point")["actor"] == "internal"


def test_a_not_implemented_error_in_a_branch_is_no_method_to_implement(records):
    got = action(records, "raise Engine.embed")
    assert got["actor"] != "caller" and not any("implement `" in step for step in got["steps"])


def test_a_verb_on_a_negated_clause_is_no_remedy(records):
    assert action(records, "Cannot enable and disable")["remedy"] is None


def test_where_the_code_shows_no_actor_the_page_says_errcat_cannot_tell(records):
    got = action(records, "the step produced nothing")
    assert got["actor"] == "internal"
    assert "cannot tell whose move it is" in got["says"] and "Nobody outside" not in got["says"]


def test_a_warning_where_the_code_shows_no_actor_claims_none(records):
    got = action(records, "a tool entry has no name")
    assert got["actor"] == "internal" and "cannot tell whose it is" in got["says"]
    assert "Nobody has to act" not in got["says"] and "leads to it" not in got["says"]


def test_a_model_files_check_on_the_rank_count_or_the_device_is_not_the_model(records):
    assert action(records, "hidden size must split evenly")["actor"] == "setting"
    assert action(records, "this fusion runs on CUDA only")["actor"] == "environment"


def test_a_message_saying_what_you_gave_is_the_request(records):
    assert action(records, "Found too few placeholders")["actor"] == "request"


def test_a_missing_installation_is_the_environment(records):
    assert action(records, "This layer requires a usable")["actor"] == "environment"


def test_a_method_the_message_names_to_implement_is_not_the_one_raising(records):
    got = action(records, "The class {type(method).__name__} must implement")
    assert got["actor"] == "caller"
    assert not any("`Engine.build`" in step for step in got["steps"])
    assert any("implement what the message names" in step for step in got["steps"])


def test_an_option_value_that_does_not_parse_is_the_setting(records):
    got = action(records, "Not deserializable to dict")
    assert got["actor"] == "setting" and "command-line option" in got["basis"]


def test_a_message_saying_to_update_a_package_is_the_environment(records):
    got = action(records, "Widgets are written one by one")
    assert got["actor"] == "environment"
    assert got["remedy"].startswith("Update fastkern to a build")


def test_an_assert_on_the_weights_a_model_loads_is_the_checkpoint(records):
    assert action(records, "bad input_amax")["actor"] == "model"
    assert action(records, "x must be two-dimensional")["actor"] == "internal"  # (forward: the code's own tensors)


def test_a_part_that_already_stopped_points_to_the_error_before_it(records):
    got = action(records, "Publisher is closed")
    assert got["actor"] == "internal"
    assert "already stopped" in got["says"] and "likely a bug" not in got["says"]
    assert any("first error before this one" in step for step in got["steps"])


def test_a_registers_check_on_its_arguments_is_the_caller(records):
    got = action(records, "class_name is required when registering")
    assert got["actor"] == "caller" and "`Registry.register_engine`" in got["says"]


def test_a_package_the_code_finds_missing_or_too_old_is_the_environment(records):
    assert action(records, "Fastkern is not available")["actor"] == "environment"
    assert action(records, "The installed Fastkern profiler")["actor"] == "environment"
    assert action(records, "Fusion disabled: fastkern is missing")["actor"] == "environment"


def test_an_assert_whose_message_names_the_setting_its_guard_reads_is_that_setting(records):
    got = action(records, "{attr} conflicts with the worker_extension_cls")
    assert got["actor"] == "setting" and "`parallel_config.worker_extension_cls`" in got["says"]


def test_a_file_whose_name_ends_in_config_is_no_configuration_check(records):
    assert action(records, "No valid config for kernel")["actor"] != "setting"


def test_a_media_decoders_check_is_not_the_models(records):
    assert action(records, "max_width and max_height must be set together")["actor"] != "model"


def test_a_log_of_any_exception_caught_points_to_that_exception(records):
    got = action(records, "Error in chat completion stream generator.")
    assert got["actor"] == "internal" and "exception it caught" in got["says"]
    assert "the server is fine" not in got["says"] and "likely a bug" not in got["says"]


def test_a_torch_build_or_a_platforms_own_ops_that_lack_it_are_the_environment(records):
    assert action(records, "xccl is not enabled in this torch build")["actor"] == "environment"
    assert action(records, "get_scheduler_metadata is not implemented for xpu_ops")["actor"] == "environment"
