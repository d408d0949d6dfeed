"""Writes acme/server/ beside this file: run with errcat as it was at schema 5 (see tree.py).

cd <an errcat checkout at schema 5> && PYTHONPATH=$PWD:<this errcat>/tests python <this file>
"""

import shutil
import sys
import tempfile
from pathlib import Path

from click.testing import CliRunner

from crawler.cli.main import main

here = Path(__file__).resolve().parent
sys.path.insert(0, str(here))
sys.path.insert(0, str(here.parent.parent))
from conftest import FixtureRepo  # noqa: E402
from tree import TOML, TREE  # noqa: E402

with tempfile.TemporaryDirectory() as tmp:
    repo = FixtureRepo(Path(tmp) / "upstream")
    repo.commit(TREE, tag="v1.0")
    (Path(tmp) / "errcat.toml").write_text(TOML)
    run = CliRunner().invoke(
        main,
        [
            "sync",
            "--repo",
            str(repo.path),
            "--ref",
            "v1.0",
            "--upstream",
            "acme",
            "--config",
            str(Path(tmp) / "errcat.toml"),
            "--out",
            str(Path(tmp) / "out"),
            "--catch-up",
            "--cache-dir",
            str(Path(tmp) / "cache"),
        ],
        catch_exceptions=False,
    )
    assert run.exit_code == 0, run.output
    print(run.output)
    shutil.rmtree(here / "acme", ignore_errors=True)
    shutil.copytree(Path(tmp) / "out" / "acme", here / "acme")
