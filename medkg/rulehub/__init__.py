"""The RuleHub: rules as versioned data (``rules.toml``), the verifier that applies
them to candidate triples, and their SHACL export for validating a whole graph."""
