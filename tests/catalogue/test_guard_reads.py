"""Who acts from what the check reads (#32 item 1): each check's own condition traced to where
its values come from (``extract.guard_reads``: a local, a parameter, the object's state and where
the class assigns it, a config, a probe), on a fixture upstream whose code is written here,
crawled through the real CLI; and the trace itself on code written here."""

from __future__ import annotations

import pytest
from helpers import meaning_records

from crawler.extract.guard_reads import ClassText, FunctionText, trace

CONFIG = """
from dataclasses import dataclass


@dataclass
class ParallelConfig:
    data_parallel_size: int = 1

    def split(self, ubatch_slices):
        if self.data_parallel_size > 1:
            assert ubatch_slices is None
        assert self.data_parallel_size < 64
"""

ARGS = """


def get_kwargs(cls):
    return {}


def add_cli_args(parser):
    kw = get_kwargs(ParallelConfig)
    parser.add_argument("--data-parallel-size", **kw["data_parallel_size"])
"""

RUNNER = """
import sys

from . import envs

try:
    import triton
    HAS_TRITON = True
except ImportError:
    HAS_TRITON = False


def get_tensor_model_parallel_world_size():
    return 1


class Runner:
    def __init__(self, limit, extra_config):
        self.extra_config = extra_config
        self.limit = limit
        self.reserved = envs.WIDGETS_RESERVED_CPUS
        self._attached = False
        self._heap = []
        self._multicast = None

    def get_model(self):
        if not hasattr(self, "model"):
            raise ValueError("Cannot get model before model has been initialized")
        return self.model

    def attach(self):
        if self._attached:
            raise RuntimeError("already attached to a peer")
        self._attached = True

    def pop(self):
        if not self._heap:
            raise IndexError("pop from an empty heap")
        return self._heap.pop()

    def offload(self):
        cpu_bytes = self.extra_config.get("cpu_bytes_to_use")
        if not cpu_bytes:
            raise ValueError("cpu_bytes_to_use must be given")

    def cores(self, total):
        if total < self.reserved:
            raise ValueError("fewer cores than are kept back")

    def grow(self, n):
        if n > self.limit:
            raise ValueError("grown past the limit")

    def two_shot(self):
        if self._multicast is None:
            raise RuntimeError("the two-shot all-reduce needs multicast memory")

    def pinned(self):
        if self.backend_buffers is None:
            raise RuntimeError("buffers were never made")


def host_order():
    if sys.byteorder != "little":
        raise RuntimeError("this conversion needs a little-endian host")


def on_gfx950():
    return False


def mega_moe(head_size):
    if not on_gfx950():
        raise ValueError("the mega MoE kernels run on one GPU generation only")
    if not (on_gfx950() and head_size in (64, 128)):
        raise ValueError("the segmented kernels need this GPU generation and a head size of 64 or 128")


def ngram():
    if not HAS_TRITON:
        raise RuntimeError("ngram drafting needs the GPU kernels")


class Attention:
    def __init__(self, num_heads):
        tp_size = get_tensor_model_parallel_world_size()
        assert num_heads % tp_size == 0
        self.num_local_heads = num_heads // tp_size


class Communicator:
    def __init__(self, world_size, comm):
        self.world_size = world_size
        self.comm = comm

    def broadcast(self, tensor):
        if self.world_size == 1:
            return tensor
        if self.comm is None:
            raise ValueError("no communicator was made")
        return self.comm.broadcast(tensor)


def gemm(hidden_states, weight):
    if hidden_states.dim() != 2 or weight.dim() != 2:
        raise ValueError("hidden_states and weight must be 2D tensors")
    if not weight.is_contiguous():
        raise ValueError("the weight does not support a strided layout")

"""


PICTURES = """
def to_picture(image_array):
    if image_array.ndim not in (2, 3):
        raise ValueError("image arrays must have 2 or 3 dimensions")
"""

FILES = {
    "pkg/__init__.py": "",
    "pkg/envs.py": "import os\nWIDGETS_RESERVED_CPUS = int(os.environ.get('WIDGETS_RESERVED_CPUS', '1'))\n",
    "pkg/config.py": CONFIG,
    "pkg/arg_utils.py": ARGS,
    "pkg/runner.py": RUNNER,
    "pkg/processors/__init__.py": "",
    "pkg/processors/pictures.py": PICTURES,
}


@pytest.fixture(scope="module")
def records(crawl_once) -> list[dict]:
    return meaning_records(crawl_once, FILES)


def action(records: list[dict], start: str) -> dict:
    """The action of the one record whose message (or, with none, ``kind qualname``) starts so."""
    (got,) = [r["meaning"]["action"] for r in records if (r["message"]["text"] or f"{r['kind']} {r['location']['qualname']}").startswith(start)]
    return got


def test_a_check_of_the_objects_own_state_is_internal(records):
    for text in ("Cannot get model before", "already attached to a peer", "pop from an empty heap"):
        got = action(records, text)
        assert got["actor"] == "internal" and "holds or computes" in got["basis"], (text, got)
        assert "cannot tell" not in got["says"] and "likely a bug" in got["says"]


def test_a_check_of_the_tensors_an_op_is_passed_is_internal(records):
    got = action(records, "hidden_states and weight must be 2D")
    assert got["actor"] == "internal" and "`hidden_states.dim()`" in got["basis"]


def test_a_message_naming_what_is_not_supported_or_the_media_processed_is_not_called_internal(records):
    for text in ("the weight does not support a strided layout", "image arrays must have 2 or 3 dimensions"):
        got = action(records, text)
        assert "holds or computes" not in got["basis"], (text, got)


def test_a_state_that_holds_what_the_hardware_gives_is_the_environment(records):
    assert action(records, "the two-shot all-reduce needs multicast memory")["actor"] == "environment"


def test_a_local_read_from_a_config_is_a_setting(records):
    got = action(records, "cpu_bytes_to_use must be given")
    assert got["actor"] == "setting" and "`self.extra_config`" in got["says"]


def test_a_state_the_class_assigns_from_an_environment_variable_is_a_setting(records):
    got = action(records, "fewer cores than are kept back")
    assert got["actor"] == "setting" and "`envs.WIDGETS_RESERVED_CPUS`" in got["says"]


def test_a_state_assigned_from_a_parameter_or_never_assigned_is_not_the_codes_own(records):
    for text in ("grown past the limit", "buffers were never made"):
        got = action(records, text)
        assert got["actor"] != "internal" or "cannot tell" in got["says"], (text, got)


def test_a_probe_of_the_machine_or_an_optional_import_is_the_environment(records):
    for text in ("this conversion needs a little-endian host", "ngram drafting needs the GPU kernels", "the mega MoE kernels run on one"):
        got = action(records, text)
        assert got["actor"] == "environment", (text, got)
    assert action(records, "the segmented kernels need")["actor"] != "environment"  # (the probe is one condition of two)


def test_an_assert_on_the_ranks_a_size_must_divide_is_the_parallel_setting(records):
    got = action(records, "assert Attention.__init__")
    assert got["actor"] == "setting" and "the tensor parallel size you set" in got["says"]


def test_an_assert_a_setting_only_selects_is_not_that_setting(records):
    selects, tests = sorted((r for r in records if r["location"]["qualname"] == "ParallelConfig.split"), key=lambda r: r["location"]["line"])
    for record in (selects, tests):  # (the guard around the first reads the option too)
        assert "--data-parallel-size" in {k["name"] for k in record["meaning"]["knobs"]}
    assert selects["meaning"]["action"]["actor"] == "internal"
    assert tests["meaning"]["action"]["actor"] == "setting" and "`--data-parallel-size`" in tests["meaning"]["action"]["says"]


def test_the_trace_follows_locals_parameters_and_the_state_a_class_assigns():
    cls = """class Spec:
    def __init__(self, config, n):
        self.n = n
        self.block = config.cache_config.block_size
        self.ready = False

    def check(self, q, limit):
        width = q.shape[-1] * 2
        if width > limit:
            raise ValueError("too wide")
        if self.block > 4 and not self.ready:
            raise ValueError("x")
        if get_tp_group().world_size > 1 and get_pp_group().is_first_rank and self._pid(limit):
            raise ValueError("y")
"""
    text, klass = FunctionText(cls, 1), ClassText(cls, 1)
    signature = "def make(\n    self, name: str, meta: Meta\n) -> Any:\n    if isinstance(meta, A):\n        return 1\n    raise ValueError(meta)\n"
    assert trace(FunctionText(signature, 1), 6, "not (isinstance(meta, A))") == {"param": ["meta"]}  # (a signature over lines)
    assert trace(text, 10, "width > limit", klass) == {"param": ["limit"], "tensor": ["q.shape"]}
    assert trace(text, 12, "self.block > 4 and not self.ready", klass) == {"config": ["config.cache_config.block_size"], "state": ["self.ready"]}
    assert trace(text, 12, "self.n", klass) == {"param": ["n"]}
    assert trace(text, 12, "not (", klass) == {}  # (a condition that does not parse reads nothing)
    got = trace(text, 14, "get_tp_group().world_size > 1 and get_pp_group().is_first_rank and self._pid(limit)", klass)
    assert got == {"other": ["get_pp_group()"], "parallel": ["get_tp_group().world_size"], "param": ["limit"], "state": ["self"]}


def test_a_rank_count_in_a_guard_around_a_check_is_not_what_it_tests(records):
    got = action(records, "no communicator was made")
    assert got["actor"] != "setting", got
