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
