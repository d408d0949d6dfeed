"""Python source as highlighted HTML in one regular-expression pass, for the site's code blocks.

Pygments' Python lexer tries its rules one after another in a state machine; over the ~9,000
snippets of a vLLM site it took three quarters of ``errcat render``'s time. Here the code is
escaped first (``&``, ``<``, ``>``: none of them can start or end a token below), then one
``re.sub`` wraps the tokens that get a colour: comments, strings, numbers, decorators, keywords,
builtins and the names ``def`` and ``class`` introduce. Everything else is copied as it is, in C.
The classes are Pygments' own (``k``, ``s``, ``nf``...), so one stylesheet serves both this and
Pygments (still used for curated code blocks in other languages, which are few). It only
colours: every character of the code is in the output (tests check the text survives exactly),
controls and bidi overrides as the escapes the terminal shows (a browser would reorder code
around a bidi control: Trojan Source).
"""

from __future__ import annotations

import builtins
import keyword
import re
from typing import Any

from crawler.base.sink import visible

_CONSTANTS = ["True", "False", "None"]
_WORD_OPS = ["and", "or", "not", "in", "is"]
_NAMESPACE = ["import", "from"]
_EXCEPTIONS = sorted(n for n in dir(builtins) if isinstance(getattr(builtins, n), type) and issubclass(getattr(builtins, n), BaseException))
_BUILTINS = sorted({n for n in dir(builtins) if not n.startswith("_")} - set(_EXCEPTIONS) - set(_CONSTANTS))
_KEYWORDS = sorted((set(keyword.kwlist) | set(keyword.softkwlist)) - set(_CONSTANTS) - set(_WORD_OPS) - set(_NAMESPACE) - {"def", "class"})


#: The colour of a name, by the name: one dict lookup per name (alternations of every builtin
#: in the pattern, tried at each position, were twice as slow).
_CLASS = {
    **{w: "nb" for w in _BUILTINS},
    **{w: "ne" for w in _EXCEPTIONS},
    **{w: "k" for w in _KEYWORDS},
    **{w: "kn" for w in _NAMESPACE},
    **{w: "ow" for w in _WORD_OPS},
    **{w: "kc" for w in _CONSTANTS},
    "self": "bp",
    "cls": "bp",
    "def": "k",
    "class": "k",
}
_STRING = r"""(?:'''(?:[^\\]|\\[\s\S])*?(?:'''|\Z)|\"\"\"(?:[^\\]|\\[\s\S])*?(?:\"\"\"|\Z)|'(?:[^'\\\n]|\\[\s\S])*'?|"(?:[^"\\\n]|\\[\s\S])*"?)"""
_TOKEN = re.compile(
    r"(?P<c1>\#[^\n]*)"
    rf"|(?P<s>(?<!\w)[rRbBuUfF]{{0,2}}(?=['\"]){_STRING})"
    r"|(?P<m>(?<![\w.])(?:0[xXoObB][0-9a-fA-F_]+|(?:\d[\d_]*(?:\.[\d_]*)?|\.\d[\d_]*)(?:[eE][+-]?\d+)?[jJ]?))"
    r"|(?P<nd>(?<![\w)\]])@[^\W\d][\w.]*)"
    r"|(?P<dn>\b(?:def|class)\b)(?P<gap>[ \t]+)(?P<nm>[^\W\d]\w*)"
    r"|\.[^\W\d]\w*"  # an attribute: uncoloured, whatever its name (x.type, self.next)
    r"|(?P<n>[^\W\d]\w*)"  # a name, matched whole so no keyword is found inside one
)
_ESCAPE = str.maketrans({"&": "&amp;", "<": "&lt;", ">": "&gt;"})


def _span(m: re.Match[str], colour: Any = _CLASS.get) -> str:
    kind = m.lastgroup
    if kind == "n":
        name = m.group()
        kind = colour(name)
        return f'<span class="{kind}">{name}</span>' if kind else name
    if kind is None:
        return m.group()
    if kind == "nm":  # def/class and the name they introduce
        name = "nc" if m.group("dn") == "class" else "nf"
        return f'<span class="k">{m.group("dn")}</span>{m.group("gap")}<span class="{name}">{m.group("nm")}</span>'
    text = m.group()
    if "\n" in text:  # a span never crosses a line: each line is wrapped (numbered, marked) on its own
        text = text.replace("\n", f'</span>\n<span class="{kind}">')
    return f'<span class="{kind}">{text}</span>'


def highlight_python(code: str, start: int | None = None, marked: set[int] = frozenset()) -> str:  # type: ignore[assignment]
    """``code`` as ``<pre class="highlight"><code>``, the lines numbered from ``start`` when
    given, and lines whose number is in ``marked`` wrapped in ``<span class="hll">`` (as Pygments'
    ``hl_lines`` does)."""
    return _numbered(_TOKEN.sub(_span, visible(code, newlines=True).translate(_ESCAPE)), code, start, marked)


# --------------------------------------------------------------------------- C++, CUDA, Rust

#: Keywords of C++ (with CUDA's qualifiers) and Rust: a native check's snippet, coloured by the
#: Python rules, marked ``and``/``with`` in its comments and read a Rust lifetime (``'a``) as a
#: string to the next quote.
_NATIVE_KEYWORDS = """
alignas auto break case catch const constexpr continue default delete do else enum explicit extern
for friend goto if inline mutable namespace new noexcept operator private protected public
return sizeof static static_assert static_cast dynamic_cast reinterpret_cast const_cast struct
switch template this throw try typedef typename union using virtual volatile while
__global__ __device__ __host__ __shared__ __restrict__ __forceinline__
as async await crate dyn fn impl in let loop match mod move mut pub ref self Self super trait
type unsafe use where
""".split()
_NATIVE_TYPES = """
bool char double float int long short signed unsigned void size_t int8_t int16_t int32_t int64_t
uint8_t uint16_t uint32_t uint64_t i8 i16 i32 i64 i128 isize u8 u16 u32 u64 u128 usize f32 f64 str
String Vec Option Result Box
""".split()
_NATIVE_CLASS = {
    **{w: "k" for w in _NATIVE_KEYWORDS},
    **{w: "kt" for w in _NATIVE_TYPES},
    **{w: "kc" for w in ("true", "false", "nullptr", "NULL", "None", "Some", "Ok", "Err")},
}
_NATIVE_TOKEN = re.compile(
    r"(?P<c1>//[^\n]*)"
    r"|(?P<cm>/\*[\s\S]*?(?:\*/|\Z))"
    r"|(?P<cp>^[ \t]*\#[ \t]*[A-Za-z_]\w*)"  # a preprocessor directive's name
    r'|(?P<s>(?<!\w)(?:[LuUR]|u8|b|br|r\#*)?"(?:[^"\\\n]|\\[\s\S])*"?)'
    r"|(?P<sc>'(?:\\[^'\n]{1,8}|[^'\\\n])')"  # a character, not a Rust lifetime ('a)
    r"|(?P<m>(?<![\w.])(?:0[xXbB][0-9a-fA-F_']+|(?:\d[\d_']*(?:\.[\d_]*)?|\.\d[\d_]*)(?:[eE][+-]?\d+)?)[uUlLfF]*)"
    r"|(?P<n>[^\W\d]\w*)",
    re.M,
)


def highlight_native(code: str, start: int | None = None, marked: set[int] = frozenset()) -> str:  # type: ignore[assignment]
    """C++, CUDA or Rust source as :func:`highlight_python` gives Python: comments, directives,
    strings, characters, numbers and keywords coloured, every character kept."""
    text = _NATIVE_TOKEN.sub(lambda m: _span(m, _NATIVE_CLASS.get), visible(code, newlines=True).translate(_ESCAPE))
    return _numbered(text, code, start, marked)


def _numbered(text: str, code: str, start: int | None, marked: set[int]) -> str:
    lines = text.split("\n")
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
