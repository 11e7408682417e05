"""Dataset readers and metrics for measuring medkg on real benchmarks."""
