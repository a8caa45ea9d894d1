/*
 * le_bytes.h - reading little-endian fields of firmware tables (ACPI) from byte buffers, at any
 * alignment. Contract: the caller has checked that the bytes lie in its buffer.
 */
#ifndef HVT_LE_BYTES_H
#define HVT_LE_BYTES_H
#include <stdint.h>

static inline uint16_t le16(const uint8_t *p) { return (uint16_t)(p[0] | p[1] << 8); }
static inline uint32_t le32(const uint8_t *p) { return (uint32_t)le16(p) | (uint32_t)le16(p + 2) << 16; }
static inline uint64_t le64(const uint8_t *p) { return (uint64_t)le32(p) | (uint64_t)le32(p + 4) << 32; }

#endif
