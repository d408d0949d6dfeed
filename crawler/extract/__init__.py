"""Stage 2, extraction: a file's bytes -> plain-data facts about every error site (templates, exception
names, guards, code), run in parallel workers over a snapshot with a content-addressed cache.
"""
