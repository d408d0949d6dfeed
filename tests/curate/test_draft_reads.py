"""``errcat curate draft ID`` (the draft from the facts) reads as a person would write it: the
guards as a reader takes them (``not (not token_ids)`` is ``token_ids``), "an Exception", and a
defensive ``except`` naming the error itself rather than every error there is; its review keeps
the recorded guards, which staleness is judged by."""

from __future__ import annotations

import json

import pytest

from crawler.catalogue.explanations import parse_file

CODE = """
class ValidationProblem(Exception):
    pass


def validate_token_ids(token_ids, min_input_id):
    if not token_ids:
        return
    if min_input_id < 0:
        raise ValidationProblem(f"Token id {min_input_id} is out of vocabulary")
"""


@pytest.mark.slow
def test_a_draft_from_the_facts_reads_as_written_by_a_person(cli, fixture_repo, tmp_path):
    fixture_repo.commit({"pkg/render.py": CODE}, tag="v1")
    out, curated = tmp_path / "out", tmp_path / "curated"
    assert (
        cli(
            "crawl", "--repo", fixture_repo.path, "--ref", "v1", "--name", "acme/widgets", "--include", "pkg/**/*.py", "--out", out, "--curated", curated
        ).exit_code
        == 0
    )
    data = out / "acme" / "widgets"
    eid = json.loads((data / "index.json").read_text(encoding="utf-8"))["entries"][0]["id"]
    assert cli("curate", "draft", eid, "--data", data, "--curated", curated).exit_code == 0
    entry = parse_file(curated / "acme" / "widgets" / f"{eid}.yaml")
    assert entry.what_it_means.startswith("ValidationProblem (an Exception) raised by `validate_token_ids`")
    assert "when `token_ids` and `min_input_id < 0`." in entry.what_it_means
    assert entry.when_it_happens.trigger == "`token_ids` and `min_input_id < 0` holds"
    assert "not (not" not in entry.model_dump_json(exclude={"review"})
    catch = entry.defensive_patterns[-1]
    assert catch.strategy == "Catch ValidationProblem" and "except ValidationProblem as exc:" in catch.code
    assert entry.review.guards == ["not (not token_ids)", "min_input_id < 0"]
