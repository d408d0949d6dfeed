"""Settings the knob readers reach only a step further (#32 item 3): a setting behind a property
(``self.parallel_config.use_ray`` is the backend option), behind a local holding the property,
an environment variable a property returns through the project's ``envs`` table, a request's
fields read in a serving method; and no setting of the user's where none exists (a field of an
object the code builds is not one)."""

from __future__ import annotations

import pytest
from helpers import crawl_meaning_upstream

ENVS = """
import os

environment_variables = {
    "PKG_USE_V2": lambda: None if "PKG_USE_V2" not in os.environ else os.environ["PKG_USE_V2"] == "1",
}
"""

CONFIG = """
from dataclasses import dataclass

from pkg import envs


@dataclass
class ParallelConfig:
    backend: str = "mp"
    world_size: int = 1

    @property
    def use_ray(self) -> bool:
        return self.backend == "ray"


@dataclass
class TopConfig:
    parallel_config: ParallelConfig | None = None

    @property
    def use_v2(self) -> bool:
        value = envs.PKG_USE_V2
        if value is not None:
            return value
        return False

    def check(self):
        if self.parallel_config.use_ray and self.parallel_config.world_size > 8:
            raise ValueError("ray cannot take more than 8 workers")
        if self.use_v2:
            raise ValueError("the v2 runner is not ready")

    def start_worker(self):
        use_ray = self.parallel_config.use_ray
        if use_ray:
            raise RuntimeError("this worker does not run under ray")
"""

#: the options ``get_kwargs`` makes of ParallelConfig's fields
FLAGS = {"--backend": "backend", "--world-size": "world_size"}
ARGS = "from .config import ParallelConfig\n\ndef get_kwargs(cls):\n    return {}\n\ndef add_cli_args(parser):\n" + "".join(
    f"    kw = get_kwargs(ParallelConfig)\n    parser.add_argument({flag!r}, **kw[{name!r}])\n" for flag, name in FLAGS.items()
)

#: (pkg/sampling.py is the request models' file of the fixture upstream)
SAMPLING = """
from pydantic import BaseModel


class CompletionRequest(BaseModel):
    stream: bool = False
    use_beam_search: bool = False
    stop: list[str] | None = None


class CompletionResponse(BaseModel):
    status: str = "ok"
"""

SERVING = """
from pkg.sampling import CompletionRequest


class Serving:
    async def create(self, request: CompletionRequest):
        if request.stream and request.use_beam_search:
            raise ValueError("beam search does not stream")
        if request.stop and len(request.stop) > 4:
            raise ValueError("at most 4 stop strings")


class Scheduler:
    def finish(self, request):
        if request.status == "done":
            raise RuntimeError("the request is already done")


def on_error(req, exc):
    if req.stream is None:
        raise RuntimeError(f"failed while serving {req.url}")
"""

SHAPES = """
from dataclasses import dataclass


@dataclass
class FieldSpec:
    dim: int = 0

    def reduce(self, batch):
        if self.dim != 0:
            raise ValueError("dim must be 0 to reduce a nested list")
"""


@pytest.fixture
def meanings(fixture_repo, cli, tmp_path) -> dict[str, dict]:
    records = crawl_meaning_upstream(
        fixture_repo,
        cli,
        tmp_path,
        {
            "pkg/__init__.py": "",
            "pkg/envs.py": ENVS,
            "pkg/config.py": CONFIG,
            "pkg/arg_utils.py": ARGS,
            "pkg/sampling.py": SAMPLING,
            "pkg/serving.py": SERVING,
            "pkg/shapes.py": SHAPES,
        },
    )
    return {r["message"]["text"]: r["meaning"] for r in records}


def names(meaning: dict) -> list[tuple[str, str]]:
    return [(k["kind"], k["name"]) for k in meaning["knobs"]]


def test_a_setting_behind_a_property_is_the_option_the_property_reads(meanings):
    assert ("cli_flag", "--backend") in names(meanings["ray cannot take more than 8 workers"])
    assert ("cli_flag", "--world-size") in names(meanings["ray cannot take more than 8 workers"])


def test_a_local_holding_a_property_is_the_option_it_reads(meanings):
    assert ("cli_flag", "--backend") in names(meanings["this worker does not run under ray"])


def test_an_environment_variable_a_property_returns(meanings):
    assert ("env_var", "PKG_USE_V2") in names(meanings["the v2 runner is not ready"])


def test_request_fields_read_in_a_serving_method(meanings):
    assert {("request_param", "stream"), ("request_param", "use_beam_search")} <= set(names(meanings["beam search does not stream"]))
    assert ("request_param", "stop") in names(meanings["at most 4 stop strings"])
    # (``req`` is as often the web framework's request: its ``stream`` is no field of the user's)
    assert names(meanings["failed while serving {req.url}"]) == []
    # (a field only a response model declares is no field of a request)
    assert names(meanings["the request is already done"]) == []


def test_a_field_of_an_object_the_code_builds_is_no_setting_of_the_users(meanings):
    # (the join keeps it as a field the check reads; the page does not call it the user's setting)
    action = meanings["dim must be 0 to reduce a nested list"]["action"]
    assert action["actor"] != "setting" and "`dim`" not in action["says"]
    assert not any("`dim`" in step for step in action["steps"])
