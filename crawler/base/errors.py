"""errcat's exceptions: one root, so the CLI turns every expected failure into one clear line."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from pydantic import ValidationError


class ErrcatError(Exception):
    """Root of every error errcat reports to a user (exit code 2 unless said otherwise)."""

    exit_code = 2


class UsageError(ErrcatError):
    """Bad option values or combinations."""


class SourceError(ErrcatError):
    """The repository, ref or package cannot be read (bad URL, unknown ref, network failure)."""


class ConfigError(ErrcatError):
    """errcat.toml / [tool.errcat] or curated files are malformed."""


class DataError(ErrcatError):
    """Output data is invalid (schema failures, id collisions). Exit code 1."""

    exit_code = 1


class OutputError(ErrcatError):
    """The dataset cannot be written (no space, no permission, a helper process died). Exit code 1;
    the last good dataset is left as it was."""

    exit_code = 1


def invalid_data(exc: ValidationError) -> DataError:
    """A pydantic ``ValidationError`` as one line: the model, the field, what is wrong and the value.
    Field names and values may come from a hostile dataset: anything but a plain name is shown as
    ``repr`` (control characters escaped, so a line stays a line), and values are shortened."""
    errors = exc.errors()
    if not errors:  # pragma: no cover - pydantic always lists at least one
        return DataError(f"invalid {exc.title}")
    first = errors[0]
    where = ".".join(str(p) if isinstance(p, int) or str(p).isidentifier() else repr(p) for p in first["loc"]) or "(value)"
    value = repr(first.get("input"))
    if len(value) > 80:
        value = value[:77] + "..."
    more = f" (and {len(errors) - 1} more)" if len(errors) > 1 else ""
    return DataError(f"invalid {exc.title}: {where}: {first['msg']}, got {value}{more}")
