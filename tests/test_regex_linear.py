"""Every regular expression the judging modules try on hostile text (a crawled message, a crawled
source line, a function's code, a user's paste) is linear in that text: a checker over the
modules' own patterns.

The patterns are found, not listed: every compiled pattern a module holds (at its top level, or in
a tuple, list or dict there) and every pattern literal its code passes to ``re`` (an f-string's
pieces filled with a name, or with the module's own value where the piece names one). Each is run
as the module calls it (``finditer``, every start a search tries; at the start alone for a name
the module only ever ``match``es or ``fullmatch``es) on adversarial texts: a run of one piece (a space, ``=``,
``(``, a quote, a word, ``a_``, each word the pattern itself spells, ...) then an end that fails it.
A pattern passes when the long text costs it nothing worth measuring, or costs at most a generous
multiple of its cost on a text an eighth as long: linear is 8 times, quadratic 64, cubic 512."""

from __future__ import annotations

import ast
import importlib
import inspect
import re
import time
import warnings
from types import ModuleType

import pytest

with warnings.catch_warnings():  # the parser re uses, under its old public name (3.11 deprecates it)
    warnings.simplefilter("ignore", DeprecationWarning)
    import sre_parse

#: The modules whose patterns read hostile text: crawled messages and code (who acts, what to
#: do, what a check reads, what callers pass), and a user's paste (errcat match's readings).
MODULES = (
    "crawler.catalogue.actions",
    "crawler.catalogue.phrasing",
    "crawler.catalogue.callers",
    "crawler.catalogue.asks",
    "crawler.catalogue.meaning",
    "crawler.extract.knob_passes",
    "crawler.extract.guard_reads",
    "crawler.consume.paste",
    "crawler.consume.match",
    "crawler.consume.meaning_page",
)

#: The long text's length (characters): a quadratic pattern costs seconds here, a linear one well
#: under a millisecond; below FLOOR seconds of CPU a text costs nothing worth a ratio.
LENGTH = 8000
FLOOR = 0.003
#: The most a text 8 times as long may cost, as a multiple of the short one's cost (linear: 8).
RATIO = 24

#: Runs of these, whatever the pattern.
PIECES = (
    " ",
    "  a",
    "1",
    "a1",
    "=",
    "(",
    ")",
    "'",
    '"',
    "`",
    "a",
    "a ",
    "a=",
    "a.",
    "a_",
    "A_",
    "_",
    ", ",
    ";",
    ":",
    "-",
    "--a",
    "\n",
    "\n ",
    " \n",
    "{",
    "a(",
    ".a",
)
#: Ends after the run: none, and characters that fail what a run began (a sentence's end, a call,
#: a line's end before more text).
ENDS = ("", ".", "(", "\n!", "!")


def _literals(pattern: str, flags: int) -> set[str]:
    """The words a pattern spells (runs of two or more literal characters), each also before a
    space: a run of a word a pattern starts on makes each start try it."""
    words: set[str] = set()

    def walk(parsed) -> None:
        run = ""
        for op, arg in parsed:
            if op is sre_parse.LITERAL:
                run += chr(arg)
                continue
            if len(run) > 1:
                words.add(run)
            run = ""
            for sub in arg if isinstance(arg, (list, tuple)) else ():
                if isinstance(sub, sre_parse.SubPattern):
                    walk(sub)
                elif isinstance(sub, (list, tuple)):
                    for inner in sub:
                        if isinstance(inner, sre_parse.SubPattern):
                            walk(inner)
        if len(run) > 1:
            words.add(run)

    try:
        walk(sre_parse.parse(pattern, flags))
    except (re.error, TypeError):
        return set()
    return words | {w + " " for w in words}


def _filled(node: ast.expr, namespace: dict) -> str | None:
    """A pattern literal's text: a string, or an f-string whose pieces are the module's own values
    where they name one (``_FIELD.pattern``) and a name otherwise (``re.escape(name)``)."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return node.value
    if not isinstance(node, ast.JoinedStr):
        return None
    parts = []
    for value in node.values:
        if isinstance(value, ast.Constant):
            parts.append(str(value.value))
            continue
        try:
            got = eval(compile(ast.Expression(value.value), "<piece>", "eval"), dict(namespace))  # our own module's names
        except Exception:  # noqa: BLE001 - a piece that is not the module's own value: a name stands for it
            got = None
        parts.append(got if isinstance(got, str) else "name")
    return "".join(parts)


def _flags(call: ast.Call, namespace: dict) -> int:
    """The flags a ``re`` call passes (positional or ``flags=``), 0 when they are not the module's own values."""
    names = {"search": 2, "match": 2, "fullmatch": 2, "findall": 2, "finditer": 2, "split": 3, "sub": 4, "subn": 4, "compile": 1}
    node = next((k.value for k in call.keywords if k.arg == "flags"), None)
    at = names.get(call.func.attr, 99) if isinstance(call.func, ast.Attribute) else 99
    if node is None and len(call.args) > at:
        node = call.args[at]
    if node is None:
        return 0
    try:
        return int(eval(compile(ast.Expression(node), "<flags>", "eval"), {"re": re}))  # a flags expression of ours
    except Exception:  # noqa: BLE001
        return 0


#: The ``re`` calls that try a pattern at the text's start only (the others try every position).
ANCHORED = {"match", "fullmatch"}


def _calls(tree: ast.AST) -> dict[str, set[str]]:
    """How a module's code calls each of its pattern names (``_NAME.search(``: search)."""
    calls: dict[str, set[str]] = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
            held = node.func.value
            name = held.id if isinstance(held, ast.Name) else held.attr if isinstance(held, ast.Attribute) else None
            if name:
                calls.setdefault(name, set()).add(node.func.attr)
    return calls


def module_patterns(module: ModuleType) -> dict[str, tuple[re.Pattern, bool]]:
    """Every pattern a module holds or passes to ``re``, by where it is, each with whether the
    module only ever tries it at a text's start (``match``, ``fullmatch``)."""
    tree = ast.parse(inspect.getsource(module))
    calls = _calls(tree)
    found: dict[str, tuple[re.Pattern, bool]] = {}
    seen: set[tuple[str, int]] = set()
    for name, value in vars(module).items():
        held = value.values() if isinstance(value, dict) else value if isinstance(value, (tuple, list, set, frozenset)) else (value,)
        for i, item in enumerate(held):
            if isinstance(item, re.Pattern) and isinstance(item.pattern, str):
                anchored = item is value and bool(calls.get(name)) and calls[name] <= ANCHORED
                found[f"{module.__name__}.{name}" + (f"[{i}]" if item is not value else "")] = (item, anchored)
                seen.add((item.pattern, item.flags))
    namespace = vars(module)
    for node in ast.walk(tree):
        if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and isinstance(node.func.value, ast.Name)):
            continue
        if node.func.value.id != "re" or node.func.attr == "escape" or not node.args:
            continue
        text = _filled(node.args[0], namespace)
        if text is None:
            continue
        try:
            pattern = re.compile(text, _flags(node, namespace))
        except re.error:
            continue
        if (pattern.pattern, pattern.flags) not in seen:
            seen.add((pattern.pattern, pattern.flags))
            found[f"{module.__name__}:{node.lineno}"] = (pattern, node.func.attr in ANCHORED)
    return found


PATTERNS = {key: p for m in MODULES for key, p in module_patterns(importlib.import_module(m)).items()}


def _cost(pattern: re.Pattern, text: str, anchored: bool = False) -> float:
    start = time.process_time()
    if anchored:
        pattern.match(text)
        pattern.fullmatch(text)
    else:
        for _ in pattern.finditer(text):
            pass
    return time.process_time() - start


def texts(pattern: re.Pattern) -> list[tuple[str, str]]:
    """The adversarial texts of a pattern: (a piece to repeat, an end)."""
    return [(piece, end) for piece in sorted(set(PIECES) | _literals(pattern.pattern, pattern.flags)) for end in ENDS]


def _text(piece: str, end: str, length: int) -> str:
    return piece * max(1, length // len(piece)) + end


def superlinear(pattern: re.Pattern, anchored: bool = False, most: int = 1) -> list[str]:
    """The texts on which a pattern costs more than linear (the first ``most``): each with its two
    costs; ``anchored``: tried at the text's start only, as ``match`` and ``fullmatch`` try it."""
    slow: list[str] = []
    for piece, end in texts(pattern):
        if len(slow) >= most:
            break
        text = _text(piece, end, LENGTH)
        long_cost = _cost(pattern, text, anchored)
        if long_cost < FLOOR:
            continue
        long_cost = min(long_cost, _cost(pattern, text, anchored))
        short_cost = max(min(_cost(pattern, _text(piece, end, LENGTH // 8), anchored) for _ in range(3)), 1e-6)
        if long_cost / short_cost > RATIO:
            # (measured again before it is called slow: a pause of the process, a collection or
            # another job on the core, inflates one measure; a quadratic pattern stays slow every time)
            long_cost = min(long_cost, *(_cost(pattern, text, anchored) for _ in range(5)))
            short_cost = max(min(short_cost, *(_cost(pattern, _text(piece, end, LENGTH // 8), anchored) for _ in range(5))), 1e-6)
        if long_cost / short_cost > RATIO:
            slow.append(f"{piece!r} x{LENGTH // len(piece)} + {end!r}: {long_cost:.4f}s, an eighth of it {short_cost:.5f}s")
    return slow


def test_the_checker_finds_the_modules_patterns_and_a_quadratic_one():
    """The checker finds the patterns (compiled at the top level and inline, f-strings too), and
    it fails a pattern quadratic on a run of spaces (round 41's ``_INTRO`` shape) and passes its linear twin."""
    assert len(PATTERNS) > 150
    assert any(":" in k.split(".")[-1] for k in PATTERNS)
    assert any(anchored for _, anchored in PATTERNS.values()) and not all(anchored for _, anchored in PATTERNS.values())
    assert superlinear(re.compile(r"(?:^|\s+(?:or|and)\s+)(?=\S)"))
    assert not superlinear(re.compile(r"(?:^|(?<!\s)\s+(?:or|and)\s+)(?=\S)"))


@pytest.mark.slow
@pytest.mark.parametrize("key", sorted(PATTERNS))
def test_a_pattern_is_linear_in_hostile_text(key):
    """Each pattern of the modules, on every adversarial text: its cost grows as the text's length."""
    pattern, anchored = PATTERNS[key]
    assert not superlinear(pattern, anchored), (key, pattern.pattern, superlinear(pattern, anchored))
