"""Retrieval and answer assembly."""
