"""Stage 4, publish: record dicts -> validated files on disk, swapped in atomically; and the one
reader of a written dataset.
"""
