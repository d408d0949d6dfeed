"""The derived meaning (#15 parts 1-3): the setting behind each error, the trigger in words, a fix
direction; read from a fixture repository crawled through the real CLI, with an upstream whose
conventions (``knob_kwargs``, ``request_models``) come from errcat.toml."""

from __future__ import annotations

import ast
import json
import re
from pathlib import Path

import pytest
from helpers import MEANING_TOML, crawl_meaning_upstream, jsonl_bytes, meaning_records
from hypothesis import given
from hypothesis import strategies as st

from crawler.catalogue.meaning import named_at
from crawler.catalogue.phrasing import conditions, fix_for, simplify

CONFIG = """
from dataclasses import dataclass

from pydantic import field_validator


@dataclass
class CacheConfig:
    gpu_memory_utilization: float = 0.9

    def __post_init__(self):
        if self.gpu_memory_utilization > 1.0:
            raise ValueError(f"gpu memory utilization must be at most 1, got {self.gpu_memory_utilization}")


class AttentionConfig:
    backend_per_kind: dict

    @field_validator("backend_per_kind", mode="before")
    @classmethod
    def _check(cls, value):
        if not isinstance(value, dict):
            return value
        valid_kinds = {"full", "sliding"}
        for kind in value:
            if kind not in valid_kinds:
                raise ValueError(f"Unknown kind {kind}; valid kinds are {valid_kinds}")
        return value


@dataclass
class TopConfig:
    attention_config: AttentionConfig
    kv_transfer_config: dict | None = None

    def need_transfer(self):
        if self.kv_transfer_config is None:
            raise ValueError("this mode needs a KV transfer config")
"""

ARGS = """
from .config import CacheConfig, TopConfig


def get_kwargs(cls):
    return {}


def add_cli_args(parser):
    cache_kwargs = get_kwargs(CacheConfig)
    top_kwargs = get_kwargs(TopConfig)
    parser.add_argument("--gpu-memory-utilization", "-gmu", **cache_kwargs["gpu_memory_utilization"])
    parser.add_argument("--attention-config", "-ac", **top_kwargs["attention_config"])
    parser.add_argument("--kv-transfer-config", **top_kwargs["kv_transfer_config"])
"""

CLI = """
import click


@click.command()
@click.argument("")
@click.option("", "--vvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvv")
def hostile(value, vvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvv):
    if value is None or vvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvv is None:
        raise click.BadParameter("nothing given")


@click.command()
@click.option("--port", "-p", type=int)
def serve(port):
    if port < 1024:
        raise click.BadParameter("port too low")
"""

ENVS = """
import os

environment_variables = {
    "ACME_DEBUG": lambda: os.getenv("ACME_DEBUG", "0") == "1",
}
"""

RUN = """
from . import envs

LIMIT = 8
if LIMIT % 8:
    raise ImportError("LIMIT must be a multiple of 8")


def run(jobs):
    if not envs.ACME_DEBUG:
        raise RuntimeError("run needs debugging on")
    if jobs:
        return jobs
    raise RuntimeError("no jobs to run")


def trace(path):
    if envs.ACME_DEBUG:
        try:
            open(path)
        except OSError as e:
            raise RuntimeError(f"cannot open the debug trace {path}: {e}") from e


def size(n):
    if n is not None and n < 0:
        raise ValueError("set `max_len` to a positive number")


def tune(n, out):
    if n > out:
        raise ValueError("lower `gpu_memory_utilization` or `kv_transfer_config`, or pass `--mystery-flag`: `forward` gave `out`")
"""

PROTOCOL = """
class RequestError(ValueError):
    def __init__(self, message, parameter=None):
        super().__init__(message)
        self.parameter = parameter


def check_request(request):
    if request.temperature > 2.0:
        raise RequestError("temperature is too high", parameter="temperature")
"""

SAMPLING = """
from dataclasses import dataclass


@dataclass
class SamplingParams:
    top_k: int = 0

    def _verify_args(self):
        if self.top_k < -1:
            raise ValueError(f"top_k must be -1 or at least 0, got {self.top_k}")
"""

HOSTILE = """
from dataclasses import dataclass


@dataclass
class EvilConfig:
    mode: str = ""

    def __post_init__(self):
        if self.mode == "<script>alert(1)</script>`*":
            raise ValueError("bad mode")
"""

PLAIN = """
from dataclasses import dataclass

from .config import AttentionConfig


@dataclass
class AaaHolder:  # holds an AttentionConfig too, with no option: sorted before TopConfig
    attention: AttentionConfig


class Group:  # annotates its attributes, but they are no settings
    world_size: int

    def broadcast(self, src):
        if src >= self.world_size:
            raise ValueError("Invalid src rank")
        if src == 0:
            raise ValueError("`Phi3Rope` cannot start at rank 0")
"""

FILES = {
    "pkg/__init__.py": "",
    "pkg/config.py": CONFIG,
    "pkg/arg_utils.py": ARGS,
    "pkg/cli.py": CLI,
    "pkg/envs.py": ENVS,
    "pkg/run.py": RUN,
    "pkg/protocol.py": PROTOCOL,
    "pkg/sampling.py": SAMPLING,
    "pkg/evil.py": HOSTILE,
    "pkg/aaa.py": PLAIN,
}


def by_name(records: list[dict]) -> dict[str, dict]:
    return {r["message"]["text"].split(" ")[0] + ":" + r["location"]["qualname"]: r for r in records}


@pytest.fixture(scope="module")
def meaning_out(crawl_once) -> Path:
    """The crawl the module's tests read (the --out directory)."""
    return crawl_once(FILES, "--upstream", "widgets", config=MEANING_TOML)


@pytest.fixture(scope="module")
def dataset(meaning_out) -> dict[str, dict]:
    return by_name([json.loads(line) for line in jsonl_bytes(meaning_out / "acme" / "widgets").splitlines()])


def knobs(record: dict) -> list[tuple]:
    return [(k["kind"], k["name"], k["flags"], k["field"]) for k in record["meaning"]["knobs"]]


@pytest.mark.slow
def test_argparse_flag_through_the_upstreams_kwargs_convention(dataset):
    m = dataset["gpu:CacheConfig.__post_init__"]["meaning"]
    assert knobs(dataset["gpu:CacheConfig.__post_init__"]) == [
        ("cli_flag", "--gpu-memory-utilization", ["--gpu-memory-utilization", "-gmu"], "gpu_memory_utilization")
    ]
    assert m["trigger"] == "Raised while building a `CacheConfig`, when `--gpu-memory-utilization` is greater than 1.0."
    assert m["fix"] == "Set `--gpu-memory-utilization` to at most 1.0."
    assert m["derived"] == "machine"


@pytest.mark.slow
def test_field_validator_of_a_nested_config_early_return_and_loop(dataset):
    record = dataset["Unknown:AttentionConfig._check"]
    assert knobs(record) == [("config_field", "backend_per_kind", ["--attention-config", "-ac"], "backend_per_kind")]
    # the early `if not isinstance(value, dict): return value` is a guard, simplified
    assert record["sites"][0]["facts"]["guards"] == ["not (not isinstance(value, dict))", "kind not in valid_kinds"]
    assert record["meaning"]["trigger"] == (
        "Raised while `--attention-config` is parsed, when `backend_per_kind` of `--attention-config` is a `dict` "
        "and an item of `backend_per_kind` of `--attention-config` is not one of `valid_kinds`."
    )
    assert record["meaning"]["fix"] == ("Set every item of `backend_per_kind` of `--attention-config` to one of the values the message lists.")


def test_is_none_gives_set_the_flag(dataset):
    m = dataset["this:TopConfig.need_transfer"]["meaning"]
    assert m["knobs"][0]["name"] == "--kv-transfer-config"
    assert m["fix"] == "Set `--kv-transfer-config`."


def test_click_option_by_its_parameter(dataset):
    record = dataset["port:serve"]
    assert knobs(record) == [("cli_flag", "--port", ["--port", "-p"], None)]
    assert record["meaning"]["trigger"] == "Raised in `serve`, when `--port` is less than 1024."
    assert record["meaning"]["fix"] == "Set `--port` to at least 1024."


def test_environment_variable_read_through_a_table(dataset):
    record = dataset["run:run"]
    assert knobs(record) == [("env_var", "ACME_DEBUG", [], None)]
    assert record["meaning"]["knobs"][0]["path"] == "pkg/envs.py"
    assert record["meaning"]["fix"] == "Set `ACME_DEBUG`."
    # an early return in the other order: raised when the `if jobs: return` branch is not taken
    assert dataset["no:run"]["meaning"]["trigger"] == "Raised in `run`, when `jobs` is not set."
    assert dataset["no:run"]["meaning"]["fix"] is None  # `jobs` is no setting


def test_an_error_raised_while_handling_another_has_no_fix_from_the_guards_around_it(dataset):
    """vLLM's 'Error serializing structured outputs jsonschema: {e}' (raised in `except Exception`
    around json.dumps) said 'Give `json` a `str`', and 18 such entries 'Leave X unset' or 'Set
    --dry-run': the guard only led to the code whose failure is the cause."""
    m = dataset["cannot:trace"]["meaning"]
    assert [(k["kind"], k["name"]) for k in m["knobs"]] == [("env_var", "ACME_DEBUG")]
    assert m["trigger"] == "Raised in `trace`, when `ACME_DEBUG` is set, while handling `OSError as e`."
    assert m["fix"] is None


def test_request_parameter_from_the_parameter_keyword(dataset):
    m = dataset["temperature:check_request"]["meaning"]
    assert [(k["kind"], k["name"]) for k in m["knobs"]] == [("request_param", "temperature")]
    assert m["trigger"] == "Raised in `check_request`, when `temperature` is greater than 2.0."
    assert m["fix"] == "Set `temperature` to at most 2.0."


def test_request_model_fields_from_the_upstream_config(dataset):
    record = dataset["top_k:SamplingParams._verify_args"]
    assert knobs(record) == [("request_param", "top_k", [], "top_k")]
    assert record["meaning"]["fix"] == "Set `top_k` to at least -1."


def test_a_name_the_message_quotes(dataset):
    """A quoted name is a setting when a class a user sets declares it (that field, with its
    option), or when it is spelled as one (a flag); a quoted name no such class declares is the
    code's own (a function, a parameter), no setting."""
    record = dataset["lower:tune"]
    assert knobs(record) == [
        ("message_name", "--mystery-flag", [], None),
        ("cli_flag", "--gpu-memory-utilization", ["--gpu-memory-utilization", "-gmu"], "gpu_memory_utilization"),
        ("cli_flag", "--kv-transfer-config", ["--kv-transfer-config"], "kv_transfer_config"),
    ]
    record = dataset["set:size"]
    assert knobs(record) == []  # no class declares a max_len
    assert record["meaning"]["trigger"] == "Raised in `size`, when `n` is not None and `n` is less than 0."


def test_every_entry_has_a_trigger_and_pages_label_it_derived(dataset, meaning_out, cli):
    assert all(r["meaning"]["trigger"].startswith("Raised ") for r in dataset.values())
    record = dataset["gpu:CacheConfig.__post_init__"]
    shown = cli("show", record["id"], "--data", meaning_out / "acme" / "widgets")
    assert shown.exit_code == 0, shown.output
    assert "Derived from the code" in shown.output and "Fix direction: Set `--gpu-memory-utilization`" in shown.output


@pytest.mark.parametrize(
    "code, simple",
    [
        ("not (x is not None)", "x is None"),
        ("not (a < b)", "a >= b"),
        ("not not x", "x"),
        ("not (a and b is None)", "not a or b is not None"),
        ("not (k in d or k == 1)", "k not in d and k != 1"),
    ],
)
def test_simplifier(code, simple):
    assert ast.unparse(simplify(ast.parse(code, mode="eval").body)) == simple


@pytest.mark.parametrize(
    "guard, fix",
    [
        ("self.t > 2.0", "set `t` to at most 2.0"),
        ("self.t >= 2", "set `t` to less than 2"),
        ("self.t <= 0", "set `t` to more than 0"),
        ("self.t == 'x'", "set `t` to something other than `'x'`"),
        ("self.t != 'auto'", "set `t` to `'auto'`"),
        ("self.t not in ALLOWED", "set `t` to one of the values the message lists"),
        ("self.t not in OTHER", "set `t` to one of `OTHER`"),
        ("self.t in BANNED", "set `t` to a value not in `BANNED`"),
        ("not (self.t is not None)", "set `t`"),
        ("self.t is not None", "leave `t` unset"),
        ("not isinstance(self.t, int)", "give `t` a `int`"),
        ("not self.t", "set `t`"),
        ("other > 1", None),
    ],
)
def test_fix_direction_per_guard_shape(guard, fix):
    assert fix_for(guard, {"self.t": "`t`"}, {"ALLOWED"}) == fix


def test_conditions_quote_what_does_not_parse_and_keep_backticks_out_of_code():
    said = conditions(["match x: case 1", "f('`')"], {}, [])
    assert said == "`match x: case 1` and `f(''')` is true"


def test_pages_show_the_derived_meaning_escaped(dataset, meaning_out, cli, tmp_path):
    record = dataset["bad:EvilConfig.__post_init__"]
    assert record["meaning"]["trigger"] == ("Raised while building a `EvilConfig`, when `mode` is `'<script>alert(1)</script>'*'`.")
    for fmt in ("html", "markdown"):
        result = cli("render", "--data", meaning_out, "--out", tmp_path / fmt, "--format", fmt)
        assert result.exit_code == 0, result.output
    page = (tmp_path / "html" / "errors" / f"{record['id']}.html").read_text(encoding="utf-8")
    assert '<section id="derived">' in page and "Derived from the code" in page
    assert "<code>&#x27;&lt;script&gt;alert(1)&lt;/script&gt;&#x27;*&#x27;</code>" in page
    assert "<script>alert" not in page
    md = (tmp_path / "markdown" / "errors" / f"{record['id']}.md").read_text(encoding="utf-8")
    assert "## Derived from the code" in md
    assert "- **When it is raised:** Raised while building a `EvilConfig`, when `mode` is" in md


@pytest.mark.slow
def test_a_changed_declaration_elsewhere_reaches_entries_of_unchanged_files(fixture_repo, cli, tmp_path):
    """The join runs after extraction: config.py's result comes from the cache, yet its entry
    follows the flag renamed in arg_utils.py."""
    before = by_name(crawl_meaning_upstream(fixture_repo, cli, tmp_path, FILES))  # v1, into this test's cache
    assert before["gpu:CacheConfig.__post_init__"]["meaning"]["fix"] == "Set `--gpu-memory-utilization` to at most 1.0."
    fixture_repo.commit({"pkg/arg_utils.py": ARGS.replace("--gpu-memory-utilization", "--gpu-mem")}, tag="v2")
    result = cli("crawl", "--repo", fixture_repo.path, "--ref", "v2", "--upstream", "widgets", "--config", tmp_path / "errcat.toml", "--out", tmp_path / "out2")
    assert result.exit_code == 0, result.output
    assert re.search(r"extracting \(\d+ cached\): 1 files", result.output), result.output  # (the changed file alone is read)
    records = [json.loads(x) for x in jsonl_bytes(tmp_path / "out2" / "acme" / "widgets").splitlines()]
    (entry,) = [r for r in records if r["location"]["qualname"] == "CacheConfig.__post_init__"]
    assert entry["meaning"]["fix"] == "Set `--gpu-mem` to at most 1.0."


def test_a_module_level_raise_happens_on_import(dataset):
    assert dataset["LIMIT:<module>"]["meaning"]["trigger"] == "Raised when `pkg.run` is imported, when `LIMIT % 8` is true."


def test_mixed_and_or_keep_their_grouping():
    assert conditions(["a and (b or c)"], {}, []) == "`a` is set and either `b` is set or `c` is set"
    assert conditions(["not (a or b)", "c or d and e"], {}, []) == ("`a` is not set and `b` is not set and either `c` is set or both `d` is set and `e` is set")


def test_spellings_that_name_no_setting_are_not_knobs(dataset):
    record = dataset["nothing:hostile"]
    assert record["meaning"]["knobs"] == [] and record["meaning"]["fix"] is None


def test_attributes_of_a_plain_class_and_class_names_are_no_settings(dataset):
    assert dataset["Invalid:Group.broadcast"]["meaning"]["knobs"] == []
    assert dataset["`Phi3Rope`:Group.broadcast"]["meaning"]["knobs"] == []


_NAME_TEXT = st.text(alphabet="ab_.1 (é℘", max_size=24)


@pytest.mark.slow
@given(name=st.one_of(st.sampled_from(["a", "ab", "a_1", "_", "é", "℘", "a.b", ""]), _NAME_TEXT), text=_NAME_TEXT)
def test_named_at_finds_what_the_pattern_per_name_found(name, text):
    """``named_at`` scans a text once for every name; it finds what a pattern compiled per name
    found (the meanings' knobs depend on it), names that are no plain identifier included."""
    pattern = re.compile(rf"(?<![\w.]){re.escape(name)}(?!\w)((?:\.[A-Za-z_]\w*)*)")
    assert named_at(name, text) == [m.group(1) for m in pattern.finditer(text)]


def test_named_at_reads_each_place_a_name_is():
    # ``tp_max`` is another name (it once stood for ``tp``: ``dp_size = ...data_parallel_size``
    # made ``range(dp_size_to_allocate)`` a check on ``--data-parallel-size``), ``x.tp`` an attribute
    assert named_at("tp", "tp.size > tp_max and x.tp or (tp)") == [".size", ""]


@pytest.mark.parametrize(
    "guard, said",
    [
        ("'EADDRINUSE' in str(e)", "`str(e)` contains `'EADDRINUSE'`"),  # a text looked for in another
        ("'prompt' not in prompt", "`prompt` does not contain `'prompt'`"),  # a key of a mapping
        ("kind in valid_kinds", "`kind` is one of `valid_kinds`"),
        ("mode not in ('none', 'full')", "`mode` is not one of `('none', 'full')`"),
    ],
)
def test_a_text_looked_for_in_another_is_said_to_be_contained(guard, said):
    from crawler.catalogue.phrasing import words

    assert words(ast.parse(guard, mode="eval").body, {}) == said


# -- fixes that would switch a feature off or name the wrong case (the sixth round) ------------

MODES = """
from dataclasses import dataclass


@dataclass
class ModeConfig:
    pipeline_size: int = 1
    fancy: bool = False
    method: str = "a"
    log_path: str | None = None
    legacy_path: str | None = None

    def __post_init__(self):
        if self.fancy and self.pipeline_size > 1:
            raise ValueError("Pipelining is not supported in fancy mode")
        if self.pipeline_size > 8:
            raise ValueError("pipeline_size must be at most 8")
        if self.method == "a":
            pass
        elif self.method == "b":
            pass
        else:
            raise ValueError(f"Unknown method: {self.method}")
        if self.log_path is not None and self.fancy:
            raise ValueError("fancy cannot be used with log_path")
        if self.legacy_path is not None:
            raise ValueError("Old paths are not read any more")
"""


@pytest.fixture(scope="module")
def modes(crawl_once) -> dict[str, dict]:
    records = meaning_records(crawl_once, {"pkg/__init__.py": "", "pkg/modes.py": MODES})
    return {r["message"]["text"].split(" ")[0]: r["meaning"] for r in records}


@pytest.mark.slow
def test_a_fix_that_switches_a_setting_off_is_said_only_where_the_message_names_it(modes):
    """vLLM's "HiSparse does not support pipeline parallelism." under
    ``pipeline_parallel_size > 1`` said "Set `--pipeline-parallel-size` to at most 1." (turn
    pipelining off), and 35 more entries of v0.33.0 told the user to turn off the feature they
    asked for ("Leave `--enable-eplb` unset.", "... something other than `'transformers'`.")
    where the message did not point at that setting."""
    assert modes["Pipelining"]["trigger"].endswith("when `fancy` is set and `pipeline_size` is greater than 1.")
    assert modes["Pipelining"]["fix"] is None
    assert modes["Old"]["fix"] is None  # "Leave `legacy_path` unset": the message does not name it
    # the message names the setting: the error is about it, and switching it off is its fix
    assert modes["fancy"]["fix"] == "Leave `fancy` unset."
    # a bound that is no switch stays
    assert modes["pipeline_size"]["fix"] == "Set `pipeline_size` to at most 8."


def test_the_else_of_a_chain_of_cases_names_no_one_case(modes):
    """vLLM's "Unsupported speculative method: '{self.method}'" in the ``else`` of
    ``elif self.method == "draft_model"`` said "Set `--spec-method` to `'draft_model'`.": only
    the last case the chain tried."""
    assert modes["Unknown"]["trigger"].endswith("when `method` is not `'a'` and `method` is not `'b'`.")
    assert modes["Unknown"]["fix"] is None


T = {"self.t": "`t`", "so.a": "`a`", "so.b": "`b`", "self.mode": "`mode`"}


@pytest.mark.parametrize(
    "guard, earlier, message, fix",
    [
        # switching off: said only where the message names the setting (by its code name or flag)
        ("self.t > 1", [], "Feature X does not support pipelining", None),
        ("self.t > 1", [], "Feature X requires t=1", "set `t` to at most 1"),
        ("self.t > 0", [], "Feature X is not available here", None),
        ("self.t >= 1", [], "Feature X is not available here", None),
        ("self.t is not None", [], "Feature X is not available here", None),
        ("self.t", [], "Cannot specify both `t` and `u`", "leave `t` unset"),
        ("self.t == 'x'", [], "Feature X is not available here", None),
        ("self.t in BANNED", [], "Feature X is not available here", None),
        ("self.t in BANNED", [], "t must not be banned", "set `t` to a value not in `BANNED`"),
        # a value to set, not a switch: said whatever the message
        ("self.t > 2.0", [], "too hot", "set `t` to at most 2.0"),
        ("self.t < 1", [], "too few", "set `t` to at least 1"),
        ("not self.t", [], "Feature X needs it", "set `t`"),
        # the else of a chain of cases over `t`: no one case is the value to set
        ("not (self.t == 'c')", ["not (self.t == 'a')"], "Unknown t", None),
        ("not (self.t in ['c', 'd'])", ["not (self.t in ['a', 'b'])"], "Unknown t", None),
        ("not (self.t == 'c')", [], "Unknown t", "set `t` to `'c'`"),  # (no chain: `if t == 'c': ... else: raise`)
        ("self.t != 'c'", ["not (self.t == 'a')"], "X requires t='c'", "set `t` to `'c'`"),  # (written by the code)
        ("self.t not in (1, 2)", ["not (self.t == 0)"], "Unknown t", "set `t` to one of `(1, 2)`"),
        # the last of several alternatives of one object: only where the message names it
        ("not (so.b)", ["not (so.a)"], "this specification is not supported", None),
        ("not (so.b)", ["not (so.a)"], "a or b must be given", "set `b`"),
        ("not (so.b is not None)", ["not (so.a is not None)"], "nothing given", None),
        # one alternative of an `or` the code asserts: only where the message names it
        ("not (self.mode == 1 or self.t)", [], "mode should be 1 here", None),
        ("not (self.mode == 1 or self.t)", [], "t must be set unless mode is 1", "set `t`"),
        # an isinstance whose class is an attribute holding a tuple: no sentence
        ("not isinstance(self.t, self.allowed)", [], "unsupported", None),
        ("not isinstance(self.t, socket.socket)", [], "bad", "give `t` a `socket.socket`"),
    ],
)
def test_fix_direction_with_message_and_outer_guards(guard, earlier, message, fix):
    assert fix_for(guard, T, set(), (), message, earlier) == fix


@pytest.mark.parametrize(
    "guard, message, fix",
    [
        # leaving a `disable_` switch unset turns the feature on: no switch-off, said whatever the message
        ("self.disable_chunked_input", "Chunked input is required here", "leave `--disable-chunked-input` unset"),
        # and setting it turns the feature off: only where the message names it
        ("not self.disable_chunked_input", "This model cannot chunk its input", None),
        ("not self.disable_chunked_input", "Forcing --disable-chunked-input for this model", "set `--disable-chunked-input`"),
        ("not self.chunked_input", "This model needs chunked input", "set `--chunked-input`"),
    ],
)
def test_a_switch_named_disable_is_read_the_other_way_round(guard, message, fix):
    """vLLM's "Chunked MM input is required ..." (``assert not disable_chunked_mm_input``) lost
    its right fix "Leave `--disable-chunked-mm-input` unset." to the switch-off rule: leaving a
    ``disable_`` setting unset turns the feature on."""
    names = {"self.disable_chunked_input": "`--disable-chunked-input`", "self.chunked_input": "`--chunked-input`"}
    assert fix_for(guard, names, set(), (), message, []) == fix
