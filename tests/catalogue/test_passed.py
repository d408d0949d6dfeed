"""Who acts from what the callers pass (#32 items 1 and 4): a check on a plain parameter of its
function is decided by the values every call of that function passes it (``knob_passes``'
``given``, joined over the call graph by ``catalogue.callers.Passed``): a setting, a request's
field, the model's configuration, a constant; a caller's own parameter is followed to its callers;
callers that disagree, a call the graph did not resolve, a function taken as a callback leave it
open. On a fixture upstream whose code is written here, crawled through the real CLI; the
extraction facts on code written here."""

from __future__ import annotations

import ast

import pytest
from helpers import meaning_records

from crawler.extract import knob_passes

CONFIG = """
from dataclasses import dataclass, field


@dataclass
class CacheConfig:
    block_size: int = 16
    cache_dtype: str = "auto"
    layers: dict = field(default_factory=dict, init=False)


@dataclass
class VllmConfig:
    cache_config: CacheConfig = None
"""

ARGS = """
from .config import CacheConfig


def get_kwargs(cls):
    return {}


def add_cli_args(parser):
    kw = get_kwargs(CacheConfig)
    parser.add_argument("--block-size", **kw["block_size"])
    parser.add_argument("--cache-dtype", **kw["cache_dtype"])
"""

CHECKS = """
ALIGNMENTS = (8, 16)


def check_alignment(alignment):
    if alignment not in ALIGNMENTS:
        raise ValueError(f"alignment {alignment} is not one of the kernel's")


def check_blocks(blocks):
    if blocks % 16 != 0:
        raise ValueError(f"{blocks} blocks do not split into pages")


def check_tokens(count, limit=4096):
    if count > limit:
        raise ValueError(f"{count} tokens are more than one step takes")


def check_width(width):
    tiles = width // 64
    if tiles * 64 != width:
        raise ValueError(f"a width of {width} does not fit the tiles")


def check_page(page):
    \"\"\"A page of the pool.\"\"\"
    if page > 128:
        raise ValueError(f"pages of {page} do not fit the pool")


def check_mode(mode):
    supported = ("fast", "exact")
    if mode in supported:
        return mode
    raise ValueError(f"no such mode {mode}")


def check_hook(value):
    if value < 0:
        raise ValueError(f"the hook got {value}")


def check_twice(value):
    if value > 3:
        raise ValueError(f"{value} retries are too many")


def check_frames(frames):
    if len(frames) > 8:
        raise ValueError(f"a batch of {len(frames)} is past the bound")


def check_layers(layers):
    if "attn" not in layers:
        raise ValueError("no attention layer was registered")


def check_role(role):
    if role not in (0, 1):
        raise ValueError(f"no such role {role}")
"""

ENGINE = """
from .checks import (
    check_alignment,
    check_blocks,
    check_frames,
    check_hook,
    check_layers,
    check_mode,
    check_page,
    check_tokens,
    check_twice,
    check_width,
)


def pages_for(size):
    check_page(size)
    return size


class Engine:
    def __init__(self, vllm_config, hf_config):
        self.vllm_config = vllm_config
        self.hf_config = hf_config
        self.retries = 2

    def start(self):
        check_alignment(16)
        check_alignment(8)
        check_blocks(self.vllm_config.cache_config.block_size)
        check_width(self.hf_config.hidden_size)
        pages_for(self.vllm_config.cache_config.block_size)
        check_mode("fast")
        check_twice(self.retries)

    def serve(self, request):
        check_tokens(request.max_tokens)
        check_mode(request.mode)
        frames = []
        for video in request.videos:
            frames.append(video)
        check_frames(frames)
        check_layers(self.vllm_config.cache_config.layers)

    def hooks(self, registry):
        registry.append(check_hook)
        check_hook(1)
"""

CONNECTORS = """
import importlib

from .checks import check_role


class Connector:
    def __init__(self, config, role):
        check_role(role)
        self.config = config


class Factory:
    @classmethod
    def get_connector_class(cls, name) -> type[Connector]:
        return getattr(importlib.import_module("pkg.connectors"), name)

    @classmethod
    def create_connector(cls, config, name):
        connector_cls = cls.get_connector_class(name)
        return connector_cls(config, 1)
"""

FILES = {
    "pkg/__init__.py": "",
    "pkg/config.py": CONFIG,
    "pkg/arg_utils.py": ARGS,
    "pkg/checks.py": CHECKS,
    "pkg/engine.py": ENGINE,
    "pkg/connectors.py": CONNECTORS,
}


@pytest.fixture(scope="module")
def records(crawl_once) -> list[dict]:
    return meaning_records(crawl_once, FILES)


def action(records: list[dict], start: str) -> dict:
    (got,) = [r["meaning"]["action"] for r in records if r["message"]["text"].startswith(start)]
    return got


def test_a_parameter_every_caller_passes_a_constant_is_internal(records):
    got = action(records, "alignment {alignment} is not")
    assert got["actor"] == "internal" and "every call of `check_alignment`" in got["basis"], got
    assert "cannot tell" not in got["says"] and "likely a bug" in got["says"]


def test_a_parameter_every_caller_passes_a_setting_is_that_setting(records):
    got = action(records, "{blocks} blocks do not split")  # (the settings the meaning joins through callers name it first)
    assert got["actor"] == "setting" and "`--block-size`" in got["says"], got


def test_a_parameter_passed_on_is_followed_to_its_callers(records):
    got = action(records, "pages of {page} do not fit")  # (``pages_for`` passes its own ``size`` on)
    # (the config value the callers pass, shown as the option that sets it; the basis keeps the code)
    assert got["actor"] == "setting" and "`--block-size`" in got["says"] and "`vllm_config.cache_config.block_size`" in got["basis"], got


def test_a_request_field_or_the_models_config_passed_is_the_request_or_the_model(records):
    assert action(records, "{count} tokens are more")["actor"] == "request"
    assert action(records, "a width of {width}")["actor"] == "model"


def test_the_objects_own_state_passed_is_internal(records):
    got = action(records, "{value} retries are too many")  # (``self.retries``: only a constant is assigned)
    assert got["actor"] == "internal" and "cannot tell" not in got["says"], got


def test_callers_that_disagree_or_a_function_taken_as_a_callback_stay_open(records):
    for text in ("no such mode {mode}", "the hook got {value}"):
        got = action(records, text)
        assert "cannot tell" in got["says"], (text, got)


def test_a_local_changed_in_place_or_a_config_field_the_code_fills_is_not_what_it_was_assigned(records):
    # (``frames = []`` then ``frames.append(video)`` holds the request's videos; ``layers`` is ``init=False``)
    for text in ("a batch of {len(frames)}", "no attention layer was registered"):
        got = action(records, text)
        assert "cannot tell" in got["says"], (text, got)


def test_a_class_called_through_a_name_a_factory_returns_is_given_what_its_caller_passes(records):
    got = action(records, "no such role {role}")  # (``connector_cls(config, 1)`` -> ``Connector.__init__`` -> ``check_role(role)``)
    assert got["actor"] == "internal" and "every call of `check_role`" in got["basis"], got


def _given(code: str) -> dict:
    return knob_passes.passes(ast.parse(code), code)


def test_each_argument_is_read_as_where_its_value_comes_from():
    got = _given(
        "def f(self, n, request):\n"
        "    m = n * 2\n"
        "    g(3, m, request.stop, envs.VLLM_X, self.model_config.hf_config.x, key=self.cache_config.block_size)\n"
        "    h(other(), *rest)\n"
    )
    (row,) = got["given"]
    assert row["args"] == ["c", "p:n", "r:request.stop", "s:envs.VLLM_X", "m:self.model_config.hf_config.x"]
    assert row["keywords"] == {"key": "s:self.cache_config.block_size"}
    assert got["called"] == {"g": 1, "h": 1, "other": 1}


def test_a_local_assigned_in_a_branch_holds_either_value():
    got = _given("def f(n):\n    x = 1\n    if n:\n        x = n\n    g(x)\n")
    assert got["given"][0]["args"] == ["p:n"]
    got = _given("def f(n):\n    if n:\n        n = 4\n    g(n)\n")
    assert got["given"][0]["args"] == ["p:n"]  # (the parameter as given, or 4)


def test_a_name_taken_without_a_call_and_names_in_annotations():
    got = _given("def f(x: Widget) -> Gadget:\n    pool.submit(check, x)\n")
    assert "check" in got["taken"] and "Widget" not in got["taken"] and "Gadget" not in got["taken"]
