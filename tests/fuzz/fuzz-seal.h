/*
 * Helpers of the on-disk fuzz targets: checksums recomputed after the
 * fuzzer's edits, so that the checks behind them are reached, and the
 * one way a target reports a broken property.
 */
#ifndef NAS_FUZZ_SEAL_H
#define NAS_FUZZ_SEAL_H

#include <stddef.h>
#include <stdint.h>

/* Recompute the crc32c of a raidd label slot (LABEL_SLOT_SIZE bytes). */
void	fuzz_seal_label(uint8_t *slot);
/* Recompute sb_csum of an md v1.x superblock of len bytes, if max_dev fits. */
void	fuzz_seal_mdsb(uint8_t *sb, size_t len);
/* Print what went wrong and abort: libFuzzer keeps the input. */
void	fuzz_fail(const char *what, const char *err) __attribute__((noreturn));

#endif
