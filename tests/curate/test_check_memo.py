"""``errcat curate check`` takes each valid curated file's model from the crawl's memo of them
(``explanations._Memo``, the cache's curated.json) rather than parse its YAML again, and parses
every file the memo does not hold as it is now (one edited since, a row damaged in the memo)."""

from __future__ import annotations

import pytest

import crawler.catalogue.explanations as explanations
from tests.curate.test_curate import crawl, records, upstream, write_curated  # noqa: F401 - (upstream: a fixture)


@pytest.fixture
def parsed(monkeypatch):
    """The names of the curated files parsed from their YAML."""
    found: list[str] = []
    real = explanations.parse_bytes

    def counted(path, data):
        found.append(path.name)
        return real(path, data)

    monkeypatch.setattr(explanations, "parse_bytes", counted)
    return found


@pytest.mark.slow
def test_check_takes_the_crawls_models_of_unchanged_files_and_parses_an_edited_one(upstream, cli, tmp_path, cache_dir, parsed):  # noqa: F811
    out, curated = tmp_path / "out", tmp_path / "curated"
    assert crawl(cli, upstream, out, "v1", curated).exit_code == 0
    path = write_curated(curated, records(out)[next(iter(records(out)))]["id"], commit=upstream.repo.commit("v1").hexsha)
    assert crawl(cli, upstream, out, "v1", curated).exit_code == 0  # (the crawl keeps the model)
    assert parsed == [path.name]
    parsed.clear()
    report = cli("curate", "check", out, "--curated", curated)
    assert report.exit_code == 0, report.output
    assert parsed == []
    path.write_text(path.read_text().replace("Keep the connector flags in one launch script.", "Keep the flags in one script."))
    again = cli("curate", "check", out, "--curated", curated)
    assert parsed == [path.name] and again.stdout == report.stdout
    memo = cache_dir / "curated.json"
    memo.write_text('{"not": "a row"}')  # (damaged: every file parsed)
    parsed.clear()
    assert cli("curate", "check", out, "--curated", curated).stdout == report.stdout and parsed == [path.name]
