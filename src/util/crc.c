/* LVM2's checksum (lib/misc/crc.c semantics): the IEEE CRC-32 table, reflected, register
 * seeded by the caller (LVM_INITIAL_CRC for every on-disk use) and no final inversion. */
#include "util.h"

static uint32_t crc_table[256];
static bool crc_table_ready;

static void crc_table_init(void)
{
	for (uint32_t i = 0; i < 256; i++) {
		uint32_t c = i;
		for (int k = 0; k < 8; k++)
			c = (c & 1) ? (c >> 1) ^ 0xedb88320u : c >> 1;
		crc_table[i] = c;
	}
	crc_table_ready = true;
}

uint32_t lvm_crc(uint32_t initial, const void *buf, size_t len)
{
	const uint8_t *p = buf;
	uint32_t crc = initial;

	/* Benign race: every thread computes identical table contents. */
	if (!__atomic_load_n(&crc_table_ready, __ATOMIC_ACQUIRE))
		crc_table_init();
	for (size_t i = 0; i < len; i++)
		crc = crc_table[(crc ^ p[i]) & 0xff] ^ (crc >> 8);
	return crc;
}
