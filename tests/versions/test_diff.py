"""errcat diff: each class of change, on real git repositories crawled through the CLI."""

from __future__ import annotations

import json

import consumer_data as cd
import pytest
from helpers import CHECK_CODE, refused_in_one_line, release_tree, run_errcat, write_wheel
from jsonschema import Draft202012Validator
from pydantic import Field

from crawler.base.sink import command_data, command_property, md_code
from crawler.model.diff import Side
from crawler.model.records import COMMIT_PATTERN, Lifetime
from crawler.model.schemas import schema_for
from crawler.versions import diff as diff_module
from crawler.versions import history as history_module

ARGS = ["--name", "acme/widgets", "--include", "pkg/**/*.py"]

BASE = """
def check(x):
    if x < 0:
        raise ValueError(f"x must be positive, got {x}")
    return x
"""


def run_diff(cli, repo, *extra):
    result = cli("diff", "v1", "v2", "--repo", repo.path, *ARGS, "--format", "json", *extra)
    assert result.exit_code == 0, result.output
    return json.loads(result.stdout)


CASES = [
    ("unchanged", {"pkg/a.py": BASE}, {"pkg/a.py": BASE + "\n\nX = 1\n"}, set()),
    ("moved", {"pkg/a.py": BASE}, {"pkg/a.py": "import os\n\n\n" + BASE}, {"moved"}),
    ("moved to another file", {"pkg/a.py": BASE}, {"pkg/a.py": None, "pkg/b.py": BASE}, {"moved"}),
    ("added", {"pkg/a.py": BASE}, {"pkg/a.py": BASE + "\n\ndef g():\n    raise KeyError('no such widget')\n"}, {"added"}),
    ("removed", {"pkg/a.py": BASE + "\n\ndef g():\n    raise KeyError('no such widget')\n"}, {"pkg/a.py": BASE}, {"removed"}),
    ("reworded", {"pkg/a.py": BASE}, {"pkg/a.py": BASE.replace("must be positive", "must be strictly positive")}, {"reworded"}),
    ("exception changed", {"pkg/a.py": BASE}, {"pkg/a.py": BASE.replace("ValueError", "TypeError")}, {"exception-changed"}),
    ("rewritten, not reworded", {"pkg/a.py": BASE}, {"pkg/a.py": BASE.replace("x must be positive, got {x}", "negative input rejected")}, {"added", "removed"}),
    (
        "same words in another function",
        {"pkg/a.py": BASE},
        {"pkg/a.py": BASE.replace("def check", "def other").replace("must be positive", "must be strictly positive")},
        {"added", "removed"},
    ),
    ("sites added", {"pkg/a.py": BASE}, {"pkg/a.py": BASE + BASE.replace("def check", "def check2")}, {"sites-added"}),
    ("sites removed", {"pkg/a.py": BASE + BASE.replace("def check", "def check2")}, {"pkg/a.py": BASE}, {"sites-removed"}),
]


@pytest.mark.slow
@pytest.mark.parametrize("old, new, expected", [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_each_class_of_change(fixture_repo, cli, old, new, expected):
    fixture_repo.commit({"pkg/__init__.py": "", **old}, tag="v1")
    fixture_repo.commit(new, tag="v2")
    report = run_diff(cli, fixture_repo)
    assert {c["kind"] for c in report["changes"]} == expected
    Draft202012Validator(schema_for("diff")).validate(report)
    assert report["old"]["ref"] == "v1" and report["new"]["ref"] == "v2"


@pytest.mark.slow
def test_reworded_links_the_old_id(fixture_repo, cli):
    fixture_repo.commit({"pkg/__init__.py": "", "pkg/a.py": BASE}, tag="v1")
    fixture_repo.commit({"pkg/a.py": BASE.replace("must be positive", "must be strictly positive")}, tag="v2")
    (change,) = run_diff(cli, fixture_repo)["changes"]
    assert change["old_id"] and change["old_id"] != change["id"]
    assert change["old_template"] == "x must be positive, got {x}"
    assert change["template"] == "x must be strictly positive, got {x}"
    assert 0.6 <= change["similarity"] < 1


@pytest.mark.slow
def test_a_move_names_both_lines(fixture_repo, cli):
    fixture_repo.commit({"pkg/__init__.py": "", "pkg/a.py": BASE}, tag="v1")
    fixture_repo.commit({"pkg/a.py": "# moved\n" * 4 + BASE}, tag="v2")
    (change,) = run_diff(cli, fixture_repo)["changes"]
    assert change["kind"] == "moved"
    (site,) = change["sites"]
    assert (site["old"]["line"], site["new"]["line"]) == (3, 8)
    assert change["summary"] == "error moved: x must be positive, got {x} (pkg/a.py:3 -> 8)"


@pytest.fixture
def two_versions(fixture_repo):
    fixture_repo.commit({"pkg/__init__.py": "", "pkg/a.py": BASE + "\n\ndef g():\n    raise KeyError('gone soon')\n"}, tag="v1")
    fixture_repo.commit(
        {
            "pkg/a.py": "# v2\n"
            + BASE.replace("must be positive", "must be strictly positive")
            + "\n\ndef h(name):\n    raise LookupError(f'no widget | named `{name}` @team <b>,%: 100%')\n"
        },
        tag="v2",
    )
    return fixture_repo


@pytest.mark.slow
def test_markdown_is_a_changelog(two_versions, cli):
    result = cli("diff", "v1", "v2", "--repo", two_versions.path, *ARGS, "--format", "markdown")
    assert result.exit_code == 0
    text = result.stdout
    lines = text.splitlines()
    assert lines[0] == "## Error catalogue: `acme/widgets` `v1` → `v2`"
    table = lines.index("| Change | Count |")
    assert lines[table + 2 : table + 5] == ["| Error removed | 1 |", "| Message reworded | 1 |", "| Error added | 1 |"]
    assert text.index("### Error removed (1)") < text.index("### Message reworded (1)") < text.index("### Error added (1)")
    added = next(line for line in lines if "LookupError" in line)
    # Crawled text sits in code spans: no markup, no @mention, no raw HTML; linked to the site.
    assert added.startswith("- [``no widget | named `{name}` @team <b>,%: 100%``](<https://github.com/acme/widgets/blob/")
    assert "/pkg/a.py#L" in added and "`pkg/a.py:" in added
    reworded = next(line for line in lines if "strictly" in line)
    assert "was `x must be positive, got {x}`" in reworded


@pytest.mark.slow
def test_github_annotations_are_escaped(two_versions, cli):
    result = cli("diff", "v1", "v2", "--repo", two_versions.path, *ARGS, "--format", "github")
    assert result.exit_code == 0
    lines = result.stdout.splitlines()
    assert len(lines) == 3 and all(line.startswith("::notice file=pkg/a.py,line=") for line in lines)
    added = next(line for line in lines if "LookupError" in line)
    assert ",title=errcat%3A error added::" in added
    assert "100%25" in added and "%0A" not in added  # % escaped in the message
    assert command_data("a\nb\r%") == "a%0Ab\\r%25"  # a bare CR is shown, not sent
    assert command_property("x:1,y") == "x%3A1%2Cy"


@pytest.mark.slow
def test_fail_on_sets_the_exit_code(two_versions, cli):
    base = ["diff", "v1", "v2", "--repo", two_versions.path, *ARGS]
    assert cli(*base, "--fail-on", "moved,sites-added").exit_code == 0
    assert cli(*base, "--fail-on", "removed").exit_code == 1
    assert cli(*base, "--fail-on", "any").exit_code == 1
    bad = cli(*base, "--fail-on", "gone")
    assert bad.exit_code == 2 and bad.stderr.startswith("errcat: --fail-on 'gone'")


@pytest.mark.slow
def test_output_directories_diff_like_refs(two_versions, cli, tmp_path):
    for tag in ("v1", "v2"):
        assert cli("crawl", "--repo", two_versions.path, "--ref", tag, *ARGS, "--out", tmp_path / tag).exit_code == 0
    from_dirs = cli("diff", tmp_path / "v1", tmp_path / "v2" / "acme" / "widgets", "--format", "json")
    assert from_dirs.exit_code == 0, from_dirs.output
    assert json.loads(from_dirs.stdout) == run_diff(cli, two_versions)


def test_unknown_ref_is_one_line(fixture_repo, cli):
    fixture_repo.commit({"pkg/__init__.py": "", "pkg/a.py": BASE}, tag="v1")
    result = cli("diff", "v1", "nope", "--repo", fixture_repo.path, *ARGS)
    assert result.exit_code == 2
    errors = [line for line in result.stderr.splitlines() if line.startswith("errcat: ")]
    assert len(errors) == 1 and "unknown ref or commit 'nope'" in errors[0]


def test_code_spans_survive_backticks():
    assert md_code("a`b") == "``a`b``"
    assert md_code("`x`") == "`` `x` ``"


def _record(*spots):
    """One entry ('module has no attribute') raised at each (path, line, qualname)."""
    from crawler.catalogue.entries import Identity, build_records
    from crawler.model.records import Record, RepoRef

    identity = Identity(RepoRef(url="https://github.com/o/n", owner="o", name="n"), "a" * 40, "2026-01-01T00:00:00+00:00", None, "git")
    sites = [
        {
            "path": path,
            "line": line,
            "end_line": line,
            "module": path[:-3].replace("/", "."),
            "qualname": qualname,
            "kind": "raise",
            "exception": "AttributeError",
            "exception_qualname": "builtins.AttributeError",
            "template": {"text": "module has no attribute {name}", "fields": [{"expr": "name", "name": "name"}], "pattern": "^x$", "form": "fstring"},
            "snippet": {"start_line": line, "end_line": line, "code": "raise AttributeError(...)"},
            "facts": {},
        }
        for path, line, qualname in spots
    ]
    (record,) = build_records(identity, sites)
    return Record.model_validate(record)


@pytest.mark.parametrize(
    "old, new, moves, added, removed",
    [
        # A generic name in another module is another site, not the same one moved.
        (
            [("p/a.py", 5, "__getattr__"), ("p/b.py", 9, "__getattr__")],
            [("p/a.py", 6, "__getattr__"), ("p/c.py", 3, "__getattr__")],
            [("p/a.py", 5, "p/a.py", 6)],
            ["p/c.py"],
            ["p/b.py"],
        ),
        # The same file under another package is the site moved.
        ([("p/a.py", 5, "f"), ("p/old/b.py", 9, "g")], [("p/a.py", 5, "f"), ("p/new/b.py", 12, "g")], [("p/old/b.py", 9, "p/new/b.py", 12)], [], []),
        # A lone site anywhere else is the error moved.
        ([("p/a.py", 5, "f")], [("p/z.py", 1, "h")], [("p/a.py", 5, "p/z.py", 1)], [], []),
        # A module split: its functions, and their raises, went to another file. The diff said the
        # checks were dropped ("sites removed") and others added ("sites added").
        (
            [("p/chat_utils.py", 5, "P.parse"), ("p/chat_utils.py", 9, "A.parse"), ("p/x.py", 2, "f")],
            [("p/parser.py", 7, "P.parse"), ("p/parser.py", 11, "A.parse"), ("p/x.py", 2, "f")],
            [("p/chat_utils.py", 5, "p/parser.py", 7), ("p/chat_utils.py", 9, "p/parser.py", 11)],
            [],
            [],
        ),
        # ... but not when the function raises it more often on one side: which went where is unknown.
        ([("p/a.py", 5, "f"), ("p/x.py", 2, "g")], [("p/b.py", 7, "f"), ("p/b.py", 9, "f"), ("p/x.py", 2, "g")], [], ["p/b.py", "p/b.py"], ["p/a.py"]),
    ],
)
def test_site_matching(old, new, moves, added, removed):
    from crawler.versions.diff import match_sites

    pairs, plus, minus = match_sites(_record(*old).sites, _record(*new).sites)
    assert [(a.path, a.line, b.path, b.line) for a, b in pairs] == moves
    assert [s.path for s in plus] == added and [s.path for s in minus] == removed


# --------------------------------------------------------------------------- releases

OLD_SHORT, NEW_SHORT = "5df63a720", "7e2b1c9d4"  # releases record the upstream commit abbreviated
MOVED = "import os\n\n" + CHECK_CODE


@pytest.fixture
def releases(fixture_repo):
    """Two release commits in vLLM's layout (tags v0.32.0, v0.33.0); both errors move."""
    fixture_repo.commit(release_tree(OLD_SHORT), tag="v0.32.0")
    fixture_repo.commit(release_tree(NEW_SHORT, MOVED), tag="v0.33.0")
    return fixture_repo


def check_release_report(report: dict) -> None:
    Draft202012Validator(schema_for("diff")).validate(report)
    assert (report["old"]["upstream_commit"], report["new"]["upstream_commit"]) == (OLD_SHORT, NEW_SHORT)
    assert [c["kind"] for c in report["changes"]] == ["moved", "moved"]
    assert all(f"/blob/{NEW_SHORT}/vllm/check.py#L" in c["location"]["permalink"] for c in report["changes"])


@pytest.mark.slow
def test_release_datasets_diff_with_their_abbreviated_upstream_commits(releases, cli, tmp_path):
    """The report's sides once took only 40-digit upstream commits, so any diff of releases
    (even of a dataset with itself) ended in pydantic's traceback."""
    dirs = []
    for tag in ("v0.32.0", "v0.33.0"):
        assert cli("crawl", "--repo", releases.path, "--ref", tag, "--name", "acme/widgets", "--out", tmp_path / tag).exit_code == 0
        dirs.append(tmp_path / tag / "acme" / "widgets")
    assert json.loads((dirs[0] / "manifest.json").read_text())["upstream_commit"] == OLD_SHORT
    itself = cli("diff", dirs[0], dirs[0], "--format", "json")
    assert itself.exit_code == 0, itself.output
    assert json.loads(itself.stdout)["changes"] == []
    from_dirs = cli("diff", dirs[0], dirs[1], "--format", "json")
    from_refs = cli("diff", "v0.32.0", "v0.33.0", "--repo", releases.path, "--name", "acme/widgets", "--format", "json")
    for result in (from_dirs, from_refs):
        assert result.exit_code == 0, result.output
        check_release_report(json.loads(result.stdout))
    assert json.loads(from_dirs.stdout) == json.loads(from_refs.stdout)


@pytest.mark.slow
def test_a_dataset_without_its_records_is_one_line(releases, cli, tmp_path):
    assert cli("crawl", "--repo", releases.path, "--ref", "v0.32.0", "--name", "acme/widgets", "--out", tmp_path).exit_code == 0
    dataset = tmp_path / "acme" / "widgets"
    (dataset / "errors.jsonl.gz").unlink()
    result = cli("diff", dataset, dataset)
    assert result.exit_code == 1
    assert result.stderr.endswith(f"\nerrcat: {dataset}/errors.jsonl.gz: cannot read: No such file or directory\n")


@pytest.mark.slow
def test_two_releases_from_the_package_index_diff_without_git(cli, cache_dir, no_git):
    for version, short, code in (("0.32.0", OLD_SHORT, CHECK_CODE), ("0.33.0", NEW_SHORT, MOVED)):
        write_wheel(cache_dir / "pypi" / f"vllm-{version}" / f"vllm-{version}-py3-none-any.whl", release_tree(short, code))
    result = cli("diff", "vllm==0.32.0", "vllm==0.33.0", "--pypi", "--format", "json")
    assert result.exit_code == 0, result.output
    report = json.loads(result.stdout)
    check_release_report(report)
    assert report["repo"] == "vllm-project/vllm"
    assert (report["old"]["release"], report["new"]["release"]) == ("vllm==0.32.0", "vllm==0.33.0")
    assert "vllm==0.32.0 -> vllm==0.33.0: " in result.stderr
    bare = cli("diff", "0.32.0", "0.33.0", "--pypi", "--format", "json")  # versions of the upstream's package
    assert bare.exit_code == 0 and json.loads(bare.stdout) == report
    changelog = cli("diff", "0.32.0", "0.33.0", "--pypi", "--format", "markdown").stdout
    assert changelog.startswith("## Error catalogue: `vllm-project/vllm` `vllm==0.32.0` → `vllm==0.33.0`\n")


@pytest.mark.parametrize(
    "args, message",
    [
        (["vllm==0.32.0", "six==1.16.0"], "errcat: --pypi: OLD and NEW name two packages (six, vllm); a diff is of one"),
        (["0.32.0", "0.33.0", "--repo", "https://github.com/vllm-project/vllm"], "errcat: --pypi reads releases from the package index: leave out --repo"),
        (["vllm==0.32.0", "vllm==--index-url=http://x"], "errcat: refusing --pypi 'vllm==--index-url=http://x'"),
    ],
)
def test_pypi_diff_refusals_come_before_any_download(cli, no_git, args, message):
    result = cli("diff", *args, "--pypi")
    assert result.exit_code == 2
    assert [line for line in result.stderr.splitlines() if line.startswith("errcat: ")] == [result.stderr.strip()]
    assert result.stderr.startswith(message)


class FortyDigitSide(Side):
    """The report side as it was: 40-digit upstream commits only."""

    upstream_commit: str | None = Field(default=None, pattern=COMMIT_PATTERN)


class NoVersionLifetime(Lifetime):
    version: None = None


@pytest.mark.slow
@pytest.mark.parametrize(
    "command, model, expected",
    [
        ("diff", FortyDigitSide, "errcat: invalid FortyDigitSide: upstream_commit: String should match pattern '^[0-9a-f]{40}$', got '5df63a720'"),
        ("sync", FortyDigitSide, "errcat: invalid FortyDigitSide: upstream_commit: String should match pattern '^[0-9a-f]{40}$', got '5df63a720'"),
        ("history", NoVersionLifetime, "errcat: invalid NoVersionLifetime: version: Input should be None, got 'v0.32.0'"),
    ],
)
def test_data_a_model_refuses_is_one_line_in_every_versions_command(releases, cli, tmp_path, monkeypatch, command, model, expected):
    """Whatever model refuses data on the way (here a stricter one swapped in), the user gets
    errcat's one line and exit 1, not a traceback."""
    monkeypatch.setattr(diff_module if model is FortyDigitSide else history_module, model.__bases__[0].__name__, model)
    common = ["--repo", releases.path, "--name", "acme/widgets"]
    out = tmp_path / "out"
    if command == "diff":
        result = cli("diff", "v0.32.0", "v0.33.0", *common)
    elif command == "sync":
        assert cli("sync", *common, "--ref", "v0.32.0", "--out", out).exit_code == 0  # nothing to diff yet
        result = cli("sync", *common, "--ref", "v0.33.0", "--out", out)
    else:
        result = cli("history", *common, "--out", out, "v0.32.0", "v0.33.0")
    assert result.exit_code == 1
    assert [line for line in result.stderr.splitlines() if line.startswith("errcat: ")] == [expected]
    assert result.stderr.rstrip().endswith(expected) and "validation error" not in result.output


@pytest.mark.slow
@pytest.mark.parametrize("how", ["read-only", "file-size-limit", "file-for-a-directory"])
def test_a_report_the_system_refuses_is_one_line_and_keeps_the_last_one(tmp_path, how):
    old, new = cd.write_many(tmp_path / "v1", 30, "v1"), cd.write_many(tmp_path / "v2", 30, "v2")
    reports = tmp_path / "reports"
    report = reports / "diff.json"
    assert run_errcat(["diff", old, new, "--format", "json", "-o", report], "as is", reports).returncode == 0
    if how == "file-for-a-directory":
        (reports / "taken").write_text("a file\n")
        report = reports / "taken" / "diff.json"
    before = {p.name: p.read_bytes() for p in reports.iterdir()}
    proc = run_errcat(["diff", new, old, "--format", "json", "-o", report], how, reports)
    refused_in_one_line(proc, f"errcat: cannot write {report}: ")
    assert {p.name: p.read_bytes() for p in reports.iterdir()} == before


def test_a_report_replaces_a_symlink_at_its_path_and_never_writes_through_it(tmp_path, cli):
    old, new = cd.write_many(tmp_path / "v1", 3, "v1"), cd.write_many(tmp_path / "v2", 3, "v2")
    victim = tmp_path / "victim.txt"
    victim.write_text("mine\n")
    report = tmp_path / "report.md"
    report.symlink_to(victim)
    assert cli("diff", old, new, "--format", "markdown", "-o", report).exit_code == 0
    assert victim.read_text() == "mine\n" and not report.is_symlink() and report.read_text().startswith("#")
    assert sorted(p.name for p in tmp_path.iterdir() if p.name != "cache") == ["report.md", "v1", "v2", "victim.txt"]


def test_every_kind_has_a_label_and_the_json_spells_its_value():
    from crawler.model.diff import LABELS, ChangeKind

    assert set(LABELS) == set(ChangeKind)
    assert schema_for("diff")["$defs"]["ChangeKind"]["enum"] == [k.value for k in ChangeKind]


def test_link_pairs_exactly_what_comparing_every_removed_with_every_added_record_pairs():
    """``link`` files the added records by the key parts a pair shares rather than comparing
    each removed record with every added one: the pairs, kinds and ratios are those of the
    comparison of all of them (written out here as the definition)."""
    import difflib

    from crawler.model.records import Record
    from crawler.versions.diff import REWORD_RATIO, _functions, _key, _normalized, link

    texts = ["the block size ", "the block size of the cache ", "no such device ", "no such devices ", "unknown kind "]
    where = [("pkg/a.py", "f"), ("pkg/a.py", "g"), ("pkg/b.py", "f")]
    sites = [
        cd.site(cd.template(text, ("x",)), path, 10 + n, fn, exc)
        for n, (text, (path, fn), exc) in enumerate((t, w, e) for t in texts for w in where for e in ("ValueError", "KeyError"))
    ]
    sites.append(cd.site(cd.template(("msg",)), "pkg/c.py", 3, "h", "RuntimeError"))  # no text: keyed by its function
    sites.append(cd.site(cd.template(("msg",)), "pkg/c.py", 3, "h", "TypeError"))
    records = [Record.model_validate(r) for r in cd.build_records(cd.IDENTITY, sites, {})]
    removed, added = records[::2], records[1::2]
    expected = []
    for old in removed:
        for new in added:
            okey, nkey, shared = _key(old), _key(new), bool(_functions(old) & _functions(new))
            if okey[0] == nkey[0] and okey[1] != nkey[1] and okey[2:] == nkey[2:]:
                expected.append((2.0 + shared, old.id, new.id, "exception", 1.0))
            elif okey[0] == nkey[0] == "message" and okey[1] == nkey[1] and shared:
                ratio = difflib.SequenceMatcher(None, _normalized(old), _normalized(new), autojunk=False).ratio()
                if ratio >= REWORD_RATIO:
                    expected.append((ratio, old.id, new.id, "reworded", ratio))
    expected.sort(key=lambda c: (-c[0], c[1], c[2]))
    pairs, used_old, used_new = [], set(), set()
    for _, oid, nid, _kind, ratio in expected:
        if oid not in used_old and nid not in used_new:
            used_old.add(oid)
            used_new.add(nid)
            pairs.append((oid, nid, round(ratio, 3)))
    got = [(old.id, new.id, ratio) for _, old, new, ratio in link(removed, added)]
    assert got == pairs and {kind.value for kind, *_ in link(removed, added)} == {"exception-changed", "reworded"}


@pytest.mark.slow
def test_a_rewording_past_the_title_is_shown(fixture_repo, cli):
    """The titles are a message's first 60 characters: a change further on gave a summary of two
    equal titles ('... pairs are…' -> '... pairs are…'), telling a maintainer nothing."""
    head = "fp32_router_gemm: supported (hidden_dim, num_experts) pairs are "
    code = 'def g(n):\n    if n:\n        raise ValueError("' + head + '{}")\n'
    fixture_repo.commit({"pkg/__init__.py": "", "pkg/a.py": code.replace("{}", "(3072, 256) and (6144, 128)")}, tag="v1")
    fixture_repo.commit({"pkg/a.py": code.replace("{}", "(3072, 256), (6144, 128) and (5120, 256)")}, tag="v2")
    (change,) = run_diff(cli, fixture_repo)["changes"]
    assert change["kind"] == "reworded"
    assert change["summary"] == ("message reworded: '…are (3072, 256) and (6144, 128)' -> '…are (3072, 256), (6144, 128) and (5120, 256)' (pkg/a.py:3)")
    text = cli("diff", "v1", "v2", "--repo", fixture_repo.path, *ARGS, "--format", "markdown").stdout
    assert f"now `{head}(3072, 256), (6144, 128) and (5120, 256)`" in text


@pytest.mark.slow
def test_an_unknown_ref_or_a_missing_directory_is_refused_before_anything_is_crawled(fixture_repo, cli, tmp_path):
    """'errcat diff v0.32.0 v9.9.9' crawled v0.32.0 (40 s on vLLM) before saying v9.9.9 was
    unknown; a mistyped dataset path was taken for a ref ("refusing ref", or a git refspec error
    from the fetch of './nonexist')."""
    fixture_repo.commit({"pkg/__init__.py": "", "pkg/a.py": BASE}, tag="v1")
    run = cli("diff", "v1", "v9", "--repo", fixture_repo.path, *ARGS)
    assert run.exit_code == 2 and "crawling" not in run.stderr
    assert run.stderr.splitlines() == [f"errcat: {fixture_repo.path}: unknown ref or commit 'v9'"]
    for missing in (f"{tmp_path}/old-output", "./old-output"):
        run = cli("diff", missing, "v1", "--repo", fixture_repo.path, *ARGS)
        assert run.exit_code == 2 and "crawling" not in run.stderr
        assert run.stderr.splitlines() == [f"errcat: {missing}: no such dataset directory (OLD and NEW are refs, releases or dataset directories)"]


RESPONSES = """\
default = "widgets"

[upstreams.widgets]
url = "https://github.com/acme/widgets"
include = ["pkg/**/*.py"]
kinds = ["raise", "log", "response"]

[[upstreams.widgets.responses]]
call = "create_error_response"
params = ["message", "err_type", "status_code"]
message = "message"
error_type = "err_type"
status_code = "status_code"
"""

SERVING = """
import logging
logger = logging.getLogger(__name__)


class Serving:
    def handle(self, req):
        if req.full:
            logger.warning("cache is full: %d items", req.n)
        if req.missing:
            return self.create_error_response("model not found", err_type="NotFoundError", status_code=404)
"""


@pytest.mark.slow
def test_a_log_level_or_an_http_answer_that_changed_is_said_in_its_own_words(fixture_repo, cli, tmp_path):
    """A log's level is no exception, nor a response's error type; and a response answered with
    another status (same id) is a change: the diff said 'exception changed (WARNING -> ERROR)',
    and of 404 -> 410 nothing at all, 'unchanged'."""
    config = tmp_path / "errcat.toml"
    config.write_text(RESPONSES)
    fixture_repo.commit({"pkg/__init__.py": "", "pkg/serving.py": SERVING}, tag="v1")
    fixture_repo.commit({"pkg/serving.py": SERVING.replace("logger.warning", "logger.error").replace("404", "410")}, tag="v2")
    args = ["diff", "v1", "v2", "--repo", fixture_repo.path, "--config", config]
    oneline = cli(*args)
    assert oneline.exit_code == 0, oneline.output
    lines = oneline.stdout.splitlines()
    assert [line.split(": ", 2)[1] for line in lines] == ["log level changed", "error response changed"]
    assert "(WARNING -> ERROR, pkg/serving.py:8)" in lines[0]
    assert "(HTTP 404 NotFoundError -> HTTP 410 NotFoundError, pkg/serving.py:10)" in lines[1]
    report = json.loads(cli(*args, "--format", "json").stdout)
    Draft202012Validator(schema_for("diff")).validate(report)
    answered = report["changes"][1]
    assert (answered["entry_kind"], answered["old_status_code"], answered["status_code"]) == ("response", 404, 410)
    assert answered["old_id"] == answered["id"] and report["counts"]["unchanged"] == 0
    text = cli(*args, "--format", "markdown").stdout
    assert "· `ERROR` — `pkg/serving.py:8`, was logged at `WARNING` (" in text
    assert f"· `HTTP 410 NotFoundError` — `pkg/serving.py:10`, answered `HTTP 404 NotFoundError` before (`{answered['id']}`)" in text


@pytest.mark.slow
def test_a_dataset_whose_manifest_names_a_ref_of_several_lines_is_named_on_one(two_versions, cli, tmp_path):
    """A dataset's ref is its manifest's word: ``v9\\n::error::forged`` split the summary line a CI
    log shows (and the sync's ``changed=`` line) in two; now the label is one line, its controls shown."""
    for tag in ("v1", "v2"):
        assert cli("crawl", "--repo", two_versions.path, "--ref", tag, *ARGS, "--out", tmp_path / tag).exit_code == 0
    manifest = tmp_path / "v2" / "acme" / "widgets" / "manifest.json"
    data = json.loads(manifest.read_text())
    data["ref"] = "v9\n::error::forged\r\x1b[31m"
    manifest.write_text(json.dumps(data))
    result = cli("diff", tmp_path / "v1", tmp_path / "v2")
    assert result.exit_code == 0, result.output
    (summary,) = [line for line in result.stderr.splitlines() if " -> " in line or "forged" in line]
    assert summary.startswith("v1 -> v9 ::error::forged \\x1b[31m: "), summary
