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


# --------------------------------------------------------------------------- the data files beside them

SHIPPED = Path(__file__).parents[2] / "curated" / "vllm-project" / "vllm"


@pytest.fixture
def beside(root):
    """The evidence and the foreign list shipped for vLLM, beside the curated sample."""
    directory = root / "o" / "n"
    shutil.copy(SHIPPED / "evidence.yaml", directory / "evidence.yaml")
    (directory / "foreign").mkdir()
    shutil.copy(SHIPPED / "foreign" / "errors.yaml", directory / "foreign" / "errors.yaml")
    return directory


@pytest.fixture
def yaml_parsed(monkeypatch):
    texts: list[str] = []
    real = curated.parse_yaml

    def counted(text):
        texts.append(text)
        return real(text)

    monkeypatch.setattr(curated, "parse_yaml", counted)
    return texts


def _vllm():
    from crawler.model.records import RepoRef

    return RepoRef(url="https://github.com/vllm-project/vllm", owner="vllm-project", name="vllm")


@pytest.mark.slow
def test_the_evidence_and_foreign_list_are_read_from_the_memo_beside_the_curated_files(root, beside, tmp_path, yaml_parsed):
    """They are parsed once; the next read takes the same models from the memo, and the curated
    files' rows in the same memo file stay (each reader keeps its own rows only)."""
    from crawler.catalogue import evidence, foreign_list

    memo = tmp_path / "cache" / "curated.json"
    files = curated.load_set(root, "o", "n", memo=memo)
    ev, fl = evidence.load(beside, _vllm(), memo), foreign_list.load_curated(beside, memo)
    assert ev.reports and fl is not None
    yaml_parsed.clear()
    assert evidence.load(beside, _vllm(), memo) == ev
    assert foreign_list.load_curated(beside, memo) == fl
    assert curated.load_set(root, "o", "n", memo=memo).entries == files.entries
    assert yaml_parsed == []  # nothing parsed again: every reader's rows were kept by the others
    assert evidence.load(beside, _vllm()) == ev and foreign_list.load_curated(beside) == fl  # as without a memo
    yaml_parsed.clear()
    (beside / "evidence.yaml").write_bytes((beside / "evidence.yaml").read_bytes() + b"\n# edited\n")
    assert evidence.load(beside, _vllm(), memo).reports == ev.reports
    assert len(yaml_parsed) == 1  # the edited file, and only it, parsed again


@pytest.mark.slow
def test_an_evidence_problem_found_on_a_memo_hit_still_names_its_line(root, beside, tmp_path):
    """A link that is not the crawled repository's is refused at its line, parsed or remembered
    (the memo holds the model, valid alone; the link is checked against each crawl's repository)."""
    from crawler.catalogue import evidence
    from crawler.model.records import RepoRef

    memo = tmp_path / "curated.json"
    evidence.load(beside, _vllm(), memo)
    other = RepoRef(url="https://github.com/someone/else", owner="someone", name="else")
    with pytest.raises(curated.CuratedError) as parsed:
        evidence.load(beside, other)
    with pytest.raises(curated.CuratedError) as remembered:
        evidence.load(beside, other, memo)
    assert str(remembered.value) == str(parsed.value)
    assert not str(parsed.value).split(":")[1].startswith("1 ")  # a real line, not the file's first
