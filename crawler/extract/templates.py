"""Message templates: how a message is built in source, as literal text with ``{expression}`` fields.

A template is built from *parts*: a list whose items are either ``str`` (literal text, already
decoded: escapes resolved, ``{{`` collapsed) or :class:`Field` (an expression's source text).
:func:`make_template` turns parts into a ``records.Template`` dict:

- ``text``: literal text with ``{`` / ``}`` doubled, each field as ``{expr}``;
- ``fields``: ``{"expr", "name"}`` per field, in order (``name`` when the expression is a name);
- ``pattern``: ``(?s)^...$`` with one lazy named group ``f0, f1, ...`` per field, literals escaped;
- ``opaque``: no literal text at all (the message is one unresolved field, or there is none).

f-string fields are recovered from the *source text* of the string tokens (see
:func:`string_parts`), not from the AST: Python 3.11 gives no usable positions inside f-strings,
and the source text is what we want to show anyway (``{x!r}``, ``{v:.2f}``, ``{x=}`` kept as
written). The scanner also understands PEP 701 nesting (same quotes inside fields), so it serves
the libcst fallback for newer syntax too.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Callable, Mapping
from typing import Any, NamedTuple, TypeAlias, cast

from crawler.model.shapes import TemplateData, TemplateFieldData


class Field(NamedTuple):
    expr: str
    name: str | None = None
    #: An assembled message (``sep.join(pieces)``): (separator, the pieces' parts). The field's
    #: value is any of the pieces joined with the separator (none at all included); with
    #: separator None exactly one piece (the strings a helper function returns).
    alts: tuple[str | None, list[Parts]] | None = None


#: A message as literal text and fields, in order.
Parts: TypeAlias = "list[str | Field]"
#: A message as a builder reads it: its form (``literal``, ``fstring``, ``opaque`` ...) and parts.
Built: TypeAlias = "tuple[str, Parts]"

_IDENT = re.compile(r"[^\W\d]\w*\Z")


def field(expr: str) -> Field:
    """A field for an expression's source text; ``name`` when the expression part is a name."""
    return Field(expr, field_name(expr))


def field_name(expr: str) -> str | None:
    """The variable name of a field's expression (conversion/spec/``=`` stripped), if simple."""
    head = expr
    # Strip a trailing conversion / format spec / self-documenting '=' at bracket depth 0.
    cut = _expr_end(expr)
    if cut is not None:
        head = expr[:cut]
    head = head.strip()
    if _IDENT.match(head) and head not in _KEYWORDS:
        return head
    return None


_KEYWORDS = frozenset(__import__("keyword").kwlist)


def _expr_end(expr: str) -> int | None:
    depth = 0
    i, n = 0, len(expr)
    while i < n:
        c = expr[i]
        if c in "([{":
            depth += 1
        elif c in ")]}":
            depth -= 1
        elif c in "'\"":
            i = skip_string(expr, i)
            continue
        elif depth == 0:
            nxt = expr[i + 1] if i + 1 < n else ""
            if c == "!" and nxt != "=":
                return i
            if c == ":":
                return i
            if c == "=" and nxt != "=" and (i == 0 or expr[i - 1] not in "=!<>"):
                return i
        i += 1
    return None


# ---------------------------------------------------------------------------------------------
# parts -> Template dict


def normalize(parts: Parts) -> Parts:
    """Merge adjacent literals and drop empty ones."""
    out: Parts = []
    for p in parts:
        if isinstance(p, str):
            if not p:
                continue
            if out and isinstance(out[-1], str):
                out[-1] += p
                continue
        out.append(p)
    return out


_SURROGATE = re.compile("[\ud800-\udfff]")


def escape_surrogates(text: str) -> str:
    """``text`` with each lone surrogate written as a ``\\udcXX`` escape (JSON cannot carry them).

    They reach a template only from string *values* (``"\\udc80"`` in a literal); source text is
    decoded strictly and cannot hold one. In a ``pattern`` the escape is regex syntax for the
    same code point, so the pattern still matches the runtime message.
    """
    if text.isascii() or _SURROGATE.search(text) is None:
        return text
    return text.encode("utf-8", "backslashreplace").decode("utf-8")


#: Starts the expression of the field that stands for a list of messages an imported function
#: returned (``reasons = check(cfg)``, ``check`` from another module): ``IMPORTED + target +
#: IMPORTED + name``. The extractor cannot see that function; the catalogue's join
#: (``catalogue.cross_module_join``) puts in what it returns. No source text holds a NUL.
IMPORTED = "\0"


def imported_piece(target: str, name: str) -> Parts:
    """The one piece that stands for what the list ``name`` held when an imported ``target`` returned it."""
    return [Field(f"{IMPORTED}{target}{IMPORTED}{name}")]


def _is_imported(piece: Parts) -> bool:
    return len(piece) == 1 and isinstance(piece[0], Field) and piece[0].expr.startswith(IMPORTED)


class MarkedTemplate(dict[str, Any]):
    """A template (as :func:`make_template` makes it without the imported lists' pieces) that also
    says which of its fields join a list an imported function returned: ``imported`` holds, per
    field with pieces, ``[field index, separator, the pieces' texts, the field's expression]``, an imported list's piece
    as ``{IMPORTED target IMPORTED name}``. The extractor moves that to its result (``imported``)."""

    imported: list[list[Any]]


def _unmarked(parts: Parts, form: str, opaque: bool | None) -> TemplateData:
    """The template of parts whose lists hold imported pieces: each such piece the unknown it is
    here (its list's name, matching anything; a list of nothing else is no list errcat knows),
    with what the join needs to put the imported function's pieces in."""
    plain: Parts = []
    info: list[list[Any]] = []
    k = 0
    for p in parts:
        if not isinstance(p, Field):
            plain.append(p)
            continue
        if p.alts is not None:
            sep, pieces = p.alts
            info.append([k, sep, [piece_text(piece) for piece in pieces], p.expr])
            if any(_is_imported(piece) for piece in pieces):
                kept: list[Parts] = [[field(cast(Field, piece[0]).expr.rpartition(IMPORTED)[2])] if _is_imported(piece) else piece for piece in pieces]
                alone = len(pieces) == 1
                p = Field(p.expr, p.name) if alone else Field(p.expr, p.name, (sep, kept))
        plain.append(p)
        k += 1
    made = make_template(plain, "opaque" if form == "assembled" else form, opaque)
    if made["alternatives"]:
        made["form"] = "assembled"
    marked = MarkedTemplate(made)
    marked.imported = info
    return cast(TemplateData, marked)


def piece_text(piece: Parts) -> str:
    """One piece of an assembled message as an alternative's text (fields as ``{expr}``)."""
    return "".join(_text_of(q) if isinstance(q, str) else "{" + q.expr + "}" for q in normalize(piece))


def make_template(parts: Parts, form: str, opaque: bool | None = None) -> TemplateData:
    parts = normalize(parts)
    if any(isinstance(p, Field) and p.alts is not None and p.alts[0] is not None and any(map(_is_imported, p.alts[1])) for p in parts):
        return _unmarked(parts, form, opaque)
    whole = _one_of(parts)
    if whole is not None:
        return whole
    text: list[str] = []
    pattern: list[str] = ["(?s)^"]
    fields: list[TemplateFieldData] = []
    alternatives: list[str] = []
    for p in parts:
        if isinstance(p, str):
            text.append(_text_of(p))
            pattern.append(escape_surrogates(re.escape(p)))
        else:
            if p.alts is None:
                pattern.append(f"(?P<f{len(fields)}>.*?)")
            else:
                sep, pieces = p.alts
                one = "(?:" + "|".join(_piece_pattern(piece) for piece in pieces) + ")"
                if sep is None:  # one piece: what a helper function returns
                    pattern.append(f"(?P<f{len(fields)}>{one})")
                else:
                    pattern.append(f"(?P<f{len(fields)}>(?:{one}(?:{escape_surrogates(re.escape(sep))}{one})*)?)")
                for piece in pieces:
                    alt = piece_text(piece)
                    if alt not in alternatives:
                        alternatives.append(alt)
            fields.append({"expr": p.expr, "name": p.name})
            text.append("{" + p.expr + "}")
    pattern.append("$")
    if opaque is None:
        opaque = not any(isinstance(p, str) for p in parts)
    if alternatives:
        form = "assembled"
    return {"text": "".join(text), "fields": fields, "pattern": "".join(pattern), "form": form, "opaque": opaque, "alternatives": alternatives}


def _one_of(parts: Parts) -> TemplateData | None:
    """A message that is one of several whole texts (a name set per branch, what a helper returns):
    shown as its most telling alternative (the most literal text; the first of equals), which
    keys its id as the text the code assigned, with every alternative in ``alternatives`` and
    the pattern matching any of them. A page then shows a message, not ``{msg}``."""
    if len(parts) != 1 or not isinstance(parts[0], Field) or parts[0].alts is None or parts[0].alts[0] is not None:
        return None
    pieces = [normalize(piece) for piece in parts[0].alts[1]]
    if not pieces:
        return None
    shown = max(pieces, key=lambda piece: sum(len(q) for q in piece if isinstance(q, str)))
    if not any(isinstance(q, str) for q in shown):
        return None  # no alternative says anything: the field as written
    template = make_template(shown, "assembled")
    others = "".join("|" + _piece_pattern(piece) for piece in pieces if piece is not shown)
    template["pattern"] = "(?s)^(?:" + template["pattern"][len("(?s)^") : -1] + others + ")$"
    template["alternatives"] = list(dict.fromkeys(piece_text(piece) for piece in pieces))
    template["form"] = "assembled"
    return template


def _text_of(literal: str) -> str:
    return escape_surrogates(literal.replace("{", "{{").replace("}", "}}"))


def _piece_pattern(piece: Parts) -> str:
    """One piece of an assembled message as a pattern: its fields match anything, unnamed."""
    out = []
    for q in normalize(piece):
        if isinstance(q, str):
            out.append(escape_surrogates(re.escape(q)))
        elif q.alts is None:
            out.append(".*?")
        else:  # a piece that is itself assembled: anything (its own pieces are its entry's)
            out.append(".*?")
    return "".join(out)


def none_template() -> TemplateData:
    """No message at all: bare ``raise X`` / ``raise X()``."""
    return make_template([], "none", opaque=True)


def text_parts(text: str) -> Parts:
    """The parts of a template text whose fields are not listed (an assembled message's
    alternatives): ``{{``/``}}`` are literal braces, ``{...}`` a field to its matching brace."""
    parts: Parts = []
    lit: list[str] = []
    i, n = 0, len(text)
    while i < n:
        c = text[i]
        if c in "{}" and text.startswith(c * 2, i):
            lit.append(c)
            i += 2
        elif c == "{":
            parts.append("".join(lit))
            lit = []
            inner, i = _scan_field(text, i + 1)
            parts.append(field(inner))
        else:
            lit.append(c)
            i += 1
    parts.append("".join(lit))
    return normalize(parts)


def parts_from_template(tpl: Mapping[str, Any]) -> Parts:
    """Inverse of :func:`make_template` (uses ``fields`` to find each field in ``text``).

    Jumps from brace to brace: every record of a crawl passes through here (ids, search index).
    """
    text, fields = tpl["text"], tpl["fields"]
    parts: Parts = []
    lit: list[str] = []
    pos, k, n = 0, 0, len(fields)
    while True:
        opening, closing = text.find("{", pos), text.find("}", pos)
        brace = opening if closing < 0 or 0 <= opening < closing else closing
        if brace < 0:
            lit.append(text[pos:])
            break
        lit.append(text[pos:brace])
        if brace == opening and k < n:
            token = "{" + fields[k]["expr"] + "}"
            if text.startswith(token, brace):
                parts.append("".join(lit))
                lit = []
                parts.append(Field(fields[k]["expr"], fields[k].get("name")))
                k += 1
                pos = brace + len(token)
                continue
        char = text[brace]
        lit.append(char)
        pos = brace + (2 if text.startswith(char * 2, brace) else 1)
    parts.append("".join(lit))
    return normalize(parts)


# ---------------------------------------------------------------------------------------------
# string-token scanning (implicit concatenation, f-strings)


def skip_string(src: str, i: int) -> int:
    """Index just past the string literal whose opening quote is at ``src[i]``.

    Honours prefixes already consumed by the caller (an ``f`` before the quote makes nested
    fields, which may contain the same quote under PEP 701, be skipped as fields).
    """
    j = i
    while j > 0 and src[j - 1].isalpha():
        j -= 1
    prefix = src[j:i].lower()
    if len(prefix) > 3 or not set(prefix) <= set("rbuft"):
        prefix = ""
    q = src[i : i + 3] if src[i : i + 3] in ('"""', "'''") else src[i]
    if "f" in prefix or "t" in prefix:
        _, end = _scan_fbody(src, i + len(q), q, "r" in prefix)
        return end
    k = i + len(q)
    n = len(src)
    while k < n:
        c = src[k]
        if c == "\\":
            k += 2
            continue
        if src.startswith(q, k):
            return k + len(q)
        k += 1
    return n


def _decode(raw: str, prefix: str, q: str) -> str:
    if "\\" not in raw or "r" in prefix:
        return raw
    try:
        return cast(str, ast.literal_eval(q + raw + q))
    except Exception:  # noqa: BLE001 - odd escapes: keep them as written
        try:
            return cast(str, ast.literal_eval(('"""' if q != '"""' else "'''") + raw + ('"""' if q != '"""' else "'''")))
        except Exception:  # noqa: BLE001
            return raw


def _scan_field(src: str, i: int) -> tuple[str, int]:
    """``src[i]`` is just after a field's ``{``: return (inner text, index after its ``}``)."""
    n = len(src)
    start = i
    depth = 0
    in_spec = False
    while i < n:
        c = src[i]
        if c in "'\"" and (not in_spec or depth > 0):  # in a spec, quotes count inside a nested {field}
            i = skip_string(src, i)
            continue
        if c in "([{":
            depth += 1
        elif c in ")]":
            depth -= 1
        elif c == "}":
            if depth == 0:
                return src[start:i], i + 1
            depth -= 1
        elif c == ":" and depth == 0 and not in_spec:
            in_spec = True  # format spec: only nested {...} matter from here on
        i += 1
    return src[start:], n


def _scan_fbody(src: str, i: int, q: str, raw: bool) -> tuple[Parts, int]:
    """Scan an f-string body from ``src[i]`` to its closing quote ``q``."""
    parts: Parts = []
    lit: list[str] = []
    n = len(src)
    while i < n:
        if src.startswith(q, i):
            i += len(q)
            break
        c = src[i]
        if c == "\\":
            if not raw and src.startswith("N{", i + 1):
                end = src.find("}", i)
                end = n if end < 0 else end + 1
                lit.append(src[i:end])
                i = end
                continue
            lit.append(src[i : i + 2])
            i += 2
            continue
        if c == "{":
            if src.startswith("{{", i):
                lit.append("{")
                i += 2
                continue
            parts.append(_decode("".join(lit), "r" if raw else "", q))
            lit = []
            inner, i = _scan_field(src, i + 1)
            parts.append(field(inner))
            continue
        if c == "}":
            lit.append("}")
            i += 2 if src.startswith("}}", i) else 1
            continue
        lit.append(c)
        i += 1
    parts.append(_decode("".join(lit), "r" if raw else "", q))
    return parts, i


def string_parts(src: str) -> Parts:
    """Parts of the source text of one (implicitly concatenated) string / f-string expression."""
    parts: Parts = []
    i, n = 0, len(src)
    while i < n:
        c = src[i]
        if c in " \t\r\n\f\\()":
            i += 1
            continue
        if c == "#":
            nl = src.find("\n", i)
            i = n if nl < 0 else nl
            continue
        j = i
        while j < n and src[j].isalpha():
            j += 1
        prefix = src[i:j].lower()
        if j >= n or src[j] not in "'\"":
            # Not a string token: should not happen for a string node; keep the rest as a field.
            parts.append(field(src[i:].strip()))
            break
        q = src[j : j + 3] if src[j : j + 3] in ('"""', "'''") else src[j]
        raw = "r" in prefix
        if "f" in prefix or "t" in prefix:
            sub, i = _scan_fbody(src, j + len(q), q, raw)
            parts.extend(sub)
        else:
            k = j + len(q)
            while k < n:
                if src[k] == "\\":
                    k += 2
                    continue
                if src.startswith(q, k):
                    break
                k += 1
            parts.append(_decode(src[j + len(q) : k], prefix, q))
            i = k + len(q)
    return normalize(parts)


# ---------------------------------------------------------------------------------------------
# printf-style and str.format

_PERCENT = re.compile(r"%(?:\((?P<key>[^)]*)\))?(?P<flags>[#0\- +]*)(?P<width>\*|\d+)?(?:\.(?P<prec>\*|\d+))?[hlL]?(?P<type>[diouxXeEfFgGcrsab%])")


def percent_specs(fmt: str) -> list[tuple[str, str | None, str]] | None:
    """Split a printf-style format into [(literal_before, key, type)], last item's type ''.

    Returns None when the format uses ``*`` widths (arguments we would mis-assign).
    """
    out: list[tuple[str, str | None, str]] = []
    pos = 0
    for m in _PERCENT.finditer(fmt):
        if m.group("width") == "*" or m.group("prec") == "*":
            return None
        if m.group("type") == "%":
            out.append((fmt[pos : m.start()] + "%", None, "%"))
        else:
            out.append((fmt[pos : m.start()], m.group("key"), m.group("type")))
        pos = m.end()
    out.append((fmt[pos:], None, ""))
    return out


def _split_field(name: str) -> tuple[str, str]:
    """A format field's name as (the argument, what is read of it): ``a.b[0]`` -> (``a``, ``.b[0]``)."""
    cut = min((k for k in (name.find("."), name.find("[")) if k >= 0), default=len(name))
    return name[:cut], name[cut:]


def format_specs(fmt: str) -> list[tuple[str, str | None, str | None, str | None]] | None:
    """``string.Formatter().parse`` but never raises (returns None on a malformed format)."""
    import string

    try:
        return list(string.Formatter().parse(fmt))
    except (ValueError, IndexError):
        return None


# ---------------------------------------------------------------------------------------------
# AST expression -> (form, parts)


class MessageBuilder:
    """Turns a message expression into ``(form, parts)``; dispatch by node type.

    ``segment(node)`` gives an expression's source text; ``lookup(key)`` gives the ``(form,
    parts)`` a local variable / module constant holds at this point (``key`` is a name or a
    dotted ``self.attr``), or None.
    """

    def __init__(self, segment: Callable[[Any], str], lookup: Callable[[str], Built | None], lookup_list: Callable[[str], list[Parts] | None] | None = None):
        self.segment = segment
        self.lookup = lookup
        self.lookup_list = lookup_list or (lambda key: None)

    def build(self, node: ast.expr) -> tuple[str, Parts]:
        handler = _BUILDERS.get(type(node))
        if handler is not None:
            got = handler(self, node)
            if got is not None:
                return got
        return "opaque", [field(self.segment(node))]

    def parts(self, node: ast.expr) -> Parts:
        return self.build(node)[1]

    def is_stringy(self, node: ast.expr) -> bool:
        """Cheap test: does this expression build a string we can template?"""
        t = type(node)
        if isinstance(node, ast.Constant):
            return isinstance(node.value, str)
        if t is ast.JoinedStr:
            return True
        if t is ast.BinOp:
            # Walk the left spine of ``a + b % c + ...`` in a loop: a chain of thousands of terms
            # must not recurse once per term (right operands nest only inside parentheses,
            # which the parser limits to 200 levels).
            while type(node) is ast.BinOp and type(node.op) in (ast.Add, ast.Mod):
                if self.is_stringy(node.right):
                    return True
                node = node.left
            return type(node) is not ast.BinOp and self.is_stringy(node)
        if isinstance(node, ast.Call):
            f = node.func
            return type(f) is ast.Attribute and f.attr in ("format", "join") and type(f.value) is ast.Constant and isinstance(f.value.value, str)
        if t in (ast.Name, ast.Attribute):
            key = self._key(node)
            return key is not None and self.lookup(key) is not None
        return False

    # -- handlers (return None to fall back to an opaque field) --

    def _constant(self, node: ast.Constant) -> Built | None:
        if isinstance(node.value, str):
            return "literal", [node.value]
        return None

    def _joined(self, node: ast.JoinedStr) -> Built | None:
        parts = string_parts(self.segment(node))
        return "fstring", [
            p if not isinstance(p, Field) else self._assembled(p) if ".join(" in p.expr else self._branches(p) if p.name is not None and p.expr == p.name else p
            for p in parts
        ]

    def _branches(self, f: Field) -> Field:
        """An f-string field ``{msg}`` over a name set to one message per branch keeps the
        branches' texts as its alternatives (the field is still shown as written)."""
        if f.name is None:  # (taken only for a field that is a name)
            return f
        got = self.lookup(f.name)
        if got is not None and len(got[1]) == 1 and isinstance(got[1][0], Field) and got[1][0].alts is not None and got[1][0].alts[0] is None:
            return Field(f.expr, f.name, got[1][0].alts)
        return f

    def _assembled(self, f: Field) -> Field:
        """An f-string field ``{sep.join(pieces)}`` over a list of messages, with its pieces."""
        try:
            node = ast.parse(f.expr.strip(), mode="eval").body
        except (SyntaxError, ValueError, RecursionError, MemoryError):
            return f
        if (
            type(node) is ast.Call
            and type(node.func) is ast.Attribute
            and node.func.attr == "join"
            and type(node.func.value) is ast.Constant
            and isinstance(node.func.value.value, str)
            and len(node.args) == 1
            and not node.keywords
        ):
            key = self._key(node.args[0])
            pieces = self.lookup_list(key) if key is not None else None
            if pieces:
                return Field(f.expr, f.name, (node.func.value.value, pieces))
        return f

    def _binop(self, node: ast.BinOp) -> Built | None:
        op = type(node.op)
        if op is ast.Add:
            return self._concat(node)
        if op is ast.Mod and type(node.left) is ast.Constant and isinstance(node.left.value, str):
            parts = self._percent(node.left.value, node.right)
            if parts is not None:
                return "percent", parts
        return None

    def _concat(self, node: ast.BinOp) -> Built | None:
        """``a + b + c ...``, built in one loop over the chain's left spine (never one frame per term).

        Same result as building ``left + right`` recursively: the lowest ``+`` with a string on
        either side starts the concatenation (what lies left of it is one opaque field), every
        ``+`` above it appends its right operand.
        """
        spine = []
        first: ast.expr = node
        while type(first) is ast.BinOp and type(first.op) is ast.Add:
            spine.append(first)
            first = first.left
        spine.reverse()  # spine[0].left is first, spine[-1] is node
        stringy = self.is_stringy(first)
        parts: Parts | None = None
        for k, level in enumerate(spine):
            right_stringy = self.is_stringy(level.right)
            if parts is None and (stringy or right_stringy):
                parts = list(self.parts(first)) if k == 0 else [field(self.segment(level.left))]  # a copy: lookups share lists
            if parts is not None:
                parts += self.parts(level.right)
            stringy = stringy or right_stringy
        return None if parts is None else ("concat", parts)

    def _percent(self, fmt: str, arg: ast.expr) -> Parts | None:
        specs = percent_specs(fmt)
        if specs is None:
            return None
        used = [s for s in specs if s[2] not in ("", "%")]
        if any(key is not None for _, key, _ in used):
            if type(arg) is ast.Dict:
                by_key = {k.value: v for k, v in zip(arg.keys, arg.values) if type(k) is ast.Constant and isinstance(k.value, str)}
                values = [by_key.get(key) if key is not None else None for _, key, _ in used]
                texts = [None if v is not None else f"{self.segment(arg)}[{key!r}]" for (_, key, _), v in zip(used, values)]
            else:
                values = [None] * len(used)
                texts = [f"{self.segment(arg)}[{key!r}]" for _, key, _ in used]
        else:
            if type(arg) is ast.Tuple:
                if any(type(e) is ast.Starred for e in arg.elts) or len(arg.elts) != len(used):
                    return None
                values = list(arg.elts)
            elif len(used) == 1:
                values = [arg]
            else:
                return None
            texts = [None] * len(used)
        parts: Parts = []
        k = 0
        for lit, key, typ in specs:
            parts.append(lit)
            if typ in ("", "%"):
                continue
            value, text = values[k], texts[k]
            k += 1
            if value is None:
                parts.append(field(text or ""))  # a text stands for each value not given
            elif typ == "s":
                parts.extend(self.parts(value))
            else:
                parts.append(field(self.segment(value)))
        return parts

    def _call(self, node: ast.Call) -> Built | None:
        f = node.func
        if type(f) is not ast.Attribute or type(f.value) is not ast.Constant or not isinstance(f.value.value, str):
            return None
        base = f.value.value
        if f.attr == "format":
            parts = self._format(base, node)
            return None if parts is None else ("format", parts)
        if f.attr == "join" and len(node.args) == 1 and not node.keywords:
            seq = node.args[0]
            key = self._key(seq)
            pieces = self.lookup_list(key) if key is not None else None
            if pieces:
                return "assembled", [Field(self.segment(node), None, (base, pieces))]
            if isinstance(seq, (ast.List, ast.Tuple)) and not any(type(e) is ast.Starred for e in seq.elts):
                joined: Parts = []
                for i, e in enumerate(seq.elts):
                    if i:
                        joined.append(base)
                    joined.extend(self.parts(e))
                return "join", joined
        return None

    def _format(self, fmt: str, call: ast.Call) -> Parts | None:
        specs = format_specs(fmt)
        if specs is None or any(type(a) is ast.Starred for a in call.args):
            return None
        kwargs = {kw.arg: kw.value for kw in call.keywords if kw.arg is not None}
        has_star_kw = any(kw.arg is None for kw in call.keywords)
        parts: Parts = []
        auto = 0
        for lit, fname, spec, conv in specs:
            parts.append(lit)
            if fname is None:
                continue
            head, rest = _split_field(fname)
            if head == "":
                value = call.args[auto] if auto < len(call.args) else None
                auto += 1
            elif head.isdigit():
                i = int(head)
                value = call.args[i] if i < len(call.args) else None
            else:
                value = kwargs.get(head)
                if value is None and not has_star_kw:
                    return None
            suffix = ("!" + conv if conv else "") + (":" + spec if spec else "")
            if value is None:
                parts.append(field(head + rest + suffix))
            elif not rest and not suffix:
                parts.extend(self.parts(value))
            else:
                parts.append(field(self.segment(value) + rest + suffix))
        return parts

    @staticmethod
    def _key(node: ast.expr) -> str | None:
        if type(node) is ast.Name:
            return node.id
        if type(node) is ast.Attribute and type(node.value) is ast.Name:
            return node.value.id + "." + node.attr
        return None

    def _name(self, node: ast.Name) -> Built | None:
        got = self.lookup(node.id)
        if got is not None:
            return got
        return "variable", [Field(node.id, node.id)]

    def _attribute(self, node: ast.Attribute) -> Built | None:
        key = self._key(node)
        if key is not None:
            got = self.lookup(key)
            if got is not None:
                return got
        return None


#: Expression kind -> builder method: a class-level table, so no builder holds bound methods
#: of itself (a reference cycle per file, which kept each file's tree alive until the cycle
#: collector ran).
_BUILDERS: dict[type[ast.AST], Callable[[Any, Any], Built | None]] = {
    ast.Constant: MessageBuilder._constant,
    ast.JoinedStr: MessageBuilder._joined,
    ast.BinOp: MessageBuilder._binop,
    ast.Call: MessageBuilder._call,
    ast.Name: MessageBuilder._name,
    ast.Attribute: MessageBuilder._attribute,
}
