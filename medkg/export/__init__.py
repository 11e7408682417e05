"""Writing the graph out: the whole store as RDF (``rdf``), the vocabulary
layer as SKOS or OWL (``vocabulary``)."""
