"""How a page names an entry's kind: the kind, and for a native check what it is and what it surfaces as."""

from __future__ import annotations

from typing import Any

LANGUAGES = {"cpp": "C++", "cuda": "CUDA", "rust": "Rust"}


def kind_text(kind: str, native: dict[str, Any] | None) -> str:
    """``native: TORCH_CHECK in CUDA code, seen in Python as RuntimeError`` (a Rust error: as the text of
    its type, in a process of its own); any other kind as it is."""
    if kind != "native" or not native:
        return kind
    language = LANGUAGES.get(native["language"], native["language"])
    if native["language"] == "rust":
        return f"native: {native['macro']} in Rust code (vLLM's Rust frontend process), its error type {native['surfaces_as']}"
    return f"native: {native['macro']} in {language} code, seen in Python as {native['surfaces_as']}"
