# nas-selftest: see selftest/Kconfig and docs/selftest.md.
ifeq ($(CONFIG_SELFTEST),y)
PROGS += nas-selftest
SBIN_PROGS += nas-selftest
MAN8 += docs/man/nas-selftest.8
endif
# Everything but main.c, so the unit suite links the real modules.
SELFTEST_CORE := selftest/pattern.c selftest/stats.c selftest/engine.c selftest/report.c \
	selftest/limits.c selftest/html.c selftest/peers.c selftest/verdict.c
nas-selftest_SRCS := selftest/main.c selftest/workload.c selftest/power.c selftest/target.c \
	selftest/serve.c selftest/net.c selftest/factory.c \
	$(SELFTEST_CORE)
nas-selftest_LIBS := -luring -lpthread -lm -liperf
# The pattern's loops stay scalar: as fast natively, and the vectorised
# ones ran 4-9x slower under qemu TCG (selftest/pattern.c, Decision 130).
$(O)/obj/selftest/pattern.o: CFLAGS_selftest += -fno-tree-vectorize

UNIT_TESTS += test-selftest
test-selftest_SRCS := tests/unit/test-selftest.c tests/unit/unit-util.c $(SELFTEST_CORE)
test-selftest_LIBS = -luring -lpthread -lm

# make bench-selftest: the board scenario at 1/16 of review (256 MiB files,
# 7.5 s runs) on 2 GiB disks, six interleaved rounds of each job (fio's
# read on nas-selftest's own file; each tool first in every other round),
# holding the ratio of the medians to
# 0.9-1.1x (Decisions 47, 105); its output in $(O)/bench-selftest.log, the
# table in docs/benchmarks.md (section selftest-vs-fio). Part of make
# bench. BENCH_SELFTEST_SCALE and BENCH_SELFTEST_REPEAT change the size.
BENCH_SELFTEST_SCALE ?= 0.0625
BENCH_SELFTEST_REPEAT ?= 6
BENCH_SELFTEST_DISK ?= 2G
# The board as CI boots it: its disks held to a hard disk's rates make
# the figures the volume's, whichever clock the guest reads (Decision 137).
# tsc=reliable clocksource=tsc gives it the vDSO clock of real boards.
BENCH_SELFTEST_KERNEL_ARGS ?=
BENCH_SELFTEST_DISK_RATE ?= 200:160
# The disk images in memory, so the host's own disk and its writeback
# (GBs over six rounds) are no part of the figure (Decision 137).
BENCH_SELFTEST_TMPDIR ?= $(if $(wildcard /dev/shm),/dev/shm,/tmp)
.PHONY: bench-selftest
bench-selftest: image
	@sed 's/^SCALE=.*/SCALE=$(BENCH_SELFTEST_SCALE)/; s/^BAND=.*/BAND=0.9-1.1/; s/^REPEAT=.*/REPEAT=$(BENCH_SELFTEST_REPEAT)/' \
		$(SRC)/tests/system/scenarios/selftest-vs-fio >$(O)/selftest-vs-fio-bench
	@TMPDIR=$(BENCH_SELFTEST_TMPDIR) $(RUN_SCENARIO) --disk-size $(BENCH_SELFTEST_DISK) --timeout 3600 \
		--kernel-args "$(BENCH_SELFTEST_KERNEL_ARGS)" --disk-rate $(BENCH_SELFTEST_DISK_RATE) \
		$(O)/selftest-vs-fio-bench \
		>$(O)/bench-selftest.log 2>&1; rc=$$?; \
	grep -E '^    [a-z]|^(ok|FAIL) .*of fio' $(O)/bench-selftest.log; \
	{ echo "## nas-selftest against fio: make bench-selftest ($$(date -u +%F), qemu TCG)"; echo; \
	  echo "Scale $(BENCH_SELFTEST_SCALE) of the review sizes on a RAID 1 of two $(BENCH_SELFTEST_DISK) disks, one boot;"; \
	  echo "$(BENCH_SELFTEST_REPEAT) rounds per job, fio and nas-selftest interleaved (fio's read on the"; \
	  echo "self-test's own file, each tool first in every other round), medians and their ratio; band 0.9-1.1x"; \
	  echo "(docs/selftest.md, Decision 105). Kernel arguments: '$(BENCH_SELFTEST_KERNEL_ARGS)'."; \
	  echo "Each bay held to $(BENCH_SELFTEST_DISK_RATE) (requests/s:MB/s, Decision 137), its image in $(BENCH_SELFTEST_TMPDIR)."; \
	  echo "Host load average at the end: $$(cut -d' ' -f1-3 /proc/loadavg)."; \
	  echo; echo '```'; grep -E '^    [a-z]|^(ok|FAIL) .*of fio' $(O)/bench-selftest.log; echo '```'; } | \
		sh $(SRC)/bench/md-section.sh $(SRC)/docs/benchmarks.md selftest-vs-fio; \
	exit $$rc

# make bench-selftest-net: the selftest-net scenario (line PC) holding
# nas-selftest's net-1/lacp-4 to iperf3's figures at 0.9-1.1x; its output
# in $(O)/bench-selftest-net.log. Part of make bench.
.PHONY: bench-selftest-net
bench-selftest-net: image
	@sed 's/^BAND=.*/BAND=0.9-1.1/' $(SRC)/tests/system/scenarios/selftest-net \
		>$(O)/selftest-net-bench
	@$(RUN_SCENARIO) --disk-size 64M --line-pc 10mbit --timeout 600 $(O)/selftest-net-bench \
		>$(O)/bench-selftest-net.log 2>&1; rc=$$?; \
	grep -E '^    |^(ok|FAIL) .*iperf3' $(O)/bench-selftest-net.log; \
	{ echo "## nas-selftest against iperf3: make bench-selftest-net ($$(date -u +%F), qemu TCG)"; echo; \
	  echo "The line PC's two ports held to 10 Mbit/s each (tbf queues both ways), bonded 802.3ad to the NAS's lan1+lan2;"; \
	  echo "net-1 and lacp-4 then iperf3's own client on the same link, flows and directions;"; \
	  echo "ratio per port carrying the flows, band 0.9-1.1x (docs/selftest.md)."; \
	  echo "Host load average at the end: $$(cut -d' ' -f1-3 /proc/loadavg)."; \
	  echo; echo '```'; grep -E '^    |^(ok|FAIL) .*iperf3' $(O)/bench-selftest-net.log; echo '```'; } | \
		sh $(SRC)/bench/md-section.sh $(SRC)/docs/benchmarks.md selftest-vs-iperf3; \
	exit $$rc

# make selftest: boots the board with two blank 1 GiB disks and the line PC
# (its ports held to 30 Mbit/s); netd bonds lan1+lan2 towards it (802.3ad);
# nas-selftest makes its scratch RAID 1 through raidd, runs the quick
# preset with --peers (net-1, lacp-4 against the line PC), prints the
# table and deletes the volume; the record goes to $(O)/selftest/report.json
# and its report (made on the host from the record) to report.html.
.PHONY: selftest
selftest: image $(O)/bin/nas-selftest
	@mkdir -p $(O)/selftest
	@$(RUN_SCENARIO) --disk-size 1G --timeout 900 --line-pc 30mbit $(SRC)/tests/system/tools/selftest \
		>$(O)/selftest/console.log 2>&1; rc=$$?; \
	sed -n '/^test  *write (up)/,/^result:/p' $(O)/selftest/console.log; \
	sed -n '/^=== record/,/^=== end/p' $(O)/selftest/console.log | sed '1d;$$d' \
		>$(O)/selftest/report.json; \
	if [ -s $(O)/selftest/report.json ] && \
	    $(O)/bin/nas-selftest html $(O)/selftest/report.json $(O)/selftest/report.html; then \
		echo "record: $(O)/selftest/report.json, report: $(O)/selftest/report.html"; \
	else tail -n 40 $(O)/selftest/console.log; fi; \
	exit $$rc
