"""Every page says whose move it is and what to do (#32 items 1, 2 and 6): ``meaning.action``,
derived from the record, on a crawled fixture upstream, through the real CLI and renderers."""

from __future__ import annotations

import json
import re
from urllib.parse import parse_qs, urlsplit

import pytest
from helpers import crawl_meaning_upstream, jsonl_bytes

CONFIG = """
from dataclasses import dataclass


@dataclass
class CacheConfig:
    gpu_memory_utilization: float = 0.9
    block_size: int = 16

    def __post_init__(self):
        if self.gpu_memory_utilization > 1:
            raise ValueError("gpu_memory_utilization must be at most 1")
        if self.block_size * 1000 > 10**9:
            raise ValueError("No room for the KV cache. Try increasing gpu_memory_utilization or lowering the batch.")
"""

FLAGS = {"--gpu-memory-utilization": "gpu_memory_utilization", "--block-size": "block_size"}
ARGS = (
    "\n".join(
        [
            "from .config import CacheConfig",
            "def get_kwargs(cls):",
            "    return {}",
            "def add_cli_args(parser):",
            *(f"    kw = get_kwargs(CacheConfig)\n    parser.add_argument({flag!r}, **kw[{name!r}])" for flag, name in FLAGS.items()),
        ]
    )
    + "\n"
)

SAMPLING = """
from pydantic import BaseModel


class SamplingParams(BaseModel):
    temperature: float = 1.0

    def verify(self):
        if self.temperature < 0:
            raise ValueError(f"temperature must be non-negative, got {self.temperature}")
"""

ENGINE = """
import importlib


def load_kernels():
    try:
        return importlib.import_module("fastkern")
    except ImportError as e:
        raise ImportError("fastkern is not installed. Please install it with `pip install fastkern`.") from e


class Scheduler:
    def step(self, queue):
        assert queue is not None, "no queue to step"
        if len(queue) > 3:
            raise RuntimeError("scheduler reached an impossible state <script>alert(1)</script>")
        return queue

    def plan(self):
        raise NotImplementedError

    def __getitem__(self, index):
        if not isinstance(index, int):
            raise TypeError("Invalid index type")
        return index

    def devices(self, smi):
        try:
            return smi.handles()
        except OSError as error:
            raise RuntimeError(f"device query failed: {error}") from error

    def busy(self, load):
        if load > 100:
            raise RuntimeError("The engine is overloaded. Please try again later.")
"""


@pytest.fixture
def records(fixture_repo, cli, tmp_path) -> dict[str, dict]:
    found = crawl_meaning_upstream(
        fixture_repo,
        cli,
        tmp_path,
        {"pkg/__init__.py": "", "pkg/config.py": CONFIG, "pkg/arg_utils.py": ARGS, "pkg/sampling.py": SAMPLING, "pkg/engine.py": ENGINE},
    )
    return {r["message"]["text"] if r["kind"] == "raise" and r["message"]["text"] else f"{r['kind']} {r['location']['qualname']}": r for r in found}


def action(records: dict[str, dict], start: str) -> dict:
    (record,) = [r for text, r in records.items() if text.startswith(start)]
    return record["meaning"]["action"]


@pytest.mark.slow
def test_every_entry_says_whose_move_it_is(records):
    assert all(r["meaning"]["action"]["says"] and r["meaning"]["action"]["steps"] for r in records.values())
    assert action(records, "gpu_memory_utilization must")["actor"] == "setting"
    assert "`--gpu-memory-utilization`" in action(records, "gpu_memory_utilization must")["says"]
    assert action(records, "temperature must")["actor"] == "request"
    assert action(records, "fastkern is not")["actor"] == "environment"
    assert action(records, "scheduler reached")["actor"] == "internal"
    assert "likely a bug" in action(records, "scheduler reached")["says"]
    assert action(records, "assert Scheduler.step")["actor"] == "internal"  # an assert with no setting
    assert action(records, "raise Scheduler.plan")["actor"] == "caller"  # left for a subclass to implement
    assert action(records, "The engine is overloaded")["actor"] == "environment"  # the message says to try again
    assert action(records, "Invalid index type")["actor"] == "caller"  # a container users index
    assert action(records, "device query failed")["actor"] == "environment"  # the system refused


@pytest.mark.slow
def test_the_messages_own_remedy_is_lifted_with_its_setting_resolved_to_the_flag(records):
    got = action(records, "No room for the KV cache")
    assert got["remedy"] == "Try increasing gpu_memory_utilization (`--gpu-memory-utilization`) or lowering the batch."
    assert got["steps"][0] == "Do what the message says: " + got["remedy"]
    assert action(records, "fastkern is not")["remedy"] == "Please install it with `pip install fastkern`."
    # a message that says only what went wrong gives no remedy
    assert action(records, "gpu_memory_utilization must")["remedy"] is None
    assert action(records, "scheduler reached")["remedy"] is None


@pytest.mark.slow
def test_the_record_validates_and_the_action_is_labelled_derived(records, tmp_path, cli):
    out = tmp_path / "out"
    assert cli("validate", out / "acme" / "widgets").exit_code == 0
    page = cli("show", "--data", out / "acme" / "widgets", records["gpu_memory_utilization must be at most 1"]["id"]).output
    assert "What to do\n" in page
    assert "Whose move: A setting of yours (`--gpu-memory-utilization`)" in page
    assert "Derived by errcat from the code and the message" in page


def test_pages_link_the_tracker_searched_and_a_report_for_an_internal_check(records, tmp_path, cli):
    data = tmp_path / "out" / "acme" / "widgets"
    site = tmp_path / "site"
    assert cli("render", "--data", data, "--out", site).exit_code == 0
    internal = records["scheduler reached an impossible state <script>alert(1)</script>"]
    html = (site / "errors" / f"{internal['id']}.html").read_text()
    section = html.split('<section id="what-to-do">', 1)[1].split("</section>", 1)[0]
    assert "<script>" not in section and "%3Cscript%3E" in section  # (the message goes only into URLs here)
    links = dict((label, href.replace("&amp;", "&")) for href, label in re.findall(r'<a href="([^"]+)"[^>]*>([^<]+)</a>', section))
    search = urlsplit(links["Search the tracker"])
    assert (search.scheme, search.netloc, search.path) == ("https", "github.com", "/acme/widgets/issues")
    assert parse_qs(search.query)["q"] == ['"scheduler reached an impossible state <script>alert(1)</script>"']
    report = urlsplit(links["Report it"])
    assert report.path == "/acme/widgets/issues/new"
    query = parse_qs(report.query)
    assert query["title"] == ["RuntimeError: scheduler reached an impossible state <script>alert(1)</script>"]
    assert f"`pkg/engine.py:{internal['location']['line']}`" in query["body"][0]
    # a setting's page searches the tracker, and asks for no bug report
    setting = records["gpu_memory_utilization must be at most 1"]
    page = (site / "errors" / f"{setting['id']}.html").read_text()
    assert "Search the tracker" in page and "Report it" not in page
    markdown = site / "errors" / f"{setting['id']}.md"
    if markdown.exists():
        assert "## What to do" in markdown.read_text()


@pytest.mark.slow
def test_a_repository_off_github_gets_no_tracker_links(fixture_repo, cli, tmp_path):
    from helpers import git

    fixture_repo.commit({"pkg/__init__.py": "", "pkg/engine.py": ENGINE}, tag="v1")
    git(fixture_repo.path, "remote", "add", "origin", "https://gitlab.example.com/acme/widgets.git")
    out = tmp_path / "out"
    assert cli("crawl", "--repo", fixture_repo.path, "--ref", "v1", "--include", "pkg/**/*.py", "--out", out).exit_code == 0
    data = out / "acme" / "widgets"
    rows = [json.loads(line) for line in jsonl_bytes(data).splitlines()]
    assert all(r["meaning"]["action"]["steps"] for r in rows)
    site = tmp_path / "site"
    assert cli("render", "--data", data, "--out", site).exit_code == 0
    for page in (site / "errors").glob("*.html"):
        text = page.read_text()
        assert "What to do" in text and "Search the tracker" not in text and "gitlab.example.com/acme/widgets/issues" not in text
