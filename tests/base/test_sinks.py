"""Crawled text printed by every command: shown, never executed by a terminal or a CI runner.

One hostile upstream, crawled for real: messages, guards, comments, docstrings and file names
that carry terminal escapes (clear screen, window title, OSC 52 clipboard, OSC 8 hyperlinks, a
bare CR, C1 CSI), bidi overrides, and GitHub/Azure workflow commands (``::error``,
``::add-mask::``, ``::stop-commands::``, ``##[add-mask]``, ``##vso[``), at the start of a line
and anywhere in one. Every command that prints it runs through the real CLI (with colour on, as
in a terminal: click would otherwise strip plain CSI sequences itself), and its stdout, stderr
and written files are checked byte by byte.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
import yaml
from click.testing import CliRunner
from helpers import git, jsonl_bytes, write_jsonl
from hypothesis import given, settings
from hypothesis import strategies as st

from crawler.cli.main import main

ESC, BEL = "\x1b", "\x07"
NAME = ["--name", "acme/widgets"]

# What a terminal or a reader would act on: C0 controls but tab and newline, DEL, C1 controls,
# bidi controls, line and paragraph separators.
ACTIVE = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u061c\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069]")
# What a runner would take as a command: '::' starting a line (after white space), '##[' or
# '##vso[' anywhere in one.
COMMAND_START = re.compile(r"^\s*::")
COMMAND_ANYWHERE = re.compile(r"##(?:\[|vso\[)", re.IGNORECASE)

#: The message of the hostile raise: every terminal trick in one string (escapes in the source).
TRICKS = (
    r"\x1b[2J\x1b]0;TITLE\x07\x1b]52;c;cHduZWQ=\x07\x1b]8;;https://evil.example/\x07click\x1b]8;;\x07"
    r" over\rprinted \u202egnp.exe\u202c \x9b31m ##[add-mask]secret ##vso[task.setvariable variable=x]y"
)

EVIL = (
    "def evil(x):\n"
    f'    """Docstring {ESC}]0;DOC{BEL} with \u202ereversed\u202c text."""\n'
    f"    # a comment {ESC}]52;c;Y29tbWVudA=={BEL} and ##[add-mask]comment\n"
    "\x0c    # after a form feed, which is not a line break\n"
    f'    if x == "{ESC}]0;GUARD{BEL}\u202e":\n'
    f'        raise RuntimeError("{TRICKS}")\n'
    "    if x is None:\n"
    r'        raise KeyError("first line\n::error title=Forged::from a message\n  ::stop-commands::tok\n##[group]x")'
    "\n    return x\n"
)
#: A file whose name is a workflow command: the first line of a plain ``errcat diff``.
FORGED_PATH = "::error title=Forged::pwned.py"
FORGED = 'def pwn(x):\n    raise ValueError("::add-mask::hidden")\n'
FILES_V2 = {
    FORGED_PATH: FORGED,
    "pkg/evil.py": EVIL,
    "pkg/##[add-mask]leak.py": 'def leak():\n    raise OSError("leak")\n',
    "pkg/name\u202eyp.exe.py": 'def swap():\n    raise OSError("swapped")\n',
    f"pkg/bad{ESC}]0;PATH{BEL}.py": "x = 1\n",  # skipped: control characters in the path
}


#: How the tests name the entries: a word of each message.
KEYS = ("TITLE", "first line", "::add-mask::hidden", "leak", "swapped")
TAG = "v2-\u202eevil"  # a release tag that reorders what follows it


def run(*args):
    """The real CLI with colour on, so escapes reach the output as they would reach a terminal."""
    return CliRunner().invoke(main, [str(a) for a in args], color=True, catch_exceptions=False)


def visible(text: str) -> str:
    """``text`` holds no character that a terminal would act on or a reader see reordered."""
    found = ACTIVE.search(text)
    assert found is None, f"{found.group()!r} at {found.start()}: {text[max(0, found.start() - 60) : found.start() + 20]!r}"
    return text


def inert(text: str, *, own_commands: bool = False) -> str:
    """``text`` holds nothing a terminal or a runner would act on; returns it for more checks."""
    visible(text)
    for line in text.split("\n"):
        if own_commands and line.startswith("::notice file="):
            line = line.partition("::notice ")[2]
        assert not COMMAND_START.match(line), line
        assert not COMMAND_ANYWHERE.search(line), line
    return text


def inert_result(result, **kw) -> None:
    inert(result.stdout, **kw)
    inert(result.stderr)


def commit(repo: Path, files: dict[str, str], tag: str) -> str:
    for rel, text in files.items():
        path = repo / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", tag)
    git(repo, "tag", tag)
    return git(repo, "rev-parse", "HEAD")


@pytest.fixture(scope="module")
def hostile(tmp_path_factory):
    """(repo, output root of v3, ids by a word of their message (KEYS), cache dir): v1 is
    harmless, v2 hostile, v3 v2 with one message reworded."""
    base = tmp_path_factory.mktemp("hostile")
    repo = base / "upstream"
    repo.mkdir()
    git(repo, "init", "-q")
    commit(repo, {"pkg/__init__.py": "", "pkg/a.py": 'def f(x):\n    raise ValueError("plain")\n'}, "v1")
    commit(repo, FILES_V2, TAG)
    commit(repo, {"pkg/a.py": 'def f(x):\n    raise ValueError("plain, reworded")\n'}, "v3")
    cache = base / "cache"
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("ERRCAT_CACHE_DIR", str(cache))
        out = base / "out"
        crawled = run("crawl", "--repo", repo, "--ref", "v3", *NAME, "--include", "*.py", "--out", out)
        assert crawled.exit_code == 0, crawled.output
    records = [json.loads(line) for line in jsonl_bytes(out / "acme/widgets").splitlines()]
    ids = {key: r["id"] for r in records for key in KEYS if key in r["message"]["text"]}
    return repo, out, ids, cache


@pytest.fixture
def env(hostile, monkeypatch):
    monkeypatch.setenv("ERRCAT_CACHE_DIR", str(hostile[3]))
    return hostile


@pytest.mark.slow
def test_the_fixture_carries_every_trick_into_the_dataset(env):
    """The dataset itself keeps the text as upstream wrote it: only its display is escaped."""
    _, out, ids, _ = env
    record = json.loads((out / "acme/widgets/errors" / f"{ids['TITLE']}.json").read_text())
    assert record["message"]["text"].startswith("\x1b[2J\x1b]0;TITLE\x07\x1b]52;c;")
    assert "\r" in record["message"]["text"] and "\u202e" in record["message"]["text"]
    assert record["sites"][0]["facts"]["guards"] == ['x == "\x1b]0;GUARD\x07\u202e"']
    assert "\x1b]52;c;" in record["sites"][0]["snippet"]["code"]
    manifest = json.loads((out / "acme/widgets/manifest.json").read_text())
    assert {s["path"] for s in manifest["skipped"]} == {"pkg/bad\\x1b]0;PATH\\x07.py"}


@pytest.mark.slow
def test_crawl_progress_and_summary_are_inert(env, tmp_path):
    repo = env[0]
    result = run("crawl", "--repo", repo, "--ref", TAG, *NAME, "--include", "*.py", "--out", tmp_path / "o")
    assert result.exit_code == 0, result.output
    inert_result(result)


def test_show_makes_every_trick_visible(env):
    _, out, ids, _ = env
    data = out / "acme/widgets"
    page = run("show", ids["TITLE"], "--data", data)
    assert page.exit_code == 0
    inert_result(page)
    assert "\\x1b]0;TITLE\\x07\\x1b]52;c;cHduZWQ=\\x07" in page.stdout  # shown as escapes, readable
    assert "over\\rprinted \\u202egnp.exe\\u202c \\x9b31m" in page.stdout
    assert "\\x23#[add-mask]secret" in page.stdout and "\\x23#vso[task.setvariable" in page.stdout
    assert 'if x == "\\x1b]0;GUARD\\x07\\u202e"' in page.stdout  # a guard with raw escapes in the source
    raise_line = next(line for line in page.stdout.split("\n") if "raise RuntimeError" in line)
    assert re.match(r" +6 \| ", raise_line) and "pkg/evil.py:6 in evil" in page.stdout  # the form feed is shown, not a line
    lines = inert(run("show", ids["first line"], "--data", data).stdout).split("\n")
    assert "    \\x3a:error title=Forged::from a message" in lines  # a message line that was a command (in the page's Message block)
    assert "      \\x3a:stop-commands::tok" in lines
    forged = inert(run("show", ids["::add-mask::hidden"], "--data", data).stdout)
    assert forged.startswith("\\x3a:add-mask::hidden\n")  # the title is the first line
    assert "\\x3a:error title=Forged::pwned.py:2 in pwn" in forged.split("\n")


def test_show_in_colour_adds_only_its_own_colours(env):
    """--color=always (as on a terminal): the page's own SGR codes are the only escapes; taken
    out, what is left is inert, and is the plain page."""
    from crawler.base.sink import RESET
    from crawler.consume.page import STYLES

    _, out, ids, _ = env
    data = out / "acme/widgets"
    own = re.compile("|".join(re.escape(code) for code in [RESET, *(f"\x1b[{p}m" for p in STYLES.values())]))
    for eid in (ids["TITLE"], ids["first line"], ids["::add-mask::hidden"]):
        page = run("show", eid, "--data", data, "--color=always")
        assert page.exit_code == 0 and own.search(page.stdout)
        inert(own.sub("", page.stdout))
        assert own.sub("", page.stdout).replace("\\x3a", ":") == run("show", eid, "--data", data).stdout.replace("\\x3a", ":")


def test_show_json_keeps_the_value_and_loses_the_bytes(env):
    _, out, ids, _ = env
    path = out / "acme/widgets/errors" / f"{ids['TITLE']}.json"
    result = run("show", ids["TITLE"], "--data", out, "--json")
    inert_result(result)
    assert json.loads(result.stdout) == json.loads(path.read_text())


def test_match_shows_the_entry_without_running_it(env):
    _, out, ids, _ = env
    message = "RuntimeError: " + TRICKS.encode().decode("unicode_escape")
    result = run("match", "--data", out, message)
    assert result.exit_code == 0, result.output
    inert_result(result)
    assert ids["TITLE"] in result.stdout
    as_json = run("match", "--data", out, "--json", message)
    inert_result(as_json)
    assert json.loads(as_json.stdout)["matches"][0]["id"] == ids["TITLE"]
    nothing = run("match", "--data", out, "::add-mask::hidden\n::error::no such entry anywhere at all")
    inert_result(nothing)


@pytest.mark.slow
@pytest.mark.parametrize("fmt", ["oneline", "markdown", "github", "json"])
def test_diff_in_every_format_is_inert(env, fmt, tmp_path):
    repo = env[0]
    result = run("diff", "v1", TAG, "--repo", repo, *NAME, "--include", "*.py", "--format", fmt)
    assert result.exit_code == 0, result.output
    inert_result(result, own_commands=fmt == "github")
    written = tmp_path / "report"
    assert run("diff", "v1", TAG, "--repo", repo, *NAME, "--include", "*.py", "--format", fmt, "-o", written).exit_code == 0
    assert written.read_text(encoding="utf-8") == result.stdout
    if fmt == "oneline":
        # the first line was exactly the forged command
        assert result.stdout.startswith("\\x3a:error title=Forged::pwned.py:2: error added: ::add-mask::hidden (ValueError, ")
    elif fmt == "github":
        assert all(line.startswith("::notice file=") for line in result.stdout.splitlines())
    elif fmt == "json":
        report = json.loads(result.stdout)
        assert any(c["location"]["path"] == FORGED_PATH for c in report["changes"])  # the value is intact
        assert any("\x1b]52;c;" in c["title"] for c in report["changes"])


def test_the_markdown_changelog_cannot_inject_markup(env):
    repo = env[0]
    text = run("diff", "v1", TAG, "--repo", repo, *NAME, "--include", "*.py", "--format", "markdown").stdout
    assert text.startswith("## Error catalogue: `acme/widgets` `v1` → `v2-\\u202eevil`\n")
    entry = next(line for line in text.split("\n") if "TITLE" in line)
    # crawled text only in code spans; the link goes to the permalink, percent-encoded
    assert entry.startswith("- [`\\x1b[2J\\x1b]0;TITLE\\x07")
    assert "](<https://github.com/acme/widgets/blob/" in entry
    assert re.search(r"\]\(<https://github\.com/acme/widgets/blob/[0-9a-f]{40}/pkg/evil\.py#L6>\)", entry)
    leak = next(line for line in text.split("\n") if "leak" in line)
    assert "/pkg/%23%23%5Badd-mask%5Dleak.py#L2>)" in leak  # quoted where the permalink is made; no "##[" for a runner


@pytest.mark.slow
def test_history_prints_crawled_tag_names_escaped(env, tmp_path):
    repo = env[0]
    result = run("history", "--repo", repo, *NAME, "--include", "*.py", "--range", "v1..v3", "--tag-pattern", "v.*", "--out", tmp_path / "h")
    assert result.exit_code == 0, result.output
    inert_result(result)
    assert "versions 3 (v1, v2-\\u202eevil, v3)" in result.stdout


@pytest.mark.slow
def test_sync_changelog_stdout_and_github_output_are_inert(env, tmp_path, monkeypatch):
    repo = env[0]
    out, changelog, report = tmp_path / "out", tmp_path / "changelog.md", tmp_path / "diff.json"
    github_output = tmp_path / "github_output"
    monkeypatch.setenv("GITHUB_OUTPUT", str(github_output))
    base = ["sync", "--repo", repo, *NAME, "--include", "*.py", "--out", out]
    assert run(*base, "--ref", "v1").exit_code == 0
    result = run(*base, "--ref", TAG, "--changelog", changelog, "--report", report)
    assert result.exit_code == 0, result.output
    inert_result(result)
    inert(changelog.read_text(encoding="utf-8"))
    assert "\\x1b]52;c;cHduZWQ=" in changelog.read_text(encoding="utf-8")
    diff = json.loads(inert(report.read_text(encoding="utf-8")))
    assert any(c["location"]["path"] == FORGED_PATH for c in diff["changes"])
    lines = github_output.read_text().split("\n")
    assert lines[-4:-1] == ["changed=true", "commit=" + git(repo, "rev-parse", TAG), "dataset=acme/widgets"] and lines[-1] == ""
    assert all(re.fullmatch(r"(changed=(true|false)|commit=[0-9a-f]{40}|dataset=acme/widgets)?", line) for line in lines)


def test_curate_check_and_draft_are_inert(env, tmp_path):
    _, out, ids, _ = env
    curated = tmp_path / "curated"
    orphan = curated / "acme/widgets" / ("f" * 16 + ".yaml")
    orphan.parent.mkdir(parents=True)
    orphan.write_text(
        yaml.safe_dump(
            {
                "id": "f" * 16,
                "what_it_means": "x",
                "review": {
                    "status": "reviewed",
                    "commit": "a" * 40,
                    "exception": "RuntimeError",
                    "template": "clear the screen",
                    "guards": [],
                    "path": "pkg/evil.py",
                    "qualname": "evil",
                },
            }
        ),
        encoding="utf-8",
    )
    check = run("curate", "check", out, "--curated", curated)
    assert check.exit_code == 1  # the orphan
    inert_result(check)
    assert "candidate " + ids["TITLE"] in check.stdout
    inert_result(run("curate", "check", out, "--curated", curated, "--json"))

    eid = ids["TITLE"]
    drafted = run("curate", "draft", eid, "--curated", curated, "--data", out)
    assert drafted.exit_code == 0, drafted.output
    inert_result(drafted)
    path = curated / "acme/widgets" / f"{eid}.yaml"
    text = path.read_text(encoding="utf-8")
    visible(text)  # a reviewer reads and diffs this file: no raw escapes, no bidi reordering
    assert yaml.safe_load(text)["review"]["template"].startswith("\x1b[2J\x1b]0;TITLE\x07")  # the value is intact
    assert "\u202e" in yaml.safe_load(text)["review"]["guards"][0]


def test_error_lines_quoting_a_dataset_are_inert(env, tmp_path):
    """ErrcatGroup: the line that quotes a hostile dataset's manifest is escaped too."""
    _, out, _, _ = env
    other = tmp_path / "other"
    manifest = json.loads((out / "acme/widgets/manifest.json").read_text())
    manifest["repo"]["owner"] = f"{ESC}]0;OWNER{BEL}\n::error title=Forged::owner\n##[add-mask]x"
    other.mkdir()
    (other / "manifest.json").write_text(json.dumps(manifest), encoding="utf-8")
    write_jsonl(other, jsonl_bytes(out / "acme/widgets"))
    result = run("diff", out / "acme/widgets", other)
    assert result.exit_code == 1  # the manifest names no GitHub identity: refused when read
    inert_result(result)
    lines = result.stderr.split("\n")
    errors = [line for line in lines if line.startswith("errcat: ")]  # after any progress line
    assert len(errors) == 1 and "manifest" in errors[0] and lines[-1] == ""
    assert "\x1b" not in result.stderr and not any(line.startswith(("::", "##[")) for line in lines)


# --------------------------------------------------------------------------- the sink itself

#: Characters an attacker would combine: runner markers, white space a runner trims, controls,
#: bidi controls, line separators, a lone surrogate, and anything else.
TRICKY = st.text(st.sampled_from(list(":#[]vsoVSO \t\n\r\x0b\x0c\x1b\x07\x7f\x85\x9b\xa0\u2028\u3000\u202e\u2066\ud800a"))) | st.text()


@pytest.mark.slow
@given(TRICKY)
@settings(max_examples=300, deadline=None)
def test_terminal_text_is_inert_whatever_comes_in(text):
    from crawler.base.sink import commands, terminal

    shown = terminal(text)
    inert(shown)
    assert shown.count("\n") == text.count("\n")  # lines stay lines, no line is added
    shown.encode("utf-8")  # a lone surrogate is an escape, not an encoding error
    inert(commands("::notice file=a,line=1::" + text.replace("\n", " ")), own_commands=True)


@pytest.mark.slow
@given(
    st.recursive(
        st.none() | st.booleans() | st.integers() | TRICKY, lambda inner: st.lists(inner, max_size=3) | st.dictionaries(TRICKY, inner, max_size=3), max_leaves=8
    )
)
@settings(max_examples=300, deadline=None)
def test_json_text_keeps_the_value(value):
    from crawler.base.sink import json_text

    for dumped in (json.dumps(value, ensure_ascii=False, indent=2), json.dumps(value, ensure_ascii=False)):
        text = inert(json_text(dumped))
        assert json.loads(text) == value


@pytest.mark.slow
@given(st.dictionaries(st.sampled_from(["template", "guards", "path"]), TRICKY.filter(lambda t: "\ud800" not in t), min_size=1))
@settings(max_examples=200, deadline=None)
def test_curated_yaml_round_trips_without_raw_bidi(data):
    from crawler.curate.yamlio import dump_yaml

    text = dump_yaml(data)
    assert not re.search("[\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069\u2028\u2029]", text)
    assert yaml.safe_load(text) == data


@pytest.mark.slow
@given(TRICKY, st.sampled_from(["https://github.com/o/n/blob/c/p.py#L1", "https://x/a b<c>\\d\n[e]", "javascript:alert(1)"]))
@settings(max_examples=200, deadline=None)
def test_markdown_code_spans_and_links_stay_one_inert_span(text, url):
    from crawler.base.sink import md_code, md_link

    span = md_code(text)  # (runner markers are the printing's business: see the diff tests)
    visible(span)
    assert "\n" not in span and span.startswith("`") and span.endswith("`")
    link = md_link(text, url)
    visible(link)
    if url.startswith("https://"):
        target = link.rpartition("](<")[2]
        assert target.endswith(">)") and not re.search(r"[\s<>\\\[\]]", target[:-2])
    else:
        assert link == span  # no link to anything but https


def test_github_output_refuses_what_could_start_a_line():
    from crawler.base.errors import DataError
    from crawler.base.sink import output_lines

    assert output_lines([("changed", "true"), ("commit", "a" * 40)]) == f"changed=true\ncommit={'a' * 40}\n"
    for name, value in [("changed", "true\ncommit=evil"), ("changed", "x\r"), ("a<<EOF", "x"), ("", "x")]:
        with pytest.raises(DataError):
            output_lines([(name, value)])


@pytest.mark.slow
def test_every_print_goes_through_the_sink():
    """No module prints but ``sink``: a new command cannot forget to escape what it prints."""
    import ast

    root = Path(__file__).resolve().parents[2] / "crawler"
    found = []
    for path in sorted(root.rglob("*.py")):
        if path.name == "sink.py":
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if not isinstance(node, ast.Call):
                continue
            f = node.func
            name = ast.unparse(f)
            if name in ("print", "click.echo", "click.secho", "sys.stdout.write", "sys.stderr.write") or (
                isinstance(f, ast.Attribute) and f.attr in ("echo", "secho") and name != "echo"
            ):
                found.append(f"{path.name}:{node.lineno}: {name}")
    # parse.py's child process answers its parent with a pickle on stdout.buffer, not text for people
    assert found == [], found
