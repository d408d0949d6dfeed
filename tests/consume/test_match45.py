"""The corpus's per-release expectations (tests/data/pastes.jsonl's ``expect_on``, ``current_on``)
and the bench that reads them (bench/match_corpus.py): a paste means the entry that raises it on
the release of the dataset it is matched against, so a rewording or a removal in a later release
is no miss there (and no false claim when a history answers with the retired entry).

One fixture repository, two releases: v0.1.0 raises a pool check and a sprocket check; v0.2.0
rewords the pool check and drops the sprocket one. Crawled (each release) and as a history of
both, by the real CLI, once for the module.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from crawler.cli.main import main
from tests.conftest import FixtureRepo

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "bench"))

OLD = "Widget pool is full: wait for a slot before admitting request {rid}"
NEW = "Widget pool is full ({size} slots): wait for one, request {rid} was not admitted"
GEAR = "Sprocket gear {gear} is misaligned with the widget shaft"
#: a template that gains a field in v0.2.0 (a new id): a paste fits both alike
START_OLD = "Widget engine start failed. See the cause above. Failed worker(s): {procs}"
START_NEW = "Widget engine start failed. See the cause above. Failed worker(s): {procs}{extra}"
V1 = f"""
def admit(size, rid):
    raise ValueError(f{OLD!r})


def turn(gear):
    raise RuntimeError(f{GEAR!r})


def start(procs):
    raise RuntimeError(f{START_OLD!r})
"""
V2 = f"""
def admit(size, rid):
    raise ValueError(f{NEW!r})


def start(procs, extra):
    raise RuntimeError(f{START_NEW!r})
"""
URL = "https://github.com/acme/widgets/issues/"
POOL_OLD = "ValueError: Widget pool is full: wait for a slot before admitting request 7"
POOL_NEW = "ValueError: Widget pool is full (4 slots): wait for one, request 7 was not admitted"
GEAR_PASTE = "RuntimeError: Sprocket gear 3 is misaligned with the widget shaft"
START_PASTE = "RuntimeError: Widget engine start failed. See the cause above. Failed worker(s): [3]"


def _ids(dataset: Path) -> dict[str, str]:
    return {e["text"]: e["id"] for e in json.loads((dataset / "search.json").read_text(encoding="utf-8"))["entries"]}


@pytest.fixture(scope="module")
def data(tmp_path_factory) -> dict[str, Path]:
    """The crawls of v0.1.0 and v0.2.0, the history of both, and a corpus written for them."""
    tmp = tmp_path_factory.mktemp("match45")
    repo = FixtureRepo(tmp / "upstream")
    repo.commit({"pkg/__init__.py": "", "pkg/pool.py": V1}, tag="v0.1.0")
    repo.commit({"pkg/pool.py": V2}, tag="v0.2.0")
    args = ["--repo", str(repo.path), "--name", "acme/widgets", "--include", "pkg/**/*.py"]
    out: dict[str, Path] = {}
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("ERRCAT_CACHE_DIR", str(tmp / "cache"))
        mp.chdir(tmp)  # no curated/ of errcat's own checkout
        for name, command in (
            ("v1", ["crawl", *args, "--ref", "v0.1.0", "--out", str(tmp / "v1")]),
            ("v2", ["crawl", *args, "--ref", "v0.2.0", "--out", str(tmp / "v2")]),
            ("history", ["history", *args, "--out", str(tmp / "history"), "v0.1.0", "v0.2.0"]),
        ):
            run = CliRunner().invoke(main, command, catch_exceptions=False)
            assert run.exit_code == 0, run.output
            out[name] = tmp / name / "acme" / "widgets"
    old, gear = _ids(out["v1"])[OLD], _ids(out["v1"])[GEAR]
    new = _ids(out["v2"])[NEW]
    rows = [
        {"url": URL + "1", "text": POOL_OLD, "expect": old, "expect_on": {"0.2.0": new}, "current_on": {"0.2.0": POOL_NEW}},
        {"url": URL + "2", "text": GEAR_PASTE, "expect": gear, "expect_on": {"0.2.0": "none"}},
        {"url": URL + "3", "text": "ValueError: The widget shaft is made of cheese.", "expect": "none"},
    ]
    corpus = tmp / "pastes.jsonl"
    corpus.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return out | {"corpus": corpus, "ids": {"old": old, "gear": gear, "new": new}}  # type: ignore[dict-item]


def _rows(data) -> list[dict]:
    return [json.loads(line) for line in data["corpus"].read_text(encoding="utf-8").splitlines()]


def test_each_dataset_names_its_release_from_its_manifest(data, tmp_path):
    """A crawl and a history by their tag (a history by its newest), a wheel's dataset by its
    release; a manifest naming none, or holding a hostile or broken value, names none."""
    from match_corpus import release_of

    assert (release_of(data["v1"]), release_of(data["v2"]), release_of(data["history"])) == ("0.1.0", "0.2.0", "0.2.0")
    cases = {
        "wheel": {"ref": None, "source": "pypi:vllm==0.10.2", "release": {"version": "0.10.2"}},
        "post": {"ref": None, "source": "pypi:vllm==0.6.3.post1"},
        "branch": {"ref": "main", "source": "git"},
        "hostile": {"ref": "v1.0\n; rm -rf /", "source": ["pypi:vllm==1.0"], "release": "0.1"},
        "list": [1, 2],
    }
    for name, manifest in cases.items():
        (tmp_path / name).mkdir()
        (tmp_path / name / "manifest.json").write_text(json.dumps(manifest), encoding="utf-8")
    (tmp_path / "broken").mkdir()
    (tmp_path / "broken" / "manifest.json").write_bytes(b"\xff{")
    got = {name: release_of(tmp_path / name) for name in [*cases, "broken", "absent"]}
    assert got == {"wheel": "0.10.2", "post": "0.6.3.post1", "branch": None, "hostile": None, "list": None, "broken": None, "absent": None}


def test_a_paste_means_the_entry_its_release_raises(data):
    """``expected``: the release's entry when the row names one, else ``expect``; "none" on a release
    that dropped the check, the v0.1.0 entry then a retired one an answer may name."""
    from match_corpus import expected, text_of

    pool, gear, none = _rows(data)
    ids = data["ids"]
    assert expected(pool, "0.1.0") == (ids["old"], []) and expected(pool, None) == (ids["old"], [])
    assert expected(pool, "0.2.0") == (ids["new"], [])
    assert expected(gear, "0.2.0") == ("none", [ids["gear"]])
    assert expected(none, "0.2.0") == ("none", [])
    assert (text_of(pool, "0.2.0", True), text_of(pool, "0.1.0", True), text_of(pool, "0.2.0", False)) == (POOL_NEW, POOL_OLD, POOL_OLD)


def test_the_bench_scores_each_release_by_its_own_expectations(data):
    """On v0.1.0 both pastes are its entries; on the history of v0.2.0 the old pool wording is
    answered by the retired entry that raised it, whose successor is the expected one (top-1
    through it), the pool text in v0.2.0's words by the live entry, and the dropped sprocket
    check by its retired entry (no false claim); on v0.2.0 alone that paste is answered by
    nothing. Read with v0.1.0's expectations instead, the history's sprocket answer would be
    counted as the entry, and the pool one a miss: the expectations are what changed."""
    from match_corpus import evaluate

    from crawler.consume.match import Matcher

    rows, ids = _rows(data), data["ids"]
    v1 = evaluate(rows, [Matcher.load(data["v1"])], False, "0.1.0")
    assert (v1["entry"], v1["top1"], v1["matched"], v1["none"], v1["false_claims"]) == (2, 2, 2, 1, 0), v1["misses"]
    history = [Matcher.load(data["history"])]
    pasted = evaluate(rows, history, False, "0.2.0")
    assert (pasted["entry"], pasted["top1"], pasted["through_successor"], pasted["none"], pasted["retired"]) == (1, 1, 1, 2, 1), pasted["misses"]
    assert pasted["false_claims"] == 0 and pasted["misses"] == []
    current = evaluate(rows, history, True, "0.2.0")
    assert (current["top1"], current["matched"], current["through_successor"], current["false_claims"]) == (1, 1, 0, 0), current["misses"]
    v2 = evaluate(rows, [Matcher.load(data["v2"])], True, "0.2.0")
    assert (v2["top1"], v2["none"], v2["retired"], v2["false_claims"]) == (1, 2, 0, 0), v2["misses"]
    # with no release (or v0.1.0's), the history is held to v0.1.0's ids: the sprocket paste counts as an entry
    unaware = evaluate(rows, history, False)
    assert (unaware["entry"], unaware["none"], unaware["retired"]) == (2, 1, 0)
    assert {m.entry.id for m in Matcher.load(data["history"]).entries if m.entry.id in ids.values()} == set(ids.values())


@pytest.mark.slow  # runs the bench as a process
def test_the_bench_prints_each_datasets_figures_under_its_release(data):
    run = subprocess.run(
        [sys.executable, str(ROOT / "bench" / "match_corpus.py"), str(data["v1"]), str(data["history"]), "--corpus", str(data["corpus"])],
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=600,
    )
    assert run.returncode == 0, run.stderr
    lines = run.stdout.splitlines()
    assert lines[0] == f"{data['v1']} (release 0.1.0):"
    assert lines[1].startswith("as pasted: top-1 2/2 (100.0%), of them as a match 2; false claims 0 (0 on 0 foreign + 1 none)")
    assert f"{data['history']} (release 0.2.0):" in lines
    after = lines[lines.index(f"{data['history']} (release 0.2.0):") + 1 :]
    assert re.match(r"as pasted: top-1 1/1 \(100\.0%\), .*false claims 0 \(0 on 0 foreign \+ 2 none\).*1 of the top-1 through the retired entry", after[0])
    assert after[1] == "  none in 0.2.0 answered with the retired entry an older release raised it as: 1"
    refused = subprocess.run(
        [sys.executable, str(ROOT / "bench" / "match_corpus.py"), str(data["v1"]), str(data["v2"]), "--old"],
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=600,
    )
    assert refused.returncode == 2 and "Traceback" not in refused.stderr
    assert refused.stderr.splitlines()[-1].endswith("--old and --curated read one catalogue: give one path")


def test_the_real_corpus_names_release_expectations_the_bench_can_read():
    """Every ``expect_on`` names a release and an entry id or "none"; ``current_on`` only a release
    the row has an expectation for and an entry (not "none"); the 0.34.0 ones are the entries
    s45-match read in vLLM 0.34.0's source (the KV cache checks reworded, two V1 runner checks gone)."""
    from match_corpus import CORPUS

    rows = [json.loads(line) for line in CORPUS.read_text(encoding="utf-8").splitlines() if line.strip()]
    on = [r for r in rows if "expect_on" in r]
    assert on and all(r["expect"] not in ("foreign", "none") for r in on)
    for r in on:
        for release, expect in r["expect_on"].items():
            assert re.fullmatch(r"\d+\.\d+\.\d+", release) and (expect == "none" or re.fullmatch("[0-9a-f]{16}", expect)), r
        for release, text in (r.get("current_on") or {}).items():
            assert r["expect_on"].get(release) not in (None, "none") and text.strip(), r
    assert all("expect_on" in r for r in rows if "current_on" in r)
    by_release = sorted({(r["expect"], r["expect_on"]["0.34.0"]) for r in on})
    assert by_release == [
        ("70917094f5c0760d", "c8494c722d8a21d5"),
        ("ba2ab26c0d281e40", "87e6ebaa27291a97"),
        ("ca0b415b71e4ed80", "none"),
        ("e2192569158a748a", "none"),
    ]


def test_an_entry_raised_today_comes_before_a_retired_one_of_the_same_words(data):
    """A paste that fits a live entry and a retired one alike (the template only gained a field
    since): the live one first, though its template has more fields (the tie-break that put the
    retired one first); the retired one still answered, as retired. A crawl of one release is
    ordered as before (nothing there is retired)."""
    from crawler.consume.match import Matcher, match

    old, new = _ids(data["v1"])[START_OLD], _ids(data["v2"])[START_NEW]
    result = match(START_PASTE, [Matcher.load(data["history"])], 5)
    assert [(m.entry.id, m.current, m.how) for m in result.matches] == [(new, True, "full"), (old, False, "full")]
    assert result.matches[1].lineage["retired"] and not result.matches[0].tied
    assert [m.entry.id for m in match(START_PASTE, [Matcher.load(data["v1"])], 5).matches] == [old]


@pytest.mark.slow  # renders a site and runs the box under Node
def test_the_box_puts_the_entry_raised_today_first_as_errcat_match_does(data, tmp_path):
    from tests.consume.test_search_parity import NODE, assert_parity

    if NODE is None:
        pytest.skip("node is not installed (apt-get install nodejs)")
    seen = assert_parity(NODE, data["history"], tmp_path, [START_PASTE, POOL_OLD, POOL_NEW, GEAR_PASTE])
    assert seen["retired"] >= 2 and seen["match"] == 4, seen
