"""Settings a function's callers pass it (#32 item 3): a kernel's check on its parameter is a check
on the config field or environment variable its caller, in another file, passes for it; never a
field of a class no user sets, and nothing where no caller passes one."""

from __future__ import annotations

import pytest
from helpers import meaning_records

CONFIG = """
from dataclasses import dataclass


@dataclass
class CacheConfig:
    cache_dtype: str = "auto"
    block_size: int = 16


@dataclass
class LayerStateConfig:
    width: int = 0
"""

ARGS = """
from .config import CacheConfig


def get_kwargs(cls):
    return {}


def add_cli_args(parser):
    cache_kwargs = get_kwargs(CacheConfig)
    parser.add_argument("--kv-cache-dtype", **cache_kwargs["cache_dtype"])
"""

ENVS = """
import os

environment_variables = {
    "WIDGETS_USE_FAST_PATH": lambda: os.getenv("WIDGETS_USE_FAST_PATH", "0") == "1",
}
"""

KERNEL = """
def prefill(q, kv_cache_dtype, fast):
    if kv_cache_dtype not in ("auto", "fp8"):
        raise ValueError(f"Unsupported FP8 dtype: {kv_cache_dtype}")
    if fast and q is None:
        raise ValueError("the fast path needs a query")


def resize(width):
    if width < 1:
        raise ValueError(f"width must be positive, got {width}")


def lonely(size):
    if size < 1:
        raise ValueError(f"size must be positive, got {size}")
"""

BACKEND = """
from pkg import envs
from pkg.ops.kernel import prefill, resize


class Backend:
    def __init__(self, cache_config, layer_state_config):
        self.cache_config = cache_config
        self.layer_state_config = layer_state_config

    def forward(self, q):
        dtype = self.cache_config.cache_dtype
        prefill(q, dtype, envs.WIDGETS_USE_FAST_PATH)
        resize(self.layer_state_config.width)
"""


@pytest.fixture(scope="module")
def knobs(crawl_once) -> dict[str, list[dict]]:
    found = meaning_records(
        crawl_once,
        {
            "pkg/__init__.py": "",
            "pkg/config.py": CONFIG,
            "pkg/args.py": ARGS,
            "pkg/envs.py": ENVS,
            "pkg/ops/__init__.py": "",
            "pkg/ops/kernel.py": KERNEL,
            "pkg/backend.py": BACKEND,
        },
    )
    return {r["message"]["text"]: r for r in found}


def test_a_parameter_its_caller_passes_a_config_field_for_is_that_setting(knobs):
    record = knobs["Unsupported FP8 dtype: {kv_cache_dtype}"]
    assert [(k["kind"], k["name"]) for k in record["meaning"]["knobs"]] == [("cli_flag", "--kv-cache-dtype")]
    assert "`--kv-cache-dtype`" in record["meaning"]["trigger"]
    assert record["meaning"]["action"]["actor"] == "setting"


def test_a_parameter_its_caller_passes_an_environment_variable_for_is_that_variable(knobs):
    record = knobs["the fast path needs a query"]
    assert ("env_var", "WIDGETS_USE_FAST_PATH") in [(k["kind"], k["name"]) for k in record["meaning"]["knobs"]]


def test_a_field_of_a_class_no_user_sets_or_no_caller_at_all_is_no_setting(knobs):
    assert knobs["width must be positive, got {width}"]["meaning"]["knobs"] == []
    assert knobs["size must be positive, got {size}"]["meaning"]["knobs"] == []
