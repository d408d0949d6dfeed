import json
from pathlib import Path

import consumer_data as cd
import pytest
from jsonschema import Draft202012Validator
from pydantic import TypeAdapter, ValidationError

from crawler.models import COMMIT_PATTERN, ID_PATTERN, UPSTREAM_COMMIT_PATTERN, Commit, EntryId, ShortCommit
from crawler.schemas import MODELS, render, schema_for

SCHEMA_DIR = Path(__file__).resolve().parent.parent / "schema"


def test_committed_schemas_match_the_models():
    """Regenerate with `errcat schema` when this fails."""
    for name in MODELS:
        path = SCHEMA_DIR / f"{name}.schema.json"
        assert path.is_file(), f"{path} is missing: run `errcat schema`"
        assert path.read_text(encoding="utf-8") == render(name), f"{path} is out of date: run `errcat schema`"


def test_schemas_are_valid_2020_12_with_ids():
    for name in MODELS:
        schema = json.loads((SCHEMA_DIR / f"{name}.schema.json").read_text())
        Draft202012Validator.check_schema(schema)
        assert schema["$schema"] == "https://json-schema.org/draft/2020-12/schema"
        assert schema["$id"].endswith(f":{name}")
        assert schema["additionalProperties"] is False


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
    assert {s["pattern"] for s in found.values()} == {ID_PATTERN, COMMIT_PATTERN, UPSTREAM_COMMIT_PATTERN}
    for subschema in found.values():
        if engine == "reference":
            accepts = Draft202012Validator(subschema).is_valid
        elif engine == "fast":
            accepts = jsonschema_rs.validator_for(subschema).is_valid
        else:
            adapter = TypeAdapter({ID_PATTERN: EntryId, COMMIT_PATTERN: Commit, UPSTREAM_COMMIT_PATTERN: ShortCommit}[subschema["pattern"]])
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
