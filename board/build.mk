# Virtual board, firmware image and system tests (included by the top Makefile).
#   make image          production and test images in $(O)/image
#   make run            boot the virtual NAS on the console (BAYS=4, IMAGE_VARIANT=prod)
#   make boot-check     boot, print the daemons' versions, bays and ports, power off
#   make check-system   every tests/system/scenarios/* (SCENARIOS=... to choose)
#   make bench-board    boot time, image sizes, daemon RSS -> $(O)/bench-board.md
# Downloads (the kernel package) are cached in $(DL).

BOARD := $(or $(patsubst "%",%,$(CONFIG_BOARD_NAME)),qemu-x86_64)
BOARD_DIR := $(SRC)/board/$(BOARD)
DL ?= $(SRC)/dl
IMAGE_DIR := $(O)/image
IMAGE_ROOTFS := $(IMAGE_DIR)/rootfs
IMAGE_PROD := $(IMAGE_DIR)/$(BOARD)-prod.cpio.zst
IMAGE_TEST := $(IMAGE_DIR)/$(BOARD)-test.cpio.zst
BAYS ?= 2
IMAGE_VARIANT ?= test
SCENARIOS ?= $(sort $(wildcard $(SRC)/tests/system/scenarios/*))
RUN_SCENARIO := python3 $(SRC)/tests/system/run-scenario --board $(BOARD) --image-dir $(IMAGE_DIR) \
	--log-dir $(O)/system-logs
# A cross board's toolchain.mk names the Debian architecture of its image
# and its kernel package: mkimage.sh then takes nothing from the build host.
MKIMAGE := IMAGE_ARCH="$(IMAGE_ARCH)" KERNEL_META="$(KERNEL_META)" bash $(SRC)/scripts/image/mkimage.sh
IMAGE_INPUTS := $(addprefix $(O)/bin/,$(PROGS)) $(BOARD_DIR)/modules $(wildcard $(BOARD_DIR)/*.ini) \
	$(shell find $(SRC)/rootfs-overlay $(SRC)/scripts/image $(wildcard $(BOARD_DIR)/overlay) -type f 2>/dev/null)

.PHONY: image image-deps run boot-check check-system bench-board

image-deps:
	@sh $(SRC)/scripts/install-deps.sh image

$(IMAGE_ROOTFS)/.stamp: $(IMAGE_INPUTS) | image-deps
	@rm -rf $(IMAGE_ROOTFS)
	@$(MAKE) --no-print-directory -f $(SRC)/Makefile O=$(O) install DESTDIR=$(IMAGE_ROOTFS)
	@touch $@

$(IMAGE_PROD): $(IMAGE_ROOTFS)/.stamp
	@echo "  IMAGE   $(BOARD) production"
	@$(MKIMAGE) -v prod -b $(BOARD_DIR) -r $(IMAGE_ROOTFS) -d $(DL) -o $(IMAGE_DIR)

$(IMAGE_TEST): $(IMAGE_ROOTFS)/.stamp
	@echo "  IMAGE   $(BOARD) test"
	@TEST_EXTRA="$(O)/bin/raidd-sysdrv $(O)/bin/raidd-mdsb-set $(O)/bin/netd-nlrec" \
	    $(MKIMAGE) -v test -b $(BOARD_DIR) -r $(IMAGE_ROOTFS) -d $(DL) -o $(IMAGE_DIR)

# The line PC (docs/selftest.md): boots the same kernel as the virtual board.
LINEPC := $(if $(filter qemu-x86_64,$(BOARD)),$(IMAGE_DIR)/linepc.cpio.zst)
$(IMAGE_DIR)/linepc.cpio.zst: $(IMAGE_TEST) $(SRC)/scripts/image/mklinepc.sh $(BOARD_DIR)/linepc/init
	@echo "  IMAGE   line PC"
	@bash $(SRC)/scripts/image/mklinepc.sh -d $(DL) -o $(IMAGE_DIR)

image: $(IMAGE_PROD) $(IMAGE_TEST) $(LINEPC)

run: image
	@python3 $(BOARD_DIR)/vnas.py run --image-dir $(IMAGE_DIR) --variant $(IMAGE_VARIANT) \
		--bays $(BAYS) --api-dir $(O)/run

boot-check: $(IMAGE_PROD)
	@$(RUN_SCENARIO) --variant prod --bays $(BAYS) --disk-size 256M $(SRC)/tests/system/tools/boot-check

# The functional scenarios run at the emulation's own disk speed: the held
# rates (Decision 137) are for measuring, and a scenario that measures
# names them on its own line (selftest-vs-fio). CHECK_DISK_RATE=200:160
# runs every scenario held, as run-scenario does by default.
CHECK_DISK_RATE ?= off
check-system: image
	@rm -f $(O)/check-system.log
	@NAS_TIMING=$(O)/check-system.timing RUN_SCENARIO_OPTS="--board $(BOARD) --image-dir $(IMAGE_DIR) --log-dir $(O)/system-logs --disk-rate $(CHECK_DISK_RATE)" \
		sh $(SRC)/tests/system/run-all $(SCENARIOS) | tee $(O)/check-system.log; \
	 tail -n 1 $(O)/check-system.log | \
	    awk '/passed,/ { print $$1, $$3, "system" }' >>$(O)/check-summary.txt; \
	 tail -n 1 $(O)/check-system.log | grep -q ' 0 failed$$'

bench-board: image
	@sh $(SRC)/scripts/image/bench-board.sh $(SRC) $(O) $(IMAGE_DIR) $(BOARD)
-include $(SRC)/board/cross.mk
