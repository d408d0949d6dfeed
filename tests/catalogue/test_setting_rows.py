"""The page's knob rows (#32 item 3, "no setting where none exists"): a row is a "Setting" only
when what the check reads is a user's option (a command-line option, a config field an option
sets, an environment variable); a request's field is a "Request field"; a name only the message
quotes, resolved to no one option, is "Named in the message"; a field of an object that someone's
code builds (a trainer's update info, the code's own record) is what the check "Reads", with who
fills it in as the entry's who-acts says. A fixture upstream written here, crawled through the
real CLI, read back with ``errcat show`` (the text page) and the page model (what the site renders).
"""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner
from helpers import MEANING_TOML, jsonl_bytes

from crawler.cli import main

CONFIG = """
import dataclasses


@dataclasses.dataclass
class ParallelConfig:
    enable_eplb: bool = False
    rank: int = 0
    world_size: int = 1

    def __post_init__(self):
        if self.enable_eplb and self.world_size < 2:
            raise ValueError("EPLB needs more than one rank")


@dataclasses.dataclass
class VllmConfig:
    parallel_config: ParallelConfig | None = None


def get_kwargs(cls):
    return {f.name: {} for f in dataclasses.fields(cls)}
"""

ARGS = """
from pkg.config import ParallelConfig, get_kwargs


def add_cli_args(parser):
    parallel_kwargs = get_kwargs(ParallelConfig)
    parser.add_argument("--enable-eplb", **parallel_kwargs["enable_eplb"])
"""

SAMPLING = """
from pydantic import BaseModel


class ChatRequest(BaseModel):
    stream: bool = False
    n: int = 1
"""

SERVING = """
from pkg.sampling import ChatRequest


class Serving:
    async def create(self, request: ChatRequest):
        if request.stream and request.n > 1:
            raise ValueError("streaming supports one choice only")
        return request
"""

BUDGET = """
from dataclasses import dataclass


@dataclass
class TokenBudget:
    max_total_tokens: int

    def __post_init__(self):
        if self.max_total_tokens < 1:
            raise ValueError("Please request fewer tokens than the context holds")
"""

STATE = """
from dataclasses import dataclass


@dataclass
class StepState:
    num_tokens: int = 0

    def advance(self, n):
        self.num_tokens += n
        assert self.num_tokens >= 0, "the step's token count went negative"
"""

TRANSFER = """
from dataclasses import dataclass


@dataclass
class SparseUpdateInfo:
    names: list[str]
    num_updates_list: list[int]

    def __post_init__(self):
        if len(self.num_updates_list) != len(self.names):
            raise ValueError("`num_updates_list` should be of the same size as `names`")


class TrainerEngine:
    def trainer_init(self, trainer_rank, trainers):
        if trainer_rank >= trainers:
            raise ValueError(f"trainer `rank` ({trainer_rank}) must be below the number of trainers")
        if trainers > 8:
            raise ValueError("more than 8 trainers need the gateway: start it with `--trainer-gateway`")
"""

FILES = {
    "pkg/__init__.py": "",
    "pkg/config.py": CONFIG,
    "pkg/arg_utils.py": ARGS,
    "pkg/sampling.py": SAMPLING,
    "pkg/serving.py": SERVING,
    "pkg/budget.py": BUDGET,
    "pkg/state.py": STATE,
    "pkg/distributed/__init__.py": "",
    "pkg/distributed/weight_transfer/__init__.py": "",
    "pkg/distributed/weight_transfer/sparse.py": TRANSFER,
}


@pytest.fixture(scope="module")
def dataset(crawl_once):
    out = crawl_once(FILES, "--upstream", "widgets", config=MEANING_TOML)
    data = out / "acme" / "widgets"
    return data, [json.loads(line) for line in jsonl_bytes(data).splitlines()]


def record(records: list[dict], start: str) -> dict:
    (got,) = [r for r in records if r["message"]["text"].startswith(start)]
    return got


def shown(data, entry: dict) -> str:
    run = CliRunner().invoke(main, ["show", entry["id"], "--data", str(data), "--no-pager", "--color", "never"], catch_exceptions=False)
    assert run.exit_code == 0, run.output
    return run.output


def derived_rows(entry: dict) -> list[tuple[str, str]]:
    """The "Derived from the code" rows of the entry's page model (what the site's page shows)."""
    from crawler.consume.page_model import Rows, build

    (section,) = [s for s in build(entry).sections if s.key == "derived"]
    return [(label, "".join(text for _, text in pieces)) for block in section.blocks if isinstance(block, Rows) for label, pieces in block.rows]


def knob_rows(entry: dict) -> list[tuple[str, str]]:
    return [(label, text) for label, text in derived_rows(entry) if label not in ("When it is raised", "When it is logged", "Fix direction")]


def settings_shown(text: str) -> list[str]:
    return [line.strip() for line in text.splitlines() if line.strip().startswith("Setting:")]


def test_a_field_of_the_info_the_callers_code_builds_is_read_not_a_setting(dataset):
    data, records = dataset
    entry = record(records, "`num_updates_list` should be")
    assert entry["meaning"]["action"]["actor"] == "caller", entry["meaning"]["action"]
    assert [k["kind"] for k in entry["meaning"]["knobs"]] == ["config_field", "config_field"], entry["meaning"]["knobs"]
    filled = "a field of what your code passes in; no option sets it"
    want = [("Reads", f"`num_updates_list` of `SparseUpdateInfo` ({filled})"), ("Reads", f"`names` of `SparseUpdateInfo` ({filled})")]
    assert knob_rows(entry) == want
    text = shown(data, entry)
    assert settings_shown(text) == [] and f"Reads: `num_updates_list` of `SparseUpdateInfo` ({filled})" in text, text


def test_a_name_only_the_message_quotes_is_named_not_a_setting(dataset):
    data, records = dataset
    entry = record(records, "trainer `rank`")
    assert [(k["kind"], k["name"]) for k in entry["meaning"]["knobs"]] == [("message_name", "rank")]
    assert knob_rows(entry) == [("Named in the message", "`rank` (errcat did not resolve it to one option)")]
    text = shown(data, entry)
    assert settings_shown(text) == [] and "Named in the message: `rank` (errcat did not resolve it to one option)" in text, text


def test_a_requests_field_is_a_request_row_not_a_setting(dataset):
    data, records = dataset
    entry = record(records, "streaming supports one choice")
    assert knob_rows(entry) == [("Request field", "`stream` of `ChatRequest`"), ("Request field", "`n` of `ChatRequest`")]
    text = shown(data, entry)
    assert settings_shown(text) == [] and "Request field: `stream` of `ChatRequest`" in text, text


def test_an_option_and_its_configs_own_check_stay_settings(dataset):
    """The near miss: a field an option sets, and a field of a config reachable from the user's
    options that the config's own validator checks, are settings."""
    data, records = dataset
    entry = record(records, "EPLB needs more than one rank")
    assert knob_rows(entry) == [
        ("Setting", "`--enable-eplb`, field `enable_eplb` of `ParallelConfig` (command-line option)"),
        ("Setting", "`world_size` of `ParallelConfig` (config field)"),
    ]
    assert settings_shown(shown(data, entry)) == [
        "Setting: `--enable-eplb`, field `enable_eplb` of `ParallelConfig` (command-line option)",
        "Setting: `world_size` of `ParallelConfig` (config field)",
    ]


def test_a_flag_only_the_message_quotes_is_named_as_an_option_not_a_setting(dataset):
    data, records = dataset
    entry = record(records, "more than 8 trainers")
    assert [(k["kind"], k["name"]) for k in entry["meaning"]["knobs"]] == [("message_name", "--trainer-gateway")]
    note = "a command-line option; errcat did not find where it is declared"
    assert knob_rows(entry) == [("Named in the message", f"`--trainer-gateway` ({note})")]
    text = shown(data, entry)
    assert settings_shown(text) == [] and f"Named in the message: `--trainer-gateway` ({note})" in text, text


def test_a_field_of_what_the_code_builds_for_the_request_is_read_not_a_setting(dataset):
    data, records = dataset
    entry = record(records, "Please request fewer tokens")
    assert entry["meaning"]["action"]["actor"] == "request", entry["meaning"]["action"]
    filled = "a field of the request or of what the code builds from it; no option sets it"
    assert knob_rows(entry) == [("Reads", f"`max_total_tokens` of `TokenBudget` ({filled})")]
    assert settings_shown(shown(data, entry)) == []


def test_a_field_of_the_codes_own_object_is_read_in_plain_words(dataset):
    """Where who acts is nobody outside, the row does not say whose the object is: the code fills it in."""
    data, records = dataset
    entry = record(records, "the step's token count went negative")
    assert entry["meaning"]["action"]["actor"] == "internal", entry["meaning"]["action"]
    assert knob_rows(entry) == [("Reads", "`num_tokens` of `StepState` (a field the code fills in; no option sets it)")]
    assert settings_shown(shown(data, entry)) == []
