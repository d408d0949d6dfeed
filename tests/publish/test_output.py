import gzip
import json
import os
from pathlib import Path

import pytest

from crawler.base.errors import DataError
from crawler.catalogue.entries import Identity, build_records
from crawler.model.records import SCHEMA_VERSION, Manifest, Record, RepoRef
from crawler.publish.validate import validate_dataset
from crawler.publish.writer import recover, render_dataset, write_dataset

COMMIT = "a" * 40
IDENTITY = Identity(RepoRef(url="https://github.com/o/n", owner="o", name="n"), COMMIT, "2026-01-01T00:00:00+00:00", None, "git")


def site(text, line, path="pkg/mod.py", exception="ValueError", qualname="f"):
    return {
        "path": path,
        "line": line,
        "end_line": line,
        "module": "pkg.mod",
        "qualname": qualname,
        "kind": "raise",
        "exception": exception,
        "exception_qualname": f"builtins.{exception}",
        "template": {"text": text, "fields": [], "pattern": "^x$", "form": "literal", "opaque": False},
        "snippet": {"start_line": line, "end_line": line, "code": f"raise {exception}({text!r})"},
        "facts": {"guards": ["x < 0"]},
    }


def manifest_for(records, sites=0):
    return Manifest.model_validate(
        {
            "schema_version": SCHEMA_VERSION,
            "errcat_version": "0",
            "extractor_version": "0",
            "repo": IDENTITY.repo.model_dump(),
            "commit": COMMIT,
            "commit_date": IDENTITY.commit_date,
            "upstream_commit": None,
            "ref": None,
            "source": "git",
            "include": ["**/*.py"],
            "exclude": [],
            "skipped": [],
            "curated_digest": None,
            "input_digest": "0" * 64,
            "counts": {"files": 1, "parsed": 1, "skipped": 0, "sites": sites, "entries": len(records), "bare_asserts": 0, "reraises": 0},
            "content_digest": "",
        }
    )


def dataset_files(sites):
    """Records built from site dicts, and every file of their dataset."""
    records = build_records(IDENTITY, sites)
    return records, render_dataset(records, manifest_for(records, len(sites)))


def snapshot(directory):
    return {p.relative_to(directory).as_posix(): p.read_bytes() for p in sorted(directory.rglob("*")) if p.is_file()}


def test_sites_with_one_template_are_one_entry_with_the_first_site_primary():
    records, _ = dataset_files([site("boom", 30, path="pkg/b.py"), site("boom", 9, path="pkg/b.py"), site("other", 1)])
    assert len(records) == 2
    boom = next(r for r in records if r["message"]["text"] == "boom")
    assert [s["line"] for s in boom["sites"]] == [9, 30]
    assert boom["location"]["line"] == 9
    assert boom["location"]["permalink"] == f"https://github.com/o/n/blob/{COMMIT}/pkg/b.py#L9"


def test_records_built_as_dicts_have_exactly_the_models_shape():
    records, _ = dataset_files([site("boom", 3), site("bang", 5)])
    for record in records:
        assert Record.model_validate(record).model_dump(mode="json") == record


def test_written_dataset_validates_and_is_deterministic(tmp_path):
    records, files = dataset_files([site("boom", 3), site("bang", 5)])
    target = write_dataset(tmp_path / "o" / "n", files)
    assert validate_dataset(target) == []
    first = snapshot(target)
    _, files = dataset_files([site("bang", 5), site("boom", 3)])
    write_dataset(target, files)
    assert snapshot(target) == first
    assert all(data.endswith(b"\n") for name, data in first.items() if name != "errors.jsonl.gz")
    assert sorted(first) == sorted(["manifest.json", "index.json", "errors.jsonl.gz", *(f"errors/{r['id']}.json" for r in records)])
    lines = gzip.decompress(first["errors.jsonl.gz"]).splitlines()
    assert [json.loads(line)["id"] for line in lines] == sorted(r["id"] for r in records)
    # deterministic gzip: no file name, no modification time, one fixed level
    assert first["errors.jsonl.gz"][4:8] == b"\0\0\0\0" and not first["errors.jsonl.gz"][3] & 0x08


@pytest.mark.slow
def test_validate_reports_every_problem_with_its_pointer(tmp_path):
    records, files = dataset_files([site("boom", 3)])
    target = write_dataset(tmp_path / "o" / "n", files)
    path = target / "errors" / f"{records[0]['id']}.json"
    data = json.loads(path.read_text())
    data["location"]["line"] = "three"
    data["sites"][0]["kind"] = "yell"
    path.write_text(json.dumps(data))
    problems = [str(p) for p in validate_dataset(target, "reference")]
    assert f"errors/{records[0]['id']}.json#/location/line: 'three' is not of type 'integer'" in problems
    assert any(p.startswith(f"errors/{records[0]['id']}.json#/sites/0/kind") for p in problems)


def test_validate_reports_missing_and_unlisted_records(tmp_path):
    records, files = dataset_files([site("boom", 3)])
    target = write_dataset(tmp_path / "o" / "n", files)
    (target / "errors" / f"{records[0]['id']}.json").rename(target / "errors" / "0000000000000000.json")
    problems = [str(p) for p in validate_dataset(target)]
    assert any("has no file" in p for p in problems)
    assert any(p.startswith("errors/0000000000000000.json#/id") for p in problems)


@pytest.mark.slow
def test_validate_never_opens_a_fifo_or_a_device_and_never_follows_a_symlink(tmp_path):
    """A FIFO blocked validate forever and a symlink to /dev/zero never ended: each is now one
    problem, and the subprocess timeout is only a hang guard."""
    import subprocess
    import sys

    records, files = dataset_files([site("boom", 3), site("bang", 5), site("bust", 7)])
    target = write_dataset(tmp_path / "o" / "n", files)
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    first, second, third = (f"errors/{r['id']}.json" for r in records)
    os.replace(target / first, elsewhere / "record.json")
    (target / first).symlink_to(elsewhere / "record.json")  # valid, but outside the dataset
    (target / second).unlink()
    (target / second).symlink_to("/dev/zero")
    (target / third).unlink()
    os.mkfifo(target / third)
    (target / "errors" / "dangling.json").symlink_to(tmp_path / "nowhere")
    (target / "index.json").unlink()
    os.mkfifo(target / "index.json")
    (target / "errors.jsonl.gz").unlink()
    (target / "errors.jsonl.gz").symlink_to("/dev/zero")
    (target / "search.json").mkdir()
    proc = subprocess.run(
        [sys.executable, "-m", "crawler", "validate", str(target)],
        capture_output=True,
        text=True,
        timeout=120,
        env=dict(os.environ, PYTHONPATH=str(Path(__file__).resolve().parents[2])),
    )
    assert proc.returncode == 1 and "Traceback" not in proc.stderr
    lines = proc.stdout.splitlines()
    for rel, kind in [
        (first, "a symbolic link"),
        (second, "a symbolic link"),
        (third, "a FIFO"),
        ("errors/dangling.json", "a symbolic link"),
        ("index.json", "a FIFO"),
        ("errors.jsonl.gz", "a symbolic link"),
        ("search.json", "a directory"),
    ]:
        assert f"{target}/{rel}: {kind}, not a regular file; not read" in lines, (rel, proc.stdout)
    other = write_dataset(tmp_path / "o" / "m", files)
    os.replace(other / "errors", elsewhere / "errors")
    (other / "errors").symlink_to(elsewhere / "errors")
    assert "errors: a symbolic link, not a directory; not read" in [str(p) for p in validate_dataset(other)]


def test_validate_reads_no_file_larger_than_its_bounds(tmp_path):
    from crawler.publish import validate

    records, files = dataset_files([site("boom", 3)])
    target = write_dataset(tmp_path / "o" / "n", files)
    rel = f"errors/{records[0]['id']}.json"
    os.truncate(target / rel, validate.MAX_RECORD_BYTES + 1)  # sparse: no disk, no reading needed to refuse
    os.truncate(target / "errors.jsonl.gz", validate.MAX_FILE_BYTES + 1)
    problems = [str(p) for p in validate_dataset(target)]
    assert f"{rel}: {validate.MAX_RECORD_BYTES + 1:,} bytes, more than the {validate.MAX_RECORD_BYTES:,} validate reads; not read" in problems
    assert f"errors.jsonl.gz: {validate.MAX_FILE_BYTES + 1:,} bytes, more than the {validate.MAX_FILE_BYTES:,} validate reads; not read" in problems


def test_invalid_data_writes_nothing(tmp_path):
    _, files = dataset_files([site("boom", 3)])
    target = write_dataset(tmp_path / "o" / "n", files)
    before = snapshot(target)
    records, _ = dataset_files([site("boom", 3)])
    records[0]["id"] = "../../escape"
    with pytest.raises((DataError, ValueError)):
        render_dataset(records, manifest_for(records))
    assert snapshot(target) == before
    assert os.listdir(tmp_path / "o") == ["n"]


def test_schema_failure_names_the_problem_and_writes_nothing(tmp_path):
    records, _ = dataset_files([site("boom", 3)])
    records[0]["location"]["line"] = 0
    with pytest.raises(DataError, match=r"location/line"):
        render_dataset(records, manifest_for(records))


def test_interrupted_swap_is_repaired(tmp_path):
    _, files = dataset_files([site("boom", 3)])
    target = write_dataset(tmp_path / "o" / "n", files)
    before = snapshot(target)
    # a run killed between "rename old aside" and "rename new in"
    os.replace(target, tmp_path / "o" / ".n.old-x1")
    (tmp_path / "o" / ".n.tmp-x2").mkdir()
    recover(target)
    assert snapshot(target) == before
    assert sorted(os.listdir(tmp_path / "o")) == ["n"]


CORRUPTIONS = [
    lambda d: d["location"].__setitem__("line", "three"),
    lambda d: d["sites"][0].__setitem__("kind", "yell"),
    lambda d: d.__setitem__("id", "XYZ"),
    lambda d: d.__setitem__("surprise", 1),
    lambda d: d["message"].pop("pattern"),
    lambda d: d.__setitem__("sites", []),
    lambda d: d["provenance"].__setitem__("commit", "abc"),
    lambda d: d["sites"][0]["facts"].__setitem__("guards", [1, None]),
]


@pytest.mark.parametrize("corrupt", CORRUPTIONS)
def test_both_validation_engines_report_the_same_places(corrupt):
    from crawler.publish.validate import check

    records, files = dataset_files([site("boom", 3)])
    data = json.loads(files[f"errors/{records[0]['id']}.json"])
    assert check("record", data, "r", "reference") == check("record", data, "r", "fast") == []
    corrupt(data)
    reference = {p.pointer for p in check("record", data, "r", "reference")}
    fast = {p.pointer for p in check("record", data, "r", "fast")}
    assert reference and reference == fast


def test_the_empty_explanation_is_the_models_default():
    from crawler.catalogue.entries import empty_explanation
    from crawler.model.records import Explanation

    assert empty_explanation() == Explanation().model_dump(mode="json")


def test_a_streamed_write_that_finds_a_bad_record_at_the_end_leaves_nothing(tmp_path):
    """Files are written while they are rendered; a problem found late removes them all."""
    from crawler.publish.writer import render_files

    _, files = dataset_files([site("boom", 3)])
    target = write_dataset(tmp_path / "o" / "n", files)
    before = snapshot(target)
    records, _ = dataset_files([site(f"bang {i}", i + 1) for i in range(50)])
    records[-1]["location"]["line"] = 0  # only the last record is bad
    with pytest.raises(DataError, match="location/line"):
        write_dataset(target, render_files(records, manifest_for(records)))
    assert snapshot(target) == before
    assert os.listdir(tmp_path / "o") == ["n"]


def test_a_second_crawl_waits_for_the_first_instead_of_removing_its_work(tmp_path):
    """recover() under the dataset lock cannot take a running write's directory for a stray."""
    import threading
    import time

    from crawler.publish.writer import dataset_lock

    _, files = dataset_files([site("boom", 3)])
    target = write_dataset(tmp_path / "o" / "n", files)
    _, new_files = dataset_files([site(f"bang {i}", i + 1) for i in range(20)])
    started, errors = threading.Event(), []

    def slow():
        for i, item in enumerate(new_files.items()):
            if i == 1:
                started.set()
                time.sleep(0.3)
            yield item

    def first():
        try:
            write_dataset(target, slow())
        except BaseException as e:  # noqa: BLE001
            errors.append(e)

    writer = threading.Thread(target=first)
    writer.start()
    started.wait(5)
    with dataset_lock(target):  # what a second crawl does first
        recover(target)
    writer.join(10)
    assert errors == []
    assert snapshot(target) == new_files


def test_cached_results_round_trip_even_with_a_lone_surrogate(tmp_path):
    from crawler.extract.cache import ResultCache, decode_result, encode_result
    from crawler.extract.visitor import extract_file

    results = {k: {**extract_file(k, b""), "sites": [{"text": text}]} for k, text in [("a", "plain ✓"), ("b", "odd \udc80")]}
    with ResultCache(tmp_path) as cache:
        cache.put_encoded((k, encode_result(v)) for k, v in results.items())
    with ResultCache(tmp_path) as cache:
        stored = cache.get_raw(["a", "b", "missing"])
    assert {k: decode_result(v, k) for k, v in stored.items()} == results
    assert decode_result(b"\x00damaged", "a") is None  # a damaged row is a miss


def many_records(n=40):
    return build_records(IDENTITY, [site(f"failure number {i}", i + 1, qualname=f"f{i}") for i in range(n)])


@pytest.mark.parametrize("jobs", [2, 3])
def test_parallel_publish_writes_exactly_what_the_serial_writer_writes(tmp_path, monkeypatch, jobs):
    from crawler.catalogue.search import search_file
    from crawler.publish import writer as output

    monkeypatch.setattr(output, "PARALLEL_MIN_RECORDS", 1)
    records = many_records()
    manifest = manifest_for(records, len(records))
    serial = write_dataset(tmp_path / "s" / "o" / "n", output.render_files(records, manifest, search_file(records, manifest)))
    parallel, completed = output.publish(tmp_path / "p" / "o" / "n", records, manifest, lambda: search_file(records, manifest), jobs=jobs)
    assert snapshot(parallel) == snapshot(serial)
    assert len(snapshot(parallel)) == len(records) + 4  # errors/*.json, index, search, jsonl, manifest
    assert completed == Manifest.model_validate_json((parallel / "manifest.json").read_bytes())
    assert validate_dataset(parallel, engine="fast") == []


@pytest.mark.parametrize("idle", ["helper", "main"])
def test_parallel_publish_writes_every_record_whichever_process_takes_it(tmp_path, monkeypatch, idle):
    """The records go in blocks to whichever process is free: with one process taking none
    (a helper slow to start, a main process still making search.json), the other writes them
    all, and the bytes are the serial writer's."""
    from crawler.catalogue.search import search_file
    from crawler.publish import writer as output

    monkeypatch.setattr(output, "PARALLEL_MIN_RECORDS", 1)
    records = many_records(70)
    manifest = manifest_for(records, len(records))
    serial = write_dataset(tmp_path / "s" / "o" / "n", output.render_files(records, manifest, search_file(records, manifest)))
    parent = os.getpid()
    real = output._write_blocks

    def one_idle(tmp, share, blocks, max_bytes, reuse=None):
        if (os.getpid() == parent) == (idle == "main"):
            return []
        return real(tmp, share, blocks, max_bytes, reuse)

    monkeypatch.setattr(output, "_write_blocks", one_idle)
    parallel, _ = output.publish(tmp_path / "p" / "o" / "n", records, manifest, lambda: search_file(records, manifest), jobs=2)
    assert snapshot(parallel) == snapshot(serial)


def test_record_blocks_cover_every_record_once():
    from crawler.publish.writer import _Blocks

    ids = sorted(f"{n * 7919 % 65536:04x}{n:012x}" for n in range(1000))
    blocks = _Blocks(ids, 2)
    taken = []
    while (block := blocks.take()) is not None:
        taken.append(block)
    assert len(taken) > 2  # more blocks than processes: the last ones even out the finish
    assert [i for start, end in taken for i in range(start, end)] == list(range(1000))
    assert blocks.take() is None
    # a block ends where a gzip member does: each block's writer compresses whole members
    assert all(ids[end - 1][:2] != ids[end][:2] for _, end in taken[:-1])


@pytest.mark.parametrize("jobs", [1, 2])
def test_publish_returns_the_directory_and_the_manifest_it_wrote(tmp_path, monkeypatch, jobs):
    from crawler.publish import writer as output

    monkeypatch.setattr(output, "PARALLEL_MIN_RECORDS", 1)
    records = many_records(5)
    manifest = manifest_for(records)
    target, completed = output.publish(tmp_path / "o" / "n", records, manifest, jobs=jobs)
    assert target == tmp_path / "o" / "n"
    assert completed == Manifest.model_validate_json((target / "manifest.json").read_bytes())
    assert completed.content_digest and manifest.content_digest == ""  # the caller's manifest is left alone


def test_parallel_publish_reports_every_schema_problem_and_writes_nothing(tmp_path, monkeypatch):
    from crawler.publish import writer as output

    monkeypatch.setattr(output, "PARALLEL_MIN_RECORDS", 1)
    records = many_records()
    target = output.publish(tmp_path / "o" / "n", records, manifest_for(records), jobs=2).target
    before = snapshot(target)
    records[1]["kind"] = "explode"  # this process's share
    records[-1]["kind"] = "implode"  # the helper's share
    with pytest.raises(DataError) as info:
        output.publish(target, records, manifest_for(records), jobs=2)
    with pytest.raises(DataError) as serial:
        render_dataset(records, manifest_for(records))
    assert str(info.value) == str(serial.value)  # the same problems, in the same order
    assert f"errors/{records[1]['id']}.json#/kind" in str(info.value)
    assert f"errors/{records[-1]['id']}.json#/kind" in str(info.value)
    assert snapshot(target) == before
    assert sorted(p.name for p in target.parent.iterdir()) == ["n"]  # no temporary directory left


def test_a_helper_that_dies_fails_the_write_and_keeps_the_old_dataset(tmp_path, monkeypatch):
    import signal

    from crawler.publish import writer as output

    monkeypatch.setattr(output, "PARALLEL_MIN_RECORDS", 1)
    records = many_records()
    target = output.publish(tmp_path / "o" / "n", records, manifest_for(records), jobs=2).target
    before = snapshot(target)
    parent = os.getpid()
    real = output._write_blocks

    def dies_in_the_helper(tmp, share, blocks, max_bytes, reuse=None):
        if os.getpid() != parent:
            os.kill(os.getpid(), signal.SIGKILL)
        return real(tmp, share, blocks, max_bytes, reuse)

    monkeypatch.setattr(output, "_write_blocks", dies_in_the_helper)
    from crawler.base.errors import OutputError

    with pytest.raises(OutputError, match=r"a helper process died \(signal 9\)"):
        output.publish(target, many_records(41), manifest_for(records), jobs=2)
    assert snapshot(target) == before
    assert sorted(p.name for p in target.parent.iterdir()) == ["n"]


@pytest.fixture
def recycling(tmp_path, monkeypatch):
    """(output module, target, spare root) with the parallel writer used for any number of records."""
    from crawler.publish import writer as output

    monkeypatch.setattr(output, "PARALLEL_MIN_RECORDS", 1)
    return output, tmp_path / "o" / "n", tmp_path / "cache" / "spare"


def inodes(directory):
    return {p.relative_to(directory).as_posix(): p.stat().st_ino for p in directory.rglob("*") if p.is_file()}


@pytest.mark.parametrize("jobs", [1, 2])
def test_a_replaced_dataset_lends_its_files_to_the_next_write(recycling, jobs):
    output, target, spare_root = recycling
    first = many_records(40)
    output.publish(target, first, manifest_for(first), jobs=jobs, spare_root=spare_root)
    assert not spare_root.exists() or not any(spare_root.iterdir())  # nothing replaced yet
    first_inodes = inodes(target)
    second = many_records(30)
    output.publish(target, second, manifest_for(second), jobs=jobs, spare_root=spare_root)
    assert len(list(spare_root.iterdir())) == 1  # the first dataset, kept for the next write
    third = many_records(35)
    output.publish(target, third, manifest_for(third), jobs=jobs, spare_root=spare_root)
    # written over the first dataset's files, and exactly what a fresh write gives
    assert set(inodes(target).values()) <= set(first_inodes.values())
    assert snapshot(target) == render_dataset(third, manifest_for(third))
    assert sorted(p.name for p in target.parent.iterdir()) == ["n"]


def test_a_recycled_file_with_another_link_or_a_symlink_is_replaced_not_written_through(tmp_path, recycling):
    output, target, spare_root = recycling
    records = many_records(20)
    output.publish(target, records, manifest_for(records), jobs=2, spare_root=spare_root)
    archive = tmp_path / "archive"  # someone keeps the first dataset as hard links (cp -al)
    for path in target.rglob("*"):
        if path.is_file():
            (archive / path.relative_to(target)).parent.mkdir(parents=True, exist_ok=True)
            os.link(path, archive / path.relative_to(target))
    kept = snapshot(archive)
    output.publish(target, many_records(21), manifest_for(records), jobs=2, spare_root=spare_root)
    spare = next(spare_root.iterdir())  # the first dataset's directory: plant a symlink in it
    outside = tmp_path / "outside.json"
    outside.write_bytes(b"precious")
    victim = next((spare / "errors").iterdir())
    victim.unlink()
    victim.symlink_to(outside)
    output.publish(target, records, manifest_for(records), jobs=2, spare_root=spare_root)
    assert snapshot(archive) == kept
    assert outside.read_bytes() == b"precious"
    assert snapshot(target) == render_dataset(records, manifest_for(records))


def test_a_spare_whose_errors_directory_is_a_symlink_is_thrown_away(tmp_path):
    from crawler.publish import writer as output

    spare_root = tmp_path / "cache" / "spare"
    target = tmp_path / "o" / "n"
    records = many_records(5)
    output.publish(target, records, manifest_for(records), spare_root=spare_root)
    output.publish(target, records, manifest_for(records), spare_root=spare_root)
    spare = next(spare_root.iterdir())
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    import shutil

    shutil.rmtree(spare / "errors")
    (spare / "errors").symlink_to(elsewhere)
    output.publish(target, records, manifest_for(records), spare_root=spare_root)
    assert list(elsewhere.iterdir()) == []
    assert snapshot(target) == render_dataset(records, manifest_for(records))


def test_a_spare_holding_a_fifo_or_a_directory_where_files_belong_costs_nothing(recycling):
    output, target, spare_root = recycling
    records = many_records(12)
    output.publish(target, records, manifest_for(records), jobs=2, spare_root=spare_root)
    output.publish(target, records, manifest_for(records), jobs=2, spare_root=spare_root)
    spare = next(spare_root.iterdir())
    files = sorted((spare / "errors").iterdir())
    files[0].unlink()
    os.mkfifo(files[0])  # opening it for writing would block forever
    files[-1].unlink()
    (files[-1] / "inner").mkdir(parents=True)
    (spare / "index.json").chmod(0o444)
    output.publish(target, records, manifest_for(records), jobs=2, spare_root=spare_root)
    assert snapshot(target) == render_dataset(records, manifest_for(records))


@pytest.mark.parametrize("jobs", [1, 2])
def test_a_write_the_system_refuses_is_one_line_and_keeps_the_last_dataset(tmp_path, monkeypatch, jobs):
    """A file size limit makes the kernel refuse the big files (EFBIG), as a full disk would."""
    import resource
    import signal

    from crawler.base.errors import OutputError
    from crawler.publish import writer as output

    monkeypatch.setattr(output, "PARALLEL_MIN_RECORDS", 1)
    records = many_records(30)
    target = output.publish(tmp_path / "o" / "n", records, manifest_for(records), jobs=jobs).target
    before = snapshot(target)
    limits = resource.getrlimit(resource.RLIMIT_FSIZE)
    handler = signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
    resource.setrlimit(resource.RLIMIT_FSIZE, (3_000, limits[1]))
    try:
        with pytest.raises(OutputError) as info:
            output.publish(target, many_records(31), manifest_for(records), jobs=jobs)
    finally:
        resource.setrlimit(resource.RLIMIT_FSIZE, limits)
        signal.signal(signal.SIGXFSZ, handler)
    message = str(info.value)
    assert "\n" not in message and message.startswith(f"cannot write the dataset {target}: File too large")
    assert snapshot(target) == before
    assert sorted(p.name for p in target.parent.iterdir()) == ["n"]


def test_a_helper_dies_with_its_parent(tmp_path):
    """A crawl killed mid-write leaves no helper writing into the directory the next one removes."""
    import signal
    import subprocess
    import sys
    import textwrap
    import time

    script = textwrap.dedent(f"""
        import os, sys, time
        sys.path.insert(0, {str(Path(__file__).resolve().parents[2])!r})
        from crawler.publish import forked
        helper = forked.start(lambda: time.sleep(60))
        print(helper[0], flush=True)
        time.sleep(60)
    """)
    proc = subprocess.Popen([sys.executable, "-c", script], stdout=subprocess.PIPE, text=True)
    with proc.stdout:
        helper = int(proc.stdout.readline())
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    deadline = time.monotonic() + 60  # a hang guard: a loaded machine may take seconds to deliver the signal
    while time.monotonic() < deadline:
        try:
            with open(f"/proc/{helper}/stat") as fh:
                if fh.read().split(")")[-1].split()[0] == "Z":
                    break  # dead, waiting for init to reap it
        except FileNotFoundError:
            break
        time.sleep(0.01)
    else:
        os.kill(helper, signal.SIGKILL)
        pytest.fail("the helper outlived its parent")


def test_manifest_json_holds_the_counts_its_maker_set_and_the_completed_manifest_is_typed():
    """A crawl's manifest states no retired or omitted count; a history's states both, zero too."""
    records = build_records(IDENTITY, [site("x", 1)])
    crawl = manifest_for(records, 1)
    files = render_dataset(records, crawl)
    assert set(json.loads(files["manifest.json"])["counts"]) == {"files", "parsed", "skipped", "sites", "entries", "bare_asserts", "reraises"}
    history = crawl.model_copy(update={"counts": crawl.counts.model_copy(update={"retired": 0, "omitted": 0})})
    counts = json.loads(render_dataset(records, history)["manifest.json"])["counts"]
    assert counts["retired"] == 0 and counts["omitted"] == 0


def test_a_publish_that_keeps_its_records_forks_no_helper(tmp_path, monkeypatch):
    """Records kept from the dataset in place are their previous bytes: no forked helper is
    started to write them (it would copy the records' pages for no work), and the dataset is the
    one a publish that forks writes."""
    from crawler.base.jsonio import dumps_record
    from crawler.catalogue.search import search_file
    from crawler.publish import forked
    from crawler.publish import writer as output
    from crawler.publish.writer import Reuse

    monkeypatch.setattr(output, "PARALLEL_MIN_RECORDS", 10)
    records = many_records(70)
    manifest = manifest_for(records, len(records))
    forked_publish, _ = output.publish(tmp_path / "f" / "o" / "n", records, manifest, lambda: search_file(records, manifest), jobs=2)
    starts = []
    real = forked.start
    monkeypatch.setattr(forked, "start", lambda fn: starts.append(fn) or real(fn))
    most = {r["id"]: dumps_record(r) for r in records[5:]}
    kept, _ = output.publish(
        tmp_path / "k" / "o" / "n", records, manifest, lambda: search_file(records, manifest), jobs=2, reuse=Reuse(most, frozenset(), set(), {}, {})
    )
    assert not starts
    assert snapshot(kept) == snapshot(forked_publish)
    output.publish(tmp_path / "n" / "o" / "n", records, manifest, lambda: search_file(records, manifest), jobs=2, reuse=Reuse({}, frozenset(), set(), {}, {}))
    assert starts  # with nothing kept, the helper writes as before
