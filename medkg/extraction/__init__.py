"""Extraction (the extract stage's operations): chunks to mentions and relations
by the builtin spaCy engine (``nlp``, ``relations``, ``relation_model``,
``variants``, ``lexicon``, ``population``), by an LLM (``llm``) or by LangChain's
graph transformer (``langchain``); ``extract`` assembles them into entities and
triples; ``workers`` runs chunking and the builtin engine in worker processes."""
