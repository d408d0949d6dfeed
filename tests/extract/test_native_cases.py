"""A ``case``/``default:`` label of a C/C++ ``switch`` is a condition of the checks under it (#32
item 5): native triggers no longer say "whenever" for a dispatch's fallback."""

from __future__ import annotations

import gzip
import json

import pytest

from crawler.extract.native import extract_native

#: an upstream of Python and C++ checks, the C++ under csrc/
CONFIG = '[upstreams.acme]\nurl = "https://github.com/acme/widgets"\ninclude = ["pkg/**/*.py"]\nkinds = ["raise", "native"]\nnative = ["csrc/**"]\n'

DISPATCH_CPP = rb"""
void topk(int experts, int k, torch::Tensor& t) {
  switch (experts) {
    case 256:
      switch (k) {
        case 6:
        case 7:
          TORCH_CHECK(t.dim() == 2, "topk needs 2 dims");
          break;
        default:
          TORCH_CHECK(false, "unsupported k ", k, " for 256 experts");
      }
      break;
    case 384: {
      TORCH_CHECK(k == 8, "384 experts take k=8");
      break;
    }
    default:
      throw std::runtime_error("unsupported expert count");
  }
}

#define AG_CASE(n) case n: run<n>(); break;

void by_macro(int world_size) {
  switch (world_size) {
    AG_CASE(2)
    AG_CASE(4)
    default:
      throw std::runtime_error("world size not supported");
  }
}

void only_default(int k) {
  switch (k) {
    default:
      TORCH_CHECK(false, "nothing is supported");
  }
}

void fall_into_default(int k) {
  switch (k) {
    case 1:
    default:
      TORCH_CHECK(false, "one or anything");
  }
}

#define DISPATCH(T, ...) \
  switch (T) { case 1: __VA_ARGS__; break; default: TORCH_CHECK(false, "Unsupported type ", T); }
"""


@pytest.fixture
def native_case_records(fixture_repo, cli, tmp_path) -> dict[str, dict]:
    (tmp_path / "errcat.toml").write_text(CONFIG, encoding="utf-8")
    fixture_repo.commit({"pkg/__init__.py": "", "csrc/topk.cpp": DISPATCH_CPP.decode()}, tag="v1")
    out = tmp_path / "out"
    result = cli("crawl", "--repo", fixture_repo.path, "--ref", "v1", "--upstream", "acme", "--config", tmp_path / "errcat.toml", "--out", out)
    assert result.exit_code == 0, result.output
    rows = gzip.decompress((out / "acme" / "widgets" / "errors.jsonl.gz").read_bytes()).splitlines()
    return {r["message"]["text"]: r for r in map(json.loads, rows)}


def guards() -> dict[str, list[str]]:
    result = extract_native("csrc/topk.cpp", DISPATCH_CPP)
    return {s["template"]["text"]: s["facts"]["guards"] for s in result["sites"]}


def test_a_case_label_is_the_condition_of_the_checks_under_it():
    found = guards()
    assert found["topk needs 2 dims"] == ["experts == 256", "k == 6 || k == 7", "!(t.dim() == 2)"]
    assert found["384 experts take k=8"] == ["experts == 384", "!(k == 8)"]


def test_a_default_label_is_none_of_the_cases():
    found = guards()
    assert found["unsupported k {k} for 256 experts"] == ["experts == 256", "!(k == 6 || k == 7)"]
    assert found["unsupported expert count"] == ["!(experts == 256 || experts == 384)"]
    assert found["Unsupported type {T}"] == ["!(T == 1)"]  # (in a dispatch macro's body too)


def test_a_default_whose_cases_macros_write_is_none_of_them(native_case_records):
    assert guards()["world size not supported"] == ["default of switch world_size"]
    trigger = native_case_records["world size not supported"]["meaning"]["trigger"]
    assert trigger == "Raised in `by_macro`, when `world_size` is none of the values its `switch` has a case for."


def test_a_default_with_no_case_or_that_a_label_falls_into_adds_no_condition():
    found = guards()
    assert found["nothing is supported"] == []
    assert found["one or anything"] == []


def test_a_long_condition_is_cut_between_whole_operands_never_inside_one():
    from crawler.catalogue.phrasing import whole_code

    long = "!(scale->numel() == 1 && scale->scalar_type() == torch::headeronly::ScalarType::Float && scale->is_contiguous())"
    assert whole_code(long) == "!(scale->numel() == 1 && …)"
    call = "is_layer_skipped(prefix, self.modules_to_not_convert, self.packed_modules_mapping, skip_with_substr=True)"
    assert whole_code(call) == call  # (no whole operand to cut at: quoted whole)
    assert whole_code("!(a) && (" + "b" * 90 + ")") == "!(a) && …"  # (a pair of groups is no wrapper)


def test_a_native_trigger_says_the_case_it_is_under(native_case_records):
    trigger = native_case_records["unsupported expert count"]["meaning"]["trigger"]
    assert trigger == "Raised in `topk`, when `!(experts == 256 || experts == 384)`."
