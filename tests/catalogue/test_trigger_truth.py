"""Triggers that say only what the code says (an audit of vLLM's pages found each of these false):
a ``while True:`` is no condition ("when True is true"), a set's ``<=`` is not an order ("is
greater than" for "not a subset"), a site in a loop or a ``for`` loop's ``else`` is not raised
"whenever" its function is called, and a Rust ``bail!`` under an ``if``, a ``match`` arm, a
``let ... else`` or a closure is raised only there, while a declared Rust error variant is not
"called". Fixture repositories crawled through the real CLI."""

from __future__ import annotations

import gzip
import json

import pytest
from helpers import crawl_meaning_upstream

from crawler.catalogue.phrasing import conditions, fix_for

LOOPS = """
def poll(sock):
    while True:
        frames = sock.recv()
        if len(frames) != 2:
            raise ValueError("bad frame count")


def serve(sock):
    while True:
        try:
            sock.handle()
        except OSError as e:
            raise RuntimeError("socket handling failed") from e


def parse(text, filters):
    for key in filters:
        if key in text:
            return key
    else:
        raise ValueError("no filter in the text")


def restore(pids):
    for pid in pids:
        raise RuntimeError("captured PID is already occupied")


def check_keys(criteria):
    if not criteria.keys() <= {"true", "false"}:
        raise ValueError("criteria must hold only true and false")
    if set(criteria) < {"true"}:
        raise ValueError("criteria lack false")
"""


@pytest.mark.slow
def test_python_triggers_say_nothing_false_of_loops_and_sets(fixture_repo, cli, tmp_path):
    records = crawl_meaning_upstream(fixture_repo, cli, tmp_path, {"pkg/__init__.py": "", "pkg/loops.py": LOOPS})
    said = {r["message"]["text"]: r["meaning"] for r in records}
    # a ``while True:`` is no condition; what is under it still is
    assert said["bad frame count"]["trigger"] == "Raised in `poll`, when `len(frames)` is not 2."
    assert said["socket handling failed"]["trigger"] == "Raised in `serve`, in its loop `while True`, while handling `OSError as e`."
    # the ``else`` of a ``for`` runs only when the loop found nothing to return for
    assert said["no filter in the text"]["trigger"] == "Raised in `parse`, after its loop over `filters` ran to its end (no `break`)."
    # a raise in a loop's body is reached only for an item, not whenever the function runs
    assert said["captured PID is already occupied"]["trigger"] == "Raised in `restore`, in its loop over `pids`."
    # a set's ``<=`` is "is a subset of", and its negation is no other order
    assert said["criteria must hold only true and false"]["trigger"] == "Raised in `check_keys`, when `criteria.keys() <= {'true', 'false'}` is false."
    assert said["criteria lack false"]["trigger"] == "Raised in `check_keys`, when `set(criteria)` is a proper subset of `{'true'}`."
    assert all(m["fix"] is None for m in said.values())


def test_sets_are_no_order_for_the_fix_either():
    names = {"criteria": "`criteria`"}
    assert fix_for("not criteria <= {'a'}", names) is None and fix_for("criteria > {'a'}", names) is None
    assert fix_for("criteria > 3", names) == "set `criteria` to at most 3"  # numbers still are
    assert conditions(["not n <= 3"], {}, []) == "`n` is greater than 3"
    assert conditions(["True", "1", "x"], {}, ["while True"]) == "`x` is set"


CONFIG = """
[upstreams.acme]
url = "https://github.com/acme/widgets"
include = ["pkg/**/*.py"]
kinds = ["raise", "native"]
native = ["rust/**"]
"""

MAIN_RS = r"""
#[derive(Debug, thiserror::Error)]
pub enum ServeError {
    #[error("the dispatcher closed")]
    DispatcherClosed,
}

pub fn run(args: Args, reason: Reason) -> anyhow::Result<()> {
    if args.local == Some(0) {
        if args.headless {
            bail!("cannot combine headless with local 0");
        }
    }
    let Some(port) = args.port else {
        bail!("a port is needed");
    };
    for origin in &args.origins {
        origin.parse::<HeaderValue>().map_err(|e| anyhow::anyhow!("invalid origin {origin:?}: {e}"))?;
    }
    match reason {
        Reason::Signal => Ok(()),
        Reason::Exited(status) => Err(anyhow!("engine exited with status {status}")),
    }
}
"""


@pytest.mark.slow
def test_rust_triggers_read_ifs_matches_let_else_and_closures(fixture_repo, cli, tmp_path):
    config = tmp_path / "errcat.toml"
    config.write_text(CONFIG, encoding="utf-8")
    fixture_repo.commit({"pkg/__init__.py": "", "rust/src/main.rs": MAIN_RS}, tag="v1")
    out = tmp_path / "out"
    result = cli("crawl", "--repo", fixture_repo.path, "--ref", "v1", "--upstream", "acme", "--config", config, "--out", out)
    assert result.exit_code == 0, result.output
    dataset = out / "acme" / "widgets"
    assert cli("validate", dataset).exit_code == 0
    rows = [json.loads(line) for line in gzip.decompress((dataset / "errors.jsonl.gz").read_bytes()).splitlines()]
    said = {r["message"]["text"]: r["meaning"]["trigger"] for r in rows}
    assert said == {
        "the dispatcher closed": "Raised wherever the code builds the error variant `ServeError::DispatcherClosed`.",
        "cannot combine headless with local 0": "Raised in `run`, when `args.local` is `Some(0)` and `args.headless` is set.",
        "a port is needed": "Raised in `run`, when `!(let Some(port) = args.port)`.",
        "invalid origin {origin:?}: {e}": "Raised in `run`, when `origin.parse::<HeaderValue>().map_err` calls the closure it is given.",
        "engine exited with status {status}": "Raised in `run`, when `match reason: case Reason::Exited(status)`.",
    }
    # the page's "how the code gets there" shows the loop the closure's site is in
    closure = next(r for r in rows if r["message"]["text"].startswith("invalid origin"))
    assert closure["sites"][0]["facts"]["loops"] == ["for origin in &args.origins"]


ENVS = """
import os

environment_variables = {
    "ACME_PACK": lambda: os.getenv("ACME_PACK", "strict"),
}
"""

PLACE = """
import os

from . import envs


def place(world_size, bundles):
    pack_strategy = envs.ACME_PACK
    if pack_strategy == "span" and len(bundles) > world_size:
        raise ValueError("collected bundles exceed the world size")


def pick():
    mode = os.environ.get("ACME_MODE")
    if mode not in ("a", "b"):
        raise ValueError("unknown mode")


def shadowed(pack_strategy):
    if pack_strategy == "span":
        raise ValueError("a parameter of the same name is no variable")
    pack_strategy = envs.ACME_PACK
"""


@pytest.mark.slow
def test_a_local_holding_an_environment_variable_stands_for_it(fixture_repo, cli, tmp_path):
    records = crawl_meaning_upstream(fixture_repo, cli, tmp_path, {"pkg/__init__.py": "", "pkg/envs.py": ENVS, "pkg/place.py": PLACE})
    said = {r["message"]["text"]: r["meaning"] for r in records}
    bundles = said["collected bundles exceed the world size"]
    assert [(k["kind"], k["name"], k["path"]) for k in bundles["knobs"]] == [("env_var", "ACME_PACK", "pkg/envs.py")]
    assert bundles["trigger"] == ("Raised in `place`, when `ACME_PACK` is `'span'` and `len(bundles)` is greater than `world_size`.")
    mode = said["unknown mode"]
    assert [k["name"] for k in mode["knobs"]] == ["ACME_MODE"]
    assert mode["fix"] == "Set `ACME_MODE` to one of `('a', 'b')`."
    # set only after the check: the name was the parameter's there
    assert said["a parameter of the same name is no variable"]["knobs"] == []


SAMPLING = """
from dataclasses import dataclass


@dataclass
class SamplingParams:
    logprob_token_ids: list | None = None
    prompt_logprobs: int | None = None

    def _verify(self, max_logprobs):
        n = len(self.logprob_token_ids or [])
        if n > max_logprobs:
            raise ValueError("too many logprob token ids")
        if self.prompt_logprobs is not None and not self.prompt_logprobs <= max_logprobs:
            raise ValueError("Requested prompt logprobs exceed the max")
"""


@pytest.mark.slow
def test_a_name_is_not_found_inside_a_longer_one(fixture_repo, cli, tmp_path):
    """``n = len(self.logprob_token_ids)`` made every check whose text has a word starting with
    "n" (``not``, ``num_prompt_logprobs``) a check on ``logprob_token_ids``."""
    records = crawl_meaning_upstream(fixture_repo, cli, tmp_path, {"pkg/__init__.py": "", "pkg/sampling.py": SAMPLING})
    said = {r["message"]["text"]: r["meaning"] for r in records}
    assert [k["name"] for k in said["too many logprob token ids"]["knobs"]] == ["logprob_token_ids"]
    assert [k["name"] for k in said["Requested prompt logprobs exceed the max"]["knobs"]] == ["prompt_logprobs"]


REGISTRY = """
from dataclasses import dataclass, field


@dataclass
class Registry:
    entries: dict[str, str] = field(default_factory=dict)

    def register(self, name, value):
        if name in self.entries:
            raise ValueError("already registered")
        self.entries[name] = value


@dataclass
class ServerConfig:
    allowed_origins: list[str] = field(default_factory=list)

    def __post_init__(self):
        self.allowed_origins.append("localhost")

    def check(self, origin):
        if origin not in self.allowed_origins:
            raise ValueError("origin not allowed")
"""


def test_a_collection_the_class_fills_itself_is_no_setting(fixture_repo, cli, tmp_path):
    """A registry's dict of registrations (vLLM's renderer, tokenizer and LoRA resolver registries)
    was a "setting" of the registry; one a config only completes while it is set up stays one."""
    records = crawl_meaning_upstream(fixture_repo, cli, tmp_path, {"pkg/__init__.py": "", "pkg/registry.py": REGISTRY})
    said = {r["message"]["text"]: r["meaning"] for r in records}
    assert said["already registered"]["knobs"] == []
    assert said["already registered"]["trigger"] == "Raised in `Registry.register`, when `name` is one of `self.entries`."
    assert [k["name"] for k in said["origin not allowed"]["knobs"]] == ["allowed_origins"]
