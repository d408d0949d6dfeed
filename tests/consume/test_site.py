"""errcat render: escaping of everything from the crawled source, HTML and Markdown layouts."""

from __future__ import annotations

import json
import os
import random
import re
import shutil
import sys
import time
from pathlib import Path

import consumer_data as cd
import pytest
from helpers import jsonl_bytes, refused_in_one_line, run_and_kill, run_errcat

from crawler.consume.site import md_inline, script_json

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def rendered(tmp_path_factory):
    from click.testing import CliRunner

    from crawler.cli.main import main

    tmp = tmp_path_factory.mktemp("render")
    dataset = cd.write(tmp)
    runner = CliRunner()
    for fmt in ("html", "markdown"):
        result = runner.invoke(main, ["render", "--data", str(tmp / "out"), "--out", str(tmp / fmt), "--format", fmt])
        assert result.exit_code == 0, result.output
    records = {r["message"]["text"]: r for r in (json.loads(x) for x in jsonl_bytes(dataset).splitlines())}
    return tmp, dataset, records


def test_script_json_cannot_close_the_script_or_break_a_line():
    data = {"m": "</script><!-- & \u2028\u2029 >"}
    text = script_json(data)
    assert not re.search(r"[<>&\u2028\u2029]", text)
    assert json.loads(text) == data


def test_html_escapes_hostile_text(rendered):
    tmp, _, records = rendered
    evil = records[cd.HOSTILE["text"]]
    page = (tmp / "html" / "errors" / f"{evil['id']}.html").read_text(encoding="utf-8")
    assert "<script>alert" not in page and "<tag>" not in page
    assert page.count("<script") == 2  # the search index and the search box: no dataset text in a script
    assert "bad &lt;tag&gt; &amp; &quot;quote&quot;" in page
    index_js = (tmp / "html" / "search-index.js").read_text(encoding="utf-8")
    assert "</script" not in index_js and "\u2028" not in index_js


def test_html_site_layout(rendered):
    tmp, dataset, records = rendered
    site = tmp / "html"
    # no copy of the dataset's records or search.json: they were 68 of the 153 MB of vLLM's site
    assert {p.name for p in site.iterdir()} == {"index.html", "errors", "search.js", "search-index.js", "index.js", "style.css", ".errcat-site"}
    assert {p.suffix for p in (site / "errors").iterdir()} == {".html"}
    kv = records[cd.KV["text"]]
    page = (site / "errors" / f"{kv['id']}.html").read_text(encoding="utf-8")
    href = re.search(r'id="json-link" href="([^"]*)"', page).group(1)
    assert href == f"../../out/acme/widgets/errors/{kv['id']}.json"  # the dataset's own file, relative: works from disk
    assert (site / "errors" / href).read_bytes() == (dataset / "errors" / f"{kv['id']}.json").read_bytes()
    order = [
        page.index(f'id="{s}"')
        for s in ["title", "exception", "message", "what-it-means", "source", "solutions", "example-fix", "prevention", "related", "provenance"]
    ]
    assert order == sorted(order)
    assert "http" not in (site / "search.js").read_text() and "fetch(" not in (site / "search.js").read_text()


def test_markdown_pages(rendered):
    tmp, _, records = rendered
    evil = records[cd.HOSTILE["text"]]
    page = (tmp / "markdown" / "errors" / f"{evil['id']}.md").read_text(encoding="utf-8")
    assert "<script>" not in page.split("```")[0]  # outside code blocks nothing is raw HTML
    assert "*Not yet explained.*" in page and f"[This entry as JSON](<../../out/acme/widgets/errors/{evil['id']}.json>)" in page
    kv = records[cd.KV["text"]]
    kv_page = (tmp / "markdown" / "errors" / f"{kv['id']}.md").read_text(encoding="utf-8")
    assert "- Use one of the valid kinds &amp; retry." in kv_page
    index = (tmp / "markdown" / "index.md").read_text(encoding="utf-8")
    assert f"(errors/{kv['id']}.md)" in index
    assert md_inline("a `b` c") == "``a `b` c``"


def test_data_url_names_where_the_records_are_served(rendered, cli):
    tmp, dataset, records = rendered
    kv = records[cd.KV["text"]]
    for given, href in (
        ("https://data.example.org/acme/widgets/", f"https://data.example.org/acme/widgets/errors/{kv['id']}.json"),
        ("data/widgets", f"../data/widgets/errors/{kv['id']}.json"),
    ):
        result = cli("render", "--data", dataset, "--out", tmp / "served", "--data-url", given)
        assert result.exit_code == 0 and f"JSON links go to the dataset at {given.rstrip('/')}" in result.stdout
        page = (tmp / "served" / "errors" / f"{kv['id']}.html").read_text(encoding="utf-8")
        assert f'id="json-link" href="{href}"' in page
    for bad in ("javascript:alert(1)", "http://x.org/d", "//evil.org/d", 'a"onmouseover="x', "a b", ""):
        result = cli("render", "--data", dataset, "--out", tmp / "refused", "--data-url", bad)
        assert result.exit_code == 2 and result.stderr.startswith("errcat: --data-url") and result.stderr.count("\n") == 1, bad
        assert not (tmp / "refused").exists()


def test_render_refuses_to_write_into_the_dataset(rendered, cli):
    _, dataset, _ = rendered
    result = cli("render", "--data", dataset, "--out", dataset / "site")
    assert result.exit_code == 2 and "outside the dataset" in result.stderr


# --------------------------------------------------------------------------- writing the site


def tree(directory):
    """Every entry under a directory, symlinks and all, by relative path (bytes for files)."""
    out = {}
    for p in sorted(directory.rglob("*")):
        rel = p.relative_to(directory).as_posix()
        out[rel] = ("link", os.readlink(p)) if p.is_symlink() else p.read_bytes() if p.is_file() else "dir"
    return out


def strays(parent, name="site"):
    return sorted(p.name for p in parent.iterdir() if p.name.startswith(f".{name}."))


def test_a_rerender_removes_pages_of_entries_that_are_gone_and_writes_through_no_symlink(tmp_path, cli):
    both = cd.write_many(tmp_path / "a", 5, "v1")
    fewer = cd.write_many(tmp_path / "b", 5, "v1", drop=2)
    site = tmp_path / "www" / "site"
    assert cli("render", "--data", both, "--out", site).exit_code == 0
    kept = sorted(p.stem for p in (fewer / "errors").iterdir())
    gone = sorted({p.stem for p in (both / "errors").iterdir()} - set(kept))
    assert len(kept) == 3 and len(gone) == 2
    victim, other = tmp_path / "victim.txt", tmp_path / "other.txt"
    victim.write_text("mine\n")
    other.write_text("also mine\n")
    (site / "errors" / f"{kept[0]}.html").unlink()
    (site / "errors" / f"{kept[0]}.html").symlink_to(victim)
    (site / "index.html").unlink()
    (site / "index.html").symlink_to(other)
    (site / "planted.html").write_text("not the render's\n")

    result = cli("render", "--data", fewer, "--out", site)
    assert result.exit_code == 0, result.output
    assert victim.read_text() == "mine\n" and other.read_text() == "also mine\n"
    assert not any(p.is_symlink() for p in site.rglob("*"))
    assert sorted(p.name for p in (site / "errors").iterdir()) == sorted(f"{i}.html" for i in kept)
    assert not (site / "planted.html").exists()
    fresh = tmp_path / "www" / "fresh"  # beside it: the links to the dataset's records are the same
    assert cli("render", "--data", fewer, "--out", fresh).exit_code == 0
    assert tree(site) == tree(fresh) and strays(site.parent) == []


@pytest.mark.parametrize("case", ["home", "dot", "symlink", "dataset-inside"])
def test_render_refuses_to_replace_what_it_did_not_make(tmp_path, cli, monkeypatch, case):
    dataset = cd.write_many(tmp_path / "data", 3, "v1")
    home = tmp_path / "home"
    home.mkdir()
    (home / ".bashrc").write_text("keep me\n")
    (home / "notes").mkdir()
    monkeypatch.chdir(home)
    out = {"home": home, "dot": Path("."), "symlink": tmp_path / "link", "dataset-inside": tmp_path}[case]
    if case == "symlink":
        (tmp_path / "empty").mkdir()
        out.symlink_to(tmp_path / "empty")
    before = tree(tmp_path)
    result = cli("render", "--data", dataset, "--out", out)
    assert result.exit_code == 2 and result.stdout == ""
    assert result.stderr.startswith("errcat: ") and result.stderr.count("\n") == 1 and "Traceback" not in result.stderr
    assert tree(tmp_path) == before


@pytest.mark.slow
def test_render_takes_a_new_or_empty_directory_and_its_own_site(tmp_path, cli):
    dataset = cd.write_many(tmp_path / "data", 3, "v1")
    empty = tmp_path / "empty"
    empty.mkdir()
    for out in (tmp_path / "new" / "site", empty, empty):
        result = cli("render", "--data", dataset, "--out", out)
        assert result.exit_code == 0, result.output
        assert (out / ".errcat-site").is_file() and (out / "index.html").is_file()
    assert (tmp_path / "new" / "site" / ".errcat-site").read_bytes() == (empty / ".errcat-site").read_bytes()


def render_and_kill(data, site, *, delay):
    """Run ``errcat render`` as a process and SIGKILL it after ``delay`` seconds, or (delay None) as
    soon as its hidden temporary site has pages; True if that was seen."""
    env = dict(os.environ, PYTHONPATH=str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", ""))
    return run_and_kill(
        [sys.executable, "-m", "crawler", "render", "--data", str(data), "--out", str(site)],
        env,
        delay=delay,
        started=lambda: any(name.startswith(".site.tmp-") and os.path.exists(site.parent / name / "errors") for name in os.listdir(site.parent)),
    )


@pytest.mark.slow
def test_sigkill_while_rendering_leaves_the_previous_site_or_the_whole_new_one(tmp_path, cli):
    old_data, new_data = cd.write_many(tmp_path / "old", 200, "old"), cd.write_many(tmp_path / "new", 200, "new")
    # all three side by side, so the pages' links to the dataset's records are the same
    site, old_site, new_site = tmp_path / "www" / "site", tmp_path / "www" / "old-site", tmp_path / "www" / "new-site"
    assert cli("render", "--data", new_data, "--out", new_site).exit_code == 0
    assert cli("render", "--data", old_data, "--out", old_site).exit_code == 0
    old, new = tree(old_site), tree(new_site)

    def back_to_the_old_site():
        shutil.rmtree(site, ignore_errors=True)
        shutil.copytree(old_site, site)

    back_to_the_old_site()
    assert render_and_kill(new_data, site, delay=None), "the render finished before its temporary site was seen"
    assert tree(site) == old  # byte-identical, a half-written site lying beside it
    assert strays(site.parent)
    started = time.monotonic()
    render_and_kill(new_data, site, delay=60)  # a whole run; it removes the traces of the killed one
    full = time.monotonic() - started
    assert tree(site) == new and strays(site.parent) == []
    rng = random.Random(os.environ.get("ERRCAT_KILL_SEED", "5"))
    for delay in sorted(rng.uniform(0.1, full) for _ in range(3)):
        back_to_the_old_site()
        render_and_kill(new_data, site, delay=delay)
        assert tree(site) in (old, new), f"partial site after a kill at {delay:.2f}s"
    assert cli("render", "--data", new_data, "--out", site).exit_code == 0
    assert tree(site) == new and strays(site.parent) == []


@pytest.mark.slow
@pytest.mark.parametrize("how", ["read-only", "file-size-limit", "file-for-a-directory"])
def test_a_render_the_system_refuses_is_one_line_and_keeps_the_last_site(tmp_path, cli, how):
    www = tmp_path / "www"
    site = www / "site"
    assert cli("render", "--data", cd.write_many(tmp_path / "v1", 20, "v1"), "--out", site).exit_code == 0
    if how == "file-for-a-directory":
        (www / "taken").write_text("a file\n")
        site = www / "taken" / "site"
    before = tree(www)
    proc = run_errcat(["render", "--data", cd.write_many(tmp_path / "v2", 20, "v2"), "--out", site], how, www)
    refused_in_one_line(proc, f"errcat: cannot write the site {site}: ")
    assert tree(www) == before


def test_an_entry_page_cites_its_reports_and_names_a_draft_model():
    """Evidence (the issues where users met the error) and a machine-written draft's model, on
    the HTML and Markdown pages; the reporter's text is made inert, the links are the record's."""
    from crawler.consume.site import entry_html, entry_markdown

    record = json.loads(json.dumps(next(r for r in cd.records() if r["message"]["text"] == cd.KV["text"])))
    record["explanation"]["evidence"] = [
        {"url": "https://github.com/acme/widgets/issues/2248", "title": 'Crash <script>alert(1)</script> "x"', "quote": None},
        {"url": "https://github.com/acme/widgets/pull/10439", "title": None, "quote": "ValueError: Unknown KV"},
    ]
    record["explanation"]["model"] = "llama<b>"
    page = entry_html(record, "acme/widgets", {})
    assert '<dt>Reported in</dt><dd id="reported"><a href="https://github.com/acme/widgets/issues/2248"' in page
    assert '>#2248</a>, <a href="https://github.com/acme/widgets/pull/10439" title="ValueError: Unknown KV">#10439</a>' in page
    assert "<script>alert" not in page and "&lt;script&gt;" in page
    assert "machine-written by <code>llama&lt;b&gt;</code>, not reviewed" in page
    md = entry_markdown(record, {})
    assert "- **Reported in:** [#2248](<https://github.com/acme/widgets/issues/2248>), [#10439](<https://github.com/acme/widgets/pull/10439>)" in md
    assert "not reviewed" in md
