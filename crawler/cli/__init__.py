"""The ``errcat`` command: parses options and calls the library; no logic of its own.

``main`` is the group (``main.py``: one-line errors, exit codes); each module holds a family of
commands, registered here, so no command module imports another.
"""

from crawler.base import teardown
from crawler.cli.consume import match, render, show
from crawler.cli.crawl import adopt, crawl, schema, validate
from crawler.cli.curate import curate
from crawler.cli.main import main
from crawler.cli.versions import diff, history, sync, upstreams

for _command in (crawl, validate, show, diff, history, sync, adopt, upstreams, match, render, curate, schema):
    main.add_command(_command)


def run() -> None:
    """The ``errcat`` program: :func:`main` in a process of its own, which leaves what a crawl
    held to the system at exit (``base.teardown``)."""
    teardown.run(main)


__all__ = ["main", "run"]
