"""``errcat curate review`` labels a text reviewed ("curated": by a person) only when a person
rewrote the draft, or says they read the drafter's text and accept it as is."""

from __future__ import annotations

import pytest
import yaml
from test_curate import MESSAGE_A, MESSAGE_B, crawl, records, upstream  # noqa: F401 (the fixture)

from crawler.catalogue.explanations import parse_file


def _drafted(cli, upstream, tmp_path):  # noqa: F811
    out, curated = tmp_path / "out", tmp_path / "curated"
    crawl(cli, upstream, out, "v1", curated)
    eid = records(out)[MESSAGE_A]["id"]
    assert cli("curate", "draft", eid, "--curated", curated, "--data", out).exit_code == 0
    return out, curated, eid, curated / "acme/widgets" / f"{eid}.yaml"


@pytest.mark.slow
def test_a_draft_nobody_rewrote_is_not_reviewed_without_saying_so(cli, upstream, tmp_path):  # noqa: F811
    out, curated, eid, path = _drafted(cli, upstream, tmp_path)
    drafted = path.read_bytes()
    # the header comment alone, or the layout, is not the text: still the drafter's
    path.write_text("# my notes\n" + path.read_text().split("\n", 1)[1])
    touched = path.read_bytes()
    refused = cli("curate", "review", eid, "--curated", curated, "--data", out)
    assert refused.exit_code == 2 and refused.stderr.startswith("errcat: ") and len(refused.stderr.strip().splitlines()) == 1
    assert "unedited" in refused.stderr and "--read-and-accept-as-is" in refused.stderr
    assert path.read_bytes() == touched and drafted != touched
    crawl(cli, upstream, out, "v1", curated)
    assert records(out)[MESSAGE_A]["explanation_status"] == "draft"

    accepted = cli("curate", "review", eid, "--read-and-accept-as-is", "--curated", curated, "--data", out)
    assert accepted.exit_code == 0, accepted.output
    entry = parse_file(path)
    # the digest of the text accepted stays, so an edit after the review shows
    assert entry.review.status == "reviewed" and entry.review.accepted_as_is is True and entry.review.drafted is not None
    assert yaml.safe_load(path.read_text())["review"]["accepted_as_is"] is True
    crawl(cli, upstream, out, "v1", curated)
    assert records(out)[MESSAGE_A]["explanation_status"] == "curated"


@pytest.mark.slow
def test_a_rewritten_draft_is_reviewed_and_not_marked_accepted_as_is(cli, upstream, tmp_path):  # noqa: F811
    out, curated, eid, path = _drafted(cli, upstream, tmp_path)
    assert parse_file(path).review.drafted  # the digest of what the drafter wrote
    path.write_text(path.read_text().replace("solutions:\n", "solutions:\n- Set kv_transfer_config before building the connector.\n", 1))
    result = cli("curate", "review", eid, "--curated", curated, "--data", out)
    assert result.exit_code == 0, result.output
    entry = parse_file(path)
    assert entry.review.status == "reviewed" and entry.review.accepted_as_is is None and entry.review.drafted is None
    assert "accepted_as_is" not in path.read_text()


@pytest.mark.slow
def test_a_draft_from_facts_without_a_digest_is_still_known_as_the_drafters(cli, upstream, tmp_path):  # noqa: F811
    """A draft written before drafts carried their digest: compared with today's draft from the facts."""
    out, curated, eid, path = _drafted(cli, upstream, tmp_path)
    path.write_text("".join(line for line in path.read_text().splitlines(keepends=True) if not line.lstrip().startswith("drafted:")))
    assert parse_file(path).review.drafted is None
    refused = cli("curate", "review", eid, "--curated", curated, "--data", out)
    assert refused.exit_code == 2 and "unedited" in refused.stderr


@pytest.mark.slow
def test_moving_an_accepted_draft_keeps_it_labelled_a_machine_draft(cli, upstream, tmp_path):  # noqa: F811
    """Upstream rewords the message; the text moves to the new entry unchanged, so it is still
    the machine draft a reviewer accepted as is, not a person's text."""
    out, curated, eid, path = _drafted(cli, upstream, tmp_path)
    assert cli("curate", "review", eid, "--read-and-accept-as-is", "--curated", curated, "--data", out).exit_code == 0
    crawl(cli, upstream, out, "v2", curated)
    new = records(out)[MESSAGE_B]["id"]
    moved = cli("curate", "move", eid, new, "--curated", curated, "--data", out)
    assert moved.exit_code == 0, moved.output
    entry = parse_file(path.with_name(f"{new}.yaml"))
    assert entry.review.status == "reviewed" and entry.review.accepted_as_is is True and entry.review.template == MESSAGE_B
    crawl(cli, upstream, out, "v2", curated)
    record = records(out)[MESSAGE_B]
    assert record["explanation_status"] == "curated" and record["explanation"]["accepted_as_is"] == {"drafted_by": "facts"}


def _reflowed(text: str) -> str:
    """The draft's YAML with only white space and invisible characters changed in its text: every
    ". " doubled, a zero-width space and a no-break space put in, trailing spaces on its lines."""
    head, _, body = text.partition("\nreview:")
    body_sections, review = head, "\nreview:" + body
    changed = body_sections.replace(". ", ".  ").replace(" the ", " the\u200b ", 1).replace(" a ", " a\u00a0", 1)
    return changed + review


@pytest.mark.slow
def test_a_white_space_edit_is_not_a_rewrite(cli, upstream, tmp_path):  # noqa: F811
    """The check was an exact digest: a doubled space passed as a person's text."""
    out, curated, eid, path = _drafted(cli, upstream, tmp_path)
    before = parse_file(path)
    path.write_text(_reflowed(path.read_text()))
    after = parse_file(path)
    assert after.model_dump(exclude={"review"}) != before.model_dump(exclude={"review"})  # the strings did change
    refused = cli("curate", "review", eid, "--curated", curated, "--data", out)
    assert refused.exit_code == 2 and "unedited" in refused.stderr, refused.output
    # a word changed is a rewrite
    path.write_text(path.read_text().replace("solutions:\n", "solutions:\n- Set kv_transfer_config first.\n", 1))
    assert cli("curate", "review", eid, "--curated", curated, "--data", out).exit_code == 0


@pytest.mark.slow
def test_a_draft_stamped_with_the_exact_digest_is_still_known(cli, upstream, tmp_path):  # noqa: F811
    """Files drafted before the digest was of the text's words carry the digest of its exact
    strings: still the drafter's while unedited, and an accepted one stays labelled so."""
    import hashlib
    import json

    out, curated, eid, path = _drafted(cli, upstream, tmp_path)
    sections = parse_file(path).model_dump(mode="json", exclude={"id", "review"}, exclude_none=True)
    exact = hashlib.sha256(json.dumps(sections, sort_keys=True, ensure_ascii=False).encode()).hexdigest()
    stamped = parse_file(path).review.drafted
    assert stamped != exact  # the draft has line breaks: the two digests differ
    path.write_text(path.read_text().replace(stamped, exact))
    refused = cli("curate", "review", eid, "--curated", curated, "--data", out)
    assert refused.exit_code == 2 and "unedited" in refused.stderr
    assert cli("curate", "review", eid, "--read-and-accept-as-is", "--curated", curated, "--data", out).exit_code == 0
    text = path.read_text()
    path.write_text(text.replace(parse_file(path).review.drafted, exact))  # as an older errcat accepted it
    crawl(cli, upstream, out, "v1", curated)
    record = records(out)[MESSAGE_A]
    assert record["explanation_status"] == "curated" and record["explanation"]["accepted_as_is"] == {"drafted_by": "facts"}
