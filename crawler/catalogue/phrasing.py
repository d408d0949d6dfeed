"""Conditions in words: a guard's code, parsed, simplified and read out; and its negation as a fix.

``simplify`` pushes ``not`` inward: ``not (x is not None)`` -> ``x is None``, ``not (a < b)`` ->
``a >= b``, ``not (a and b)`` -> ``not a or not b`` (De Morgan), ``not not x`` -> ``x``. Guard
text that does not parse as an expression (a ``match`` case) is quoted as it is. Names the
caller maps (``self.temperature`` -> `` `temperature` ``) are put in for the code.
"""

from __future__ import annotations

import ast
import re
import warnings
from collections.abc import Callable, Sequence
from functools import lru_cache

from crawler.catalogue import asks
from crawler.extract.native import CLOSURE_OF, SWITCH_DEFAULT
from crawler.model.kinds import LOG

MAX_CODE = 80
MAX_CONDITIONS = 4

_NEGATED = {
    ast.Eq: ast.NotEq,
    ast.NotEq: ast.Eq,
    ast.Lt: ast.GtE,
    ast.GtE: ast.Lt,
    ast.Gt: ast.LtE,
    ast.LtE: ast.Gt,
    ast.In: ast.NotIn,
    ast.NotIn: ast.In,
    ast.Is: ast.IsNot,
    ast.IsNot: ast.Is,
}
_WORDS = {
    ast.Eq: "is",
    ast.NotEq: "is not",
    ast.Lt: "is less than",
    ast.LtE: "is at most",
    ast.Gt: "is greater than",
    ast.GtE: "is at least",
    ast.In: "is one of",
    ast.NotIn: "is not one of",
    ast.Is: "is",
    ast.IsNot: "is not",
}


def _text(node: ast.AST) -> str:
    """``ast.unparse``, kept on the node: parsed guards are cached and read more than once (the
    trigger, the fix, each knob's name), and unparsing was most of the sentences' cost."""
    text: str | None = getattr(node, "_errcat_text", None)
    if text is None:
        text = node.__dict__["_errcat_text"] = ast.unparse(node)
    return text


#: Order comparisons read as order only between numbers: between sets (``keys <= {"a", "b"}``)
#: ``<=`` is "is a subset of", and ``not (a <= b)`` is not ``a > b`` (a set that is neither's
#: subset is neither), so such a comparison is never negated into another operator.
_SET_WORDS = {
    ast.Lt: "is a proper subset of",
    ast.LtE: "is a subset of",
    ast.Gt: "is a proper superset of",
    ast.GtE: "is a superset of",
}
_SET_CALLS = ("set", "frozenset")
_SET_VIEWS = ("keys", "items")


def _set_like(node: ast.expr) -> bool:
    """Whether the code plainly makes a set: a set display or comprehension, ``set(...)``,
    ``frozenset(...)``, a mapping's ``keys()``/``items()`` view, or set algebra on one."""
    if type(node) in (ast.Set, ast.SetComp):
        return True
    if type(node) is ast.Call:
        func = node.func
        return (type(func) is ast.Name and func.id in _SET_CALLS) or (type(func) is ast.Attribute and func.attr in _SET_VIEWS and not node.args)
    if type(node) is ast.BinOp and type(node.op) in (ast.BitOr, ast.BitAnd, ast.Sub, ast.BitXor):
        return _set_like(node.left) or _set_like(node.right)
    return False


def _set_order(node: ast.Compare) -> bool:
    """An order comparison of sets (see ``_SET_WORDS``)."""
    return len(node.ops) == 1 and type(node.ops[0]) in _SET_WORDS and (_set_like(node.left) or _set_like(node.comparators[0]))


def constant_true(node: ast.expr | None) -> bool:
    """A condition that always holds (``while True:``, ``while 1:``): it says nothing of when."""
    return type(node) is ast.Constant and isinstance(node.value, bool | int | float) and bool(node.value)


def _not(node: ast.expr) -> ast.expr:
    return simplify(ast.UnaryOp(op=ast.Not(), operand=node))


def simplify(node: ast.expr) -> ast.expr:
    """``node`` with every ``not`` pushed as far in as it goes."""
    if type(node) is ast.BoolOp:
        return ast.BoolOp(op=node.op, values=[simplify(v) for v in node.values])
    if not (type(node) is ast.UnaryOp and type(node.op) is ast.Not):
        return node
    inner = node.operand
    if type(inner) is ast.UnaryOp and type(inner.op) is ast.Not:
        return simplify(inner.operand)
    if type(inner) is ast.Compare and len(inner.ops) == 1 and type(inner.ops[0]) in _NEGATED and not _set_order(inner):
        return ast.Compare(left=inner.left, ops=[_NEGATED[type(inner.ops[0])]()], comparators=inner.comparators)
    if type(inner) is ast.BoolOp:
        other = ast.Or() if type(inner.op) is ast.And else ast.And()
        return ast.BoolOp(op=other, values=[_not(v) for v in inner.values])
    return ast.UnaryOp(op=ast.Not(), operand=simplify(inner))


def short_code(text: str) -> str:
    """Code as a sentence quotes it: on one line, cut at ``MAX_CODE``, with no backtick of its
    own (backticks delimit the code in a sentence; pages split on them)."""
    text = " ".join(text.split()).replace("`", "'")
    return text if len(text) <= MAX_CODE else text[: MAX_CODE - 1].rstrip() + "…"


#: Where a condition may be cut: between the operands of its outermost ``and``/``or`` (``&&``/``||``
#: in native code), never inside one (a comma may sit in a C++ template's ``<...>``).
_SEPARATORS = (" && ", " || ", " and ", " or ")
_OPEN, _CLOSE = "([{", ")]}"


def whole_code(text: str) -> str:
    """Code a trigger quotes (a condition, a loop, a handler, a qualname), on one line with no
    backtick of its own, never cut inside an expression: past ``MAX_CODE`` the operands of its
    outermost ``&&``/``and`` (inside ``!(...)`` or ``(...)`` when those wrap it) that fit, then
    "…" for the rest; whole when no whole operand fits."""
    text = " ".join(text.split()).replace("`", "'")
    if len(text) <= MAX_CODE:
        return text
    head, inner, tail = "", text, ""
    for opener in ("!(", "not (", "("):
        if text.startswith(opener) and text.endswith(")") and _closes_at_end(text, len(opener) - 1):
            head, inner, tail = opener, text[len(opener) : -1], ")"
            break
    cut = None
    depth, quote, i = 0, "", 0
    while i < len(inner):
        c = inner[i]
        if quote:
            if c == "\\":
                i += 1
            elif c == quote:
                quote = ""
        elif c in "'\"":
            quote = c
        elif c in _OPEN:
            depth += 1
        elif c in _CLOSE:
            depth -= 1
        elif depth == 0:
            sep = next((x for x in _SEPARATORS if inner.startswith(x, i)), None)
            if sep is not None:
                if len(head) + i + len(sep) + 1 + len(tail) > MAX_CODE:
                    break
                cut = i + len(sep)
        i += 1
    if cut is None:
        return text
    return head + inner[:cut] + "…" + tail


def _closes_at_end(text: str, start: int) -> bool:
    """Whether the bracket at ``start`` is closed by the text's last character (``!(a) && (b)`` is not wrapped)."""
    depth = 0
    for i in range(start, len(text)):
        if text[i] in _OPEN:
            depth += 1
        elif text[i] in _CLOSE:
            depth -= 1
            if depth == 0:
                return i == len(text) - 1
    return False


def _code(node: ast.expr, names: dict[str, str]) -> str:
    text = _text(node)
    if text in names:
        return names[text]
    text = whole_code(text)
    number = node.operand if type(node) is ast.UnaryOp and type(node.op) in (ast.USub, ast.UAdd) else node
    if type(number) is ast.Constant and (number.value is None or isinstance(number.value, (bool, int, float))):
        return text
    return f"`{text}`"


def _isinstance(node: ast.expr) -> tuple[ast.expr, ast.expr] | None:
    if type(node) is ast.Call and type(node.func) is ast.Name and node.func.id == "isinstance" and len(node.args) == 2:
        return node.args[0], node.args[1]
    return None


def _loop_subject(node: ast.expr, loops: dict[str, str], names: dict[str, str]) -> str | None:
    """`a key of X` when ``node`` is the target of a loop ``for node in X``."""
    if type(node) is ast.Name and node.id in loops:
        return loops[node.id]
    return None


def words(node: ast.expr, names: dict[str, str], loops: dict[str, str] | None = None, inner_of_or: bool = False) -> str:
    """One simplified condition in words."""
    loops = loops or {}

    def subject(n: ast.expr) -> str:
        return _loop_subject(n, loops, names) or _code(n, names)

    if isinstance(node, ast.BoolOp):
        # "either"/"both" keep the grouping once the parts are joined to other conditions
        joined = [words(v, names, loops, type(node.op) is ast.Or) for v in node.values]
        if type(node.op) is ast.Or:
            return "either " + " or ".join(joined)
        return " and ".join(joined) if not inner_of_or else "both " + " and ".join(joined)
    if isinstance(node, ast.Compare) and len(node.ops) == 1:
        op = type(node.ops[0])
        if op in (ast.In, ast.NotIn) and type(node.left) is ast.Constant and isinstance(node.left.value, str):
            # a text looked for in another (`'EADDRINUSE' in str(e)`) or a key in a mapping:
            # "contains" reads right for both, where "is one of" only fits a collection
            verb = "contains" if op is ast.In else "does not contain"
            return f"{_code(node.comparators[0], names)} {verb} {_code(node.left, names)}"
        said = _SET_WORDS[op] if _set_order(node) else _WORDS[op]
        return f"{subject(node.left)} {said} {_code(node.comparators[0], names)}"
    negated = isinstance(node, ast.UnaryOp) and type(node.op) is ast.Not
    inner = node.operand if isinstance(node, ast.UnaryOp) and negated else node
    check = _isinstance(inner)
    if check is not None:
        return f"{subject(check[0])} is {'not ' if negated else ''}a {_code(check[1], names)}"
    if type(inner) in (ast.Name, ast.Attribute) or _text(inner) in names:
        return f"{subject(inner)} is {'not set' if negated else 'set'}"
    return f"{_code(inner, names)} is {'false' if negated else 'true'}"


def _parse(text: str, mode: str) -> ast.AST | None:
    # Warnings about the crawled code (an invalid escape in a guard) are not ours: under
    # ``-W error`` they would turn a guard that parses into one that does not.
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            return ast.parse(text, mode=mode)
        except (SyntaxError, ValueError, RecursionError, MemoryError):
            return None


#: Guards and loops kept parsed: the trigger and the fix read the same guard, a function's sites
#: share its guards and loops, and a caller's guards are read for each site it calls (vLLM:
#: about 10k distinct guards, which a smaller cache evicted before they came round again).
PARSED = 65536


@lru_cache(maxsize=PARSED)  # (the tree is only read)
def parse_guard(text: str) -> ast.expr | None:
    text = text.strip()
    # a condition that spans lines inside the ``if``'s own parentheses needs them back
    tree = _parse(text, "eval") or (_parse(f"({text}\n)", "eval") if "\n" in text else None)
    return simplify(tree.body) if isinstance(tree, ast.Expression) else None


@lru_cache(maxsize=PARSED)  # (the tree is only read)
def _parse_loop(loop: str) -> ast.For | ast.AsyncFor | None:
    if not loop.startswith("for "):
        return None
    tree = _parse(loop + ": pass", "exec")
    if not isinstance(tree, ast.Module) or not isinstance(tree.body[0], ast.For | ast.AsyncFor):
        return None
    return tree.body[0]


def _loop_names(loops: list[str], names: dict[str, str]) -> dict[str, str]:
    """Loop target name -> how a sentence names one item (``a key of `X```)."""
    found: dict[str, str] = {}
    for loop in loops:
        node = _parse_loop(loop)
        if node is None:
            continue
        it = node.iter
        mapping = (
            it.func.value if isinstance(it, ast.Call) and isinstance(it.func, ast.Attribute) and it.func.attr == "items" and not it.args else None
        )  # ``for k, v in X.items()``
        items = mapping is not None
        source = _code(mapping if mapping is not None else it, names)
        if type(node.target) is ast.Name:
            found[node.target.id] = f"an item of {source}" if not items else f"an entry of {source}"
        elif items and type(node.target) is ast.Tuple and len(node.target.elts) == 2:
            key, value = node.target.elts
            if type(key) is ast.Name:
                found[key.id] = f"a key of {source}"
            if type(value) is ast.Name:
                found[value.id] = f"a value of {source}"
    return found


def conditions(guards: list[str], names: dict[str, str], loops: list[str]) -> str:
    """The guards, innermost last, in words, joined by "and"; the outermost dropped past
    ``MAX_CONDITIONS``."""
    item_names = _loop_names(loops, names)
    said = []
    for guard in guards:
        if guard.startswith(SWITCH_DEFAULT):  # (a default: whose cases macros write: see ``extract.native``)
            said.append(f"`{whole_code(guard[len(SWITCH_DEFAULT) :])}` is none of the values its `switch` has a case for")
            continue
        if guard.startswith(CLOSURE_OF):  # (a native walker's closure: see ``extract.native``)
            said.append(f"`{whole_code(guard[len(CLOSURE_OF) :])}` calls the closure it is given")
            continue
        node = parse_guard(guard)
        if constant_true(node):  # (``while True:``: always)
            continue
        said.append(words(node, names, item_names) if node is not None else f"`{whole_code(guard)}`")
    said = list(dict.fromkeys(said))
    extra = len(said) > MAX_CONDITIONS
    said = said[-MAX_CONDITIONS:]
    text = " and ".join(said)
    return f"{text} (among other conditions)" if extra else text


#: A value that turns a setting off: a size or count at most this, ``None``, ``False``.
_OFF_AT_MOST = (0, 1)


def _identifier_words(text: str) -> list[str]:
    """How a message may name a setting: its last identifier (``self.parallel_config.pipeline_parallel_size``
    -> ``pipeline_parallel_size``), or a flag's or variable's name without its dashes."""
    found = re.findall(r"[A-Za-z_][A-Za-z0-9_\-]*", text)
    return [found[-1].lstrip("-").replace("-", "_").lower()] if found else []


def names_setting(message: str, subject: str, code: str) -> bool:
    """Whether the message names the setting a fix would change: by the code's name for it or by
    the sentence's (its first quoted name: `` `moe_backend` of `--kernel-config` `` -> moe_backend),
    dashes and underscores alike, as a whole word."""
    text = re.sub(r"(?<![A-Za-z0-9_])-+", " ", message).replace("-", "_").lower()  # (--a-b -> a_b)
    quoted = subject.split("`")[1] if subject.count("`") >= 2 else ""
    for word in dict.fromkeys(_identifier_words(code) + _identifier_words(quoted)):
        if word and re.search(rf"(?<![a-z0-9_]){re.escape(word)}(?![a-z0-9_])", text):
            return True
    return False


def _excludes(node: ast.expr | None, left: str) -> bool:
    """Whether a guard rules out a value of ``left`` (``left != v``, ``left not in vs``), alone or
    as a part of an ``and``: a case of an ``if``/``elif`` chain on it that did not match."""
    if type(node) is ast.BoolOp and type(node.op) is ast.And:
        return any(_excludes(v, left) for v in node.values)
    return type(node) is ast.Compare and len(node.ops) == 1 and type(node.ops[0]) in (ast.NotEq, ast.NotIn) and _text(node.left) == left


def _unset(node: ast.expr | None) -> str | None:
    """The expression a guard finds unset (``not x``, ``x is None``), or None."""
    if type(node) is ast.UnaryOp and type(node.op) is ast.Not and type(node.operand) in (ast.Name, ast.Attribute):
        return _text(node.operand)
    if (
        type(node) is ast.Compare
        and len(node.ops) == 1
        and type(node.ops[0]) is ast.Is
        and type(node.comparators[0]) is ast.Constant
        and node.comparators[0].value is None
    ):
        return _text(node.left)
    return None


def _sibling_unset(node: ast.expr | None, text: str) -> bool:
    """Whether a guard (or a part of its ``and``) finds unset another attribute of the object
    ``text`` is an attribute of (``so.grammar`` beside ``so.regex``): alternatives."""
    if type(node) is ast.BoolOp and type(node.op) is ast.And:
        return any(_sibling_unset(v, text) for v in node.values)
    other = _unset(node)
    owner = text.rpartition(".")[0]
    return other is not None and other != text and bool(owner) and other.rpartition(".")[0] == owner


#: The builtin types an ``isinstance`` check names, as a sentence can say "give X a `dict`".
_BUILTIN_TYPES = frozenset({"str", "int", "float", "bool", "dict", "list", "tuple", "set", "frozenset", "bytes"})


def _type_like(node: ast.expr) -> bool:
    """Whether ``isinstance``'s second argument reads as a type (or a tuple of types): a builtin
    or a CapWords name (``socket.socket`` too). An attribute holding a tuple of classes
    (``self.supported_quantization_configs``) makes "Give X a `self.supported_...`", no fix."""
    if type(node) is ast.Tuple:
        return bool(node.elts) and all(_type_like(e) for e in node.elts)
    name = node.id if type(node) is ast.Name else node.attr if type(node) is ast.Attribute else ""
    if type(node) is ast.Attribute and type(node.value) is ast.Name and node.value.id in ("self", "cls"):
        return False
    return name in _BUILTIN_TYPES or name[:1].isupper() or (type(node) is ast.Attribute and name == _text(node.value))


def _type_names(node: ast.expr) -> list[str]:
    """The class names an ``isinstance`` check's second argument names (``(A, b.C)``: A, C)."""
    if type(node) is ast.Tuple:
        return [n for e in node.elts for n in _type_names(e)]
    return [node.id] if type(node) is ast.Name else [node.attr] if type(node) is ast.Attribute else []


#: How a switch that turns a feature off when set is named: ``disable_x``, ``no_x``, ``skip_x``.
_INVERTED = re.compile(r"(?:disable|no|skip)_", re.IGNORECASE)


def _inverted(code: str) -> bool:
    """Whether the setting a truth test reads turns a feature off when set (its last name starts
    with ``disable_``, ``no_`` or ``skip_``): leaving it unset keeps the feature on, and it is
    setting it that switches the feature off."""
    words = _identifier_words(code)
    return bool(words) and _INVERTED.match(words[0]) is not None


def _negated_or(guard: str) -> bool:
    """Whether the guard as written is ``not (a or b ...)``: an ``assert a or b`` or an ``else``
    of ``if a or b``, which any one of the alternatives would have passed."""
    tree = _parse(guard.strip(), "eval")
    body = tree.body if isinstance(tree, ast.Expression) else None
    return type(body) is ast.UnaryOp and type(body.op) is ast.Not and type(body.operand) is ast.BoolOp and type(body.operand.op) is ast.Or


def _switches_off(op: type[ast.cmpop] | None, other: ast.expr | None) -> bool:
    """Whether the fix the negated comparison gives turns the setting off or drops the value
    chosen, rather than giving it a right one: ``x is not None`` / ``x`` -> leave it unset,
    ``x == v`` -> anything but v, ``x in vs`` -> any value but these, ``x > 0`` / ``x > 1`` /
    ``x >= 1`` -> at most 0 or 1 (the feature off: ``pipeline_parallel_size > 1`` is "uses
    pipeline parallelism")."""
    if op is None or op is ast.IsNot or op is ast.Eq or op is ast.In:
        return True
    value = other.value if type(other) is ast.Constant else None
    if type(value) is not int or type(value) is bool:
        return False
    return (op is ast.Gt and value in _OFF_AT_MOST) or (op is ast.GtE and value == 1)


def fix_for(
    guard: str,
    names: dict[str, str],
    listed: set[str] | None = None,
    loops: Sequence[str] = (),
    message: str | None = None,
    earlier: Sequence[str] = (),
    kind: str | None = None,
    internal: frozenset[str] = frozenset(),
    built: Callable[[str], bool] | None = None,
    known: Callable[[str], bool] | None = None,
) -> str | None:
    """A fix direction from the guard that leads to the raise, when its subject is a setting
    (or every item of one, in a loop over it).

    With ``message`` (the error's text), a fix that only switches the setting off or drops the
    value the user chose (see ``_switches_off``), or that picks the last of the alternatives of
    a negated ``or`` (``assert mode == COMPILE or FLAG`` is no call to set FLAG rather than the
    mode), is said only when the message names that setting: "HiSparse does not support pipeline parallelism" under
    ``pipeline_parallel_size > 1`` asks for another feature set, not for "at most 1"; "Cannot
    specify both `a` and `b`" under ``a is not None`` is about `a`. With ``earlier`` (the outer
    guards), a raise in the ``else`` of ``if x == v`` / ``if x in vs`` (the guard reads
    ``not (...)``) where an outer guard already ruled out other values of ``x`` is the end of an
    ``if``/``elif`` chain over ``x``'s cases: v is only the last case tried, not the value to set
    ("Unsupported speculative method" is no call for ``method='custom_class'``). A condition the
    code writes itself (``elif x not in (...)``) names what it accepts, and ``!= name`` asks for
    the value another setting holds: both kept.
    A raise where the innermost guard finds one attribute unset and an outer guard another of
    the same object (``elif so.grammar: ... elif so.structural_tag: ... else: raise``) is the end
    of a chain of alternatives: "Set `structural_tag`" only leads to that branch's own error, so
    it too is said only where the message names it ("a valid tensorizer_uri or tensorizer_dir
    must be provided").

    The message's vocabulary (:mod:`asks`), with ``message``: a message that asks for another
    setting and not this one ("use --disable-prefix-caching" under ``mamba_cache_mode !=
    "none"``) has its direction already; a fix would compete with it. A log (``kind``) reports
    what the code does: a fix there is said only where its message names the setting (an early
    ``return`` under a switch is no cause of a log about a missing tuning file), and one that
    switches the setting off only where the message retires it ("deprecated", "ignored", "both",
    "instead"), else it turns off a feature the user chose over a warning. ``internal``: the
    subjects that are fields of a class no user-facing config reaches (a shard plan's ``tp``):
    the code's own values, said only where the message names and explains them. ``built``:
    whether a class is the repository's own: a command line gives text, so "give `--x` a
    `QuantKey`" asks for what the code builds. ``known``: whether a name is an environment
    variable the code reads (an upper-case word the message asks for may be a value instead)."""
    found = _fix_for(guard, names, listed, loops, earlier, built)
    if found is None:
        return None
    text, subject, code, switched = found
    off = switched or _negated_or(guard)
    if off and message is not None and not names_setting(message, subject, code):
        return None
    if message is None:
        return text
    spellings = [subject.split("`")[1] if subject.count("`") >= 2 else subject, *_identifier_words(code)]
    if asks.asks_for_another(message, spellings, known):
        return None
    if text == f"leave {subject} unset" and "None" not in guard and _environment(code, known):
        # (a variable's truth: unset is its default, which may be on: ``VLLM_X`` read as "1" when
        # unset; the message's own request says the value, else only "off" is known)
        if _asks_for(message, spellings, known):
            return None
        text = f"turn {subject} off"
    if kind == LOG and not (names_setting(message, subject, code) or asks.says(message, spellings)):
        return None
    if kind == LOG and switched and text.startswith(("leave ", "turn ")) and not (asks.retires(message) or _asks_for(message, spellings, known)):
        return None
    if subject in internal and not (names_setting(message, subject, code) and asks.explains(message)):
        return None
    return text


def _environment(code: str, known: Callable[[str], bool] | None) -> bool:
    """Whether the code a truth test reads is an environment variable (``envs.X``, or a name the
    code reads from the environment)."""
    name = code.rpartition(".")[2]
    return code.startswith(("envs.", "os.environ")) or (known is not None and known(name))


def sets_itself(guard: str, code: str) -> bool:
    """Whether the code sets the value the guard's ``x != v`` would have: ``if x != "none":
    x = "none"; log(...)`` (the snippet assigns ``x = v``). A log there reports what the code
    did, and "Set x to v" asks the user for what already happens."""
    node = parse_guard(guard)
    if type(node) is not ast.Compare or len(node.ops) != 1 or type(node.ops[0]) is not ast.NotEq:
        return False
    target, value = _text(node.left), _text(node.comparators[0])
    for m in re.finditer(rf"(?m)^[^\S\n]*{re.escape(target)}[^\S\n]*=(?!=)[^\S\n]*(.*\S)[^\S\n]*$", code):
        assigned = parse_guard(m.group(1))
        if assigned is not None and _text(assigned) == value:
            return True
    return False


def _asks_for(message: str, spellings: list[str], known: Callable[[str], bool] | None) -> bool:
    """Whether a request in the message names the setting (``please set X=0``)."""
    return any(asks.says(region, spellings) for region, _ in asks.asked(message, spellings, known))


def _fix_for(
    guard: str, names: dict[str, str], listed: set[str] | None, loops: Sequence[str], earlier: Sequence[str], built: Callable[[str], bool] | None = None
) -> tuple[str, str, str, bool] | None:
    """The fix, its subject (as the sentence names it), the code it stands for, and whether it is
    said only where the message names the setting (it switches the setting off, or it is the last
    of several alternatives)."""
    items = {k: v for k, v in _loop_names(list(loops), names).items() if "`" in v and v.split("`")[1] and any(v.endswith(shown) for shown in names.values())}
    node = parse_guard(guard)
    if node is None:
        return None
    if type(node) is ast.BoolOp and type(node.op) is ast.And:
        node = node.values[-1]  # the condition the raise is most about
    if type(node) is ast.Compare and len(node.ops) == 1:
        if _set_order(node):  # (no value of a set's own is "at most" another: see _SET_WORDS)
            return None
        left = _text(node.left)
        subject = names.get(left)
        item = (items or {}).get(left)
        if subject is None and item is not None:
            subject = "every " + item.split(" ", 1)[1]  # "a key of `X`" -> "every key of `X`"
        if subject is None:
            return None
        op, other = type(node.ops[0]), node.comparators[0]
        if (
            op in (ast.NotEq, ast.NotIn)
            and type(other) is not ast.Name
            and guard.strip().startswith("not (")
            and any(_excludes(parse_guard(g), left) for g in earlier)
        ):
            return None  # (the last case of a chain over the subject: see fix_for)
        value = _code(other, names)
        off = _switches_off(op, other)
        if op is ast.Is and type(other) is ast.Constant and other.value is None:
            return f"set {subject}", subject, left, any(_sibling_unset(parse_guard(g), left) for g in earlier)
        if op is ast.IsNot and type(other) is ast.Constant and other.value is None:
            return f"leave {subject} unset", subject, left, True
        if op is ast.NotIn:
            if listed and _text(other) in listed:
                return f"set {subject} to one of the values the message lists", subject, left, off
            return f"set {subject} to one of {value}", subject, left, off
        said = {
            ast.Gt: f"set {subject} to at most {value}",
            ast.GtE: f"set {subject} to less than {value}",
            ast.Lt: f"set {subject} to at least {value}",
            ast.LtE: f"set {subject} to more than {value}",
            ast.Eq: f"set {subject} to something other than {value}",
            ast.NotEq: f"set {subject} to {value}",
            ast.In: f"set {subject} to a value not in {value}",
        }.get(op)
        return (said, subject, left, off) if said is not None else None
    negated = isinstance(node, ast.UnaryOp) and type(node.op) is ast.Not
    inner = node.operand if isinstance(node, ast.UnaryOp) and negated else node
    check = _isinstance(inner)
    if check is not None:
        subject = names.get(_text(check[0]))
        if subject is None or not negated or not _type_like(check[1]):
            return None
        if built is not None and "`--" in subject and any(built(t) for t in _type_names(check[1])):
            return None  # (an option's value is text: the object is what the code builds of it)
        return f"give {subject} a {_code(check[1], names)}", subject, _text(check[0]), False
    subject = names.get(_text(inner))
    if subject is None:
        return None
    code = _text(inner)
    inverted = _inverted(code)  # ("Leave `--disable-x` unset" turns x on; "Set `--disable-x`" turns it off)
    if negated:  # (the last of a chain of alternatives only where the message names it: see fix_for)
        return f"set {subject}", subject, code, inverted or any(_sibling_unset(parse_guard(g), code) for g in earlier)
    return f"leave {subject} unset", subject, code, not inverted
