"""Settings reached through names that stand for a field (#15 item 1): a local alias of a field,
a parameter annotated with a config class, a computed value over fields, a module-level helper
called with a field; never a field of a class no user sets."""

from __future__ import annotations

import pytest
from helpers import meaning_records

CONFIG = """
from dataclasses import dataclass


@dataclass
class ParallelConfig:
    tensor_parallel_size: int = 1
    decode_context_parallel_size: int = 1

    def _verify(self):
        tp = self.tensor_parallel_size
        dcp = self.decode_context_parallel_size
        if tp % dcp != 0:
            raise ValueError(f"tp_size={tp} must be divisible by dcp_size={dcp}")


@dataclass
class ModelConfig:
    dtype: str = "auto"
    quantization: str | None = None


@dataclass
class TopConfig:
    model_config: ModelConfig
    parallel_config: ParallelConfig

    def _check_precision(self):
        model_config = self.model_config
        if model_config.quantization is None:
            return
        if model_config.dtype == "float32":
            raise ValueError("quantized models run in half precision")

    @staticmethod
    def _check_quant(model_config: ModelConfig, supported: list):
        if model_config.dtype not in supported:
            raise ValueError(f"{model_config.dtype} is not supported for this quantization")
"""

ARGS = """
from .config import ModelConfig, ParallelConfig


def get_kwargs(cls):
    return {}


def add_cli_args(parser):
    parallel_kwargs = get_kwargs(ParallelConfig)
    parser.add_argument("--tensor-parallel-size", "-tp", **parallel_kwargs["tensor_parallel_size"])
    parser.add_argument("--decode-context-parallel-size", "-dcp", **parallel_kwargs["decode_context_parallel_size"])
    model_kwargs = get_kwargs(ModelConfig)
    parser.add_argument("--dtype", **model_kwargs["dtype"])
    parser.add_argument("--quantization", "-q", **model_kwargs["quantization"])
"""

SAMPLING = """
from dataclasses import dataclass


def _verify_count(value: int, name: str) -> None:
    if value < 1:
        raise ValueError(f"{name} must be at least 1, got {value}")


def _verify_seed(seed):
    if seed < 0:
        raise ValueError(f"seed must not be negative, got {seed}")


@dataclass
class SamplingParams:
    n: int = 1
    seed: int = 0
    json: str | None = None
    regex: str | None = None

    def __post_init__(self):
        _verify_count(self.n, "n")
        self.checked: bool = _verify_seed(seed=self.seed)
        count = sum([self.json is not None, self.regex is not None])
        if count > 1:
            raise ValueError("only one kind of constraint at a time")


@dataclass
class BeamParams:
    beam_width: int = 1

    def check(self):
        _verify_count(self.beam_width, "beam_width")
"""

INTERNAL = """
from dataclasses import dataclass


@dataclass
class BatchMetadata:  # a dataclass no option sets and no user-facing class holds
    query_lens: list

    def check(self):
        lens = self.query_lens
        if not lens:
            raise ValueError("a batch has queries")
"""


@pytest.fixture(scope="module")
def dataset(crawl_once) -> dict[str, dict]:
    records = meaning_records(
        crawl_once, {"pkg/__init__.py": "", "pkg/config.py": CONFIG, "pkg/arg_utils.py": ARGS, "pkg/sampling.py": SAMPLING, "pkg/internal.py": INTERNAL}
    )
    return {r["location"]["qualname"] + ":" + r["message"]["text"].split(" ")[0]: r["meaning"] for r in records}


def names(meaning: dict) -> list[tuple[str, str]]:
    return [(k["kind"], k["name"]) for k in meaning["knobs"]]


@pytest.mark.slow
def test_local_aliases_of_fields(dataset):
    m = dataset["ParallelConfig._verify:tp_size={tp}"]
    assert names(m) == [("cli_flag", "--tensor-parallel-size"), ("cli_flag", "--decode-context-parallel-size")]
    # (an expression over several names is quoted as written)
    assert m["trigger"] == "Raised in `ParallelConfig._verify`, when `tp % dcp` is not 0."


def test_an_alias_of_a_nested_config_reaches_its_fields(dataset):
    m = dataset["TopConfig._check_precision:quantized"]
    assert names(m) == [("cli_flag", "--dtype"), ("cli_flag", "--quantization")]
    assert m["trigger"] == ("Raised in `TopConfig._check_precision`, when `--quantization` is not None and `--dtype` is `'float32'`.")


def test_a_parameter_annotated_with_a_config_class(dataset):
    m = dataset["TopConfig._check_quant:{model_config.dtype}"]
    assert names(m) == [("cli_flag", "--dtype")]
    assert m["trigger"].endswith("when `--dtype` is not one of `supported`.")


def test_a_helper_called_with_one_field_names_it(dataset):
    m = dataset["_verify_seed:seed"]
    assert names(m) == [("request_param", "seed")]
    assert m["trigger"] == "Raised in `_verify_seed`, when `seed` is less than 0."


def test_a_helper_called_with_several_fields_reaches_each_and_names_none(dataset):
    m = dataset["_verify_count:{name}"]
    assert names(m) == [("request_param", "n"), ("request_param", "beam_width")]
    assert m["trigger"] == "Raised in `_verify_count`, when `value` is less than 1."


def test_a_value_computed_from_fields_reaches_each(dataset):
    m = dataset["SamplingParams.__post_init__:only"]
    assert names(m) == [("request_param", "json"), ("request_param", "regex")]
    assert "`count` is greater than 1" in m["trigger"]


def test_a_dataclass_no_user_sets_has_no_setting(dataset):
    assert dataset["BatchMetadata.check:a"]["knobs"] == []
