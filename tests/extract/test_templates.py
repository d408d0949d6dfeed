"""Message templates: one row per construction rule, plus a render -> pattern round trip."""

import re
import textwrap

import pytest

from crawler.extract.templates import make_template, parts_from_template, string_parts
from crawler.extract.visitor import extract_file
from crawler.model.records import Template


def template_of(code: str) -> dict:
    result = extract_file("pkg/mod.py", textwrap.dedent(code).encode())
    assert result["status"] == "ok", result["reason"]
    return result["sites"][-1]["template"]


CASES = [
    # (source, text, [field exprs], form)
    ('raise ValueError("plain")', "plain", [], "literal"),
    ('raise ValueError("a" "b" \'c\')', "abc", [], "literal"),
    ('raise ValueError("tab\\there {x}")', "tab\there {{x}}", [], "literal"),
    ('raise ValueError(f"got {x!r}")', "got {x!r}", ["x!r"], "fstring"),
    ('raise ValueError(f"v={v:.2f}")', "v={v:.2f}", ["v:.2f"], "fstring"),
    ('raise ValueError(f"{x=}")', "{x=}", ["x="], "fstring"),
    ('raise ValueError(f"{x = !s:>4}")', "{x = !s:>4}", ["x = !s:>4"], "fstring"),
    ("raise ValueError(f\"a {f'{y}'} b\")", "a {f'{y}'} b", ["f'{y}'"], "fstring"),
    ("raise ValueError(f\"{{lit}} {d['k']} {a != b}\")", "{{lit}} {d['k']} {a != b}", ["d['k']", "a != b"], "fstring"),
    ('raise ValueError(f"{x:{width}}")', "{x:{width}}", ["x:{width}"], "fstring"),
    # a quoted brace inside a nested field of a format spec is a string, not a brace
    ("raise ValueError(f\"x {x:{'{'}>5} y\")", "x {x:{'{'}>5} y", ["x:{'{'}>5"], "fstring"),
    ('raise ValueError(f"\\N{BULLET} {x}\\n")', "\u2022 {x}\n", ["x"], "fstring"),
    (
        """
        raise ValueError(
            f"Unknown kind '{kind}' in "  # comment
            "backend_per_kind. Valid kinds are: "
            f"{', '.join(sorted(valid))}."
        )
        """,
        "Unknown kind '{kind}' in backend_per_kind. Valid kinds are: {', '.join(sorted(valid))}.",
        ["kind", "', '.join(sorted(valid))"],
        "fstring",
    ),
    ('raise ValueError(rf"raw \\d {x}")', "raw \\d {x}", ["x"], "fstring"),
    ('raise ValueError("a " + name + " b")', "a {name} b", ["name"], "concat"),
    ('raise ValueError("a " + str(n))', "a {str(n)}", ["str(n)"], "concat"),
    ('raise ValueError("%s is %d%%" % (name, n))', "{name} is {n}%", ["name", "n"], "percent"),
    ('raise ValueError("bad %r" % value)', "bad {value}", ["value"], "percent"),
    ('raise ValueError("%(a)s/%(b)s" % {"a": x, "b": y.z})', "{x}/{y.z}", ["x", "y.z"], "percent"),
    ('raise ValueError("%(a)s" % mapping)', "{mapping['a']}", ["mapping['a']"], "percent"),
    ('raise ValueError("{} and {}".format(a, b))', "{a} and {b}", ["a", "b"], "format"),
    ('raise ValueError("{1}-{0}".format(a, b))', "{b}-{a}", ["b", "a"], "format"),
    ('raise ValueError("{k!r:>3} {o.attr}".format(k=v, o=obj))', "{v!r:>3} {obj.attr}", ["v!r:>3", "obj.attr"], "format"),
    ('raise ValueError(", ".join(["a", f"b{x}", "c"]))', "a, b{x}, c", ["x"], "join"),
    ('raise ValueError(", ".join(items))', '{", ".join(items)}', ['", ".join(items)'], "opaque"),
    (
        """
        def f(x):
            msg = "bad: "
            msg += f"{x}"
            if x:
                msg += " (set)"
            raise ValueError(msg)
        """,
        # either path reaches the raise: both texts are the message's alternatives, the longer shown
        "bad: {x} (set)",
        ["x"],
        "assembled",
    ),
    (
        """
        def f(x):
            msg = "first"
            msg = f"second {x}"
            raise ValueError(msg)
        """,
        "second {x}",
        ["x"],
        "variable",
    ),
    (
        """
        def f(x):
            if x:
                msg = "in branch"
                raise ValueError(msg)
            msg = "other"
        """,
        "in branch",
        [],
        "variable",
    ),
    (
        """
        ERR = "module constant {x}"
        def f():
            raise ValueError(ERR)
        """,
        "module constant {{x}}",
        [],
        "constant",
    ),
    ('raise HTTPException(status_code=400, detail=f"bad {x}")', "bad {x}", ["x"], "keyword"),
    ('raise MyError(code, msg="kw wins")', "kw wins", [], "keyword"),
    ('raise make_error("from helper", x)', "from helper", [], "helper"),
    ('raise SomeError.from_x(obj, f"via {obj}")', "via {obj}", ["obj"], "helper"),
    ("raise ValueError(msg)", "{msg}", ["msg"], "variable"),
    ("raise ValueError(str(e))", "{str(e)}", ["str(e)"], "opaque"),
    ("raise ValueError", "", [], "none"),
    ("raise ValueError()", "", [], "none"),
    ('assert x, f"x was {x}"', "x was {x}", ["x"], "fstring"),
]


@pytest.mark.parametrize("code,text,exprs,form", CASES)
def test_template_rules(code, text, exprs, form):
    t = template_of(code)
    Template.model_validate(t)
    assert t["text"] == text
    assert [f["expr"] for f in t["fields"]] == exprs
    assert t["form"] == form
    assert t["opaque"] == (not text or (len(exprs) == 1 and text == "{" + exprs[0] + "}"))


def test_field_names_are_simple_names_only():
    t = template_of('raise ValueError(f"{a} {b!r} {c.d} {e=} {g:>3}")')
    assert [f["name"] for f in t["fields"]] == ["a", "b", None, "e", "g"]


def render(tpl: dict, values: list[str]) -> str:
    """The runtime message a template yields when its fields evaluate to ``values``."""
    fields = iter(values)
    return "".join(p if isinstance(p, str) else next(fields) for p in parts_from_template(tpl))


# (an assembled field matches its alternatives only, not any value)
@pytest.mark.parametrize("code,text,exprs,form", [c for c in CASES if c[2] and c[3] != "assembled"])
def test_render_matches_pattern_and_captures_back(code, text, exprs, form):
    t = template_of(code)
    values = [f"<v{i}|{{odd}}.*\n>" for i in range(len(t["fields"]))]
    message = render(t, values)
    m = re.match(t["pattern"], message)
    assert m is not None, (t["pattern"], message)
    assert [m.group(f"f{i}") for i in range(len(values))] == values
    assert t["pattern"].startswith("(?s)^") and t["pattern"].endswith("$")


def test_text_round_trips_through_parts():
    parts = ["a {b} ", string_parts('f"{x!r}"')[0], " }c{"]
    t = make_template(parts, "fstring")
    assert t["text"] == "a {{b}} {x!r} }}c{{"
    assert parts_from_template(t) == parts
    assert re.match(t["pattern"], "a {b} 'q' }c{").group("f0") == "'q'"


def test_opaque_and_none():
    assert template_of("raise ValueError(msg)")["opaque"] is True
    assert template_of("raise ValueError")["opaque"] is True
    assert template_of('raise ValueError(f"x {y}")')["opaque"] is False
