"""The curated files' models kept in the cache by name and bytes: a second read parses no YAML
and gives the same set; an edited file is parsed again; a damaged memo is a miss, never a failure."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

import crawler.catalogue.explanations as curated

SAMPLE = sorted((Path(__file__).parents[2] / "curated" / "vllm-project" / "vllm").glob("*.yaml"))[:3]


@pytest.fixture
def root(tmp_path):
    directory = tmp_path / "curated" / "o" / "n"
    directory.mkdir(parents=True)
    for path in SAMPLE:
        shutil.copy(path, directory / path.name)
    return tmp_path / "curated"


@pytest.fixture
def parsed(monkeypatch):
    names: list[str] = []
    real = curated.parse_file

    def counted(path, text=None):
        names.append(path.name)
        return real(path, text)

    monkeypatch.setattr(curated, "parse_file", counted)
    return names


def test_a_second_read_takes_every_file_from_the_memo(root, tmp_path, parsed):
    memo = tmp_path / "cache" / "curated.json"
    first = curated.load_set(root, "o", "n", memo=memo)
    assert len(parsed) == len(SAMPLE) == len(first)
    parsed.clear()
    again = curated.load_set(root, "o", "n", memo=memo)
    assert parsed == []
    assert again.entries == first.entries and again.digest == first.digest
    assert curated.load_set(root, "o", "n").entries == first.entries  # as without a memo


def test_an_edited_file_is_parsed_again(root, tmp_path, parsed):
    memo = tmp_path / "curated.json"
    curated.load_set(root, "o", "n", memo=memo)
    edited = root / "o" / "n" / SAMPLE[0].name
    edited.write_text(edited.read_text() + "\n# a comment\n")
    parsed.clear()
    found = curated.load_set(root, "o", "n", memo=memo)
    assert parsed == [SAMPLE[0].name]
    assert len(found) == len(SAMPLE)


@pytest.mark.parametrize("damage", [b"not json", b"[1, 2]", b'{"k": 7}', None])
def test_a_damaged_memo_is_a_miss(root, tmp_path, parsed, damage):
    memo = tmp_path / "curated.json"
    first = curated.load_set(root, "o", "n", memo=memo)
    if damage is None:  # rows that decode but do not validate
        import json

        rows = json.loads(memo.read_bytes())
        memo.write_text(json.dumps({k: '{"id": "not an id"}' for k in rows}))
    else:
        memo.write_bytes(damage)
    parsed.clear()
    assert curated.load_set(root, "o", "n", memo=memo).entries == first.entries
    assert len(parsed) == len(SAMPLE)
