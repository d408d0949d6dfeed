import json
from pathlib import Path

from jsonschema import Draft202012Validator

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
