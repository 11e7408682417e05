"""Embeddings, vector indexes and cross-layer linking."""
