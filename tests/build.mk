# Unit suites (Check). Each links only the modules under test plus libnas.
CHECK_LIBS := $(shell $(PKG_CONFIG) --libs check 2>/dev/null)

UNIT_TESTS += test-config test-rpc-policy test-rpc-dispatch test-rpc-server \
	test-events-jobs test-client test-secret test-rpc-socket
UNIT_UTIL := tests/unit/unit-util.c
test-config_SRCS := tests/unit/test-config.c $(UNIT_UTIL)
test-rpc-policy_SRCS := tests/unit/test-rpc-policy.c $(UNIT_UTIL)
test-rpc-dispatch_SRCS := tests/unit/test-rpc-dispatch.c $(UNIT_UTIL)
test-rpc-server_SRCS := tests/unit/test-rpc-server.c $(UNIT_UTIL)
test-events-jobs_SRCS := tests/unit/test-events-jobs.c $(UNIT_UTIL)
test-client_SRCS := tests/unit/test-client.c $(UNIT_UTIL)
test-secret_SRCS := tests/unit/test-secret.c $(UNIT_UTIL)
UNIT_TESTS += test-spawn
test-spawn_SRCS := tests/unit/test-spawn.c $(UNIT_UTIL)
UNIT_TESTS += test-dm
test-dm_SRCS := tests/unit/test-dm.c $(UNIT_UTIL)
test-rpc-socket_SRCS := tests/unit/test-rpc-socket.c $(UNIT_UTIL)
UNIT_TESTS += test-metrics
UNIT_TESTS += test-rpc-later
test-rpc-later_SRCS := tests/unit/test-rpc-later.c $(UNIT_UTIL)
test-metrics_SRCS := tests/unit/test-metrics.c $(UNIT_UTIL)
$(foreach t,$(UNIT_TESTS),$(eval $(t)_LIBS += $$(CHECK_LIBS)))

# ---- libFuzzer targets (clang), built apart from the gcc objects ----
# make check-fuzz [FUZZ_SECONDS=n]: runs each target n seconds (default 25;
# five targets take about what two did at 60) on a copy of its seed corpus
# and fails on any crash, leak or hang.
# make fuzz-long [FUZZ_RUNS=n]: each target for n executions (default
# 10 million); executions and crashes go to docs/benchmarks.md.
FUZZ_SECONDS ?= 25
FUZZ_RUNS ?= 10000000
FUZZ_CC ?= clang
FUZZERS += fuzz-rpc fuzz-framing fuzz-label fuzz-mdsb fuzz-config
FUZZ_O := $(O)/fuzz
FUZZ_SAN := -fsanitize=address,undefined -fno-sanitize-recover=undefined
FUZZ_CFLAGS := $(filter-out -O2 -D_FORTIFY_SOURCE=2 -fsanitize=%,$(CFLAGS_BASE)) \
	-O1 -fno-omit-frame-pointer -fsanitize=fuzzer-no-link $(FUZZ_SAN)
FUZZ_COMMON := tests/fuzz/fuzz-methods.c $(libnas_SRCS)
fuzz-rpc_SRCS := tests/fuzz/fuzz-rpc.c $(FUZZ_COMMON)
fuzz-framing_SRCS := tests/fuzz/fuzz-framing.c $(FUZZ_COMMON)
FUZZ_DISK := tests/fuzz/fuzz-seal.c raidd/label.c raidd/plan.c raidd/mdsb.c
fuzz-label_SRCS := tests/fuzz/fuzz-label.c $(FUZZ_DISK)
fuzz-mdsb_SRCS := tests/fuzz/fuzz-mdsb.c $(FUZZ_DISK)
fuzz-config_SRCS := tests/fuzz/fuzz-config.c $(libnas_SRCS)
# nasctl: escaping what daemons say, checking params text.
FUZZERS += fuzz-nasctl
fuzz-nasctl_SRCS := tests/fuzz/fuzz-nasctl.c nasctl/text.c nasctl/secret.c nasctl/args.c \
	nasctl/table.c

# cryptd: LUKS2 headers and JSON areas; seeds made by cryptsetup.
FUZZERS += fuzz-luks2
fuzz-luks2_SRCS := tests/fuzz/fuzz-luks2.c cryptd/luks2-hdr.c cryptd/luks2-json.c \
	cryptd/luks2-crypto.c cryptd/luks2-keyslot.c lib/secret.c
fuzz-luks2_FUZZLIBS := -lcrypto -largon2

# netd: netlink dumps, netd.ini, net.apply's JSON, resolv.conf; seeds
# include the kernel messages recorded on the board.
FUZZERS += fuzz-netd
fuzz-netd_SRCS := tests/fuzz/fuzz-netd.c $(NETD_LOGIC) $(libnas_SRCS)

$(FUZZ_O)/obj/%.o: $(SRC)/%.c $(AUTOCONF)
	@mkdir -p $(dir $@)
	@echo "  FUZZCC  $*.c"
	@$(FUZZ_CC) $(FUZZ_CFLAGS) -I$(SRC)/tests/fuzz -MMD -MP -c -o $@ $<

define FUZZ_template
$(FUZZ_O)/$(1): $(patsubst %.c,$(FUZZ_O)/obj/%.o,$($(1)_SRCS))
	@echo "  FUZZLD  $(1)"
	@$(FUZZ_CC) -fsanitize=fuzzer $(FUZZ_SAN) -o $$@ $$^ \
		$$(shell $(PKG_CONFIG) --libs json-c) -lev -liniparser -lm $$($(1)_FUZZLIBS)
endef
$(foreach f,$(FUZZERS),$(eval $(call FUZZ_template,$(f))))

.PHONY: $(FUZZERS)
$(FUZZERS): %: $(FUZZ_O)/%

# Seeds written by raidd's own encoders (fuzz-seeds.c) and the shipped
# configuration files, next to the committed corpus/<name> of each target.
FUZZ_SEEDS := $(FUZZ_O)/seeds
$(FUZZ_O)/fuzz-seeds: $(patsubst %.c,$(O)/obj/%.o,tests/fuzz/fuzz-seeds.c raidd/label.c raidd/plan.c \
	raidd/plan-grow.c raidd/mdsb.c)
	@echo "  LD      fuzz-seeds"
	@$(CC) $(ALL_LDFLAGS) -o $@ $^

$(FUZZ_SEEDS)/.stamp: $(FUZZ_O)/fuzz-seeds $(wildcard $(SRC)/rootfs-overlay/etc/nas/*.ini) \
		$(SRC)/tests/fuzz/luks2-seeds.sh
	@rm -rf $(FUZZ_SEEDS) && mkdir -p $(FUZZ_SEEDS)/config
	@$(FUZZ_O)/fuzz-seeds $(FUZZ_SEEDS)
	@cp $(SRC)/rootfs-overlay/etc/nas/*.ini $(FUZZ_SEEDS)/config/
	@sh $(SRC)/tests/fuzz/luks2-seeds.sh $(FUZZ_SEEDS)/luks2
	@touch $@

.PHONY: fuzz-long
check-fuzz: $(addprefix $(FUZZ_O)/,$(FUZZERS)) $(FUZZ_SEEDS)/.stamp
	@sh $(SRC)/tests/fuzz/run-fuzz.sh $(FUZZ_O) $(FUZZ_SECONDS) \
		$(SRC)/tests/fuzz/corpus $(FUZZERS)

fuzz-long: $(addprefix $(FUZZ_O)/,$(FUZZERS)) $(FUZZ_SEEDS)/.stamp
	@sh $(SRC)/tests/fuzz/fuzz-long.sh $(FUZZ_O) $(FUZZ_RUNS) \
		$(SRC)/tests/fuzz/corpus $(SRC)/docs/benchmarks.md $(FUZZERS)

# ---- host integration: every daemon on a temporary socket dir ----
# Every script runs even when one before it failed; each adds its own
# "P F name" line to $NAS_SUMMARY and the target fails if any did.
check-host: $(addprefix $(O)/bin/,$(PROGS)) | deps-check
	@rc=0; \
	sh $(SRC)/tests/host/daemons.sh $(O)/bin $(SRC) || rc=1; \
	sh $(SRC)/tests/host/man-lint.sh || rc=1; \
	sh $(SRC)/tests/host/sockets.sh $(O)/bin || rc=1; \
	sh $(SRC)/tests/host/mdsb-examine.sh $(O)/bin || rc=1; \
	sh $(SRC)/tests/host/raidd-sys-loop.sh $(O)/bin || rc=1; \
	sh $(SRC)/tests/host/netd-netns.sh $(O)/bin || rc=1; \
	sh $(SRC)/tests/host/powerd-fixture.sh $(O)/bin || rc=1; \
	sh $(SRC)/tests/host/selftest.sh $(O)/bin || rc=1; \
	sh $(SRC)/tests/host/selftest-factory.sh $(O)/bin || rc=1; \
	sh $(SRC)/tests/host/luks2.sh $(O)/bin || rc=1; \
	sh $(SRC)/tests/host/cryptd-nasctl.sh $(O)/bin || rc=1; \
	sh $(SRC)/tests/host/netd-config.sh $(O)/bin || rc=1; \
	sh $(SRC)/tests/host/netd-many-links.sh $(O)/bin || rc=1; \
	sh $(SRC)/tests/host/netd-guard.sh $(O)/bin || rc=1; \
	sh $(SRC)/tests/host/netd-dhcp.sh $(O)/bin || rc=1; \
	sh $(SRC)/tests/host/image-builder.sh $(SRC) || rc=1; \
	sh $(SRC)/tests/host/vnas-rate.sh $(SRC) || rc=1; \
	sh $(SRC)/tests/host/metrics-daemons.sh $(O)/bin || rc=1; \
	sh $(SRC)/tests/host/soak.sh $(O)/bin $(SRC) 8 300 || rc=1; \
	exit $$rc

# ---- make check-long: the reliability campaign (tens of minutes) ----
# The soak at full size, then raidd SIGKILLed at random points of 20
# creates and deletes on the board (a copy of the scenario whose name
# gives it the run count); the figures of both go to docs/benchmarks.md.
# Then raidd's RAID 10 superblocks and bitmap on 4 x 6 TiB sparse disks
# against mdadm --create's (tests/system/long/, 2-4 min); a power cut in
# the middle of volume.add_disk's RAID 5 reshape (raidd-add-disk-powercut) and of a RAID 1's
# reshape after md took it over as RAID 5 (raidd-add-level-powercut); a dirty degraded
# RAID 5 across a power cut (tests/system/long/raidd-dirty-degraded, ~4 min), an encrypted one
# whose member md failed for errors (raidd-dirty-failed-crypt, ~2 min); RAID 10 and SHR
# members pulled under a write and rebuilt (raidd-pull-rebuild-levels, ~4 min); a power cut in an
# SHR grow once it has added a new tier's partition (raidd-shr-grow-powercut, ~2 min); a power
# cut in an encrypted volume's grow, finished after volume unlock (raidd-crypt-grow-powercut); a
# power cut in an SHR's add, the first tier reshaping and the second waiting
# (raidd-shr-add-powercut); a power cut in md's superblock writes after an add's takeover,
# each old member left at raid1 in turn (raidd-add-takeover-cut-both, three boots); an SHR
# join cut right after md's takeover of its tier (raidd-shr-grow-join-cut-takeover, ~4 min).
SOAK_CLIENTS ?= 64
SOAK_CALLS ?= 10000
KILL_RUNS ?= 20
.PHONY: check-long
check-long: $(addprefix $(O)/bin/,$(PROGS)) image | deps-check
	@rc=0; \
	sh $(SRC)/tests/host/soak.sh $(O)/bin $(SRC) $(SOAK_CLIENTS) $(SOAK_CALLS) \
		$(SRC)/docs/benchmarks.md || rc=1; \
	cp $(SRC)/tests/system/scenarios/raidd-kill-campaign \
		$(O)/raidd-kill-campaign-$(KILL_RUNS); \
	$(RUN_SCENARIO) --disk-size 256M --timeout $$((300 + 90 * $(KILL_RUNS))) \
		$(O)/raidd-kill-campaign-$(KILL_RUNS) > $(O)/kill-campaign.log 2>&1; \
	krc=$$?; cat $(O)/kill-campaign.log; [ $$krc -eq 0 ] || rc=1; \
	sh $(SRC)/tests/system/kill-report.sh $(O)/kill-campaign.log \
		$(SRC)/docs/benchmarks.md $$krc; \
	$(RUN_SCENARIO) --bays 4 --disk-size 6T --timeout 900 \
		$(SRC)/tests/system/long/raidd-raid10-large-bitmap || rc=1; \
	$(RUN_SCENARIO) --bays 4 --disk-size 128M --timeout 480 \
		$(SRC)/tests/system/tools/raidd-grow-raid5 || rc=1; \
	cp $(SRC)/tests/system/scenarios/raidd-add-disk $(O)/raidd-add-disk-powercut; \
	$(RUN_SCENARIO) --bays 4 --disk-size 128M --timeout 900 \
		$(O)/raidd-add-disk-powercut || rc=1; \
	cp $(SRC)/tests/system/scenarios/raidd-add-level $(O)/raidd-add-level-powercut; \
	$(RUN_SCENARIO) --bays 4 --disk-size 128M --timeout 600 \
		$(O)/raidd-add-level-powercut || rc=1; \
	$(RUN_SCENARIO) --bays 4 --disk-size 96M --timeout 420 \
		$(SRC)/tests/system/long/raidd-dirty-degraded || rc=1; \
	$(RUN_SCENARIO) --bays 4 --disk-size 96M --timeout 360 \
		$(SRC)/tests/system/long/raidd-dirty-failed-crypt || rc=1; \
	$(RUN_SCENARIO) --bays 4 --disk-size 96M,96M,128M,128M --timeout 600 \
		$(SRC)/tests/system/long/raidd-pull-rebuild-levels || rc=1; \
	cp $(SRC)/tests/system/scenarios/raidd-add-takeover-cut $(O)/raidd-add-takeover-cut-both; \
	$(RUN_SCENARIO) --bays 4 --disk-size 96M --timeout 600 \
		$(O)/raidd-add-takeover-cut-both || rc=1; \
	cp $(SRC)/tests/system/scenarios/raidd-shr-grow $(O)/raidd-shr-grow-powercut; \
	$(RUN_SCENARIO) --bays 4 --disk-size 80M --timeout 600 \
		$(O)/raidd-shr-grow-powercut || rc=1; \
	$(RUN_SCENARIO) --disk-size 128M --timeout 420 \
		$(SRC)/tests/system/long/raidd-crypt-grow-powercut || rc=1; \
	$(RUN_SCENARIO) --bays 4 --disk-size 96M,160M,160M,160M --timeout 600 \
		$(SRC)/tests/system/long/raidd-shr-add-powercut || rc=1; \
	cp $(SRC)/tests/system/scenarios/raidd-shr-grow-join-cut $(O)/raidd-shr-grow-join-cut-takeover; \
	$(RUN_SCENARIO) --bays 4 --disk-size 80M --timeout 1500 \
		$(O)/raidd-shr-grow-join-cut-takeover || rc=1; \
	exit $$rc
