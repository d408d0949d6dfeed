import json
import re
from pathlib import Path

from jsonschema import Draft202012Validator

from crawler.models import COMMIT_PATTERN, ID_PATTERN, UPSTREAM_COMMIT_PATTERN
from crawler.schemas import MODELS, render

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
    copies = [path.name for path in sorted((SCHEMA_DIR.parent / "crawler").glob("*.py"))
              if path.name != "models.py" and hand_written.search(path.read_text(encoding="utf-8"))]
    assert copies == []
