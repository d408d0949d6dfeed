"""The curate commands take an entry id as errcat show does: whole, or a unique prefix of at
least 4 digits; an ambiguous prefix is refused in one line listing its candidates."""

from __future__ import annotations

import pytest
from test_curate import MESSAGE_A, crawl, records, upstream, write_curated  # noqa: F401 (the fixture)

from crawler.catalogue.explanations import parse_file


@pytest.mark.slow
def test_a_unique_prefix_is_the_entry_and_an_ambiguous_one_lists_its_candidates(cli, upstream, tmp_path):  # noqa: F811
    out, curated = tmp_path / "out", tmp_path / "curated"
    crawl(cli, upstream, out, "v1", curated)
    eid = records(out)[MESSAGE_A]["id"]
    shown = cli("show", eid[:6], "--data", out, "--no-pager")
    assert shown.exit_code == 0, shown.output
    drafted = cli("curate", "draft", eid[:6], "--curated", curated, "--data", out)
    assert drafted.exit_code == 0, drafted.output
    path = curated / "acme/widgets" / f"{eid}.yaml"
    assert parse_file(path).id == eid
    # an orphan's file whose id shares the first 4 digits: the prefix names two
    other = eid[:4] + ("0" if eid[4] != "0" else "1") * 12
    write_curated(curated, other)
    ambiguous = cli("curate", "review", eid[:4], "--curated", curated, "--data", out)
    assert ambiguous.exit_code == 2 and len(ambiguous.stderr.strip().splitlines()) == 1
    assert ambiguous.stderr.startswith(f"errcat: {eid[:4]} is ambiguous: ") and eid in ambiguous.stderr and other in ambiguous.stderr
    retired = cli("curate", "retire", other[:6], "--curated", curated, "--data", out)  # gone from the dataset: its file
    assert retired.exit_code == 0, retired.output
    assert parse_file(curated / "acme/widgets" / f"{other}.yaml").review.status == "retired"
    path.write_text(path.read_text().replace("what_it_means: ", "what_it_means: Read by a person. ", 1))
    assert cli("curate", "review", eid[:5], "--curated", curated, "--data", out).exit_code == 0
    none = cli("curate", "review", "ffff" if not eid.startswith("ffff") else "eeee", "--curated", curated, "--data", out)
    assert none.exit_code == 2 and "no entry or curated file starts with" in none.stderr
    bad = cli("curate", "review", "xyz!", "--curated", curated, "--data", out)
    assert bad.exit_code == 2 and len(bad.stderr.strip().splitlines()) == 1 and "Traceback" not in bad.output
