"""Python source as highlighted HTML in one regular-expression pass, for the site's code blocks.

Pygments' Python lexer tries its rules one after another in a state machine; over the ~9,000
snippets of a vLLM site it took three quarters of ``errcat render``'s time. This scanner reads a
snippet with one alternation (done by the ``re`` engine in C) and emits Pygments' own CSS class
names (``k``, ``s``, ``nf``...), so one stylesheet serves both it and Pygments (still used for the
curated code blocks of other languages, which are few). It only colours: every character of the
code is in the output, escaped with ``html.escape`` (tests check the text survives exactly).
"""

from __future__ import annotations

import builtins
import keyword
import re

_STRING = r"""(?:[rRbBuUfF]{0,2})(?:'''(?:[^\\]|\\[\s\S])*?(?:'''|\Z)|\"\"\"(?:[^\\]|\\[\s\S])*?(?:\"\"\"|\Z)|'(?:[^'\\\n]|\\[\s\S])*'?|"(?:[^"\\\n]|\\[\s\S])*"?)"""
_TOKEN = re.compile(
    r"(?P<c1>\#[^\n]*)"
    rf"|(?P<s>{_STRING})"
    r"|(?P<m>(?<![\w.])(?:0[xXoObB][0-9a-fA-F_]+|(?:\d[\d_]*(?:\.[\d_]*)?|\.\d[\d_]*)(?:[eE][+-]?\d+)?[jJ]?))"
    r"|(?P<nd>(?<![\w)\]])@[^\W\d][\w.]*)"
    r"|(?P<n>[^\W\d]\w*)"
    r"|(?P<o>\*\*=?|//=?|->|:=|<<=?|>>=?|[-+*/%&|^=<>!]=?|[~@])"
    r"|(?P<p>[()\[\]{},.;:])"
)
_WORD_OPS = {"and", "or", "not", "in", "is"}
_CONSTANTS = {"True", "False", "None"}
_NAMESPACE = {"import", "from"}
_EXCEPTIONS = {n for n in dir(builtins) if isinstance(getattr(builtins, n), type) and issubclass(getattr(builtins, n), BaseException)}
_BUILTINS = {n for n in dir(builtins) if not n.startswith("_")} - _EXCEPTIONS - _CONSTANTS
_KEYWORDS = set(keyword.kwlist) | set(keyword.softkwlist)


def _tokens(code: str) -> list[tuple[str, str]]:
    """(css class or "", text) pairs whose texts join to ``code``."""
    out: list[tuple[str, str]] = []
    pos = 0
    after = ""  # the keyword before this name: what "def"/"class" name next
    for m in _TOKEN.finditer(code):
        if m.start() > pos:
            out.append(("", code[pos:m.start()]))
        kind = m.lastgroup or ""
        text = m.group()
        if kind == "n":
            if after == "def":
                kind = "nf"
            elif after == "class":
                kind = "nc"
            elif text in _WORD_OPS:
                kind = "ow"
            elif text in _CONSTANTS:
                kind = "kc"
            elif text in _NAMESPACE:
                kind = "kn"
            elif text in _KEYWORDS:
                kind = "k"
            elif text in ("self", "cls"):
                kind = "bp"
            elif text in _EXCEPTIONS:
                kind = "ne"
            elif text in _BUILTINS:
                kind = "nb"
            else:
                kind = ""
            after = text if text in ("def", "class") else ""
        else:
            after = ""
        out.append((kind, text))
        pos = m.end()
    if pos < len(code):
        out.append(("", code[pos:]))
    return out


_ESCAPE = str.maketrans({"&": "&amp;", "<": "&lt;", ">": "&gt;"})
#: Classes the stylesheet colours; other tokens (punctuation, plain names) go without a span.
_STYLED = {"c1", "s", "m", "nd", "nf", "nc", "ow", "kc", "kn", "k", "bp", "ne", "nb", "o"}


def highlight_python(code: str, start: int | None = None, marked: set[int] = frozenset()) -> str:  # type: ignore[assignment]
    """``code`` as ``<pre class="highlight"><code>``, the lines numbered from ``start`` when
    given, and lines whose number is in ``marked`` wrapped in ``<span class="hll">`` (as Pygments'
    ``hl_lines`` does)."""
    out = []
    for kind, text in _tokens(code):
        text = text.translate(_ESCAPE)
        if kind in _STYLED:
            # a span never crosses a line: each line is wrapped (numbered, marked) on its own
            out.append(f'<span class="{kind}">' + text.replace("\n", f'</span>\n<span class="{kind}">') + "</span>")
        else:
            out.append(text)
    lines = "".join(out).split("\n")
    if code.endswith("\n"):
        lines.pop()
    if start is None:
        return '<pre class="highlight"><code>' + "\n".join(lines) + "\n</code></pre>"
    width = len(str(start + len(lines)))
    body = []
    for i, line in enumerate(lines):
        n = start + i
        line = f'<span class="ln">{n:>{width}}</span>{line}\n'
        body.append(f'<span class="hll">{line}</span>' if n in marked else line)
    return '<pre class="highlight"><code>' + "".join(body) + "</code></pre>"
