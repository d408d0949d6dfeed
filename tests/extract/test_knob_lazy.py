"""The knob readers' locals are worked out only when a call's argument reads them
(``knob_passes._Context``): the facts must be those of working every binding out as it is made
(``passes(..., eager=True)``), for every form that binds a name, in every order a read can see."""

from __future__ import annotations

import ast
import textwrap
from pathlib import Path

import pytest

from crawler.extract import knob_passes

#: Every form that binds a name in a function (and some that bind none the readers follow).
BINDINGS = textwrap.dedent("""
    import os
    from pkg import envs
    LIMIT = 8


    def assigned(self, n, request, *, key=None):
        a = self.cache_config.block_size
        b: int = n * 2
        c = a
        c += 1
        g(a, b, c)
        a = request.max_tokens
        g(a, c, key=a)
        d, (e, *rest) = n, (a, b)
        g(d, e, rest)
        x = y = n
        g(x, y)
        self.z = a
        items = []
        items.append(n)
        g(items, self.z, n)


    def loops(rows, scale):
        for i, (k, v) in enumerate(rows.items()):
            g(i, k, v, scale)
        for j in scale:
            g(j)
        total = [g(r, scale) for r in rows if r]
        g({k2: g(v2) for k2, v2 in rows}, total)
        async_like = (g(w) for w in rows)
        g(async_like)


    def managers(path, mode):
        with open(path, mode) as fh, lock() as (held, _):
            g(fh, held, mode)
        while (chunk := fh.read(mode)) is not None:
            g(chunk, path)


    def scopes(n):
        global LIMIT
        LIMIT = n
        import json as n2
        from os import path as n3
        g(LIMIT, n2, n3, n)
        try:
            m = n + 1
        except ValueError as err:
            m = err
        g(m)


    def branches(n, flag):
        x = 1
        if flag:
            x = n
            g(x)
        else:
            x = envs.VLLM_USE_X
        g(x, 1)
        match n:
            case 1:
                x = flag
            case _:
                pass
        g(x, 2)


    def chain(p):
        v0 = p
        {chain}
        g(v{last}, p)


    def unread(self, n):
        never = self.model_config.hf_config.x
        also = [never for _ in range(n)]
        g(n)


    class Holder:
        def __init__(self, config, size):
            self.size = size
            self.mode = "auto"
            self.blocks = config.cache_config.num_blocks
            self.count = 0
            self.count += 1

        def use(self, extra):
            local = self.mode
            g(self.size, self.mode, self.blocks, self.count, local, extra)

        def quiet(self):
            g(1)
""")

#: A chain of locals each made of the last: longer than the depth at which the values before are swept.
LENGTH = 3 * knob_passes._DEEPEST
CODE = BINDINGS.replace("{chain}", "\n    ".join(f"v{i} = v{i - 1} + {i}" for i in range(1, LENGTH + 1))).replace("{last}", str(LENGTH))


def _both(code: str) -> tuple[dict, dict]:
    tree = ast.parse(code)
    return knob_passes.passes(tree, code), knob_passes.passes(tree, code, eager=True)


def test_the_lazy_locals_give_the_eager_facts_for_every_binding_form():
    lazy, eager = _both(CODE)
    assert lazy == eager
    rows = {(row["line"], row["callee"]): row for row in lazy["given"]}
    assert len(rows) == len(lazy["given"]) > 15


def _rows(given: dict, source_line: str) -> list[dict]:
    (line,) = [i for i, text in enumerate(CODE.splitlines(), 1) if text.strip() == source_line]
    return [row for row in given["given"] if row["line"] == line]


def _row(given: dict, source_line: str) -> dict:
    (row,) = _rows(given, source_line)
    return row


def test_a_read_sees_the_bindings_made_before_it_and_only_those():
    lazy, _ = _both(CODE)
    # (``a`` is the setting, then either it or the request's field: a local holds every value it
    # was assigned so far, not those assigned after the read; ``c`` was augmented in between: unknown)
    assert _row(lazy, "g(a, b, c)")["args"] == ["s:self.cache_config.block_size", "p:n", "?"]
    assert _row(lazy, "g(a, c, key=a)")["args"] == ["r:request.max_tokens,s:self.cache_config.block_size", "?"]
    # (what a tuple unpacks, what a chained assignment binds: unknown, so the calls give nothing known)
    assert _rows(lazy, "g(d, e, rest)") == _rows(lazy, "g(x, y)") == []
    # (a branch's value or the other's, the constant dropped beside them; a ``case``'s too, after it)
    assert _row(lazy, "g(x)")["args"] == ["p:n"]
    assert _row(lazy, "g(x, 1)")["args"] == ["p:n,s:envs.VLLM_USE_X", "c"]
    assert _row(lazy, "g(x, 2)")["args"] == ["p:flag,p:n,s:envs.VLLM_USE_X", "c"]
    # (a loop's names hold what it goes over; a local changed in place, what is unknown)
    assert _row(lazy, "g(j)")["args"] == ["p:scale"]
    assert _row(lazy, "g(items, self.z, n)")["args"] == ["?", "?", "p:n"]
    # (a parameter stored, the class's own constant state, a setting stored, a counter it changes;
    # a local holding that state; the method's parameter)
    assert _row(lazy, "g(self.size, self.mode, self.blocks, self.count, local, extra)")["args"] == [
        "?",
        "t",
        "s:config.cache_config.num_blocks",
        "?,t",
        "t",
        "p:extra",
    ]


def test_a_long_chain_of_locals_is_read_to_its_end_without_deep_recursion():
    lazy, _ = _both(CODE)
    assert _row(lazy, f"g(v{LENGTH}, p)")["args"] == ["p:p", "p:p"]
    # (deeper than the interpreter's limit if each local were worked out inside the next)
    long = "def f(p):\n    v0 = p\n" + "".join(f"    v{i} = v{i - 1} + 1\n" for i in range(1, 3001)) + "    g(v3000)\n"
    got = knob_passes.passes(ast.parse(long), long)
    assert got["given"][0]["args"] == ["p:p"]


@pytest.mark.parametrize("path", sorted(Path(knob_passes.__file__).parents[1].rglob("*.py")), ids=lambda p: p.name)
def test_the_lazy_locals_give_the_eager_facts_on_this_packages_modules(path):
    code = path.read_text(encoding="utf-8")
    lazy, eager = _both(code)
    assert lazy == eager
