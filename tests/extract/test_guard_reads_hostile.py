"""What a check reads (``extract.guard_reads``) over hostile lines of a crawled function: its
line patterns are tried on every line above a site (a docstring's too, any text), so each must be
linear in the line, whatever the line holds."""

from __future__ import annotations

import time

import pytest

from crawler.extract.guard_reads import ClassText, FunctionText, trace

#: Lines a crawled file may hold (a docstring's lines are any text; each is also valid code),
#: each with the run that makes it long: an annotation before spaces and a comparison, a ``for``
#: over a chained ``in``, spaces after a ``for``'s ``in`` and after an ``=``.
HOSTILE_LINES = {
    "annotation": ("    a :{}== 1", " ", 20000),
    "self-annotation": ("    self.a :{}== 1", " ", 20000),
    "chained-in": ("    for a in b{}:  # x", " in b", 40000),
    "spaced-for": ("    for a in{}b: # x", " ", 40000),
    "spaced-value": ("    x ={}", " ", 40000),
}


def _traced(line: str) -> dict[str, list[str]]:
    code = f'class C:\n  def f(self, a):\n    """doc\n{line}\n    """\n{line}\n    assert a > 0 and self.a\n'
    return trace(FunctionText(code, 1), 7, "a > 0 and self.a", ClassText(code, 1))


@pytest.mark.parametrize("name", HOSTILE_LINES)
def test_a_hostile_line_above_a_check_costs_its_length(name):
    """Each shape cost the trace minutes to hours before (the annotation's spaces were split three
    ways by ``\\s*``, ``[^=]+?`` and ``\\s*``; a ``for``'s targets ran over every " in ", its
    iterable started at every space): a hang guard, not a speed check; the check below it is
    traced as below the same line kept short."""
    shape, run, times = HOSTILE_LINES[name]
    start = time.process_time()
    found = _traced(shape.format(run * times))
    assert time.process_time() - start < 10, name
    assert found == _traced(shape.format(run * 2))
