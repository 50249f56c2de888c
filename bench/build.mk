# make bench: measured figures written to docs/benchmarks.md.
PROGS += rpc-bench
rpc-bench_SRCS := bench/rpc-bench.c
rpc-bench_LIBS :=
PROGS += powerd-sample
powerd-sample_SRCS := bench/powerd-sample.c $(POWERD_LOGIC)
powerd-sample_LIBS := -lm -pthread

# The board figures first (they boot the virtual NAS), then the host's.
.PHONY: bench
bench: all image
	@rm -f $(O)/bench-board.md
	@$(MAKE) --no-print-directory -f $(SRC)/Makefile O=$(O) bench-board
	@sh $(SRC)/bench/raidd-board.sh $(SRC) $(O) $(IMAGE_DIR)
	@sh $(SRC)/bench/raidd-rebuild.sh $(SRC) $(O) $(IMAGE_DIR) || true
	@sh $(SRC)/bench/crypt-board.sh $(SRC) $(O) $(IMAGE_DIR) || true
	@sh $(SRC)/bench/netd-board.sh $(SRC) $(O) $(IMAGE_DIR) || true
	@$(MAKE) --no-print-directory -f $(SRC)/Makefile O=$(O) bench-selftest || true
	@$(MAKE) --no-print-directory -f $(SRC)/Makefile O=$(O) bench-selftest-net || true
	@sh $(SRC)/bench/run.sh $(O) $(SRC)/docs/benchmarks.md
	@sh $(SRC)/bench/powerd.sh $(O) $(SRC) $(SRC)/docs/benchmarks.md
