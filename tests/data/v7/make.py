"""Writes acme/server/ beside this file: run with errcat as it was at schema 7 (main's commit
556231a), from the trees of ../v6/tree.py (the same two releases, every state a lifetime or move
is written in):

git -C <this errcat> archive 556231a | tar -x -C <a directory> && cd <that directory> &&
PYTHONPATH=$PWD:<this errcat>/tests python <this file>
"""

import sys
from pathlib import Path

here = Path(__file__).resolve().parent
sys.path.insert(0, str(here.parent / "v6"))
sys.path.insert(0, str(here.parent))
from make_dataset import make  # noqa: E402
from tree import FIRST, SECOND, TOML  # noqa: E402

make(
    here,
    [(FIRST, "v1.0"), (SECOND, "v2.0")],
    TOML,
    ["history", "--repo", "{repo}", "--upstream", "acme", "--config", "{config}", "--out", "{out}", "--cache-dir", "{cache}", "v1.0", "v2.0"],
)
