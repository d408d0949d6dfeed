"""Deterministic JSON: field order from the models, two-space indent, UTF-8, trailing newline."""

from __future__ import annotations

import json
from typing import Any

from pydantic import BaseModel


def dump_model(model: BaseModel) -> bytes:
    """A model as a pretty JSON document (pydantic's serializer keeps field order)."""
    return model.model_dump_json(indent=2).encode("utf-8") + b"\n"


def dump_line(model: BaseModel) -> bytes:
    """A model as one compact JSON line."""
    return model.model_dump_json().encode("utf-8") + b"\n"


def dump_data(data: Any) -> bytes:
    """Plain data as a pretty JSON document; refuses NaN/Infinity, which JSON has no word for."""
    return (json.dumps(data, indent=2, ensure_ascii=False, allow_nan=False) + "\n").encode("utf-8")
