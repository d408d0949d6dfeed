"""Stage 1, source: a pinned commit (git) or a released wheel -> a ``Snapshot`` streaming the selected
files' bytes. Policy for URLs, refs and identities; hardened git; the upstream configuration.
"""
