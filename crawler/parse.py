"""Parsing: stdlib ``ast`` first; libcst (in a child process) for syntax newer than this Python."""

from __future__ import annotations

import ast


def parse_source(text: str) -> ast.Module:
    return ast.parse(text)
