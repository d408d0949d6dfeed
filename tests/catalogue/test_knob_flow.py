"""Settings whose value reaches a check a step further than a name for a field (#15 item 1): a
local holding an entry of a dict setting (through ``.get``, a comprehension, a conversion), a
module-level helper's helper given the field, a getter of a nested config that returns its
fields; and a getter in one branch never hiding the field an earlier assignment named."""

from __future__ import annotations

import ast

import pytest
from helpers import meaning_records

from crawler.catalogue.meaning import build_tables
from crawler.extract import knobs

CONFIG = """
from dataclasses import dataclass, field


def hisparse_pool(transfer_config: "TransferConfig | None") -> float | None:
    if transfer_config is None:
        return None
    connectors = transfer_config.extra_config.get("connectors", [])
    entries = [c.get("extra", {}) for c in connectors if c.get("name") == "HiSparse"]
    if not entries:
        return None
    pool = entries[0].get("pool_gib")
    pool = float(pool)
    if pool <= 0:
        raise ValueError("HiSparse pool_gib must be positive")
    return pool


_TABLE = {"half": "float16", "float16": "float16", "float32": "float32"}


def _check_dtype(model_type: str, dtype: str):
    if model_type == "gemma2" and dtype == "float16":
        raise ValueError(f"{model_type} does not support float16")


def _resolve_dtype(model_type: str, dtype: str) -> str:
    if dtype not in _TABLE:
        raise ValueError(f"Unknown dtype: {dtype!r}")
    resolved = _TABLE[dtype]
    _check_dtype(model_type, resolved)
    return resolved


@dataclass
class TransferConfig:
    connector: str | None = None
    extra_config: dict = field(default_factory=dict)


@dataclass
class MultiModalConfig:
    pruning_method: str = "none"
    pruning_rate: float | None = None

    def get_pruning_spec(self):
        if self.pruning_rate:
            return (self.pruning_method, float(self.pruning_rate))
        return None


@dataclass
class DraftModel:
    path: str = ""


@dataclass
class TopConfig:
    spec_config: "SpecConfig | None" = None


@dataclass
class SpecConfig:
    method: str = "ngram"
    draft_config: "DraftModel | None" = None  # built below: state
    target_config: "DraftModel | None" = None  # given by whoever builds this
    target_model: "ModelConfig | None" = None  # the engine passes in the one --dtype etc. set

    def __post_init__(self):
        self.draft_config = DraftModel()

    def check(self):
        if self.draft_config is None:
            raise ValueError("draft config is not built yet")
        if self.target_config is None:
            raise ValueError("target config is not given")
        if self.target_model is None:
            raise ValueError("target model is not given")
        if self.target_model.dtype == "float64":
            raise ValueError("target dtype float64 is not supported")


@dataclass
class StepContext:
    slots: "torch.Tensor"
    mode: str = "none"

    def __post_init__(self):
        if self.mode not in ("none", "full"):
            raise ValueError(f"invalid step mode {self.mode}")


def apply_overrides(obj, changes, where):
    for name, value in changes.items():
        if not hasattr(obj, name):
            raise ValueError(f"{where}.{name} is not a valid field")
        if isinstance(value, dict) and not isinstance(getattr(obj, name), dict):
            raise ValueError(f"override of {where}.{name} must not be a mapping")
    return obj


def load_pairs(obj, pairs):
    for name, value in pairs:
        if getattr(obj, name, None) is None:
            raise AttributeError(f"no slot for {name}")


@dataclass
class ModelConfig:
    model_type: str = "llama"
    dtype: str = "auto"
    max_logprobs: int = 20
    multimodal_config: MultiModalConfig | None = None

    def __post_init__(self):
        self.dtype = _resolve_dtype(self.model_type, self.dtype)
        if self.dtype == "float16":
            self._verify_half()
        spec = self.multimodal_config.get_pruning_spec()
        if spec is not None and spec[0] not in ("a", "b"):
            raise ValueError(f"pruning method {spec[0]} is not supported")

    def need_mm(self):
        if self.multimodal_config is None:
            raise ValueError("this model is not multimodal")

    def _verify_half(self):
        if self.model_type == "gemma2":
            raise ValueError("gemma2 is unstable in half precision")

    def _twice(self):
        if self.max_logprobs > 100:
            raise ValueError("too many logprobs")

    def check_twice(self):
        if self.dtype == "float32":
            self._twice()
        elif self.dtype == "float16":
            self._twice()

    def get_vocab_size(self) -> int:
        return 32000

    def check_logprobs(self, requested: int):
        limit = self.max_logprobs
        if limit == -1:
            limit = self.get_vocab_size()
        if requested > limit:
            raise ValueError(f"requested {requested} logprobs, more than {limit}")
"""

#: flag -> (config class, field): the options ``get_kwargs`` makes of config fields
FLAGS = {
    "--dtype": ("ModelConfig", "dtype"),
    "--model-type": ("ModelConfig", "model_type"),
    "--max-logprobs": ("ModelConfig", "max_logprobs"),
    "--pruning-method": ("MultiModalConfig", "pruning_method"),
    "--pruning-rate": ("MultiModalConfig", "pruning_rate"),
    "--spec-method": ("SpecConfig", "method"),
    "--speculative-config": ("TopConfig", "spec_config"),
}
ARGS = (
    "\n".join(
        [
            "from .config import ModelConfig, MultiModalConfig, SpecConfig, TopConfig, TransferConfig",
            "def get_kwargs(cls):",
            "    return {}",
            "def add_cli_args(parser):",
            *(f"    kw = get_kwargs({cls})\n    parser.add_argument({flag!r}, **kw[{name!r}])" for flag, (cls, name) in FLAGS.items()),
            "    parser.add_argument('--transfer-config', type=TransferConfig)",
            "class EngineArgs:",
            "    transfer_config: TransferConfig | None = None",
        ]
    )
    + "\n"
)

#: A web route's request body (no request_models glob names this file) and the validator its
#: handler reaches in another file.
API = """
from pydantic import BaseModel

router = object()


class StartRequest(BaseModel):
    profile_prefix: str | None = None


@router.post("/start")
async def start(raw, body: StartRequest | None = None):
    return body


def validate_prefix(prefix):
    if not prefix.isascii():
        raise ValueError("profile_prefix must be ASCII")
    if len(prefix) > 128:
        raise ValueError("the given profile_prefix is too long")


class Session:
    def check(self, prefix):
        if prefix is None:
            raise ValueError("profile_prefix of this session is gone")
"""


#: Converters of options' values: one an option gives directly, one a table of keywords gives
#: (which option: known only at run time), one a factory makes.
CLI = """
import json


def parse_type(convert):
    def _parse_type(val):
        try:
            return convert(val)
        except ValueError as e:
            raise TypeError(f"Value {val} cannot be converted") from e
    return _parse_type


def bucket(val):
    if "x" not in val:
        raise ValueError(f"a bucket looks like 8x8, not {val}")
    return val


def table_kwargs(names):
    kwargs = {name: {} for name in names}
    for name in names:
        kwargs[name]["type"] = parse_type(json.loads)
    return kwargs


def add_args(parser):
    parser.add_argument("--bucket", type=bucket)
"""


@pytest.fixture(scope="module")
def dataset(crawl_once) -> dict[str, dict]:
    records = meaning_records(crawl_once, {"pkg/__init__.py": "", "pkg/config.py": CONFIG, "pkg/arg_utils.py": ARGS, "pkg/api.py": API, "pkg/cli.py": CLI})
    return {r["message"]["text"].split(" ")[0] + " " + r["message"]["text"].split(" ")[1]: r["meaning"] for r in records}


def names(meaning: dict) -> list[tuple[str, str]]:
    return [(k["kind"], k["name"]) for k in meaning["knobs"]]


@pytest.mark.slow
def test_an_entry_of_a_dict_setting_through_locals(dataset):
    m = dataset["HiSparse pool_gib"]
    assert ("config_field", "extra_config") in names(m)
    # (``pool`` holds part of the setting, not the setting: it is not renamed)
    assert m["trigger"].endswith("and `pool` is at most 0.")


def test_a_helper_given_a_field_by_another_helper(dataset):
    m = dataset["{model_type} does"]
    assert names(m) == [("cli_flag", "--model-type"), ("cli_flag", "--dtype")]
    assert "`--model-type` is `'gemma2'`" in m["trigger"]


def test_a_getter_of_a_nested_config_reaches_the_fields_it_returns(dataset):
    m = dataset["pruning method"]
    assert names(m) == [("cli_flag", "--pruning-method"), ("cli_flag", "--pruning-rate")]


def test_a_getter_in_one_branch_keeps_the_field_named(dataset):
    m = dataset["requested {requested}"]
    assert names(m) == [("cli_flag", "--max-logprobs")]
    assert m["trigger"].endswith("when `requested` is greater than `--max-logprobs`.")


def test_a_nested_config_the_class_builds_itself_is_state_not_a_setting(dataset):
    assert dataset["draft config"]["knobs"] == []
    assert dataset["draft config"]["trigger"].endswith("when `self.draft_config` is None.")
    # (one it is given, and never assigns, is still the setting that holds it)
    assert names(dataset["target config"]) == [("config_field", "target_config")]
    assert dataset["target config"]["knobs"][0]["flags"] == ["--speculative-config"]


def test_a_nested_config_whose_class_has_options_of_its_own_is_passed_in_not_set(dataset):
    # (``--speculative-config`` sets ``SpecConfig``, but ``ModelConfig``'s own options set the
    # model: the holder is given that config, not one the user writes in the holder's option)
    assert dataset["target model"]["knobs"] == []
    # its fields read through it are still the options that set them
    assert names(dataset["target dtype"]) == [("cli_flag", "--dtype")]


def test_a_class_holding_an_array_is_state_not_settings(dataset):
    assert dataset["invalid step"]["knobs"] == []
    assert dataset["invalid step"]["trigger"].endswith("when `self.mode` is not one of `('none', 'full')`.")


def test_a_check_on_the_attribute_a_mappings_key_names_says_it_is_known_only_at_run_time(dataset):
    for message in ("{where}.{name} is", "override of"):
        m = dataset[message]
        assert m["knobs"] == []
        assert m["trigger"].startswith(
            "Raised in `apply_overrides` for the attribute of `obj` that a key of `changes` names (which attribute is known only at run time), when "
        ), m
    # a list of pairs is no mapping whose keys are names: nothing of the kind is said
    assert dataset["no slot"]["trigger"].startswith("Raised in `load_pairs`, when ")


def test_a_nested_config_no_option_sets_is_a_group_not_a_setting(dataset):
    assert dataset["this model"]["knobs"] == []


def test_a_check_whose_one_caller_calls_it_under_a_test_says_the_test(dataset):
    assert dataset["gemma2 is"]["trigger"] == (
        "Raised in `ModelConfig._verify_half`, when `--model-type` is `'gemma2'`; `ModelConfig.__post_init__` calls it only when `--dtype` is `'float16'`."
    )
    # (two calls, or one under no test: the caller's tests are not said)
    assert "calls it" not in dataset["too many"]["trigger"]
    assert "calls it" not in dataset["{model_type} does"]["trigger"]


def test_a_module_level_validator_whose_message_is_about_a_route_body_field(dataset):
    assert names(dataset["profile_prefix must"]) == [("request_param", "profile_prefix")]
    # (named elsewhere in the message, or by a method: not taken for the request's field)
    assert dataset["the given"]["knobs"] == []
    assert dataset["profile_prefix of"]["knobs"] == []


def test_a_converter_of_an_options_value(dataset):
    assert names(dataset["a bucket"]) == [("cli_flag", "--bucket")]
    assert dataset["a bucket"]["trigger"].startswith("Raised while `--bucket` is parsed, when ")
    # given through a table of keywords: no knob, and the sentence says why
    m = dataset["Value {val}"]
    assert m["knobs"] == []
    assert m["trigger"].startswith(
        "Raised while parsing a command-line option whose value `parse_type.<locals>._parse_type` converts (which option is known only at run time)"
    )


def test_empty_declarations_hold_every_key_a_file_declares_and_the_join_reads():
    tree = ast.parse(CONFIG)
    declared = knobs.declarations(tree, CONFIG, "pkg.config", False)
    assert declared.keys() == knobs.empty().keys()
    assert declared["forwards"] and declared["returns"]
    # a file whose reading failed still joins (every table the join fills is there, empty)
    tables = build_tables([{"path": "x.py", "status": "ok", "declarations": knobs.empty(), "sites": []}], knobs_settings())
    assert tables.classes == {}


def knobs_settings():
    from crawler.catalogue.meaning import MeaningSettings

    return MeaningSettings()
