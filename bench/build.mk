# make bench: measured figures written to docs/benchmarks.md.
PROGS += rpc-bench
rpc-bench_SRCS := bench/rpc-bench.c
rpc-bench_LIBS :=

.PHONY: bench
bench: all
	@sh $(SRC)/bench/run.sh $(O) $(SRC)/docs/benchmarks.md
