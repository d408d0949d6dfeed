"""The command line's conventions: usage errors are one line, results on stdout, progress on stderr."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import consumer_data as cd
import pytest
from helpers import jsonl_bytes, write_jsonl

ROOT = Path(__file__).resolve().parents[2]

USAGE_ERRORS = [
    (["frobnicate"], "errcat: no such command 'frobnicate' (see 'errcat --help')"),
    (["crawl", "--jobs", "0"], "errcat: invalid value for '--jobs' / '-j': 0 is not in the range x>=1 (see 'errcat crawl --help')"),
    (["--bogus"], "errcat: no such option '--bogus' (see 'errcat --help')"),
    (["show"], "errcat: missing argument 'ID' (see 'errcat show --help')"),
    (["validate", "--engine", "slow"], "errcat: invalid value for '--engine': 'slow' is not one of 'fast', 'reference' (see 'errcat validate --help')"),
    (["curate", "frob"], "errcat: no such command 'frob' (see 'errcat curate --help')"),
    (["curate", "move", "a"], "errcat: missing argument 'NEW' (see 'errcat curate move --help')"),
    (["diff", "a", "b", "--format", "xml"], None),
    (["match", "--limit", "x", "msg"], None),
    (["render", "--data", "d", "extra"], None),
    (["schema", "--out"], None),
]


@pytest.mark.parametrize("args,line", USAGE_ERRORS, ids=[" ".join(a) for a, _ in USAGE_ERRORS])
def test_usage_errors_are_one_line_with_a_hint_and_exit_2(cli, args, line):
    result = cli(*args)
    assert result.exit_code == 2
    assert result.stdout == ""
    (only,) = result.stderr.splitlines()
    assert only.startswith("errcat: ") and only.endswith(" --help')"), only
    if line is not None:
        assert only == line


@pytest.mark.slow
def test_the_installed_command_prints_the_readme_line(tmp_path):
    proc = subprocess.run(
        [sys.executable, "-m", "crawler", "frobnicate"],
        capture_output=True,
        text=True,
        timeout=60,
        cwd=tmp_path,
        env={"PATH": "/usr/bin:/bin", "PYTHONPATH": str(ROOT)},
    )
    assert (proc.returncode, proc.stdout, proc.stderr) == (2, "", "errcat: no such command 'frobnicate' (see 'errcat --help')\n")


def test_help_and_version_still_exit_0(cli):
    assert cli("--help").exit_code == 0 and "errcat builds error catalogues" in cli("--help").stdout
    assert cli("crawl", "--help").exit_code == 0
    assert cli("--version").stdout.startswith("errcat, version ")


# --------------------------------------------------------------------------- validate


def _corrupt_record(dataset: Path, index: int, change) -> None:
    path = sorted((dataset / "errors").glob("*.json"))[index]
    data = json.loads(path.read_text(encoding="utf-8"))
    change(data)
    path.write_text(json.dumps(data), encoding="utf-8")


def _edit_json(path: Path, change) -> None:
    data = json.loads(path.read_text(encoding="utf-8"))
    change(data)
    path.write_text(json.dumps(data), encoding="utf-8")


DATASET_CORRUPTIONS = {
    "record without exception": lambda d: _corrupt_record(d, 0, lambda r: r.pop("exception")),
    "record line as text": lambda d: _corrupt_record(d, 1, lambda r: r["location"].__setitem__("line", "three")),
    "record with a stranger key": lambda d: _corrupt_record(d, 2, lambda r: r.__setitem__("surprise", 1)),
    "record not JSON": lambda d: sorted((d / "errors").glob("*.json"))[0].write_text("{", encoding="utf-8"),
    "record renamed": lambda d: (lambda p: p.rename(p.with_name("0" * 16 + ".json")))(sorted((d / "errors").glob("*.json"))[0]),
    "manifest counts": lambda d: _edit_json(d / "manifest.json", lambda m: m["counts"].__setitem__("files", "many")),
    "index row": lambda d: _edit_json(d / "index.json", lambda i: i["entries"][0].__setitem__("line", None)),
    "search entry": lambda d: _edit_json(d / "search.json", lambda s: s["entries"][0].__setitem__("tokens", "x")),
    "jsonl line": lambda d: write_jsonl(d, ("[]\n" + jsonl_bytes(d).decode("utf-8")).encode("utf-8")),
    "jsonl missing": lambda d: (d / "errors.jsonl.gz").unlink(),
}


def _places(stdout: str) -> set[tuple[str, str]]:
    """(file, pointer) of every problem line; the engines word their messages differently."""
    places = set()
    for line in stdout.splitlines():
        where = line.split(": ", 1)[0]
        file, _, pointer = where.partition("#")
        places.add((file, pointer))
    return places


@pytest.mark.slow
@pytest.mark.parametrize("name", DATASET_CORRUPTIONS)
def test_both_engines_give_the_same_verdicts_on_corrupted_datasets(cli, tmp_path, name):
    dataset = cd.write(tmp_path)
    assert cli("validate", dataset).stdout == cli("validate", dataset, "--engine", "reference").stdout == f"{dataset}: valid\n"
    DATASET_CORRUPTIONS[name](dataset)
    fast, reference = cli("validate", dataset), cli("validate", dataset, "--engine", "reference")
    assert fast.exit_code == reference.exit_code == 1
    assert _places(fast.stdout) == _places(reference.stdout)
    assert fast.stdout.splitlines()[-1] == reference.stdout.splitlines()[-1]  # "<dataset>: N problem(s)"


def test_validate_prints_problems_and_verdict_on_stdout(cli, tmp_path):
    dataset = cd.write(tmp_path)
    result = cli("validate", tmp_path / "out")
    assert result.exit_code == 0 and result.stdout == f"{dataset}: valid\n"
    assert f"{dataset}: valid" not in result.stderr
    assert result.stderr.splitlines()[-1].startswith(f"validating {dataset}: ")  # progress, on stderr
    DATASET_CORRUPTIONS["record without exception"](dataset)
    result = cli("validate", tmp_path / "out")
    assert result.exit_code == 1
    assert result.stdout.splitlines()[-1] == f"{dataset}: 1 problem(s)"
    assert "is a required property" in result.stdout and "required property" not in result.stderr
    assert "problem(s)" not in result.stderr


@pytest.mark.slow
@pytest.mark.parametrize(
    "command, option, module, registry",
    [
        ("diff", "--format", "crawler.versions.formats", "FORMATS"),
        ("validate", "--engine", "crawler.publish.validate", "ENGINES"),
    ],
)
def test_a_choice_offers_its_stage_registry_and_importing_the_cli_loads_no_stage(cli, command, option, module, registry):
    import importlib

    names = list(getattr(importlib.import_module(module), registry))
    result = cli(command, "--help")
    assert f"{option} [{'|'.join(names)}]" in result.output
    refused = cli(command, "x", "y", option, "nope") if command == "diff" else cli(command, "x", option, "nope")
    assert refused.exit_code == 2 and ", ".join(repr(n) for n in names) in refused.output
    # The registry is read when the command needs it, not when errcat starts.
    code = f"import sys, crawler.cli; assert {module!r} not in sys.modules and 'pydantic' not in sys.modules"
    subprocess.run([sys.executable, "-c", code], check=True, timeout=60)


@pytest.mark.parametrize("command", ["sync", "crawl", "history", "adopt"])
def test_upstream_help_names_the_default_the_config_here_gives(cli, tmp_path, monkeypatch, command):
    """--help said "default: vllm" under an errcat.toml whose default is another upstream."""
    (tmp_path / "errcat.toml").write_text('default = "acme"\n[upstreams.acme]\nurl = "https://github.com/acme/widgets"\n')
    monkeypatch.chdir(tmp_path)
    text = " ".join(cli(command, "--help").output.split())
    assert "default: acme, the `default` of" in text and "default: vllm" not in text
    monkeypatch.chdir(tmp_path.parent)  # no errcat.toml: vllm, saying why
    assert "default: vllm (no errcat.toml here)" in " ".join(cli(command, "--help").output.split())
