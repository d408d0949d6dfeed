"""The call graph's own walk (codefacts.nodes_under) finds what ``ast.walk`` finds, in its order:
the per-file call facts, and so the callers and reproductions, must not depend on which walk
found them."""

from __future__ import annotations

import ast
import sys
import textwrap
from pathlib import Path

import pytest

from crawler.extract import codefacts
from crawler.extract.ast_names import dotted
from crawler.extract.codefacts import graph_facts, nodes_under

CODE = textwrap.dedent("""
    import os, pkg.mod as m
    from . import sibling

    @decorate(make(1))
    class Thing(Base(arg()), metaclass=meta()):
        x: int = field(default=f())

        async def run(self, a=default(), *args, b: hint() = 2, **kw):
            async with open_it() as (h, [j, *rest]):
                self.x, d[k()] = h.read(), j
            total = sum(g(v) for v in items() if ok(v)) + [y() for y in z()][0]
            fn = lambda q=w(): q.call(inner(q))
            print(f"{fmt(total)!r:>{width()}}", sep=sep())
            while (n := nxt()) is not None:
                m.step(n)
            try:
                risky()
            except (E1, E2) as err:
                handle(err)
            else:
                done()
            finally:
                close()
            return await later(x=kw["a"](), y=args[slice_of()]) or os.path.join(*parts())
    """)
MATCH = textwrap.dedent("""
    def f(cmd):
        match parse(cmd):
            case Point(x=0, y=y) if check(y):
                go(y)
            case [first, *others]:
                stop(first)
            case {"k": value, **rest}:
                other(value)
    """)


@pytest.mark.parametrize("code", [CODE, MATCH])
@pytest.mark.parametrize("kind", [ast.Call, ast.Name])
def test_nodes_under_finds_what_ast_walk_finds_in_its_order(code, kind):
    tree = ast.parse(code)
    expected = [node for node in ast.walk(tree) if type(node) is kind]
    assert expected and nodes_under(tree, kind) == expected
    for stmt in ast.walk(tree):  # any root, statement or expression
        assert nodes_under(stmt, kind) == [node for node in ast.walk(stmt) if type(node) is kind]


def test_graph_facts_bind_locals_and_resolve_calls_as_before():
    facts = graph_facts(ast.parse(CODE), "pkg.here", False)
    calls = {(caller, target) for caller, target, _ in facts["calls"]}
    assert ("Thing.run", "os.path.join") in calls and ("Thing.run", "pkg.mod.step") in calls
    # a name the function binds (h, j, rest, d, total, fn, n, err) shadows any import of it
    assert not any(target.startswith(("h.", "d.")) for _, target in calls)
    assert facts["classes"][0][0] == "Thing"


@pytest.mark.skipif(sys.version_info < (3, 12), reason="type parameters are Python 3.12 syntax")
def test_nodes_under_walks_type_parameters():
    tree = ast.parse("def f[T: bound()](x: T) -> T:\n    return g(x)\n")
    assert nodes_under(tree, ast.Call) == [node for node in ast.walk(tree) if type(node) is ast.Call]


class _PlainWalker(codefacts.GraphWalker):
    """The call graph's walk with each of a statement's own expressions searched by ``ast.walk``."""

    def _calls_in(self, stmt, fields):
        scope = self.stack[-1]
        for name in fields:
            value = getattr(stmt, name, None)
            roots = (
                [value]
                if isinstance(value, ast.AST)
                else [item for item in value if isinstance(item, ast.AST) and not isinstance(item, ast.stmt)]
                if type(value) is list
                else []
            )
            for expr in roots:
                for node in ast.walk(expr):
                    if type(node) is ast.Call and dotted(node.func):
                        self.pending.append((scope.qualname, self.callee(scope, dotted(node.func)), node.lineno, self.chain, scope.cls))


@pytest.mark.slow
def test_the_call_graph_finds_the_calls_ast_walk_finds_in_its_order():
    # this package's own modules and the cases above: every statement and expression kind it uses
    sources = [CODE, MATCH, *(path.read_text(encoding="utf-8") for path in sorted(Path(codefacts.__file__).parents[1].rglob("*.py")))]
    for code in sources:
        tree = ast.parse(code)
        plain = _PlainWalker("pkg.here", False)
        plain.walk(tree.body)
        assert graph_facts(tree, "pkg.here", False)["calls"] == plain.finish()[0]


#: Methods the extractor skips (no raise, no assert) and ones it walks, nested definitions, a
#: ``match`` (its cases are no function's statements for the knobs), a ``try`` with every clause,
#: statements sharing a line: the merged walk must read each as the call graph's and the knobs'
#: own walks do.
SETTINGS = textwrap.dedent("""
    import os
    from dataclasses import dataclass
    from pkg import envs

    def _verify(value, name):
        if value < 0:
            raise ValueError(f"{name} must be positive")

    @dataclass
    class Config:
        size: int = 1
        mode: str = "a"

        def check(self):
            n = self.size; m = self.mode
            _verify(self.size, "size")
            match self.mode:
                case "b":
                    inner = self.size
                    os.sep.join(inner)
            try:
                os.stat(n)
            except KeyError as err:
                os.remove(err)
            else:
                os.listdir(m)
            finally:
                os.sync()

        def quiet(self):
            level = envs.VLLM_LEVEL
            def nested():
                hidden = self.mode
                return _verify(hidden, "mode")
            return nested()

        @property
        def chosen(self):
            return self.mode

    def top(cfg: Config):
        value = cfg.size
        if value > 2:
            assert value < 9, "too big"
        return os.getenv("X")
    """)


@pytest.mark.parametrize("code", [CODE, MATCH, SETTINGS])
def test_the_extractors_walk_reads_the_graph_and_the_knobs_as_their_own_walks_do(code):
    from crawler.extract import knobs
    from crawler.extract.visitor import extract_file

    tree = ast.parse(code)
    result = extract_file("pkg/here.py", code.encode())
    assert result["status"] == "ok"
    assert result["graph"] == graph_facts(tree, "pkg.here", False)
    assert result["declarations"] == knobs.declarations(tree, code, "pkg.here", False)


def test_the_merged_walk_finds_the_settings_cases_calls_and_aliases():
    from crawler.extract.visitor import extract_file

    result = extract_file("pkg/here.py", SETTINGS.encode())
    calls = {(caller, target) for caller, target, _ in result["graph"]["calls"]}
    # in a walked method, a skipped one, a nested function, a match case and each try clause
    assert {
        ("Config.check", "pkg.here._verify"),
        ("Config.check", "os.sep.join"),
        ("Config.check", "os.stat"),
        ("Config.check", "os.remove"),
        ("Config.check", "os.listdir"),
        ("Config.check", "os.sync"),
        ("Config.quiet.<locals>.nested", "pkg.here._verify"),
        ("top", "os.getenv"),
    } <= calls
    aliases = {(a["function"], a["var"]) for a in result["declarations"]["aliases"]}
    assert ("Config.check", "n") in aliases and ("Config.check", "m") in aliases
    assert ("Config.check", "inner") not in aliases  # (a match case's statement: not read by the knobs)
    assert any(a["var"] == "level" for a in result["declarations"]["env_aliases"])


def test_a_failing_graph_handler_costs_the_file_its_graph_not_its_sites(monkeypatch):
    from crawler.extract.visitor import extract_file

    def broken(self, stmt):
        raise RuntimeError("a bug in the handler")

    monkeypatch.setattr(codefacts.GraphWalker, "enter", broken)
    result = extract_file("pkg/here.py", SETTINGS.encode())
    assert result["status"] == "ok" and len(result["sites"]) == 2
    assert result["graph"] == codefacts.empty_graph()


#: Calls whose "(" stands where a one-line expression's columns may not seem to hold it: inside an
#: f-string, a parenthesized callee, a call split over lines, a subscript of a call, a string that
#: only looks like a call, tabs before the code.
PARENS = textwrap.dedent("""
    def f(self, a):
        self.x = f"{fmt(a)!r}"
        self.y = (pick)(a)
        self.z = build \\
            (a)
        self.w[key()] = a.b.c
        self.v = "no(call)"
        self.u, (q, r) = first(), (a, a)
        with opened() as h, self.lock: pass
        if a.b and self.c[0]:
        \tgo(a)
        return [v for v in a if v.ok()]
    """)


def _pending(code: str) -> list[tuple[str, object, int]]:
    walker = codefacts.GraphWalker("pkg.here", False)
    walker.walk(ast.parse(code).body)
    return [(caller, written, line) for caller, written, line, _, _ in walker.pending]


def test_the_graph_finds_every_call_of_a_functions_statements_one_line_expressions_with_no_paren_too():
    # (the walk once skipped a one-line expression whose text held no "("; it now reads every
    # expression, for the names the file calls and takes, so no call can be missed that way)
    found = _pending(PARENS)
    written = sorted(dotted(n.func) for n in ast.walk(ast.parse(PARENS)) if type(n) is ast.Call and dotted(n.func))
    # every call of a function's statements (not a decorator's or a default's: no function's own)
    assert sorted(w for _, w, _ in found) == written == ["build", "first", "fmt", "go", "key", "opened", "pick", "v.ok"]


def _walked(code: str) -> codefacts.GraphWalker:
    walker = codefacts.GraphWalker("pkg.here", False)
    walker.walk(ast.parse(code).body)
    return walker


@pytest.mark.parametrize("code", [CODE, MATCH, SETTINGS])
def test_the_walk_reads_the_names_the_file_calls_and_takes_as_a_walk_of_the_whole_tree_does(code):
    # decorators, defaults, bases and keywords, an except's classes, a case's pattern and guard,
    # lambdas and comprehensions: every name but an annotation's, read once, as names_called reads them
    walker = _walked(code)
    assert (walker.called, walker.taken) == codefacts.names_called(ast.parse(code))
    assert walker.called and walker.taken


def test_a_name_only_an_annotation_holds_is_not_taken_nor_called_and_a_call_there_is_still_the_functions():
    walker = _walked("def f(a: Hint = dflt) -> Ret:\n    x: Ann[mk()] = val\n    cb: Kind\n    return x\n")
    assert walker.taken == {"dflt", "x", "val", "cb"} and walker.called == {}
    assert [w for _, w, _, _, _ in walker.pending] == ["mk"]


@pytest.mark.slow
def test_the_walk_reads_the_names_and_each_statements_calls_in_this_package_as_the_knobs_own_walks_do():
    from crawler.extract.knob_passes import calls_of

    for path in sorted(Path(codefacts.__file__).parents[1].rglob("*.py")):
        code = path.read_text(encoding="utf-8")
        tree = ast.parse(code)
        walker = codefacts.GraphWalker("pkg.here", False)
        walker.walk(tree.body)
        assert (walker.called, walker.taken) == codefacts.names_called(tree), path
        for fn in ast.walk(tree):
            if isinstance(fn, ast.FunctionDef | ast.AsyncFunctionDef):
                statements = codefacts.function_statements(fn, cases=True)
                assert calls_of(statements, walker.made) == calls_of(statements), (path, fn.name)
