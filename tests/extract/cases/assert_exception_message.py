# `assert cond, ValueError("...")`: older vLLM releases (0.4 to 0.10) give an assert an
# exception instance as its message. Python prints `AssertionError: <str of it>`, and the str of
# an exception of one argument is that argument, so the entry's message is the argument's
# template (line 8, 10), not one opaque `{ValueError(...)}` field that no paste can match.
# str(ValueError("two", "arguments")) is the tuple's text, and make_error may return anything:
# those two stay opaque (line 11, 12).
def check(block_size, kind):
    assert block_size in (16, 32), ValueError(
        "Torch SPDA does not support block-sparse attention.")
    assert kind, RuntimeError(f"unknown kind {kind!r} for block size {block_size}")
    assert kind != "x", ValueError("two", "arguments")
    assert kind != "y", make_error("built elsewhere")
