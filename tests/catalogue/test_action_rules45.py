"""What to install, and a fix direction that agrees with who acts (s45-rules, #32): a fixture upstream
whose code is written here, crawled through the real CLI, read back as its records' ``meaning``;
beside each rule a near case it must not take.

- a placeholder defined where an optional import failed (in ``except ImportError:`` after the import,
  or in the branch where ``HAS_X`` / ``is_x_available()`` is false) that raises when used is the
  environment's: install the package the import or the probe names (item 4); a function defined
  where the probe is true, and a raise under an ``if`` of the placeholder's own, are not;
- an environment page whose package is missing names what to install: the module the ``try`` around
  it imports, or the name the message gives; with neither, the page says that and where the name is,
  and never "install or upgrade what is missing" (item 3);
- an assert that a config's field is there, when its settings class gives the field a value itself
  whenever none is given, has no fix direction "Set it" (item 2); a field it never fills keeps one;
- a bad value in a function a settings class's config-file loader alone calls is that file's, a
  setting (O33 of s44-judge); one other callers reach too is not decided so;
- a crawl that keeps the source join gives the who-acts a fresh one gives (the field its config fills
  when None was "setting" again on a warm crawl);
- a model's check in the code that builds it or loads its weights asks nothing of the request's inputs
  (its run-time method's still may), and the message's remedy is not cut at "e.g." (seed 67's judge).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner
from helpers import MEANING_TOML, action_of, jsonl_bytes, meaning_records

from crawler.cli.main import main

CONFIG = """
import uuid
from dataclasses import dataclass


def get_kwargs(cls):
    return {}


@dataclass
class GadgetTransferConfig:
    engine_id: str | None = None
    peer_id: str | None = None

    def __post_init__(self) -> None:
        if self.engine_id is None:
            self.engine_id = str(uuid.uuid4())


@dataclass
class VllmConfig:
    gadget_transfer_config: GadgetTransferConfig | None = None
    seed: int = 0
"""

ARGS = """
from pkg.config import VllmConfig, get_kwargs


def add_engine_args(parser):
    kwargs = get_kwargs(VllmConfig)
    parser.add_argument("--gadget-transfer-config", **kwargs["gadget_transfer_config"])
    parser.add_argument("--seed", **kwargs["seed"])
"""

CONNECTOR = """
from dataclasses import dataclass

from pkg.config import VllmConfig


class GadgetConnector:
    def __init__(self, vllm_config: VllmConfig) -> None:
        transfer = vllm_config.gadget_transfer_config
        assert vllm_config.gadget_transfer_config.engine_id is not None, "gadget engine id is unset"
        assert vllm_config.gadget_transfer_config.peer_id is not None, "gadget peer id is unset"
        self.handshake = GadgetHandshake(transfer.engine_id)


@dataclass
class GadgetHandshake:
    engine: str
"""

TRITON = """
from pkg.utils import HAS_TRITON

if HAS_TRITON:
    def fused_gadget(x):
        if x < 0:
            raise ValueError("fused_gadget takes no negative sizes")
        return x
else:
    def _raise_exception(method: str):
        raise NotImplementedError(f"{method} is not implemented as lack of triton.")

    fused_gadget = lambda *args, **kwargs: _raise_exception("fused_gadget")
"""

NUMBA = """
from pkg.utils import is_numba_available

if is_numba_available():
    def _write_patches(frames, out):
        return out
else:
    def _write_patches(*args, **kwargs):
        raise RuntimeError("numba is required for fused gadget preprocessing")


def _check(frames):
    if not is_numba_available():
        raise RuntimeError("fused gadget preprocessing is off")
"""

FLASH = """
from typing import Any

try:
    from gadget_flash import flash_varlen_func
except ImportError:

    def flash_varlen_func(*args: Any, **kwargs: Any) -> Any:
        package = "gadget-flash"
        raise ImportError(f"This platform requires upstream {package} to be installed. Please install {package} first.")

    class GadgetKernel:
        def __init__(self, size: int) -> None:
            if size > 8:
                raise ValueError("gadget kernel size must be at most 8")
            raise ImportError("gadget kernels need the flash extension")
"""

UTILS = """
import importlib.util

HAS_TRITON = importlib.util.find_spec("triton") is not None


def is_numba_available() -> bool:
    return importlib.util.find_spec("numba") is not None


def is_gadgetlib_available() -> bool:
    return importlib.util.find_spec("gadgetlib") is not None
"""

PACKAGES = """
import logging

from pkg.utils import is_gadgetlib_available

logger = logging.getLogger(__name__)


def load_kernels():
    try:
        import gadget_ext._C  # noqa: F401
    except ImportError as e:
        logger.warning("Failed to load the gadget kernels: %r", e)


def load_plugins():
    try:
        import gadget_plugins  # noqa: F401
    except (ImportError, KeyError) as e:
        logger.warning("Failed to load the gadget plugins: %r", e)


def load_own():
    try:
        import pkg._C  # noqa: F401
    except ImportError as e:
        logger.warning("Failed to import from pkg._C: %r", e)


def need_deep(handle):
    if handle is None:
        raise RuntimeError("DeepGadget is not available")


def need_transport(name):
    if not is_gadgetlib_available():
        raise ImportError(f"The GADGETLIB transport requires {name}")


def need_something(spec):
    raise ImportError(f"Cannot load the gadget backend {spec}")
"""

MODEL = """
class GadgetForCausalLM:
    def __init__(self, num_heads: int) -> None:
        if num_heads % 2:
            raise ValueError(f"GadgetLM needs an even number of heads, got {num_heads}")
        self.num_heads = num_heads

    def embed_patches(self, count: int):
        if count > 4:
            raise ValueError(f"A patch count of {count} is not supported")
        return count


def pack_layout(layout: str) -> str:
    if layout == "packed":
        raise ValueError("Gadget heads need contiguous blocks. Use a block-contiguous layout (e.g. LBHNC) on the prefill side.")
    return layout
"""

STORE = """
import json
import os
from dataclasses import dataclass


@dataclass
class GadgetStoreConfig:
    segment_size: int

    @staticmethod
    def from_file(file_path: str) -> "GadgetStoreConfig":
        with open(file_path) as file:
            config = json.load(file)
        return GadgetStoreConfig(segment_size=_parse_size(config.get("segment_size")))

    @staticmethod
    def load_from_env() -> "GadgetStoreConfig":
        return GadgetStoreConfig.from_file(os.environ["GADGET_CONFIG_PATH"])


def _parse_size(value) -> int:
    if not isinstance(value, str):
        raise ValueError(f"Invalid gadget size: {value!r}")
    return int(value)


def _parse_count(value) -> int:
    if not isinstance(value, str):
        raise ValueError(f"Invalid gadget count: {value!r}")
    return int(value)


def count_from(config) -> int:
    return _parse_count(config["count"])


def count_from_file(path) -> int:
    return GadgetStoreConfig.from_file(path).segment_size + _parse_count("1")
"""

FILES = {
    "pkg/__init__.py": "",
    "pkg/config.py": CONFIG,
    "pkg/arg_utils.py": ARGS,
    "pkg/distributed/kv_transfer/gadget_connector.py": CONNECTOR,
    "pkg/utils.py": UTILS,
    "pkg/layers/fused_gadget.py": TRITON,
    "pkg/processors/gadget_fused.py": NUMBA,
    "pkg/attention/flash_utils.py": FLASH,
    "pkg/platforms/gadget.py": PACKAGES,
    "pkg/model_executor/models/gadget_lm.py": MODEL,
    "pkg/distributed/gadget_store.py": STORE,
}


@pytest.fixture(scope="module")
def records(crawl_once) -> list[dict]:
    return meaning_records(crawl_once, FILES)


def _meaning(records: list[dict], start: str) -> dict:
    (got,) = [r["meaning"] for r in records if r["message"]["text"].startswith(start)]
    return got


@pytest.mark.slow
def test_a_placeholder_in_the_branch_where_the_probe_is_false_is_the_environments(records):
    got = action_of(records, "{method} is not implemented as lack of triton.")
    assert got["actor"] == "environment" and "`HAS_TRITON` is false" in got["basis"] and "placeholder" in got["says"], got
    assert got["steps"][-1].startswith("Install `triton` (the package `HAS_TRITON` tests for"), got["steps"]


@pytest.mark.slow
def test_a_placeholder_under_a_probe_call_names_the_package_the_message_names(records):
    got = action_of(records, "numba is required for fused gadget preprocessing")
    assert got["actor"] == "environment" and "`is_numba_available()` is false" in got["basis"], got
    assert "Install `numba`" in got["steps"][-1], got["steps"]


@pytest.mark.slow
def test_a_placeholder_defined_in_except_importerror_names_the_import_that_failed(records):
    got = action_of(records, "This platform requires upstream {package}")
    assert got["actor"] == "environment" and "the import of `gadget_flash` failed" in got["basis"], got
    assert got["remedy"] is None, got  # ("Please install {package} first.": the code fills it in)
    assert got["steps"] == [got["steps"][-1]] and "Install the package that provides `gadget_flash`" in got["steps"][0], got["steps"]
    cls = action_of(records, "gadget kernels need the flash extension")
    assert cls["actor"] == "environment" and "`GadgetKernel.__init__`" in cls["basis"], cls


@pytest.mark.slow
def test_a_raise_under_an_if_of_the_placeholders_own_or_where_the_probe_is_true_is_no_placeholder(records):
    for start in ("gadget kernel size must be at most 8", "fused_gadget takes no negative sizes", "fused gadget preprocessing is off"):
        got = action_of(records, start)
        assert "placeholder" not in got["basis"], (start, got)


@pytest.mark.slow
def test_a_log_in_except_importerror_names_the_module_its_try_imports(records):
    got = action_of(records, "Failed to load the gadget kernels")
    assert got["actor"] == "environment", got
    assert any(s.startswith("The import that failed is `gadget_ext._C`: install the package that provides it") for s in got["steps"]), got["steps"]
    assert not any("install or upgrade what is missing" in s for s in got["steps"]), got["steps"]


@pytest.mark.slow
def test_a_failed_import_of_the_projects_own_extension_asks_for_a_build_not_a_package(records):
    got = action_of(records, "Failed to import from pkg._C")
    assert any("`pkg._C`, acme/widgets's own compiled extension" in s for s in got["steps"]), got["steps"]
    other = action_of(records, "Failed to load the gadget plugins")
    assert any(s.startswith("If the import of `gadget_plugins` is what failed (the `except` catches other errors too)") for s in other["steps"]), other


@pytest.mark.slow
def test_a_package_the_message_names_is_what_to_install(records):
    got = action_of(records, "DeepGadget is not available")
    assert got["actor"] == "environment", got
    assert any(s.startswith("Install `DeepGadget` (the message names it)") for s in got["steps"]), got["steps"]


@pytest.mark.slow
def test_with_no_package_named_the_page_says_what_it_knows(records):
    got = action_of(records, "Cannot load the gadget backend")
    assert got["actor"] == "environment", got
    assert any(s.startswith("The code does not show which package this needs: install what the message names") for s in got["steps"]), got["steps"]
    assert not any("install or upgrade what is missing" in s for s in got["steps"]), got["steps"]


@pytest.mark.slow
def test_no_fix_direction_sets_a_field_its_config_fills_itself(records):
    got = _meaning(records, "gadget engine id is unset")
    assert got["fix"] is None and got["action"]["actor"] == "internal", got
    kept = _meaning(records, "gadget peer id is unset")
    assert kept["fix"] is not None and "peer_id" in kept["fix"], kept


@pytest.mark.slow
def test_a_model_check_while_it_is_built_asks_nothing_of_the_requests_inputs(records):
    got = action_of(records, "GadgetLM needs an even number of heads")
    assert got["actor"] == "model" and got["basis"].startswith("raised in the code"), got
    assert not any("inputs you give it" in s for s in got["steps"]) and "input you give it" not in got["says"], got
    run = action_of(records, "A patch count of {count} is not supported")
    assert run["actor"] == "model" and any("inputs you give it" in s for s in run["steps"]), run


@pytest.mark.slow
def test_the_messages_remedy_goes_on_past_eg(records):
    got = action_of(records, "Gadget heads need contiguous blocks.")
    assert got["remedy"] == "Use a block-contiguous layout (e.g. LBHNC) on the prefill side.", got


@pytest.mark.slow
def test_a_value_checked_in_a_function_only_the_config_files_loader_calls_is_that_files(records):
    got = action_of(records, "Invalid gadget size")
    assert got["actor"] == "setting" and "`GadgetStoreConfig.from_file`" in got["basis"], got
    assert got["steps"][-1].startswith("Check the value in the config file `GadgetStoreConfig.from_file` reads"), got["steps"]
    near = action_of(records, "Invalid gadget count")
    assert "config file" not in near["basis"], near


@pytest.mark.slow
def test_a_probe_names_the_package_only_where_the_message_writes_it_so(records):
    got = action_of(records, "The GADGETLIB transport requires {name}")
    assert got["actor"] == "environment", got
    assert any(s.startswith("Install the optional package `is_gadgetlib_available()` tests for") for s in got["steps"]), got["steps"]


@pytest.mark.slow
def test_a_crawl_that_keeps_the_source_join_gives_the_pages_a_fresh_one_gives(fixture_repo, tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    files = {k: FILES[k] for k in ("pkg/__init__.py", "pkg/config.py", "pkg/arg_utils.py", "pkg/distributed/kv_transfer/gadget_connector.py")}
    repo = fixture_repo
    repo.commit(files, tag="v1")
    (tmp_path / "errcat.toml").write_text(MEANING_TOML)
    monkeypatch.setenv("ERRCAT_CACHE_DIR", str(tmp_path / "cache"))
    outs = []
    for n in (1, 2):  # (the second keeps the first's source join: same commit, same code)
        out = tmp_path / f"out{n}"
        args = ["crawl", "--repo", str(repo.path), "--ref", "v1", "--upstream", "widgets", "--config", str(tmp_path / "errcat.toml"), "--out", str(out)]
        run = CliRunner().invoke(main, args, catch_exceptions=False)
        assert run.exit_code == 0, run.output
        outs.append(jsonl_bytes(out / "acme" / "widgets"))
    assert outs[0] == outs[1]
    (got,) = [r["meaning"]["action"] for r in map(json.loads, outs[1].splitlines()) if r["message"]["text"] == "gadget engine id is unset"]
    assert got["actor"] == "internal", got
