# make bench: measured figures written to docs/benchmarks.md.
