"""Native macros that print a message and end the process (``#define CUDACHECK(cmd) ... printf(...);
exit(EXIT_FAILURE)``): read from the upstream's own headers, each use a site whose message is what
it prints, found by ``errcat match`` from the line a user sees in a log, shown on every page."""

from __future__ import annotations

import json

import pytest

from crawler.extract.native import CHECKS, extract_native, parse_tree
from crawler.extract.native_macros import exiting, header_macros, tokens
from tests.extract.test_native import CONFIG, crawl, records

#: A header of the upstream's own: a macro that prints with printf and exits, one that streams to
#: std::cerr and aborts, one that prints but goes on (no error a user is left with), and a wrapper.
COMMON_CUH = r"""
#pragma once
#include <cstdio>
#define CUDACHECK(cmd)                                              \
  do {                                                              \
    cudaError_t e = cmd;                                            \
    if (e != cudaSuccess) {                                         \
      printf("Failed: Cuda error %s:%d '%s'\n", __FILE__, __LINE__, \
             cudaGetErrorString(e));                                \
      exit(EXIT_FAILURE);                                           \
    }                                                               \
  } while (0)
#define NCCL_OK(x) do { if ((x) != 0) { std::cerr << "nccl call " << #x << " failed: " << (x) << std::endl; std::abort(); } } while (0)
#define WARN_ONLY(x) do { if (!(x)) { fprintf(stderr, "warning: %s\n", #x); } } while (0)
#define IPC_CHECK(x) CUDACHECK(x)
"""

ALL_REDUCE_CU = r"""
#include "common.cuh"

namespace acme {
void open_handles(void* ptr, int rank) {
  CUDACHECK(cudaIpcCloseMemHandle(ptr));
  WARN_ONLY(rank >= 0);
  NCCL_OK(ncclAllReduce(ptr, rank));
}

void share(void* ptr) {
  IPC_CHECK(cudaIpcGetMemHandle(ptr));
}
}  // namespace acme
"""

TEXT = "Failed: Cuda error {__FILE__}:{__LINE__} '{cudaGetErrorString(e)}'"
PASTE = "Failed: Cuda error /workspace/csrc/custom_all_reduce.cuh:368 'invalid argument'"


@pytest.fixture
def exits_repo(fixture_repo, tmp_path):
    (tmp_path / "errcat.toml").write_text(CONFIG, encoding="utf-8")
    fixture_repo.commit({"pkg/__init__.py": "", "csrc/common.cuh": COMMON_CUH, "csrc/all_reduce.cu": ALL_REDUCE_CU}, tag="v1")
    return fixture_repo


@pytest.mark.slow
def test_a_macro_that_prints_and_exits_is_a_check_whose_uses_are_sites(exits_repo, cli, tmp_path):
    found = records(crawl(cli, exits_repo, tmp_path / "out", tmp_path / "errcat.toml"))
    cuda = found[TEXT]
    # both uses (one through a wrapper, named as written at the outermost) are sites of one entry
    assert [(s["path"], s["line"], s["native"]["macro"], s["qualname"]) for s in cuda["sites"]] == [
        ("csrc/all_reduce.cu", 5, "CUDACHECK", "acme::open_handles"),
        ("csrc/all_reduce.cu", 11, "IPC_CHECK", "acme::share"),
    ]
    assert (cuda["kind"], cuda["native"], cuda["exception"]["name"], cuda["exception"]["qualname"]) == (
        "native",
        {"macro": "CUDACHECK", "language": "cuda", "surfaces_as": "exit"},
        "exit",
        "libc.exit",
    )
    assert [f["expr"] for f in cuda["message"]["fields"]] == ["__FILE__", "__LINE__", "cudaGetErrorString(e)"]
    assert cuda["sites"][0]["facts"]["guards"] == ["e != cudaSuccess"]
    streamed = found["nccl call ncclAllReduce(ptr, rank) failed: {(ncclAllReduce(ptr, rank))}"]
    assert (streamed["native"]["surfaces_as"], streamed["exception"]["qualname"]) == ("abort", "libc.abort")
    # a message printed without ending the process is no error entry, nor is the macros' own definition
    assert not [t for t in found if "warning" in t] and len([r for r in found.values() if r["kind"] == "native"]) == 2


@pytest.mark.slow
def test_match_finds_the_printed_line_and_pages_say_the_process_ends(exits_repo, cli, tmp_path):
    dataset = crawl(cli, exits_repo, tmp_path / "out", tmp_path / "errcat.toml")
    eid = records(dataset)[TEXT]["id"]
    result = cli("match", "--data", dataset, "--json", PASTE)
    assert result.exit_code == 0, result.output
    best = json.loads(result.stdout)["matches"][0]
    assert (best["id"], best["strength"]) == (eid, "match")
    assert [f["value"] for f in best["fields"]] == ["/workspace/csrc/custom_all_reduce.cuh", "368", "invalid argument"]
    said = "native: CUDACHECK in CUDA code, prints the message and ends the process (exit), no Python exception"
    shown = cli("show", eid, "--data", dataset, "--no-pager")
    assert shown.exit_code == 0 and said in shown.stdout and "seen in Python" not in shown.stdout
    for fmt, suffix in (("html", "html"), ("markdown", "md")):
        site = tmp_path / f"site-{fmt}"
        assert cli("render", "--data", dataset, "--out", site, "--format", fmt).exit_code == 0
        page = next(site.rglob(f"{eid}.{suffix}")).read_text()
        assert "prints the message and ends the process" in page and "seen in Python" not in page
        # nothing is raised: no Exception row (it named libc.exit), the trigger says the process ends
        assert "Exception" not in page and "libc.exit" not in page and "When it happens" in page, fmt
        assert "Ends the process in" in page and "Raised in" not in page, fmt
        # the snippet coloured as CUDA, not as Python
        assert ('<span class="kt">void</span> open_handles(' if fmt == "html" else "```cuda\n") in page, fmt
    assert records(dataset)[TEXT]["meaning"]["trigger"].startswith("Ends the process in `acme::open_handles`, when")
    assert "Exception:" not in shown.stdout and "When it happens: Ends the process in" in shown.stdout


@pytest.mark.parametrize(
    ("body", "expected"),
    [
        ('do { printf("x"); exit(1); } while (0)', True),
        ('{ fprintf(stderr, "x %d", v); std::abort(); }', True),
        ('std::cerr << "x"; _exit(2)', True),
        ('exit(1); printf("x")', False),  # ends before it prints: nothing a user reads
        ('printf("x"); return', False),
        ('int exit = 1; printf("x")', False),
    ],
)
def test_an_exiting_body_prints_then_ends_the_process(body, expected):
    assert exiting(tuple(tokens(body))) is expected


def test_printf_conversions_become_fields_named_by_their_arguments():
    header = b'#define DIE(v, w) do { printf("%-5s|%*d|%.2f%% of %lu\\n", #v, w, v, 1.5, sizeof(v)); exit(3); } while (0)\n'
    macros = header_macros([("csrc/die.h", header)], parse_tree, CHECKS)
    sites = extract_native("csrc/x.cpp", b"void f(int n) { DIE(n, 4); }\n", macros)["sites"]
    assert [(s["template"]["text"], s["native"]["macro"]) for s in sites] == [('{"n"}|{n}|{1.5}% of {sizeof(n)}', "DIE")]


def test_a_file_that_defines_the_name_itself_uses_its_own_definition():
    macros = header_macros([("csrc/common.cuh", COMMON_CUH.encode())], parse_tree, CHECKS)
    own = (
        b'#define CUDACHECK(cmd) do { int e = cmd; if (e) { std::cerr << "cuda error " << e << std::endl; } } while (0)\nvoid f() { CUDACHECK(cudaFree(0)); }\n'
    )
    assert extract_native("csrc/alloc.cpp", own, macros)["sites"] == []
    assert len(extract_native("csrc/alloc.cpp", own.split(b"\n", 1)[1], macros)["sites"]) == 1


@pytest.mark.parametrize("fmt", [r"ends in %", r"%*", r"%l", r"100%% sure: %q %s", r"%s %s %s %s"])
def test_a_format_that_is_cut_or_short_of_arguments_still_gives_one_site(fmt):
    data = ('#define DIE(x) do { if (!(x)) { fprintf(stderr, "' + fmt + '", #x); abort(); } } while (0)\nvoid f(int n) { DIE(n > 0); }\n').encode()
    sites = extract_native("csrc/x.cpp", data)["sites"]
    assert [(s["native"]["macro"], s["exception"]) for s in sites] == [("DIE", "abort")]


def test_a_file_that_defines_a_check_a_header_defines_too_uses_its_own():
    header = b'#define CHECK_CPU(x) TORCH_CHECK(x.device().is_cpu(), #x " must be a CPU tensor")\n#define CHECK_INPUT(x) CHECK_CPU(x)\n'
    macros = header_macros([("csrc/common.h", header)], parse_tree, CHECKS)
    own = (
        b'#include "common.h"\n'
        b'#define CHECK_CUDA(x) TORCH_CHECK(x.is_cuda(), #x " must be a CUDA tensor")\n'
        b"#define CHECK_INPUT(x) CHECK_CUDA(x)\n"
        b"void rope(torch::Tensor position_ids) { CHECK_INPUT(position_ids); }\n"
    )
    texts = [s["template"]["text"] for s in extract_native("csrc/rope.cu", own, macros)["sites"]]
    assert texts == ["position_ids must be a CUDA tensor"]
    # a file that defines no such macro sees the header's
    texts = [s["template"]["text"] for s in extract_native("csrc/cpu.cpp", own.split(b"\n", 3)[3], macros)["sites"]]
    assert texts == ["position_ids must be a CPU tensor"]
