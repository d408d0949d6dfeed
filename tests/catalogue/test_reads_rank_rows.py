"""The page's "Reads" row of a rank count (#32, s43-judge1's page 32): a field of an object the code
builds (``TransferTopology.tp_size``) that the code fills from the instance's parallel size is not
said to be set by no option, where who-acts says a setting leads to the error; it names the option
that sets that size. Any other field the code fills in keeps the plain words. A fixture upstream
written here, crawled through the real CLI, read back through the page model (what the site renders).
"""

from __future__ import annotations

import json

import pytest
from helpers import MEANING_TOML, jsonl_bytes

TOPOLOGY = """
from dataclasses import dataclass


@dataclass
class WidgetTopology:
    tp_size: int = 1
    block_len: int = 16

    def tp_ratio(self, remote_tp_size: int) -> int:
        assert self.tp_size % remote_tp_size == 0, (
            f"Local tensor parallel size {self.tp_size} is not divisible by remote tensor parallel size {remote_tp_size}."
        )
        return self.tp_size // remote_tp_size

    def grow(self, n: int) -> None:
        self.block_len += n
        assert self.block_len >= 0, "the widget block length went negative"
"""

FILES = {"pkg/__init__.py": "", "pkg/topology.py": TOPOLOGY}


@pytest.fixture(scope="module")
def records(crawl_once) -> list[dict]:
    data = crawl_once(FILES, "--upstream", "widgets", config=MEANING_TOML) / "acme" / "widgets"
    return [json.loads(line) for line in jsonl_bytes(data).splitlines()]


def reads_rows(records: list[dict], start: str) -> tuple[str, list[str]]:
    from crawler.consume.page_model import Rows, build

    (entry,) = [r for r in records if r["message"]["text"].startswith(start)]
    (section,) = [s for s in build(entry).sections if s.key == "derived"]
    rows = [(label, "".join(text for _, text in pieces)) for block in section.blocks if isinstance(block, Rows) for label, pieces in block.rows]
    return entry["meaning"]["action"]["actor"], [text for label, text in rows if label in ("Reads", "Setting")]


def test_a_rank_count_the_code_fills_in_on_a_settings_page_names_the_option_for_that_size(records):
    actor, rows = reads_rows(records, "Local tensor parallel size")
    assert actor == "setting", actor
    assert rows == ["`tp_size` of `WidgetTopology` (a field the code fills in from the tensor parallel size the instance runs with (`--tensor-parallel-size`))"]


def test_another_field_the_code_fills_in_keeps_the_plain_words(records):
    actor, rows = reads_rows(records, "the widget block length went negative")
    assert actor == "internal", actor
    assert rows == ["`block_len` of `WidgetTopology` (a field the code fills in; no option sets it)"]
