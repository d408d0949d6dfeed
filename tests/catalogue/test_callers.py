"""Where an error is reached from (issue #15, part 5): the call graph of a repository built
here, across modules and imports, up to a re-exported class, a route and a click command."""

from __future__ import annotations

import json

import pytest

from crawler.catalogue.callers import Graph
from crawler.extract.visitor import extract_file
from tests.helpers import MEANING_CONFIG, MEANING_TREE, jsonl_bytes


def crawl(cli, fixture_repo, tmp_path):
    fixture_repo.commit(MEANING_TREE, tag="v1")
    config = tmp_path / "errcat.toml"
    config.write_text(MEANING_CONFIG)
    out = tmp_path / "out"
    result = cli("crawl", "--repo", fixture_repo.path, "--ref", "v1", "--config", config, "--upstream", "acme", "--out", out)
    assert result.exit_code == 0, result.output
    records = [json.loads(line) for line in jsonl_bytes(out / "acme" / "widgets").splitlines()]
    return {r["message"]["text"]: r["meaning"]["callers"] for r in records}


def shown(callers):
    return [(c["qualname"], c["path"], c["line"], c["entry_point"]) for c in callers]


@pytest.mark.slow
def test_callers_follow_imports_up_to_an_entry_point(fixture_repo, cli, tmp_path):
    callers = crawl(cli, fixture_repo, tmp_path)
    # check_size <- core.build (an import) <- Engine.start (pkg re-exports Engine: a library entry point)
    assert shown(callers["size must be at least 0, got {size}"]) == [
        ("build", "pkg/core.py", 6, None),
        ("Engine.start", "pkg/api.py", 6, "library"),
    ]
    # through a module alias (`from . import config as cfg`; cfg.check_name(...))
    assert shown(callers["name is required for a widget"])[0] == ("build", "pkg/core.py", 7, None)
    # a route and a click command, nearest first by place
    assert shown(callers["route size over one hundred"]) == [
        ("main", "pkg/cli.py", 8, "cli"),
        ("create", "pkg/server.py", 13, "route"),
    ]


@pytest.mark.slow
def test_a_call_the_graph_cannot_resolve_is_no_edge(fixture_repo, cli, tmp_path):
    callers = crawl(cli, fixture_repo, tmp_path)
    names = {c["qualname"] for c in callers["size must be at least 0, got {size}"]}
    assert "mystery" not in names  # obj.check_size(...): obj's type is unknown
    assert "lonely" not in names  # check_size(...) with no import of it: a NameError, not a call
    assert callers["lonely failure that no test reproduces"] == []  # nothing calls lonely


def test_a_local_name_shadows_an_import():
    code = b"from pkg.config import check_size\n\ndef f(check_size):\n    return check_size(1)\n\ndef g():\n    check_size = print\n    check_size(2)\n"
    graph = Graph([extract_file("pkg/x.py", code), extract_file("pkg/config.py", b"def check_size(s):\n    return s\n")])
    assert graph.callers.get("pkg.config.check_size") is None


@pytest.mark.slow
def test_errors_on_the_same_call_path_are_the_most_related(fixture_repo, cli, tmp_path):
    fixture_repo.commit(MEANING_TREE, tag="v1")
    config = tmp_path / "errcat.toml"
    config.write_text(MEANING_CONFIG)
    out = tmp_path / "out"
    assert cli("crawl", "--repo", fixture_repo.path, "--ref", "v1", "--config", config, "--upstream", "acme", "--out", out).exit_code == 0
    records = {r["message"]["text"]: r for r in map(json.loads, jsonl_bytes(out / "acme" / "widgets").splitlines())}
    # check_size's caller build raises its own error: it comes before check_size's module neighbours
    related = records["size must be at least 0, got {size}"]["related"]
    assert (related[0]["title"], related[0]["reason"].split(";")[0]) == ("build refuses the name x", "raised by a caller")
    # and from build, what the functions it calls raise
    below = [(r["title"], r["reason"].split(";")[0]) for r in records["build refuses the name x"]["related"]][:2]
    assert sorted(below) == [
        ("name is required for a widget", "raised by a function it calls"),
        ("size must be at least 0, got {size}", "raised by a function it calls"),
    ]


_BASE = b"from pkg.v1 import BaseV1\n\nBase = BaseV1\n"
_CONNECTORS = b"""
class BaseV1:
    def __init__(self, config):
        self.config = config

    def start(self):
        raise NotImplementedError


class Nixl(BaseV1):
    def __init__(self, config):
        if config is None:
            raise ValueError("nixl needs a config")

    def start(self):
        raise RuntimeError("nixl start failed")


class Quiet(BaseV1):
    pass
"""
_FACTORY = b"""
from pkg.base import Base
from pkg.v1 import Nixl


class Factory:
    _registry = {}

    @classmethod
    def get_class(cls, name: str) -> "type[Base]":
        return cls._registry[name]()

    @classmethod
    def create(cls, config, name):
        connector_cls = cls.get_class(name)
        return connector_cls(config)


def run(connector: Base | None, make: type[Base]):
    connector.start()
    make(None)


def rebound(make: type[Base]):
    make = print
    make("no constructor")


def built():
    n = Nixl(None)
    n.start()
"""


def test_a_call_through_a_registry_getter_or_a_typed_parameter_reaches_every_subclass():
    graph = Graph([extract_file("pkg/base.py", _BASE), extract_file("pkg/v1.py", _CONNECTORS), extract_file("pkg/factory.py", _FACTORY)])
    callers = {fq: sorted(c for c, _, _ in edges) for fq, edges in graph.callers.items()}
    # connector_cls = cls.get_class(name) (-> type[Base], Base an alias of BaseV1); connector_cls(config)
    # and make(None) (make: type[Base]) run BaseV1's constructor or a subclass's own
    assert callers["pkg.v1.Nixl.__init__"] == ["pkg.factory.Factory.create", "pkg.factory.built", "pkg.factory.run"]
    assert callers["pkg.v1.BaseV1.__init__"] == ["pkg.factory.Factory.create", "pkg.factory.run"]
    # connector.start() (connector: Base | None) runs the base's method or an override
    assert callers["pkg.v1.BaseV1.start"] == ["pkg.factory.run"]
    assert callers["pkg.v1.Nixl.start"] == ["pkg.factory.built", "pkg.factory.run"]  # (n = Nixl(None): an instance)
    # a name bound to something else is no longer what its annotation said
    assert not any("rebound" in c for cs in callers.values() for c in cs)
