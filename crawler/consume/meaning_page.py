"""The reproductions and callers of a record's meaning, laid out for each page kind.

Labelled "derived from the code" everywhere: they are errcat's reading of the crawled commit,
never curated text. Every string in them comes from the crawled repository and is escaped by
the page kind's own helpers (``site_html.esc``, ``site_markdown.md_*``; the terminal's ``sink.styled``).
"""

from __future__ import annotations

import ast
import re
from collections.abc import Callable
from typing import Any

from crawler.model.kinds import ASSERT, LOG, RAISE, exception_word
from crawler.model.records import shown_source

REPRODUCTIONS = "Reproduction from the tests (derived from the code)"
CALLERS = "Where it is reached from (derived from the code)"
FACTS_TITLE = "How the code gets there (derived from the code)"


def fact_lines(facts: dict[str, Any] | None) -> list[str]:
    """The primary site's facts as code lines: its guards, loops, handler, cause and decorators."""
    facts = facts or {}
    # a ``while`` test is a guard of what the loop holds, and its loop says it already ("in while X")
    whiles = {x[len("while ") :] for x in facts.get("loops") or [] if x.startswith("while ")}
    lines = [f"if {one_line(shown_guard(g))}" for g in facts.get("guards") or [] if g not in whiles] + [
        f"after {x[len('else: ') :]}" if x.startswith("else: ") else f"in {x}" for x in facts.get("loops") or []
    ]
    if facts.get("handler"):
        lines.append(f"in {facts['handler']}")
    if facts.get("cause"):
        lines.append(f"from {facts['cause']}")
    return lines + [f"@{d}" for d in facts.get("decorators") or []]


#: Longest guard read for a double negation: a guard is the crawled repository's text, and
#: parsing it is only worth doing for what fits a line or two of a page.
SHOWN_GUARD_MAX = 2000


#: A comparison's complement: exact for these operators (Python's ``!=`` is ``not ==`` unless a
#: class says otherwise); ``<`` and the others are not complemented (NaN, partial orders).
_COMPLEMENT = {ast.Eq: "!=", ast.NotEq: "==", ast.In: "not in", ast.NotIn: "in", ast.Is: "is not", ast.IsNot: "is"}

#: Operands that bind less tightly than a comparison, so keep their parentheses beside one.
_LOOSE = (ast.BoolOp, ast.IfExp, ast.Lambda, ast.NamedExpr, ast.Compare, ast.Yield, ast.YieldFrom, ast.Starred)


def _operand(text: str, node: ast.expr) -> str:
    """An operand's text as it can stand beside a comparison operator."""
    loose = isinstance(node, _LOOSE) or (isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.Not))
    bare = isinstance(node, (ast.Tuple, ast.GeneratorExp)) and not text.startswith("(")
    return f"({text})" if loose or bare else text


def _tree(code: str) -> str | None:
    try:
        return ast.dump(ast.parse(f"({code}\n)", mode="eval"))
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None


def one_line(code: str) -> str:
    """A condition the source wraps over lines, on one line as a page lists it (``x not in (
    None, "none", )`` as ``x not in (None, "none")``): the breaks and the indentation after them
    go, and a bracket's trailing comma; kept as written unless Python reads both alike."""
    if "\n" not in code or len(code) > SHOWN_GUARD_MAX:
        return code
    flat = re.sub(r"([(\[{])[^\S\n]*\n\s*", r"\1", code)
    flat = re.sub(r",?\s*\n\s*([)\]}])", r"\1", flat)
    flat = re.sub(r"\s*\n\s*", " ", flat)
    tree = _tree(flat)
    return flat if tree is not None and tree == _tree(code) else code


#: Builtin exceptions ``except Exception`` does not catch.
_NOT_EXCEPTIONS = frozenset({"BaseException", "BaseExceptionGroup", "GeneratorExit", "KeyboardInterrupt", "SystemExit"})
_SCOPES = (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)
#: Longest snippet read for a raise its function always catches (25 lines of long code).
SNIPPET_MAX = 6000


def swallowed(record: dict[str, Any]) -> str | None:
    """``It never reaches a caller: `except Exception as e` (line 12) ...``: when the code the page shows proves
    that the primary site's raise never leaves its function: it sits in the body of a ``try`` of
    the same function whose first handler to catch it surely does (bare, ``Exception``, the
    exception's own name or a builtin it derives from) and holds no ``raise`` of its own, with no
    handler before it that might catch it, nor a ``finally`` that raises. Read from the snippet
    alone: said only when all of that is in it (a handler whose end the snippet does not show is
    not said to swallow). The snippet is the crawled repository's text: parsed, never run."""
    site = record["sites"][0]
    if record.get("kind") not in (RAISE, ASSERT) or (site.get("facts") or {}).get("reraise"):
        return None
    snippet = site.get("snippet") or {}
    code, start = snippet.get("code") or "", snippet.get("start_line")
    # (a snippet is at most 25 lines of code: one far larger is not errcat's, and is not parsed
    # the hundred-odd ways a window may be)
    if not isinstance(start, int) or "try" not in code or "except" not in code or len(code) > SNIPPET_MAX or code.count("\n") > 40:
        return None
    lines = code.split("\n")
    at = site["line"] - start
    if not (0 <= at < len(lines) and "try" in "".join(lines[:at]) and "except" in "".join(lines[at:])):
        return None
    parsed = _parse_window(lines, at)
    if parsed is None:
        return None
    tree, head, lines, whole = parsed
    offset = start + head - 1  # a line of the tree is line ``lineno + offset`` of the file
    target = next((n for n in ast.walk(tree) if isinstance(n, (ast.Raise, ast.Assert)) and n.lineno + offset == site["line"]), None)
    if target is None or (isinstance(target, ast.Raise) and target.exc is None):
        return None
    parents = {child: node for node in ast.walk(tree) for child in ast.iter_child_nodes(node)}
    exc = record.get("exception") or {}
    node: ast.AST = target
    while node in parents and not isinstance(node, _SCOPES):
        up = parents[node]
        if isinstance(up, ast.Try) and node in up.body:
            if any(isinstance(n, ast.Raise) for stmt in up.finalbody for n in ast.walk(stmt)):
                return None
            for handler in up.handlers:
                caught = _catches(handler.type, exc)
                raises = any(isinstance(n, ast.Raise) for stmt in handler.body for n in ast.walk(stmt))
                if caught is None and raises:  # it may catch it and raise again: nothing is proved
                    return None
                if caught:
                    if raises or not (whole or _ends_before(lines, handler)):
                        return None
                    clause = "except"
                    if handler.type is not None:
                        clause += " " + one_line(ast.get_source_segment("\n".join(lines), handler.type) or "...")
                    if handler.name:
                        clause += f" as {handler.name}"
                    return f"It never reaches a caller: `{clause}` (line {handler.lineno + offset}) in this function catches it and does not raise again."
        node = up
    return None


def _parse_window(lines: list[str], at: int) -> tuple[ast.Module, int, list[str], bool] | None:
    """The snippet's lines parsed, or the widest run of them holding line ``at`` (0-based) that
    parses once dedented (a snippet may start or stop mid-statement): the tree, the offset of its
    line numbers in the snippet's, the lines parsed, and whether that is a whole function."""
    import textwrap

    n = len(lines)
    for head in range(min(at, 12) + 1):
        for tail in range(n, max(at + 1, n - 8) - 1, -1):
            text = textwrap.dedent("\n".join(lines[head:tail]))
            try:
                tree = ast.parse(text)
            except (SyntaxError, ValueError, RecursionError, MemoryError):
                continue
            part = text.split("\n")
            whole = head == 0 and tail == n and len(tree.body) == 1 and isinstance(tree.body[0], (ast.FunctionDef, ast.AsyncFunctionDef))
            return tree, head, part, whole
    return None


def _ends_before(lines: list[str], handler: ast.ExceptHandler) -> bool:
    """The handler's block visibly ends in these lines: a later line of code is indented no
    deeper than its ``except``."""
    indent = len(lines[handler.lineno - 1]) - len(lines[handler.lineno - 1].lstrip())
    for line in lines[handler.end_lineno or handler.lineno :]:
        if line.strip() and not line.lstrip().startswith("#"):
            return len(line) - len(line.lstrip()) <= indent
    return False


def _catches(handler_type: ast.expr | None, exc: dict[str, Any]) -> bool | None:
    """Whether an ``except`` of this type catches the exception: True surely, False surely not,
    None when the code does not tell (a class errcat cannot place)."""
    import builtins

    if handler_type is None:
        return True
    types = handler_type.elts if isinstance(handler_type, ast.Tuple) else [handler_type]
    # (a class errcat could not place has no builtin ancestor: it may derive from BaseException)
    name, ancestor = exc.get("name") or "", exc.get("builtin_ancestor") or ""
    answer: bool | None = False
    for t in types:
        written = t.attr if isinstance(t, ast.Attribute) else t.id if isinstance(t, ast.Name) else None
        if written is None:
            answer = None
            continue
        if written == name or written == "BaseException":
            return True
        if written == "Exception" and ancestor and ancestor not in _NOT_EXCEPTIONS:
            return True
        caught, raised = getattr(builtins, written, None), getattr(builtins, ancestor, None)
        if isinstance(caught, type) and issubclass(caught, BaseException) and isinstance(raised, type) and issubclass(raised, BaseException):
            if issubclass(raised, caught):
                return True
            if ancestor == name:  # a builtin raised as itself: surely not a subclass of another
                continue
        answer = None
    return answer


def shown_message(record: dict[str, Any]) -> str:
    """The message a page shows for a record: its template (:func:`message_text`), or for an
    assert with no message the check that failed, as its traceback's line shows it."""
    condition = (record.get("sites") or [{}])[0].get("condition")
    if record.get("keyed_by") == "condition" and condition is not None:
        return f"assert {condition}"
    return message_text(record["message"])


def message_text(message: dict[str, Any]) -> str:
    """A message template as a page shows it: a field whose expression the source wraps over
    lines (``{a\n    if c\n    else b}``, a call over several lines) on one line, as a guard is
    (:func:`one_line`; else its breaks and their indentation as one space). The literal text is
    kept as it is: a line break there is one the message prints."""
    text = message.get("text") or ""
    for field in message.get("fields") or []:
        expr = field.get("expr") or ""
        if "\n" in expr:
            flat = one_line(expr)
            text = text.replace("{" + expr + "}", "{" + (re.sub(r"\s*\n\s*", " ", flat) if "\n" in flat else flat) + "}")
    return text


def shown_guard(guard: str) -> str:
    """A guard as a reader takes it. The extractor records the way past a check as its negation,
    ``not (X)``; shown, ``not (not X)`` (the code after ``if not X: return``) is ``X`` and
    ``not (a == b)`` is ``a != b`` (also ``is``, ``in`` and their negations). Anything else, or
    text that does not parse, is shown as it is. The record keeps the recorded form (curated
    reviews compare it)."""
    if not (guard.startswith("not (") and guard.endswith(")")) or len(guard) > SHOWN_GUARD_MAX:
        return guard
    try:
        node = ast.parse(guard, mode="eval").body
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return guard
    if not (isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.Not)):
        return guard  # e.g. not (a) or b
    inner = node.operand
    if isinstance(inner, ast.UnaryOp) and isinstance(inner.op, ast.Not):
        text = ast.get_source_segment(guard, inner.operand)
        if text is None or isinstance(inner.operand, (ast.IfExp, ast.Lambda, ast.NamedExpr)):
            return guard
        return _operand(text, inner.operand) if isinstance(inner.operand, (ast.Tuple, ast.GeneratorExp)) else text
    if isinstance(inner, ast.Compare) and len(inner.ops) == 1 and type(inner.ops[0]) in _COMPLEMENT:
        sides = [(ast.get_source_segment(guard, side), side) for side in (inner.left, inner.comparators[0])]
        if any(text is None for text, _ in sides):
            return guard
        left, right = (_operand(str(text), side) for text, side in sides)
        return f"{left} {_COMPLEMENT[type(inner.ops[0])]} {right}"
    return guard


def meaning_html(r: dict[str, Any]) -> str:
    """Sections of the site's entry page (escaped as the rest of the page)."""
    from crawler.consume.site_html import code_html, esc, safe_url

    meaning = r.get("meaning") or {}
    parts = []
    reps = meaning.get("reproductions") or []
    if reps:
        items = []
        for rep in reps:
            where = f"<code>{esc(rep['path'])}:{rep['line']}</code>"
            if rep.get("permalink"):
                where = f'<a class="permalink" href="{esc(safe_url(rep["permalink"]))}">{where}</a>'
            pattern = (
                f' <span class="muted">match: <code>{esc(rep["match"])}</code></span>'
                if rep.get("match") is not None
                else ' <span class="muted">(no message pattern)</span>'
            )
            items.append(f"<p>{where} in <code>{esc(rep['qualname'])}</code>{pattern}</p>" + code_html(rep["code"]))
        parts.append(f'<section id="reproductions">\n<h2>{esc(REPRODUCTIONS)}</h2>\n{"".join(items)}\n</section>\n')
    callers = meaning.get("callers") or []
    if callers:
        rows = "".join(
            f"<li><code>{esc(c['path'])}:{c['line']}</code> in <code>{esc(c['qualname'])}</code>"
            + (f' <span class="muted">entry point: {esc(c["entry_point"])}</span>' if c.get("entry_point") else "")
            + "</li>"
            for c in callers
        )
        parts.append(f'<section id="callers">\n<h2>{esc(CALLERS)}</h2>\n<ol>{rows}</ol>\n</section>\n')
    return "".join(parts)


def meaning_markdown(r: dict[str, Any]) -> list[str]:
    """Sections of the Markdown entry page."""
    from crawler.consume.site_html import safe_url
    from crawler.consume.site_markdown import md_code, md_inline, md_text

    meaning = r.get("meaning") or {}
    out: list[str] = []
    reps = meaning.get("reproductions") or []
    if reps:
        out += [f"## {md_text(REPRODUCTIONS)}", ""]
        for rep in reps:
            where = md_inline(f"{rep['path']}:{rep['line']}") + " in " + md_inline(rep["qualname"])
            if rep.get("permalink"):
                where += f" — [view on GitHub](<{safe_url(rep['permalink'])}>)"
            pattern = f"match: {md_inline(rep['match'])}" if rep.get("match") is not None else "no message pattern"
            out += [f"{where} ({pattern})", "", md_code(rep["code"], "python"), ""]
    callers = meaning.get("callers") or []
    if callers:
        out += [f"## {md_text(CALLERS)}", ""]
        out += [
            f"1. {md_inline(c['path'] + ':' + str(c['line']))} in {md_inline(c['qualname'])}"
            + (f" (entry point: {md_text(c['entry_point'])})" if c.get("entry_point") else "")
            for c in callers
        ]
        out.append("")
    return out


# --------------------------------------------------------------------------- knobs, trigger, fix

TITLE = "Derived from the code"
NOTE = "Read by errcat from the code at this commit, not written by a person; it may be incomplete."


def knob_text(knob: dict[str, Any]) -> str:
    """One setting in a sentence's notation: `` `--flag` (`-f`), field `x` of `Owner` ``."""
    text = f"`{knob['name']}`"
    others = [f for f in knob.get("flags") or [] if f != knob["name"]]
    if others:
        text += " (" + ", ".join(f"`{f}`" for f in others) + ")"
    if knob.get("owner") and knob.get("field") and knob["field"] != knob["name"]:
        text += f", field `{knob['field']}` of `{knob['owner'].rpartition('.')[2]}`"
    elif knob.get("owner"):
        text += f" of `{knob['owner'].rpartition('.')[2]}`"
    kind = {
        "cli_flag": "command-line option",
        "config_field": "config field",
        "request_param": "request parameter",
        "env_var": "environment variable",
        "message_name": "named in the message",
    }.get(knob["kind"], knob["kind"])
    return f"{text} ({kind})"


#: How a knob that is no setting is labelled (a field of an object the code builds and fills in).
BUILT_FIELD = "a field the code fills in; no option sets it"
#: ... where the entry's who-acts (``meaning.action.actor``) says whose the object is: a field of
#: what the caller's code passes in (a trainer's weight-transfer info, its weight source), of what
#: the request carries or the code builds from it (``prompt_embeds``, ``TokenizeParams``). Other
#: actors' checks may read an object filled from several places: the plain words.
FILLED_BY = {
    "caller": "a field of what your code passes in; no option sets it",
    "request": "a field of the request or of what the code builds from it; no option sets it",
}
#: ... where who-acts says a setting leads to it and the field is a rank count of the deployment
#: (``TransferTopology.tp_size``, filled from the instance's tensor parallel size): the option that
#: sets that size, not "no option sets it" (s43-judge1's page 32).
PARALLEL_FIELD = "a field the code fills in from the {size} the instance runs with{flag}"
_RANK_COUNT = re.compile(r"(?:[a-z]+_)?(tp|pp|dp|ep|pcp|dcp)_(?:world_)?size|(tensor|pipeline|data)_parallel_size")
_PARALLEL_FLAGS = {
    "tp": ("tensor parallel size", "--tensor-parallel-size"),
    "tensor": ("tensor parallel size", "--tensor-parallel-size"),
    "pp": ("pipeline parallel size", "--pipeline-parallel-size"),
    "pipeline": ("pipeline parallel size", "--pipeline-parallel-size"),
    "dp": ("data parallel size", "--data-parallel-size"),
    "data": ("data parallel size", "--data-parallel-size"),
    "dcp": ("decode context parallel size", "--decode-context-parallel-size"),
    "pcp": ("prefill context parallel size", "--prefill-context-parallel-size"),
    "ep": ("expert parallel size", ""),
}


def _filled_by(knob: dict[str, Any], actor: Any) -> str:
    """Who fills a field no option sets, in the words of the entry's who-acts (:data:`FILLED_BY`);
    a rank count on a setting's page is filled from that parallel size (:data:`PARALLEL_FIELD`)."""
    found = _RANK_COUNT.fullmatch(str(knob.get("field") or knob["name"]))
    if actor == "setting" and found:
        size, flag = _PARALLEL_FLAGS[found.group(1) or found.group(2)]
        return PARALLEL_FIELD.format(size=size, flag=f" (`{flag}`)" if flag else "")
    return FILLED_BY.get(str(actor), BUILT_FIELD)


#: How a name the message quotes that errcat resolved to no one option is labelled: named, not a
#: setting (``rank``, ``gpu_memory_utilization`` where several classes declare it); a flag's
#: spelling is an option, but whose (``--grpc-port`` is the server's, ``--shm-size`` docker's)
#: errcat did not find.
NAMED = "Named in the message"
NAMED_NOTE = "errcat did not resolve it to one option"
NAMED_FLAG = "a command-line option; errcat did not find where it is declared"


def rows(meaning: dict[str, Any] | None, when: str = "When it is raised", settable: Callable[[dict[str, Any]], bool] | None = None) -> list[tuple[str, str]]:
    """(label, sentence) pairs, in page order; none when nothing was derived. ``when`` labels the
    trigger (``kinds.trigger_label``: a log entry is logged, not raised); ``settable``: whether a
    knob is a setting a user gives (``actions.settable``), else it is shown as what the check
    reads, with who fills it in (the entry's who-acts), not as a setting. A row is a "Setting" only
    when the knob is an option, an environment variable or a config field an option sets: a
    request's field is a "Request field", a name only the message gives is "Named in the message"."""
    if not meaning:
        return []
    out = []
    if meaning.get("trigger"):
        out.append((when, meaning["trigger"]))
    actor = (meaning.get("action") or {}).get("actor")
    for knob in meaning.get("knobs") or []:
        text = knob_text({**knob, "name": knob["name"].replace("`", "'"), "flags": [f.replace("`", "'") for f in knob.get("flags") or []]})
        if knob["kind"] == "message_name":
            note = NAMED_FLAG if knob["name"].startswith("-") else NAMED_NOTE
            out.append((NAMED, text.rpartition(" (")[0] + f" ({note})"))
        elif knob["kind"] == "request_param":
            out.append(("Request field", text.rpartition(" (")[0]))
        elif settable is not None and not settable(knob):
            out.append(("Reads", text.rpartition(" (")[0] + f" ({_filled_by(knob, actor)})"))
        else:
            out.append(("Setting", text))
    if meaning.get("fix"):
        out.append(("Fix direction", meaning["fix"]))
    return out


def split_code(sentence: str, prose: Callable[[str], str], code: Callable[[str], str]) -> str:
    """The sentence with its prose through ``prose`` and its backticked code through ``code``."""
    parts = sentence.split("`")
    if len(parts) % 2 == 0:  # an odd backtick: no code can be told apart, all of it is prose
        return prose(sentence)
    return "".join(code(p) if i % 2 else prose(p) for i, p in enumerate(parts))


# --------------------------------------------------------------------------- what to do

DO_TITLE = "What to do"
DO_NOTE = "Derived by errcat from the code and the message at this commit, not written by a person."
#: The longest literal of a message searched for on the tracker (a search box takes a phrase).
MAX_SEARCH = 80


def action_rows(meaning: dict[str, Any] | None) -> list[tuple[str, str]]:
    """(label, sentence) pairs of ``meaning.action``, in page order: whose move it is, then each
    step; none for a record without one (a dataset of an earlier schema)."""
    action = (meaning or {}).get("action")
    if not action:
        return []
    return [("Whose move", action["says"]), *(("Step", step) for step in action.get("steps") or [])]


def _literal(message: dict[str, Any]) -> str:
    """The longest run of the message's literal text (its fields cut out), for a search."""
    if message.get("opaque"):
        return ""
    text = re.sub(r"\{\{|\}\}", " ", message.get("text") or "")
    pieces = re.split(r"\{[^{}]*\}|[\n\r\t]", text)
    sentences = (s for p in pieces for s in re.split(r"(?<=[.!?])\s+", " ".join(p.split())))
    best = max((s.strip(" .:,;'\"") for s in sentences), key=len, default="")
    return best[:MAX_SEARCH].rsplit(" ", 1)[0] if len(best) > MAX_SEARCH else best


def tracker_links(r: dict[str, Any]) -> list[tuple[str, str]]:
    """(label, URL) of the upstream tracker for this entry: its issues searched for the message's
    literal text, and, for an internal check, a new issue with the message, the exception, the
    place and the commit filled in; on GitHub only. Built only from the record's validated parts (the repository's
    own URL, which the models hold to ``URL_PATTERN``), every value percent-encoded."""
    from urllib.parse import quote

    repo = r.get("repo") or {}
    base = str(repo.get("url") or "")
    if not re.fullmatch(r"https://github\.com/[A-Za-z0-9_.-]+/[A-Za-z0-9_.-]+", base):
        return []  # (GitHub's issue search and new-issue form; another host's tracker is not known)
    out = []
    literal = _literal(r["message"])
    if not literal and r.get("keyed_by") == "condition":  # users title such issues by the check that failed
        literal = shown_message(r)[:MAX_SEARCH]
    if literal:
        out.append(("Search the tracker", f"{base}/issues?q={quote(chr(34) + literal + chr(34), safe='')}"))
    action = (r.get("meaning") or {}).get("action") or {}
    if action.get("actor") == "internal" and r["kind"] != LOG:
        loc, prov = r["location"], r.get("provenance") or {}
        commit = shown_source(prov)[0] if prov.get("commit") else ""
        title = f"{exception_word(r)}: {' '.join(shown_message(r).split())}"[:200]
        body = "\n".join(
            [
                f"I hit this error (errcat entry `{r['id']}`):",
                "",
                "```",
                title,
                "```",
                "",
                f"Raised at `{loc['path']}:{loc['line']}` in `{loc['qualname']}`, at {'commit ' if prov.get('commit_date') else ''}`{commit}`.",
                "",
                "Version I run:",
                "",
                "The full traceback:",
                "",
                "```",
                "",
                "```",
                "",
                "The command or code that led to it:",
                "",
            ]
        )
        out.append(("Report it", f"{base}/issues/new?title={quote(title, safe='')}&body={quote(body, safe='')}"))
    return out
