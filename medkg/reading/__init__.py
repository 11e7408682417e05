"""Reading and chunking (the ingest stage's operations): files to documents
(``readers``), documents to chunks with their vectors (``chunking``)."""
