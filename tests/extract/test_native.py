"""Native checks (C++/CUDA with torch's checks, Rust error types and anyhow macros): read with
tree-sitter from a real git repository through the real CLI, and used like any raise by show,
render, diff and match."""

from __future__ import annotations

import gzip
import json
import re
import zlib
from pathlib import Path

import pytest

from crawler.extract.native import extract_native

CONFIG = """
[upstreams.acme]
url = "https://github.com/acme/widgets"
include = ["pkg/**/*.py"]
exclude = ["rust/**/tests/"]
tests = ["tests/**/*.py"]
kinds = ["raise", "assert", "log", "response", "native"]
native = ["csrc/**", "rust/**"]
"""

OPS_CPP = r"""
#include <torch/all.h>

namespace vllm {

void check_all(torch::Tensor& t, int64_t dim, const std::string& dtype) {
  TORCH_CHECK(t.is_cuda());
  TORCH_CHECK(t.dim() == 2, "expected a 2-D tensor, got ", t.dim(), " dims");
  TORCH_CHECK_VALUE(dim >= 0, "dim must be non-negative, got ", dim);
  TORCH_CHECK_TYPE(dtype == "half", "unsupported dtype \"", dtype, "\"");
  TORCH_CHECK_INDEX(dim < 4, "index ", dim, " out of range");
  TORCH_CHECK_NOT_IMPLEMENTED(false, "fp8 is not implemented on this device");
  if (t.numel() == 0) {
    throw std::invalid_argument("empty tensor: " + std::to_string(t.numel()));
  }
}

}  // namespace vllm
"""

ATTN_CU = r"""
#include "torch_utils.h"

#define HEAD_SWITCH(head_size, FN)                                  \
  switch (head_size) {                                              \
    case 64:                                                        \
      FN(64);                                                       \
      break;                                                        \
    default:                                                        \
      TORCH_CHECK(false, "Unsupported head size: ", head_size);     \
      break;                                                        \
  }

__global__ void kernel(float* out) { out[threadIdx.x] = 0.f; }

void launch(torch::stable::Tensor& out, int block) {
  STD_TORCH_CHECK(block % 16 == 0, "block size must be a multiple of 16, got ", block);
  STD_TORCH_CHECK_NOT_IMPLEMENTED(block < 1024, "blocks over 1024 threads");
  kernel<<<1, block>>>(out.data_ptr<float>());
}
"""

UTIL_H = r"""
#pragma once
// a wrapper's definition is no check of its own
#define MY_CHECK(cond, ...) STD_TORCH_CHECK(cond, "NotImplementedError: ", __VA_ARGS__)

inline void check_rank(int rank, int err) {
  TORCH_CHECK_LINALG(rank > 0, "matrix is singular");
  STD_TORCH_CHECK(err == 0, "cudaGetDevice failed: " + std::string(cudaGetErrorString(err)), " (rank ", rank + 1, ")");
}
"""

#: A file tree-sitter cannot wholly parse (an unknown macro before a function): its check is still found.
BROKEN_CU = r"""
VLLM_DISPATCH_WEIRD(()) {{{ )
void still_read(int n) {
  TORCH_CHECK(n > 0, "n must be positive, got ", n);
}
"""

ERROR_RS = r"""
use thiserror::Error;

#[derive(Debug, Error)]
pub enum ChatError {
    #[error("chat request must contain at least one message")]
    EmptyMessages,
    #[error("chat template error: {0}")]
    ChatTemplate(String),
    #[error("unknown tool {name:?}")]
    UnknownTool { name: String },
    #[error(transparent)]
    Io(#[from] std::io::Error),
}

pub fn serve(port: u16, host: &str) -> anyhow::Result<()> {
    if port == 0 {
        anyhow::bail!("port {} is not allowed on {host}", port);
    }
    anyhow::ensure!(!host.is_empty(), "host must not be empty");
    let _ = "x".parse::<u8>().expect("a panic is a bug, not an entry");
    Err(anyhow::anyhow!("serving on {host}:{port} failed"))
}

#[cfg(test)]
mod tests {
    #[test]
    fn fails() {
        panic!("never an entry");
    }

    fn helper() -> anyhow::Result<()> {
        anyhow::bail!("test helper error is not an entry")
    }
}
"""

TEST_RS = r"""
fn t() -> anyhow::Result<()> { anyhow::bail!("an integration test, excluded by the config") }
"""


TORCH_UTILS_H = r"""
#pragma once
// Stable ABI equivalent of TORCH_CHECK_NOT_IMPLEMENTED.
#define STD_TORCH_CHECK_NOT_IMPLEMENTED(cond, ...) \
  STD_TORCH_CHECK(cond, "NotImplementedError: ", __VA_ARGS__)
"""

#: Wrappers of torch's checks in a header every native file sees, one of them over the others.
COMMON_H = r"""
#pragma once
#define CHECK_CPU(x) TORCH_CHECK(x.device().type() == at::kCPU, #x " must be a CPU tensor")
#define CHECK_CONTIGUOUS(x) TORCH_CHECK(x.is_contiguous(), #x " must be contiguous")
#define CHECK_INPUT(x) \
  CHECK_CPU(x);        \
  CHECK_CONTIGUOUS(x)
#define CHECK_DIM(d, x) TORCH_CHECK(x.dim() == d, #x " must be a " #d "D tensor")
#define CHECK_SHAPE(x) TORCH_CHECK(x.dim() > 0, #x " has no shape")
"""

#: The same name defined otherwise in another header: which one a file includes is not read.
OTHER_H = r"""
#define CHECK_SHAPE(x) TORCH_CHECK(x.numel() > 0, #x " is empty")
"""

#: Uses of the headers' wrappers and of one the file defines itself.
GEMM_CPP = r"""
#include "common.h"

#define CHECK_TH_CUDA(x, m) STD_TORCH_CHECK(x.is_cuda(), m, ": must be a CUDA tensor.")

void gemm(at::Tensor& query, at::Tensor& out, bool strict) {
  CHECK_INPUT(query);
  if (strict) {
    CHECK_DIM(2, out);
  }
  CHECK_TH_CUDA(out, "out");
  CHECK_SHAPE(query);
}
"""


def native_tree(**changes: str | None) -> dict[str, str | bytes | None]:
    tree: dict[str, str | bytes | None] = {
        "pkg/__init__.py": "",
        "pkg/ops.py": "import torch\n\n\ndef head(n):\n    if n not in (64,):\n        raise ValueError(f'bad head {n}')\n"
        "\n\ndef attention(x):\n    return torch.ops._C.attention(x)\n",
        # the upstream's test of the native check, through the Python function that calls it
        "tests/test_attention.py": "import pytest\n\nfrom pkg.ops import attention\n\n\ndef test_head_size():\n"
        "    with pytest.raises(RuntimeError, match='Unsupported head size'):\n"
        "        attention(80)\n",
        "csrc/ops.cpp": OPS_CPP,
        "csrc/attention/attn.cu": ATTN_CU,
        "csrc/util.h": UTIL_H,
        "csrc/torch_utils.h": TORCH_UTILS_H,
        "csrc/cpu/common.h": COMMON_H,
        "csrc/other/common.h": OTHER_H,
        "csrc/cpu/gemm.cpp": GEMM_CPP,
        "csrc/broken.cu": BROKEN_CU,
        "csrc/CMakeLists.txt": "add_library(x ops.cpp)\n",
        "rust/src/error.rs": ERROR_RS,
        "rust/tests/it.rs": TEST_RS,
        "rust/Cargo.toml": '[package]\nname = "x"\n',
        "csrc/nul.cu": b'TORCH_CHECK(x, "a");\0\n',  # not source: skipped with its reason, the crawl goes on
    }
    tree.update(changes)
    return tree


@pytest.fixture
def native_repo(fixture_repo, tmp_path):
    (tmp_path / "errcat.toml").write_text(CONFIG, encoding="utf-8")
    fixture_repo.commit(native_tree(), tag="v1")
    return fixture_repo


def crawl(cli, repo, out: Path, config: Path, ref: str = "v1"):
    result = cli("crawl", "--repo", repo.path, "--ref", ref, "--upstream", "acme", "--config", config, "--out", out)
    assert result.exit_code == 0, result.output
    return out / "acme" / "widgets"


def records(dataset: Path) -> dict[str, dict]:
    rows = [json.loads(line) for line in gzip.decompress((dataset / "errors.jsonl.gz").read_bytes()).splitlines()]
    return {r["message"]["text"]: r for r in rows}


STD = "{__func__}, {__FILE__}:{__LINE__}, "
EXPECTED = {
    # template -> (macro, language, surfaces as, exception qualname)
    "Expected t.is_cuda() to be true, but got false.  (Could this error message be improved?  If so, please report an enhancement request to PyTorch.)": (
        "TORCH_CHECK",
        "cpp",
        "RuntimeError",
        "builtins.RuntimeError",
    ),
    "expected a 2-D tensor, got {t.dim()} dims": ("TORCH_CHECK", "cpp", "RuntimeError", "builtins.RuntimeError"),
    "dim must be non-negative, got {dim}": ("TORCH_CHECK_VALUE", "cpp", "ValueError", "builtins.ValueError"),
    'unsupported dtype "{dtype}"': ("TORCH_CHECK_TYPE", "cpp", "TypeError", "builtins.TypeError"),
    "index {dim} out of range": ("TORCH_CHECK_INDEX", "cpp", "IndexError", "builtins.IndexError"),
    "fp8 is not implemented on this device": ("TORCH_CHECK_NOT_IMPLEMENTED", "cpp", "NotImplementedError", "builtins.NotImplementedError"),
    "empty tensor: {std::to_string(t.numel())}": ("throw std::invalid_argument", "cpp", "RuntimeError", "builtins.RuntimeError"),
    "Unsupported head size: {head_size}": ("TORCH_CHECK", "cuda", "RuntimeError", "builtins.RuntimeError"),
    STD + "block size must be a multiple of 16, got {block}": ("STD_TORCH_CHECK", "cuda", "RuntimeError", "builtins.RuntimeError"),
    STD + "NotImplementedError: blocks over 1024 threads": ("STD_TORCH_CHECK_NOT_IMPLEMENTED", "cuda", "RuntimeError", "builtins.RuntimeError"),
    "matrix is singular": ("TORCH_CHECK_LINALG", "cpp", "LinAlgError", "torch.linalg.LinAlgError"),
    STD + "cudaGetDevice failed: {std::string(cudaGetErrorString(err))} (rank {rank + 1})": ("STD_TORCH_CHECK", "cpp", "RuntimeError", "builtins.RuntimeError"),
    "n must be positive, got {n}": ("TORCH_CHECK", "cuda", "RuntimeError", "builtins.RuntimeError"),
    # wrappers read from the #defines: each use a site, named as written, surfacing as its inner check
    "query must be a CPU tensor": ("CHECK_INPUT", "cpp", "RuntimeError", "builtins.RuntimeError"),
    "query must be contiguous": ("CHECK_INPUT", "cpp", "RuntimeError", "builtins.RuntimeError"),
    "out must be a 2D tensor": ("CHECK_DIM", "cpp", "RuntimeError", "builtins.RuntimeError"),
    STD + "out: must be a CUDA tensor.": ("CHECK_TH_CUDA", "cpp", "RuntimeError", "builtins.RuntimeError"),
    "chat request must contain at least one message": ("#[error]", "rust", "ChatError", "rust.src.error.ChatError"),
    "chat template error: {0}": ("#[error]", "rust", "ChatError", "rust.src.error.ChatError"),
    "unknown tool {name:?}": ("#[error]", "rust", "ChatError", "rust.src.error.ChatError"),
    "port {port} is not allowed on {host}": ("bail!", "rust", "Error", "anyhow.Error"),
    "host must not be empty": ("ensure!", "rust", "Error", "anyhow.Error"),
    "serving on {host}:{port} failed": ("anyhow!", "rust", "Error", "anyhow.Error"),
}


@pytest.mark.slow
def test_every_macro_becomes_an_entry_with_its_surface(native_repo, cli, tmp_path):
    dataset = crawl(cli, native_repo, tmp_path / "out", tmp_path / "errcat.toml")
    assert cli("validate", dataset).exit_code == 0
    found = records(dataset)
    native = {text: r for text, r in found.items() if r["kind"] == "native"}
    assert {
        text: (r["native"]["macro"], r["native"]["language"], r["native"]["surfaces_as"], r["exception"]["qualname"]) for text, r in native.items()
    } == EXPECTED
    for r in native.values():
        assert r["exception"]["name"] == r["native"]["surfaces_as"] and r["sites"][0]["native"] == r["native"]
    # a Python raise beside them is unchanged, and has no native facts
    assert found["bad head {n}"]["native"] is None and found["bad head {n}"]["kind"] == "raise"
    head = native["Unsupported head size: {head_size}"]
    assert head["location"]["qualname"] == "#define HEAD_SWITCH" and head["location"]["line"] == 9
    assert head["message"]["pattern"] == r"(?s)^Unsupported\ head\ size:\ (?P<f0>.*?)$"
    assert "TORCH_CHECK(false" in head["sites"][0]["snippet"]["code"] and head["sites"][0]["snippet"]["start_line"] == 3
    # the upstream's test reaches it through a call into torch.ops, which no call graph follows
    assert [(r["path"], r["match"]) for r in head["meaning"]["reproductions"]] == [("tests/test_attention.py", "Unsupported head size")]
    block = native[STD + "block size must be a multiple of 16, got {block}"]
    assert block["title"] == "block size must be a multiple of 16, got {block}"  # the macro's prefix is no title
    assert native[STD + "NotImplementedError: blocks over 1024 threads"]["title"] == "NotImplementedError: blocks over 1024 threads"
    assert native["expected a 2-D tensor, got {t.dim()} dims"]["location"]["qualname"] == "vllm::check_all"
    assert native["expected a 2-D tensor, got {t.dim()} dims"]["sites"][0]["facts"]["guards"] == ["!(t.dim() == 2)"]
    assert native["empty tensor: {std::to_string(t.numel())}"]["sites"][0]["facts"]["guards"] == ["t.numel() == 0"]
    # the same commit gives the same bytes, whether the native results come from the cache or not
    again = cli(
        "crawl",
        "--repo",
        native_repo.path,
        "--ref",
        "v1",
        "--upstream",
        "acme",
        "--config",
        tmp_path / "errcat.toml",
        "--out",
        tmp_path / "again",
        "--no-cache",
    )
    assert again.exit_code == 0
    assert (tmp_path / "again" / "acme" / "widgets" / "errors.jsonl.gz").read_bytes() == (dataset / "errors.jsonl.gz").read_bytes()
    manifest = json.loads((dataset / "manifest.json").read_text())
    # the C++/CUDA/Rust files of the native trees and the Python files; not CMakeLists, Cargo.toml or excluded tests
    assert manifest["counts"]["files"] == 12
    assert manifest["skipped"] == [{"path": "csrc/nul.cu", "reason": "invalid source: null bytes"}]


@pytest.mark.slow
def test_a_wrapper_use_is_a_site_where_it_is_used_and_a_header_edit_reaches_it(native_repo, cli, tmp_path):
    config = tmp_path / "errcat.toml"
    found = records(crawl(cli, native_repo, tmp_path / "out", config))
    dim = found["out must be a 2D tensor"]["sites"][0]
    assert (dim["path"], dim["line"], dim["qualname"]) == ("csrc/cpu/gemm.cpp", 8, "gemm")
    assert dim["facts"]["guards"] == ["strict", "!(out.dim() == 2)"]
    assert "CHECK_DIM(2, out);" in dim["snippet"]["code"]
    # the wrappers' own definitions are no sites, nor is a name two headers define otherwise
    assert not any("{x}" in text or "#x" in text or "has no shape" in text or "is empty" in text for text in found)
    # an unchanged file's checks follow a header's edit (the headers' macros key every native result)
    native_repo.commit({"csrc/cpu/common.h": COMMON_H.replace("must be a CPU tensor", "must live on the CPU")}, tag="v2")
    again = records(crawl(cli, native_repo, tmp_path / "out2", config, ref="v2"))
    assert "query must live on the CPU" in again and "query must be a CPU tensor" not in again


@pytest.mark.slow
def test_a_header_edit_re_extracts_other_native_files_only_when_it_changes_a_macro(native_repo, tmp_path, monkeypatch):
    from crawler.extract import native
    from crawler.extract.native import language_of, parse_tree
    from crawler.extract.runner import cached_results, extract_all
    from crawler.extract.surface import Settings
    from crawler.source.config import load_config
    from crawler.source.opener import open_snapshot

    (tmp_path / "errcat.toml").write_text(CONFIG, encoding="utf-8")
    upstream = load_config(tmp_path / "errcat.toml").upstreams["acme"]

    def extract(ref: str, **kw):
        with open_snapshot(
            repo=str(native_repo.path), ref=ref, pypi=None, upstream=upstream, include=list(upstream.include), exclude=list(upstream.exclude)
        ) as snapshot:
            done = extract_all(snapshot, jobs=1, settings=Settings.of(upstream), **kw)
            return done, {f.path for f in snapshot.files}

    extract("v1", cache_dir=tmp_path / "c")
    # a comment and a function added to a header: the macros it defines are the same
    native_repo.commit({"csrc/cpu/common.h": COMMON_H + "\n// helpers\ninline int twice(int x) { return 2 * x; }\n"}, tag="v2")
    parsed: list[str] = []
    monkeypatch.setattr(native, "parse_tree", lambda path, data: parsed.append(path) or parse_tree(path, data))
    done, files = extract("v2", cache_dir=tmp_path / "c")
    assert files - set(done.served) == {"csrc/cpu/common.h"}
    assert parsed == ["csrc/cpu/common.h"]  # (the other headers' definitions are kept by their blobs)
    assert done.results == extract("v2", use_cache=False)[0].results  # (what the cache served is what extraction gives)
    # a wrapper's message changed: every native file sees it, so every one is read again; no Python file is
    native_repo.commit({"csrc/cpu/common.h": COMMON_H.replace("must be a CPU tensor", "must live on the CPU")}, tag="v3")
    done, files = extract("v3", cache_dir=tmp_path / "c")
    assert files - set(done.served) == {path for path in files if language_of(path)}
    assert done.results == extract("v3", use_cache=False)[0].results
    gemm = next(r for r in done.results if r["path"] == "csrc/cpu/gemm.cpp")
    assert "query must live on the CPU" in [s["template"]["text"] for s in gemm["sites"]]
    # what the joins read of an earlier commit's files: no native result, whose headers a list of
    # some files does not say (v1's gemm.cpp is v3's blob, but it read other macros at v1)
    with open_snapshot(
        repo=str(native_repo.path), ref="v1", pypi=None, upstream=upstream, include=list(upstream.include), exclude=list(upstream.exclude)
    ) as snapshot:
        rows = [(f.path, f.blob) for f in snapshot.files if f.path != "csrc/cpu/common.h"]
    kept = cached_results(tmp_path / "c", rows, Settings.of(upstream))
    assert sorted(kept) == sorted(path for path, _ in rows if not language_of(path)) and "pkg/ops.py" in kept


@pytest.mark.parametrize(
    "row", [b"garbage", zlib.compress(b"{}"), zlib.compress(b'[["M", ["x"], [["x", 1]]]]'), zlib.compress(b'[["M", [1], []]]'), zlib.compress(b'[["M"]]')]
)
def test_a_damaged_row_of_header_macros_is_a_miss(row):
    from crawler.extract.runner import _decode_macros

    assert _decode_macros(row) is None
    assert _decode_macros(zlib.compress(b'[["M", ["x", "..."], [["f", false], ["(", false]]]]')) == (("M", ("x", "..."), (("f", False), ("(", False))),)


@pytest.mark.slow
def test_match_show_and_render_read_a_native_entry(native_repo, cli, tmp_path):
    dataset = crawl(cli, native_repo, tmp_path / "out", tmp_path / "errcat.toml")
    result = cli("match", "--data", dataset, "--json", "RuntimeError: Unsupported head size: 80")
    assert result.exit_code == 0, result.output
    best = json.loads(result.stdout)["matches"][0]
    eid = records(dataset)["Unsupported head size: {head_size}"]["id"]
    assert (best["id"], best["strength"], best["exception_match"]) == (eid, "match", "same")
    assert best["fields"] == [{"expr": "head_size", "value": "80"}]
    shown = cli("show", eid, "--data", dataset)
    assert shown.exit_code == 0
    assert "native: TORCH_CHECK in CUDA code, seen in Python as RuntimeError" in shown.stdout
    assert "csrc/attention/attn.cu:9 in #define HEAD_SWITCH" in shown.stdout
    # a Rust error is named by its type; what process it runs in is the upstream's design, not errcat's to say
    rust = cli("show", records(dataset)["chat template error: {0}"]["id"], "--data", dataset, "--no-pager")
    assert "native: #[error] in Rust code, its error type ChatError" in rust.stdout and "vLLM" not in rust.stdout
    for fmt in ("html", "markdown"):
        site = tmp_path / f"site-{fmt}"
        assert cli("render", "--data", dataset, "--out", site, "--format", fmt).exit_code == 0
        page = next(site.rglob(f"{eid}.{'html' if fmt == 'html' else 'md'}")).read_text()
        assert "seen in Python as RuntimeError" in page
    # each page links to its record as the crawl wrote it, native facts (and Python records' null ones) included
    for record in (eid, records(dataset)["bad head {n}"]["id"]):
        page = (tmp_path / "site-html" / "errors" / f"{record}.html").read_text()
        href = re.search(r'id="json-link" href="([^"]*)"', page).group(1)
        assert (tmp_path / "site-html" / "errors" / href).read_bytes() == (dataset / "errors" / f"{record}.json").read_bytes()


@pytest.mark.slow
def test_diff_sees_a_native_message_reworded_and_a_moved_check(native_repo, cli, tmp_path):
    old = crawl(cli, native_repo, tmp_path / "old", tmp_path / "errcat.toml")
    cpp = OPS_CPP.replace('"index ", dim, " out of range"', '"index ", dim, " is out of range"')
    native_repo.commit(native_tree(**{"csrc/ops.cpp": "// a comment moves every line\n" + cpp}), tag="v2")
    new = crawl(cli, native_repo, tmp_path / "new", tmp_path / "errcat.toml", ref="v2")
    result = cli("diff", old, new, "--format", "json")
    report = json.loads(result.stdout)
    kinds = {(c["kind"], c["template"]) for c in report["changes"]}
    assert ("reworded", "index {dim} is out of range") in kinds
    assert ("moved", "dim must be non-negative, got {dim}") in kinds


@pytest.mark.slow
def test_kinds_without_native_read_no_native_file(fixture_repo, cli, tmp_path):
    config = tmp_path / "errcat.toml"
    config.write_text(CONFIG.replace('"response", "native"]', '"response"]'), encoding="utf-8")
    fixture_repo.commit(native_tree(), tag="v1")
    dataset = crawl(cli, fixture_repo, tmp_path / "out", config)
    assert {r["kind"] for r in records(dataset).values()} == {"raise"}
    config.write_text(CONFIG.replace('"native"]', '"natve"]'), encoding="utf-8")
    result = cli("crawl", "--repo", fixture_repo.path, "--ref", "v1", "--upstream", "acme", "--config", config, "--out", tmp_path / "out2")
    assert result.exit_code == 2 and "unknown kind(s) 'natve'" in result.output


@pytest.mark.parametrize(
    "path,data,reason",
    [
        ("csrc/a.cu", b'TORCH_CHECK(x, "a");\0', "invalid source: null bytes"),
        ("csrc/b.cpp", b"\xff\xfe" + "(".join(["f"] * 5000).encode() + b'TORCH_CHECK(x, "deep");', None),
        ("rust/c.rs", b'fn f() { bail!("' + b"{" * 3000 + b'"); }', None),
        ("csrc/d.h", b'#define X(a) \\\n TORCH_CHECK(a, "in a define"); \\\n', None),
        # wrappers that repeat their argument, nested: the expansion would grow as a power of the depth
        (
            "csrc/e.cpp",
            b"#define W0(x) TORCH_CHECK(x, #x)\n"
            + b"".join(b"#define W%d(x) W%d(x + x + x + x + x + x + x + x)\n" % (i + 1, i) for i in range(9))
            + b"void f(){ W9(a); W0(b); }\n",
            None,
        ),
        # wrappers of each other only: never a check
        ("csrc/f.cpp", b"#define A(x) B(x)\n#define B(x) A(x)\nvoid f(){ A(1); }\n", None),
    ],
)
def test_hostile_native_files_never_raise(path, data, reason):
    result = extract_native(path, data)
    assert result["reason"] == reason
    assert result["status"] == ("skipped" if reason else "ok")
    json.dumps(result)  # plain data: it goes to the cache and the records


def test_an_unparsable_native_file_is_read_as_far_as_it_parses_and_says_so():
    result = extract_native("csrc/broken.cu", BROKEN_CU.encode())
    assert result["native"] == {"language": "cuda", "parse_error": True}
    assert [s["template"]["text"] for s in result["sites"]] == ["n must be positive, got {n}"]


@pytest.mark.parametrize(
    "path, code",
    [
        ("csrc/ops.cpp", OPS_CPP),
        ("csrc/attn.cu", ATTN_CU),
        ("csrc/util.h", UTIL_H),
        ("csrc/broken.cu", BROKEN_CU),
        ("rust/src/error.rs", ERROR_RS),
        ("rust/src/lib.rs", TEST_RS),
    ],
)
def test_the_walk_skips_only_subtrees_that_hold_no_site(monkeypatch, path, code):
    # The walks leave out every subtree without a check's (or a macro's) name in its text; walking
    # every node must find the same sites with the same names, scopes and guards.
    import crawler.extract.native as native

    pruned = extract_native(path, code.encode())
    monkeypatch.setattr(native, "_holds", lambda spots, node: True)
    assert pruned["sites"] and extract_native(path, code.encode()) == pruned


def test_nested_wrappers_that_grow_their_argument_stop_at_a_bound():
    data = (
        b"#define W0(x) TORCH_CHECK(x, #x)\n"
        + b"".join(b"#define W%d(x) W%d(x + x + x + x + x + x + x + x)\n" % (i + 1, i) for i in range(9))
        + b"void f(){ W9(a); W2(c); W0(b); }\n"
    )
    result = extract_native("csrc/e.cpp", data)
    texts = [s["template"]["text"] for s in result["sites"]]
    assert texts == ["c" + " + c" * 63, "b"]  # W2 expands (64 copies); W9 would be 8**9: no site, and no hang


#: Checks inside a dispatch macro's body, the body using wrappers with the macro's own
#: parameters, the macro used many times (vLLM's sgl-kernels conv.cpp CHECK_OPTIONAL_SHAPE_DTYPE).
NESTED_CPP = rb"""
#define CHECK_CONTIGUOUS(x) TORCH_CHECK(x.is_contiguous(), #x " must be contiguous")
#define CHECK_EQ(a, b) TORCH_CHECK((a) == (b), "CHECK_EQ(" #a ", " #b ") failed. ", a, " vs ", b)
#define CHECK_OPTIONAL_SHAPE_DTYPE(OPT, SIZE) \
  if (OPT.has_value()) {                      \
    CHECK_CONTIGUOUS(OPT.value());            \
    CHECK_EQ(OPT.value().size(0), SIZE);      \
  }
#define DISPATCH(T, ...) \
  switch (T) { case 1: __VA_ARGS__; break; default: TORCH_CHECK(false, "Unsupported type ", T); }

void conv(at::Tensor& x, std::optional<at::Tensor> bias, std::optional<at::Tensor> state, int batch, int t) {
  CHECK_OPTIONAL_SHAPE_DTYPE(bias, batch);
  CHECK_OPTIONAL_SHAPE_DTYPE(state, batch + 1);
  DISPATCH(t, run(x));
  DISPATCH(t + 1, run(x));
  CHECK_CONTIGUOUS(x);
}
"""


def test_a_check_in_a_macros_body_is_one_site_where_its_message_is_written():
    """One site per check written: a check in a (non-wrapper) macro's body is a site at the
    definition, where a user looking for its words finds it, however many times the macro is
    used; a wrapper used in that body stringizes what the macro's user passes, so that is a field."""
    result = extract_native("csrc/conv.cpp", NESTED_CPP)
    sites = sorted((s["line"], s["qualname"], s["native"]["macro"], s["template"]["text"]) for s in result["sites"])
    assert sites == [
        (6, "#define CHECK_OPTIONAL_SHAPE_DTYPE", "CHECK_CONTIGUOUS", "{OPT}.value() must be contiguous"),
        (7, "#define CHECK_OPTIONAL_SHAPE_DTYPE", "CHECK_EQ", "CHECK_EQ({OPT}.value().size(0), {SIZE}) failed. {OPT.value().size(0)} vs {SIZE}"),
        (10, "#define DISPATCH", "TORCH_CHECK", "Unsupported type {T}"),
        (17, "conv", "CHECK_CONTIGUOUS", "x must be contiguous"),
    ]
    by_line = {s["line"]: s["template"] for s in result["sites"]}
    # what the user sees from the second use matches the check in the body
    assert re.fullmatch(by_line[7]["pattern"], "CHECK_EQ(state.value().size(0), batch + 1) failed. 3 vs 4")
    assert re.fullmatch(by_line[6]["pattern"], "bias.value() must be contiguous")


@pytest.mark.slow
def test_a_plain_python_upstream_reads_raises_asserts_and_logs_and_no_native_tree(fixture_repo, cli, tmp_path):
    """An upstream that names no kinds and no native trees (a plain Python repository), in a
    repository that has csrc/ and rust/ all the same: its Python raises and logs, nothing else."""
    config = tmp_path / "errcat.toml"
    config.write_text('[upstreams.acme]\nurl = "https://github.com/acme/widgets"\ninclude = ["pkg/**/*.py"]\n', encoding="utf-8")
    tree = native_tree(
        **{
            "pkg/log.py": "import logging\n\nlogger = logging.getLogger(__name__)\n\n\ndef f(n):\n"
            "    logger.warning('slow path for %s', n)\n    logger.info('never an entry')\n"
            "    assert n, 'n must be set'\n"
        }
    )
    fixture_repo.commit(tree, tag="v1")
    dataset = crawl(cli, fixture_repo, tmp_path / "out", config)
    found = records(dataset)
    assert {text: r["kind"] for text, r in found.items()} == {"bad head {n}": "raise", "slow path for {n}": "log", "n must be set": "assert"}
    manifest = json.loads((dataset / "manifest.json").read_text())
    assert manifest["counts"]["files"] == 3  # the Python files only: no native file was read


def test_the_cache_key_parts_of_headers_and_macros_are_whole_digests():
    """The headers and their macros are the upstream's: a key part cut to 64 bits could be made to
    collide in about 2**32 tries, and a cached native result would stand for other macros."""
    from crawler.extract.runner import _headers_tag, _macros_tag

    for tag, mark in ((_headers_tag([("csrc/a.h", "0" * 40)]), "+h"), (_macros_tag((("CHECK", 0, "RuntimeError"),)), "+m")):
        assert tag.startswith(mark) and re.fullmatch(r"[0-9a-f]{64}", tag[2:])


@pytest.mark.slow
def test_in_parallel_the_native_files_are_extracted_with_the_macros_read_while_the_python_files_are(native_repo, tmp_path):
    from crawler.extract.runner import extract_all
    from crawler.extract.surface import Settings
    from crawler.source.config import load_config
    from crawler.source.opener import open_snapshot

    upstream = load_config(tmp_path / "errcat.toml").upstreams["acme"]
    # enough Python files for the workers (a crawl with fewer extracts them in its own process)
    native_repo.commit({f"pkg/many/m{i}.py": f"def f{i}(x):\n    if x:\n        raise ValueError('bad {i}')\n" for i in range(12)}, tag="many")
    tests = {"tests/test_m.py": "import pytest\nfrom pkg.many.m1 import f1\ndef test_f():\n    with pytest.raises(ValueError, match='bad 1'):\n        f1(1)\n"}
    native_repo.commit(tests, tag="many2")

    def extract(jobs: int, **kw):
        with open_snapshot(
            repo=str(native_repo.path), ref="many2", pypi=None, upstream=upstream, include=list(upstream.include), exclude=list(upstream.exclude)
        ) as snapshot:
            return extract_all(snapshot, jobs=jobs, settings=Settings.of(upstream), tests=True, **kw)

    alone = extract(1, use_cache=False)
    parallel = extract(2, cache_dir=tmp_path / "c")
    assert parallel.results == alone.results and parallel.tests == alone.tests and not parallel.served
    gemm = next(r for r in parallel.results if r["path"] == "csrc/cpu/gemm.cpp")
    assert "query must be a CPU tensor" in [s["template"]["text"] for s in gemm["sites"]]  # (a header's macro)
    mine = next(r for r in parallel.tests if r["path"] == "tests/test_m.py")
    assert [b["exceptions"] for b in mine["tests"]] == [["builtins.ValueError"]]
    again = extract(2, cache_dir=tmp_path / "c")  # (every result from the cache, native ones under the macros' key)
    assert again.results == alone.results and sorted(again.served) == sorted(r["path"] for r in [*alone.results, *alone.tests])


@pytest.mark.slow
def test_a_pool_that_breaks_before_the_native_files_are_handed_out_still_extracts_them(native_repo, tmp_path, monkeypatch):
    from concurrent.futures.process import BrokenProcessPool

    from crawler.extract import runner
    from crawler.source.config import load_config
    from crawler.source.opener import open_snapshot

    upstream = load_config(tmp_path / "errcat.toml").upstreams["acme"]
    native_repo.commit({f"pkg/many/m{i}.py": f"raise ValueError('bad {i}')\n" for i in range(10)}, tag="many")

    def extract(jobs: int):
        with open_snapshot(
            repo=str(native_repo.path), ref="many", pypi=None, upstream=upstream, include=list(upstream.include), exclude=list(upstream.exclude)
        ) as snapshot:
            return runner.extract_all(snapshot, jobs=jobs, settings=runner.surface.Settings.of(upstream), tests=True, use_cache=False)

    alone = extract(1)
    real, calls = runner._header_macros, []

    def breaking(*args):  # the pool breaks (a worker killed) while this process reads the macros
        calls.append(1)
        if len(calls) == 1:
            raise BrokenProcessPool("a worker died")
        return real(*args)

    monkeypatch.setattr(runner, "_header_macros", breaking)
    broken = extract(2)
    assert len(calls) == 2 and broken.results == alone.results and broken.tests == alone.tests
    assert any(runner.language_of(r["path"]) and r["sites"] for r in broken.results)
