"""Writes acme/server/ beside this file: run with errcat as it was at schema 5 (see tree.py).

cd <an errcat checkout at schema 5> && PYTHONPATH=$PWD:<this errcat>/tests python <this file>
"""

import sys
from pathlib import Path

here = Path(__file__).resolve().parent
sys.path.insert(0, str(here))
sys.path.insert(0, str(here.parent))
from make_dataset import make  # noqa: E402
from tree import TOML, TREE  # noqa: E402

make(
    here,
    [(TREE, "v1.0")],
    TOML,
    ["sync", "--repo", "{repo}", "--ref", "v1.0", "--upstream", "acme", "--config", "{config}", "--out", "{out}", "--catch-up", "--cache-dir", "{cache}"],
)
