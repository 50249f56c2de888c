# Unit suites (Check). Each links only the modules under test plus libnas.
CHECK_LIBS := $(shell pkg-config --libs check 2>/dev/null)

UNIT_TESTS += test-config test-rpc-policy test-rpc-dispatch test-rpc-server \
	test-events-jobs test-client
test-config_SRCS := tests/unit/test-config.c
test-rpc-policy_SRCS := tests/unit/test-rpc-policy.c
test-rpc-dispatch_SRCS := tests/unit/test-rpc-dispatch.c
test-rpc-server_SRCS := tests/unit/test-rpc-server.c
test-events-jobs_SRCS := tests/unit/test-events-jobs.c
test-client_SRCS := tests/unit/test-client.c
$(foreach t,$(UNIT_TESTS),$(eval $(t)_LIBS += $$(CHECK_LIBS)))
