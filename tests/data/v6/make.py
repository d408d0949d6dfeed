"""Writes acme/server/ beside this file: run with errcat as it was at schema 6 (see tree.py).

git -C <this errcat> archive efdfe48 | tar -x -C <a directory> && cd <that directory> &&
PYTHONPATH=$PWD:<this errcat>/tests python <this file>
"""

import sys
from pathlib import Path

here = Path(__file__).resolve().parent
sys.path.insert(0, str(here))
sys.path.insert(0, str(here.parent))
from make_dataset import make  # noqa: E402
from tree import FIRST, SECOND, TOML  # noqa: E402

make(
    here,
    [(FIRST, "v1.0"), (SECOND, "v2.0")],
    TOML,
    ["history", "--repo", "{repo}", "--upstream", "acme", "--config", "{config}", "--out", "{out}", "--cache-dir", "{cache}", "v1.0", "v2.0"],
)
