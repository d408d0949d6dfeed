"""The sync's changelog (the pull request's body) tells a reviewed text already settled from one
to look at, and says what was done for each (#31 items 1, 3): a text retired with `errcat curate
retire`, an entry linked to a successor by review or reworded under a new id whose successor has a
text of its own, a text re-read for new guards with `--still-holds-for-earlier`. Every line it
writes of a page is true of the page the same sync wrote: a successor's page shows none of its
predecessor's text, the retired page keeps its own. Through the real CLI, and through the sync
workflow's own `run:` steps."""

from __future__ import annotations

import json
import subprocess

import pytest
import yaml
from helpers import jsonl_bytes
from test_workflows import CONFIG, run_workflow, runner  # noqa: F401 (runner: the workflow tests' fixture)

ARGS = ["--name", "acme/widgets", "--include", "pkg/**/*.py"]

V1 = """
def check(x, mode):
    if x < 0:
        raise ValueError(f"x must be positive, got {x}")
    if x > 10:
        raise OverflowError("x is far too large")
    if x == 5:
        raise KeyError("five is reserved")
    if mode == "fast":
        raise RuntimeError("fast mode is off")
    if x == 7:
        raise LookupError("seven is taken")
    if x == 9:
        raise ArithmeticError("nine is odd")
    return x
"""

#: v2: "positive" and "five" removed, "far too large" and "seven" reworded, a successor of "five"
#: worded anew ("three"), and the guards of "fast" and "nine" changed under their ids
V2 = """
def check(x, mode):
    if x > 10:
        raise OverflowError("x is much too large")
    if x == 3:
        raise KeyError("three is the new five")
    if mode in ("fast", "quick"):
        raise RuntimeError("fast mode is off")
    if x == 7:
        raise LookupError("seven is now taken")
    if x == 9 or x == 19:
        raise ArithmeticError("nine is odd")
    return x
"""


def _ids(data):
    return {r["message"]["text"]: r["id"] for r in map(json.loads, jsonl_bytes(data).splitlines())}


def _ok(result):
    assert result.exit_code == 0, result.output
    return result


def _reviewed(cli, data, eid, what=None):
    _ok(cli("curate", "draft", eid, "--data", data))
    if what is None:
        _ok(cli("curate", "review", eid, "--read-and-accept-as-is", "--data", data))
        return
    path = data.parents[2] / "curated" / "acme" / "widgets" / f"{eid}.yaml"  # a person's own words, told apart on a page
    path.write_text(path.read_text().replace("what_it_means: ", f"what_it_means: {what} ", 1))
    _ok(cli("curate", "review", eid, "--data", data))


def _first_sync(fixture_repo, cli, tmp_path, monkeypatch):
    """V1 committed and synced into a catalogue, run from a directory whose curated/ is the errcat home."""
    (tmp_path / "curated").mkdir()
    monkeypatch.chdir(tmp_path)
    fixture_repo.commit({"pkg/__init__.py": "", "pkg/a.py": V1})
    out = tmp_path / "out"
    _ok(cli("sync", "--repo", fixture_repo.path, *ARGS, "--out", out))
    return out, out / "acme" / "widgets", tmp_path / "changelog.md"


def _section(text, head):
    start = text.index(head)
    end = text.find("\n### ", start + len(head))
    return text[start : end if end != -1 else len(text)]


@pytest.mark.slow
def test_the_changelog_tells_the_texts_settled_by_review_from_those_to_look_at(fixture_repo, cli, tmp_path, monkeypatch):
    out, data, changelog = _first_sync(fixture_repo, cli, tmp_path, monkeypatch)
    one = _ids(data)
    positive, large, five, fast, seven, nine = (
        one[t] for t in ("x must be positive, got {x}", "x is far too large", "five is reserved", "fast mode is off", "seven is taken", "nine is odd")
    )
    for eid in (positive, large, five, fast, nine):
        _reviewed(cli, data, eid)
    _reviewed(cli, data, seven, what="Sevenfold-words.")
    _ok(cli("sync", "--repo", fixture_repo.path, *ARGS, "--out", out))  # the reviewed texts merged

    # The release is crawled first (as s44-curate did for vLLM 0.34.0), and four texts settled before the sync.
    fixture_repo.commit({"pkg/a.py": V2})
    ahead = tmp_path / "ahead"
    _ok(cli("crawl", "--repo", fixture_repo.path, *ARGS, "--out", ahead))
    two = _ids(ahead / "acme" / "widgets")
    much, three, seven_now = two["x is much too large"], two["three is the new five"], two["seven is now taken"]
    _ok(cli("curate", "retire", positive, "--note", "gone in v2", "--data", data))
    _reviewed(cli, ahead / "acme" / "widgets", much)  # each release keeps its own text
    _ok(cli("curate", "retire", large, "--data", data))
    _reviewed(cli, ahead / "acme" / "widgets", three)
    _ok(cli("curate", "retire", five, "--data", data))
    link = {"old": five, "new": three, "review": {"why": "The same check of x, worded anew.", "reviewer": "t", "old_release": "1", "commit": "0" * 40}}
    (tmp_path / "curated" / "acme" / "widgets" / "lineage").mkdir()
    (tmp_path / "curated" / "acme" / "widgets" / "lineage" / "links.yaml").write_text(yaml.safe_dump({"links": [link]}))
    _ok(cli("curate", "review", fast, "--still-holds-for-earlier", "--data", ahead / "acme" / "widgets"))

    _ok(cli("sync", "--repo", fixture_repo.path, *ARGS, "--out", out, "--changelog", changelog))
    text = changelog.read_text()
    look = _section(text, "### Curated texts to look at (2)")
    settled = _section(text, "### Curated texts already settled (4)")
    assert text.index("| Change | Count |") < text.index("### Curated texts to look at") < text.index("### Curated texts already settled")
    for eid in (positive, large, five, fast):
        assert f"`{eid}`" in settled and f"`{eid}`" not in look, eid
        assert f"errcat curate move {eid}" not in text and f"`errcat curate retire {eid}`" not in text  # no command left to run
    assert f"- `{positive}` (`x must be positive, got {{x}}`) was removed upstream: retired by review (`errcat curate retire`)" in settled
    assert (
        f"- `{large}` → `{much}` (message reworded): `{much}` has a reviewed text of its own; `{large}`'s page keeps the text it had (retired by review)"
        in settled
    )
    assert f"- `{five}` (`five is reserved`) → `{three}` (removed upstream, linked by review): `{three}` has a reviewed text of its own" in settled
    assert f"- `{fast}` (`fast mode is off`): its guards changed in `{_label(text)}`: re-read for both releases" in settled
    # the two left: a rewording nobody settled, and guards nobody re-read
    assert f"- `{seven}` → `{seven_now}` (message reworded): `{seven_now}`'s page shows no reviewed text" in look
    assert f"`errcat curate move {seven} {seven_now}`" in look and "as written for the earlier one" not in text
    assert f"- `{nine}` (`nine is odd`): its guards changed" in look and f"`errcat curate review {nine}`" in look

    # what it says of the pages is what the pages show
    successor = _ok(cli("show", seven_now, "--data", data)).stdout
    assert "Sevenfold-words." not in successor and "Not yet explained." in successor  # none of its predecessor's text
    assert "Sevenfold-words." in _ok(cli("show", seven, "--data", data)).stdout  # the retired page keeps its own
    records = {r["id"]: r for r in map(json.loads, jsonl_bytes(data).splitlines())}
    assert {eid: records[eid]["explanation_status"] for eid in (positive, large, much, three, fast)} == dict.fromkeys(
        (positive, large, much, three, fast), "curated"
    )
    assert records[nine]["explanation_status"] == "draft" and records[nine]["explanation"]["stale_since"]  # "a draft that may be out of date"
    assert records[five]["history"]["replaced_by"] == three


def _label(text):
    """The new side's label as the changelog's heading names it (``… → `LABEL```)."""
    return text.splitlines()[0].rsplit("`", 2)[-2]


@pytest.mark.slow
def test_a_change_whose_texts_are_all_settled_says_none_is_to_look_at(fixture_repo, cli, tmp_path, monkeypatch):
    out, data, changelog = _first_sync(fixture_repo, cli, tmp_path, monkeypatch)
    positive = _ids(data)["x must be positive, got {x}"]
    _reviewed(cli, data, positive)
    _ok(cli("sync", "--repo", fixture_repo.path, *ARGS, "--out", out))
    fixture_repo.commit({"pkg/a.py": V1.replace('        raise ValueError(f"x must be positive, got {x}")', "        return 0")})
    _ok(cli("curate", "retire", positive, "--data", data))
    _ok(cli("sync", "--repo", fixture_repo.path, *ARGS, "--out", out, "--changelog", changelog))
    text = changelog.read_text()
    assert "### Curated texts to look at" not in text and "### Curated texts already settled (1)" in text
    assert "No curated text to look at: each one this change touches was settled by review (below)." in text
    assert _ok(cli("curate", "check", "--strict", "--data", out)).exit_code == 0  # the check agrees: nothing left


@pytest.mark.slow
def test_the_sync_workflows_pull_request_body_says_a_retired_text_is_settled(fixture_repo, runner, cli, tmp_path):  # noqa: F811
    """The pull request's body as the workflow writes it (the crawl job's sync, the artifact,
    `errcat adopt` in the job that opens it): the curated files are the checkout's own."""
    main, runs, env = runner
    (main / "errcat.toml").write_text(CONFIG.split("[upstreams.gadgets]")[0])
    upstream = {"vllm": ({"ERRCAT_REPO": str(fixture_repo.path)}, "acme/widgets")}
    fixture_repo.commit({"vllm/__init__.py": "", "vllm/config.py": V1})
    # the text reviewed on main before the first run, for the id a crawl of the same commit gives
    ahead = tmp_path / "ahead"
    _ok(cli("crawl", "--repo", fixture_repo.path, "--name", "acme/widgets", "--include", "vllm/**/*.py", "--out", ahead))
    positive = _ids(ahead / "acme" / "widgets")["x must be positive, got {x}"]
    curated = main / "curated"
    _ok(cli("curate", "draft", positive, "--curated", curated, "--data", ahead / "acme" / "widgets"))
    _ok(cli("curate", "review", positive, "--read-and-accept-as-is", "--curated", curated, "--data", ahead / "acme" / "widgets"))
    _commit(main, "a reviewed text")
    run_workflow(main, runs, env, upstream)
    data = main / "output" / "acme" / "widgets"
    assert {r["id"]: r for r in map(json.loads, jsonl_bytes(data).splitlines())}[positive]["explanation_status"] == "curated"

    fixture_repo.commit({"vllm/config.py": V1.replace('        raise ValueError(f"x must be positive, got {x}")', "        return 0")})
    _ok(cli("curate", "retire", positive, "--curated", curated, "--data", data))
    _commit(main, "retired")
    result = run_workflow(main, runs, env, upstream)
    assert result["vllm"]["pull-request"][1][-1] == "Stage the catalogue"
    body = (runs / "run-1" / "pr-vllm-temp" / "changelog.md").read_text()
    assert "| Error removed | 1 |" in body and "### Curated texts already settled (1)" in body and "### Curated texts to look at" not in body
    assert f"- `{positive}` (`x must be positive, got {{x}}`) was removed upstream: retired by review (`errcat curate retire`)" in body


def _commit(main, message):
    """A maintainer's commit on main: the curated files are the repository's own (a file not
    committed would travel with the sync's artifact as a draft, and be refused)."""
    subprocess.run(["git", "add", "--", "curated"], cwd=main, check=True)
    subprocess.run(["git", "-c", "user.name=t", "-c", "user.email=t@example.invalid", "commit", "-qm", message], cwd=main, check=True)


@pytest.mark.slow
def test_the_command_the_changelog_gives_for_every_change_runs_and_lists_them(fixture_repo, cli, tmp_path, monkeypatch):
    """Past what the pull request's body holds, the changelog names the command that lists every
    change: the two commits as `errcat diff` takes them (a bare `errcat diff --format json` takes no side)."""
    out, data, changelog = _first_sync(fixture_repo, cli, tmp_path, monkeypatch)
    first = json.loads((data / "manifest.json").read_text())["commit"]
    more = "".join(f"\n\ndef f{i}(x):\n    raise ValueError('the value given to the widget as number {i} is refused')\n" for i in range(300))
    second = fixture_repo.commit({"pkg/b.py": more})
    _ok(cli("sync", "--repo", fixture_repo.path, *ARGS, "--out", out, "--changelog", changelog))
    command = f"errcat diff {first} {second} --format json"
    (cut,) = [line for line in changelog.read_text().splitlines() if line.startswith("- … and ")]
    assert cut.endswith(f" more: `{command}` lists every change."), cut
    listed = json.loads(_ok(cli(*command.split()[1:], "--repo", fixture_repo.path, *ARGS)).stdout)
    assert sum(c["kind"] == "added" for c in listed["changes"]) == 300
