# A board of another architecture (included by board/build.mk).
#   make check-unit-board BOARD=qemu-aarch64   the unit suites UNIT_ON_BOARD
#       on the board's own kernel (an image of their own in $(O)/image-unit):
#       a check that fails under qemu-user (check-unit) but passes here is an
#       emulator artefact, one that fails here too is a bug (Decision 78).
UNIT_ON_BOARD ?= test-secret test-rpc-socket test-rpc-server test-spawn
UNIT_IMAGE_DIR := $(O)/image-unit

.PHONY: check-unit-board
check-unit-board: $(addprefix $(O)/bin/,$(UNIT_ON_BOARD)) $(IMAGE_ROOTFS)/.stamp
	@echo "  IMAGE   $(BOARD) test + $(UNIT_ON_BOARD)"
	@TEST_EXTRA="$(addprefix $(O)/bin/,$(UNIT_ON_BOARD))" \
	    $(MKIMAGE) -v test -b $(BOARD_DIR) -r $(IMAGE_ROOTFS) -d $(DL) -o $(UNIT_IMAGE_DIR)
	@$(RUN_SCENARIO) --image-dir $(UNIT_IMAGE_DIR) --disk-size 64M --timeout 1200 \
	    $(SRC)/tests/system/tools/unit-suites

# make check-boards (from the x86 tree; part of make check-long): the ARM
# board's image, the scenarios ARM_SCENARIOS on it, then disk-move-boards
# both ways (Decision 77).  Times in $(O)/check-boards.timing.
ARM_BOARD := qemu-aarch64
ARM_O := $(O)/$(ARM_BOARD)
ARM_SCENARIOS ?= 01-boot-daemons raidd-raid1-reboot raidd-levels-2bay
MOVE_ENV := NAS_IMAGE_DIR_qemu_x86_64=$(IMAGE_DIR) NAS_IMAGE_DIR_qemu_aarch64=$(ARM_O)/image

.PHONY: check-boards
check-boards: image
	@$(MAKE) --no-print-directory -f $(SRC)/Makefile BOARD=$(ARM_BOARD) O=$(ARM_O) image
	@rc=0; rm -f $(O)/check-boards.timing; \
	NAS_TIMING=$(O)/check-boards.timing RUN_SCENARIO_OPTS="--board $(ARM_BOARD) \
	    --image-dir $(ARM_O)/image --log-dir $(ARM_O)/system-logs" \
	    sh $(SRC)/tests/system/run-all $(addprefix $(SRC)/tests/system/scenarios/,$(ARM_SCENARIOS)) || rc=1; \
	for b in qemu-x86_64 $(ARM_BOARD); do \
	    $(MOVE_ENV) python3 $(SRC)/tests/system/run-scenario --board $$b --disk-size 256M \
		--move-to other --timeout 900 --log-dir $(O)/system-logs \
		--timing $(O)/check-boards.timing $(SRC)/tests/system/long/disk-move-boards || rc=1; \
	done; \
	cat $(O)/check-boards.timing; exit $$rc
ifeq ($(BOARD),qemu-x86_64)
check-long: check-boards
endif

# make check-system-arm (from the x86 tree; a tier of make check, so CI
# runs it): the ARM board's image, then ARM_CI_SCENARIOS on it (issue 14:
# boot and the daemons, a RAID 1 cross-checked with mdadm and rebooted
# with the same checksums, a pulled disk rebuilt, LUKS2 opened by
# cryptsetup, the LACP bond).  About 8 minutes on an idle 2-core host.
ARM_CI_SCENARIOS ?= 01-boot-daemons raidd-raid1-reboot raidd-repair cryptd-luks2 netd-lacp

.PHONY: check-system-arm
check-system-arm:
	@$(MAKE) --no-print-directory -f $(SRC)/Makefile BOARD=$(ARM_BOARD) O=$(ARM_O) image
	@rm -f $(ARM_O)/check-system.log
	@NAS_TIMING=$(ARM_O)/check-system.timing RUN_SCENARIO_OPTS="--board $(ARM_BOARD) \
	    --image-dir $(ARM_O)/image --log-dir $(ARM_O)/system-logs --disk-rate $(CHECK_DISK_RATE)" \
		sh $(SRC)/tests/system/run-all $(addprefix $(SRC)/tests/system/scenarios/,$(ARM_CI_SCENARIOS)) | \
		tee $(ARM_O)/check-system.log; \
	 tail -n 1 $(ARM_O)/check-system.log | \
	    awk '/passed,/ { print $$1, $$3, "system-arm" }' >>$(O)/check-summary.txt; \
	 tail -n 1 $(ARM_O)/check-system.log | grep -q ' 0 failed$$'
