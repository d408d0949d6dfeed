"""Consumers of a written dataset: match a pasted error, the terminal page, the static site."""
