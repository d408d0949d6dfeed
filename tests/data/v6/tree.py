"""The fixture repository the schema-6 dataset beside this file was made from (tests/versions/
test_migrate.py): a history of two releases with every state a lifetime or move is written in
(first seen, last seen, removed in, moved, replaced), and the kinds schema 6 added (a bare assert
keyed by its condition, a log, a response), so that a reader of schema 7 reads each of them.

``make.py`` wrote ``acme/server/`` with errcat as it was at schema 6 (main's commit efdfe48),
from these two trees committed in turn by ``tests/conftest.FixtureRepo`` (fixed author and
date: the same commits every time), as ``errcat history --repo REPO v1.0 v2.0`` with ``TOML``."""

import runpy
from pathlib import Path

#: v1.0
FIRST = {
    "pkg/__init__.py": "",
    "pkg/limits.py": """
        import logging

        logger = logging.getLogger(__name__)


        def check_depth(depth):
            if depth < 1:
                raise ValueError(f"depth must be at least 1, got {depth}")
            if depth > 64:
                logger.warning("depth %d is deep; it may be slow", depth)
            assert depth != 13
            return depth


        def check_mode(mode):
            if mode not in ("fast", "safe"):
                raise KeyError(f"no such mode as {mode}")
            return mode
        """,
    "pkg/old_place.py": """
        def convert(value):
            if value is None:
                raise TypeError("a value to convert is required here")
            return value
        """,
    "pkg/api.py": """
        from pkg.errors import create_error_response


        def handle(request):
            if request.tokens > 4096:
                return create_error_response("the request is over four thousand tokens", "BadRequestError", 400)
            return None
        """,
    "pkg/errors.py": """
        def create_error_response(message, err_type="BadRequestError", status_code=400):
            return {"message": message, "type": err_type, "code": status_code}
        """,
}

#: v2.0: one message reworded (its entry replaced), one file renamed (its entry moved), one raise
#: removed (its entry retired with no successor); the rest as it was.
SECOND = {
    "pkg/limits.py": FIRST["pkg/limits.py"]
    .replace("depth must be at least 1, got {depth}", "depth must be one or more, got {depth}")
    .replace(
        """            if mode not in ("fast", "safe"):
                raise KeyError(f"no such mode as {mode}")
""",
        "",
    ),
    "pkg/old_place.py": None,
    "pkg/new_place.py": FIRST["pkg/old_place.py"],
}

#: The configuration of the schema-5 dataset's tree (every kind, the response builder named).
TOML = runpy.run_path(str(Path(__file__).resolve().parent.parent / "v5" / "tree.py"))["TOML"]
