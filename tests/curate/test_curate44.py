"""s44-curate: the shipped-files fixture rebuilds a ``raise type(err)(...)`` review (V0's
"Error in model execution: {str(err)}", 0f27a757), which it wrote as an error response before."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.curate import test_curate
from tests.curate.test_curate import _fixture_modules, _reviewed, records

upstream = test_curate.upstream  # the fixture: the same two-commit repository

WRAPPER = """
import functools


def dump_input_when_exception(exclude_args=None):
    def _inner(func):
        @functools.wraps(func)
        def _wrapper(*args, **kwargs):
            try:
                return func(*args, **kwargs)
            except Exception as err:
                raise type(err)(f"Error in model execution: {str(err)}") from err

        return _wrapper

    return _inner
"""


@pytest.mark.slow
def test_a_raise_of_the_errors_own_type_is_rebuilt_as_the_raise_the_extractor_read(fixture_repo, cli, tmp_path: Path):
    """Crawled, reviewed as its record says (exception ``type(err)``, a function in locals), and
    rebuilt by the shipped-files fixture: the same id, template, guards and exception come back,
    as a raise, not as an error response of type "type(err)" (a lower-case name read as an
    OpenAI error type, which gave another id)."""
    from tests.conftest import FixtureRepo

    fixture_repo.commit({"vllm/__init__.py": "", "vllm/worker/model_runner_base.py": WRAPPER}, tag="v1")
    out = tmp_path / "out"
    assert cli("crawl", "--repo", fixture_repo.path, "--ref", "v1", "--name", "vllm-project/vllm", "--out", out).exit_code == 0
    (read,) = [r for r in records(out, "vllm-project/vllm").values() if "Error in model execution" in r["message"]["text"]]
    assert read["exception"]["name"] == "type(err)" and read["message"]["text"] == "Error in model execution: {str(err)}"
    assert "<locals>" in read["sites"][0]["qualname"]

    review = _reviewed(read)
    files = _fixture_modules([review])
    assert "raise type(err)(" in files["vllm/worker/model_runner_base.py"]
    rebuilt = FixtureRepo(tmp_path / "rebuilt")
    rebuilt.commit({"vllm/__init__.py": "", **files}, tag="v1")
    again = tmp_path / "again"
    assert cli("crawl", "--repo", rebuilt.path, "--ref", "v1", "--name", "vllm-project/vllm", "--out", again).exit_code == 0
    (back,) = records(again, "vllm-project/vllm").values()

    def shape(r: dict) -> tuple:
        return r["id"], r["kind"], r["exception"]["name"], r["message"]["text"], tuple(r["sites"][0]["facts"]["guards"])

    assert shape(back) == shape(read)


LINK = """links:
- old: {old}
  new: {new}
  review:
    why: The same check of KVConnectorBase.__init__, reworded at v2.
    reviewer: s44-curate
    old_release: "1"
    commit: {commit}
"""


@pytest.mark.slow
def test_each_release_keeps_its_text_when_upstream_rewords_and_both_checks_pass_strict(upstream, cli, tmp_path: Path):
    """A maintainer moving the catalogue to a release that rewords a reviewed error keeps the old
    text (retired: it explains v1's code) and writes one for the new entry, linked in
    lineage/links.yaml: a crawl of each release shows its own text as curated, and `curate
    check --strict` passes over both; v1's check lists the new file as a later release's (an
    orphan without the link), and evidence and see-also ids of either wording are no failure."""
    import json

    from tests.curate.test_curate import MESSAGE_A, MESSAGE_B, crawl, write_curated

    curated = tmp_path / "curated"
    (curated / "acme/widgets").mkdir(parents=True)
    one, two = tmp_path / "one", tmp_path / "two"
    assert crawl(cli, upstream, one, "v1", curated).exit_code == 0 and crawl(cli, upstream, two, "v2", curated).exit_code == 0
    old, new = records(one)[MESSAGE_A]["id"], records(two)[MESSAGE_B]["id"]
    assert old != new
    write_curated(curated, old, status="retired")
    path = write_curated(curated, new, template=MESSAGE_B, commit=upstream.repo.commit("v2").hexsha)
    path.write_text(path.read_text().replace("review:\n", f"related:\n- {old}\n- {new}\nreview:\n"))
    (curated / "acme/widgets/evidence.yaml").write_text(
        "".join(f"{eid}:\n- url: https://github.com/acme/widgets/issues/7\n  quote: '{MESSAGE_A}'\n" for eid in (old, new))
    )

    def check(out: Path) -> tuple[int, dict]:
        result = cli("curate", "check", out, "--curated", curated, "--strict", "--json")
        return result.exit_code, json.loads(result.stdout)[0]

    code, report = check(one)
    assert code == 1 and [o["id"] for o in report["orphans"]] == [new]  # no link: v2's text is an orphan of v1
    (curated / "acme/widgets/lineage").mkdir()
    (curated / "acme/widgets/lineage/links.yaml").write_text(LINK.format(old=old, new=new, commit=upstream.repo.commit("v2").hexsha))
    for out in (one, two):
        code, report = check(out)
        assert code == 0, report
        assert report["orphans"] == report["stale"] == report["dangling"] == report["evidence"]["stale"] == []
        assert report["curated_entries"] == 1
    assert check(one)[1]["later"] == [{"file": str(curated / "acme/widgets" / f"{new}.yaml"), "id": new, "predecessor": old}]
    assert check(two)[1]["later"] == []
    for out, ref, eid in ((one, "v1", old), (two, "v2", new)):
        assert crawl(cli, upstream, out, ref, curated).exit_code == 0
        assert {r["id"]: r["explanation_status"] for r in records(out).values()}[eid] == "curated"


@pytest.mark.slow
def test_a_text_re_read_for_changed_guards_keeps_the_earlier_code_it_still_holds_for(upstream, cli, tmp_path: Path):
    """`curate review --still-holds-for-earlier` after a release changed a reviewed entry's
    guards records the new code and keeps the old in review.also: the older release's crawl
    still gives the text curated and its check passes --strict; a plain review makes the old
    release's check stale."""
    import json

    from tests.curate.test_curate import CONNECTORS, MESSAGE_A, crawl, write_curated

    upstream.commit(
        {
            "pkg/connector.py": CONNECTORS.replace(
                "if vllm_config.kv_transfer_config is None:", "if vllm_config.kv_transfer_config is None and vllm_config.strict:"
            )
        },
        tag="v3",
    )
    curated = tmp_path / "curated"
    one, three = tmp_path / "one", tmp_path / "three"
    assert crawl(cli, upstream, one, "v1", curated).exit_code == 0 and crawl(cli, upstream, three, "v3", curated).exit_code == 0
    eid = records(one)[MESSAGE_A]["id"]
    assert records(three)[MESSAGE_A]["id"] == eid
    path = write_curated(curated, eid)

    def stale(out: Path) -> list[str]:
        result = cli("curate", "check", out, "--curated", curated, "--strict", "--json")
        assert result.exit_code == (1 if json.loads(result.stdout)[0]["stale"] else 0)
        return [s["id"] for s in json.loads(result.stdout)[0]["stale"]]

    assert stale(one) == [] and stale(three) == [eid]
    original = path.read_text()
    assert cli("curate", "review", eid, "--curated", curated, "--data", three).exit_code == 0
    assert stale(three) == [] and stale(one) == [eid]  # reviewed for v3 alone
    path.write_text(original)
    result = cli("curate", "review", eid, "--still-holds-for-earlier", "--curated", curated, "--data", three)
    assert result.exit_code == 0, result.output
    assert stale(three) == [] and stale(one) == []
    assert "also:" in path.read_text() and "vllm_config.strict" in path.read_text()
    for out, ref in ((one, "v1"), (three, "v3")):
        assert crawl(cli, upstream, out, ref, curated).exit_code == 0
        assert records(out)[MESSAGE_A]["explanation_status"] == "curated"
    # reviewed again at v3 with the flag: the earlier code is kept once, not the current code
    assert cli("curate", "review", eid, "--still-holds-for-earlier", "--curated", curated, "--data", three).exit_code == 0
    assert path.read_text().count("- commit:") == 1
