"""Hostile ``#define``\\s: chains, bombs and crowds of check macros an upstream may define, read
within bounds of work (counted here, never timed) and giving the sites a preprocessor would."""

from __future__ import annotations

from types import SimpleNamespace

from crawler.extract import native
from crawler.extract.native import CHECKS, extract_native, parse_tree
from crawler.extract.native_macros import MAX_EXPANSIONS, MAX_FILE_TEXT, header_macros, tokens, wrappers


class CountingBytes(bytes):
    """A header's bytes that count the searches made in them."""

    searches = 0

    def __contains__(self, word: object) -> bool:
        CountingBytes.searches += 1
        return super().__contains__(word)  # type: ignore[operator]

    def find(self, *args, **kwargs) -> int:  # type: ignore[override]
        CountingBytes.searches += 1
        return super().find(*args, **kwargs)


class CountingName(str):
    """A macro's name that counts the times it is looked up (hashed)."""

    lookups = 0

    def __hash__(self) -> int:
        CountingName.lookups += 1
        return super().__hash__()


def chain_headers(n: int) -> list[tuple[str, bytes]]:
    """``n`` headers, each wrapping the macro of the one before (``M0X`` wraps TORCH_CHECK)."""
    files = [(f"csrc/h{k}.h", CountingBytes(f"#define M{k}X(x) M{k - 1}X(x)\n".encode())) for k in range(n, 0, -1)]
    return [*files, ("csrc/h0.h", CountingBytes(b'#define M0X(x) TORCH_CHECK(x, "chained")\n'))]


def test_a_chain_of_headers_is_searched_a_bounded_number_of_times_a_header():
    # each round searched every pending header for every name found so far: for a chain (a new
    # wrapper a round) the cube of the headers, 99 s of CPU for 1,000 one-line headers
    n = 300
    CountingBytes.searches = 0
    macros = header_macros(chain_headers(n), parse_tree, CHECKS)
    assert CountingBytes.searches <= 30 * n
    names = {m[0] for m in macros}
    assert {f"M{k}X" for k in range(8)} <= names  # every wrapper a use can expand down to its check
    site = extract_native("csrc/use.cu", b"void f(int a) { M7X(a > 0); }\n", macros)
    assert [s["template"]["text"] for s in site["sites"]] == ["chained"]
    assert site["sites"][0]["native"]["macro"] == "M7X"


def test_wrappers_of_a_reversed_chain_are_found_in_one_pass():
    # tried every candidate again until none changed: a pass per link, the square of the #defines
    # (a file of 3,000 #defines, each wrapping the next one down, took 4 s)
    n = 400
    macros = [(CountingName(f"M{k}X"), ("x",), ((f"M{k - 1}X", False), ("(", False), ("x", False), (")", False))) for k in range(n, 0, -1)]
    macros.append((CountingName("M0X"), ("x",), (("TORCH_CHECK", False), ("(", False), ("x", False), (")", False))))
    CountingName.lookups = 0
    found = wrappers(macros, CHECKS)
    assert set(found) == {f"M{k}X" for k in range(n + 1)}
    assert CountingName.lookups <= 20 * n


def test_many_wrappers_are_looked_up_by_identifier_not_searched_for_one_by_one():
    # a header of 20,000 wrappers made each native file's walk search its text 20,000 times
    words = [f"WRAP_{k}".encode() for k in range(5_000)]
    text = CountingBytes(b"void f(int a) {\n  int WRAP_7x = 1; WRAP_7(a); // a comment\n  throw_it(); throw 1;\n}\n")
    root = SimpleNamespace(text=text, start_byte=10)
    CountingBytes.searches = 0
    spots = native._spots(root, (*native._CPP_WORDS, *words))
    assert CountingBytes.searches < 64
    at = {tokens(bytes(text[s - 10 :]).decode())[0][0] for s in spots}
    assert at == {"WRAP_7", "throw"}  # whole identifiers: not WRAP_7x, not throw_it


def test_the_sites_of_many_wrappers_are_those_of_a_few():
    header = "\n".join(f'#define WRAP_{k}(x) TORCH_CHECK(x, "wrapped {k}")' for k in range(200)).encode()
    macros = header_macros([("csrc/w.h", header)], parse_tree, CHECKS)
    code = b"void f(int a) {\n  WRAP_7(a > 0);\n  if (a) { WRAP_150(a < 9); }\n  WRAP_7x(a);\n}\n"
    many = extract_native("csrc/f.cu", code, macros)
    few = extract_native("csrc/f.cu", code, tuple(m for m in macros if m[0] in ("WRAP_7", "WRAP_150")))
    assert [s["template"]["text"] for s in many["sites"]] == ["wrapped 7", "wrapped 150"]
    assert many["sites"] == few["sites"]


def test_the_expansions_of_a_file_are_bounded_in_characters():
    # a wrapper of 140 checks used 5,000 times in a 40 KB file made 700,000 sites (164 s of CPU)
    check = 'TORCH_CHECK(x, "' + "a" * 90 + '")'
    source = "#define W(x) " + "; ".join([check] * 140) + "\nvoid f() {\n" + "W(1);\n" * 300 + "}\n"
    result = extract_native("csrc/bomb.cu", source.encode())
    assert result["status"] == "ok"
    assert 0 < len(result["sites"]) <= MAX_FILE_TEXT // len(check) + 140


def test_a_macro_bomb_is_expanded_a_bounded_number_of_times():
    # each level uses the one below four times: 5,461 expansions for one use, 0.8 s of CPU for
    # 400 bytes when 5,000 were let through
    lines = ['#define B0(x) TORCH_CHECK(x, "boom")']
    lines += [f"#define B{k}(x) B{k - 1}(x); B{k - 1}(x); B{k - 1}(x); B{k - 1}(x)" for k in range(1, 7)]
    result = extract_native("csrc/bomb.cu", ("\n".join(lines) + "\nvoid f(int a) { B6(a); }\n").encode())
    assert result["status"] == "ok"
    assert 0 < len(result["sites"]) <= MAX_EXPANSIONS <= 1_000


def test_an_exiting_macro_of_many_prints_reads_its_block_once(monkeypatch):
    # each printing statement scanned the statements after it for the exit: the square of the
    # block (an exiting macro of 800 printf calls took 0.8 s a use, 20 uses 15 s)
    n = 300
    body = " ".join([f'printf("step {k} failed: %d\\n", x);' for k in range(n)])
    source = f"#define DIE(x) do {{ {body} exit(1); }} while (0)\nvoid f(int a) {{ DIE(a); }}\n"
    calls = 0
    text = native._text

    def counting(node):
        nonlocal calls
        calls += 1
        return text(node)

    monkeypatch.setattr(native, "_text", counting)
    result = extract_native("csrc/die.cu", source.encode())
    assert len(result["sites"]) == n
    assert {s["exception"] for s in result["sites"]} == {"exit"}
    assert result["sites"][7]["template"]["text"] == "step 7 failed: {a}"
    assert calls <= 20 * n


class CountingNode:
    """A tree-sitter node that counts the steps taken from it to a sibling (each a walk of the
    parent's children in tree-sitter itself)."""

    steps = 0
    SIBLINGS = frozenset({"next_named_sibling", "prev_named_sibling", "next_sibling", "prev_sibling"})

    def __init__(self, node):
        self._node = node

    def __getattr__(self, name):
        if name in CountingNode.SIBLINGS:
            CountingNode.steps += 1
        return _counting(getattr(self._node, name))

    def child_by_field_name(self, name):
        return _counting(self._node.child_by_field_name(name))

    def __eq__(self, other):
        return isinstance(other, CountingNode) and self._node == other._node

    def __hash__(self):
        return hash(self._node)


def _counting(value):
    if type(value).__name__ == "Node":
        return CountingNode(value)
    if isinstance(value, list):
        return [_counting(v) for v in value]
    return value


def test_rust_attributes_are_read_once_a_parent(monkeypatch):
    # each #[error] stepped on through the attributes after it to its item, and each item back
    # through those before it, a step a sibling (itself a walk of the parent's children in
    # tree-sitter): 4,000 #[error] lines before one struct took 304 s of CPU
    n = 300
    source = "".join(f"// note {k}\n" for k in range(n)) + "".join(f'#[error("message {k}")]\n' for k in range(n))
    source += 'struct Many;\n\n#[cfg(test)]\n// a comment between\nmod tests {\n    fn t() { bail!("in a test"); }\n}\n'
    source += 'fn run() -> Result<()> {\n    bail!("outside");\n}\n'
    real = native._parser("rust")

    class Parser:
        def parse(self, data):
            tree = real.parse(data)
            return SimpleNamespace(root_node=CountingNode(tree.root_node))

    monkeypatch.setattr(native, "_parser", lambda grammar: Parser())
    CountingNode.steps = 0
    result = extract_native("rust/src/many.rs", source.encode())
    messages = [s["template"]["text"] for s in result["sites"]]
    assert messages == [f"message {k}" for k in range(n)] + ["outside"]  # the test module's bail! is not one
    assert {s["qualname"] for s in result["sites"][:n]} == {"Many"}
    assert CountingNode.steps <= n
