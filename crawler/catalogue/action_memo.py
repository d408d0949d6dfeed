"""Who acts (``actions.action``) kept by a digest of everything it reads, so that a crawl of a
commit that changed one file makes it anew only for the records whose inputs changed.

``action(record, reads, passed)`` is a pure function of the record as :func:`joined.merge` holds
it when who acts is made (its site, message, meaning and related errors put in), of what the
check reads (``guard_reads.reads`` of the record's primary site) and of what the callers pass,
and of errcat's code. Who acts never reads where the record is pinned (``publish.pins``: the
provenance's commit, date, source and permalink basis, and the permalinks, which all name the
crawled commit, so every record of a new commit differs there), so it is made from the record
without them (:func:`pinless`; a rule that read one would fail on it, and
``tests/catalogue/test_action_memo.py`` holds that the actions are those of the whole records).
The key of a record's action is the SHA-256 of that record, what the check reads (the primary
site's stamped reads, which are all ``guard_reads.reads`` takes of a site that has them; else the
site itself) and ``passed`` serialized (orjson: the same data gives the same bytes); the memo as a whole is stamped with
errcat's code digest (every module, so a change to any rule, or to anything a rule calls, makes
every action anew) and the Python that ran it (the regular expressions' engine). A record that
cannot be serialized is not kept: its action is made each time.

Nothing outside the key is read, so a kept action is the one the rules would make now: a crawl
with the memo gives the bytes a crawl without it gives (the tests hold that too).
The memo is our own JSON in the joins' cache (one row, replaced by each crawl, the actions of the
records of that crawl alone), checked on the way in like any cache: a row that does not decode,
is of other code, or holds one action not of the shape ``records.Action`` has is ignored whole,
and every action is made anew.
"""

from __future__ import annotations

import hashlib
import sys
from collections.abc import Callable, Mapping
from typing import Any

import orjson

from crawler.catalogue.actions import action
from crawler.catalogue.meaning import SettingNames
from crawler.extract.guard_reads import READS, caught, handed, importing, preprocessor, reads, stub
from crawler.model.shapes import ExtractedSite, RecordData

#: An action's fields and the types each may hold (``records.Action``).
_FIELDS: dict[str, tuple[type, ...]] = {"actor": (str,), "basis": (str,), "says": (str,), "remedy": (str, type(None)), "steps": (list,)}


def stamp(code: str, names: SettingNames | None = None) -> str:
    """What a kept action stands for besides its inputs: errcat's code, the Python running it, and
    how the repository spells its settings (``names``: one table per crawl, which who acts reads to
    name a setting by its option, so a commit that adds or renames an option makes every action anew)."""
    spelled = (
        b""
        if names is None
        else orjson.dumps(
            [names.flags, {k: sorted(v) for k, v in names.fields.items()}, sorted(names.filled), sorted(names.required)], option=orjson.OPT_SORT_KEYS
        )
    )
    return hashlib.sha256(f"{code}\0{sys.version}\0{orjson.__version__}\0".encode() + spelled).hexdigest()


def _valid(value: Any) -> bool:
    # (:data:`_FIELDS` spelled out: a crawl checks every kept action, 18,075 for vLLM)
    if type(value) is not dict or len(value) != len(_FIELDS) or value.keys() != _FIELDS.keys():
        return False
    remedy, steps = value["remedy"], value["steps"]
    if type(value["actor"]) is not str or type(value["basis"]) is not str or type(value["says"]) is not str:
        return False
    if (remedy is not None and type(remedy) is not str) or type(steps) is not list:
        return False
    for step in steps:
        if type(step) is not str:
            return False
    return True


def decoded(value: Any, code_stamp: str) -> dict[str, dict[str, Any]]:
    """The actions a kept row holds, by key, when it is a whole row of this code's; else none."""
    if type(value) is not dict or value.get("stamp") != code_stamp or type(value.get("actions")) is not dict:
        return {}
    actions = value["actions"]
    for k, v in actions.items():
        if type(k) is not str or len(k) != 64 or not _valid(v):
            return {}
    return actions


class Memo:
    """The actions kept from the last crawl (``kept``: by key) and those of this one, as they are made."""

    def __init__(self, kept: Mapping[str, dict[str, Any]], code_stamp: str, names: SettingNames | None = None) -> None:
        self.kept = kept
        self.names = names
        self.stamp = code_stamp
        self.now: dict[str, dict[str, Any]] = {}
        #: By record id, the key its action was kept by (``publish.line_memo`` makes its content key of it).
        self.keys: dict[str, str] = {}
        self.made = 0

    def action(self, record: RecordData, primary: ExtractedSite | None, passed: list[str] | None) -> dict[str, Any]:
        """``actions.action`` of the record, from the memo when its inputs are the kept ones'."""
        own = pinless(record)
        stamped = primary.get(READS) if primary is not None else None
        try:
            read = ["reads", stamped] if stamped is not None else ["site", primary]
            key = hashlib.sha256(orjson.dumps([own, read, passed])).hexdigest()
        except TypeError:  # (not JSON data: a lone surrogate, a key that is not text) made each time
            return plain(own, primary, passed, self.names)
        self.keys[record["id"]] = key
        found = self.kept.get(key)
        if found is None:
            found = plain(own, primary, passed, self.names)
            self.made += 1
        self.now[key] = found  # (the record's own: :func:`keep` serializes them before anything else runs)
        return found

    def value(self) -> dict[str, Any]:
        """What to keep for the next crawl: this crawl's actions, stamped."""
        return {"stamp": self.stamp, "actions": self.now}

    def changed(self) -> bool:
        """Whether the row kept differs from this crawl's (nothing to write when each was kept)."""
        return self.made > 0 or len(self.now) != len(self.kept)


#: The provenance's fields that say where a record is pinned (``publish.pins``).
PINNED = frozenset({"commit", "commit_date", "upstream_commit", "source", "permalinks"})


def pinless(record: RecordData) -> Any:
    """The record without where it is pinned: its provenance's :data:`PINNED` fields and the
    permalinks of its location, sites and reproductions (a new dict: ``record`` is not changed).
    A record built without them (``entries.build_entries``, not ``pinned``) is copied only where
    it has some: its reproductions' permalinks."""
    meaning = record["meaning"]
    reproductions = meaning.get("reproductions")
    if reproductions:
        meaning = {**meaning, "reproductions": [{k: v for k, v in r.items() if k != "permalink"} for r in reproductions]}
    if PINNED.isdisjoint(record["provenance"]) and "permalink" not in record["location"] and not any("permalink" in s for s in record["sites"]):
        return {**record, "meaning": meaning}
    return {
        **record,
        "provenance": {k: v for k, v in record["provenance"].items() if k not in PINNED},
        "location": {k: v for k, v in record["location"].items() if k != "permalink"},
        "sites": [{k: v for k, v in s.items() if k != "permalink"} for s in record["sites"]],
        "meaning": meaning,
    }


def plain(record: RecordData, primary: ExtractedSite | None, passed: list[str] | None, names: SettingNames | None = None) -> dict[str, Any]:
    """``actions.action`` with no memo, taking what :meth:`Memo.action` takes and the settings' spelling."""
    if primary is None:
        return action(record, None, passed, names)
    return action(record, reads(primary), passed, names, caught(primary), preprocessor(primary), handed(primary), stub(primary), importing(primary))


#: What :func:`joined.merge` calls for each record's action.
Act = Callable[[RecordData, ExtractedSite | None, list[str] | None], dict[str, Any]]

#: The joins' cache row the memo is kept in (``meaning_join.JoinStore``), under the joins' base key.
ROW = "actions"


def load(store: Any, base: str, code: str, names: SettingNames | None = None) -> Memo:
    """The memo kept in ``store`` (a ``meaning_join.JoinStore``) by the last crawl with this base
    key (errcat's code, the repository, its conventions); an empty one when none fits."""
    code_stamp = stamp(code, names)
    return Memo(decoded(store.get(ROW, base), code_stamp), code_stamp, names)


def keep(store: Any, base: str, memo: Memo) -> None:
    """Keep this crawl's actions for the next (nothing is written when they are all the kept ones)."""
    if memo.changed():
        store.put(ROW, base, memo.value())
