"""Curated Markdown as HTML for the site, and the language of a code block.

Curated explanations are written in Markdown (backticks around names, fenced examples). They are
reviewed, but still read as hostile: they are parsed as ``base.markdown`` says (raw HTML off, so
``<script>`` shows as text; images off, as the page's CSP loads nothing from elsewhere anyway;
links kept only when they are https or relative: ``javascript:``, ``data:``, ``//host`` and every
other scheme stay text). Fenced code is highlighted by its language.
"""

from __future__ import annotations

import ast
import html
import re
from functools import lru_cache
from typing import Any

from markdown_it import MarkdownIt

from crawler.base.markdown import markdown_parser
from crawler.base.sink import visible

#: First words of a line that make a code block a shell session (``vllm serve ...``).
_COMMANDS = re.compile(
    r"^(?:\$ |# )?(?:[A-Z_][A-Z0-9_]*=\S* )*(?:vllm|python3?|pip3?|uv|export|docker|curl|git|cd|nvidia-smi|"
    r"torchrun|ray|huggingface-cli|hf|conda|apt(?:-get)?|sudo|bash|sh|echo|ls|CUDA_VISIBLE_DEVICES=\S*)\b"
)


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
    md = markdown_parser(_fence)
    # an indented block is code too: highlighted by the language it reads as, like an untagged fence
    md.add_render_rule("code_block", lambda _self, tokens, idx, _options, _env: highlight_block(tokens[idx].content, "") + "\n")
    return md


def markdown_html(text: str) -> str:
    """Block Markdown (paragraphs, lists, fences) as HTML."""
    return _md().render(text)


def markdown_inline(text: str) -> str:
    """One line of Markdown (a list item) as inline HTML."""
    return _md().renderInline(text)


def md_text(text: str) -> str:
    """Plain text safe in Markdown: HTML and Markdown syntax characters neutralised."""
    text = html.escape(visible(text, newlines=True), quote=False)
    return re.sub(r"([\\`*_{}\[\]()#+\-.!|~>])", r"\\\1", text).replace("\n", "  \n")


def md_code(code: str, lang: str = "") -> str:
    code = visible(code[:-1] if code.endswith("\n") else code, newlines=True)  # the fence ends the last line
    fence = "`" * max(3, max((len(m) for m in re.findall(r"`+", code)), default=0) + 1)
    return f"{fence}{lang}\n{code}\n{fence}"


def md_inline(text: str) -> str:
    text = visible(text.replace("\n", " "))
    ticks = "`" * (max((len(m) for m in re.findall(r"`+", text)), default=0) + 1)
    # CommonMark strips one space from each end when both have one and the span is not all spaces
    pad = " " if text.startswith("`") or text.endswith("`") or (text.strip() and text[0] == text[-1] == " ") or not text else ""
    return f"{ticks}{pad}{text}{pad}{ticks}"


def markdown_markdown(text: str) -> str:
    """Curated Markdown as Markdown for the Markdown pages: what the HTML pages render, written back.

    The text is parsed as the HTML pages parse it (:func:`_md`: raw HTML, images and links that
    are not https or relative are text there) and written out again from the parse: names in
    backticks stay code, emphasis and lists stay, fences keep their language, links keep only
    the addresses the parser accepted, and every piece of text is escaped (:func:`md_text`), so
    ``<script>`` or a ``[bad](javascript:...)`` a viewer would make live shows as the text it is.
    """
    from markdown_it.tree import SyntaxTreeNode

    return _md_blocks(SyntaxTreeNode(_md().parse(text)).children)


def _md_blocks(nodes: list[Any], sep: str = "\n\n", outer: str = "") -> str:
    out: list[str] = []
    marks: list[str] = [outer]  # the marker of the list item these blocks are in, if any
    for node in nodes:
        mark = _list_mark(node)
        # two lists in a row need two markers, and so does a list opening an item ("* * *" is a rule)
        if mark and marks[-1] == mark:
            mark = {"-": "*", "*": "+", "+": "-", ".": ")", ")": "."}[mark]
        marks.append(mark)
        out.append(_md_block(node, mark))
    return sep.join(filter(None, out))


def _list_mark(node: Any) -> str:
    if node.type not in ("bullet_list", "ordered_list") or not node.children:
        return ""
    return node.children[0].markup or ("." if node.type == "ordered_list" else "-")


def md_indent(text: str, first: str, rest: str) -> str:
    """``text`` behind ``first`` (a list mark), its other lines behind ``rest`` (as deep)."""
    lines = text.split("\n")
    return "\n".join([first + lines[0]] + [rest + line if line else line for line in lines[1:]])


def _md_block(node: Any, mark: str = "") -> str:
    kind = node.type
    if kind == "paragraph":
        return _md_inline(node.children[0].children or [])
    if kind == "heading":
        level, text = int(node.tag[1:]), _md_inline(node.children[0].children or [])
        if "\n" in text:  # only a setext heading (h1, h2) spans lines
            return f"{text}\n{'=' if level == 1 else '-'}"
        text = re.sub(r"(?<!\\)(#+\s*)$", r"\\\1", text)  # trailing #s would close the heading
        return f"{'#' * level} {text}"
    if kind in ("bullet_list", "ordered_list"):
        start = int(node.attrs.get("start", 1)) if kind == "ordered_list" else 0
        # a tight list's paragraphs are hidden: its items stay one line apart
        tight = all(c.hidden for item in node.children for c in item.children if c.type == "paragraph")
        items = []
        for n, item in enumerate(node.children):
            head = f"{start + n}{mark} " if kind == "ordered_list" else f"{mark} "
            body = _md_blocks(item.children, "\n" if tight else "\n\n", mark) or ""
            if not tight and len(node.children) == 1 and body and "\n\n" not in body:
                # Loose only by what the parse keeps out of the tree (a link definition and a blank
                # line, "- [x]: https://a.b\n\n  text"): one item of one block would read back
                # tight (<li>text</li>, not <li><p>text</p></li>). An empty definition after a
                # blank line keeps it loose and shows nothing (every link is written inline).
                body += "\n\n[//]: #"
            items.append(md_indent(body, head, " " * len(head)))
        return ("\n" if tight else "\n\n").join(items)
    if kind == "blockquote":
        return md_indent(_md_blocks(node.children), "> ", "> ").replace("\n\n", "\n>\n")
    if kind in ("fence", "code_block"):
        info = (node.info or "").strip().split(maxsplit=1)
        # as highlight_block reads it: a tag it cannot use is plain text, no tag the language the code reads as
        lang = (info[0] if re.fullmatch(r"[\w+#.-]{1,40}", info[0]) else "text") if info else code_language(node.content)
        return md_code(node.content, lang)
    if kind == "hr":
        return "___"  # "- ---" or "* ***" in a list item would be one rule, not an item holding one
    return md_text(node.content or "")  # nothing else is parsed with raw HTML off: text, as it came


#: What can start markup inside a line: emphasis, code, links, escapes, entities and tags.
_INLINE_SYNTAX = re.compile(r"([\\`*_\[\]!])")
#: What starts a block at the start of a line: a heading, list or quote mark, a rule, a fence.
_LINE_START = re.compile(r"^(\s*)([#+\-=>~]|\d+(?=[.)]))")


def _curated_text(text: str, line_start: bool) -> str:
    """Curated prose as Markdown that reads as itself: only what would start markup is escaped
    (``md_text`` escapes every punctuation mark, which a reader of the raw page has to skip)."""
    text = _INLINE_SYNTAX.sub(r"\\\1", html.escape(text, quote=False))
    if line_start:
        text = _LINE_START.sub(lambda m: m.group(1) + (m.group(2) + "\\" if m.group(2)[0].isdigit() else "\\" + m.group(2)), text, count=1)
    return text


def _md_inline(nodes: list[Any]) -> str:
    out: list[str] = []
    for node in nodes:
        kind = node.type
        if kind == "code_inline":
            out.append(md_inline(node.content))
        elif kind == "softbreak":
            out.append("\n")
        elif kind == "hardbreak":
            out.append("\\\n")
        elif kind in ("em", "strong"):  # with the delimiters written: *_a_* is not **a**
            delimiter = node.markup or ("*" if kind == "em" else "**")
            out.append(f"{delimiter}{_md_inline(node.children)}{delimiter}")
        elif kind == "link":
            # the parser kept only https and relative links (safe_link) and percent-encoded them
            out.append(f"[{_md_inline(node.children)}](<{node.attrs['href']}>)")
        else:  # text, and anything else: escaped
            out.append(_curated_text(node.content or "", not out or out[-1].endswith("\n")))
    return "".join(out)
