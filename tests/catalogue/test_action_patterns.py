"""Who acts, the wrong-claim patterns of the blind reviews (#32 item 1, round 41), each a general
rule: a fixture upstream whose code is written here, crawled through the real CLI, and read back
as its records' ``meaning.action`` (and ``meaning.fix``).

- a precondition is the way in, not what fails: a platform test around a check of a tensor, a
  platform accessor naming a tensor's expected dtype;
- only the check's own condition names the request field (a field of an outer guard selects the
  case; a string compared with is a value, not a field);
- in a tool parser, what the check reads came from the model's text, not the request;
- a parallel size is named as the one the check tests (``dcp_world_size``);
- an environment variable's truth test is no "leave it unset" (its default may be on);
- an assert on a config's value whose message says what it cannot be is the setting;
- an assert on a field of the checkpoint's configuration in a model's code (or a local the code
  shows holding one) is the model;
- a kernel entry this build did not compile is the environment;
- an HTTP error of a server the project runs for its own processes is no request of the user's;
- ``lora_config is None`` is the feature not enabled;
- a message that says to select another ``snake_case`` value names the setting;
- an op wrapper's operand layout check is internal, whatever the operand is called;
- a route that reads the server's own state (``request.app.state``) is no request field;
- a log for a caught exception promises no traceback;
- "Passing X to f() is deprecated" is the caller's code, not a setting.

Round 42 (the blind seeds 53-54):

- a negated platform test beside the condition, under a message naming no device, is an exemption,
  not the environment;
- a bare ``TimeoutError`` after a poll with a timeout is a peer that did not answer, not the machine;
- a native system call that failed (``mmap``, ``errno``) is the operating system, not a kernel's operand;
- a message that says to request less is the request, not a setting;
- a setting is shown as its option where one sets it (a config read, an option's dest the message
  names, the option that enables a feature's config);
- an attribute the model's config computes (a property: ``model_config.use_mla``) is the model;
- a field of an object the code fills in is shown as what the check reads, not as a setting;
- a presence assert in a weight loader narrows the code's own value: no checkpoint's; a check of
  the ``loaded_weight`` a layer's loader is given is the checkpoint's, in any file;
- a GPU generation a message supports or requires (RDNA3, gfx950) or "isn't supported on CPU" is the hardware, not the
  model ("architecture" there is the chip's).
"""

from __future__ import annotations

import pytest
from helpers import MEANING_TOML, meaning_records

ENVS = """
import os

environment_variables = {
    "WIDGETS_SPAWN": lambda: bool(int(os.getenv("WIDGETS_SPAWN", "1"))),
}
"""

SAMPLING = """
from pydantic import BaseModel


class ResponseFormat(BaseModel):
    type: str = "text"


class StructuredOutputs(BaseModel):
    json_object: bool | None = None
    regex: str | None = None


class ChatRequest(BaseModel):
    stream: bool = False
    structured_outputs: StructuredOutputs | None = None
    response_format: ResponseFormat | None = None
"""

SERVING = """
from pkg.sampling import ChatRequest


class Serving:
    async def adjust(self, request: ChatRequest):
        if request.structured_outputs is not None:
            return request
        if request.response_format is not None and request.response_format.type != "text":
            if request.response_format.type == "json_object":
                return request
            raise ValueError(f"only `text` or `json_object` is accepted, got {request.response_format.type}")
        return request

    async def stream_chunks(self, request: ChatRequest, chunk):
        if request.stream:
            num_choices = len(chunk.choices)
            if num_choices > 1:
                raise ValueError(f"expects at most one choice per chunk (got {num_choices})")
"""

PARSER = """
def compute_delta(new_call, withheld_suffix):
    new_call_args = new_call.function.arguments
    if withheld_suffix and not new_call_args.endswith(withheld_suffix):
        raise ValueError(f"tool call arguments {new_call_args!r} do not end with {withheld_suffix!r}")
"""

RUNNER = """
from pkg import envs
from pkg.platforms import current_platform


def get_compilation_config():
    return None


def silu_quant(y_s):
    if not (current_platform.is_cuda() and current_platform.has_device_capability(80)):
        assert y_s.dtype == "float32", "the fallback does not support these scales"


def paged_decode(value_cache):
    assert value_cache.dtype in ["uint8", current_platform.fp8_dtype()]


class Attention:
    def __init__(self, impl):
        self.impl = impl

    def forward(self, q):
        assert self.impl.dcp_world_size == 1


class Executor:
    def start(self):
        assert not envs.WIDGETS_SPAWN, "for a deterministic run, please set WIDGETS_SPAWN=0"


class CustomOp:
    name = "rms_norm"

    @classmethod
    def enabled(cls):
        compilation_config = get_compilation_config()
        custom_ops = compilation_config.custom_ops
        enabled = f"+{cls.name}" in custom_ops
        disabled = f"-{cls.name}" in custom_ops
        assert not (enabled and disabled), f"Cannot enable and disable {cls.name}"


class WorkerLoRAManager:
    def __init__(self, vllm_config):
        lora_config = vllm_config.lora_config
        if lora_config is None:
            raise ValueError("LoRA config must be set for the worker manager")


class MetadataBuilder:
    def check_override(self, backend):
        if backend == "flydsl":
            raise ValueError("this builder makes its own chunks, which the flydsl backend does not use. Select a different prefill_backend for this model.")
"""

PLATFORMS = """
class Platform:
    def is_cuda(self):
        return True

    def has_device_capability(self, n):
        return True

    def fp8_dtype(self):
        return "float8"


current_platform = Platform()
"""

MODEL = """
class GPTJForCausalLM:
    def __init__(self, config):
        assert not config.tie_word_embeddings
        self.config = config


def load_weight_patches(patches, params):
    sparse = all(patch.indices is not None for patch in patches)
    for patch in patches:
        if sparse:
            assert patch.indices is not None
        assert params[patch.name].shape == patch.values.shape


class KimiDecoderLayer:
    def __init__(self, config):
        mla_use_nope = config.mla_use_nope
        assert mla_use_nope, "this MLA is NoPE-only"


class RopeLayer:
    def __init__(self, config, layer_id):
        rope: float = config.rope_theta
        rope_scaling = config.rope_scaling
        rope_scaling = config.rope_scaling_v2
        assert rope and rope_scaling, "this rope is scaled-only"
        assert rope and layer_id, "this layer wants a rope"
"""

#: a kernel entry built only for some GPU generations (the fixture's native tree)
NATIVE_CU = r"""
#include <torch/all.h>

void scaled_fp4_quant(torch::Tensor& out) {
#if defined(ENABLE_NVFP4_SM100) && ENABLE_NVFP4_SM100
  return scaled_fp4_quant_sm100(out);
#endif
  TORCH_CHECK_NOT_IMPLEMENTED(false, "No compiled nvfp4 quantization kernel");
}

void* map_shared(int fd, size_t size) {
  void* ptr = mmap(nullptr, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  if (ptr == MAP_FAILED) {
    TORCH_CHECK(false, "mmap in SHMManager failed. errno: " + std::to_string(errno));
  }
  return ptr;
}

void gather(torch::Tensor& counter) {
  TORCH_CHECK(counter.numel() == 2, "completion counter must be a two-element tensor");
}
"""

NATIVE_TOML = """
[upstreams.widgets]
url = "https://github.com/acme/widgets"
include = ["pkg/**/*.py"]
kinds = ["raise", "assert", "log", "response", "native"]
native = ["csrc/**"]
"""

OPS = """
class SkinnyGemm:
    def validate(self, a, weight, a_shape, weight_shape):
        if a.shape != a_shape or weight.shape != weight_shape:
            raise ValueError(f"expected input {a_shape} and weight {weight_shape}, got {tuple(a.shape)} and {tuple(weight.shape)}")
"""

METADATA_SERVER = """
from fastapi import HTTPException


class PagesMetadataServer:
    def initialize_rank(self, rank, role, num_pages):
        if role == "worker" and num_pages > 0:
            return {"ok": True}
        raise HTTPException(status_code=400, detail="Invalid initialization parameters")
"""

ROUTER = """
from fastapi import HTTPException, Request


async def rerank(request: Request):
    handler = request.app.state.serving_scores
    if handler is None:
        raise ValueError("The model does not support the Rerank API")
    return handler
"""

CAUGHT = """
import logging

logger = logging.getLogger(__name__)


def total_memory(probe):
    try:
        return probe()
    except Exception as e:
        logger.debug("probe failed: %s", e)
        logger.warning("Failed to get total memory, falling back to the default.")
        return 0
"""

ENGINE = """
import logging

logger = logging.getLogger(__name__)


class CoreRequest:
    pass


class Engine:
    def add_request(self, request):
        if isinstance(request, CoreRequest):
            logger.warning("Passing CoreRequest to Engine.generate() is deprecated. You should instead pass the output of render().")
"""

LLM = """
from pkg.platforms import current_platform


class LLM:
    def __init__(self, **kwargs):
        dp_size = int(kwargs.get("data_parallel_size", 1))
        if dp_size > 1 and not current_platform.is_tpu():
            raise ValueError(f"LLM(data_parallel_size={dp_size}) is not supported for single-process usage. Please use the multi-process example.")
"""

QUEUE = """
class MessageQueue:
    @staticmethod
    def recv(socket, timeout):
        timeout_ms = None if timeout is None else int(timeout * 1000)
        if not socket.poll(timeout=timeout_ms):
            raise TimeoutError
        return socket.recv()
"""

TRUNCATE = """
def check_truncation(value, max_model_len):
    if value > max_model_len:
        raise ValueError(f"truncate_prompt_tokens={value} cannot be greater than max_model_len={max_model_len}. Please request a smaller truncation size.")
"""

CONFIG = """
from dataclasses import dataclass


def get_kwargs(cls):
    return {}


@dataclass
class ParallelConfig:
    enable_eplb: bool = False


@dataclass
class ModelConfig:
    model: str = "m"

    @property
    def use_mla(self):
        return self.model.startswith("deepseek")


@dataclass
class VllmConfig:
    parallel_config: ParallelConfig | None = None
    model_config: ModelConfig | None = None
"""

ARGS = """
from pkg.config import ModelConfig, ParallelConfig, get_kwargs


def add_cli_args(parser):
    parallel_kwargs = get_kwargs(ParallelConfig)
    model_kwargs = get_kwargs(ModelConfig)
    parser.add_argument("--enable-eplb", **parallel_kwargs["enable_eplb"])
    parser.add_argument("--model", **model_kwargs["model"])
    parser.add_argument("--enable-lora", action="store_true")
    parser.add_argument("--prefill-backend", dest="prefill_backend")
"""

LOADER = """
class IpcLoader:
    def __init__(self, vllm_config):
        self.parallel_config = vllm_config.parallel_config
        self.model_config = vllm_config.model_config

    def load(self):
        if self.parallel_config.enable_eplb:
            raise ValueError("The IPC weight cache loader does not support EPLB.")

    def register(self, mixed):
        if mixed:
            assert self.model_config.use_mla, "Mixed-device KV registration is only supported for MLA models."
"""

XFER = """
import logging
from dataclasses import dataclass

logger = logging.getLogger(__name__)


@dataclass
class ConsumerXfer:
    mm_hash: str
    handle: int = 0

    def poll(self, data):
        try:
            return data.check(self.handle)
        except Exception:
            logger.exception("check_xfer_state failed for mm_hash=%s", self.mm_hash)
            return None
"""

OCTAVE = """
def kernel_tier(arch):
    if arch not in ("gfx1100", "gfx942"):
        raise NotImplementedError("OCTAVE supports RDNA3 and CDNA3 only; see the architecture contract in the design notes")


class GatedAttention:
    def forward_cpu(self, hidden_states):
        assert not hasattr(self, "in_proj_qkv"), "lora isn't supported on CPU."
        return hidden_states
"""

LINEAR = """
class ColumnLinear:
    def weight_loader(self, param, loaded_weight):
        assert param.shape == loaded_weight.shape
        param.copy_(loaded_weight)
"""

FILES = {
    "pkg/octave.py": OCTAVE,
    "pkg/layers/__init__.py": "",
    "pkg/layers/linear.py": LINEAR,
    "pkg/config.py": CONFIG,
    "pkg/arg_utils.py": ARGS,
    "pkg/loader.py": LOADER,
    "pkg/xfer.py": XFER,
    "pkg/llm.py": LLM,
    "pkg/queue.py": QUEUE,
    "pkg/truncate.py": TRUNCATE,
    "pkg/engine.py": ENGINE,
    "pkg/__init__.py": "",
    "pkg/envs.py": ENVS,
    "pkg/sampling.py": SAMPLING,
    "pkg/entrypoints/__init__.py": "",
    "pkg/entrypoints/openai/__init__.py": "",
    "pkg/entrypoints/openai/serving.py": SERVING,
    "pkg/entrypoints/pooling/__init__.py": "",
    "pkg/entrypoints/pooling/api_router.py": ROUTER,
    "pkg/tool_parsers/__init__.py": "",
    "pkg/tool_parsers/utils.py": PARSER,
    "pkg/platforms.py": PLATFORMS,
    "pkg/runner.py": RUNNER,
    "pkg/models/__init__.py": "",
    "pkg/models/gpt_j.py": MODEL,
    "pkg/models/ops/__init__.py": "",
    "pkg/models/ops/skinny_gemm.py": OPS,
    "pkg/distributed/__init__.py": "",
    "pkg/distributed/metadata_server.py": METADATA_SERVER,
    "pkg/memory.py": CAUGHT,
}


@pytest.fixture(scope="module")
def records(crawl_once) -> list[dict]:
    return meaning_records(crawl_once, FILES)


def record(records: list[dict], start: str) -> dict:
    """The one record whose message (or, with none, ``kind qualname``) starts so."""
    (got,) = [r for r in records if (r["message"]["text"] or f"{r['kind']} {r['location']['qualname']}").startswith(start)]
    return got


def action(records: list[dict], start: str) -> dict:
    return record(records, start)["meaning"]["action"]


def claims(records: list[dict], start: str, actor: str, shown: str, absent: str, where: str = "says") -> dict:
    """The action of the record, asserted to name ``actor``, to show ``shown`` in its ``where``
    and not to say ``absent``."""
    got = action(records, start)
    assert got["actor"] == actor and shown in got[where] and absent not in got["says"], got
    return got


def test_a_platform_test_around_a_tensor_check_is_the_way_in_not_the_cause(records):
    for start in ("the fallback does not support these scales", "assert paged_decode"):
        got = action(records, start)
        assert got["actor"] == "internal", (start, got)
        assert "environment" not in got["says"].lower()


def test_only_the_checks_own_condition_names_the_request_field(records):
    got = claims(records, "only `text` or `json_object`", "request", "`response_format", "structured_outputs")
    assert "json_object`)" not in got["says"]
    got = action(records, "expects at most one choice per chunk")
    assert got["actor"] == "request" and "`chunk.choices`" not in got["says"] and "stream" not in got["says"], got


def test_a_tool_parsers_check_reads_the_models_output_not_the_request(records):
    got = action(records, "tool call arguments")
    assert got["actor"] == "model" and "What the model generated" in got["says"], got
    assert "request" not in got["says"].lower()


def test_the_parallel_size_named_is_the_one_the_check_tests(records):
    claims(records, "assert Attention.forward", "setting", "the decode context parallel size you set", "tensor, pipeline or data")


def test_an_environment_variables_truth_is_no_call_to_leave_it_unset(records):
    found = record(records, "for a deterministic run")
    assert not (found["meaning"]["fix"] or "").startswith("Leave"), found["meaning"]["fix"]
    got = found["meaning"]["action"]
    assert got["remedy"] == "Please set WIDGETS_SPAWN=0." and not any("unset" in step for step in got["steps"]), got


def test_an_assert_on_a_configs_value_that_says_what_it_cannot_be_is_the_setting(records):
    got = action(records, "Cannot enable and disable")
    assert got["actor"] == "setting" and "`compilation_config.custom_ops`" in got["says"], got


def test_an_assert_on_the_checkpoints_configuration_in_a_models_code_is_the_model(records):
    claims(records, "assert GPTJForCausalLM.__init__", "model", "`config.tie_word_embeddings`", "likely a bug")


def test_an_assert_on_a_local_the_code_shows_holding_a_checkpoint_field_is_the_model(records):
    claims(records, "this MLA is NoPE-only", "model", "`config.mla_use_nope`", "likely a bug")


def test_the_locals_of_an_assert_each_held_by_the_first_line_assigning_one_a_checkpoint_field(records):
    # (an annotated local; a local whose name another's starts with; the first of two assignments)
    got = claims(records, "this rope is scaled-only", "model", "`config.rope_theta`", "likely a bug")
    assert "`config.rope_scaling`" in got["says"] and "rope_scaling_v2" not in got["says"], got
    # (a local no line assigns a field of the checkpoint's: the assert is no checkpoint's)
    assert "assert on the checkpoint" not in action(records, "this layer wants a rope")["says"]


def test_a_kernel_this_build_did_not_compile_is_the_environment_its_operands_internal(crawl_once):
    import json

    from helpers import jsonl_bytes

    out = crawl_once({"pkg/__init__.py": "", "csrc/quant.cu": NATIVE_CU}, "--upstream", "widgets", config=NATIVE_TOML)
    got = {r["message"]["text"]: r["meaning"]["action"] for r in map(json.loads, jsonl_bytes(out / "acme" / "widgets").splitlines())}
    (built,) = [a for text, a in got.items() if "No compiled nvfp4" in text]
    (operand,) = [a for text, a in got.items() if "completion counter" in text]
    assert built["actor"] == "environment" and operand["actor"] == "internal", got


def test_a_deprecated_way_to_call_the_library_is_the_callers_code(records):
    got = claims(records, "Passing CoreRequest to Engine.generate()", "caller", "Your code", "A setting of yours")
    assert got["remedy"] == "You should instead pass the output of render()."


def test_an_http_error_of_a_server_the_project_runs_for_itself_is_no_request_of_the_users(records):
    claims(records, "Invalid initialization parameters", "internal", "`PagesMetadataServer`", "The request you sent", where="basis")


def test_a_feature_config_that_is_none_is_the_feature_not_enabled(records):
    got = action(records, "LoRA config must be set")
    assert got["actor"] == "setting" and "`lora_config`" in got["says"] and "adapter" not in got["says"], got
    assert any(step.startswith("Enable the feature `lora_config` configures") for step in got["steps"])


def test_a_message_that_says_to_select_another_value_names_the_setting(records):
    got = action(records, "this builder makes its own chunks")
    assert got["actor"] == "setting" and "`--prefill-backend`" in got["says"], got
    assert got["remedy"] == "Select a different prefill_backend (`--prefill-backend`) for this model."


def test_an_op_wrappers_operand_layout_check_is_internal_whatever_the_operand_is_called(records):
    got = action(records, "expected input")
    assert got["actor"] == "internal" and "`weight.shape`" in got["basis"], got


def test_a_route_reading_the_servers_own_state_is_no_request_field(records):
    got = action(records, "The model does not support the Rerank API")
    assert got["actor"] == "internal" and "`request.app.state" in got["basis"], got
    assert not any("Send the request again" in step for step in got["steps"])


def test_a_log_for_a_caught_exception_promises_no_traceback(records):
    got = action(records, "Failed to get total memory")
    assert got["actor"] == "internal" and "exception it caught" in got["says"], got
    assert "printed with it" not in got["says"] and not any("traceback)" in step for step in got["steps"])


def test_a_negated_platform_test_beside_the_condition_is_an_exemption_not_the_environment(records):
    got = action(records, "LLM(data_parallel_size=")
    assert got["actor"] == "setting" and "environment" not in got["says"].lower(), got
    assert not any("install or upgrade" in step for step in got["steps"]), got


def test_a_timeout_after_a_poll_is_a_peer_that_did_not_answer_not_the_machine(records):
    got = action(records, "raise MessageQueue.recv")
    assert got["actor"] == "internal" and "did not answer" in got["says"], got
    assert "Your environment" not in got["says"] and not any("install" in step for step in got["steps"]), got


def test_a_system_call_that_failed_is_the_operating_system_not_a_kernels_operand(crawl_once):
    import json

    from helpers import jsonl_bytes

    out = crawl_once({"pkg/__init__.py": "", "csrc/quant.cu": NATIVE_CU}, "--upstream", "widgets", config=NATIVE_TOML)
    got = {r["message"]["text"]: r["meaning"]["action"] for r in map(json.loads, jsonl_bytes(out / "acme" / "widgets").splitlines())}
    (mapped,) = [a for text, a in got.items() if text.startswith("mmap in SHMManager")]
    assert mapped["actor"] == "environment" and "operating system" in mapped["says"], mapped
    assert any("/dev/shm" in step for step in mapped["steps"]) and "likely a bug" not in mapped["says"], mapped


def test_a_message_that_says_to_request_less_is_the_request(records):
    got = action(records, "truncate_prompt_tokens=")
    assert got["actor"] == "request" and got["remedy"] == "Please request a smaller truncation size.", got


def test_a_setting_is_shown_as_its_option_where_one_sets_it(records):
    got = action(records, "The IPC weight cache loader does not support EPLB")
    assert got["actor"] == "setting" and "`--enable-eplb`" in got["says"] and "parallel_config.enable_eplb`)" not in got["says"], got
    assert any("`--enable-eplb`" in step for step in got["steps"]), got
    got = action(records, "LoRA config must be set")
    assert "`--enable-lora`" in got["says"] and any("`--enable-lora`" in step for step in got["steps"]), got


def test_an_attribute_the_models_config_computes_is_the_model_not_a_setting(records):
    got = action(records, "Mixed-device KV registration")
    assert got["actor"] == "model" and "A setting of yours" not in got["says"], got


def test_a_field_the_code_fills_in_is_no_setting_on_the_page(records, crawl_once):
    from click.testing import CliRunner

    from crawler.cli import main

    found = record(records, "check_xfer_state failed")
    assert any(k["name"] == "mm_hash" and k["kind"] == "config_field" for k in found["meaning"]["knobs"]), found["meaning"]["knobs"]
    out = crawl_once(FILES, "--upstream", "widgets", config=MEANING_TOML)
    shown = CliRunner().invoke(main, ["show", found["id"], "--data", str(out), "--no-pager", "--color", "never"], catch_exceptions=False)
    assert shown.exit_code == 0, shown.output
    assert "mm_hash" in shown.output and "(config field)" not in shown.output and "no option sets it" in shown.output, shown.output


def test_a_presence_assert_in_a_weight_loader_is_the_codes_own_not_the_checkpoints(records):
    asserts = [r for r in records if r["location"]["qualname"] == "load_weight_patches" and r["kind"] == "assert"]
    by_line = sorted(asserts, key=lambda r: r["location"]["line"])
    assert [r["meaning"]["action"]["actor"] for r in by_line] == ["internal", "model"], [r["meaning"]["action"] for r in by_line]


def test_a_check_of_the_loaded_weight_in_any_layers_loader_is_the_checkpoint(records):
    got = action(records, "assert ColumnLinear.weight_loader")
    assert got["actor"] == "model" and "likely a bug" not in got["says"] and "`loaded_weight.shape`" in got["basis"], got


def test_a_gpu_generation_or_a_platform_named_unsupported_is_the_hardware_not_the_model(records):
    for start in ("OCTAVE supports RDNA3", "lora isn't supported on CPU"):
        got = action(records, start)
        assert got["actor"] == "environment" and "model" not in got["says"].lower(), (start, got)
