# Unit suites (Check). Each links only the modules under test plus libnas.
CHECK_LIBS := $(shell pkg-config --libs check 2>/dev/null)

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
$(foreach t,$(UNIT_TESTS),$(eval $(t)_LIBS += $$(CHECK_LIBS)))

# ---- libFuzzer targets (clang), built apart from the gcc objects ----
# make check-fuzz [FUZZ_SECONDS=n]: runs each target n seconds (default 60)
# on a copy of its seed corpus and fails on any crash, leak or hang.
FUZZ_SECONDS ?= 60
FUZZ_CC ?= clang
FUZZERS += fuzz-rpc fuzz-framing
FUZZ_O := $(O)/fuzz
FUZZ_SAN := -fsanitize=address,undefined -fno-sanitize-recover=undefined
FUZZ_CFLAGS := $(filter-out -O2 -D_FORTIFY_SOURCE=2 -fsanitize=%,$(CFLAGS_BASE)) \
	-O1 -fno-omit-frame-pointer -fsanitize=fuzzer-no-link $(FUZZ_SAN)
FUZZ_COMMON := tests/fuzz/fuzz-methods.c $(libnas_SRCS)
fuzz-rpc_SRCS := tests/fuzz/fuzz-rpc.c $(FUZZ_COMMON)
fuzz-framing_SRCS := tests/fuzz/fuzz-framing.c $(FUZZ_COMMON)
# nasctl: escaping what daemons say, checking params text.
FUZZERS += fuzz-nasctl
fuzz-nasctl_SRCS := tests/fuzz/fuzz-nasctl.c nasctl/text.c nasctl/secret.c nasctl/args.c \
	nasctl/table.c

$(FUZZ_O)/obj/%.o: $(SRC)/%.c $(AUTOCONF)
	@mkdir -p $(dir $@)
	@echo "  FUZZCC  $*.c"
	@$(FUZZ_CC) $(FUZZ_CFLAGS) -I$(SRC)/tests/fuzz -MMD -MP -c -o $@ $<

define FUZZ_template
$(FUZZ_O)/$(1): $(patsubst %.c,$(FUZZ_O)/obj/%.o,$($(1)_SRCS))
	@echo "  FUZZLD  $(1)"
	@$(FUZZ_CC) -fsanitize=fuzzer $(FUZZ_SAN) -o $$@ $$^ \
		$$(shell pkg-config --libs json-c) -lev -liniparser -lm
endef
$(foreach f,$(FUZZERS),$(eval $(call FUZZ_template,$(f))))

.PHONY: $(FUZZERS)
$(FUZZERS): %: $(FUZZ_O)/%

check-fuzz: $(addprefix $(FUZZ_O)/,$(FUZZERS))
	@sh $(SRC)/tests/fuzz/run-fuzz.sh $(FUZZ_O) $(FUZZ_SECONDS) \
		$(SRC)/tests/fuzz/corpus $(FUZZERS)

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
	exit $$rc
