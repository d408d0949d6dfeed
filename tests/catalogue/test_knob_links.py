"""Settings a check reaches from outside its class's own methods (#15 item 1): a function pydantic
runs on a field (``Annotated[T, BeforeValidator(f)]``, a ``field_validator`` calling it, an enum's
metaclass ``__getitem__``), the test around a private function's call, a list built by guarded
appends, a method helper called with a field; and fields the class sets itself, which no user
does."""

from __future__ import annotations

import pytest
from helpers import meaning_records

CONFIG = """
from dataclasses import dataclass, field
from enum import Enum, EnumMeta
from typing import Annotated, Any

from pydantic import BeforeValidator, GetPydanticSchema, field_validator


def _coerce_key(v: Any) -> str:
    if not isinstance(v, str):
        raise TypeError(f"expected str, got {type(v).__name__}")
    return v


def _strip_name(v):
    if v != v.strip():
        raise ValueError("a name has no surrounding blanks")
    return v


KeyField = Annotated[str | None, GetPydanticSchema(lambda _s, _h: plain(_coerce_key))]


class _BackendMeta(EnumMeta):
    def __getitem__(cls, name):
        try:
            return super().__getitem__(name)
        except KeyError:
            raise ValueError(f"Unknown backend: {name!r}") from None


class Backend(Enum, metaclass=_BackendMeta):
    TRITON = "triton"


def _check_backend_name(name):
    if not name:
        raise ValueError("a backend has a name")


@dataclass
class QuantSpec:
    weight: KeyField = None
    label: Annotated[str, BeforeValidator(_strip_name)] = ""


@dataclass
class MambaConfig:
    backend: Backend = Backend.TRITON

    @field_validator("backend", mode="before")
    @classmethod
    def _parse_backend(cls, value):
        _check_backend_name(value)
        if isinstance(value, str):
            return Backend[value.upper()]
        return value


@dataclass
class ParallelConfig:
    pipeline_parallel_size: int = 1
    enable_expert_parallel: bool = False
    world_size: int = field(default=1, init=False)

    def __post_init__(self):
        if self.world_size < 1:
            raise ValueError("the world has a rank")

    @property
    def use_ubatching(self) -> bool:
        return False


@dataclass
class ModelConfig:
    max_model_len: int = 2048
    num_experts: int = 0

    def verify_with_parallel_config(self, parallel_config: ParallelConfig):
        if parallel_config.enable_expert_parallel:
            self._verify_with_expert_parallelism()
        self._always_checked()

    def _verify_with_expert_parallelism(self):
        if not self.is_moe:
            raise ValueError("expert parallelism needs experts in the model")

    def _always_checked(self):
        if not self.is_moe:
            raise ValueError("a model never checked under a setting")

    def _cached(self):
        key = (self.max_model_len,)
        if key in CACHE:
            return CACHE[key]
        return self._probe()

    def _probe(self):
        if self.is_moe:
            raise ValueError("probed under a cache lookup")

    @property
    def is_moe(self):
        return self.num_experts > 0


@dataclass
class SpecConfig:
    max_model_len: int | None = None
    draft_model_config: ModelConfig | None = None

    def __post_init__(self):
        self.draft_model_config.max_model_len = SpecConfig._override_len(
            self.max_model_len, self.draft_model_config.max_model_len)

    @staticmethod
    def _override_len(spec_len, draft_len):
        if spec_len > draft_len:
            raise ValueError(f"{spec_len=} cannot be larger than {draft_len=}")
        return spec_len


@dataclass
class TopConfig:
    parallel_config: ParallelConfig
    model_config: ModelConfig
    quant_spec: QuantSpec
    mamba_config: MambaConfig
    spec_config: SpecConfig

    def _unsupported_features(self) -> list[str]:
        unsupported: list[str] = []
        if self.parallel_config.pipeline_parallel_size > 1:
            unsupported.append("pipeline parallelism")
        if self.parallel_config.use_ubatching:
            unsupported.append("micro-batching")
        return unsupported

    def _validate_runner(self):
        unsupported = self._unsupported_features()
        if unsupported:
            raise ValueError(f"the runner does not support: {', '.join(unsupported)}")

    def check_depth(self):
        if self.parallel_config.pipeline_parallel_size > 4:
            raise ValueError("too deep a pipeline")

    def check_public(self):
        if self.parallel_config.pipeline_parallel_size > 2:
            check_anything()


def check_anything():
    raise ValueError("a public function anyone may call")
"""

ARGS = """
from dataclasses import dataclass

from .config import MambaConfig, ModelConfig, ParallelConfig, QuantSpec, SpecConfig


def get_kwargs(cls):
    return {}


@dataclass
class EngineArgs:
    pipeline_parallel_size: int = 1

    def _check_feature_supported(self):
        if self.pipeline_parallel_size > 1:
            _raise_unsupported_error(feature_name="Pipeline parallelism")


def _raise_unsupported_error(feature_name: str):
    raise NotImplementedError(f"{feature_name} is not supported.")


def add_cli_args(parser):
    parallel_kwargs = get_kwargs(ParallelConfig)
    parser.add_argument("--pipeline-parallel-size", "-pp", **parallel_kwargs["pipeline_parallel_size"])
    parser.add_argument("--enable-expert-parallel", **parallel_kwargs["enable_expert_parallel"])
    parser.add_argument("--world-size", **parallel_kwargs["world_size"])
    model_kwargs = get_kwargs(ModelConfig)
    parser.add_argument("--max-model-len", **model_kwargs["max_model_len"])
    quant_kwargs = get_kwargs(QuantSpec)
    parser.add_argument("--quant-weight", **quant_kwargs["weight"])
    parser.add_argument("--quant-label", **quant_kwargs["label"])
    mamba_kwargs = get_kwargs(MambaConfig)
    parser.add_argument("--mamba-backend", **mamba_kwargs["backend"])
    spec_kwargs = get_kwargs(SpecConfig)
    parser.add_argument("--spec-max-model-len", **spec_kwargs["max_model_len"])
"""


@pytest.fixture(scope="module")
def dataset(crawl_once) -> dict[str, dict]:
    records = meaning_records(crawl_once, {"pkg/__init__.py": "", "pkg/config.py": CONFIG, "pkg/arg_utils.py": ARGS})
    return {r["location"]["qualname"] + ":" + r["message"]["text"].split(" ")[0]: r["meaning"] for r in records}


def names(meaning: dict) -> list[tuple[str, str]]:
    return [(k["kind"], k["name"]) for k in meaning["knobs"]]


@pytest.mark.slow
def test_a_function_an_annotated_field_runs_validates_that_field(dataset):
    # through an alias whose GetPydanticSchema lambda calls it, and a BeforeValidator written in place
    assert names(dataset["_coerce_key:expected"]) == [("cli_flag", "--quant-weight")]
    m = dataset["_strip_name:a"]
    assert names(m) == [("cli_flag", "--quant-label")]
    assert "`--quant-label`" in m["trigger"]  # (its value parameter stands for the field)


def test_a_field_validator_reaches_a_helper_and_an_enum_metaclass_getitem(dataset):
    assert names(dataset["_check_backend_name:a"]) == [("cli_flag", "--mamba-backend")]
    assert names(dataset["_BackendMeta.__getitem__:Unknown"]) == [("cli_flag", "--mamba-backend")]


def test_the_test_around_a_private_call_is_its_setting(dataset):
    assert names(dataset["ModelConfig._verify_with_expert_parallelism:expert"]) == [("cli_flag", "--enable-expert-parallel")]
    assert names(dataset["_raise_unsupported_error:{feature_name}"]) == [("cli_flag", "--pipeline-parallel-size")]


def test_no_setting_from_an_unguarded_call_an_early_return_or_a_public_function(dataset):
    assert dataset["ModelConfig._always_checked:a"]["knobs"] == []
    assert dataset["ModelConfig._probe:probed"]["knobs"] == []  # (after `if key in CACHE: return`)
    assert dataset["check_anything:a"]["knobs"] == []


def test_a_list_built_by_guarded_appends_names_their_settings(dataset):
    # (`self.parallel_config.use_ubatching` is a property: the nested config as a whole is no setting)
    assert names(dataset["TopConfig._validate_runner:the"]) == [("cli_flag", "--pipeline-parallel-size")]


def test_a_method_helper_called_with_a_field_reaches_it_but_not_a_nested_configs_field(dataset):
    m = dataset["SpecConfig._override_len:{spec_len=}"]
    assert names(m) == [("cli_flag", "--spec-max-model-len")]


def test_a_field_the_class_sets_itself_is_no_setting(dataset):
    assert dataset["ParallelConfig.__post_init__:the"]["knobs"] == []


def test_a_nested_configs_field_read_through_its_holder_is_that_field(dataset):
    m = dataset["TopConfig.check_depth:too"]
    assert names(m) == [("cli_flag", "--pipeline-parallel-size")]
    assert m["trigger"] == "Raised in `TopConfig.check_depth`, when `--pipeline-parallel-size` is greater than 4."
