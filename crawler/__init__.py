"""errcat: build error catalogues from source.

A pipeline of plain stages: source (a pinned commit, read from git's object database) -> files
-> sites (raises, asserts, logged errors, error responses, native checks, from syntax trees) -> entries (one per distinct error) ->
records (validated JSON) -> output / diff.
"""

__version__ = "0.1.0"
