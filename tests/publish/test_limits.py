"""Limits on what one upstream can make a dataset hold (``models.Limits``).

A hostile or runaway upstream (one generated 1.29 MB file made 28,000 entries, a 367 MB dataset
and a 126 MB errors.jsonl, over GitHub's 100 MB file limit) must not make a dataset that cannot
be published: what goes over a limit is skipped, named in the manifest with the reason, and the
crawl, history and sync succeed.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from helpers import CHECK_CODE as SMALL
from helpers import jsonl_bytes

from crawler.model.records import Limits
from crawler.publish import writer as output

ARGS = ["--name", "acme/widgets", "--include", "pkg/**/*.py"]
SMALL_TEMPLATES = {"x must be positive, got {x}", "x is far too large"}


def generated(count: int, words: int = 1, tag: str = "") -> str:
    """A module of ``count`` functions, each raising its own message of ``words`` filler words."""
    filler = " ".join(f"w{i}" for i in range(words))
    return "".join(f"def f{i}(x):\n    raise ValueError(f'{tag}case {i}: {filler} {{x}}')\n\n\n" for i in range(count))


def crawl(cli, repo, out: Path, ref: str = "v1", *extra: str):
    return cli("crawl", "--repo", repo.path, "--ref", ref, *ARGS, "--out", out, *extra)


def dataset_files(dataset: Path) -> dict[str, int]:
    return {p.relative_to(dataset).as_posix(): p.stat().st_size for p in dataset.rglob("*") if p.is_file()}


def manifest(dataset: Path) -> dict:
    return json.loads((dataset / "manifest.json").read_bytes())


def templates(dataset: Path) -> set[str]:
    return {json.loads(line)["message"]["text"] for line in jsonl_bytes(dataset).splitlines()}


@pytest.mark.slow
def test_a_file_with_more_sites_than_the_limit_is_skipped(fixture_repo, cli, tmp_path):
    fixture_repo.commit({"pkg/__init__.py": "", "pkg/ok.py": SMALL, "pkg/gen.py": generated(30)}, tag="v1")
    out = tmp_path / "out"
    dataset = out / "acme" / "widgets"
    assert crawl(cli, fixture_repo, out).exit_code == 0
    assert len(templates(dataset)) == 32 and manifest(dataset)["limits"] == Limits().model_dump()
    result = crawl(cli, fixture_repo, out, "v1", "--max-file-sites", "10")
    assert result.exit_code == 0 and "wrote" in result.stderr, result.output  # other limits: not up to date
    m = manifest(dataset)
    # (extraction stops at the 11th site: how many more the file holds is not counted)
    assert m["skipped"] == [{"path": "pkg/gen.py", "reason": "more than 10 raise and assert sites, over the limit of 10 per file (max_file_sites)"}]
    assert m["limits"]["max_file_sites"] == 10
    assert {k: m["counts"][k] for k in ("files", "parsed", "skipped", "sites", "entries")} == {"files": 3, "parsed": 2, "skipped": 1, "sites": 2, "entries": 2}
    assert templates(dataset) == SMALL_TEMPLATES
    assert cli("validate", out).exit_code == 0


@pytest.mark.slow
def test_limits_come_from_the_upstream_unless_the_crawl_says_otherwise(fixture_repo, cli, tmp_path):
    fixture_repo.commit({"pkg/__init__.py": "", "pkg/ok.py": SMALL, "pkg/gen.py": generated(30)}, tag="v1")
    config = tmp_path / "errcat.toml"
    config.write_text(
        'default = "w"\n[upstreams.w]\nurl = "https://github.com/acme/widgets"\ninclude = ["pkg/**/*.py"]\nmax_file_sites = 10\nmax_output_bytes = 900000\n'
    )
    out = tmp_path / "out"
    dataset = out / "acme" / "widgets"
    assert cli("crawl", "--repo", fixture_repo.path, "--ref", "v1", "--config", config, "--out", out).exit_code == 0
    assert manifest(dataset)["limits"] == {"max_file_bytes": 2_000_000, "max_file_sites": 10, "max_output_bytes": 900_000}
    assert [s["path"] for s in manifest(dataset)["skipped"]] == ["pkg/gen.py"]
    result = cli("crawl", "--repo", fixture_repo.path, "--ref", "v1", "--config", config, "--out", out, "--max-file-sites", "50")
    assert result.exit_code == 0 and manifest(dataset)["skipped"] == [] and len(templates(dataset)) == 32
    config.write_text(config.read_text() + "max_file_bytes = 0\n")
    bad = cli("crawl", "--repo", fixture_repo.path, "--ref", "v1", "--config", config, "--out", out)
    assert bad.exit_code == 2 and "max_file_bytes" in bad.stderr and len(bad.stderr.strip().splitlines()) == 1


@pytest.mark.slow
@pytest.mark.parametrize("jobs", ["1", "2"])
def test_no_file_of_the_dataset_is_over_the_output_limit(fixture_repo, cli, tmp_path, monkeypatch, jobs):
    """One generated file holds most of the bytes: it, and only it, is left out."""
    monkeypatch.setattr(output, "PARALLEL_MIN_RECORDS", 1)  # the forked writers too, on a small dataset
    small = {f"pkg/m{i}.py": SMALL.replace("positive", f"positive ({i})") for i in range(8)}
    fixture_repo.commit({"pkg/__init__.py": "", **small, "pkg/gen.py": generated(120, words=60)}, tag="v1")
    out, fresh = tmp_path / "out", tmp_path / "fresh"
    assert crawl(cli, fixture_repo, fresh, "v1", "--jobs", jobs).exit_code == 0
    sizes = dataset_files(fresh / "acme" / "widgets")
    largest, second = sorted(sizes.values())[-1], sorted(sizes.values())[-2]
    limit = (largest + second) // 2  # the largest file alone is over it
    over = sorted(name for name, size in sizes.items() if size > limit)
    assert over == ["search.json"]  # errors.jsonl.gz is compressed: the generated lines shrink most

    result = crawl(cli, fixture_repo, out, "v1", "--jobs", jobs, "--max-output-bytes", str(limit))
    assert result.exit_code == 0, result.output
    assert "search.json would be" in result.stderr and "leaving out the entries of 1 more source file(s)" in result.stderr
    dataset = out / "acme" / "widgets"
    assert max(dataset_files(dataset).values()) <= limit
    m = manifest(dataset)
    assert m["skipped"] == [{"path": "pkg/gen.py", "reason": f"its entries would take search.json over {limit} bytes (max_output_bytes)"}]
    assert templates(dataset) == {f"x must be positive ({i}), got {{x}}" for i in range(8)} | {"x is far too large"}
    assert m["counts"]["entries"] == 9 and m["counts"]["parsed"] == 9 and m["counts"]["skipped"] == 1
    assert cli("validate", out).exit_code == 0


@pytest.mark.slow
def test_one_record_over_the_output_limit(fixture_repo, cli, tmp_path):
    """A message long enough that its record alone is over the limit: its file is skipped."""
    fixture_repo.commit({"pkg/__init__.py": "", "pkg/ok.py": SMALL, "pkg/long.py": generated(1, words=3000)}, tag="v1")
    out = tmp_path / "out"
    result = crawl(cli, fixture_repo, out, "v1", "--max-output-bytes", "40000")
    assert result.exit_code == 0, result.output
    dataset = out / "acme" / "widgets"
    assert max(dataset_files(dataset).values()) <= 40_000
    (skip,) = manifest(dataset)["skipped"]
    assert skip["path"] == "pkg/long.py" and skip["reason"].startswith("its entries would take ")
    assert templates(dataset) == SMALL_TEMPLATES


@pytest.mark.slow
def test_what_no_skip_can_shrink_is_one_line(fixture_repo, cli, tmp_path):
    fixture_repo.commit({"pkg/__init__.py": "", "pkg/ok.py": SMALL}, tag="v1")
    result = crawl(cli, fixture_repo, tmp_path / "out", "v1", "--max-output-bytes", "100")
    assert result.exit_code == 1 and not (tmp_path / "out" / "acme" / "widgets").exists()
    lines = result.stderr.strip().splitlines()
    assert lines[-1].startswith("errcat: ") and " would be " in lines[-1] and "cannot make it smaller" in lines[-1]
    assert "Traceback" not in result.stderr


@pytest.mark.slow
def test_history_leaves_out_retired_entries_first(fixture_repo, cli, tmp_path):
    """Retired records pile up over releases: a history over the limit drops the largest retired
    ones first and counts them; every live entry stays."""
    fixture_repo.commit({"pkg/__init__.py": "", "pkg/ok.py": SMALL, "pkg/gen.py": generated(40, words=40, tag="old ")}, tag="v1.0")
    fixture_repo.commit({"pkg/gen.py": generated(40, words=40, tag="new ")}, tag="v2.0")
    scratch = tmp_path / "scratch"
    assert crawl(cli, fixture_repo, scratch, "v2.0").exit_code == 0
    crawled = dataset_files(scratch / "acme" / "widgets")["search.json"]
    limit = crawled + crawled // 2  # room for v2.0's entries with their history, not for all of v1.0's too
    config = tmp_path / "errcat.toml"
    config.write_text(f'default = "w"\n[upstreams.w]\nurl = "https://github.com/acme/widgets"\ninclude = ["pkg/**/*.py"]\nmax_output_bytes = {limit}\n')
    out = tmp_path / "out"
    result = cli("history", "--repo", fixture_repo.path, "--config", config, "--out", out, "v1.0", "v2.0")
    assert result.exit_code == 0, result.output
    dataset = out / "acme" / "widgets"
    assert max(dataset_files(dataset).values()) <= limit
    m = manifest(dataset)
    rows = [json.loads(line) for line in jsonl_bytes(dataset).splitlines()]
    live = [r for r in rows if not r["history"]["retired"]]
    assert len(live) == 42 == m["counts"]["entries"]  # every live entry
    assert 0 < m["counts"]["omitted"] < 40 and m["counts"]["retired"] == 40 - m["counts"]["omitted"]
    assert cli("validate", out).exit_code == 0


def test_the_help_states_the_defaults(cli):
    text = " ".join(cli("crawl", "--help").stdout.split())
    defaults = Limits()
    for value in (defaults.max_file_bytes, defaults.max_file_sites, defaults.max_output_bytes):
        assert f"default: ({value}" in text
