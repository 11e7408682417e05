"""Construction: reading, chunking, entity and relation extraction."""
