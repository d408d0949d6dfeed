"""Where an error is reached from: the repository's call graph, joined after extraction.

Each source file's result carries its definitions, aliases (re-exports) and resolved calls
(``codefacts.graph_facts``, cached with the file). Here they are joined repo-wide: a callee is
followed through re-exports to a definition, a class call to its ``__init__``, a method to the
class (or a base) that defines it. A callee the join cannot find among the repository's
definitions is no edge: the graph is approximate, but every edge it shows is one it saw.

Entry points: a function a route decorator marks (``@router.post(...)``), a click/typer command,
and a public method of a class the top-level package re-exports (vLLM's ``LLM``), which is
what a user of the library calls.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Mapping, Sequence
from typing import Any

from crawler.extract.codefacts import TYPED_CALL
from crawler.extract.text import module_name
from crawler.model.shapes import ExtractedSite, FileResult, RecordData

MAX_CALLERS = 5
MAX_DEPTH = 8
MAX_VISITED = 3000
_ALIAS_STEPS = 8
#: A call through a name typed by a base class reaches the base's method and its subclasses'
#: overrides: at most this many subclasses, nearest first (a base of hundreds, a model's
#: ``nn.Module``-like root, says too little about which one runs).
MAX_SUBCLASSES = 64


class Names:
    """The repository's definitions and re-exports, to find the definition a dotted name stands
    for (a callee; an imported function, ``catalogue.cross_module_join``): the part of the graph no call needs."""

    def __init__(self, results: list[FileResult]):
        self.defs: dict[str, tuple[str, int, str | None]] = {}  # fq name -> (path, line, entry kind)
        self.classes: dict[str, list[str]] = {}  # fq class -> resolved bases
        self.aliases: dict[str, str] = {}  # module.name -> what it re-exports
        self.tops: set[str] = set()  # top-level packages (their re-exports are the public face)
        #: per file with graph facts: (module, path, calls), which only the call graph reads
        self.raw_calls: list[tuple[str, str, list[Any]]] = []
        #: a function -> what its return annotation says it returns: ("type" or "inst", class)
        self.returns: dict[str, tuple[str, str]] = {}
        for result in results:
            graph = result.get("graph")
            if result.get("status") != "ok" or not graph:
                continue
            module, path = result["module"], result["path"]
            if module and "." not in module and path.endswith("__init__.py"):
                self.tops.add(module)
            for qual, line, entry in graph["defs"]:
                self.defs.setdefault(f"{module}.{qual}", (path, line, entry))
            for qual, _, bases in graph["classes"]:
                self.classes.setdefault(f"{module}.{qual}", bases)
            for name, target in graph["aliases"].items():
                self.aliases.setdefault(f"{module}.{name}", target)
            for qual, (kind, cls) in (graph.get("returns") or {}).items():
                self.returns.setdefault(f"{module}.{qual}", (kind, cls))
            self.raw_calls.append((module, path, graph["calls"]))
        self._found: dict[str, str | None] = {}  # the same callee is written in many places

    def canonical(self, name: str) -> str:
        """``name`` with re-exports followed (``vllm.LLM`` -> ``vllm.entrypoints.llm.LLM``)."""
        for _ in range(_ALIAS_STEPS):
            if name in self.defs or name in self.classes:
                return name
            head, rest = name, ""
            while head:
                target = self.aliases.get(head)
                if target is not None and target != head:
                    name = target + rest
                    break
                head, dot, last = head.rpartition(".")
                rest = f".{last}{rest}"
            else:
                return name
        return name

    def find(self, target: str) -> str | None:
        """The definition a resolved callee names, or None."""
        try:
            return self._found[target]
        except KeyError:
            found = self._found[target] = self._find(target)
            return found

    def _find(self, target: str) -> str | None:
        name = self.canonical(target)
        if name in self.defs:
            return name
        if name in self.classes:
            return self._method(name, "__init__")
        owner, _, method = name.rpartition(".")
        owner = self.canonical(owner) if owner else owner
        if owner in self.classes:
            return self._method(owner, method)
        return None

    def _method(self, cls: str, method: str) -> str | None:
        seen: set[str] = set()
        todo = [cls]
        while todo and len(seen) < 20:
            current = todo.pop(0)
            if current in seen:
                continue
            seen.add(current)
            fq = f"{current}.{method}"
            if fq in self.defs:
                return fq
            todo.extend(self.canonical(b) for b in self.classes.get(current, ()) if b)
        return None


class Graph(Names):
    """The call graph over the names: who calls each definition, and the entry points."""

    def __init__(self, results: list[FileResult]):
        super().__init__(results)
        self.public = self._public_classes()
        self._reached: dict[tuple[str, ...], set[str]] = {}
        self.callers: dict[str, list[tuple[str, str, int]]] = {}
        self.callees: dict[str, set[str]] = {}
        self._subclasses: dict[str, list[str]] | None = None
        self._expanded: dict[str, list[str]] = {}
        for module, path, calls in self.raw_calls:
            for caller, target, line in calls:
                caller_fq = f"{module}.{caller}"
                if caller_fq not in self.defs:
                    continue
                for callee in self.expand(target) if target.startswith(TYPED_CALL) else filter(None, [self.find(target)]):
                    if callee != caller_fq:
                        self.callers.setdefault(callee, []).append((caller_fq, path, line))
                        self.callees.setdefault(caller_fq, set()).add(callee)
        self.methods: dict[str, list[str]] = {}
        for fq in self.defs:
            owner = fq.rpartition(".")[0]
            if owner in self.classes:
                self.methods.setdefault(owner, []).append(fq)
        for edges in self.callers.values():
            edges.sort(key=lambda e: (e[1], e[2], e[0]))

    def expand(self, target: str) -> list[str]:
        """The definitions a call through a typed name may run (``codefacts.TYPED_CALL``): the
        constructor of a class or of its subclasses, a method or its subclasses' overrides, or
        either of what a function's return annotation says it returns."""
        if target not in self._expanded:
            self._expanded[target] = self._expand(target)
        return self._expanded[target]

    def _expand(self, target: str) -> list[str]:
        if target.startswith("~ret~"):
            function, _, rest = target[5:].partition("~")
            name = self.canonical(function)
            if name in self.classes:  # ``x = Widget(...)``: an instance of it
                kind, cls = "inst", name
            else:
                found = self.find(function)
                if found is None or found not in self.returns:
                    return []
                kind, cls = self.returns[found]
            if kind == "type":
                return self.expand(f"~new~{cls}") if not rest else list(filter(None, [self.find(cls + rest)]))
            return self.expand(f"~of~{cls}{rest or '.__call__'}")
        if target.startswith("~new~"):
            cls, method = target[5:], "__init__"
        elif target.startswith("~of~"):
            cls, _, method = target[4:].rpartition(".")
        else:
            return []
        cls = self.canonical(cls)
        if cls not in self.classes:
            return []
        out = [m for m in [self._method(cls, method)] if m]
        for sub in self.subclasses(cls):
            own = f"{sub}.{method}"
            if own in self.defs and own not in out:
                out.append(own)
        return out

    def subclasses(self, cls: str) -> list[str]:
        """The repository's subclasses of ``cls``, nearest first then by name (at most
        ``MAX_SUBCLASSES``)."""
        if self._subclasses is None:
            self._subclasses = {}
            for name, bases in sorted(self.classes.items()):
                for base in bases:
                    if base:
                        self._subclasses.setdefault(self.canonical(base), []).append(name)
        out: list[str] = []
        seen = {cls}
        frontier = [cls]
        while frontier and len(out) < MAX_SUBCLASSES:
            nxt = []
            for c in frontier:
                for sub in self._subclasses.get(c, ()):
                    if sub not in seen:
                        seen.add(sub)
                        out.append(sub)
                        nxt.append(sub)
            frontier = nxt
        return out[:MAX_SUBCLASSES]

    def reach(self, targets: list[str]) -> set[str]:
        """The definitions the resolved callees ``targets`` run, directly or through the calls
        the graph saw (bounded); a class called is taken with all its methods, which is what a
        test goes on to call on the instance."""
        key = tuple(targets)
        if key not in self._reached:
            self._reached[key] = self._reach(targets)
        return self._reached[key]

    def _reach(self, targets: list[str]) -> set[str]:
        start: list[str] = []
        for target in targets:
            name = self.canonical(target)
            if name in self.classes:
                start.extend(self.methods.get(name, ()))
            found = self.find(target)
            if found is not None:
                start.append(found)
        seen = set(start)
        frontier = sorted(seen)
        for _ in range(MAX_DEPTH):
            nxt = []
            for fq in frontier:
                for callee in sorted(self.callees.get(fq, ())):
                    if callee not in seen and len(seen) < MAX_VISITED:
                        seen.add(callee)
                        nxt.append(callee)
            frontier = nxt
        return seen

    def _public_classes(self) -> set[str]:
        out = set()
        for alias, target in self.aliases.items():
            if alias.rpartition(".")[0] in self.tops and not alias.rpartition(".")[2].startswith("_"):
                name = self.canonical(target)
                if name in self.classes:
                    out.add(name)
        return out

    def entry_kind(self, fq: str) -> str | None:
        found = self.defs.get(fq)
        if found is None:
            return None
        if found[2]:
            return found[2]
        owner, _, method = fq.rpartition(".")
        if owner in self.public and not method.startswith("_"):
            return "library"
        return None

    def callers_of(self, fq: str) -> list[dict[str, Any]]:
        """The nearest callers (at most ``MAX_CALLERS``), then a shortest path on to an entry
        point when none of them is one; each as ``records.Caller`` data."""
        parents: dict[str, tuple[str, str, int]] = {}  # a caller -> (what it calls, path, line)
        order: list[tuple[str, str, int]] = []
        queue = deque([(fq, 0)])
        reached = None
        while queue and len(parents) < MAX_VISITED - 1:
            node, depth = queue.popleft()
            if depth >= MAX_DEPTH:
                continue
            for edge in self.callers.get(node, ()):
                caller = edge[0]
                if caller in parents or caller == fq:
                    continue
                parents[caller] = (node, edge[1], edge[2])
                order.append(edge)
                if reached is None and self.entry_kind(caller):
                    reached = caller
                queue.append((caller, depth + 1))
            if reached is not None and len(order) >= MAX_CALLERS:
                break
        direct = [e for e in order if parents[e[0]][0] == fq][:MAX_CALLERS]
        shown = {e[0] for e in direct}
        path: list[tuple[str, str, int]] = []
        if reached is not None and reached not in shown:
            node = reached
            while node != fq and node not in shown:
                _, p, line = parents[node]
                path.append((node, p, line))
                node = parents[node][0]
            path.reverse()
        return [self._caller(e) for e in direct + path]

    def _caller(self, edge: tuple[str, str, int]) -> dict[str, Any]:
        fq, path, line = edge
        module = module_name(path)[0]
        return {
            "qualname": fq[len(module) + 1 :] if module and fq.startswith(module + ".") else fq,
            "path": path,
            "line": line,
            "entry_point": self.entry_kind(fq),
        }


def callers_by_id(records: Sequence[RecordData], primaries: Mapping[str, ExtractedSite], graph: Graph) -> dict[str, list[dict[str, Any]]]:
    """Each record's ``meaning.callers`` (``records.Caller`` as dicts, nearest first), by id: those
    whose primary site's function the graph knows."""
    memo: dict[str, list[dict[str, Any]]] = {}
    out: dict[str, list[dict[str, Any]]] = {}
    for record in records:
        site = primaries.get(record["id"])
        if site is None or site["qualname"] == "<module>":
            continue
        fq = f"{site['module']}.{site['qualname']}"
        if fq not in graph.defs:
            continue
        if fq not in memo:
            memo[fq] = graph.callers_of(fq)
        out[record["id"]] = [dict(c) for c in memo[fq]]
    return out
