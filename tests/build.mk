# Unit suites (Check). Each links only the modules under test plus libnas.
CHECK_LIBS := $(shell pkg-config --libs check 2>/dev/null)

UNIT_TESTS += test-config test-rpc-policy test-rpc-dispatch test-rpc-server \
	test-events-jobs test-client
UNIT_UTIL := tests/unit/unit-util.c
test-config_SRCS := tests/unit/test-config.c $(UNIT_UTIL)
test-rpc-policy_SRCS := tests/unit/test-rpc-policy.c $(UNIT_UTIL)
test-rpc-dispatch_SRCS := tests/unit/test-rpc-dispatch.c $(UNIT_UTIL)
test-rpc-server_SRCS := tests/unit/test-rpc-server.c $(UNIT_UTIL)
test-events-jobs_SRCS := tests/unit/test-events-jobs.c $(UNIT_UTIL)
test-client_SRCS := tests/unit/test-client.c $(UNIT_UTIL)
$(foreach t,$(UNIT_TESTS),$(eval $(t)_LIBS += $$(CHECK_LIBS)))
