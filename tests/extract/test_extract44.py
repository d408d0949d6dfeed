"""The extraction's per-node shortcuts of round 44 (#36) give what the code they replaced gave:
``codefacts.child_nodes`` in place of ``ast.iter_child_nodes`` where a reader wants a node's
expressions (``knob_passes.sources``, ``guard_reads``' trace) or looks for a call, a name or a
raise (the handler readers of ``visitor``), and ``knob_passes.changed_in_place`` with its test
written out. Each is held to the replaced code, kept here as the reference, on a fixture of every
expression form and on every module of the extract stage."""

from __future__ import annotations

import ast
import textwrap
from pathlib import Path

import pytest

from crawler.extract import knob_passes, visitor
from crawler.extract.codefacts import child_nodes, function_statements, nodes_under
from crawler.extract.guard_reads import FunctionText, trace
from crawler.extract.knob_flow import ACCESSORS

#: Every kind of expression (and the statements that hold them), with the leaves ``child_nodes``
#: leaves out: contexts, operators, comparison operators, a conversion, a ``**`` key of ``None``.
EXPRESSIONS = textwrap.dedent("""
    def every(a, b, *c, d=1, **e):
        x = a + b * -c[0] if not a and b or d else {**e, "k": [1, *c], "s": {a, b}}
        y = (lambda z: z)(a) < b <= d is not None in e != 3
        z = f"{a!r:>{b}} {d=}" + [i for i in c if i] [0] + {k: v for k, v in e.items()}
        w = (yield a), (n := b), a[1:b:2], ~a, a @ b, a // b, a ** b, a >> b
        del x[0], y.attr
        assert a, f"{b}"
        for i, (j, *k) in enumerate(c):
            x[i] = j.append(k)
        with open(a) as (f, g):
            self.state.update(f)
        try:
            raise ValueError(a) from b
        except (TypeError, KeyError) as err:
            logger.exception("x %s", err)
            failure = err
        match a:
            case [1, *rest] if rest:
                pass
            case {"k": v, **kw}:
                pass
            case Point(x=0) | None:
                pass
        return {i async for i in c}
""")


def _trees() -> list[ast.Module]:
    paths = sorted(Path(knob_passes.__file__).parent.glob("*.py"))  # (the extract stage's modules: the forms it is written in)
    return [ast.parse(EXPRESSIONS), *(ast.parse(p.read_text(encoding="utf-8")) for p in paths)]


@pytest.fixture(scope="module")
def trees() -> list[ast.Module]:
    return _trees()


@pytest.mark.slow
def test_a_nodes_expressions_from_child_nodes_are_iter_child_nodes_in_its_order(trees):
    """``sources`` and the trace read a node's children that are expressions: the same ones, in
    the same order, as ``iter_child_nodes`` gives (the leaves left out are never expressions)."""
    seen = 0
    for tree in trees:
        for node in ast.walk(tree):
            want = [c for c in ast.iter_child_nodes(node) if isinstance(c, ast.expr)]
            got = [c for c in child_nodes(node) if isinstance(c, ast.expr)]
            assert got == want, ast.dump(node)[:200]
            seen += 1
    assert seen > 50_000  # (the modules were read, not only the fixture)


def _old_search(body: list[ast.stmt], hit, skip=lambda node: False) -> bool:
    todo: list[ast.AST] = list(body)
    while todo:
        node = todo.pop()
        if skip(node):
            continue
        if hit(node):
            return True
        todo.extend(ast.iter_child_nodes(node))
    return False


@pytest.mark.slow
def test_the_handler_readers_answer_as_with_iter_child_nodes(trees):
    """Whether a handler passes its exception on, prints it or raises: every ``except`` of the
    fixture and the package, read both ways (and the whole bodies of their functions, which hold
    more of each)."""
    bodies: list[tuple[list[ast.stmt], str]] = []
    for tree in trees:
        for node in ast.walk(tree):
            if isinstance(node, ast.ExceptHandler):
                bodies.append((node.body, node.name or "e"))
            elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                bodies.append((node.body, node.args.args[0].arg if node.args.args else "self"))
    answers = {True: 0, False: 0}
    definitions = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda)
    for body, name in bodies:
        raises = _old_search(body, lambda n: type(n) is ast.Raise, lambda n: type(n) in definitions)
        assert visitor._raises(body) is raises
        logged = lambda n: type(n) is ast.Call and type(n.func) is ast.Attribute and n.func.attr in visitor._LOG_METHODS  # noqa: E731
        assert visitor._passes_on(body, name) is _old_search(body, lambda n, name=name: type(n) is ast.Name and n.id == name, logged)
        printed = _old_search(
            body,
            lambda n: (
                type(n) is ast.Call
                and (
                    visitor._last_name(n.func) in ("exception", "print_exc", "print_exception", "format_exc")
                    or any(k.arg == "exc_info" and not (type(k.value) is ast.Constant and k.value.value in (False, None)) for k in n.keywords)
                )
            ),
        )
        assert visitor._prints(body) is printed
        answers[raises] += 1
    assert answers[True] > 10 and answers[False] > 100  # (both answers were put to the test)


def _old_changed_in_place(calls: knob_passes.Calls, root: str | None = None) -> set[str]:
    out: set[str] = set()

    def named(node: ast.AST) -> str | None:
        if root is None:
            return node.id if type(node) is ast.Name else None
        return node.attr if type(node) is ast.Attribute and type(node.value) is ast.Name and node.value.id == root else None

    for stmt, made in calls:
        for call in made:
            func = call.func
            if type(func) is ast.Attribute and func.attr not in ACCESSORS:
                found = named(func.value)
                if found:
                    out.add(found)
        if type(stmt) in (ast.Assign, ast.AugAssign, ast.AnnAssign):
            for target in stmt.targets if type(stmt) is ast.Assign else [stmt.target]:
                if isinstance(target, (ast.Subscript, ast.Attribute)):
                    found = named(target.value)
                    if found:
                        out.add(found)
    return out


@pytest.mark.slow
def test_changed_in_place_finds_what_it_found_before(trees):
    """The names and ``self``'s attributes each function changes in place, for every function of
    the fixture and the package, as the test written with a closure found them."""
    changed = 0
    for tree in trees:
        for node in ast.walk(tree):
            if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                continue
            calls = knob_passes.calls_of(function_statements(node, cases=True))
            for root in (None, "self"):
                want = _old_changed_in_place(calls, root)
                assert knob_passes.changed_in_place(calls, root) == want, (node.name, root)
                changed += bool(want)
    assert changed > 100


def test_the_trace_reads_through_every_expression_form():
    """A condition made of the forms the trace reads by their children (a comparison, a boolean
    operation, a subscript's value, arithmetic, an ``if`` expression, a tuple) finds each source;
    a comprehension or a lambda in it is ``other``, not looked into."""
    code = textwrap.dedent("""
        def check(self, n, request, cfg):
            limit = self.cache_config.block_size
            if (n + 1 > limit if request.max_tokens else -n) or (cfg.x, [k for k in n]) == (lambda: n)():
                raise ValueError(n)
    """)
    text = FunctionText(code, 1)
    condition = "(n + 1 > limit if request.max_tokens else -n) or (cfg.x, [k for k in n]) == (lambda: n)()"
    found = trace(text, 5, condition)
    assert found["param"] == ["cfg", "n"]  # (a chain on a parameter is shown by its root)
    assert found["config"] == ["self.cache_config.block_size"]
    assert found["request"] == ["request.max_tokens"]
    assert found["other"] == ["(lambda: n)()", "[k for k in n]"]


def test_sources_of_an_expression_are_those_of_its_parts():
    """``sources`` of a node read by its children (arithmetic, a comparison, a tuple, an ``if``
    expression, an f-string): the union of its parts', a constant among others dropped."""
    tree = ast.parse(
        textwrap.dedent("""
            def f(self, n, request, *, scale=2):
                m = n * 2
                g((m + 1, request.top_k), -scale if n else 3, f"{n}-{request.seed}", n < 4 < scale, [1, 2])
        """)
    )
    given = knob_passes.passes(tree, ast.unparse(tree))["given"]
    assert [row["args"] for row in given] == [["p:n,r:request.top_k", "p:n,p:scale", "p:n,r:request.seed", "p:n,p:scale", "c"]]


@pytest.mark.slow
def test_a_simple_statements_calls_are_its_values_where_passes_takes_them_so(trees):
    """``passes`` takes a statement's calls from the walk (``calls_of``) where they are its
    value's (``_value_only``): for every such statement of the fixture and the package, the same
    calls in the same order as a walk of the value finds; the others are walked again."""
    taken = again = 0
    for tree in trees:
        for node in ast.walk(tree):
            if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                continue
            for stmt, made in knob_passes.calls_of(function_statements(node, cases=True)):
                value = getattr(stmt, "value", None)
                if type(stmt) not in knob_passes._SIMPLE or value is None:
                    continue
                if knob_passes._value_only(stmt):
                    assert made == nodes_under(value, ast.Call), ast.unparse(stmt)
                    taken += 1
                else:
                    again += 1
    assert taken > 1000 and again > 10


def test_an_assignment_to_an_entry_or_an_annotated_one_is_read_again():
    tree = ast.parse("x[f()] = g()\ny: h(1) = g()\nz = g()\nz += g()\nreturn g()\ng()\na.b = g()\n", mode="exec", feature_version=(3, 11))
    assert [knob_passes._value_only(stmt) for stmt in tree.body] == [False, False, True, True, True, True, False]
