"""The command line's conventions: usage errors are one line, results on stdout, progress on stderr."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent

USAGE_ERRORS = [
    (["frobnicate"], "errcat: no such command 'frobnicate' (see 'errcat --help')"),
    (["crawl", "--jobs", "0"], "errcat: invalid value for '--jobs' / '-j': 0 is not in the range x>=1 (see 'errcat crawl --help')"),
    (["--bogus"], "errcat: no such option '--bogus' (see 'errcat --help')"),
    (["show"], "errcat: missing argument 'ID' (see 'errcat show --help')"),
    (["validate", "--engine", "slow"], "errcat: invalid value for '--engine': 'slow' is not one of 'reference', 'fast' (see 'errcat validate --help')"),
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


def test_the_installed_command_prints_the_readme_line(tmp_path):
    proc = subprocess.run([sys.executable, "-m", "crawler", "frobnicate"], capture_output=True, text=True, timeout=60,
                          cwd=tmp_path, env={"PATH": "/usr/bin:/bin", "PYTHONPATH": str(ROOT)})
    assert (proc.returncode, proc.stdout, proc.stderr) == (2, "", "errcat: no such command 'frobnicate' (see 'errcat --help')\n")


def test_help_and_version_still_exit_0(cli):
    assert cli("--help").exit_code == 0 and "errcat builds error catalogues" in cli("--help").stdout
    assert cli("crawl", "--help").exit_code == 0
    assert cli("--version").stdout.startswith("errcat, version ")
