"""errcat's exceptions: one root, so the CLI turns every expected failure into one clear line."""


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
