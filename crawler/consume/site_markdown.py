"""Curated Markdown as HTML for the site, and the language of a code block.

Curated explanations are written in Markdown (backticks around names, fenced examples). They are
reviewed, but still read as hostile: markdown-it-py (a CommonMark parser) renders them with raw
HTML off (``<script>`` shows as text), images off (the page's CSP loads nothing from elsewhere
anyway) and links kept only when they are https or relative (``javascript:``, ``data:``, ``//host``
and every other scheme stay text). Fenced code is highlighted by its language.
"""

from __future__ import annotations

import ast
import re
from functools import lru_cache
from typing import Any

from markdown_it import MarkdownIt

_SCHEME = re.compile(r"^[A-Za-z][A-Za-z0-9+.-]*:")
#: First words of a line that make a code block a shell session (``vllm serve ...``).
_COMMANDS = re.compile(r"^(?:\$ |# )?(?:[A-Z_][A-Z0-9_]*=\S* )*(?:vllm|python3?|pip3?|uv|export|docker|curl|git|cd|nvidia-smi|"
                       r"torchrun|ray|huggingface-cli|hf|conda|apt(?:-get)?|sudo|bash|sh|echo|ls|CUDA_VISIBLE_DEVICES=\S*)\b")


def safe_link(url: str) -> bool:
    """A link curated text may carry: https, or relative to the page (no scheme, no ``//host``)."""
    url = url.strip()
    if url.lower().startswith("https://"):
        return True
    return not _SCHEME.match(url) and not url.startswith(("//", "\\\\", "/\\", "\\/"))


def code_language(code: str) -> str:
    """``python`` when the block parses as Python, ``shell`` when it reads as commands, else ``text``.

    Curated examples are not tagged: "vllm serve model --max-model-len 8192" was shown as Python."""
    lines = [line for line in code.strip().splitlines() if line.strip()]
    if not lines:
        return "text"
    try:
        ast.parse(code)
        python = True
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        python = False
    if python and not all(_COMMANDS.match(line) for line in lines if not line.lstrip().startswith("#")):
        return "python"
    if any(_COMMANDS.match(line.strip()) for line in lines):
        return "shell"
    return "python" if python else "text"


@lru_cache(maxsize=8)
def _formatter() -> Any:
    from pygments.formatters import HtmlFormatter  # type: ignore[import-untyped]

    return HtmlFormatter(nowrap=True)


def highlight_block(code: str, lang: str) -> str:
    """A code block in ``lang`` (any name Pygments knows; unknown ones stay plain), as
    ``<pre class="highlight">``."""
    from pygments import highlight  # type: ignore[import-untyped]
    from pygments.lexers import get_lexer_by_name  # type: ignore[import-untyped]
    from pygments.util import ClassNotFound  # type: ignore[import-untyped]

    from crawler.consume.highlight import highlight_python

    lang = (lang or "").strip().split(maxsplit=1)[0].lower() if (lang or "").strip() else code_language(code)
    if lang in ("python", "py", "python3"):
        return highlight_python(code)
    try:
        lexer = get_lexer_by_name(lang if re.fullmatch(r"[\w+#.-]{1,40}", lang) else "text")
    except ClassNotFound:
        lexer = get_lexer_by_name("text")
    return f'<pre class="highlight"><code>{highlight(code, lexer, _formatter())}</code></pre>'


def _fence(code: str, lang: str, _attrs: Any) -> str:
    return highlight_block(code, lang)


@lru_cache(maxsize=1)
def _md() -> MarkdownIt:
    md = MarkdownIt("commonmark", {"html": False, "linkify": False, "typographer": False, "highlight": _fence})
    md.disable("image")
    md.validateLink = safe_link  # type: ignore[method-assign]
    return md


def markdown_html(text: str) -> str:
    """Block Markdown (paragraphs, lists, fences) as HTML."""
    return _md().render(text)


def markdown_inline(text: str) -> str:
    """One line of Markdown (a list item) as inline HTML."""
    return _md().renderInline(text)
