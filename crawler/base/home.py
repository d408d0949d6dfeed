"""Where errcat's data lives when no option says: the errcat home, holding ``output/`` (the
catalogues) and ``curated/`` (the reviewed explanations) and maybe ``errcat.toml``.

Found the same way wherever a command runs, first that applies:

1. ``$ERRCAT_HOME``;
2. the working directory or the nearest directory above it that is an errcat home (holds
   ``errcat.toml``, a ``pyproject.toml`` with ``[tool.errcat]``, ``output/`` or ``curated/``),
   as git finds its repository from a subdirectory;
3. the errcat checkout this errcat runs from (an editable install: the directory above the
   package, when it holds errcat's ``pyproject.toml`` and ``curated/``), so that ``errcat match``
   run from /tmp reads the checkout's catalogues and a crawl keeps its curated text;
4. the user's data directory (``platformdirs.user_data_dir("errcat")``, ~/.local/share/errcat
   on Linux), for an installed errcat used outside any project.

The working directory counts only when it is a home: run elsewhere, ``./output`` and
``./curated`` are never made up (a crawl from /tmp lost its curated text that way).
"""

from __future__ import annotations

import os
from pathlib import Path

from platformdirs import user_data_dir

ENV = "ERRCAT_HOME"


def _is_home(directory: Path) -> bool:
    if (directory / "errcat.toml").is_file() or (directory / "output").is_dir() or (directory / "curated").is_dir():
        return True
    try:
        return "[tool.errcat]" in (directory / "pyproject.toml").read_text(encoding="utf-8", errors="replace")
    except OSError:
        return False


def _checkout() -> Path | None:
    """The errcat checkout this package runs from, or None (an installed wheel)."""
    root = Path(__file__).resolve().parents[2]
    try:
        project = (root / "pyproject.toml").read_text(encoding="utf-8", errors="replace")
    except OSError:
        return None
    return root if 'name = "errcat"' in project and (root / "curated").is_dir() else None


def home() -> Path:
    """The errcat home (see the module's docs), an absolute path: what is read from it may be
    remembered by path, and a relative one would name another directory after a chdir."""
    env = os.environ.get(ENV)
    if env:
        return Path(env).absolute()
    cwd = Path.cwd()
    if _is_home(cwd):
        return cwd
    for parent in cwd.parents:
        if _is_home(parent):
            return parent
    return _checkout() or Path(user_data_dir("errcat"))


def where() -> str:
    """How the home was found, for a message that says where errcat looked."""
    if os.environ.get(ENV):
        return f"${ENV}"
    found = home()
    if found == Path.cwd():
        return "the working directory"
    if found == _checkout():
        return "the errcat checkout"
    return "the nearest errcat home above the working directory" if found in Path.cwd().parents else "the user data directory"


def default_out() -> Path:
    """``output/`` of the errcat home: where catalogues are written and read by default; relative
    (``output``) when the home is the working directory, so that messages read as they did."""
    found = home()
    return Path("output") if found == Path.cwd() else found / "output"
