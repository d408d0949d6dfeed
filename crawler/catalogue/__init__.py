"""Stage 3, catalogue: every file's sites -> entries (one per distinct error) as record dicts:
exception hierarchy, grouping, related errors, the curated merge, search rows.
"""
