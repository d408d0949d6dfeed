import json
import re
from pathlib import Path

import consumer_data as cd
import pytest
from jsonschema import Draft202012Validator
from pydantic import TypeAdapter, ValidationError

from crawler.model.records import (
    COMMIT_PATTERN,
    EVIDENCE_URL_PATTERN,
    FOREIGN_NAME_PATTERN,
    ID_PATTERN,
    LINE_PATTERN,
    NAME_PATTERN,
    OWNER_PATTERN,
    PACKAGE_PATTERN,
    RELEASE_VERSION_PATTERN,
    REPO_PATTERN,
    SDIST_NAME_PATTERN,
    SHA256_PATTERN,
    UPSTREAM_COMMIT_PATTERN,
    URL_PATTERN,
    UTC_TIME_PATTERN,
    WHEEL_NAME_PATTERN,
    Commit,
    EntryId,
    Sha256,
    ShortCommit,
)
from crawler.model.schemas import MODELS, schema_for, schema_text

SCHEMA_DIR = Path(__file__).resolve().parents[2] / "schema"


def test_committed_schemas_match_the_models():
    """Regenerate with `errcat schema` when this fails."""
    for name in MODELS:
        path = SCHEMA_DIR / f"{name}.schema.json"
        assert path.is_file(), f"{path} is missing: run `errcat schema`"
        assert path.read_text(encoding="utf-8") == schema_text(name), f"{path} is out of date: run `errcat schema`"


@pytest.mark.slow
def test_schemas_are_valid_2020_12_with_ids():
    for name in MODELS:
        schema = json.loads((SCHEMA_DIR / f"{name}.schema.json").read_text())
        Draft202012Validator.check_schema(schema)
        assert schema["$schema"] == "https://json-schema.org/draft/2020-12/schema"
        assert schema["$id"].endswith(f":{name}")
        assert schema["additionalProperties"] is False


def _patterns(node, found: dict[str, set[str]], name: str = "") -> None:
    """Every ``pattern`` in a schema, by the property it constrains."""
    if isinstance(node, dict):
        if isinstance(node.get("pattern"), str):
            found.setdefault(name, set()).add(node["pattern"])
        for key, value in node.items():
            _patterns(value, found, name if key in ("anyOf", "items") else key)
    elif isinstance(node, list):
        for value in node:
            _patterns(value, found, name)


def test_every_file_format_checks_ids_and_commits_alike():
    """A report side once took only 40-digit upstream commits where the manifest it came from
    allows 7 to 40: any diff of releases ended in a traceback."""
    found: dict[str, set[str]] = {}
    for name in MODELS:
        _patterns(json.loads((SCHEMA_DIR / f"{name}.schema.json").read_text()), found)
    assert found["upstream_commit"] == {UPSTREAM_COMMIT_PATTERN}
    assert found["commit"] == {COMMIT_PATTERN, UPSTREAM_COMMIT_PATTERN}  # a curated review may name an abbreviated one
    for field in ("id", "old_id", "replaced_by", "replaces", "related"):
        assert found[field] == {ID_PATTERN}, field


def test_id_and_commit_patterns_are_written_once():
    """crawler/models.py holds them; a copy anywhere else could drift from the schemas."""
    hand_written = re.compile(r"\[0-9a-f(?:A-F)?\]\{")
    copies = [
        path.name
        for path in sorted((SCHEMA_DIR.parent / "crawler").glob("*.py"))
        if path.name != "models.py" and hand_written.search(path.read_text(encoding="utf-8"))
    ]
    assert copies == []


def _string_patterns(node):
    """Every string schema with a ``pattern`` in a schema document."""
    if isinstance(node, dict):
        if node.get("type") == "string" and isinstance(node.get("pattern"), str):
            yield node
        for value in node.values():
            yield from _string_patterns(value)
    elif isinstance(node, list):
        for value in node:
            yield from _string_patterns(value)


@pytest.mark.parametrize("engine", ["reference", "fast", "pydantic"])
def test_every_pattern_means_the_whole_string_in_every_engine(engine):
    """JSON Schema's pattern is a search, and Python's ``$`` matches before a final newline: the
    reference engine took "<40 hex digits>\\n" for a commit. Every patterned string in every
    schema must refuse a newline before or after, and anything around, a valid value."""
    import jsonschema_rs

    found = {json.dumps(s, sort_keys=True): s for name in MODELS for s in _string_patterns(schema_for(name))}
    # identities and links end in a look-ahead (no length pins them): tests/test_config.py and
    # test_a_link_with_a_newline_after_is_refused hold those
    # test_an_evidence_link_or_line_with_a_newline_is_refused holds the evidence ones
    # the release's (package, version, upload time, wheel, sdist): tests/source/test_release.py
    by_end = {
        OWNER_PATTERN,
        NAME_PATTERN,
        REPO_PATTERN,
        URL_PATTERN,
        FOREIGN_NAME_PATTERN,
        EVIDENCE_URL_PATTERN,
        LINE_PATTERN,
        PACKAGE_PATTERN,
        RELEASE_VERSION_PATTERN,
        UTC_TIME_PATTERN,
        WHEEL_NAME_PATTERN,
        SDIST_NAME_PATTERN,
    }
    assert {s["pattern"] for s in found.values()} == {ID_PATTERN, COMMIT_PATTERN, UPSTREAM_COMMIT_PATTERN, SHA256_PATTERN} | by_end
    for subschema in (s for s in found.values() if s["pattern"] not in by_end):
        if engine == "reference":
            accepts = Draft202012Validator(subschema).is_valid
        elif engine == "fast":
            accepts = jsonschema_rs.validator_for(subschema).is_valid
        else:
            adapter = TypeAdapter(
                {ID_PATTERN: EntryId, COMMIT_PATTERN: Commit, UPSTREAM_COMMIT_PATTERN: ShortCommit, SHA256_PATTERN: Sha256}[subschema["pattern"]]
            )
            assert adapter.json_schema() == {k: v for k, v in subschema.items() if k not in ("title", "description")}

            def accepts(value, adapter=adapter):
                try:
                    adapter.validate_python(value)
                    return True
                except ValidationError:
                    return False

        for good in ("0" * subschema["minLength"], "f" * subschema["maxLength"]):
            assert accepts(good), (subschema, good)
            for bad in (good + "\n", "\n" + good, good[:-1] + "\n", good + "\r", " " + good, good + "g", good[:-1] + "F"):
                assert not accepts(bad), (subschema, bad)


@pytest.mark.parametrize("engine", ["reference", "fast"])
def test_validate_refuses_a_commit_with_a_trailing_newline(tmp_path, cli, engine):
    dataset = cd.write(tmp_path)
    manifest = json.loads((dataset / "manifest.json").read_bytes())
    manifest["commit"] += "\n"
    (dataset / "manifest.json").write_text(json.dumps(manifest))
    result = cli("validate", dataset, "--engine", engine)
    assert result.exit_code == 1
    assert f"{dataset}/manifest.json#/commit: " in result.stdout


@pytest.mark.parametrize("engine", ["reference", "fast", "pydantic"])
def test_a_link_with_a_newline_after_is_refused(engine):
    import jsonschema_rs

    from crawler.model.records import RepoRef

    schema = schema_for("record")["$defs"]["RepoRef"]["properties"]["url"]
    good = "https://github.com/acme/widgets"
    for value, ok in ((good, True), (good + "\n", False), ("\n" + good, False), (good + " x", False)):
        if engine == "reference":
            assert Draft202012Validator(schema).is_valid(value) == ok
        elif engine == "fast":
            assert jsonschema_rs.validator_for(schema).is_valid(value) == ok
        else:
            try:
                RepoRef(url=value, owner="acme", name="widgets")
                accepted = True
            except ValidationError:
                accepted = False
            assert accepted == ok


@pytest.mark.parametrize("engine", ["reference", "fast", "pydantic"])
def test_an_evidence_link_or_line_with_a_newline_is_refused(engine):
    import jsonschema_rs

    from crawler.model.records import Evidence

    props = schema_for("evidence")["$defs"]["Evidence"]["properties"]
    url, title = "https://github.com/acme/widgets/issues/2248", "ValueError: it broke"
    cases = [
        ("url", url, True),
        ("url", url + "#issuecomment-1", True),
        ("url", url + "\n", False),
        ("url", "\n" + url, False),
        ("url", url + " x", False),
        ("url", url.replace("issues", "blob"), False),
        ("url", url.replace("https", "http"), False),
        ("title", title, True),
        ("title", title + "\n", False),
        ("title", "\x1b]0;x\x07" + title, False),
        ("title", title + "\u2028x", False),
    ]
    for field, value, ok in cases:
        schema = props[field]
        if engine == "reference":
            assert Draft202012Validator(schema).is_valid(value) == ok, (field, value)
        elif engine == "fast":
            assert jsonschema_rs.validator_for(schema).is_valid(value) == ok, (field, value)
        else:
            try:
                Evidence.model_validate({"url": url, "title": title, field: value})
                accepted = True
            except ValidationError:
                accepted = False
            assert accepted == ok, (field, value)
