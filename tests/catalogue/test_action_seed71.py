"""Who acts, the wrong claims and open pages of round 46's blind seed 71 (s46-judge2, #32) as rules:
a fixture upstream whose code is written here, crawled through the real CLI, read back as its
records' ``meaning.action``; beside each rule a near case it must not take.

- a raise whose whole condition is the draft checkpoint's config (``getattr(draft_hf_config, ...)``)
  is the model's (the draft model), not the ``--spec-method`` that leads there (W17); one that also
  reads ``num_speculative_tokens`` is not that rule;
- a raise testing ``moe.moe_backend`` is ``--moe-backend``'s, not the checkpoint's (W25); a test of
  the experts' count beside it is not that rule;
- a divisibility test in an online quantization method's ``create_weights`` is ``--quantization``'s,
  not "the code for the model architecture you load" (W12); the same test in a checkpoint's
  quantization method is not that rule;
- an assert whose message says the weight shape is unsupported is the model's, not a bug (W39); one
  without those words is not that rule;
- ``raise X(...) from error`` in ``except BaseException as error`` sends the reader to the chained
  exception (O19); one in ``except Exception`` is not that rule;
- a raise testing ``mamba_spec.mamba_type`` is the model's (O16); another test of the spec is not.
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
class KernelConfig:
    moe_backend: str = "auto"


@dataclass
class ModelConfig:
    quantization: str | None = None


def _validate_widget_dspark(draft_model_config, num_speculative_tokens) -> None:
    draft_hf_config = draft_model_config.hf_config
    block_size = getattr(draft_hf_config, "block_size", None)
    if num_speculative_tokens != block_size:
        raise ValueError(f"Widget DSpark requires num_speculative_tokens to match the trained block_size ({block_size}).")
    markov_head_type = getattr(draft_hf_config, "markov_head_type", None)
    if markov_head_type != "vanilla":
        raise ValueError(f"Widget DSpark currently requires markov_head_type='vanilla'; got {markov_head_type!r}.")


@dataclass
class SpeculativeConfig:
    method: str = ""
    num_speculative_tokens: int = 1
    draft_model_config: ModelConfig = field(default_factory=ModelConfig)

    def __post_init__(self) -> None:
        if self.method == "dspark":
            _validate_widget_dspark(self.draft_model_config, self.num_speculative_tokens)
"""

ARGS = """
from pkg.config import KernelConfig, ModelConfig, SpeculativeConfig, get_kwargs


def add_cli_args(parser):
    kernel_kwargs = get_kwargs(KernelConfig)
    model_kwargs = get_kwargs(ModelConfig)
    speculative_kwargs = get_kwargs(SpeculativeConfig)
    parser.add_argument("--moe-backend", **kernel_kwargs["moe_backend"])
    parser.add_argument("--quantization", **model_kwargs["quantization"])
    parser.add_argument("--spec-method", **speculative_kwargs["method"])
    parser.add_argument("--speculative-config", dest="speculative_config", default=None)
"""

MOE = """
WIDGET_EP_BACKENDS = ("flashinfer_moe_ep",)


class WidgetMxfp4MoEMethod:
    def __init__(self, moe) -> None:
        if moe.moe_backend in WIDGET_EP_BACKENDS:
            raise ValueError(f"moe_backend={moe.moe_backend!r} is not supported for Widget MXFP4 MoE checkpoints")
        if moe.num_experts % 8 != 0:
            raise ValueError(f"Widget MXFP4 MoE checkpoints need a multiple of 8 experts, got {moe.num_experts}")
"""

ONLINE = """
WIDGET_BLOCK = 32


class WidgetFp8OnlineLinearMethod:
    def create_weights(self, layer, input_size_per_partition: int, params_dtype) -> None:
        if input_size_per_partition % WIDGET_BLOCK != 0:
            raise ValueError(f"Widget FP8 requires input_size_per_partition ({input_size_per_partition}) to be divisible by {WIDGET_BLOCK}.")
"""

CHECKPOINT_QUANT = """
WIDGET_BLOCK = 32


class WidgetCkptLinearMethod:
    def create_weights(self, layer, input_size_per_partition: int, params_dtype) -> None:
        if input_size_per_partition % WIDGET_BLOCK != 0:
            raise ValueError(f"Widget checkpoint FP8 requires input_size_per_partition ({input_size_per_partition}) to be divisible by {WIDGET_BLOCK}.")
"""

KERNEL = """
class WidgetXpuBlockKernel:
    def process_weights_after_loading(self, layer) -> None:
        N, K = layer.weight.shape
        block_k = self.block_k
        assert K % block_k == 0, f"Widget XPU FP8 requires K ({K}) to be a multiple of the block size ({block_k}); ragged-K weights are unsupported."
        assert N % block_k == 0, f"Widget XPU FP8 got N ({N}) not a multiple of {block_k}"
"""

STORE = """
class WidgetStoreClient:
    def load_chunk(self, ready) -> None:
        try:
            ready.synchronize()
        except BaseException as error:
            raise RuntimeError("Widget copy completion is unconfirmed; retaining buffers") from error

    def load_other(self, ready) -> None:
        try:
            ready.synchronize()
        except Exception as error:
            raise RuntimeError("Widget other copy is unconfirmed; retaining buffers") from error
"""

CONV = """
def derive_widget_conv_split(mamba_spec) -> None:
    _supported = ("mamba1", "mamba2")
    if mamba_spec.mamba_type not in _supported:
        raise ValueError(f"Widget conv transfer only supports Mamba1 and Mamba2 models, got mamba_type={mamba_spec.mamba_type!r}.")
    if mamba_spec.num_heads is None:
        raise ValueError("Widget conv spec lost its heads")
"""

FILES = {
    "pkg/__init__.py": "",
    "pkg/config.py": CONFIG,
    "pkg/engine/arg_utils.py": ARGS,
    "pkg/model_executor/layers/quantization/widget_moe.py": MOE,
    "pkg/model_executor/layers/quantization/online/widget_fp8.py": ONLINE,
    "pkg/model_executor/layers/quantization/widget_ckpt.py": CHECKPOINT_QUANT,
    "pkg/model_executor/kernels/linear/widget_xpu.py": KERNEL,
    "pkg/distributed/ec_transfer/widget_store.py": STORE,
    "pkg/distributed/kv_transfer/widget_conv.py": CONV,
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
def test_a_value_of_the_draft_checkpoints_config_is_the_models(records):
    got = action_starting(records, "Widget DSpark currently requires markov_head_type")
    assert got["actor"] == "model" and "draft model's own config" in got["basis"], got
    assert "--spec-method" not in got["says"] and "draft model" in got["says"], got
    assert any(s.startswith("Use a draft model (the `model` you give `--speculative-config`") for s in got["steps"]), got


@pytest.mark.slow
def test_a_draft_value_beside_a_setting_is_not_that_rule(records):
    got = action_starting(records, "Widget DSpark requires num_speculative_tokens")
    assert "draft model's own config" not in got["basis"], got


@pytest.mark.slow
def test_a_test_of_the_moe_backend_is_the_options(records):
    got = action_starting(records, "moe_backend=")
    assert got["actor"] == "setting" and "`--moe-backend`" in got["basis"] and "`moe.moe_backend`" in got["basis"], got
    assert "`--moe-backend`" in got["says"], got
    assert any(s.startswith("Start without `--moe-backend` (its default, `auto`, passes this check)") for s in got["steps"]), got


@pytest.mark.slow
def test_the_experts_count_beside_it_is_not_that_rule(records):
    got = action_starting(records, "Widget MXFP4 MoE checkpoints need a multiple of 8 experts")
    assert "--moe-backend" not in got["basis"] and got["actor"] != "setting", got


@pytest.mark.slow
def test_an_online_quantization_methods_size_test_is_the_quantization_option(records):
    got = action_starting(records, "Widget FP8 requires input_size_per_partition")
    assert got["actor"] == "setting" and "`WidgetFp8OnlineLinearMethod`" in got["basis"] and "`--quantization`" in got["basis"], got
    assert "model architecture you load" not in got["says"] and "`--quantization`" in got["says"], got
    assert any("`--quantization`" in s and "--tensor-parallel-size" in s for s in got["steps"]), got


@pytest.mark.slow
def test_a_checkpoint_quantization_methods_size_test_is_not_that_rule(records):
    got = action_starting(records, "Widget checkpoint FP8 requires input_size_per_partition")
    assert "online quantization" not in got["basis"], got


@pytest.mark.slow
def test_an_assert_saying_the_weight_shape_is_unsupported_is_the_models(records):
    got = action_starting(records, "Widget XPU FP8 requires K")
    assert got["actor"] == "model" and "weight shape it tests is unsupported" in got["basis"], got
    assert "likely a bug" not in got["says"] and not any(s.startswith("Report it") for s in got["steps"]), got


@pytest.mark.slow
def test_an_assert_on_a_weight_without_those_words_is_not_that_rule(records):
    got = action_starting(records, "Widget XPU FP8 got N")
    assert "unsupported here" not in got["basis"], got


@pytest.mark.slow
def test_a_raise_from_what_except_baseexception_caught_points_at_the_cause(records):
    got = action_starting(records, "Widget copy completion is unconfirmed")
    assert got["actor"] == "internal" and got["basis"].startswith("it is raised from what its handler caught"), got
    assert "cannot tell" not in got["says"] and "chained as its cause" in got["says"], got
    assert got["steps"][0].startswith("Read the exception Python prints above this one") and len(got["steps"]) == 1, got


@pytest.mark.slow
def test_a_raise_from_what_except_exception_caught_is_not_that_rule(records):
    got = action_starting(records, "Widget other copy is unconfirmed")
    assert not got["basis"].startswith("it is raised from what its handler caught"), got


@pytest.mark.slow
def test_a_test_of_the_models_state_space_layer_type_is_the_models(records):
    got = action_starting(records, "Widget conv transfer only supports")
    assert got["actor"] == "model" and "`mamba_spec.mamba_type`" in got["basis"], got
    assert any("KV connector" in s for s in got["steps"]), got


@pytest.mark.slow
def test_another_test_of_the_spec_is_not_that_rule(records):
    got = action_starting(records, "Widget conv spec lost its heads")
    assert "state-space" not in got["basis"], got
