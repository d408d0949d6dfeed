"""`errcat validate` of a hostile errors.jsonl.gz: read a line at a time, and the problems kept
and printed capped (the first ``MAX_PROBLEMS`` and a count), so memory stays bounded."""

from __future__ import annotations

import subprocess
import sys
import textwrap
import zlib

import pytest
from helpers import CHECK_CODE

from crawler.publish import validate

#: 256 MiB of "0\n": 128 million lines, each valid JSON and an invalid record. Kept as a list of
#: lines and one problem per line, that is over 10 GB; the child may have 1 GiB of address space.
CHILD = textwrap.dedent("""
    import resource, sys
    resource.setrlimit(resource.RLIMIT_AS, (1 << 30, 1 << 30))
    from crawler.cli.main import main
    main(["validate", sys.argv[1]])
""")


def _zeros(path, size):
    packer = zlib.compressobj(1, zlib.DEFLATED, 16 + zlib.MAX_WBITS)
    chunk = b"0\n" * (1 << 19)
    with path.open("wb") as fh:
        for _ in range(size // len(chunk)):
            fh.write(packer.compress(chunk))
        fh.write(packer.flush())


@pytest.mark.slow
def test_validate_of_a_quarter_gib_of_bad_lines_keeps_the_first_problems_and_stops(fixture_repo, cli, tmp_path):
    fixture_repo.commit({"pkg/__init__.py": "", "pkg/a.py": CHECK_CODE}, tag="v1.9")
    args = ["--name", "acme/widgets", "--include", "pkg/**/*.py", "--ref", "v1.9", "--out", tmp_path / "o"]
    assert cli("crawl", "--repo", fixture_repo.path, *args).exit_code == 0
    (dataset,) = {p.parent for p in (tmp_path / "o").rglob("manifest.json")}
    _zeros(dataset / "errors.jsonl.gz", 256 << 20)
    try:  # (a hang guard only: the check stops after the first problems, well within a second)
        done = subprocess.run([sys.executable, "-c", CHILD, str(tmp_path / "o")], capture_output=True, text=True, timeout=600)
    except subprocess.TimeoutExpired:
        raise AssertionError("validate read on past its problems") from None
    assert done.returncode == 1, done.stderr[-2000:]
    assert "Traceback" not in done.stderr and "MemoryError" not in done.stderr
    lines = done.stdout.splitlines()
    shown = [line for line in lines if line.startswith(f"{dataset}/errors.jsonl.gz:")]
    assert len(shown) == validate.MAX_PROBLEMS and shown[0].startswith(f"{dataset}/errors.jsonl.gz:1")
    assert f"{dataset}: errors.jsonl.gz not checked past line" in done.stdout
    assert len(lines) <= validate.MAX_PROBLEMS + 3  # the problems, what was left out, the verdict
    assert lines[-1].startswith(f"{dataset}: ") and lines[-1].endswith(" problem(s)")


def test_the_problems_past_the_cap_are_counted(tmp_path):
    problems = validate.Problems()
    problems += [validate.Problem("f", "", str(n)) for n in range(validate.MAX_PROBLEMS + 5)]
    problems.append(validate.Problem("f", "", "one more"))
    assert (len(problems), problems.more, problems.total) == (validate.MAX_PROBLEMS, 6, validate.MAX_PROBLEMS + 6)
