"""Parsing: stdlib ``ast`` first; libcst, in a child process, for syntax newer than this Python.

:func:`parse_source` returns a stdlib ``ast.Module``. When ``ast.parse`` fails with a
SyntaxError (PEP 695 ``def f[T]()`` / ``type X = ...``, PEP 701 f-strings, PEP 758, PEP 750
t-strings on an older Python), the file is parsed by libcst in a child process (libcst can crash
or hang the process on pathological nesting) under a time limit, and the libcst tree is
converted to the *subset* of ``ast`` the extractor reads: statements that can hold or shape a
raise, and the expressions message templates are built from (names, attributes, calls, strings,
``+``/``%``, tuples, lists, dicts). Every other expression becomes an :class:`Opaque` node that
only carries its position, which is all the extractor needs for its source text. Positions follow
``ast``'s conventions (UTF-8 byte columns, enclosing parentheses excluded), so both paths give
identical results (see the parity test). If libcst fails too, the original SyntaxError stands.
"""

from __future__ import annotations

import ast
import os
import pickle
import subprocess
import sys
from typing import Any, cast

LIBCST_TIMEOUT = 20.0


class Opaque(ast.expr):
    """An expression the converter does not model; only its position matters."""

    _fields = ()


class FallbackUnavailable(Exception):
    """The libcst child did not finish (timeout, killed, could not start): a passing condition
    of this machine, not a fact about the file, so the result must not be cached."""


def parse_source(text: str) -> ast.Module:
    try:
        return ast.parse(text)
    except SyntaxError as error:
        tree = parse_with_libcst_isolated(text)
        if tree is None:
            raise error from None
        return tree


def parse_with_libcst_isolated(text: str, timeout: float = LIBCST_TIMEOUT) -> ast.Module | None:
    """Run :func:`libcst_to_ast` in a child process; None when libcst cannot parse the text either.

    Raises :class:`FallbackUnavailable` when the child timed out, was SIGKILLed or could not be
    started: whether the file parses is then unknown. A crash (libcst segfaults on deep nesting)
    is an answer about the text, so it gives None like a parse error.
    """
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    # PYTHONWARNINGS=ignore: an inherited ``error`` filter would fail the child on warnings
    # about the analysed code (or on libcst's own), and lose a valid file.
    env = dict(os.environ, PYTHONPATH=root + os.pathsep + os.environ.get("PYTHONPATH", ""), PYTHONWARNINGS="ignore")
    try:
        proc = subprocess.run(
            [sys.executable, "-m", "crawler.extract.parse"],
            input=text.encode("utf-8", "surrogatepass"),
            capture_output=True,
            timeout=timeout,
            env=env,
        )
    except subprocess.TimeoutExpired:
        raise FallbackUnavailable(f"the libcst fallback timed out after {timeout:g} s") from None
    except OSError as e:
        raise FallbackUnavailable(f"the libcst fallback could not run: {e}") from None
    if proc.returncode == -9:  # SIGKILL: the OOM killer or an operator, not the file
        raise FallbackUnavailable("the libcst fallback was killed (SIGKILL)")
    # Any other death is libcst's own answer about this text: it segfaults on deep nesting.
    if proc.returncode != 0 or not proc.stdout:
        return None
    try:
        tree = pickle.loads(proc.stdout)  # produced by our own child from our own classes
    except Exception:  # noqa: BLE001
        return None
    return tree if isinstance(tree, ast.Module) else None


# ---------------------------------------------------------------------------------------------
# libcst -> ast (subset)


def libcst_to_ast(text: str) -> ast.Module:
    import libcst as cst
    from libcst.metadata import MetadataWrapper, PositionProvider

    module = cst.parse_module(text)
    wrapper = MetadataWrapper(module, unsafe_skip_copy=True)
    positions = wrapper.resolve(PositionProvider)
    return _Converter(cst, positions, text).module(wrapper.module)


class _Converter:
    def __init__(self, cst: Any, positions: Any, text: str) -> None:
        import re

        self.cst = cst
        self.positions = positions
        self.lines = re.split(r"\r\n|\r|\n", text)
        m = cst
        self.stmt_table = {
            m.FunctionDef: self.s_function,
            m.ClassDef: self.s_class,
            m.If: self.s_if,
            m.For: self.s_for,
            m.While: self.s_while,
            m.With: self.s_with,
            m.Try: self.s_try,
            m.Raise: self.s_raise,
            m.Assert: self.s_assert,
            m.Assign: self.s_assign,
            m.AugAssign: self.s_augassign,
            m.AnnAssign: self.s_annassign,
            m.Import: self.s_import,
            m.ImportFrom: self.s_importfrom,
            m.Return: self.s_return,
            m.Expr: self.s_expr,
            m.SimpleStatementLine: self.s_line,
        }
        if hasattr(m, "TryStar"):
            self.stmt_table[m.TryStar] = self.s_try
        if hasattr(m, "Match"):
            self.stmt_table[m.Match] = self.s_match
        self.expr_table = {
            m.Name: self.e_name,
            m.Attribute: self.e_attribute,
            m.Call: self.e_call,
            m.SimpleString: self.e_string,
            m.ConcatenatedString: self.e_string,
            m.FormattedString: self.e_string,
            m.BinaryOperation: self.e_binop,
            m.Tuple: self.e_sequence,
            m.List: self.e_sequence,
            m.Dict: self.e_dict,
        }

    # -- positions --

    def _byte_col(self, line: int, col: int) -> int:
        text = self.lines[line - 1]
        return col if text.isascii() else len(text[:col].encode("utf-8"))

    def _skip_forward(self, line: int, col: int) -> tuple[int, int]:
        """From (line, col) skip whitespace, comments, continuation backslashes and newlines."""
        while line <= len(self.lines):
            text = self.lines[line - 1]
            while col < len(text) and text[col] in " \t\f\\":
                col += 1
            if col < len(text) and text[col] != "#":
                return line, col
            line, col = line + 1, 0
        return line, col

    @staticmethod
    def _code_end(text: str) -> int:
        """Length of a line without its trailing comment (quote-aware)."""
        quote = None
        i = 0
        while i < len(text):
            c = text[i]
            if quote:
                if c == "\\":
                    i += 1
                elif c == quote:
                    quote = None
            elif c in "'\"":
                quote = c
            elif c == "#":
                return i
            i += 1
        return len(text)

    def _skip_backward(self, line: int, col: int) -> tuple[int, int]:
        """From an exclusive end (line, col) move back over whitespace, comments and newlines."""
        while line >= 1:
            text = self.lines[line - 1]
            while col > 0 and text[col - 1] in " \t\f\\":
                col -= 1
            if col > 0:
                return line, col
            line -= 1
            if line >= 1:
                col = self._code_end(self.lines[line - 1])
        return 1, 0

    def loc(self, node: Any, target: Any) -> Any:
        rng = self.positions[node]
        l0, c0 = rng.start.line, rng.start.column
        l1, c1 = rng.end.line, rng.end.column
        # libcst's syntactic positions exclude parentheses, like ast -- except that ast includes
        # a parenthesized tuple's / generator expression's own pair.
        if isinstance(node, (self.cst.Tuple, self.cst.GeneratorExp)) and node.lpar:
            l0, c0 = self._skip_backward(l0, c0)
            c0 -= 1
            l1, c1 = self._skip_forward(l1, c1)
            c1 += 1
        target.lineno, target.col_offset = l0, self._byte_col(l0, c0)
        target.end_lineno, target.end_col_offset = l1, self._byte_col(l1, c1)
        return target

    # -- statements --

    def module(self, node: Any) -> ast.Module:
        return ast.Module(body=self.block(node.body), type_ignores=[])

    def block(self, body: Any) -> list[ast.stmt]:
        if isinstance(body, (self.cst.IndentedBlock, self.cst.SimpleStatementSuite)):
            body = body.body
        out: list[ast.stmt] = []
        for s in body:
            out.extend(self.stmt(s))
        return out

    def stmt(self, node: Any) -> list[ast.stmt]:
        handler = self.stmt_table.get(type(node))
        if handler is not None:
            got = handler(node)
            return got if isinstance(got, list) else [got]
        return [self.loc(node, ast.Pass())]

    def s_line(self, node: Any) -> Any:
        out = []
        for s in node.body:
            out.extend(self.stmt(s))
        return out

    def _end_from(self, target: Any, *bodies: Any) -> Any:
        for body in reversed(bodies):
            if body:
                last = body[-1]
                target.end_lineno, target.end_col_offset = last.end_lineno, last.end_col_offset
                return target
        return target

    def _params(self, params: Any) -> ast.arguments:
        cst = self.cst

        def arg(p: Any) -> Any:
            return ast.arg(arg=p.name.value)

        vararg = params.star_arg if isinstance(params.star_arg, cst.Param) else None
        return ast.arguments(
            posonlyargs=[arg(p) for p in params.posonly_params],
            args=[arg(p) for p in params.params],
            vararg=arg(vararg) if vararg else None,
            kwonlyargs=[arg(p) for p in params.kwonly_params],
            kw_defaults=[None for _ in params.kwonly_params],
            kwarg=arg(params.star_kwarg) if params.star_kwarg else None,
            defaults=[],
        )

    def s_function(self, node: Any) -> Any:
        cls = ast.AsyncFunctionDef if node.asynchronous else ast.FunctionDef
        body = self.block(node.body)
        fn = cls(
            name=node.name.value,
            args=self._params(node.params),
            body=body,
            decorator_list=[self.expr(d.decorator) for d in node.decorators],
            returns=None,
            type_comment=None,
        )
        name_pos = self.positions[node.name]
        self.loc(node, fn)
        fn.lineno = name_pos.start.line
        fn.col_offset = 0
        return self._end_from(fn, body)

    def s_class(self, node: Any) -> Any:
        body = self.block(node.body)
        c = ast.ClassDef(
            name=node.name.value,
            bases=[self.expr(a.value) for a in node.bases if not a.keyword and not a.star],
            keywords=[],
            body=body,
            decorator_list=[self.expr(d.decorator) for d in node.decorators],
        )
        self.loc(node, c)
        c.lineno = self.positions[node.name].start.line
        return self._end_from(c, body)

    def _orelse(self, orelse: Any) -> list[ast.stmt]:
        if orelse is None:
            return []
        if isinstance(orelse, self.cst.If):
            return [self.s_if(orelse)]
        return self.block(orelse.body)

    def s_if(self, node: Any) -> Any:
        body, orelse = self.block(node.body), self._orelse(node.orelse)
        n = self.loc(node, ast.If(test=self.expr(node.test), body=body, orelse=orelse))
        return self._end_from(n, body, orelse)

    def s_for(self, node: Any) -> Any:
        cls = ast.AsyncFor if node.asynchronous else ast.For
        body, orelse = self.block(node.body), self._orelse(node.orelse)
        n = cls(target=self.expr(node.target), iter=self.expr(node.iter), body=body, orelse=orelse, type_comment=None)
        return self._end_from(self.loc(node, n), body, orelse)

    def s_while(self, node: Any) -> Any:
        body, orelse = self.block(node.body), self._orelse(node.orelse)
        n = ast.While(test=self.expr(node.test), body=body, orelse=orelse)
        return self._end_from(self.loc(node, n), body, orelse)

    def s_with(self, node: Any) -> Any:
        cls = ast.AsyncWith if node.asynchronous else ast.With
        body = self.block(node.body)
        return self._end_from(self.loc(node, cls(items=[], body=body, type_comment=None)), body)

    def s_try(self, node: Any) -> Any:
        cls = ast.Try if isinstance(node, self.cst.Try) else ast.TryStar
        handlers = []
        for h in node.handlers:
            hb = self.block(h.body)
            name = h.name.name.value if h.name is not None else None
            eh = ast.ExceptHandler(type=self.expr(h.type) if h.type is not None else None, name=name, body=hb)
            handlers.append(self._end_from(self.loc(h, eh), hb))
        body = self.block(node.body)
        orelse = self.block(node.orelse.body) if node.orelse is not None else []
        final = self.block(node.finalbody.body) if node.finalbody is not None else []
        n = self.loc(node, cls(body=body, handlers=handlers, orelse=orelse, finalbody=final))
        return self._end_from(n, body, handlers, orelse, final)

    def s_match(self, node: Any) -> Any:
        cases = []
        for c in node.cases:
            body = self.block(c.body)
            pattern = self.loc(c.pattern, ast.MatchValue(value=ast.Constant(value=None)))
            cases.append(ast.match_case(pattern=pattern, guard=self.expr(c.guard) if c.guard is not None else None, body=body))
        n = self.loc(node, ast.Match(subject=self.expr(node.subject), cases=cases))
        return self._end_from(n, *[c.body for c in cases])

    def s_raise(self, node: Any) -> Any:
        exc = self.expr(node.exc) if node.exc is not None else None
        cause = self.expr(node.cause.item) if node.cause is not None else None
        return self.loc(node, ast.Raise(exc=exc, cause=cause))

    def s_assert(self, node: Any) -> Any:
        msg = self.expr(node.msg) if node.msg is not None else None
        return self.loc(node, ast.Assert(test=self.expr(node.test), msg=msg))

    def s_assign(self, node: Any) -> Any:
        n = ast.Assign(targets=[self.expr(t.target) for t in node.targets], value=self.expr(node.value), type_comment=None)
        return self.loc(node, n)

    def s_augassign(self, node: Any) -> Any:
        op: ast.operator = ast.Add() if isinstance(node.operator, self.cst.AddAssign) else ast.Sub()
        target = cast("ast.Name | ast.Attribute | ast.Subscript", self.expr(node.target))  # what Python lets one assign to
        return self.loc(node, ast.AugAssign(target=target, op=op, value=self.expr(node.value)))

    def s_annassign(self, node: Any) -> Any:
        value = self.expr(node.value) if node.value is not None else None
        target = cast("ast.Name | ast.Attribute | ast.Subscript", self.expr(node.target))
        n = ast.AnnAssign(target=target, annotation=Opaque(), value=value, simple=1)
        return self.loc(node, n)

    def _dotted(self, node: Any) -> str:
        if isinstance(node, self.cst.Name):
            return cast(str, node.value)
        return f"{self._dotted(node.value)}.{node.attr.value}"

    def _alias(self, a: Any) -> Any:
        asname = a.asname.name.value if a.asname is not None else None
        return ast.alias(name=self._dotted(a.name), asname=asname)

    def s_import(self, node: Any) -> Any:
        return self.loc(node, ast.Import(names=[self._alias(a) for a in node.names]))

    def s_importfrom(self, node: Any) -> Any:
        names = [ast.alias(name="*", asname=None)] if isinstance(node.names, self.cst.ImportStar) else [self._alias(a) for a in node.names]
        module = self._dotted(node.module) if node.module is not None else None
        return self.loc(node, ast.ImportFrom(module=module, names=names, level=len(node.relative)))

    def s_return(self, node: Any) -> Any:
        return self.loc(node, ast.Return(value=self.expr(node.value) if node.value is not None else None))

    def s_expr(self, node: Any) -> Any:
        return self.loc(node, ast.Expr(value=self.expr(node.value)))

    # -- expressions --

    def expr(self, node: Any) -> ast.expr:
        handler = self.expr_table.get(type(node))
        out = handler(node) if handler is not None else None
        return cast(ast.expr, self.loc(node, out if out is not None else Opaque()))

    def e_name(self, node: Any) -> Any:
        return ast.Name(id=node.value, ctx=ast.Load())

    def e_attribute(self, node: Any) -> Any:
        return ast.Attribute(value=self.expr(node.value), attr=node.attr.value, ctx=ast.Load())

    def e_call(self, node: Any) -> Any:
        args, keywords = [], []
        for a in node.args:
            if a.keyword is not None:
                keywords.append(ast.keyword(arg=a.keyword.value, value=self.expr(a.value)))
            elif a.star == "**":
                keywords.append(ast.keyword(arg=None, value=self.expr(a.value)))
            elif a.star == "*":
                args.append(self.loc(a, ast.Starred(value=self.expr(a.value), ctx=ast.Load())))
            else:
                args.append(self.expr(a.value))
        return ast.Call(func=self.expr(node.func), args=args, keywords=keywords)

    def _has_fstring(self, node: Any) -> bool:
        cst = self.cst
        if isinstance(node, cst.FormattedString):
            return True
        if isinstance(node, cst.ConcatenatedString):
            return self._has_fstring(node.left) or self._has_fstring(node.right)
        return not isinstance(node, cst.SimpleString)

    def e_string(self, node: Any) -> Any:
        if self._has_fstring(node):
            if any(p in (node.prefix if hasattr(node, "prefix") else "").lower() for p in "t"):
                return None
            return ast.JoinedStr(values=[])
        value = node.evaluated_value
        if value is None:
            return None
        return ast.Constant(value=value)

    def e_binop(self, node: Any) -> Any:
        op = node.operator
        o: ast.operator
        if isinstance(op, self.cst.Add):
            o = ast.Add()
        elif isinstance(op, self.cst.Modulo):
            o = ast.Mod()
        else:
            return None
        return ast.BinOp(left=self.expr(node.left), op=o, right=self.expr(node.right))

    def e_sequence(self, node: Any) -> Any:
        elts = []
        for e in node.elements:
            if isinstance(e, self.cst.StarredElement):
                elts.append(self.loc(e, ast.Starred(value=self.expr(e.value), ctx=ast.Load())))
            else:
                elts.append(self.expr(e.value))
        cls = ast.Tuple if isinstance(node, self.cst.Tuple) else ast.List
        return cls(elts=elts, ctx=ast.Load())

    def e_dict(self, node: Any) -> Any:
        keys: list[ast.expr | None] = []
        values: list[ast.expr] = []
        for e in node.elements:
            if isinstance(e, self.cst.DictElement):
                keys.append(self.expr(e.key))
            else:
                keys.append(None)
            values.append(self.expr(e.value))
        return ast.Dict(keys=keys, values=values)


def _main() -> None:
    import warnings

    warnings.simplefilter("ignore")
    sys.setrecursionlimit(10_000)
    from crawler.extract import (
        parse as this,  # not __main__: pickled classes must be importable
    )

    text = sys.stdin.buffer.read().decode("utf-8", "surrogatepass")
    tree = this.libcst_to_ast(text)
    sys.stdout.buffer.write(pickle.dumps(tree, protocol=pickle.HIGHEST_PROTOCOL))


if __name__ == "__main__":
    _main()
