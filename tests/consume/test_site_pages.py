"""errcat render: curated Markdown, empty sections, history, the grouped index and its chart."""

from __future__ import annotations

import html
import json
import re
from pathlib import Path

import consumer_data as cd
import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from crawler.base.markdown import safe_link
from crawler.base.sink import visible
from crawler.consume.highlight import highlight_native, highlight_python
from crawler.consume.site_markdown import code_language, markdown_html


@pytest.fixture(scope="module")
def site(tmp_path_factory):
    from click.testing import CliRunner

    from crawler.cli.main import main

    tmp = tmp_path_factory.mktemp("pages")
    dataset, records = cd.write_rich(tmp)
    changelog = cd.write_changelog(tmp)
    for fmt in ("html", "markdown"):
        args = ["render", "--data", str(dataset), "--out", str(tmp / fmt), "--format", fmt]
        result = CliRunner().invoke(main, args + (["--changelog", str(changelog)] if fmt == "html" else []))
        assert result.exit_code == 0, result.output
    return tmp, records


def _text(fragment: str) -> str:
    return html.unescape(re.sub(r"<[^>]+>", "", fragment))


def _page(tmp: Path, record: dict) -> str:
    return (tmp / "html" / "errors" / f"{record['id']}.html").read_text(encoding="utf-8")


@pytest.mark.slow
def test_curated_markdown_is_rendered_with_only_safe_links(site):
    tmp, records = site
    page = _page(tmp, records[cd.KV["text"]])
    assert "<code>kind</code>" in page and "<strong>valid</strong>" in page and "`kind`" not in page
    assert '<a href="https://docs.vllm.ai/x">the docs</a>' in page and '<a href="other.html">a page</a>' in page
    hrefs = re.findall(r'href="([^"]*)"', page)
    assert not [h for h in hrefs if h.startswith(("javascript", "data", "http:", "//"))], hrefs
    assert "[bad](javascript:alert(1))" in page  # left as text
    assert "<img" not in page and "<script>alert(2)" not in page and "&lt;script&gt;alert(2)" in page
    assert "<b>now</b>" not in page and "&lt;b&gt;now&lt;/b&gt;" in page


def test_curated_markdown_stays_markdown_on_the_markdown_page(site):
    """Curated text is Markdown: the Markdown page passes it through (names in backticks stay code,
    **bold** stays bold, fences keep their language), as the HTML page renders it; and, as there,
    raw HTML and links that are not https or relative stay text. The message, from the crawled
    repository, stays escaped."""
    tmp, records = site
    kv = records[cd.KV["text"]]
    page = (tmp / "markdown" / "errors" / f"{kv['id']}.md").read_text(encoding="utf-8")
    section = page[page.index("## What it means") : page.index("## Source")]
    assert "The `kind` is not one of the **valid** kinds" in section
    assert "[the docs](<https://docs.vllm.ai/x>)" in section and "[a page](<other.html>)" in section
    assert not re.search(r"(?<!\\)\]\((?:javascript|data:|http:|//)", section) and "<script>" not in section
    assert "\\[bad\\](javascript:alert(1))" in section and "&lt;script&gt;alert(2)&lt;/script&gt;" in section  # shown as text
    assert "- Pass `--kv-cache-dtype auto`." in page and "- Restart &amp; retry &lt;b&gt;now&lt;/b&gt;." in page
    assert "- Read the list:\n\n  ```bash\n  vllm serve --help | grep kv\n  ```" in page  # a fence in a list item
    assert "\\`" not in section  # no backtick of the curated text escaped
    from markdown_it import MarkdownIt

    rendered = MarkdownIt("commonmark", {"html": True}).render(page)
    assert "<code>kind</code>" in rendered and "<strong>valid</strong>" in rendered and "<script>" not in rendered and "<img" not in rendered
    assert '<a href="https://docs.vllm.ai/x">the docs</a>' in rendered and "javascript:" not in re.findall(r'href="([^"]*)"', rendered)


def test_code_blocks_are_highlighted_by_their_language(site):
    tmp, records = site
    page = _page(tmp, records[cd.KV["text"]])
    fix = page[page.index('id="example-fix"') : page.index("</section>", page.index('id="example-fix"'))]
    assert "vllm serve m --kv-cache-dtype" in _text(fix) and '<span class="k">' not in fix  # a shell command, not Python
    pattern = page[page.index('id="defensive-patterns"') :]
    assert '<span class="k">assert</span>' in pattern
    prevention = page[page.index('id="prevention"') : page.index("</section>", page.index('id="prevention"'))]
    assert 'class="highlight"' in prevention and "vllm serve --help" in _text(prevention)
    md = (tmp / "markdown" / "errors" / f"{records[cd.KV['text']]['id']}.md").read_text(encoding="utf-8")
    assert "```shell\nvllm serve m --kv-cache-dtype fp9" in md and "```python\nvllm" not in md


def test_code_language():
    assert code_language("vllm serve m --tensor-parallel-size 2\n") == "shell"
    assert code_language("docker run --gpus all img\n") == "shell"
    assert code_language("CUDA_VISIBLE_DEVICES=0 python -m vllm.entrypoints.openai.api_server\n") == "shell"
    assert code_language("import vllm\nllm = vllm.LLM('m')\n") == "python"
    assert code_language("Traceback (most recent call last):\n  oops\n") == "text"


def test_safe_link():
    assert safe_link("https://x.y/z") and safe_link("other.html") and safe_link("#top") and safe_link("../a/b.html")
    for bad in ("javascript:alert(1)", "JAVASCRIPT:x", "data:text/html,x", "http://x", "//evil", "vbscript:x", "\\\\evil\\x", "mailto:a@b"):
        assert not safe_link(bad), bad
    assert '<a href="javascript' not in markdown_html("[x](javascript:alert(1))")


def test_empty_sections_are_left_out_and_derived_ones_labelled(site):
    tmp, records = site
    plain = records[cd.HOSTILE["text"]]
    page = _page(tmp, plain)
    assert page.count("Not yet explained.") == 1  # one line, not one per empty section
    for key in ("what-it-means", "solutions", "example-fix", "defensive-patterns", "prevention", "when-it-happens"):
        assert f'id="{key}"' not in page, key
    derived = [r for r in records["_ordered"] if r["meaning"].get("trigger")]
    assert derived
    page = _page(tmp, derived[0])
    assert 'id="derived"' in page and "Derived from the code" in page and "<code>a0</code> is &lt;bad&gt;." in page
    kv = _page(tmp, records[cd.KV["text"]])
    assert "Not yet explained." not in kv and 'id="when-it-happens"' not in kv


def test_the_analysed_line_has_no_empty_ref(tmp_path):
    dataset, _ = cd.write_rich(tmp_path, ref=None)
    from crawler.consume.site import render_site

    render_site(dataset, tmp_path / "site")
    index = (tmp_path / "site" / "index.html").read_text(encoding="utf-8")
    assert "(, committed" not in index and f"Analysed at <code>{cd.COMMIT}</code> (committed " in index


def test_history_is_on_the_page(site):
    tmp, records = site
    ordered = records["_ordered"]
    retired, successor = ordered[-1], ordered[0]
    page = _page(tmp, retired)
    section = page[page.index('id="history"') : page.index("</section>", page.index('id="history"'))]
    assert "First seen" in section and "<code>v0.10.0</code>" in section
    # Removed in v0.11.0 said once (the note "removed in v0.11.0" was that row again), and the
    # replacement says how: here the same error raised as another exception.
    assert re.findall(r"<dt>Removed in</dt><dd><code>v0\.11\.0</code>", section) and section.count("v0.11.0") == 1
    assert "removed in" not in section
    assert f'href="{successor["id"]}.html"' in section and "<dt>Replaced by</dt>" in section
    how = (
        f"raised as <code>{successor['exception']['name']}</code> instead of <code>{retired['exception']['name']}</code>"
        if successor["exception"]["name"] != retired["exception"]["name"]
        else "reworded, now <code>"
    )
    assert how in section, section
    assert f'href="{retired["id"]}.html"' in _page(tmp, successor)


def test_index_groups_by_area_and_exception_with_counts_and_a_chart(site):
    tmp, records = site
    index = (tmp / "html" / "index.html").read_text(encoding="utf-8")
    groups = re.findall(r'<details class="group" data-key="([^"]*)"><summary><code>[^<]*</code> <span class="count">(\d+)</span>', index)
    ordered = records["_ordered"]
    assert sum(int(n) for _, n in groups) == len(ordered)
    assert dict(groups)["pkg/config"] == str(sum(r["location"]["path"].startswith("pkg/config/") for r in ordered))
    assert index.count("<li data-s=") == len(ordered)
    values = re.findall(r'data-s="(\w+)"', index)
    assert {"explained", "derived"} <= set(values) <= {"explained", "drafted", "derived", "unexplained"}
    assert 'id="by-exception"' in index and "<code>ValueError</code> <span class=count>" in index
    chart = index[index.index("<svg") : index.index("</svg>")]
    # v0.9.0 is the first release covered; v0.10.0 added two thirds, v0.11.0 removed one
    added = sum(1 for n in range(len(ordered)) if n % 3)
    assert f">+{added}</text>" in chart and ">\u22121</text>" in chart and "<script" not in chart and "style=" not in chart
    assert "<td>v0.11.0</td><td>0</td><td>1</td>" in index


def test_the_changelog_is_on_the_index_without_live_markup(site):
    tmp, _ = site
    index = (tmp / "html" / "index.html").read_text(encoding="utf-8")
    section = index[index.index('id="changelog"') : index.index("</section>", index.index('id="changelog"'))]
    assert "<h2>vLLM v0.11.0</h2>" in section and "<code>Bad x</code>" in section
    assert "javascript" not in "".join(re.findall(r'href="([^"]*)"', section)) and "<img" not in section


@pytest.mark.slow
def test_a_changelog_that_is_not_text_is_one_line(tmp_path):
    from helpers import run_errcat

    dataset, _ = cd.write_rich(tmp_path)
    bad = tmp_path / "changelog.md"
    bad.write_bytes(b"\xff\xfe not utf-8")
    result = run_errcat(["render", "--data", dataset, "--out", tmp_path / "site", "--changelog", bad], "as is", tmp_path)
    assert result.returncode == 2 and result.stderr.startswith("errcat: ") and result.stderr.count("\n") == 1
    assert not (tmp_path / "site").exists()


@pytest.mark.slow
@settings(max_examples=300, deadline=None)
@given(
    st.lists(st.sampled_from([*"ab1 ._\n\t\"'#@&<>()[]{}=:\\fr", "def ", "class ", "'''", '"""', "None", "\u2028"]), max_size=60).map("".join),
    st.integers(1, 5000),
)
def test_highlighting_keeps_every_character(code, start):
    for out in (highlight_python(code), highlight_python(code, start, {start + 1})):
        text = html.unescape(re.sub(r'<span class="ln">[^<]*</span>|<[^>]+>', "", out))
        assert text == visible(code if code.endswith("\n") else code + "\n", newlines=True), out
        assert "<script" not in out


def test_highlighting_marks_python():
    out = highlight_python("@dec\ndef f(self):\n    raise ValueError(f'x {y}')  # why\n", 10, {12})
    for piece in (
        '<span class="nd">@dec</span>',
        '<span class="k">def</span> <span class="nf">f</span>',
        '<span class="bp">self</span>',
        '<span class="ne">ValueError</span>',
        "<span class=\"s\">f'x {y}'</span>",
        '<span class="c1"># why</span>',
        '<span class="hll"><span class="ln">12</span>',
    ):
        assert piece in out, piece


def test_the_json_link_is_the_record(site):
    tmp, records = site
    kv = records[cd.KV["text"]]
    for fmt, pattern in (("html", r'id="json-link" href="([^"]*)"'), ("markdown", r"\[This entry as JSON\]\(<([^>]*)>\)")):
        page = (tmp / fmt / "errors" / f"{kv['id']}.{'html' if fmt == 'html' else 'md'}").read_text(encoding="utf-8")
        href = re.search(pattern, page).group(1)
        assert json.loads((tmp / fmt / "errors" / href).read_bytes())["explanation"]["solutions"] == cd.CURATED_MD["solutions"]


@pytest.mark.slow
@settings(max_examples=300, deadline=None)
@given(
    st.lists(
        st.sampled_from(
            [
                "a",
                " ",
                "\n",
                "\n\n",
                "- ",
                "+ ",
                "1. ",
                "2) ",
                "> ",
                "`x`",
                "``",
                " *a* ",
                " **b** ",
                " _c_ ",
                " * ",
                "snake_case",
                "===",
                "\t",
                "[t](https://a.b/c)",
                "[t](javascript:x)",
                "[t](rel.html)",
                "![i](https://a.b/i.png)",
                "<script>",
                "&amp;",
                "&",
                "\\",
                "  \n",
                "```py\nx = 1\n```\n",
                "```\nvllm serve m\n```\n",
                "~~~\nq\n~~~\n",
                "    code\n",
                "# ",
                "---\n",
                "<https://a.b/d>",
                "[x]: https://a.b\n",
                "[x]",
                "|",
                "#",
                ".",
                "!",
                "(",
                ")",
                "{x}",
            ]
        ),
        max_size=40,
    ).map("".join)
)
@example("- [x]: https://a.b\n\n    code\n")  # loose only by a link definition the parse keeps out of the tree
def test_curated_markdown_written_back_renders_as_it_did(text):
    """What the Markdown page writes of curated text renders to the HTML the site shows for it
    (spaces before a line break aside: they show as nothing)."""
    from crawler.consume.site_markdown import markdown_markdown

    def shown(page: str) -> str:
        return re.sub(r" +\n", "\n", page)

    assert shown(markdown_html(markdown_markdown(text))) == shown(markdown_html(text))


def test_every_page_reads_the_history_the_same_way():
    """One reading of Record.history (history_page.history_rows) for the HTML, Markdown and
    terminal pages: the same rows, a key a later schema adds shown by its name on all three,
    its text escaped for each."""
    from crawler.consume.history_page import history_rows
    from crawler.consume.page import render_text
    from crawler.consume.site import entry_html, entry_markdown

    record = json.loads(json.dumps(cd.records()[0]))
    record["history"] = {
        "first_seen": {"version": "v0.9.0", "commit": "a" * 40},
        "last_seen": None,
        "moved": [{"version": "v0.10.0", "commit": "b" * 40, "from_path": "pkg/a.py", "to_path": "pkg/<b>.py"}],
        "renamed_by": "<script>x</script>",
    }
    labels = [label for label, _ in history_rows(record["history"])]
    assert labels == ["Raised in", "First seen", "Last seen", "Moved", "Renamed by"]
    page = entry_html(record, "acme/widgets", {})
    section = page[page.index('id="history"') : page.index("</section>", page.index('id="history"'))]
    assert re.findall(r"<dt>([^<]*)</dt>", section) == labels
    assert "<dd>still present</dd>" in section and "<code>pkg/&lt;b&gt;.py</code>" in section
    assert "<dt>Raised in</dt><dd>since v0.9.0</dd>" in section
    assert "&lt;script&gt;x&lt;/script&gt;" in section and "<script>" not in section
    md = entry_markdown(record, {})
    assert re.findall(r"^- \*\*([^*]*):\*\*", md[md.index("## History") : md.index("## Source")], re.M) == labels
    assert "`pkg/<b>.py`" in md and "&lt;script&gt;x&lt;/script&gt;" in md
    text = render_text(record)
    block = text[text.index("History\n") :]
    assert [line.split(":")[0].strip() for line in block.splitlines()[2:7]] == labels
    assert "Moved: pkg/a.py -> pkg/<b>.py in v0.10.0 (bbbbbbbbbbbb)" in text and "Renamed by: <script>x</script>" in text


@pytest.mark.parametrize("same_exception", [True, False])
def test_every_page_says_once_when_an_entry_was_removed_and_how_it_was_replaced(same_exception):
    """A retired entry's history read "removed in v0.11.0" twice (the note, then the row) and
    "Replaced by: <id>" with no word of how. Now: the removal once, and the replacement as what
    changed (the message reworded, shown as it reads now; or the exception), the successor
    linked where the site has its page, each page escaping the successor's text its own way."""
    from crawler.consume.page import render_text
    from crawler.consume.site import entry_html, entry_markdown

    old, new = (json.loads(json.dumps(r)) for r in cd.records()[:2])
    elsewhere = json.loads(json.dumps(new))
    new["sites"] = json.loads(json.dumps(old["sites"]))  # reworded: in the same function (diff.link)
    new["message"]["text"] = "<b>x</b> is *far* too large"
    if not same_exception:
        new["exception"] = {**new["exception"], "name": "Key<Error>", "qualname": "Key<Error>"}
    else:
        new["exception"] = old["exception"]
    when = {"version": "v0.11.0", "commit": "c" * 40}
    old["history"] = {
        "first_seen": {"version": "v0.9.0", "commit": "a" * 40},
        "last_seen": {"version": "v0.10.0", "commit": "b" * 40},
        "retired": True,
        "removed_in": when,
        "retired_note": "removed in v0.11.0",
        "replaced_by": new["id"],
    }
    new["history"] = {"first_seen": when, "last_seen": None, "replaces": [old["id"]]}
    others = {old["id"]: old, new["id"]: new}
    titles = {new["id"]: "A <new> title"}

    page = entry_html(old, "acme/widgets", titles, others=others)
    section = page[page.index('id="history"') : page.index("</section>", page.index('id="history"'))]
    md = entry_markdown(old, titles, others=others)
    md = md[md.index("## History") : md.index("## Source")]
    text = render_text(old, others=others)
    text = text[text.index("History\n") :]
    for shown in (section, md, text):
        assert shown.count("v0.11.0") == 1 and "removed in" not in shown, shown
    assert f'<dt>Replaced by</dt><dd><a href="{new["id"]}.html">A &lt;new&gt; title</a> <code>{new["id"]}</code>: ' in section
    assert f"- **Replaced by:** [A &lt;new&gt; title]({new['id']}.md) `{new['id']}`: " in md
    if same_exception:
        assert "reworded, now <code>&lt;b&gt;x&lt;/b&gt; is *far* too large</code></dd>" in section
        assert "reworded, now `<b>x</b> is *far* too large`" in md
        assert f"Replaced by: {new['id']}: reworded, now <b>x</b> is *far* too large" in text
    else:
        assert f"raised as <code>Key&lt;Error&gt;</code> instead of <code>{old['exception']['name']}</code>" in section
        assert f"raised as `Key<Error>` instead of `{old['exception']['name']}`" in md
        assert f"raised as Key<Error> instead of {old['exception']['name']}" in text
    # A twin (diff.twins: no function shared) is not said to be this one reworded: where it is raised instead.
    site = elsewhere["sites"][0]
    elsewhere["exception"] = old["exception"]
    twin = render_text(old, others={**others, new["id"]: elsewhere})
    assert f"Replaced by: {new['id']}: a like message raised elsewhere, in {site['path']} ({site['qualname']}), now" in twin
    assert "reworded" not in twin[twin.index("History\n") :]
    # The successor's page says what it replaced, the same way.
    successor = render_text(new, others=others)
    assert (
        f"Replaces: {old['id']}: reworded, was {old['message']['text']}"
        if same_exception
        else f"Replaces: {old['id']}: raised as Key<Error> instead of {old['exception']['name']}"
    ) in successor
    # A successor's message of several lines, with terminal escapes: one line on each page, inert.
    new["message"]["text"] = "bad\x1b[2J\n<i>second line"
    new["exception"] = old["exception"]
    for shown in (render_text(old, others=others), entry_html(old, "acme/widgets", titles, others=others), entry_markdown(old, titles, others=others)):
        row = shown[shown.index("Replaced by") :].split("\n", 1)[0]
        assert "reworded, now" in row and row.endswith(("bad\\x1b[2J …", "bad\\x1b[2J …</code></dd></dl>", "bad\\x1b[2J …`")), row
        assert "\x1b" not in shown and "second line" not in shown
    # Without the other record (a page of one record alone), it says the two ways it could be.
    alone = render_text(old)
    assert f"Replaced by: {new['id']}: reworded or raised as another exception" in alone
    # A note that says more than the row (a backfill's "removed after ..., by ...") is kept.
    old["history"]["retired_note"] = "removed after v0.10.0, by cccccccccccc"
    assert "removed after v0.10.0, by cccccccccccc" in render_text(old, others=others)


def test_a_machine_draft_no_one_reviewed_is_never_filed_as_explained_by_a_person(tmp_path):
    from click.testing import CliRunner

    from crawler.catalogue.search import search_file
    from crawler.cli.main import main
    from crawler.publish.writer import render_dataset, write_dataset

    recs = cd.records()
    drafted = next(r for r in recs if r["explanation_status"] == "absent")
    drafted["explanation_status"] = "draft"
    drafted["explanation"].update(what_it_means="A model wrote this.", model="some-model")
    manifest = cd.manifest_for(recs)
    dataset = write_dataset(tmp_path / "out" / "acme" / "widgets", render_dataset(recs, manifest, extra=search_file(recs, manifest)))
    result = CliRunner().invoke(main, ["render", "--data", str(dataset), "--out", str(tmp_path / "html")])
    assert result.exit_code == 0, result.output
    index = (tmp_path / "html" / "index.html").read_text(encoding="utf-8")
    row = index[index.index(f'<a href="errors/{drafted["id"]}.html">') :]
    row = row[: row.index("</li>")]
    assert "machine draft, not reviewed" in row and "by a person" not in row
    assert '<li data-s="drafted"' in index
    filters = dict(re.findall(r'value="(\w+)"[^>]*> ([^<]+) <span class="count">', index))
    assert filters["explained"] == "explained by a person" and filters["drafted"] == "machine draft, not reviewed"
    counts = dict(re.findall(r'value="(\w+)"[^>]*> [^<]+ <span class="count">(\d+)</span>', index))
    assert counts["explained"] == "1" and counts["drafted"] == "1"


@pytest.mark.slow
@settings(max_examples=300, deadline=None)
@given(
    st.lists(st.sampled_from([*"ab1 ._\n\t\"'#&<>()[]{}=:\\*/", "//", "/*", "*/", "fn ", "'a", "0x1F", "u8", "\u202e"]), max_size=60).map("".join),
    st.integers(1, 5000),
)
def test_native_highlighting_keeps_every_character(code, start):
    for out in (highlight_native(code), highlight_native(code, start, {start + 1})):
        text = html.unescape(re.sub(r'<span class="ln">[^<]*</span>|<[^>]+>', "", out))
        assert text == visible(code if code.endswith("\n") else code + "\n", newlines=True), out
        assert "<script" not in out and "\u202e" not in out


def test_native_snippets_are_coloured_as_cpp_and_rust_not_python():
    """Python's rules coloured 'and'/'with' in a C++ comment and read a Rust lifetime as a string."""
    out = highlight_native(
        "#include <x.h>\n// checks a and b with care\nfn f<'a>(x: &'a str) { let c = 'x'; }\nTORCH_CHECK(n < 0x1F, \"bad \", n); /* a\nb */ return 1;\n",
        17,
        {18},
    )
    for piece in (
        '<span class="cp">#include</span>',
        '<span class="c1">// checks a and b with care</span>',
        '<span class="k">fn</span> f&lt;\'a&gt;(x: &amp;\'a <span class="kt">str</span>)',
        "<span class=\"sc\">'x'</span>",
        '<span class="m">0x1F</span>',
        '<span class="s">"bad "</span>',
        '<span class="cm">/* a</span>',
        '<span class="cm">b */</span>',
        '<span class="k">return</span>',
        '<span class="hll"><span class="ln">18</span>',
    ):
        assert piece in out, piece
    assert '<span class="ow">and</span>' not in out


def test_errcat_show_reads_the_successor_to_say_how_an_entry_was_replaced(tmp_path):
    """The terminal page of `errcat show` reads the records the history names from the same
    dataset, as the site does; a successor's file that is not a valid record is left out."""
    from click.testing import CliRunner

    from crawler.cli.main import main

    dataset, records = cd.write_rich(tmp_path)
    retired, successor = records["_ordered"][-1], records["_ordered"][0]
    shown = CliRunner().invoke(main, ["show", retired["id"], "--data", str(dataset), "--no-pager"])
    assert shown.exit_code == 0, shown.output
    how = (
        f"raised as {successor['exception']['name']} instead of {retired['exception']['name']}"
        if successor["exception"]["name"] != retired["exception"]["name"]
        else f"reworded, now {successor['message']['text']}"
    )
    assert f"Replaced by: {successor['id']}: {how}" in shown.stdout
    assert shown.stdout.count("v0.11.0") == 1 and "removed in" not in shown.stdout
    (dataset / "errors" / f"{successor['id']}.json").write_text("{not json")
    shown = CliRunner().invoke(main, ["show", retired["id"], "--data", str(dataset), "--no-pager"])
    assert shown.exit_code == 0 and f"Replaced by: {successor['id']}: reworded or raised as another exception" in shown.stdout
