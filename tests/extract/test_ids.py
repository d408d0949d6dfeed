import pytest

from crawler.extract.ids import check_id, entry_id, entry_key, has_literal_text, normalize_template


def site(text, fields=(), exception="builtins.ValueError", opaque=False, module="pkg.mod", qualname="f"):
    return {
        "exception": exception.rpartition(".")[2],
        "exception_qualname": exception,
        "module": module,
        "qualname": qualname,
        "template": {"text": text, "fields": [{"expr": e, "name": None} for e in fields], "opaque": opaque},
    }


@pytest.mark.parametrize(
    "text, fields, expected",
    [
        ("plain  text\n here", [], "plain text here"),
        ("bad {x!r} and {y:.2f}", ["x!r", "y:.2f"], "bad {} and {}"),
        ("{{literal}} {a}", ["a"], "{{literal}} {}"),
        ("dict {{'a': {d['a']}}}", ["d['a']"], "dict {{'a': {}}}"),
        ("{', '.join(sorted(v))}.", ["', '.join(sorted(v))"], "{}."),
    ],
)
def test_normalize_template(text, fields, expected):
    assert normalize_template(text, [{"expr": f} for f in fields]) == expected


def test_renamed_variable_keeps_the_id():
    a = site("Unknown kind '{kind}'", ["kind"])
    b = site("Unknown kind '{k}'", ["k"], qualname="other", module="pkg.other")
    assert entry_id("o/n", entry_key(a)) == entry_id("o/n", entry_key(b))


def test_exception_and_repo_are_part_of_the_id():
    a = site("boom")
    assert entry_id("o/n", entry_key(a)) != entry_id("o/n", entry_key(site("boom", exception="builtins.TypeError")))
    assert entry_id("o/n", entry_key(a)) != entry_id("o/m", entry_key(a))


def test_messages_without_literal_text_are_keyed_by_site():
    a = site("{msg}", ["msg"], opaque=True, qualname="A.f")
    b = site("{msg}", ["msg"], opaque=True, qualname="B.g")
    assert entry_key(a) == ("site", "ValueError", "pkg.mod", "A.f")
    assert entry_id("o/n", entry_key(a)) != entry_id("o/n", entry_key(b))
    assert not has_literal_text("{}: {}")
    assert has_literal_text("{} failed")


def test_ids_are_16_hex_and_checked():
    eid = entry_id("o/n", entry_key(site("x")))
    assert check_id(eid) == eid and len(eid) == 16
    for bad in ["../../etc/passwd", "ABCDEF0123456789", "0123", "0123456789abcdef0"]:
        with pytest.raises(ValueError):
            check_id(bad)
