"""errcat's own process leaves what a crawl held to the system at exit (``base.teardown``): nothing
it held is freed one by one, its output and exit code are what they were, and a caller running a
command in its own process (a test runner, a library) frees everything as before."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

from crawler.base import teardown
from tests.helpers import MEANING_CONFIG, MEANING_TREE

#: A program whose "command" holds an object that says when it is freed, prints without a newline
#: or a flush, and exits with the code given; ``leave`` says whether it asks to leave its objects
#: to the exit.
PROGRAM = textwrap.dedent(
    """
    import sys
    from crawler.base import teardown

    class Loud:
        def __del__(self):
            sys.stderr.write("freed\\n")

    def main():
        if sys.argv[1] == "leave":
            teardown.leave_to_exit()
        teardown.hold(Loud())
        sys.stdout.write("the last words")
        sys.exit(int(sys.argv[2]))

    teardown.run(main)
    """
)


def run_program(tmp_path: Path, *args: str) -> subprocess.CompletedProcess[str]:
    script = tmp_path / "program.py"
    script.write_text(PROGRAM)
    return subprocess.run([sys.executable, str(script), *args], capture_output=True, text=True, timeout=60)


def test_a_process_that_leaves_its_objects_to_the_exit_frees_none_and_says_everything(tmp_path):
    done = run_program(tmp_path, "leave", "3")
    assert done.stdout == "the last words"  # flushed though never flushed by the command
    assert done.returncode == 3
    assert "freed" not in done.stderr  # left to the system: never torn down


def test_a_command_that_does_not_ask_frees_what_it_holds(tmp_path):
    done = run_program(tmp_path, "keep", "0")
    assert done.stdout == "the last words" and done.returncode == 0
    assert "freed" in done.stderr  # nothing was held: Python's own exit


def test_outside_run_nothing_is_held():
    teardown.leave_to_exit()
    assert not teardown.holding()
    teardown.hold(object())
    assert teardown._held is None


def test_the_crawl_command_in_its_own_process_writes_its_dataset_and_exits_zero(fixture_repo, tmp_path):
    """The real program (``python -m crawler``) crawls, writes, says so and exits 0, and a second
    crawl of the same commit finds the dataset up to date: what the first left to the exit was
    all written."""
    fixture_repo.commit({k: v for k, v in MEANING_TREE.items() if k != "tests/test_broken.py"}, tag="v1")
    config = tmp_path / "errcat.toml"
    config.write_text(MEANING_CONFIG)
    argv = [sys.executable, "-m", "crawler", "crawl", "--repo", str(fixture_repo.path), "--ref", "v1", "--config", str(config), "--upstream", "acme"]
    argv += ["--out", str(tmp_path / "out"), "--cache-dir", str(tmp_path / "cache")]
    first = subprocess.run(argv, capture_output=True, text=True, timeout=300)
    assert first.returncode == 0, first.stderr
    assert first.stdout.startswith("files ") and first.stdout.endswith("s\n")
    assert (tmp_path / "out" / "acme" / "widgets" / "manifest.json").is_file()
    again = subprocess.run(argv, capture_output=True, text=True, timeout=300)
    assert again.returncode == 0 and "is up to date" in again.stderr
