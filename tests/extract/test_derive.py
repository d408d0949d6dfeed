"""extract.derive: per-site facts returned as values, never written into what was given."""

import copy

from crawler.extract.derive import KEY, derive_result, derived
from crawler.extract.visitor import extract_file


def test_derive_result_returns_derived_copies_and_leaves_the_result_given():
    result = extract_file("pkg/m.py", b"def f(x):\n    raise ValueError(f'bad {x}')\n")
    given = copy.deepcopy(result)
    done = derive_result(result)
    assert result == given  # no site of the result given carries a derivation
    assert done is not result and done["sites"][0][KEY]["stamp"][0] == "bad {x}"


def test_derived_computes_a_stale_derivation_without_writing_it():
    site = derive_result(extract_file("pkg/m.py", b"def f(x):\n    raise ValueError(f'bad {x}')\n"))["sites"][0]
    attached = site[KEY]
    assert derived(site) is attached  # still valid: a lookup
    site["template"] = {**site["template"], "text": "worse {x}"}
    fresh = derived(site)
    assert fresh["stamp"][0] == "worse {x}" and site[KEY] is attached
