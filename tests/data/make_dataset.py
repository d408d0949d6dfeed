"""What ``v5/make.py`` and ``v6/make.py`` share: commit fixture trees to a repository made by
``tests/conftest.FixtureRepo`` (fixed author and date: the same commits every time), run one
errcat command over it with an errcat of the older schema, and copy the dataset it wrote
(``acme/``) beside the calling make.py. Run from a checkout of that errcat (see each make.py)."""

import shutil
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from conftest import FixtureRepo


def make(here: Path, trees: list[tuple[dict, str]], toml: str, command: list[str]) -> None:
    """``trees``: (files, tag) committed in turn; ``command``: the errcat arguments, in which
    {repo}, {config}, {out} and {cache} name the repository, the configuration written from
    ``toml``, the output root and a cache directory of a scratch directory."""
    from click.testing import CliRunner

    from crawler.cli.main import main

    with tempfile.TemporaryDirectory() as tmp:
        repo = FixtureRepo(Path(tmp) / "upstream")
        for files, tag in trees:
            repo.commit(files, tag=tag)
        (Path(tmp) / "errcat.toml").write_text(toml)
        names = {"repo": str(repo.path), "config": str(Path(tmp) / "errcat.toml"), "out": str(Path(tmp) / "out"), "cache": str(Path(tmp) / "cache")}
        run = CliRunner().invoke(main, [arg.format(**names) for arg in command], catch_exceptions=False)
        assert run.exit_code == 0, run.output
        print(run.output)
        shutil.rmtree(here / "acme", ignore_errors=True)
        shutil.copytree(Path(tmp) / "out" / "acme", here / "acme")
