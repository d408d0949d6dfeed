"""An assert with no message is an entry keyed by its condition (and its module), and the traceback
a user pastes of one finds it from its last frame: the file, the function and the code line that
asserts the condition, never an empty message. The real pastes are the lines vLLM users quoted in
their reports (links beside each), against a fixture repository holding those very checks at
other lines than the reports show (the code moved since, as it does between releases)."""

from __future__ import annotations

import json

import pytest

from tests.helpers import jsonl_bytes

pytestmark = pytest.mark.slow

TREE = {
    "vllm/__init__.py": "",
    "vllm/v1/__init__.py": "",
    "vllm/v1/core/__init__.py": "",
    "vllm/v1/core/sched/__init__.py": "",
    "vllm/v1/core/sched/scheduler.py": """
        class Scheduler:
            def schedule(self):
                num_new_tokens = self.next()
                assert num_new_tokens > 0
                num_computed_tokens = self.computed()
                assert num_computed_tokens <= self.request.num_tokens
                assert (
                    self.ready
                    and num_new_tokens
                )
                return num_new_tokens

            def other(self):
                assert  num_new_tokens   > 0
        """,
    "vllm/v1/worker/__init__.py": "",
    "vllm/v1/worker/gpu_model_runner.py": """
        class GPUModelRunner:
            def _prepare_inputs(self, scheduler_output):
                total_num_scheduled_tokens = scheduler_output.total_num_scheduled_tokens
                assert total_num_scheduled_tokens > 0
                num_reqs = self.input_batch.num_reqs
                assert num_reqs > 0
                return num_reqs

            def check(self, num_new_tokens):
                assert num_new_tokens > 0
        """,
    "vllm/utils/__init__.py": "",
    "vllm/utils/mem_utils.py": """
        class MemorySnapshot:
            def __post_init__(self) -> None:
                if self.device is None:
                    device_fn = current_platform.current_device
                    assert device_fn is not None
                    self.device_ = device_fn()
        """,
}

#: llm-d-router#157 (vLLM's scheduler, as its log printed it): https://github.com/llm-d/llm-d-router/issues/157
SCHEDULER = """ERROR 05-29 07:34:21 [core.py:491] Traceback (most recent call last):
ERROR 05-29 07:34:21 [core.py:491]   File "/workspace/vllm/vllm/v1/core/sched/scheduler.py", line 386, in schedule
ERROR 05-29 07:34:21 [core.py:491]     assert num_new_tokens > 0
ERROR 05-29 07:34:21 [core.py:491] AssertionError"""
#: The frame vllm-omni#5269 reports (gpu_model_runner.py:1927 in _prepare_inputs on v0.25.0):
#: https://github.com/vllm-project/vllm-omni/pull/5269
RUNNER = """Traceback (most recent call last):
  File "/usr/local/lib/python3.12/dist-packages/vllm/v1/worker/gpu_model_runner.py", line 1927, in _prepare_inputs
    assert total_num_scheduled_tokens > 0
           ^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^
AssertionError"""
#: vllm-ascend#8488, "AssertionError: assert device_fn is not None" in MemorySnapshot.__post_init__
#: (vLLM 0.18 and 0.19): https://github.com/vllm-project/vllm-ascend/issues/8488
MEMORY = """(Worker_TP0 pid=903) ERROR 04-20 11:39:59 [multiproc_executor.py:962]   File "/vllm-workspace/vllm/vllm/utils/mem_utils.py", line 120, in __post_init__
(Worker_TP0 pid=903) ERROR 04-20 11:39:59 [multiproc_executor.py:962]     assert device_fn is not None
(Worker_TP0 pid=903) ERROR 04-20 11:39:59 [multiproc_executor.py:962]            ^^^^^^^^^^^^^^^^^^^^^
(Worker_TP0 pid=903) ERROR 04-20 11:39:59 [multiproc_executor.py:962] AssertionError"""


@pytest.fixture(scope="module")
def data(crawl_once):
    return crawl_once(TREE, "--name", "vllm-project/vllm", "--include", "vllm/**/*.py") / "vllm-project" / "vllm"


def _records(data) -> dict[str, dict]:
    """By title; of two entries with one title (one check in two modules), the scheduler's."""
    records = sorted(map(json.loads, jsonl_bytes(data).splitlines()), key=lambda r: "sched" in r["location"]["path"])
    return {r["title"]: r for r in records}


def _match(cli, data, paste: str) -> dict:
    result = cli("match", "--data", data, "--json", paste)
    assert result.exit_code in (0, 1) and result.stdout, result.output  # (1: no match)
    return json.loads(result.stdout)


def test_a_bare_assert_is_an_entry_keyed_by_its_condition_in_its_module(data):
    records = _records(data)
    entry = records["assert num_new_tokens > 0"]
    assert entry["kind"] == "assert" and entry["keyed_by"] == "condition" and entry["exception"]["name"] == "AssertionError"
    assert entry["message"]["opaque"] and entry["message"]["text"] == ""
    # the same check twice in one module is one entry (white space aside); in another module, another
    assert [(s["qualname"], s["condition"]) for s in entry["sites"]] == [
        ("Scheduler.schedule", "num_new_tokens > 0"),
        ("Scheduler.other", "num_new_tokens > 0"),
    ]
    every = [json.loads(line) for line in jsonl_bytes(data).splitlines()]
    same = [r for r in every if r["sites"][0]["condition"] == "num_new_tokens > 0"]
    assert sorted(r["location"]["path"] for r in same) == ["vllm/v1/core/sched/scheduler.py", "vllm/v1/worker/gpu_model_runner.py"]
    spread = records["assert self.ready and num_new_tokens"]
    assert spread["sites"][0]["facts"]["guards"][-1].startswith("not (self.ready")
    assert all(r["keyed_by"] == "message" for r in records.values() if r["kind"] != "assert")


def test_its_id_keeps_when_lines_move_and_changes_with_the_condition(crawl_once, data):
    moved = {
        **TREE,
        "vllm/v1/core/sched/scheduler.py": "\n        # a comment\n\n"
        + TREE["vllm/v1/core/sched/scheduler.py"].replace(
            "assert num_computed_tokens <= self.request.num_tokens", "assert num_computed_tokens < self.request.num_tokens"
        ),
    }
    again = _records(crawl_once(moved, "--name", "vllm-project/vllm", "--include", "vllm/**/*.py") / "vllm-project" / "vllm")
    before = _records(data)
    assert again["assert num_new_tokens > 0"]["id"] == before["assert num_new_tokens > 0"]["id"]
    assert again["assert num_new_tokens > 0"]["location"]["line"] != before["assert num_new_tokens > 0"]["location"]["line"]
    assert "assert num_computed_tokens <= self.request.num_tokens" not in again
    assert again["assert num_computed_tokens < self.request.num_tokens"]["id"] != before["assert num_computed_tokens <= self.request.num_tokens"]["id"]


@pytest.mark.parametrize(
    ("paste", "title"),
    [
        (SCHEDULER, "assert num_new_tokens > 0"),
        (RUNNER, "assert total_num_scheduled_tokens > 0"),
        (MEMORY, "assert device_fn is not None"),
    ],
)
def test_a_real_traceback_of_a_bare_assert_finds_its_entry_at_full_strength_from_its_frame(cli, data, paste, title):
    got = _match(cli, data, paste)
    assert [m["title"] for m in got["matches"]] == [title]  # the one check the frame's line asserts, not its function's others
    best = got["matches"][0]
    assert best["strength"] == "match" and best["match"] == "full" and best["site_match"] and not best["tied"]


def test_a_frame_asserting_another_condition_is_not_this_entry(cli, data):
    got = _match(cli, data, RUNNER.replace("total_num_scheduled_tokens > 0", "total_num_scheduled_tokens >= 0"))
    assert got["matches"] == []


def test_match_and_the_page_show_the_condition_as_its_message(cli, data):
    entry = _records(data)["assert device_fn is not None"]
    said = cli("match", "--data", data, MEMORY)
    assert f"{entry['id']}  AssertionError (no message): assert device_fn is not None" in said.stdout, said.output
    page = cli("show", entry["id"], "--data", data, "--no-pager", "--color", "never")
    assert page.stdout.startswith("assert device_fn is not None\n")
    message = page.stdout.split("\nMessage\n", 1)[1].split("\n\n", 2)  # the page model's Message section: its code block
    assert "assert device_fn is not None" in "\n".join(message[:2]), page.stdout
    # the tracker is searched for the check, as users title such reports ("AssertionError: assert device_fn is not None")
    assert "issues?q=%22assert%20device_fn%20is%20not%20None%22" in page.stdout
