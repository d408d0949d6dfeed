"""errcat match on forms users paste, against a crawl of a fixture repository: a pydantic error's
last line alone ("Value error, ..." / "Assertion failed, ..." without the "N validation error for
X" header or the "[type=...]" marker), and an older wording that put a full stop where today's
message goes on."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

CONFIG = """
def check_count(count):
    if count <= 0:
        raise ValueError("Widget count must be positive for every pool of this engine.")


def check_pool(workers):
    assert workers > 0, "Widget pool must hold at least one worker before it starts."


def check_cache(free):
    if free <= 0:
        raise ValueError(
            "No room left for the widget cache. Try increasing `--pool-size` when starting "
            "the engine (this flag also sets how much the cache may spill to disk)."
        )


def check_name(name):
    raise ValueError(f"Widget failed to start with the name {name} given.")
"""


@pytest.fixture
def dataset(fixture_repo, cli, tmp_path) -> Path:
    fixture_repo.commit({"pkg/__init__.py": "", "pkg/config.py": CONFIG}, tag="v1")
    out = tmp_path / "out"
    run = cli("crawl", "--repo", fixture_repo.path, "--ref", "v1", "--name", "acme/widgets", "--include", "pkg/**/*.py", "--out", out)
    assert run.exit_code == 0, run.output
    return out / "acme" / "widgets"


def _id(dataset: Path, start: str) -> str:
    (entry,) = [e["id"] for e in json.loads((dataset / "search.json").read_text())["entries"] if e["text"].startswith(start)]
    return entry


def _answer(cli, dataset: Path, paste: str) -> dict:
    return json.loads(cli("match", "--json", "--data", dataset, paste).stdout)


@pytest.mark.parametrize(
    ("paste", "start", "exception"),
    [
        ("Value error, Widget count must be positive for every pool of this engine.", "Widget count", "ValueError"),
        ("  Assertion failed, Widget pool must hold at least one worker before it starts.", "Widget pool", "AssertionError"),
        (
            "(APIServer pid=7) pydantic_core._pydantic_core.ValidationError: 1 validation error for EngineConfig\n"
            "(APIServer pid=7)   Value error, Widget count must be positive for every pool of this engine.\n"
            "(APIServer pid=7)     For further information visit https://errors.pydantic.dev/2.12/v/value_error",
            "Widget count",
            "ValueError",
        ),
    ],
    ids=["value-error-line", "assertion-line", "header-without-type-marker"],
)
def test_a_pydantic_line_without_its_type_marker_is_read(dataset, cli, paste, start, exception):
    """Matched only as a weak candidate before: the "Value error, " stayed part of the message."""
    out = _answer(cli, dataset, paste)
    assert [m["id"] for m in out["matches"]] == [_id(dataset, start)], out
    assert out["matches"][0]["exception_match"] == "same" and out["matches"][0]["reading"]["exception"] == exception


def test_an_older_wording_that_stopped_where_the_message_goes_on_is_a_match(dataset, cli):
    """It was a 90-odd percent weak candidate: the full stop kept it from being the beginning."""
    paste = "ValueError: No room left for the widget cache. Try increasing `--pool-size` when starting the engine."
    out = _answer(cli, dataset, paste)
    assert [(m["id"], m["match"], m["strength"]) for m in out["matches"]] == [(_id(dataset, "No room"), "prefix", "match")], out
    text = cli("match", "--data", dataset, paste).stdout
    assert text.splitlines()[1] == "no full match; entries this message is the beginning of:"


@pytest.mark.parametrize(
    "paste",
    [
        "ValueError: No room left for the widget cache. Try increasing `--pool-size` when starting the eng.",  # mid-word
        "ValueError: Widget failed.",  # too short to tell where an older wording stopped
        "ValueError: Widget failed to start with the name.",  # the full stop where a field's value stands
    ],
)
def test_a_full_stop_elsewhere_is_no_claim(dataset, cli, paste):
    assert _answer(cli, dataset, paste)["matches"] == []
