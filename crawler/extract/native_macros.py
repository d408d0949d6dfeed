"""Check macros an upstream defines in terms of known ones, read from its own ``#define``\\s.

Native code wraps torch's checks in macros of its own: ``#define CHECK_CPU(x) TORCH_CHECK(
x.device().type() == at::kCPU, #x " must be a CPU tensor")``, ``#define CHECK_INPUT(x)
CHECK_CPU(x); CHECK_CONTIGUOUS(x)``, vLLM's ``STD_TORCH_CHECK_NOT_IMPLEMENTED(cond, ...)``. The
message of such a check is made where the macro is used (``CHECK_CPU(query)`` says "query must be
a CPU tensor"), so each use is a site: the macro's body with the use's arguments put in, as the
preprocessor does, parsed and read like any check (what it surfaces as is the inner check's).

- **Definitions** are the ``preproc_function_def`` nodes tree-sitter finds; a body is split into
  preprocessing tokens (strings, identifiers, numbers, punctuators; a scanner, as the C standard
  defines them, not a pattern over the text) to put arguments in: ``#x`` becomes the argument's
  spelling as a string literal, ``x`` the argument, ``__VA_ARGS__`` the rest.
- **A wrapper** is a macro whose body is nothing but calls of check macros (torch's, or wrappers
  themselves, found until nothing changes), optionally in ``do { ... } while (0)`` or braces. A
  body that does more (a dispatch ``switch`` with a check in its ``default:``) is no wrapper: its
  checks are sites where they are written, as before.
- **Which definitions a file sees**: its own, then those of the native trees' headers
  (``.h .hpp .cuh .hh .inl``), which a crawl reads first (``header_macros``). A name two headers
  define differently is left out: which one a file includes is not read, and errcat claims no
  message it cannot see. No upstream's macro is named here.
- **An exiting macro** is one whose body prints (``printf``, ``fprintf``, ``std::cerr <<``) and
  then ends the process (``exit``, ``abort``): ``#define CUDACHECK(cmd) do { ... printf("Failed:
  Cuda error %s:%d '%s'\\n", __FILE__, __LINE__, ...); exit(EXIT_FAILURE); ... } while (0)``. It is
  a check of its own (a wrapper may wrap it), and each use is a site whose message is what it
  prints (``native._Cpp.printed``).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from typing import Any

#: Suffixes of the headers whose macros every native file of the upstream sees.
HEADERS = (".h", ".hpp", ".cuh", ".hh", ".inl")
#: Expansions within expansions (``CHECK_INPUT`` -> ``CHECK_CPU`` -> ``TORCH_CHECK``) and per file
#: (vLLM v0.33.0's most is 46 in a file; 5,000 let a file of 400 bytes, a wrapper using another
#: four times eight deep, take 0.8 s of CPU).
MAX_DEPTH = 8
MAX_EXPANSIONS = 1_000
#: Rounds of reading headers (``header_macros``): a wrapper that takes d expansions to reach a
#: check is found by round d + 1, a header defining it otherwise by d + 2, and no use expands one
#: deeper than MAX_DEPTH. A chain of headers each wrapping the last's macro took a round a header.
MAX_ROUNDS = MAX_DEPTH + 2
#: Characters of one expansion: a wrapper that repeats its argument, used in one that repeats
#: it again, grows as a power of the depth; past this the use is no site (a real check is short).
MAX_TEXT = 16_384
#: Characters of all the expansions of one file: each is parsed and walked, and one of MAX_TEXT
#: may hold hundreds of checks (a 40 KB file using such a wrapper 5,000 times made 700,000 sites
#: in 164 s of CPU). vLLM v0.33.0's most is 4,572 characters in a file.
MAX_FILE_TEXT = 262_144

#: A macro: (name, parameters (``...`` last when variadic), body tokens as (text, space before)).
Macro = tuple[str, tuple[str, ...], tuple[tuple[str, bool], ...]]

_PUNCT3 = ("...", "<<=", ">>=", "->*")
_PUNCT2 = ("##", "::", "->", "++", "--", "<<", ">>", "<=", ">=", "==", "!=", "&&", "||", "+=", "-=", "*=", "/=", "%=", "&=", "|=", "^=", ".*")
#: What an exiting macro's body calls to print its message and then to end the process.
PRINTS = frozenset({"printf", "fprintf", "cerr"})
EXITS = frozenset({"exit", "abort", "_exit", "_Exit", "quick_exit"})
_PUNCT3_SET = frozenset(_PUNCT3)  # (a set lookup per punctuator: trying each with startswith was most of the tokenizer)
_PUNCT2_SET = frozenset(_PUNCT2)


def tokens(text: str) -> list[tuple[str, bool]]:
    """Preprocessing tokens of a macro body (comments dropped), each with whether space preceded it."""
    out: list[tuple[str, bool]] = []
    i, n = 0, len(text)
    space = False
    while i < n:
        c = text[i]
        if c in " \t\r\n\f\v" or (c == "\\" and i + 1 < n and text[i + 1] in "\r\n"):
            space = True
            i += 1
            continue
        if text.startswith("//", i):
            end = text.find("\n", i)
            i = n if end < 0 else end
            space = True
            continue
        if text.startswith("/*", i):
            end = text.find("*/", i + 2)
            i = n if end < 0 else end + 2
            space = True
            continue
        start = i
        if c.isalpha() or c == "_":
            while i < n and (text[i].isalnum() or text[i] == "_"):
                i += 1
            if i < n and text[i] in "\"'" and text[start:i] in ("L", "u", "U", "u8"):
                i = _quoted(text, i)
        elif c in "\"'":
            i = _quoted(text, i)
        elif c.isdigit() or (c == "." and i + 1 < n and text[i + 1].isdigit()):
            i += 1
            while i < n and (text[i].isalnum() or text[i] in "._'" or (text[i] in "+-" and text[i - 1] in "eEpP")):
                i += 1
        else:
            i += 3 if text[i : i + 3] in _PUNCT3_SET else 2 if text[i : i + 2] in _PUNCT2_SET else 1
        out.append((text[start:i], space))
        space = False
    return out


def _quoted(text: str, i: int) -> int:
    quote, i = text[i], i + 1
    while i < len(text) and text[i] != quote and text[i] not in "\r\n":
        i += 2 if text[i] == "\\" else 1
    return min(i + 1, len(text))


def definitions(root: Any, language: Any) -> list[Macro]:
    """The function-like macros a parsed file defines, in order (tree-sitter's
    ``preproc_function_def``, found by a query: the walk of the tree is the extractor's own)."""
    import tree_sitter

    query = _query(language)
    out: list[Macro] = []
    for node in sorted(tree_sitter.QueryCursor(query).captures(root).get("d", []), key=lambda n: n.start_byte):
        name, params, value = (node.child_by_field_name(f) for f in ("name", "parameters", "value"))
        if name is not None and params is not None and value is not None:
            names = tuple(_text(p) for p in params.children if p.type in ("identifier", "..."))
            out.append((_text(name), names, tuple(tokens(_text(value)))))
    return out


def _text(node: Any) -> str:
    return (node.text or b"").decode("utf-8", "replace")


_QUERIES: dict[Any, Any] = {}


def _query(language: Any) -> Any:
    import tree_sitter

    key = language.name
    if key not in _QUERIES:
        _QUERIES[key] = tree_sitter.Query(language, "(preproc_function_def) @d")
    return _QUERIES[key]


def _calls(body: tuple[tuple[str, bool], ...]) -> list[str] | None:
    """The macros a body does nothing but call (``A(...); B(...)``, in ``do {} while (0)`` or
    braces), or None when it does anything else."""
    toks = [t for t, _ in body]
    if toks[:2] == ["do", "{"] and toks[-5:] in (["}", "while", "(", "0", ")"], ["}", "while", "(", "false", ")"]):
        toks = toks[2:-5]
    elif toks[:1] == ["{"] and toks[-1:] == ["}"]:
        toks = toks[1:-1]
    names: list[str] = []
    i = 0
    while i < len(toks):
        if toks[i] == ";":
            i += 1
            continue
        if i + 1 >= len(toks) or not (toks[i][:1].isalpha() or toks[i][:1] == "_") or toks[i + 1] != "(":
            return None
        depth, j = 0, i + 1
        while j < len(toks):
            depth += {"(": 1, ")": -1}.get(toks[j], 0)
            if depth == 0:
                break
            j += 1
        if depth:
            return None
        names.append(toks[i])
        i = j + 1
    return names or None


def exiting(body: tuple[tuple[str, bool], ...]) -> bool:
    """A body that prints and then ends the process: a call of one of :data:`PRINTS` (or a stream
    to ``cerr``), then later a call of one of :data:`EXITS` (``std::`` or not)."""
    toks = [t for t, _ in body]
    printed = False
    for i, t in enumerate(toks):
        after = toks[i + 1] if i + 1 < len(toks) else ""
        if t in PRINTS and (after == "(" or (t == "cerr" and after == "<<")):
            printed = True
        elif printed and t in EXITS and after == "(":
            return True
    return False


def wrappers(macros: Iterable[Macro], known: Iterable[str]) -> dict[str, Macro]:
    """The macros that are wrappers of known checks (or of each other), by name; an exiting macro
    (:func:`exiting`) is a check of its own."""
    return _resolve({m[0]: (m, _calls(m[2]), exiting(m[2])) for m in macros}, known)


def _resolve(candidates: Mapping[str, tuple[Macro, list[str] | None, bool]], known: Iterable[str]) -> dict[str, Macro]:
    """:func:`wrappers` of candidates whose bodies are read already: name -> (macro, the macros
    its body does nothing but call or None, whether it is exiting)."""
    checks = set(known)
    found: dict[str, Macro] = {name: m for name, (m, _, exits) in candidates.items() if name not in checks and exits}
    # each candidate waits for the names it calls that are not checks yet; a name found wakes those
    # waiting for it (a worklist: one pass over the calls, where trying every candidate until none
    # changed took a pass per link of a chain, 4 s for a file of 3,000 #defines each wrapping the next)
    waiting: dict[str, set[str]] = {}
    needed: dict[str, set[str]] = {}
    ready: list[str] = []
    for name, (_, calls, _exits) in candidates.items():
        if name in found or name in checks or not calls:
            continue
        missing = {c for c in calls if c not in checks and c not in found}
        if not missing:
            ready.append(name)
        needed[name] = missing
        for c in missing:
            waiting.setdefault(c, set()).add(name)
    while ready:
        name = ready.pop()
        if name in found:
            continue
        found[name] = candidates[name][0]
        for other in sorted(waiting.pop(name, ())):
            needed[other].discard(name)
            if not needed[other]:
                ready.append(other)
    return dict(sorted(found.items()))


def header_macros(
    files: Iterable[tuple[str, bytes]], parse: Any, known: Iterable[str], read: Callable[[str, bytes], Iterable[Macro]] | None = None
) -> tuple[Macro, ...]:
    """The wrappers the headers of the native trees define, for every native file: ``files`` are
    (path, bytes) of headers, ``parse(path, data)`` their tree-sitter (root, language); ``read``,
    when given, stands for ``definitions(*parse(path, data))`` (one that keeps them by blob). A name
    defined differently by two headers is left out. Sorted by name: part of the extraction's cache key.

    A header is parsed only when its bytes name a check or a wrapper found so far (round by
    round, :data:`MAX_ROUNDS` of them): one that names none can neither define a wrapper nor
    redefine one."""
    known = list(known)
    pending = [(path, data) for path, data in files if b"#define" in data and b"\0" not in data]
    names = set(known) | EXITS  # (an exiting macro names no check: its exit marks the header)
    seen: dict[str, Macro | None] = {}  # each name's definition, None once two differ
    analysed: dict[Macro, tuple[list[str] | None, bool]] = {}
    table: dict[str, Macro] = {}
    new = sorted(names)
    for _ in range(MAX_ROUNDS):
        # a header still pending named none of the names of earlier rounds: only this round's new
        # ones can mark it (searching all of them each round was a cube of the headers for a chain
        # of wrappers, a header each: 1,000 headers of one line took 99 s)
        words = [n.encode() for n in new]
        marked = [any(w in item[1] for w in words) for item in pending]
        take = [item for item, hit in zip(pending, marked, strict=True) if hit]
        if not take:
            return tuple(sorted(table.values()))
        pending = [item for item, hit in zip(pending, marked, strict=True) if not hit]
        for path, data in take:
            try:
                macros = list(read(path, data) if read is not None else definitions(*parse(path, data)))
            except (RecursionError, ValueError):
                continue
            for macro in macros:  # (each read once, not once a round: a chain of headers made that a square)
                seen[macro[0]] = None if macro[0] in seen and seen[macro[0]] != macro else seen.get(macro[0], macro)
                if macro not in analysed:
                    analysed[macro] = (_calls(macro[2]), exiting(macro[2]))
        table = _resolve({m[0]: (m, *analysed[m]) for m in seen.values() if m is not None}, known)
        new = sorted(set(table) - names)
        names |= set(table)
    return tuple(sorted(table.values()))


#: Marks, inside a string a use stringizes, each parameter of the ``#define`` the use is written
#: in (``CHECK_EQ(t.size(0), SIZE)`` in the body of ``#define CHECK_SHAPE(OPT, SIZE)``): the
#: preprocessor puts what that macro's user passes there, so the message shows it, and the check
#: is read as having a field there. No source text holds this character in a string a check reads.
PARAM = "\x01"


def expand(macro: Macro, arguments: list[str], outer: frozenset[str] = frozenset()) -> str | None:
    """The text a use of the macro becomes (``arguments`` as written, whitespace flattened), or
    None when the use does not fit the macro (a wrong number of arguments). ``outer``: the
    parameters of the ``#define`` the use is written in (see :data:`PARAM`)."""
    _, params, body = macro
    variadic = bool(params) and params[-1] == "..."
    fixed = params[:-1] if variadic else params
    if len(arguments) < len(fixed) or (not variadic and len(arguments) != len(fixed)):
        if not (len(fixed) == 1 and not arguments and not variadic):
            return None
        arguments = [""]
    values: dict[str, str] = dict(zip(fixed, arguments, strict=False))
    if variadic:
        values["__VA_ARGS__"] = ", ".join(arguments[len(fixed) :])
    out: list[str] = []
    i = size = 0
    while i < len(body):
        text, space = body[i]
        if text == "#" and i + 1 < len(body) and body[i + 1][0] in values:
            out.append((" " if space else "") + _stringize(values[body[i + 1][0]], outer))
            i += 2
            continue
        if text == "##":
            i += 1
            if i < len(body):
                out.append(values.get(body[i][0], body[i][0]))
                i += 1
            continue
        if text == "__VA_ARGS__" and not values.get(text) and out and out[-1].strip() == ",":
            out.pop()  # ``f(a, __VA_ARGS__)`` with no variadic arguments: no empty argument
            i += 1
            continue
        out.append((" " if space else "") + values.get(text, text))
        size += len(out[-1])
        if size > MAX_TEXT:
            return None
        i += 1
    return "".join(out)


def _stringize(argument: str, outer: frozenset[str] = frozenset()) -> str:
    if outer and any(t in outer for t, _ in tokens(argument)):
        argument = "".join((" " if space and i else "") + (PARAM + t + PARAM if t in outer else t) for i, (t, space) in enumerate(tokens(argument)))
    return '"' + argument.replace("\\", "\\\\").replace('"', '\\"') + '"'


def visible(own: list[Macro], headers: Mapping[str, Macro], known: Iterable[str]) -> dict[str, Macro]:
    """The wrappers a file sees: the headers', then its own (which may wrap the headers' and win).
    A header's macro whose name the file defines itself is not the one its uses see, as the
    preprocessor has it: ``cumem_allocator.cpp``'s ``CUDA_CHECK`` logs and goes on (no exit, no
    error entry), and a CUDA file's own ``CHECK_INPUT`` checks for a CUDA tensor where a header's
    checks for a CPU one."""
    defined = {m[0] for m in own}
    table = {name: macro for name, macro in headers.items() if name not in defined}
    table.update(wrappers(own, [*known, *table]))
    return table


def use(walker: Any, node: Any, macro: Macro, names: tuple[str, ...], scope: tuple[int, int], guards: tuple[str, ...]) -> None:
    """A use of a wrapper (``CHECK_CPU(query)``): its expansion parsed as a function body and walked
    by ``walker`` (a ``native._Cpp``), whose sites take the use's lines, function, guards and the
    wrapper's name (the outermost, when a wrapper's expansion uses another)."""
    if walker.expanded >= MAX_EXPANSIONS or walker.expanded_text >= MAX_FILE_TEXT or (walker.expansion is not None and walker.expansion[5] >= MAX_DEPTH):
        return
    arguments = node.child_by_field_name("arguments")
    values = [" ".join(_text(a).split()) for a in arguments.named_children if a.type != "comment"]
    text = expand(macro, values, walker.macro_params if walker.macro_scope is not None else frozenset())
    if text is None:
        return
    if walker.expanded_text + len(text) > MAX_FILE_TEXT:
        walker.expanded_text = MAX_FILE_TEXT  # spent: no later use is expanded to find it so again
        return
    walker.expanded += 1
    walker.expanded_text += len(text)
    tree = walker.parser.parse(b"void _(){" + text.encode("utf-8", "surrogatepass") + b";\n}")
    saved = walker.expansion, walker.row_offset
    depth = saved[0][5] + 1 if saved[0] is not None else 1
    outer = saved[0][:5] if saved[0] is not None else (walker.lines_of(node), names, scope, guards, macro[0])
    walker.expansion = (*outer, depth)
    try:
        walker.walk(tree.root_node, 0)
    finally:
        walker.expansion, walker.row_offset = saved
