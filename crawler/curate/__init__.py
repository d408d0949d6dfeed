"""Curated explanations kept true as upstream moves: check, move/review/retire, drafts."""
