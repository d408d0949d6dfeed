"""``errcat show``: the terminal page (issue #20): history, meaning, evidence and the fields of new
site kinds; colours and a pager on a terminal as ``git show`` has them, plain text when piped.

The colour and pager paths run errcat as a process on a real pseudo-terminal (``pty``)."""

from __future__ import annotations

import json
import os
import pty
import re
import select
import shutil
import struct
import subprocess
import sys
import termios
import time
import warnings
from fcntl import ioctl
from pathlib import Path

import consumer_data
import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from crawler.catalogue.search import search_file
from crawler.consume.page import render_text
from crawler.publish.writer import render_dataset, write_dataset

ROOT = Path(__file__).resolve().parents[2]
SGR = re.compile(r"\x1b\[[0-9;]*m")
ESC = "\x1b"
OLD, NEW = "a" * 40, "b" * 40


def _kv(records: list[dict]) -> dict:
    return next(r for r in records if r["message"]["text"] == consumer_data.KV["text"])


@pytest.fixture
def dataset(tmp_path: Path) -> tuple[Path, str]:
    """The consumer fixture with history and a derived meaning on its KV entry."""
    recs = consumer_data.records()
    kv = _kv(recs)
    other = next(r for r in recs if r is not kv)
    kv["history"] = {"first_seen": {"version": "v0.31.0", "commit": OLD}, "last_seen": {"version": "v0.33.0", "commit": NEW}, "replaces": [other["id"]]}
    kv["meaning"].update(
        trigger="Raised while `--attention-config` is parsed, when `kind` is not in `valid_kinds`.",
        fix="Use one of the values the message lists.",
        knobs=[
            {
                "kind": "config_field",
                "name": "backend_per_kind",
                "flags": ["--attention-config", "-ac"],
                "owner": "pkg.config.AttentionConfig",
                "field": "backend_per_kind",
            }
        ],
        reproductions=[
            {
                "path": "tests/test_attention.py",
                "line": 12,
                "end_line": 13,
                "qualname": "test_bad_kind",
                "match": "Unknown KV",
                "permalink": None,
                "code": "with pytest.raises(ValueError, match='Unknown KV'):\n    AttentionConfig(backend_per_kind={'x': 1})",
            }
        ],
        callers=[{"qualname": "EngineArgs.create", "path": "pkg/args.py", "line": 40, "entry_point": "cli"}],
    )
    manifest = consumer_data.manifest_for(recs)
    out = write_dataset(tmp_path / "out" / "acme" / "widgets", render_dataset(recs, manifest, extra=search_file(recs, manifest)))
    return out, kv["id"]


def test_show_lays_out_history_meaning_reproductions_and_callers(dataset, cli):
    data, eid = dataset
    result = cli("show", eid, "--data", data)
    assert result.exit_code == 0, result.output
    page = result.stdout
    assert ESC not in page  # piped: plain
    for part in [
        "History",
        "First seen: v0.31.0 (aaaaaaaaaaaa)",
        "Last seen: v0.33.0 (bbbbbbbbbbbb)",
        "Replaces: ",
        "Derived from the code",
        "When it is raised: Raised while `--attention-config` is parsed",
        "Setting: `backend_per_kind` (`--attention-config`, `-ac`) of `AttentionConfig` (config field)",
        "Fix direction: Use one of the values the message lists.",
        "not written by a person",
        "Reproduction from the tests (derived from the code)",
        "tests/test_attention.py:12 in test_bad_kind  (match: Unknown KV)",
        "    with pytest.raises(ValueError, match='Unknown KV'):",
        "Where it is reached from (derived from the code)",
        "pkg/args.py:40 in EngineArgs.create [entry point: cli]",
        "(the commit since which this entry is as shown), committed ",
    ]:
        assert part in page, part
    # the raise line is marked in the source by colour only; the numbered snippet is unchanged
    assert re.search(r"^ +17 \|     raise ValueError", page, re.M)


def test_fields_other_helpers_add_are_shown_generically_and_escaped():
    """Evidence (schema 3, #16), a log site's fields (#19), a history key not known here: shown
    from the record's data as they come, with their text made inert."""
    recs = consumer_data.records()
    data = json.loads(json.dumps(_kv(recs)))
    data["explanation"]["evidence"] = [
        {"url": "https://github.com/acme/widgets/issues/7", "title": f"Crash {ESC}]0;T\x07 on start", "quote": "ValueError: Unknown KV cache group kind 'x'"}
    ]
    data["sites"][0]["log"] = data["log"] = {"level": "warning", "logger": "logger", "once": True}
    data["history"] = {"first_seen": {"version": None, "commit": OLD}, "moved": {"from": "pkg/a.py:3", "to": "pkg/b.py:9"}, "new_key": ["x"]}
    for color in (False, True):
        page = SGR.sub("", render_text(data, color=color))
        assert ESC not in page and "\x07" not in page
        for part in [
            "Reported in",
            "  - Crash \\x1b]0;T\\x07 on start",
            "    https://github.com/acme/widgets/issues/7",
            "    > ValueError: Unknown KV cache group kind 'x'",
            "Logged:",
            "at WARNING by logger (once per process)",
            "First seen: aaaaaaaaaaaa",
            "Moved: from: pkg/a.py:3, to: pkg/b.py:9",
            "New key: x",
        ]:
            assert part in page, (color, part)


def test_a_report_without_a_title_is_named_by_its_issue():
    data = json.loads(json.dumps(_kv(consumer_data.records())))
    data["explanation"]["evidence"] = [{"url": "https://github.com/acme/widgets/issues/12847", "title": None, "quote": "ValueError: x"}]
    page = render_text(data)
    assert "Reported in" in page and "  - #12847\n    https://github.com/acme/widgets/issues/12847\n" in page


def test_colour_is_asked_for_or_refused_and_never_carries_dataset_escapes(dataset, cli, tmp_path):
    data, eid = dataset
    always = cli("show", eid, "--data", data, "--color=always").stdout
    assert "\x1b[1m" + consumer_data.KV["text"][:20] in always  # the title, bold
    assert re.search(r"\x1b\[1m +raise ValueError", always)  # the raise line stands out
    assert SGR.sub("", always) == cli("show", eid, "--data", data).stdout  # colour adds nothing but colour
    assert ESC not in cli("show", eid, "--data", data, "--color=never").stdout
    bad = cli("show", eid, "--data", data, "--color=sometimes")
    assert bad.exit_code == 2 and "Traceback" not in bad.output


# --------------------------------------------------------------------------- a real terminal


def _on_a_terminal(argv: list[str], env: dict[str, str], rows: int = 500, keys: bytes = b"") -> str:
    """Run ``errcat ARGV`` with stdin, stdout and stderr on a new pseudo-terminal; what it wrote."""
    master, slave = pty.openpty()
    ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", rows, 200, 0, 0))
    env = {**env, "PYTHONPATH": str(ROOT)}
    proc = subprocess.Popen([sys.executable, "-m", "crawler", *argv], stdin=slave, stdout=slave, stderr=slave, env=env, start_new_session=True)
    os.close(slave)
    chunks, deadline = [], time.monotonic() + 60  # a hang guard, not a timing assertion
    sent = False
    try:
        while time.monotonic() < deadline:
            ready, _, _ = select.select([master], [], [], 0.5)
            if ready:
                try:
                    chunk = os.read(master, 65536)
                except OSError:  # EIO: every writer has closed the terminal
                    break
                if not chunk:
                    break
                chunks.append(chunk)
            elif proc.poll() is not None:
                break
            elif keys and not sent:
                os.write(master, keys)
                sent = True
        assert proc.wait(timeout=120) == 0, b"".join(chunks)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        os.close(master)
    return b"".join(chunks).decode("utf-8", "replace").replace("\r\n", "\n")


def _env(tmp_path: Path, **extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in ("NO_COLOR", "PAGER", "ERRCAT_PAGER", "LESS", "LV")}
    return {**env, "TERM": "xterm-256color", "ERRCAT_CACHE_DIR": str(tmp_path / "cache"), **extra}


RECORDER = """\
import os, sys
text = sys.stdin.buffer.read()
with open(sys.argv[1], "wb") as f:
    f.write(os.environ.get("LESS", "-").encode() + b"\\n" + os.environ.get("LV", "-").encode() + b"\\n" + text)
sys.stdout.buffer.write(b"PAGED\\n")
"""


@pytest.mark.slow
def test_on_a_terminal_the_page_is_coloured_and_goes_to_the_pager(dataset, tmp_path):
    data, eid = dataset
    recorder, got = tmp_path / "pager.py", tmp_path / "paged"
    recorder.write_text(RECORDER)
    seen = _on_a_terminal(["show", eid, "--data", str(data)], _env(tmp_path, PAGER=f"{sys.executable} {recorder} {got}"))
    assert seen.strip() == "PAGED"  # the page went to the pager, not to the terminal
    less, lv, page = got.read_bytes().decode().split("\n", 2)
    assert (less, lv) == ("FRX", "-c")  # as git sets them
    assert "\x1b[1;33mHistory" in page and "\x1b[2;3mRead by errcat" in page
    assert SGR.sub("", page).startswith(consumer_data.KV["text"].replace("  ", " ")[:30])


@pytest.mark.slow
def test_errcat_pager_wins_and_the_users_less_settings_are_kept(dataset, tmp_path):
    data, eid = dataset
    recorder, got = tmp_path / "pager.py", tmp_path / "paged"
    recorder.write_text(RECORDER)
    env = _env(tmp_path, PAGER="false", ERRCAT_PAGER=f"{sys.executable} {recorder} {got}", LESS="-S")
    _on_a_terminal(["show", eid, "--data", str(data)], env)
    assert got.read_bytes().startswith(b"-S\n")


@pytest.mark.slow
@pytest.mark.skipif(shutil.which("less") is None, reason="no less here")
def test_real_less_shows_the_coloured_page(dataset, tmp_path):
    data, eid = dataset
    seen = _on_a_terminal(["show", eid, "--data", str(data)], _env(tmp_path, PATH=os.environ["PATH"]), keys=b"q")
    assert "\x1b[1;33mHistory" in seen  # less -R passed the colours through
    assert "First seen: v0.31.0" in SGR.sub("", seen)


@pytest.mark.slow
@pytest.mark.parametrize("how", [{"NO_COLOR": "1"}, {"TERM": "dumb"}, {"argv": "--color=never"}])
def test_no_color_and_no_pager_on_a_terminal(dataset, tmp_path, how):
    data, eid = dataset
    argv = ["show", eid, "--data", str(data), "--no-pager", *([how["argv"]] if "argv" in how else [])]
    seen = _on_a_terminal(argv, _env(tmp_path, PAGER="false", **{k: v for k, v in how.items() if k != "argv"}))
    assert ESC not in seen and "First seen: v0.31.0" in seen


@pytest.mark.slow
def test_an_empty_or_missing_pager_prints_the_page(dataset, tmp_path):
    data, eid = dataset
    for pager in ("", "cat", "/nonexistent/pager"):
        seen = _on_a_terminal(["show", eid, "--data", str(data)], _env(tmp_path, PAGER=pager))
        assert "\x1b[1;33mHistory" in seen, pager


@pytest.mark.slow
def test_piped_the_pager_never_runs(dataset, tmp_path):
    data, eid = dataset
    recorder, got = tmp_path / "pager.py", tmp_path / "paged"
    recorder.write_text(RECORDER)
    env = {**_env(tmp_path, PAGER=f"{sys.executable} {recorder} {got}"), "PYTHONPATH": str(ROOT)}
    proc = subprocess.run([sys.executable, "-m", "crawler", "show", eid, "--data", str(data)], env=env, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0 and not got.exists()
    assert ESC not in proc.stdout and "First seen: v0.31.0" in proc.stdout


CHECKS = """def parse_map(value):
    if not isinstance(value, dict):
        return value
    for kind in value:
        if kind not in ("full", "sliding"):
            raise ValueError(f"Unknown kind {kind!r}.")
    return value
"""


@pytest.mark.slow
def test_a_guard_after_an_early_return_reads_as_the_condition_it_leaves(fixture_repo, cli, tmp_path):
    """The code after ``if not isinstance(v, dict): return v`` runs when ``isinstance(v, dict)``:
    every page kind says that; the record keeps the recorded ``not (not ...)`` that reviews compare."""
    fixture_repo.commit({"pkg/__init__.py": "", "pkg/checks.py": CHECKS}, tag="v1")
    out = tmp_path / "out"
    result = cli("crawl", "--repo", fixture_repo.path, "--ref", "v1", "--name", "acme/widgets", "--include", "pkg/**/*.py", "--out", out)
    assert result.exit_code == 0, result.output
    data = out / "acme" / "widgets"
    (record_file,) = (data / "errors").glob("*.json")
    record = json.loads(record_file.read_text())
    assert record["sites"][0]["facts"]["guards"][0] == "not (not isinstance(value, dict))"
    page = cli("show", "--data", data, record["id"]).output
    assert "if isinstance(value, dict)\n" in page and "not (not" not in page
    site = tmp_path / "site"
    assert cli("render", "--data", data, "--out", site).exit_code == 0
    html = (site / "errors" / f"{record['id']}.html").read_text()
    assert "<code>if isinstance(value, dict)</code>" in html and "not (not" not in html


_ATOMS = ["a", "b", "0", "1", "None", "(0, 1)", "t", "-a", "f(a)"]


@st.composite
def _guards(draw, depth=2):
    """Expressions of the shapes the extractor records: names, calls, comparisons, and/or/not, nested."""
    if depth == 0 or draw(st.booleans()):
        return draw(st.sampled_from(_ATOMS))
    inner = _guards(depth=depth - 1)
    shape = draw(st.sampled_from(["cmp", "not", "bool", "paren"]))
    if shape == "cmp":
        op = draw(st.sampled_from(["==", "!=", "is", "is not", "in", "not in", "<"]))
        return f"{draw(inner)} {op} {draw(inner)}" if op not in ("in", "not in") else f"{draw(inner)} {op} {draw(st.sampled_from(['t', '(0, 1)']))}"
    if shape == "not":
        return f"not {draw(inner)}"
    if shape == "bool":
        return f"{draw(inner)} {draw(st.sampled_from(['and', 'or']))} {draw(inner)}"
    return f"({draw(inner)})"


@pytest.mark.slow
@settings(max_examples=400, deadline=None)
@given(_guards(), st.sampled_from([0, 1, None]), st.sampled_from([0, 1, None]))
def test_a_guard_shown_means_what_the_recorded_one_means(body, a, b):
    from crawler.consume.meaning_page import shown_guard

    guard = f"not ({body})"
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", SyntaxWarning)  # `a is 0`: what the code may say
        try:
            compile(guard, "<guard>", "eval")
        except SyntaxError:
            assume(False)  # the grammar above also makes `a == not b`
    shown = shown_guard(guard)
    env = {"a": a, "b": b, "t": (0, 1, None), "f": lambda x: x}

    def outcome(text):
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", SyntaxWarning)
                return bool(eval(text, {}, dict(env)))  # the test's own generated expressions
        except TypeError as exc:
            return type(exc)

    assert outcome(shown) == outcome(guard), (guard, shown)


@pytest.mark.parametrize(
    "guard, shown",
    [
        ("not (not isinstance(value, dict))", "isinstance(value, dict)"),
        ("not (nan_repr != NanRepr.IEEE_754)", "nan_repr == NanRepr.IEEE_754"),
        ("not (x is None)", "x is not None"),
        ("not (k not in (1, 2))", "k in (1, 2)"),
        ("not ((a or b) == c)", "(a or b) != c"),  # an operand looser than == keeps its parentheses
        ("not ((not a) == b)", "(not a) != b"),
        ("not (a < b)", "not (a < b)"),  # no complement for an order: NaN
        ("not (a == b == c)", "not (a == b == c)"),
        ('not (not x.startswith("("))', 'x.startswith("(")'),  # a parenthesis in a string is no end
        ("not (not (a or b))", "a or b"),
        ("not (not a and b)", "not (not a and b)"),  # not a double negation of one thing
        ("not (not x) or y", "not (not x) or y"),
        ("not (not a if b else c)", "not (not a if b else c)"),
        ("not (not " + "(" * 300 + "a" + ")" * 301, "not (not " + "(" * 300 + "a" + ")" * 301),  # too deep for the parser
        ("not (not x" + " and x" * 400 + ")", "not (not x" + " and x" * 400 + ")"),  # too long to be worth parsing
        ("not (not ) + (", "not (not ) + ("),
    ],
)
def test_only_a_whole_double_negation_is_shown_undone(guard, shown):
    from crawler.consume.meaning_page import shown_guard

    assert shown_guard(guard) == shown


@pytest.mark.parametrize(
    ("ancestor", "said"), [("Exception", "(an Exception)"), ("OSError", "(an OSError)"), ("ValueError", "(a ValueError)"), ("UnicodeError", "(a UnicodeError)")]
)
def test_the_builtin_ancestor_takes_the_article_it_is_read_with(ancestor, said):
    """vLLM's VLLMValidationError page said '(a Exception)'."""
    data = json.loads(json.dumps(_kv(consumer_data.records())))
    data["exception"].update(name="KVError", qualname="pkg.KVError", builtin_ancestor=ancestor)
    assert said in render_text(data, color=False)
