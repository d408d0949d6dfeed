"""The data model at the bottom of every stage: pydantic models of every file errcat writes, the
shared patterns (ids, commits, identities, links) and the JSON Schemas made from the models.
"""
