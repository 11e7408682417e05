"""Real servers the tests (and benchmarks) start for themselves."""
