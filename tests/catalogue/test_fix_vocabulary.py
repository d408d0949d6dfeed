"""Fix directions that were wrong or evasive in vLLM v0.33.0, each held on a fixture repository:
an option spelled with some of its field's keywords replaced, a message that asks for another
setting, a warning that reports a switch, a log under an early return, a log that reports what
the code set, a field of a class no user sets, "give an option a class"."""

from __future__ import annotations

import pytest
from helpers import meaning_records

from crawler.catalogue.phrasing import fix_for

ENVS = """
import os

environment_variables = {
    "ACME_FAST": lambda: os.getenv("ACME_FAST", "0") == "1",
    "ACME_DUAL": lambda: os.getenv("ACME_DUAL", "0") == "1",
}
"""

CONFIG = """
import logging
from dataclasses import dataclass

from . import envs

logger = logging.getLogger(__name__)


def get_kwargs(cls):
    return {}


@dataclass
class Key:
    dtype: str = "fp8"


@dataclass
class CacheConfig:
    enable_prefix_caching: bool = False
    cache_mode: str = "none"
    quant: str | None = None
    backend: str = "a"
    sharded: bool = False
    old_knob: bool = False
    turbo: bool = False
    weight: Key | None = None

    def __post_init__(self):
        if self.cache_mode != "none":
            raise ValueError("Replay does not support prefix caching; use --no-prefix-caching")
        if self.quant is not None:
            raise ValueError("The x backend supports unquantized models only. Use a different --backend for them.")
        if self.backend != "b":
            raise ValueError("The y feature requires --backend b")
        if self.sharded:
            logger.warning("sharded is not compatible with ACME_DUAL, set ACME_DUAL=0")
        if self.turbo:
            logger.warning("turbo is enabled but the y kernel lacks it, falling back to the plain one")
        if self.old_knob:
            logger.warning("old_knob is deprecated and will be removed.")
        if not self.enable_prefix_caching:
            if self.cache_mode != "none":
                self.cache_mode = "none"
                logger.warning("Cache mode is set to 'none' without prefix caching")
        if not isinstance(self.weight, Key):
            raise TypeError("resolve() must supply a weight key")
        if not isinstance(self.backend, str):
            raise TypeError("backend is a name")


def load_tuning(path):
    if envs.ACME_FAST:
        return None
    logger.warning("Using the default tuning: no file at %s", path)
    return {}


@dataclass
class Shard:
    tp: int = 1
    width: int = 1

    def __post_init__(self):
        if self.tp < 1:
            raise ValueError(f"TP {self.tp}")
        if self.width < 1:
            raise ValueError(f"a shard's width must be at least 1, got {self.width}")
"""

ARGS = """
from .config import CacheConfig, get_kwargs


def add_cli_args(parser):
    cache_kwargs = get_kwargs(CacheConfig)
    parser.add_argument("--enable-prefix-caching", **{**cache_kwargs["enable_prefix_caching"], "default": None})
    parser.add_argument("--no-prefix-caching", action="store_true")
    parser.add_argument("--cache-mode", **cache_kwargs["cache_mode"])
    parser.add_argument("--quant", **cache_kwargs["quant"])
    parser.add_argument("--backend", **cache_kwargs["backend"])
    parser.add_argument("--sharded", **cache_kwargs["sharded"])
    parser.add_argument("--old-knob", **cache_kwargs["old_knob"])
    parser.add_argument("--turbo", **cache_kwargs["turbo"])
    parser.add_argument("--weight", **cache_kwargs["weight"])
"""


@pytest.fixture(scope="module")
def fixes(crawl_once) -> dict[str, dict]:
    records = meaning_records(crawl_once, {"pkg/__init__.py": "", "pkg/envs.py": ENVS, "pkg/config.py": CONFIG, "pkg/arg_utils.py": ARGS})
    return {r["message"]["text"].split(" ")[0] + ":" + r["message"]["text"].split(" ")[-1]: r["meaning"] for r in records}


@pytest.mark.slow
def test_an_option_given_its_fields_keywords_with_some_replaced_is_that_fields_option(fixes):
    # (``**{**kw["f"], "default": None}``: vLLM's --enable-prefix-caching, --mamba-cache-mode)
    m = fixes["Cache:caching"]
    assert ("cli_flag", "--enable-prefix-caching") in [(k["kind"], k["name"]) for k in m["knobs"]]


def test_a_message_that_asks_for_another_setting_gets_no_fix_of_its_own(fixes):
    assert fixes["Replay:--no-prefix-caching"]["fix"] is None  # (was "Set `--cache-mode` to `'none'`.")
    assert fixes["The:them."]["fix"] is None  # (was "Leave `--quant` unset.")
    assert fixes["sharded:ACME_DUAL=0"]["fix"] is None  # (was "Leave `--sharded` unset.")
    # a message that asks for the very setting keeps its fix
    assert fixes["The:b"]["fix"] == "Set `--backend` to `'b'`."


def test_a_warning_that_reports_a_switch_is_no_call_to_turn_it_off_unless_it_retires_it(fixes):
    assert fixes["turbo:one"]["fix"] is None  # (was "Leave `--turbo` unset.": it drops the user's choice)
    assert fixes["old_knob:removed."]["fix"] == "Leave `--old-knob` unset."


def test_a_log_under_an_early_return_gets_no_fix_from_it(fixes):
    m = fixes["Using:{path}"]
    assert [k["name"] for k in m["knobs"]] == ["ACME_FAST"]  # (the knob stays: the trigger says it)
    assert m["fix"] is None  # (was "Set `ACME_FAST`.")


def test_a_log_that_reports_what_the_code_set_gets_no_fix(fixes):
    assert fixes["Cache:caching"]["fix"] is None  # (was "Set `--cache-mode` to `'none'`.")


def test_an_option_is_never_asked_for_an_object_of_the_repositorys_own_class(fixes):
    assert fixes["resolve():key"]["fix"] is None  # (was "Give `--weight` a `Key`.")
    assert fixes["backend:name"]["fix"] == "Give `--backend` a `str`."


def test_a_field_of_a_class_no_user_sets_gets_a_fix_only_where_its_message_explains_it(fixes):
    assert fixes["TP:{self.tp}"]["fix"] is None  # (was "Set `tp` to at least 1.")
    assert fixes["a:{self.width}"]["fix"] == "Set `width` to at least 1."


@pytest.mark.parametrize(
    "message, fix",
    [
        # an upper-case word the code reads no variable of is a value, not a setting asked for
        ("HiSparse does not support mode=FULL; use FULL_AND_PIECEWISE", "set `mode` to something other than `FULL`"),
        ("HiSparse does not support mode=FULL; set ACME_FAST=1", None),
        ("mode FULL is replaced: set ACME_FAST=1 instead", "set `mode` to something other than `FULL`"),
        # a consequence ("may require") asks nothing
        ("mode FULL may require lowering --memory", "set `mode` to something other than `FULL`"),
    ],
)
def test_what_a_message_asks_for(message, fix):
    assert fix_for("self.mode == FULL", {"self.mode": "`mode`"}, set(), (), message, [], known=lambda name: name == "ACME_FAST") == fix


def test_a_message_of_any_length_is_read_in_bounded_time():
    """A crawled message is hostile: one of many verbs without a clause end was read once per
    verb to its end (minutes for 60,000 words)."""
    import time

    started = time.monotonic()
    for message in ["mode " + "use the --x " * 20000, "mode " + "use the word " * 20000, "{" * 3000 + "}" * 3000]:
        fix_for("self.mode > 3", {"self.mode": "`mode`"}, set(), (), message, [], "raise")
    assert time.monotonic() - started < 30  # a hang guard (it took minutes), not a speed check
