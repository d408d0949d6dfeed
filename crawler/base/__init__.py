"""What every stage may use: errcat's exceptions, deterministic JSON, the sink every printed
line goes through, progress on stderr, the cache directory and per-run scratch.
"""
