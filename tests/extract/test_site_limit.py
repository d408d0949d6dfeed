"""``max_file_sites`` bounds what a file costs, not only what it gives (security issue #35).

A generated file of tens of thousands of raises or ``TORCH_CHECK``s used to be extracted whole
(every site made, derived, encoded and cached: 13.6 s and 449 MB for one 1.99 MB C++ file) before
the crawl counted its sites and left it out. Extraction now stops at the first site past the
limit. These tests count what the walks make (never the clock): the sites built stay at the
limit, none of them is derived, the file is skipped with the reason, a crawl from the cache makes
none at all, and the classes of a file over the limit still count in the exception hierarchy.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from helpers import CHECK_CODE, jsonl_bytes

from crawler.extract import derive, native, surface, visitor
from crawler.extract.native import extract_native
from crawler.extract.visitor import extract_file

LIMIT = 1000
OVER = f"more than {LIMIT} raise and assert sites, over the limit of {LIMIT} per file (max_file_sites)"
ROOT = Path(__file__).resolve().parents[2]

#: Defined after the limit is reached (the end of the generated module): its class record must
#: come from the walk of classes alone. Its ``__init__`` builds the message other files' raises get.
WIDGET_ERROR = """

class WidgetError(KeyError):
    def __init__(self, name):
        super().__init__(f"no widget named {name}")
"""

USES_WIDGET_ERROR = """
from pkg.big import WidgetError


class MissingWidget(WidgetError):
    pass


def find(name):
    raise MissingWidget(name)
"""


def many_raises(count: int) -> str:
    """A module of ``count`` raise lines, 100 a function (1.8 MB for 52,000)."""
    out = []
    for f in range(count // 100):
        out.append(f"def f{f}(x):\n")
        out += [f'    if x>{i}: raise ValueError("e")\n' for i in range(100)]
    return "".join(out)


def many_checks(count: int) -> str:
    """A C++ file of ``count`` ``TORCH_CHECK``s, 64 a function (1.94 MB for 64,192)."""
    out = []
    for f in range(count // 64):
        out.append(f"void f{f}(int x) {{\n")
        out += [f'  TORCH_CHECK(x >{i}, "e", x);\n' for i in range(64)]
        out.append("}\n")
    return "".join(out)


class Spy:
    """Counts the calls of a function (a method) patched in its place."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch, owner: object, name: str) -> None:
        self.calls = 0
        real = getattr(owner, name)

        def counted(*args, **kwargs):
            self.calls += 1
            return real(*args, **kwargs)

        monkeypatch.setattr(owner, name, counted)


def crawl(cli, repo, out: Path, include: str, *extra: str):
    # --jobs 1: extraction in this process, where the spies are
    return cli(
        "crawl",
        "--repo",
        repo.path,
        "--ref",
        "v1",
        "--name",
        "acme/widgets",
        "--include",
        include,
        "--out",
        out,
        "--jobs",
        "1",
        "--max-file-sites",
        str(LIMIT),
        *extra,
    )


def manifest(out: Path) -> dict:
    return json.loads((out / "acme" / "widgets" / "manifest.json").read_bytes())


def records(out: Path) -> list[dict]:
    return [json.loads(line) for line in jsonl_bytes(out / "acme" / "widgets").splitlines()]


@pytest.mark.slow
def test_a_python_file_of_52000_raises_stops_at_the_limit(fixture_repo, cli, tmp_path, monkeypatch):
    fixture_repo.commit({"pkg/__init__.py": "", "pkg/ok.py": CHECK_CODE, "pkg/big.py": many_raises(52_000) + WIDGET_ERROR}, tag="v1")
    made = Spy(monkeypatch, visitor._Extractor, "_site")
    derived = Spy(monkeypatch, derive, "derive")
    result = crawl(cli, fixture_repo, tmp_path / "out", "pkg/**/*.py")
    assert result.exit_code == 0, result.output
    # The walk stopped at the 1,001st site (it counts a site before making it), and the file's
    # sites were never derived: only ok.py's two were. Unbounded, both were 52,000 and more.
    assert made.calls == LIMIT + 1 + 2 and derived.calls == 2
    m = manifest(tmp_path / "out")
    assert m["skipped"] == [{"path": "pkg/big.py", "reason": OVER}]
    assert {k: m["counts"][k] for k in ("files", "parsed", "skipped", "sites")} == {"files": 3, "parsed": 2, "skipped": 1, "sites": 2}
    # Its result is cached as over the limit: a crawl from the cache makes no site of it.
    made.calls = 0
    again = crawl(cli, fixture_repo, tmp_path / "again", "pkg/**/*.py")
    assert again.exit_code == 0 and made.calls == 0 and manifest(tmp_path / "again")["skipped"] == m["skipped"]
    assert "Traceback" not in result.output + again.output


@pytest.mark.slow
def test_a_cpp_file_of_64000_checks_stops_at_the_limit(fixture_repo, cli, tmp_path, monkeypatch):
    fixture_repo.commit(
        {"csrc/ops.cpp": 'void g(int x) { TORCH_CHECK(x > 0, "x must be positive, got ", x); }\n', "csrc/big.cpp": many_checks(64_192)}, tag="v1"
    )
    made = Spy(monkeypatch, native._Walker, "add")
    derived = Spy(monkeypatch, derive, "derive")
    result = crawl(cli, fixture_repo, tmp_path / "out", "csrc/**")
    assert result.exit_code == 0, result.output
    assert made.calls == LIMIT + 1 + 1 and derived.calls == 1  # (64,193 each, unbounded)
    m = manifest(tmp_path / "out")
    assert m["skipped"] == [{"path": "csrc/big.cpp", "reason": OVER}]
    assert m["counts"]["parsed"] == 1 and m["counts"]["sites"] == 1
    assert [r["message"]["text"] for r in records(tmp_path / "out")] == ["x must be positive, got {x}"]


@pytest.mark.slow
def test_the_classes_of_a_file_over_the_limit_still_count(fixture_repo, cli, tmp_path):
    """A class defined past the limit still bases another file's exception, and its ``__init__``
    still builds that exception's message."""
    fixture_repo.commit({"pkg/__init__.py": "", "pkg/use.py": USES_WIDGET_ERROR, "pkg/big.py": many_raises(LIMIT + 100) + WIDGET_ERROR}, tag="v1")
    result = crawl(cli, fixture_repo, tmp_path / "out", "pkg/**/*.py")
    assert result.exit_code == 0, result.output
    assert manifest(tmp_path / "out")["skipped"] == [{"path": "pkg/big.py", "reason": OVER}]
    (record,) = records(tmp_path / "out")
    assert record["message"]["text"] == "no widget named {name}"
    assert record["exception"]["qualname"] == "pkg.use.MissingWidget"
    assert record["exception"]["bases"] == ["pkg.big.WidgetError", "builtins.KeyError", "builtins.LookupError", "builtins.Exception", "builtins.BaseException"]
    assert record["exception"]["builtin_ancestor"] == "KeyError"


def own_modules() -> list[Path]:
    """errcat's modules but its three largest stages' (the extractor's, the catalogue's, the
    browser's): the rest are enough (37 with sites, 139 classes) in half the time."""
    return sorted(p for p in (ROOT / "crawler").rglob("*.py") if p.parent.name not in ("extract", "catalogue", "consume"))


@pytest.mark.slow
def test_a_file_within_the_limit_gives_what_it_gives_unbounded_and_one_over_it_its_classes():
    """On real code (errcat's own modules): at a limit of exactly a file's sites its result is
    the unbounded one, unchanged; at one site fewer it is over the limit, with the classes the
    unbounded extraction reads."""
    over = 0
    for path in own_modules():
        rel, data = path.relative_to(ROOT).as_posix(), path.read_bytes()
        full = extract_file(rel, data)
        assert full["status"] == "ok", rel
        count = len(full["sites"])
        assert extract_file(rel, data, surface.Settings(max_sites=count)) == full, rel
        if count:
            bounded = extract_file(rel, data, surface.Settings(max_sites=count - 1))
            assert bounded["status"] == "over_limit" and bounded["sites"] == [], rel
            assert bounded["classes"] == full["classes"], rel
            over += 1
    assert over >= 30


def test_a_native_file_is_over_the_limit_at_one_check_more():
    code = many_checks(64 * 3).encode()
    full = extract_native("csrc/a.cpp", code)
    assert len(full["sites"]) == 192
    assert extract_native("csrc/a.cpp", code, (), 192) == full
    bounded = extract_native("csrc/a.cpp", code, (), 191)
    assert (
        bounded["status"] == "over_limit"
        and bounded["sites"] == []
        and bounded["reason"] == ("more than 191 raise and assert sites, over the limit of 191 per file (max_file_sites)")
    )
