"""Issue #12: a dataset is input like any other. Every consumer command reads it through
``crawler/dataset.py``, which validates it before a value becomes a file name, a link or markup.

Each attack is a real dataset written to ``tmp_path`` (the fixture dataset of
``consumer_data``, then edited as an attacker would) and run through the real CLI.
"""

from __future__ import annotations

import copy
import json
import os
import re
import signal
import subprocess
import sys
import tempfile
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from html.parser import HTMLParser
from pathlib import Path
from typing import Any

import consumer_data
import pytest
from click.testing import CliRunner
from helpers import jsonl_bytes, write_jsonl
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from test_untrusted import ROOT, git, make_repo, one_line_error

from crawler.base.jsonio import dumps_record
from crawler.cli.main import main
from crawler.model.records import URL_PATTERN

HOST = "https://github.com/acme/widgets/"

# --------------------------------------------------------------------------- editing a dataset


def dataset(tmp_path: Path) -> Path:
    return consumer_data.write(tmp_path)


def rows(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in jsonl_bytes(path).splitlines()]


def write_rows(path: Path, records: list[dict[str, Any]]) -> None:
    write_jsonl(path, b"".join(json.dumps(r).encode() + b"\n" for r in records))


def edit_record(path: Path, change: Callable[[dict[str, Any]], None], n: int = 0) -> dict[str, Any]:
    """Change record ``n`` of errors.jsonl in place; returns the changed record."""
    records = rows(path)
    change(records[n])
    write_rows(path, records)
    return records[n]


def edit_json(path: Path, change: Callable[[Any], Any]) -> None:
    data = json.loads(path.read_bytes())
    path.write_text(json.dumps(change(data)))


def tree(directory: Path, skip: Path | None = None) -> dict[str, bytes]:
    """Every file under directory (not following links), by relative path; ``skip`` left out."""
    out = {}
    for here, dirs, files in os.walk(directory):
        dirs[:] = [d for d in dirs if skip is None or Path(here, d) != skip]
        for name in files:
            p = Path(here, name)
            out[p.relative_to(directory).as_posix()] = p.read_bytes() if p.is_file() and not p.is_symlink() else b"<other>"
    return out


def set_id(value: str) -> Callable[[dict[str, Any]], None]:
    def change(record: dict[str, Any]) -> None:
        record["id"] = value

    return change


# --------------------------------------------------------------------------- ids that are not ids

HOSTILE_IDS = {
    "traversal": "../../../pwned",
    "javascript": "javascript:document.title='x';y={}",
    "absolute": "{tmp}/pwned",  # under the test's own directory
    "nul": "0123456789abcde\0",
    "trailing_newline": "0123456789abcdef\n",
    "upper": "0123456789ABCDEF",
}


@pytest.mark.parametrize("fmt", ["html", "markdown"])
@pytest.mark.parametrize("name", sorted(HOSTILE_IDS))
def test_render_refuses_an_id_that_is_not_an_id(tmp_path: Path, cli, fmt: str, name: str) -> None:
    data = dataset(tmp_path)
    edit_record(data, set_id(HOSTILE_IDS[name].replace("{tmp}", str(tmp_path))))
    before = tree(tmp_path)
    site = tmp_path / "deep" / "er" / "site"
    err = one_line_error(cli("render", "--data", data, "--out", site, "--format", fmt), 1)
    assert err.startswith(f"errcat: {data}/errors.jsonl.gz:1: not a valid record: id: "), err
    assert tree(tmp_path) == before  # nothing written, in the site or anywhere else
    assert not list(tmp_path.rglob("*pwned*"))


def test_a_javascript_id_never_becomes_a_link(tmp_path: Path, cli) -> None:
    data = dataset(tmp_path)
    records = rows(data)
    evil = "javascript:document.title='x';y={}"
    records[1]["id"] = evil
    records[0]["related"] = [{"id": evil, "title": "click me", "reason": "same module"}]
    write_rows(data, records)
    site = tmp_path / "site"
    one_line_error(cli("render", "--data", data, "--out", site), 1)
    assert not site.exists()


# --------------------------------------------------------------------------- links


BAD_PERMALINKS = {
    "javascript": "javascript:alert(1)",
    "http": "http://github.com/acme/widgets/blob/c/pkg/a.py#L1",
    "other_host": "https://evil.example/acme/widgets/blob/c/pkg/a.py#L1",
    "lookalike_host": "https://github.com.evil.example/a.py",
    "quote": 'https://github.com/acme/widgets/a.py" onmouseover="alert(1)',
    "angle": "https://github.com/acme/widgets/a.py>[x](javascript:alert(1))",
    "credentials": "https://user:pw@github.com/acme/widgets/a.py",
    "relative_scheme": "//evil.example/a.py",
}


@pytest.mark.parametrize("where", ["location", "site"])
@pytest.mark.parametrize("name", sorted(BAD_PERMALINKS))
def test_permalinks_are_https_on_the_repository_host(tmp_path: Path, cli, name: str, where: str) -> None:
    data = dataset(tmp_path)

    def change(record: dict[str, Any]) -> None:
        (record["location"] if where == "location" else record["sites"][0])["permalink"] = BAD_PERMALINKS[name]

    edit_record(data, change, n=3)
    for fmt in ("html", "markdown"):
        err = one_line_error(cli("render", "--data", data, "--out", tmp_path / fmt, "--format", fmt), 1)
        assert "errors.jsonl.gz:4: not a valid record: " in err and "permalink" in err, err
        assert not (tmp_path / fmt).exists()


def test_a_record_of_another_repository_cannot_bring_its_host(tmp_path: Path, cli) -> None:
    data = dataset(tmp_path)

    def change(record: dict[str, Any]) -> None:
        record["repo"]["url"] = "https://evil.example/acme/widgets"
        for link in [record["location"], *record["sites"]]:
            link["permalink"] = link["permalink"].replace("https://github.com/", "https://evil.example/")

    edit_record(data, change)
    err = one_line_error(cli("render", "--data", data, "--out", tmp_path / "site"), 1)
    assert "errors.jsonl.gz:1: the record is of another repository" in err


def test_every_link_on_a_rendered_site_is_relative_or_on_the_repository(tmp_path: Path, cli) -> None:
    data = dataset(tmp_path)
    for fmt in ("html", "markdown"):
        assert cli("render", "--data", data, "--out", tmp_path / fmt, "--format", fmt).exit_code == 0
    links = site_links(tmp_path / "html") + site_links(tmp_path / "markdown")
    assert any(u.startswith(HOST) for u in links) and any(u.endswith(".html") for u in links)
    assert all(link_ok(u) for u in links), [u for u in links if not link_ok(u)]


class _Links(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.urls: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.urls += [v or "" for k, v in attrs if k in ("href", "src", "action", "formaction")]


def site_links(site: Path) -> list[str]:
    """Every link of the HTML pages (attributes as a browser reads them) and every Markdown link
    target written as ``](<...>)`` or ``](...)`` outside the text errcat escapes."""
    links: list[str] = []
    for page in sorted(site.rglob("*.html")):
        parser = _Links()
        parser.feed(page.read_text(encoding="utf-8"))
        links += parser.urls
    for page in sorted(site.rglob("*.md")):
        text = re.sub(r"(?ms)^(`{3,})(?!`)[^\n]*\n.*?^\1$", "", page.read_text(encoding="utf-8"))  # code blocks
        text = re.sub(r"(?s)(?<!`)(`+)(?!`).*?(?<!`)\1(?!`)", "", text)  # code spans
        links += re.findall(r"(?:^|[^\\])(?:\\\\)*\]\(<?([^)>\s]*)>?\)", text)
    return links


SITE_FILES = re.compile(r"(\.errcat-site|index\.(html|md|js)|style\.css|search\.js|search-index\.js|search\.json|errors/[0-9a-f]{16}\.(html|md|json))")


def link_ok(url: str) -> bool:
    """https on a host that passed validation, or relative (no scheme, not protocol-relative)."""
    if re.fullmatch(URL_PATTERN, url):
        return True
    return not url.startswith("//") and ":" not in url.split("/", 1)[0] and not any(ord(c) < 32 for c in url)


@pytest.mark.slow
def test_the_crawl_writes_links_a_reader_accepts_on_any_host(tmp_path: Path, cli) -> None:
    """Permalinks have the path percent-encoded, so what a crawl writes is what the reader lets
    through; a host errcat cannot link into (not GitHub) gets no permalinks, and pages say why."""
    files = {"pkg/my mod.py": "raise ValueError('spaced')\n", "pkg/it's\"<q>.py": "raise KeyError('quoted')\n"}
    for host in ("github.com", "gitlab.example.com"):
        repo = tmp_path / host / "up"
        make_repo(repo, files)
        git(repo, "remote", "add", "origin", f"https://{host}/acme/widgets.git")
        out = tmp_path / host / "out"
        assert cli("crawl", "--repo", repo, "--ref", "v1", "--include", "pkg/**/*.py", "--out", out).exit_code == 0
        data = out / "acme" / "widgets"
        links = [r["location"]["permalink"] for r in rows(data)]
        commit = json.loads((data / "manifest.json").read_bytes())["commit"]
        base = f"https://{host}/acme/widgets/blob/{commit}/pkg/"
        site = tmp_path / host / "site"
        result = cli("render", "--data", data, "--out", site)
        assert result.exit_code == 0, result.output
        if host == "github.com":
            assert sorted(links) == [base + "it%27s%22%3Cq%3E.py#L1", base + "my%20mod.py#L1"]
            assert sum(u.startswith(base) for u in site_links(site)) == 2
        else:
            assert links == [None, None]
            assert not any(host in u for u in site_links(site))


# --------------------------------------------------------------------------- owners and names


@pytest.mark.parametrize("owner", ["..", ".", "../../..", "a/b", "-rf", ""])
def test_a_manifest_owner_cannot_move_curated_files_outside_their_root(tmp_path: Path, cli, owner: str) -> None:
    data = dataset(tmp_path)

    def change(manifest: dict[str, Any]) -> dict[str, Any]:
        manifest["repo"]["owner"] = owner
        return manifest

    edit_json(data / "manifest.json", change)
    curated = tmp_path / "cur" / "ated"
    before = tree(tmp_path)
    eid = rows(data)[0]["id"]
    err = one_line_error(cli("curate", "draft", eid, "--data", data, "--curated", curated), 1)
    assert "manifest.json: not a valid manifest: repo.owner: " in err, err
    assert tree(tmp_path) == before


# --------------------------------------------------------------------------- what render copies


def test_render_copies_no_dataset_file_and_links_the_records(tmp_path: Path, cli) -> None:
    """The site holds no copy of a dataset file (a record or search.json linked to a secret could
    carry it into a published site): each page links to its record in the dataset instead."""
    data = dataset(tmp_path)
    secret = tmp_path / "secret.txt"
    secret.write_text("the deploy key\n")
    victim = rows(data)[0]["id"]
    record = (data / "errors" / f"{victim}.json").read_bytes()
    (data / "errors" / f"{victim}.json").unlink()
    (data / "errors" / f"{victim}.json").symlink_to(secret)
    (data / "search.json").unlink()
    (data / "search.json").symlink_to(secret)
    site = tmp_path / "site"
    assert cli("render", "--data", data, "--out", site).exit_code == 1  # the search index is no index
    (data / "search.json").unlink()
    linked = cli("render", "--data", data, "--out", site)  # a page would link "as JSON" to the secret
    assert linked.exit_code == 1 and f"errors/{victim}.json: missing, not a regular file or too large" in linked.stderr and not site.exists()
    (data / "errors" / f"{victim}.json").unlink()
    (data / "errors" / f"{victim}.json").write_bytes(record)
    result = cli("render", "--data", data, "--out", site)
    assert result.exit_code == 0, result.output
    for page in site.rglob("*"):
        assert page.is_dir() or b"deploy key" not in page.read_bytes(), page
    assert not list(site.rglob("*.json"))
    page = (site / "errors" / f"{victim}.html").read_text(encoding="utf-8")
    href = re.search(r'id="json-link" href="([^"]*)"', page).group(1)
    assert (site / "errors" / href).resolve() == (data / "errors" / f"{victim}.json").resolve()


# --------------------------------------------------------------------------- malformed datasets: one line, never a traceback

MALFORMED: dict[str, tuple[Callable[[Path], None], str]] = {
    # name: (how the dataset is broken, what the one line says); today's tracebacks in comments
    "manifest_missing_repo": (  # KeyError
        lambda d: edit_json(d / "manifest.json", lambda m: {k: v for k, v in m.items() if k != "repo"}),
        "manifest.json: not a valid manifest: repo: Field required",
    ),
    "manifest_not_json": (  # JSONDecodeError
        lambda d: (d / "manifest.json").write_text("{not json"),
        "manifest.json: not a valid manifest: Invalid JSON",
    ),
    "manifest_repo_is_text": (  # TypeError
        lambda d: edit_json(d / "manifest.json", lambda m: {**m, "repo": "acme/widgets"}),
        "manifest.json: not a valid manifest: repo: ",
    ),
    "manifest_a_list": (  # TypeError
        lambda d: (d / "manifest.json").write_text("[]"),
        "manifest.json: not a valid manifest: Input should be an object",
    ),
    "no_records_file": (  # FileNotFoundError
        lambda d: (d / "errors.jsonl.gz").unlink(),
        "errors.jsonl.gz: cannot read: No such file or directory",
    ),
    "records_a_directory": (  # IsADirectoryError
        lambda d: ((d / "errors.jsonl.gz").unlink(), (d / "errors.jsonl.gz").mkdir()),
        "errors.jsonl.gz: ",
    ),
    "record_not_json": (  # JSONDecodeError
        lambda d: write_jsonl(d, jsonl_bytes(d) + b"{oops\n"),
        f"errors.jsonl.gz:{len(consumer_data.records()) + 1}: not a valid record: Invalid JSON",
    ),
    "record_missing_message": (  # KeyError
        lambda d: edit_record(d, lambda r: r.pop("message"), n=2),
        "errors.jsonl.gz:3: not a valid record: message: Field required",
    ),
    "record_sites_not_a_list": (  # TypeError
        lambda d: edit_record(d, lambda r: r.update(sites=7), n=2),
        "errors.jsonl.gz:3: not a valid record: sites: ",
    ),
    "record_id_with_nul": (  # ValueError: embedded null byte
        lambda d: edit_record(d, set_id("0123456789abcde\0")),
        "errors.jsonl.gz:1: not a valid record: id: ",
    ),
    "record_twice": (lambda d: write_rows(d, rows(d) + rows(d)[:1]), f"errors.jsonl.gz:{len(consumer_data.records()) + 1}: id "),
    "record_an_array": (lambda d: write_jsonl(d, b"[1, 2]\n"), "errors.jsonl.gz:1: not a valid record: Input should be an object"),
}


@pytest.mark.parametrize("fmt", ["html", "markdown"])
@pytest.mark.parametrize("name", sorted(MALFORMED))
def test_a_malformed_dataset_is_one_line_on_render(tmp_path: Path, cli, name: str, fmt: str) -> None:
    data = dataset(tmp_path)
    breaks, says = MALFORMED[name]
    breaks(data)
    err = one_line_error(cli("render", "--data", data, "--out", tmp_path / "site", "--format", fmt), 1)
    assert err.startswith(f"errcat: {data}/") and says in err, err
    assert not (tmp_path / "site").exists()


@pytest.mark.slow
def test_a_fifo_in_a_dataset_is_refused_not_waited_for(tmp_path: Path) -> None:
    data = dataset(tmp_path)
    (data / "errors.jsonl.gz").unlink()
    os.mkfifo(data / "errors.jsonl.gz")
    proc = subprocess.run(
        [sys.executable, "-m", "crawler", "render", "--data", str(data), "--out", str(tmp_path / "site")],
        capture_output=True,
        text=True,
        timeout=120,
        env=dict(os.environ, PYTHONPATH=str(ROOT)),
    )
    assert proc.returncode == 1 and proc.stderr.strip() == f"errcat: {data}/errors.jsonl.gz: not a regular file", proc.stderr


# --------------------------------------------------------------------------- every consumer command


def consumers(data: Path, out: Path, eid: str) -> dict[str, list[Any]]:
    """Each command that reads a dataset, with its arguments (``history`` reads none: it crawls)."""
    return {
        "render": ["render", "--data", data, "--out", out / "html"],
        "render-markdown": ["render", "--data", data, "--out", out / "md", "--format", "markdown"],
        "match": ["match", "--data", data, "Invalid value 42 for name"],
        "show": ["show", eid[:8], "--data", data],
        "diff": ["diff", data, data],
        "curate-check": ["curate", "check", data, "--curated", out / "curated"],
    }


READS_RECORDS = ["render", "render-markdown", "show", "diff", "curate-check"]


@pytest.mark.parametrize("command", READS_RECORDS)
def test_every_consumer_refuses_a_record_with_a_hostile_id(tmp_path: Path, cli, command: str) -> None:
    data = dataset(tmp_path)
    eid = rows(data)[0]["id"]
    edit_record(data, set_id("../../../pwned"))
    (data / "errors" / f"{eid}.json").write_text(json.dumps(rows(data)[0]))  # show reads this file
    before = tree(tmp_path)
    err = one_line_error(cli(*consumers(data, tmp_path / "out", eid)[command]), 1)
    assert ": not a valid record: id: " in err, err
    assert tree(tmp_path) == before


def test_match_refuses_a_search_index_with_a_hostile_id(tmp_path: Path, cli) -> None:
    data = dataset(tmp_path)

    def change(index: dict[str, Any]) -> dict[str, Any]:
        index["entries"][0]["id"] = "../../../pwned"
        return index

    edit_json(data / "search.json", change)
    for command in ("match", "render"):
        err = one_line_error(cli(*consumers(data, tmp_path / "out", "0" * 16)[command]), 1)
        assert "search.json: not a valid search index: entries.0.id: " in err, err


def test_show_checks_the_record_file_is_the_entry_it_names(tmp_path: Path, cli) -> None:
    data = dataset(tmp_path)
    first, second = rows(data)[:2]
    (data / "errors" / f"{first['id']}.json").write_bytes(dumps_record(second))
    err = one_line_error(cli("show", first["id"], "--data", data), 1)
    assert f"the record's id is {second['id']}, not the file's name" in err


# --------------------------------------------------------------------------- fuzz: crafted datasets

TEXT = st.one_of(
    st.text(max_size=30),
    st.text(st.characters(max_codepoint=0x9F), max_size=30),  # control characters, C1 included
    st.sampled_from(
        [
            "../../../pwned",
            "../../../../../pwned",
            "javascript:alert(1)",
            "<script>alert(1)</script>",
            "]]>",
            "\x1b[2J\x1b]0;t\x07",
            "a\0b",
            "\u2028\u2029",
            "{{}}{",
            "`" * 3000,
            "x" * 200_000,
            "\n" * 20_000,
            "%00",
            "|",
            "::error::x",
            "https://evil.example/x",
            HOST + "blob/c/a.py#L1",
            "0123456789abcdef",
            "0123456789abcdef\n",
        ]
    ),
    st.from_regex(r"[0-9a-f]{16}", fullmatch=True),
)
NUMBER = st.one_of(st.integers(-3, 5), st.integers(10**15, 10**18), st.sampled_from([0, -1, 2**63, 1.5, "7", None, True]))
VALUE = st.one_of(TEXT, NUMBER, st.lists(TEXT, max_size=3), st.dictionaries(TEXT, TEXT, max_size=2))

#: Where a crafted value goes: (document, path into it, the values). Text that is only shown
#: may be anything (it must be escaped wherever it lands) ...
SHOWN: list[tuple[str, tuple[Any, ...], st.SearchStrategy]] = [
    ("record", ("title",), TEXT),
    ("record", ("message", "text"), TEXT),
    ("record", ("message", "pattern"), TEXT),
    ("record", ("location", "path"), TEXT),
    ("record", ("location", "qualname"), TEXT),
    ("record", ("sites", 0, "snippet", "code"), TEXT),
    ("record", ("sites", 0, "path"), TEXT),
    ("record", ("sites", 0, "qualname"), TEXT),
    ("record", ("exception", "qualname"), TEXT),
    ("record", ("explanation", "what_it_means"), TEXT),
    ("record", ("explanation", "solutions"), st.lists(TEXT, max_size=3)),
    ("record", ("sites", 0, "facts", "guards"), st.lists(TEXT, max_size=2)),
    ("record", ("related",), st.lists(st.fixed_dictionaries({"id": st.sampled_from(["0" * 16, "f" * 16]), "title": TEXT, "reason": TEXT}), max_size=2)),
    ("manifest", ("ref",), TEXT),
    ("search", ("entries", 0, "title"), TEXT),
    ("search", ("entries", 0, "pattern"), TEXT),
    ("search", ("entries", 0, "fragments"), st.lists(TEXT, max_size=3)),
]
#: ... and what becomes a file name, a link or a number errcat computes with must be refused
#: unless it is what the models allow.
CHECKED: list[tuple[str, tuple[Any, ...], st.SearchStrategy]] = [
    ("record", ("id",), TEXT),
    ("record", ("location", "permalink"), TEXT),
    ("record", ("sites", 0, "permalink"), TEXT),
    ("record", ("location", "line"), NUMBER),
    ("record", ("location", "end_line"), NUMBER),
    ("record", ("sites", 0, "snippet", "start_line"), NUMBER),
    ("record", ("related",), st.lists(st.fixed_dictionaries({"id": TEXT, "title": TEXT, "reason": TEXT}), max_size=2)),
    ("record", ("repo", "url"), TEXT),
    ("record", ("provenance", "commit"), TEXT),
    ("record", ("kind",), VALUE),
    ("record", ("sites",), VALUE),
    ("manifest", ("repo", "owner"), TEXT),
    ("manifest", ("repo", "url"), TEXT),
    ("manifest", ("commit",), TEXT),
    ("search", ("entries", 0, "id"), TEXT),
]


@st.composite
def crafted(draw) -> list[tuple[str, tuple[Any, ...], Any]]:
    """One to three shown fields, and in half the examples one checked field."""
    fields = draw(st.lists(st.sampled_from(SHOWN), min_size=1, max_size=3, unique_by=lambda f: f[:2]))
    if draw(st.booleans()):
        fields.append(draw(st.sampled_from(CHECKED)))
    return [(document, path, draw(values)) for document, path, values in fields]


def put(document: Any, path: tuple[Any, ...], value: Any) -> None:
    for key in path[:-1]:
        document = document[key]
    document[path[-1]] = value


@contextmanager
def hang_guard(seconds: int) -> Iterator[None]:
    """A generous limit that turns a hang into a failure (not a timing assertion)."""

    def expire(*_: Any) -> None:
        raise TimeoutError(f"still running after {seconds}s")

    previous = signal.signal(signal.SIGALRM, expire)
    signal.alarm(seconds)
    try:
        yield
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, previous)


@pytest.mark.slow
@settings(max_examples=30, deadline=None, derandomize=True, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(crafted())
def test_crafted_datasets_never_crash_or_escape_any_consumer(changes: list[tuple[str, tuple[Any, ...], Any]]) -> None:
    with tempfile.TemporaryDirectory(prefix="errcat-fuzz-") as tmp:
        root = Path(tmp)
        pristine = consumer_data.write(root / "pristine")
        data = root / "work" / "dataset"
        data.mkdir(parents=True)
        docs = {
            "manifest": json.loads((pristine / "manifest.json").read_bytes()),
            "record": rows(pristine)[0],
            "search": json.loads((pristine / "search.json").read_bytes()),
        }
        eid = docs["record"]["id"]
        docs = copy.deepcopy(docs)
        for document, path, value in changes:
            put(docs[document], path, value)
        (data / "manifest.json").write_text(json.dumps(docs["manifest"]))
        (data / "search.json").write_text(json.dumps(docs["search"]))
        write_rows(data, [docs["record"], *rows(pristine)[1:4]])  # a few records keep each example quick
        (data / "errors").mkdir()
        (data / "errors" / f"{eid}.json").write_text(json.dumps(docs["record"]))
        out = root / "work" / "out"
        runner = CliRunner()
        for name, args in consumers(data, out, eid).items():
            before = tree(root, skip=out)
            with hang_guard(120):
                result = runner.invoke(main, [str(a) for a in args], catch_exceptions=False)
            assert result.exit_code in (0, 1, 2), (name, result.output)
            errors = [line for line in result.stderr.splitlines() if line.startswith("errcat: ")]
            assert "Traceback" not in result.output and len(errors) <= 1, (name, result.stderr)
            assert result.exit_code == 0 or errors or name in ("match", "curate-check"), (name, result.output)
            assert tree(root, skip=out) == before, name  # nothing written outside its output directory
        written = [p.relative_to(site).as_posix() for site in (out / "html", out / "md") if site.exists() for p in site.rglob("*") if p.is_file()]
        assert all(SITE_FILES.fullmatch(name) for name in written), written
        links = site_links(out) if out.exists() else []
        assert all(link_ok(u) for u in links), [u for u in links if not link_ok(u)]
