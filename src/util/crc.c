/* LVM2's checksum (lib/misc/crc.c semantics): the IEEE CRC-32 table, reflected, register
 * seeded by the caller (LVM_INITIAL_CRC for every on-disk use) and no final inversion.
 * Computed eight bytes at a time ("slicing-by-8"): metadata texts of large VGs are
 * hundreds of kilobytes and are checksummed on every read and write. */
#include <string.h>

#include "util.h"

static uint32_t crc_tables[8][256];
static bool crc_tables_ready;

/* tables[0][i]: the CRC of byte i; tables[k][i]: of byte i followed by k zero bytes. */
static void crc_tables_build(uint32_t t[8][256], uint32_t poly)
{
	for (uint32_t i = 0; i < 256; i++) {
		uint32_t c = i;
		for (int k = 0; k < 8; k++)
			c = (c & 1) ? (c >> 1) ^ poly : c >> 1;
		t[0][i] = c;
	}
	for (uint32_t i = 0; i < 256; i++)
		for (int k = 1; k < 8; k++)
			t[k][i] = (t[k - 1][i] >> 8) ^ t[0][t[k - 1][i] & 0xff];
}

static void crc_tables_init(void)
{
	crc_tables_build(crc_tables, 0xedb88320u);
	__atomic_store_n(&crc_tables_ready, true, __ATOMIC_RELEASE);
}

/* Eight bytes per step through tables built as above (the same for any reflected CRC). */
static uint32_t crc_slice8(const uint32_t t[8][256], uint32_t crc, const uint8_t *p, size_t len)
{
	while (len >= 8) {
		uint32_t lo, hi;

		memcpy(&lo, p, 4);
		memcpy(&hi, p + 4, 4);
		if (__BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__) {
			lo = __builtin_bswap32(lo);
			hi = __builtin_bswap32(hi);
		}
		lo ^= crc;
		crc = t[7][lo & 0xff] ^ t[6][(lo >> 8) & 0xff] ^ t[5][(lo >> 16) & 0xff] ^
		      t[4][lo >> 24] ^ t[3][hi & 0xff] ^ t[2][(hi >> 8) & 0xff] ^
		      t[1][(hi >> 16) & 0xff] ^ t[0][hi >> 24];
		p += 8;
		len -= 8;
	}
	while (len--)
		crc = t[0][(crc ^ *p++) & 0xff] ^ (crc >> 8);
	return crc;
}

uint32_t lvm_crc(uint32_t initial, const void *buf, size_t len)
{
	/* Benign race: every thread computes identical table contents. */
	if (!__atomic_load_n(&crc_tables_ready, __ATOMIC_ACQUIRE))
		crc_tables_init();
	return crc_slice8(crc_tables, initial, buf, len);
}

/* CRC-32C: the same slicing-by-8 scheme with the Castagnoli polynomial, and the SSE4.2
 * crc32 instruction where there is one (persistent-data checksums every 4 KiB metadata
 * block on every read, so the checker is mostly this loop). */
static uint32_t crc32c_tables[8][256];
static bool crc32c_tables_ready;

static void crc32c_tables_init(void)
{
	crc_tables_build(crc32c_tables, 0x82f63b78u);
	__atomic_store_n(&crc32c_tables_ready, true, __ATOMIC_RELEASE);
}

static uint32_t crc32c_sw(uint32_t crc, const uint8_t *p, size_t len)
{
	if (!__atomic_load_n(&crc32c_tables_ready, __ATOMIC_ACQUIRE))
		crc32c_tables_init();
	return crc_slice8(crc32c_tables, crc, p, len);
}

#if defined(__x86_64__)
__attribute__((target("sse4.2"))) static uint32_t crc32c_hw(uint32_t crc, const uint8_t *p,
                                                            size_t len)
{
	uint64_t c = crc;

	while (len >= 8) {
		uint64_t v;

		memcpy(&v, p, 8);
		c = __builtin_ia32_crc32di(c, v);
		p += 8;
		len -= 8;
	}
	while (len--)
		c = __builtin_ia32_crc32qi((uint32_t)c, *p++);
	return (uint32_t)c;
}
#endif

uint32_t crc32c(uint32_t crc, const void *buf, size_t len)
{
#if defined(__x86_64__)
	static int have_hw = -1;

	if (have_hw < 0)
		have_hw = __builtin_cpu_supports("sse4.2") ? 1 : 0;
	if (have_hw)
		return crc32c_hw(crc, buf, len);
#endif
	return crc32c_sw(crc, buf, len);
}
