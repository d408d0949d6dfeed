"""Issue #5: untrusted upstreams and bad input. Keep working, lose nothing, run nothing.

Every case is exercised through the real pipeline where it can be (the CLI in-process, or as a
subprocess when the case needs a real process: ``-W error``, SIGKILL). The docs' Guarantees
page (docs/explanation/guarantees.md) names these tests; ``tests/test_docs.py`` holds it to them.
"""

from __future__ import annotations

import ast
import gzip
import json
import os
import random
import re
import signal
import subprocess
import sys
import time
import tomllib
from importlib import metadata
from pathlib import Path

import pytest
from helpers import git as _git
from helpers import jsonl_bytes, run_and_kill

from crawler.catalogue import entries as catalogue
from crawler.extract.visitor import extract_file
from crawler.source import git as source_git
from crawler.source import snapshot as source_snapshot

ROOT = Path(__file__).resolve().parent.parent
PYTHON = sys.executable

# --------------------------------------------------------------------------- helpers


def make_repo(path: Path, files: dict[str, bytes | str], tag: str = "v1") -> Path:
    path.mkdir(parents=True, exist_ok=True)
    if not (path / ".git").exists():
        git(path, "init", "-q")
    for rel, content in files.items():
        target = path / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(content if isinstance(content, bytes) else content.encode())
    git(path, "add", "-A")
    git(path, "commit", "-q", "-m", tag)
    git(path, "tag", tag)
    return path


def crawl_args(repo: Path, out: Path, ref: str = "v1", *extra: str) -> list[str]:
    return ["crawl", "--repo", str(repo), "--ref", ref, "--name", "acme/widgets", "--include", "pkg/**/*.py", "--out", str(out), *extra]


def read_tree(directory: Path) -> dict[str, bytes]:
    if not directory.exists():
        return {}
    return {p.relative_to(directory).as_posix(): p.read_bytes() for p in sorted(directory.rglob("*")) if p.is_file()}


def strays(out: Path) -> list[str]:
    parent = out / "acme"
    return sorted(p.name for p in parent.iterdir() if p.name.startswith(".")) if parent.exists() else []


def records(dataset: Path) -> dict[str, dict]:
    rows = [json.loads(line) for line in jsonl_bytes(dataset).splitlines()]
    return {r["message"]["text"]: r for r in rows}


def subprocess_env(cache: Path, **extra: str) -> dict[str, str]:
    env = dict(os.environ, PYTHONPATH=str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", ""), ERRCAT_CACHE_DIR=str(cache))
    env.update(extra)
    return env


def one_line_error(result, code: int = 2) -> str:
    assert result.exit_code == code, result.output
    lines = result.stderr.strip().splitlines()  # progress lines may come first
    errors = [line for line in lines if line.startswith("errcat: ")]
    assert len(errors) == 1 and lines[-1] == errors[0] and "Traceback" not in result.stderr, result.stderr
    return errors[0]


# --------------------------------------------------------------------------- bad files (the sizes)

CONCAT_TERMS = 2500
CONCAT = (
    "def f(x):\n    raise ValueError('start' + "
    + " + ".join(f"'t{i}' + x" for i in range(CONCAT_TERMS // 2))
    + ")\n\n\ndef g():\n    raise KeyError('next to the long one')\n"
)

BAD_FILES: dict[str, tuple[bytes, str]] = {
    # name: (bytes, expected) -- expected is "record:<template text>" or "skip:<reason prefix>"
    "nul": (b"raise ValueError('a')\x00\n", "skip:invalid source: null bytes"),
    "invalid_utf8": (b"raise ValueError('caf\xe9')\n", "skip:decode error: invalid or missing encoding declaration"),
    "cookie": ("# -*- coding: latin-1 -*-\nraise ValueError('caf\u00e9')\n".encode("latin-1"), "record:caf\u00e9"),
    "bom_and_cookie": (b"\xef\xbb\xbf# coding: latin-1\nraise ValueError('x')\n", "skip:decode error: encoding problem: utf-8"),
    "invalid_escape": (b"raise ValueError('no \\d here')\n", "record:no \\d here"),
    "parens_5000": (b"x = " + b"(" * 5000 + b"1" + b")" * 5000 + b"\n", "skip:syntax error: line 1: too many nested parentheses"),
    "plus_20000": (b"x = x" + b" + 1" * 20000 + b"\n", "skip:too deeply nested"),
    "unary_100000": (b"x = " + b"-" * 100000 + b"1\n", "skip:too deeply nested or too complex"),
    "concat_2500": (CONCAT.encode(), "record:start" + "".join(f"t{i}{{x}}" for i in range(CONCAT_TERMS // 2))),
    "surrogate": (b"raise ValueError('bad \\udc80 here')\n", "record:bad \\udc80 here"),
}


@pytest.mark.parametrize("name", list(BAD_FILES))
def test_bad_file_gives_a_record_or_a_skip(name: str) -> None:
    data, expected = BAD_FILES[name]
    r = extract_file(f"pkg/{name}.py", data)
    kind, _, text = expected.partition(":")
    if kind == "skip":
        assert r["status"] == "skipped" and r["reason"].startswith(text) and r["sites"] == [], r["reason"]
    else:
        assert r["status"] == "ok", r["reason"]
        assert text in [s["template"]["text"] for s in r["sites"]]


def test_a_2500_term_concatenation_keeps_every_term_and_the_rest_of_the_file() -> None:
    r = extract_file("pkg/concat.py", CONCAT.encode())
    long, other = r["sites"]
    assert len(long["template"]["fields"]) == CONCAT_TERMS // 2 and long["template"]["form"] == "concat"
    message = "start" + "".join(f"t{i}{i}" for i in range(CONCAT_TERMS // 2))  # what f(x) raises, shown with x == i
    assert re.fullmatch(long["template"]["pattern"], message)
    assert other["template"]["text"] == "next to the long one"


def test_lone_surrogates_are_escaped_in_records_and_patterns_still_match() -> None:
    code = b'def f():\n    """Doc \\udc80."""\n    raise ValueError("bad \\udc80 " + str(1))\n'
    (site,) = extract_file("pkg/s.py", code)["sites"]
    template = site["template"]
    assert template["text"] == "bad \\udc80 {str(1)}"
    assert site["facts"]["docstring"] == "Doc \\udc80."
    assert re.fullmatch(template["pattern"], "bad \udc80 1")  # the runtime message
    json.dumps(site, ensure_ascii=False).encode("utf-8")  # no lone surrogate anywhere


@pytest.mark.slow
def test_warnings_as_errors_lose_nothing(tmp_path: Path) -> None:
    """``python -W error`` / ``PYTHONWARNINGS=error``: invalid escapes in crawled code warn at parse time."""
    repo = make_repo(
        tmp_path / "up",
        {
            "pkg/__init__.py": "",
            "pkg/escapes.py": 'import re\n\ndef f(x):\n    if not re.match("\\d+", x):\n        raise ValueError("bad \\d value %s" % x)\n',
            "pkg/generic.py": "type Alias = int\n\n\ndef g[T](x: T) -> T:\n    raise TypeError(f'no {x!r} \\d')\n",
        },
    )
    plain = subprocess.run([PYTHON, "-m", "crawler", *crawl_args(repo, tmp_path / "a")], env=subprocess_env(tmp_path / "c1"), capture_output=True, timeout=120)
    strict = subprocess.run(
        [PYTHON, "-W", "error", "-m", "crawler", *crawl_args(repo, tmp_path / "b")],
        env=subprocess_env(tmp_path / "c2", PYTHONWARNINGS="error"),
        capture_output=True,
        timeout=120,
    )
    assert plain.returncode == 0 and strict.returncode == 0, strict.stderr.decode()
    assert strict.stdout.decode().startswith("files 3, parsed 3, skipped 0, sites 2")
    assert read_tree(tmp_path / "a") == read_tree(tmp_path / "b")


# --------------------------------------------------------------------------- everything at once

SECRET = "SECRET-outside-the-repo"


@pytest.fixture
def hostile_repo(tmp_path: Path) -> Path:
    """One commit holding every bad file and odd entry at once, next to good files."""
    (tmp_path / "secret.py").write_text(f"raise ValueError('{SECRET}')\n")
    r = tmp_path / "up"
    files: dict[str, bytes | str] = {f"pkg/{name}.py": data for name, (data, _) in BAD_FILES.items()}
    files.update(
        {
            "pkg/__init__.py": "",
            "pkg/good.py": "def ok(x):\n    if x < 0:\n        raise ValueError(f'negative: {x}')\n",
            "pkg/newer_syntax.py": "type Alias = int\n\n\ndef g[T](x: T) -> T:\n    raise TypeError('generic')\n",
            "pkg/big.py": "x = 1\n" * 40_000,
        }
    )
    make_repo(r, files, tag="base")
    os.symlink("good.py", r / "pkg" / "link.py")
    os.symlink(str(tmp_path / "secret.py"), r / "pkg" / "outside.py")
    os.symlink("../../secret.py", r / "pkg" / "dotdot.py")
    git(r, "add", "-A")
    blob = git(r, "hash-object", "-w", "--stdin", input=b"raise OSError('odd path')\n")
    info = b"".join(
        b"%s %s\t%s\0" % (mode, sha.encode(), path)
        for mode, sha, path in [
            (b"160000", "1" * 40, b"pkg/vendored.py"),
            (b"100644", blob, b"pkg/bad\xff.py"),
            (b"100644", blob, b"pkg/new\nline.py"),
        ]
    )
    git(r, "update-index", "-z", "--index-info", input=info)
    git(r, "commit", "-q", "-m", "odd entries")
    git(r, "tag", "v1")
    return r


EXPECTED_SKIPPED = [
    {"path": "pkg/bad\\xff.py", "reason": "path is not valid UTF-8"},
    {"path": "pkg/big.py", "reason": "over size limit (240000 > 200000 bytes)"},
    {"path": "pkg/bom_and_cookie.py", "reason": "decode error: encoding problem: utf-8"},
    {"path": "pkg/dotdot.py", "reason": "symlink"},
    {"path": "pkg/invalid_utf8.py", "reason": "decode error: invalid or missing encoding declaration"},
    {"path": "pkg/link.py", "reason": "symlink"},
    {"path": "pkg/new\\x0aline.py", "reason": "path contains control characters"},
    {"path": "pkg/nul.py", "reason": "invalid source: null bytes"},
    {"path": "pkg/outside.py", "reason": "symlink"},
    {"path": "pkg/parens_5000.py", "reason": "syntax error: line 1: too many nested parentheses"},
    {"path": "pkg/plus_20000.py", "reason": "too deeply nested"},
    {"path": "pkg/unary_100000.py", "reason": "too deeply nested or too complex (parser MemoryError)"},
    {"path": "pkg/vendored.py", "reason": "gitlink (submodule)"},
]


@pytest.mark.slow
def test_a_repository_of_every_bad_file_at_once(hostile_repo: Path, cli, tmp_path: Path) -> None:
    out = tmp_path / "out"
    # --jobs 2: the extraction runs in worker processes (deep input must not kill them)
    result = cli(*crawl_args(hostile_repo, out, "v1", "--jobs", "2", "--max-file-bytes", "200000"))
    assert result.exit_code == 0, result.output
    dataset = out / "acme" / "widgets"
    manifest = json.loads((dataset / "manifest.json").read_bytes())
    assert manifest["skipped"] == EXPECTED_SKIPPED
    counts = manifest["counts"]
    assert counts["files"] == 20 and counts["skipped"] == len(EXPECTED_SKIPPED) and counts["parsed"] == 7
    by_text = records(dataset)
    for text in [
        "negative: {x}",
        "generic",
        "caf\u00e9",
        "no \\d here",
        "bad \\udc80 here",
        "next to the long one",
        "start" + "".join(f"t{i}{{x}}" for i in range(CONCAT_TERMS // 2)),
    ]:
        assert text in by_text, text
    for path in dataset.rglob("*"):
        if path.is_file():
            data = gzip.decompress(path.read_bytes()) if path.name.endswith(".gz") else path.read_bytes()
            data.decode("utf-8")  # strict: no lone surrogates, no odd bytes
            assert SECRET.encode() not in data and b"NaN" not in data
    assert cli("validate", out).exit_code == 0


def test_max_file_bytes_is_a_crawl_option(tmp_path: Path, cli) -> None:
    repo = make_repo(tmp_path / "up", {"pkg/a.py": "raise ValueError('a')\n", "pkg/b.py": "raise ValueError('bb')\n"})
    out = tmp_path / "out"
    assert cli(*crawl_args(repo, out, "v1", "--max-file-bytes", "22")).exit_code == 0
    manifest = json.loads((out / "acme" / "widgets" / "manifest.json").read_bytes())
    assert manifest["skipped"] == [{"path": "pkg/b.py", "reason": "over size limit (23 > 22 bytes)"}]
    assert list(records(out / "acme" / "widgets")) == ["a"]
    assert cli(*crawl_args(repo, out, "v1", "--max-file-bytes", "0")).exit_code == 2


@pytest.mark.slow
def test_a_worker_process_that_dies_loses_only_its_file(tmp_path: Path, cli, monkeypatch: pytest.MonkeyPatch) -> None:
    """A crash no ``except`` can catch (a segfault in C code, the OOM killer) inside a worker."""
    from crawler.extract import runner as engine

    real = engine.extract_file

    def crashing(path: str, data: bytes, *settings) -> dict:
        if b"CRASH" in data:
            os.kill(os.getpid(), signal.SIGKILL)
        return real(path, data, *settings)

    monkeypatch.setattr(engine, "extract_file", crashing)  # the workers are forked: they see it
    files = {f"pkg/m{i}.py": f"raise ValueError('m{i}')\n" for i in range(12)}
    files["pkg/m5.py"] = "# CRASH\nraise ValueError('m5')\n"
    repo = make_repo(tmp_path / "up", files)
    out = tmp_path / "out"
    result = cli(*crawl_args(repo, out, "v1", "--jobs", "2"))
    assert result.exit_code == 0, result.output
    manifest = json.loads((out / "acme" / "widgets" / "manifest.json").read_bytes())
    assert manifest["skipped"] == [{"path": "pkg/m5.py", "reason": engine.DIED}]
    assert sorted(records(out / "acme" / "widgets")) == sorted(f"m{i}" for i in range(12) if i != 5)


# --------------------------------------------------------------------------- git: refuse early, run nothing


@pytest.mark.parametrize(
    "args",
    [
        ["--repo", "ext::sh -c touch% /tmp/pwned", "--ref", "v1"],
        ["--repo", "file:///etc", "--ref", "v1"],
        ["--repo", "ssh://git@github.com/a/b", "--ref", "v1"],
        ["--repo", "git+ssh://github.com/a/b", "--ref", "v1"],
        ["--repo", "git@github.com:a/b.git", "--ref", "v1"],
        ["--repo", "-uhttps://github.com/a/b", "--ref", "v1"],
        ["--repo=--upload-pack=touch /tmp/pwned", "--ref", "v1"],
        ["--repo", "https://github.com/a/b", "--ref=--upload-pack=touch /tmp/pwned"],
        ["--repo", "https://github.com/a/b", "--ref=-uevil"],
        ["--repo", "https://github.com/a/b", "--ref", "v1\udcff"],
    ],
)
def test_refused_before_git_runs_with_one_line(args: list[str], cli, no_git: None, tmp_path: Path) -> None:
    result = cli("crawl", *args, "--out", tmp_path / "out", "--cache-dir", tmp_path / "cache")
    err = one_line_error(result)
    assert "refusing" in err
    assert not (tmp_path / "out").exists() and not (tmp_path / "cache").exists()


def test_the_crawler_never_uses_gitpython_and_pins_its_newest_line() -> None:
    for path in sorted((ROOT / "crawler").glob("*.py")):
        for node in ast.walk(ast.parse(path.read_text())):
            names = [a.name for a in node.names] if isinstance(node, ast.Import) else ([node.module or ""] if isinstance(node, ast.ImportFrom) else [])
            assert not any(n == "git" or n.startswith("git.") for n in names), path
    for path in [*ROOT.glob("crawler/*.py"), *ROOT.glob("tests/*.py"), *ROOT.glob("bench/*.py")]:
        text = path.read_text()
        assert not re.search(r"allow_unsafe_(protocols|options)\s*=\s*True", text), path
    deps = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["dependencies"]
    gitpython = [d for d in deps if d.lower().startswith("gitpython")]
    assert gitpython and ">=3.1.45" in gitpython[0]
    version = tuple(int(x) for x in metadata.version("gitpython").split(".")[:3])
    assert version >= (3, 1, 45)


def test_every_git_call_is_hardened(tmp_path: Path, cli, monkeypatch: pytest.MonkeyPatch) -> None:
    repo = make_repo(tmp_path / "up", {f"pkg/m{i}.py": f"raise ValueError('m{i}')\n" for i in range(10)})
    calls: list[tuple[list[str], dict, object]] = []
    real_run, real_popen = subprocess.run, subprocess.Popen

    def run(cmd, *a, **k):
        calls.append((list(cmd), k.get("env"), k.get("timeout")))
        return real_run(cmd, *a, **k)

    def popen(cmd, *a, **k):
        calls.append((list(cmd), k.get("env"), "watchdog"))
        return real_popen(cmd, *a, **k)

    monkeypatch.setattr(source_snapshot.subprocess, "run", run)
    monkeypatch.setattr(source_snapshot.subprocess, "Popen", popen)
    assert cli(*crawl_args(repo, tmp_path / "out", "v1", "--jobs", "1")).exit_code == 0
    git_calls = [c for c in calls if c[0][0] == "git"]
    assert git_calls and len(git_calls) == len(calls)
    for cmd, env, timeout in git_calls:
        assert env is not None and timeout is not None, cmd
        assert env["GIT_ALLOW_PROTOCOL"] in ("https", "https:file") and env["GIT_TERMINAL_PROMPT"] == "0"
        assert env["GIT_CONFIG_NOSYSTEM"] == "1" and env["GIT_CONFIG_GLOBAL"] == os.devnull
        assert env["GIT_LFS_SKIP_SMUDGE"] == "1"
        assert not any(k.startswith("GIT_") and k not in source_git._git_env(True) and k != "GIT_CEILING_DIRECTORIES" for k in env)
        settings = [cmd[i + 1] for i, a in enumerate(cmd) if a == "-c"]
        assert "core.hooksPath=/dev/null" in settings and "protocol.allow=never" in settings
        args = cmd[1:]
        while args[0] in ("-c", "-C") or args[0].startswith("--git-dir="):
            args = args[1:] if args[0].startswith("--") else args[2:]
        sub = args
        assert sub[0] in ("rev-parse", "ls-tree", "cat-file", "config"), cmd  # no checkout, clone, submodule
        assert sub[0] != "config" or sub[1:3] == ["--local", "--get"], cmd  # config is only ever read
        assert "--filters" not in cmd and "--textconv" not in cmd


def test_hostile_repository_config_runs_nothing(tmp_path: Path, cli) -> None:
    marker = tmp_path / "ran"
    repo = make_repo(tmp_path / "up", {"pkg/a.py": "raise ValueError('raw blob')\n", "pkg/big.bin.py": "x = 1\n"})
    script = tmp_path / "evil.sh"
    script.write_text(f"#!/bin/sh\ntouch {marker}\ncat\n")
    script.chmod(0o755)
    (repo / ".gitattributes").write_text("*.py filter=evil diff=evil\n")
    git(repo, "add", ".gitattributes")
    git(repo, "commit", "-q", "-m", "attributes")
    git(repo, "tag", "v2")
    hooks = repo / ".git" / "hooks"
    hooks.mkdir(exist_ok=True)
    for hook in ("post-checkout", "reference-transaction", "post-index-change", "fsmonitor-watchman"):
        (hooks / hook).write_text(script.read_text())
        (hooks / hook).chmod(0o755)
    with open(repo / ".git" / "config", "a") as fh:
        fh.write(
            f"[core]\n\tfsmonitor = {script}\n\thooksPath = {hooks}\n\tsshCommand = {script}\n\tpager = {script}\n"
            f"\talternateRefsCommand = {script}\n\tgitProxy = {script}\n"
            f'[filter "evil"]\n\tsmudge = {script}\n\tclean = {script}\n\tprocess = {script}\n\trequired = true\n'
            f'[diff "evil"]\n\ttextconv = {script}\n[uploadpack]\n\tpackObjectsHook = {script}\n'
            f"[gpg]\n\tprogram = {script}\n[log]\n\tshowSignature = true\n[credential]\n\thelper = !{script}\n"
            f'[protocol "ext"]\n\tallow = always\n'
        )
    out = tmp_path / "out"
    result = cli(*crawl_args(repo, out, "v2"))
    assert result.exit_code == 0, result.output
    assert not marker.exists()
    assert "raw blob" in records(out / "acme" / "widgets")


# --------------------------------------------------------------------------- failures leave cache and output alone


@pytest.fixture
def crawled(tmp_path: Path, cli, cache_dir: Path):
    repo = make_repo(tmp_path / "up", {"pkg/a.py": "raise ValueError('a')\n", "pkg/b.py": "assert x, 'b'\n"})
    out = tmp_path / "out"
    assert cli(*crawl_args(repo, out)).exit_code == 0
    return repo, out


@pytest.mark.parametrize(
    "repo_arg, ref, message",
    [
        ("https://127.0.0.1:9/acme/widgets", "v1", "cannot fetch 'v1'"),  # nothing listens: network failure
        ("https://127.0.0.1:9/acme/widgets", "f" * 40, "cannot fetch"),
        (None, "f" * 40, "unknown ref or commit"),
        (None, "v9", "unknown ref or commit 'v9'"),
    ],
)
def test_network_failure_or_unknown_commit_touches_nothing(crawled, cli, cache_dir: Path, repo_arg, ref, message) -> None:
    repo, out = crawled
    before_out, before_cache = read_tree(out), read_tree(cache_dir)
    assert before_cache  # the result cache is there to be damaged
    result = cli("crawl", "--repo", repo_arg or repo, "--ref", ref, "--name", "acme/widgets", "--include", "pkg/**/*.py", "--out", out)
    assert message in one_line_error(result)
    assert read_tree(out) == before_out and read_tree(cache_dir) == before_cache
    assert strays(out) == []


# --------------------------------------------------------------------------- ids, schema, NaN


def test_id_collision_is_a_hard_error_through_the_pipeline(crawled, cli, monkeypatch: pytest.MonkeyPatch) -> None:
    repo, out = crawled
    before = read_tree(out)
    monkeypatch.setattr(catalogue, "entry_id", lambda repo, key: "0123456789abcdef")
    err = one_line_error(cli(*crawl_args(repo, out, "v1", "--no-cache")), 1)
    assert "id collision: 0123456789abcdef names two different errors" in err
    assert read_tree(out) == before and strays(out) == []


@pytest.mark.parametrize("bad", ["../../../pwned", "0123456789ABCDEF", "0123456789abcdef0", "0123456789abcde\n", ""])
def test_ids_are_checked_before_they_become_file_names(crawled, cli, monkeypatch: pytest.MonkeyPatch, tmp_path: Path, bad: str) -> None:
    repo, out = crawled
    before = read_tree(out)
    counter = iter(range(1000))
    monkeypatch.setattr(catalogue, "entry_id", lambda repo, key: bad if next(counter) == 0 else "0123456789abcdef")
    err = one_line_error(cli(*crawl_args(repo, out, "v1", "--no-cache")), 1)
    assert "not an errcat id" in err and "nothing was written" in err
    assert read_tree(out) == before and strays(out) == []
    assert not list(tmp_path.rglob("pwned*"))


def test_schema_failure_and_nan_write_nothing(crawled, cli, monkeypatch: pytest.MonkeyPatch) -> None:
    repo, out = crawled
    before = read_tree(out)
    real = catalogue.build_entries

    def with_nan(*a, **k):
        recs, primaries = real(*a, **k)
        recs[0]["location"]["line"] = float("nan")
        recs[-1]["sites"][0]["snippet"]["start_line"] = float("inf")
        return catalogue.Entries(recs, primaries)

    monkeypatch.setattr(catalogue, "build_entries", with_nan)
    result = cli(*crawl_args(repo, out, "v1", "--no-cache"))
    assert result.exit_code == 1 and "schema problem(s); nothing was written" in result.stderr
    assert "/location/line" in result.stderr and "/snippet/start_line" in result.stderr
    assert read_tree(out) == before and strays(out) == []


def test_lone_surrogates_from_odd_strings_are_not_fatal(tmp_path: Path, cli) -> None:
    repo = make_repo(tmp_path / "up", {"pkg/a.py": "def f():\n    '''Doc \\udc80.'''\n    raise ValueError('bad \\udc80 here')\n"})
    blob = git(repo, "hash-object", "-w", "--stdin", input=b"raise OSError('odd')\n")
    git(repo, "update-index", "-z", "--index-info", input=b"100644 %s\tpkg/\xed\xb2\x80.py\0" % blob.encode())
    git(repo, "commit", "-q", "-m", "surrogate-encoded path")
    git(repo, "tag", "v2")
    out = tmp_path / "out"
    result = cli(*crawl_args(repo, out, "v2"))
    assert result.exit_code == 0, result.output
    dataset = out / "acme" / "widgets"
    manifest = json.loads((dataset / "manifest.json").read_bytes())
    assert manifest["skipped"] == [{"path": "pkg/\\xed\\xb2\\x80.py", "reason": "path is not valid UTF-8"}]
    record = records(dataset)["bad \\udc80 here"]
    assert record["sites"][0]["facts"]["docstring"] == "Doc \\udc80."
    assert re.fullmatch(record["message"]["pattern"], "bad \udc80 here")


# --------------------------------------------------------------------------- SIGKILL while writing

N_ERRORS = 2500


def big_module(version: str) -> str:
    return "".join(f"def f{i}(x):\n    raise ValueError('{version} error number {i}: {{x}}'.format(x=x))\n" for i in range(N_ERRORS))


@pytest.fixture
def two_versions(tmp_path: Path, cli):
    """v1 already crawled into out; the dataset v2 would give, written elsewhere for comparison."""
    repo = make_repo(tmp_path / "up", {"pkg/many.py": big_module("old")})
    make_repo(repo, {"pkg/many.py": big_module("new")}, tag="v2")
    out, expected = tmp_path / "out", tmp_path / "expected"
    assert cli(*crawl_args(repo, out, "v1")).exit_code == 0
    assert cli(*crawl_args(repo, expected, "v2")).exit_code == 0
    return repo, out, read_tree(out / "acme" / "widgets"), read_tree(expected / "acme" / "widgets")


def crawl_and_kill(repo: Path, out: Path, cache: Path, *, delay: float | None) -> bool:
    """Start ``errcat crawl`` (v2) as a process and SIGKILL it: after ``delay`` seconds, or as soon as its
    hidden temporary dataset appears (delay None). True if the temporary directory was seen."""
    return run_and_kill(
        [PYTHON, "-m", "crawler", *crawl_args(repo, out, "v2")],
        subprocess_env(cache),
        delay=delay,
        started=lambda: any(".widgets.tmp-" in name for name in os.listdir(out / "acme")),
    )


@pytest.mark.slow
def test_sigkill_while_writing_leaves_the_previous_dataset(two_versions, cache_dir: Path, cli) -> None:
    repo, out, old, new = two_versions
    # on a loaded machine the watcher may miss the moment: a few tries, each from the old dataset
    seen = any(crawl_and_kill(repo, out, cache_dir, delay=None) or cli(*crawl_args(repo, out, "v1")).exit_code != 0 for _ in range(3))
    assert seen, "the crawl finished before its temporary directory was seen, three times"
    assert read_tree(out / "acme" / "widgets") == old  # byte-identical, while a hidden temporary directory lies beside it
    assert any(".tmp-" in s for s in strays(out))
    assert cli(*crawl_args(repo, out, "v2")).exit_code == 0  # the next crawl repairs the traces
    assert read_tree(out / "acme" / "widgets") == new and strays(out) == []


@pytest.mark.slow
def test_sigkill_at_random_moments_never_leaves_a_partial_dataset(two_versions, cache_dir: Path, cli) -> None:
    repo, out, old, new = two_versions
    started = time.monotonic()
    # a full run, to time it: waited for, never killed (a fixed timeout was a kill mid-run under load)
    subprocess.run([PYTHON, "-m", "crawler", *crawl_args(repo, out, "v2")], env=subprocess_env(cache_dir), capture_output=True, check=True)
    full = time.monotonic() - started
    assert read_tree(out / "acme" / "widgets") == new
    rng = random.Random(os.environ.get("ERRCAT_KILL_SEED", "5"))
    for delay in sorted(rng.uniform(0.1, full) for _ in range(4)):
        assert cli(*crawl_args(repo, out, "v1")).exit_code == 0  # back to the previous dataset
        crawl_and_kill(repo, out, cache_dir, delay=delay)
        assert read_tree(out / "acme" / "widgets") in (old, new), f"partial dataset after a kill at {delay:.2f}s"
    assert cli(*crawl_args(repo, out, "v2")).exit_code == 0
    assert read_tree(out / "acme" / "widgets") == new and strays(out) == []


def test_the_next_crawl_repairs_traces_even_when_up_to_date(crawled, cli) -> None:
    repo, out = crawled
    before = read_tree(out)
    parent = out / "acme"
    (parent / ".widgets.tmp-abc").mkdir()
    (parent / ".widgets.tmp-abc" / "index.json").write_text("{")
    result = cli(*crawl_args(repo, out))
    assert "unchanged" in result.stderr and strays(out) == [] and read_tree(out) == before
    # killed between the two renames of the fallback swap: the old dataset only under .old-
    os.rename(parent / "widgets", parent / ".widgets.old-xyz")
    assert cli(*crawl_args(repo, out)).exit_code == 0
    assert read_tree(out) == before and strays(out) == []


def git(cwd: Path, *args: str, input: bytes | None = None) -> str:
    return _git(cwd, *args, input=input, date="1700000000 +0000")
