"""Related errors by shared terms: a name relates two errors, one plain word does not."""

from __future__ import annotations

import pytest

from crawler.catalogue.related import compute, message_terms


def _record(i: int, text: str, fields: tuple[str, ...] = (), path: str | None = None) -> dict:
    return {
        "id": f"{i:016x}",
        "title": text[:40],
        "message": {"text": text, "fields": [{"expr": f} for f in fields]},
        "location": {"path": path or f"pkg/m{i}.py", "line": 1, "qualname": f"f{i}"},
        "sites": [{"module": f"pkg{i}.m{i}"}],
    }


def _filler(n: int) -> list[dict]:
    # enough unrelated entries that the words below are rare (each in 2 of many)
    return [_record(100 + i, f"filler message number {i} about nothing") for i in range(60)]


def test_a_field_gives_its_names_not_its_plain_words():
    words, names = message_terms(
        {
            "text": "bad {self.prefetch.offload_prefetch_step} for {', '.join(sorted(valid_kinds))} in CuTe WNA16 here",
            "fields": [{"expr": "self.prefetch.offload_prefetch_step"}, {"expr": "', '.join(sorted(valid_kinds))"}],
        }
    )
    assert {"offload_prefetch_step", "valid_kinds", "cute", "wna16"} <= names
    assert "here" in words and "here" not in names
    assert not {"self", "prefetch", "join", "sorted"} & words


def test_one_shared_plain_word_relates_nothing_but_a_shared_name_or_two_words_do():
    recs = _filler(60) + [
        _record(1, "Casting here would allocate a tensor"),
        _record(2, "Should be cudagraph only here"),  # shares only the plain word "here"
        _record(3, "kv_role {kv_role} is not known", ("kv_role",)),
        _record(4, "kv_role must be set for a producer"),  # shares the name kv_role
        _record(5, "Options frobnicate and quuxify are mutually exclusive"),
        _record(6, "cannot frobnicate while you quuxify"),  # shares two plain words
        _record(7, "Failed to parse {args.max_inflight}", ("args.max_inflight",)),
        _record(8, "Failed to read {args.port}", ("args.port",)),  # shares only the code word "args"
    ]
    related = {rid: {r["id"] for r in rel} for rid, rel in compute(recs).items()}
    assert f"{2:016x}" not in related[f"{1:016x}"] and f"{1:016x}" not in related[f"{2:016x}"]
    assert f"{4:016x}" in related[f"{3:016x}"] and f"{3:016x}" in related[f"{4:016x}"]
    assert f"{6:016x}" in related[f"{5:016x}"]
    assert f"{8:016x}" not in related[f"{7:016x}"]


def test_a_plain_word_still_counts_for_a_neighbour():
    recs = _filler(60) + [
        _record(1, "Casting here would allocate a tensor", path="pkg/same.py"),
        _record(2, "Should be cudagraph only here", path="pkg/same.py"),
        _record(3, "Totally different words entirely", path="pkg/same.py"),
    ]
    out = {rid: rel for rid, rel in compute(recs).items()}
    first = [r["id"] for r in out[f"{1:016x}"]]
    # both are module neighbours; the one that also shares "here" ranks first
    assert first[:2] == [f"{2:016x}", f"{3:016x}"]
    assert out[f"{1:016x}"][0]["reason"] == "same module; shares here"


def _in_package(i: int, text: str, package: str = "pkg.models") -> dict:
    record = _record(i, text, path=f"{package.replace('.', '/')}/m{i:03d}.py")
    record["sites"] = [{"module": f"{package}.m{i:03d}"}]
    return record


def test_in_a_big_package_being_near_relates_nothing_but_a_word_shared_in_it_does():
    words = ["alpha", "bravo", "charlie", "delta", "echo", "foxtrot", "golf", "hotel", "india", "juliet", "kilo"]
    # 120 entries, a model per module, no two sharing a word but the two that say "patches"
    recs = [_in_package(i, f"{words[i % 11]}{i} {words[(i // 11) % 11]}x{i} failed") for i in range(120)]
    recs[10] = _in_package(10, "Number of patches was not found")
    recs[90] = _in_package(90, "NaViT output has too few patches")
    related = compute(recs)
    assert all(r["reason"] != "same package" for rel in related.values() for r in rel)
    assert [r["reason"] for r in related[f"{10:016x}"]] == ["same package; shares patches"]
    # in a small package, its nearest entries are still related by being near
    small = compute([_in_package(i, f"{words[i % 11]}{i} unrelated{i} text{i}", "pkg.small") for i in range(20)])
    assert any(r["reason"] == "same package" for r in small[f"{5:016x}"])


def test_a_call_path_label_says_what_the_related_entry_does():
    """A log entry on a call path was 'raised by a caller' of the entry it is related to."""
    recs = _filler(60) + [
        _record(1, "size must be positive", path="pkg/check.py"),
        _record(2, "building without a size", path="pkg/build.py"),
        _record(3, "a response refused the size", path="pkg/serve.py"),
    ]
    for r, kind in zip(recs, ["raise"] * 60 + ["raise", "log", "response"], strict=True):
        r["kind"] = kind
    # build (record 2's function) and serve (record 3's) both call check (record 1's)
    callers = {f"{1:016x}": [{"path": "pkg/build.py", "qualname": "f2"}, {"path": "pkg/serve.py", "qualname": "f3"}]}
    reasons = {r["id"]: r["reason"].split(";")[0] for r in compute(recs, callers)[f"{1:016x}"]}
    assert reasons[f"{2:016x}"] == "logged by a caller" and reasons[f"{3:016x}"] == "answered by a caller"
    assert compute(recs, callers)[f"{2:016x}"][0]["reason"].startswith("raised by a function it calls")


def _on_one_path(n: int, functions: int = 2, seed: int = 0, spread: bool = False) -> tuple[list[dict], dict]:
    """``n`` records in ``functions`` functions, each function calling the next (the last calling
    the first: a cycle), some of them logs or responses; each record's callers are its function's
    caller. ``spread``: each function in a package of its own, of skewed sizes, with messages
    that share a rare term only now and then (so the order of ids decides what ranks); else all
    in one file, sharing terms often."""
    import random

    rng = random.Random(seed)
    kinds = ["raise"] * 6 + ["log", "response"]
    sizes = [rng.randrange(1, 12) for _ in range(functions)]
    recs, callers = [], {}
    for k in range(n):
        f = rng.choices(range(functions), weights=sizes)[0] if spread else rng.randrange(functions)
        where = f"pkg{f}/engine" if spread else "pkg/engine"
        if spread:
            text = f"widget{k} alpha{k}" + (f" shared_{rng.randrange(3)}" if rng.random() < 0.15 else "")
        else:
            text = f"widget step {k} failed in stage_{rng.randrange(max(2, n // 7))} of pool_{rng.randrange(5)}"
        record = _record(rng.randrange(1 << 40), text, path=f"{where}.py")
        record["location"] = {"path": f"{where}.py", "line": rng.randrange(1, 4 * n), "qualname": f"Engine.step{f}"}
        record["sites"] = [{"module": where.replace("/", ".")}]
        record["kind"] = rng.choice(kinds)
        recs.append(record)
        caller = (f - 1) % functions
        callers[record["id"]] = [{"path": f"pkg{caller}/engine.py" if spread else "pkg/engine.py", "qualname": f"Engine.step{caller}", "line": 1}]
    rng.shuffle(recs)
    return recs, callers


@pytest.mark.slow
def test_a_record_on_a_long_call_path_looks_at_a_few_of_it():
    """Every record of a caller function was looked at for every record it calls: 6,000 records
    on one path took 9-16 s. Now a handful of each, plus those sharing a term or a place."""
    from crawler.catalogue.related import _place_keys, call_paths

    recs, callers = _on_one_path(2000)
    paths = call_paths(recs, [_place_keys(r) for r in recs], callers)
    looked = [len(paths(i, lambda: ())) for i in range(len(recs))]
    assert max(looked) <= 7, max(looked)
    every = call_paths(recs, [_place_keys(r) for r in recs], callers, every=True)
    assert min(len(every(i)) for i in range(len(recs))) > 900  # what each looked at before


def _call_graph(seed: int) -> tuple[list[dict], dict]:
    """Functions each in a package of its own, a few with many records and most with one to
    three, each called by up to two others (itself too, now and then): who ranks on a record's
    call paths is decided by the order of ids, where leaving records out would show."""
    import random

    rng = random.Random(seed)
    m = rng.randrange(3, 12)
    sizes = [rng.choice([1, 1, 2, 3, rng.randrange(6, 40)]) for _ in range(m)]
    calls = {f: rng.sample(range(m), rng.randrange(0, 3)) for f in range(m)}
    recs, callers = [], {}
    for f, size in enumerate(sizes):
        for _ in range(size):
            k = rng.randrange(1 << 40)
            text = f"widget{k} alpha{k}" + (f" shared_{rng.randrange(3)}" if rng.random() < 0.1 else "")
            record = _record(k, text, path=f"p{f}/m.py")
            record["location"]["qualname"] = f"step{f}"
            record["location"]["line"] = rng.randrange(1, 500)
            record["sites"] = [{"module": f"p{f}.m"}]
            record["kind"] = rng.choice(["raise"] * 6 + ["log", "response"])
            recs.append(record)
            callers[record["id"]] = [{"path": f"p{g}/m.py", "qualname": f"step{g}", "line": rng.randrange(1, 500)} for g in calls[f]]
    rng.shuffle(recs)
    return recs, callers


@pytest.mark.parametrize("seed", range(200))
def test_related_on_random_call_graphs_is_what_walking_every_path_gives(seed):
    recs, callers = _call_graph(seed)
    assert compute(recs, callers) == compute(recs, callers, every_path=True)


@pytest.mark.slow
@pytest.mark.parametrize("seed", range(25))
@pytest.mark.parametrize(
    ("n", "functions", "spread"), [(40, 2, False), (150, 6, False), (12, 2, True), (25, 3, True), (40, 1, True), (60, 5, True), (90, 8, True)]
)
def test_related_on_long_call_paths_is_what_walking_all_of_them_gives(n, functions, spread, seed):
    recs, callers = _on_one_path(n, functions, seed, spread)
    # some records with no caller, and some with two
    for r in recs[::5]:
        callers.pop(r["id"], None)
    for r in recs[1::7]:
        first = "pkg0" if spread else "pkg"
        callers[r["id"]] = [*callers.get(r["id"], []), {"path": f"{first}/engine.py", "qualname": "Engine.step0", "line": 9}]
    assert compute(recs, callers) == compute(recs, callers, every_path=True)


def test_a_callers_checks_before_its_call_come_first():
    """The errors a user meets on the way: a factory's checks raised before the line it calls a
    connector's constructor on rank above those it raises after that call returns."""
    recs = _filler(60) + [
        _record(1, "nixl needs a config", path="pkg/nixl.py"),
        _record(2, "kv_transfer_config must be set", path="pkg/factory.py"),
        _record(3, "the connector came back empty", path="pkg/factory.py"),
    ]
    for r in recs:
        r["kind"] = "raise"
    recs[-2]["location"].update(line=10, qualname="create")
    recs[-1]["location"].update(line=40, qualname="create")
    callers = {f"{1:016x}": [{"path": "pkg/factory.py", "qualname": "create", "line": 25}]}
    related = compute(recs, callers)[f"{1:016x}"]
    assert [(r["id"], r["reason"].split(";")[0]) for r in related[:2]] == [
        (f"{2:016x}", "raised on the way here, by a caller"),
        (f"{3:016x}", "raised by a caller"),
    ]
