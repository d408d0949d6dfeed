"""Who acts, the patterns of round 42's blind seeds 62-63 (#32 items 1 and 3): a fixture upstream
whose code is written here, crawled through the real CLI, read back as its records'
``meaning.action``.

- a Rust error variant with a source field (``#[source]``, ``#[from]``) wraps another error: that
  error is the cause, and its own page says whose move it is (a variant with a plain message field
  is still the project's own check);
- an assert that tensors sit on a device (a.device.type == "cuda") tests where the project's own
  code put them, not the machine: internal (an assert on the platform itself is still the machine).
"""

from __future__ import annotations

import json

import pytest
from helpers import action_of, jsonl_bytes

RUST_ERRORS = """
use thiserror::Error;

pub type BoxedError = Box<dyn std::error::Error + Send + Sync>;

#[derive(Debug, Error)]
pub enum Error {
    #[error("widget output parsing failed")]
    WidgetOutputParsing {
        #[source]
        error: BoxedError,
    },
    #[error("widget table could not be read")]
    WidgetTable(#[from] std::io::Error),
    #[error("widget stream state is inconsistent: {message}")]
    WidgetStreamInvariant { message: String },
}
"""

KERNELS = """
import torch

from pkg.platforms import current_platform


def widget_scaled_mm(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    assert a.device.type == "cuda" and b.device.type == "cuda"
    return a @ b


def widget_platform_mm(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    assert current_platform.is_cuda()
    return a @ b
"""

FILES = {"rust/src/widgets/src/error.rs": RUST_ERRORS, "pkg/utils/widget_kernels.py": KERNELS}

CONFIG = """
[upstreams.widgets]
url = "https://github.com/acme/widgets"
include = ["rust/**/*.rs", "pkg/**/*.py"]
"""


@pytest.fixture(scope="module")
def records(crawl_once) -> list[dict]:
    out = crawl_once(FILES, "--upstream", "widgets", config=CONFIG)
    return [json.loads(line) for line in jsonl_bytes(out / "acme" / "widgets").splitlines()]


def action(records: list[dict], start: str) -> dict:
    return action_of(records, start)


@pytest.mark.parametrize("start", ["widget output parsing failed", "widget table could not be read"])
def test_a_rust_variant_that_wraps_a_source_error_points_at_that_error(records, start):
    got = action(records, start)
    assert got["actor"] == "internal" and "wraps the error it carries" in got["basis"], got
    assert "Nobody outside" not in got["says"] and "that error is the cause" in got["says"], got
    assert any("look that one up" in step for step in got["steps"]), got["steps"]


def test_a_rust_variant_with_a_plain_message_field_is_the_projects_own_check(records):
    got = action(records, "widget stream state is inconsistent")
    assert got["actor"] == "internal" and "wraps" not in got["basis"], got
    assert "Nobody outside" in got["says"], got


@pytest.mark.parametrize(("function", "actor"), [("widget_scaled_mm", "internal"), ("widget_platform_mm", "environment")])
def test_an_assert_on_the_device_of_its_tensors_is_internal_and_one_on_the_platform_the_machine(records, function, actor):
    got = action(records, f"assert pkg/utils/widget_kernels.py {function}")
    assert got["actor"] == actor, got
    assert ("put its tensors on (`a`, `b`)" in got["basis"]) == (actor == "internal"), got
