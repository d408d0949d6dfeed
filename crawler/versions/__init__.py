"""Versions: diff two catalogues, fold history across releases, sync with upstream."""
