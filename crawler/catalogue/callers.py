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

import re
from collections import deque
from collections.abc import Mapping, Sequence
from typing import Any

from crawler.catalogue.phrasing import short_code
from crawler.extract import guard_reads
from crawler.extract.codefacts import TYPED_CALL
from crawler.extract.guard_reads import CONFIG_PART
from crawler.extract.text import module_name
from crawler.model.kinds import RAISE
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


# --------------------------------------------------------------------------- what callers pass

#: A holder of settings as code spells it (``cache_config``): the name of a config class, in snake case.
_CONFIG_HOLDER = re.compile(r"[a-z][a-z0-9_]*_config")
#: How many calls deep a parameter passed on is followed (the check's function's callers, theirs,
#: and so on), and how many calls are read for one check at most (more: it stays open).
MAX_FOLLOW = 3
#: Where each model architecture's code lives, and a parameter there that holds (part of) the
#: model's configuration as the checkpoint gives it (``config``, ``adapter_config``, ``text_config``;
#: not the configs the project builds for a layer: ``moe_config``, ``quant_config``).
_ARCHITECTURE_PATHS = ("/model_executor/models/", "/models/")
_MODEL_CONFIG_PARAM = re.compile(
    r"config|hf_config|(?:[a-z][a-z0-9]*_)?(?:text|vision|audio|adapter|encoder|decoder|projector|vit|speech|image|thinker|talker)_config"
)
MAX_PASSED_CALLS = 64
#: The sources of an argument (``knob_passes.sources``) and whose move each is.
_ACTOR_OF = {"s": "setting", "m": "model", "r": "request", "c": "internal", "t": "internal"}
#: Whose move an entry point's parameter is: a route's is the request it handles, a command's an
#: option of it, a public method of the library what the user's code passes.
_ENTRY_ACTOR = {"route": "request", "cli": "setting", "library": "caller"}
#: What a check may read besides the parameters for what its callers pass them to decide it: what
#: the code itself holds (``extract.guard_reads``' sources).
_OWN_READS = frozenset({"param", "constant", "state", "tensor"})
#: ... and for another's move than nobody's: what the check tests with the parameters is constants
#: only (a parameter from the request looked up in the object's own state, ``mm_hash in
#: self._tombstones``, is a test of that state).
_PARAM_READS = frozenset({"param", "constant"})
#: Decorators that leave a function called as it is written (another may register it, wrap it
#: or call it from elsewhere: its callers are not all in the graph).
_PLAIN_DECORATORS = frozenset({"staticmethod", "classmethod"})
#: The basis of :meth:`Passed.from_model_config` (``actions.classify`` takes it for an assert too).
MODEL_PASSED = "every call of `{fn}` the code makes passes {params} from the model's own configuration, given to the model's code as {shown}"
_BASIS = {
    "setting": "every call of `{fn}` the code makes passes {params} from a setting: the check reads the configuration {shown}",
    "model": "every call of `{fn}` the code makes passes {params} from the model's own configuration {shown}",
    "request": "every call of `{fn}` the code makes passes {params} from the request it handles {shown}",
    "internal": "every call of `{fn}` the code makes passes {params} a constant or a value of the code's own",
    "caller": "{params} of `{fn}` is what the code calling the library's API passes",
}


class Passed:
    """What the repository's calls pass (``knob_passes``: ``given``, ``signatures``, ``called``,
    ``taken``), over the call graph: for a check on a function's parameters, where every caller's
    argument comes from."""

    def __init__(self, results: Sequence[FileResult], graph: Graph):
        self.graph = graph
        self.given: dict[tuple[str, int], list[dict[str, Any]]] = {}
        self.signatures: dict[str, dict[str, Any]] = {}
        self.called: dict[str, int] = {}
        self.taken: set[str] = set()
        #: by name, the calls made in a ``try`` that catches every exception and only logs or falls back (``knob_passes.quiet``)
        self.quiet: dict[str, int] = {}
        #: ``cache_config`` -> the fields each class so named declares that the class does not set itself
        self.fields: dict[str, list[set[str]]] = {}
        state: set[tuple[str, str]] = set()
        classes: list[tuple[str, str, list[str]]] = []
        for result in results:
            d = result.get("declarations") or {}
            if result.get("status") != "ok":
                continue
            path, module = result["path"], result["module"]
            for row in d.get("given", ()):
                self.given.setdefault((path, row["line"]), []).append(row)
            for sig in d.get("signatures", ()):
                self.signatures.setdefault(f"{module}.{sig['function']}", sig)
            for name, count in (d.get("called") or {}).items():
                self.called[name] = self.called.get(name, 0) + count
            self.taken.update(d.get("taken", ()))
            for name, count in (d.get("quiet") or {}).items():
                self.quiet[name] = self.quiet.get(name, 0) + count
            state |= {(f["owner"], f["field"]) for f in d.get("state_fields", ())}
            classes += [(c["qualname"], c["name"], [f["name"] for f in c.get("fields", ())]) for c in d.get("classes", ())]
        for qual, name, fields in classes:
            snake = re.sub(r"(?<=[a-z0-9])(?=[A-Z])|(?<=[A-Z])(?=[A-Z][a-z])", "_", name).lower()
            self.fields.setdefault(snake, []).append({f for f in fields if (qual, f) not in state})
        self._memo: dict[tuple[str, str, int], set[str] | None] = {}
        self._inits: dict[str, list[str]] | None = None

    def actors(self, fq: str, param: str, depth: int = 0) -> set[str] | None:
        """Whose move the values every call of ``fq`` passes its ``param`` are (``_ACTOR_OF``),
        or None when one is not known: a call the graph did not resolve (the function's name is
        called or taken elsewhere), an argument of unknown source, a parameter followed past
        ``MAX_FOLLOW``."""
        key = (fq, param, depth)
        if key not in self._memo:
            self._memo[key] = None  # (a cycle: not known)
            self._memo[key] = self._actors(fq, param, depth)
        return self._memo[key]

    def _actors(self, fq: str, param: str, depth: int) -> set[str] | None:
        graph = self.graph
        sig = self.signatures.get(fq)
        edges = graph.callers.get(fq, [])
        entry = graph.entry_kind(fq)
        found: set[str] = {_ENTRY_ACTOR[entry]} if entry in _ENTRY_ACTOR else set()
        if sig is None or depth >= MAX_FOLLOW or len(edges) > MAX_PASSED_CALLS or (not edges and not found):
            return None
        rows = self._rows(fq, edges)
        if rows is None:
            return None
        for row in rows:
            for source in self._bound(row, sig, param):
                kind, _, rest = source.partition(":")
                if kind == "p" and self._model_config(self._caller_of(row), rest):
                    found.add("model")  # (``hidden_act=adapter_config.hidden_act`` in a model's code)
                elif kind == "p":
                    caller = self._caller_of(row)
                    up = self.actors(caller, rest, depth + 1) if caller else None
                    if up is None:
                        return None
                    found |= up
                elif kind == "s" and not self.settable(rest):
                    return None
                elif kind in _ACTOR_OF:
                    found.add(_ACTOR_OF[kind])
                else:
                    return None
        return found

    def _rows(self, fq: str, edges: list[tuple[str, str, int]], constructed: bool = False) -> list[dict[str, Any]] | None:
        """The calls of ``fq`` (each with the caller it is in, ``_caller``), one per edge; None when
        one is not there to read, or when the repository calls or takes a name ``fq`` is called by
        more often than the graph resolved to it (a call of an object of unknown type, a callback);
        ``constructed``: a class's ``__init__`` counted by the calls of its class alone (with no
        subclass, what else calls an ``__init__`` is another class's ``super().__init__()``)."""
        owner, _, name = fq.rpartition(".")
        names = {name, owner.rpartition(".")[2]} if name == "__init__" else {name}
        if name == "__init__" and self.graph.subclasses(owner):
            return None  # (a subclass's ``super().__init__(...)`` is no call the graph resolves)
        counted = {owner.rpartition(".")[2]} if constructed and name == "__init__" else names
        if any(n in self.taken for n in counted):  # (``__init__`` is taken somewhere in any large repository)
            return None
        # (an instance method called on its class is passed its receiver first: not read here)
        method = (self.signatures.get(fq) or {}).get("receiver") == "self" and name != "__init__"
        out: list[dict[str, Any]] = []
        for caller, path, line in sorted(set(edges)):
            here = self.given.get((path, line), [])
            matched = [r for r in here if r["callee"] in names]
            if not matched and name == "__init__" and len(here) == 1 and here[0]["callee"][:1].islower():
                matched = here  # (a class called through a name bound to it: ``connector_cls(config, role)``)
            if not matched or (method and any(r.get("on_class") for r in matched)):
                return None
            out += [{**r, "_caller": caller} for r in matched]
        # (a class of the same name elsewhere, ``ImageProjectorMLP`` in two models' files: the calls
        # the graph resolved to its ``__init__`` are its own, not unresolved ones of this class)
        elsewhere = self._same_named(fq) if constructed and name == "__init__" else 0
        if sum(self.called.get(n, 0) for n in counted) != sum(1 for r in out if r["callee"] in counted) + elsewhere:
            return None
        return out

    def _same_named(self, fq: str) -> int:
        """How many calls the graph resolved to the ``__init__`` of other classes named as ``fq``'s is."""
        if self._inits is None:
            self._inits = {}
            for name in self.graph.defs:
                owner, _, method = name.rpartition(".")
                if method == "__init__":
                    self._inits.setdefault(owner.rpartition(".")[2], []).append(name)
        cls = fq.rpartition(".")[0].rpartition(".")[2]
        return sum(len(set(self.graph.callers.get(other, []))) for other in self._inits.get(cls, []) if other != fq)

    def settable(self, code: str) -> bool:
        """Whether the chain ``code`` (``self.vllm_config.cache_config.block_size``) reads what a user
        sets: each name after a config's (``cache_config``) a field every class of that name
        declares and does not set itself (``compilation_config.static_forward_context``, filled
        as the model is built, is no setting); an environment variable through ``envs``."""
        parts = code.split(".")
        if parts[0] == "envs":
            return True
        for holder, field in zip(parts, parts[1:], strict=False):
            if not _CONFIG_HOLDER.fullmatch(holder):
                continue
            declared = self.fields.get(holder)
            if not declared or not all(field in fields for fields in declared):
                return False
        return True

    def _model_config(self, caller: str, param: str) -> bool:
        """Whether ``param`` of ``caller`` is a part of the model's configuration: a ``*config``
        parameter (``adapter_config``, ``vision_config``, ``config``) of a function in a model
        architecture's code that is none of the engine's settings' holders (``vllm_config``,
        ``cache_config``: ``guard_reads.CONFIG_PART``). What it holds came from the checkpoint's
        config.json (s43-rules4: Molmo2's ``hidden_act=adapter_config.hidden_act``)."""
        where = self.graph.defs.get(caller)
        return (
            where is not None
            and any(p in "/" + where[0] for p in _ARCHITECTURE_PATHS)
            and bool(_MODEL_CONFIG_PARAM.fullmatch(param))
            and not CONFIG_PART.fullmatch(param)
        )

    @staticmethod
    def _caller_of(row: dict[str, Any]) -> str:
        return str(row["_caller"])

    @staticmethod
    def _bound(row: dict[str, Any], sig: dict[str, Any], param: str) -> list[str]:
        """The sources of what the call ``row`` binds to ``param`` (its default's when it passes
        none); ``?`` when that is not known."""
        args, keywords = row["args"], row["keywords"]
        if param in keywords:
            return keywords[param].split(",")
        params = sig["params"]
        if param in params:
            i = params.index(param)
            if "*" in args[: i + 1]:
                return ["?"]
            if i < len(args):
                return args[i].split(",")
        elif param not in sig["keywords"]:
            return ["?"]
        if "**" in keywords:
            return ["?"]
        default = (sig.get("defaults") or {}).get(param)
        return list(default) if default else ["?"]

    def decide(self, site: ExtractedSite, reads: Mapping[str, list[str]]) -> list[str] | None:
        """[actor, basis] for a check whose condition reads parameters of its function
        (``reads``: ``extract.guard_reads``), when every call of it passes each of them values
        that are one actor's (constants and the code's own state are nobody's when another's are
        there too), else None."""
        params = reads.get("param") or []
        fq = _function_of(site, params, reads, _OWN_READS)
        if fq is None or fq not in self.graph.defs or not all(p.isidentifier() for p in params):
            return None
        each: list[set[str]] = []
        for param in params:
            found = self.actors(fq, param)
            if not found or len(found) != 1:
                return None
            each.append(found)
        actors = set().union(*each)
        if len(actors) > 1:
            actors.discard("internal")
        if len(actors) != 1:
            return None
        actor = actors.pop()
        if actor != "internal" and not set(reads) <= _PARAM_READS:
            return None  # (``key in self.failed``: the parameter names what the state says something of)
        shown = _joined_code(sorted({c for p in params for c in self.shown(fq, p)}))
        return [actor, _BASIS[actor].format(fn=short_code(site["qualname"]), params=_joined_code(params), shown=shown).rstrip()]

    def from_model_config(self, site: ExtractedSite, reads: Mapping[str, list[str]]) -> list[str] | None:
        """[actor, basis] for a check that tests its function's parameters against constants only, when
        every call of it passes each one a part of the model's configuration: a field of the HF
        config (``m:``) or a ``*config`` parameter of a model architecture's code
        (``hidden_act=adapter_config.hidden_act``, :meth:`_model_config`), a class's ``__init__``
        too (its calls counted by the class's name), with at least one such parameter among them (a
        field read with ``m:`` alone may be a lookup of a constant table by the model's name); in a
        model architecture's code only; else None. One call back, no further."""
        params = reads.get("param") or []
        fq = _function_of(site, params, reads, _PARAM_READS)
        if fq is None:
            return None
        sig = self.signatures.get(fq)
        edges = self.graph.callers.get(fq, [])
        if (
            not any(p in "/" + site["path"] for p in _ARCHITECTURE_PATHS)
            or sig is None
            or fq not in self.graph.defs
            or not edges
            or len(edges) > MAX_PASSED_CALLS
            or self.graph.entry_kind(fq) is not None
        ):
            return None
        rows = self._rows(fq, edges, constructed=True)
        if not rows:
            return None
        shown: list[str] = []
        passed_on = False
        for param in params:
            for row in rows:
                for source in self._bound(row, sig, param):
                    kind, _, rest = source.partition(":")
                    if kind == "p" and self._model_config(self._caller_of(row), rest):
                        passed_on = True
                    elif kind != "m":
                        return None
                    shown.append(rest.removeprefix("self."))
        if not passed_on:
            return None
        return ["model", MODEL_PASSED.format(fn=short_code(site["qualname"]), params=_joined_code(params), shown=_joined_code(sorted(set(shown))))]

    def shown(self, fq: str, param: str, depth: int = 0) -> list[str]:
        """The code of the settings, model fields and request fields the calls of ``fq`` pass its ``param``."""
        sig = self.signatures.get(fq)
        rows = self._rows(fq, self.graph.callers.get(fq, [])) if sig is not None and depth < MAX_FOLLOW else None
        out: list[str] = []
        for row in rows or ():
            for source in self._bound(row, sig or {}, param):
                kind, _, rest = source.partition(":")
                if kind == "p" and self._model_config(self._caller_of(row), rest):
                    out.append(rest)
                elif kind == "p":
                    out += self.shown(self._caller_of(row), rest, depth + 1)
                elif kind in ("s", "m", "r") and rest not in out:
                    out.append(rest.removeprefix("self."))
        return out


def _joined_code(names: list[str]) -> str:
    shown = [f"`{short_code(n)}`" for n in names[:3]]
    return "" if not shown else shown[0] if len(shown) == 1 else ", ".join(shown[:-1]) + " and " + shown[-1]


#: The start of the basis of a raise whose every call catches what it raises (:func:`quietly_caught`):
#: ``catalogue.actions.action`` says such an error is handled, whatever else the check reads.
QUIET_BASIS = "caught by every call of `"


def quietly_caught(site: ExtractedSite, passed: Passed) -> list[str] | None:
    """["internal", basis] for a raise in a function or method whose every call the repository
    makes, counted by the called name, is in the body of a ``try`` that catches every exception
    and only logs or falls back (``knob_passes.quiet`` against ``called``: ``fuser.update_forward(
    module)`` under ``except Exception: logger.debug(...); continue``, O21 of s45-judge3): the error
    never leaves the project's code. Not an entry point (a user's code may call it), a name taken as
    a value (a callback), a dunder or a decorated function (called otherwise), one at module level or
    nested. Else None."""
    qualname = site["qualname"]
    name = qualname.rpartition(".")[2]
    if qualname == "<module>" or "<" in qualname or (name.startswith("__") and name.endswith("__")):
        return None
    decorators = (site.get("facts") or {}).get("decorators") or []
    if (
        any(d.split("(")[0].rpartition(".")[2] not in _PLAIN_DECORATORS for d in decorators)
        or passed.graph.entry_kind(f"{site['module']}.{qualname}") is not None
        or name in passed.taken
    ):
        return None
    quiet = passed.quiet.get(name, 0)
    if not quiet or quiet != passed.called.get(name, 0):
        return None
    calls = "the one call" if quiet == 1 else f"all {quiet} calls"
    return [
        "internal",
        f"{QUIET_BASIS}{name}` the code makes ({calls} of that name, each in a `try` whose handlers only log or fall back, one of them catching every "
        "exception): it does not reach you as this error",
    ]


def passed_by_id(records: Sequence[RecordData], primaries: Mapping[str, ExtractedSite], results: Sequence[FileResult], graph: Graph) -> dict[str, list[str]]:
    """[actor, basis] by id, for the records whose check tests parameters that every call of its
    function passes one actor's values (:meth:`Passed.decide`), and for the raises whose every call
    catches what they raise (:func:`quietly_caught`); ``catalogue.actions.classify`` takes the first
    when no rule of its own applies, ``catalogue.actions.action`` the second before any rule."""
    passed: Passed | None = None
    out: dict[str, list[str]] = {}
    for record in records:
        site = primaries.get(record["id"])
        if site is None:
            continue
        if record["kind"] == RAISE:
            passed = passed or Passed(results, graph)
            caught = quietly_caught(site, passed)
            if caught is not None:
                out[record["id"]] = caught
                continue
        found_reads = guard_reads.reads(site)
        if "param" not in found_reads:
            continue
        passed = passed or Passed(results, graph)
        decided = passed.decide(site, found_reads) or passed.from_model_config(site, found_reads)
        if decided is not None:
            out[record["id"]] = decided
    return out


def _function_of(site: ExtractedSite, params: list[str], reads: Mapping[str, list[str]], allowed: frozenset[str]) -> str | None:
    """The function (its dotted name) whose calls may decide a check that tests its parameters
    ``params`` and reads only ``allowed`` sources: None for a check with no parameter or too many,
    one that reads anything else, one at module level or in a nested function, or one of a
    function under a decorator that may call it otherwise."""
    if not params or len(params) >= guard_reads.MAX_SHOWN or not set(reads) <= allowed:
        return None
    if site["qualname"] == "<module>" or "<" in site["qualname"]:
        return None
    decorators = (site.get("facts") or {}).get("decorators") or []
    if any(d.split("(")[0].rpartition(".")[2] not in _PLAIN_DECORATORS for d in decorators):
        return None
    return f"{site['module']}.{site['qualname']}"
