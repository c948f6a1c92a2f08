/* LVM2's checksum (lib/misc/crc.c semantics): the IEEE CRC-32 table, reflected, register
 * seeded by the caller (LVM_INITIAL_CRC for every on-disk use) and no final inversion.
 * Computed eight bytes at a time ("slicing-by-8"): metadata texts of large VGs are
 * hundreds of kilobytes and are checksummed on every read and write. */
#include <string.h>

#include "util.h"

static uint32_t crc_tables[8][256];
static bool crc_tables_ready;

static void crc_tables_init(void)
{
	for (uint32_t i = 0; i < 256; i++) {
		uint32_t c = i;
		for (int k = 0; k < 8; k++)
			c = (c & 1) ? (c >> 1) ^ 0xedb88320u : c >> 1;
		crc_tables[0][i] = c;
	}
	/* tables[k][i]: the CRC of byte i followed by k zero bytes. */
	for (uint32_t i = 0; i < 256; i++)
		for (int k = 1; k < 8; k++)
			crc_tables[k][i] = (crc_tables[k - 1][i] >> 8) ^
			                   crc_tables[0][crc_tables[k - 1][i] & 0xff];
	__atomic_store_n(&crc_tables_ready, true, __ATOMIC_RELEASE);
}

uint32_t lvm_crc(uint32_t initial, const void *buf, size_t len)
{
	const uint8_t *p = buf;
	uint32_t crc = initial;

	/* Benign race: every thread computes identical table contents. */
	if (!__atomic_load_n(&crc_tables_ready, __ATOMIC_ACQUIRE))
		crc_tables_init();
	while (len >= 8) {
		uint32_t lo, hi;

		memcpy(&lo, p, 4);
		memcpy(&hi, p + 4, 4);
		if (__BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__) {
			lo = __builtin_bswap32(lo);
			hi = __builtin_bswap32(hi);
		}
		lo ^= crc;
		crc = crc_tables[7][lo & 0xff] ^ crc_tables[6][(lo >> 8) & 0xff] ^
		      crc_tables[5][(lo >> 16) & 0xff] ^ crc_tables[4][lo >> 24] ^
		      crc_tables[3][hi & 0xff] ^ crc_tables[2][(hi >> 8) & 0xff] ^
		      crc_tables[1][(hi >> 16) & 0xff] ^ crc_tables[0][hi >> 24];
		p += 8;
		len -= 8;
	}
	while (len--)
		crc = crc_tables[0][(crc ^ *p++) & 0xff] ^ (crc >> 8);
	return crc;
}
