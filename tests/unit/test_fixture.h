/* Helpers shared by the unit tests that read the fixtures of tests/data (real LVM2 labels,
 * metadata areas and texts) and patch little-endian fields in them. Include after <cmocka.h>. */
#ifndef ULVM_TEST_FIXTURE_H
#define ULVM_TEST_FIXTURE_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ulvm.h"

#ifndef TEST_DATA_DIR
#define TEST_DATA_DIR "tests/data"
#endif

/* The whole of tests/data/NAME, NUL-terminated (texts can be used as strings); its length in
 * *len when len is not NULL. Fails the test when it cannot be read. */
static inline void *fixture_load(const char *name, size_t *len)
{
	char path[512];
	FILE *f;
	char *buf;
	long n;

	snprintf(path, sizeof(path), "%s/%s", TEST_DATA_DIR, name);
	f = fopen(path, "rb");
	if (!f)
		fail_msg("cannot open fixture %s", path);
	assert_int_equal(fseek(f, 0, SEEK_END), 0);
	n = ftell(f);
	assert_true(n >= 0);
	rewind(f);
	buf = malloc((size_t)n + 1);
	assert_non_null(buf);
	assert_int_equal(fread(buf, 1, (size_t)n, f), (size_t)n);
	buf[n] = '\0';
	fclose(f);
	if (len)
		*len = (size_t)n;
	return buf;
}

static inline void put_le32(uint8_t *p, uint32_t v)
{
	for (int i = 0; i < 4; i++)
		p[i] = (uint8_t)(v >> (8 * i));
}

static inline void put_le64(uint8_t *p, uint64_t v)
{
	for (int i = 0; i < 8; i++)
		p[i] = (uint8_t)(v >> (8 * i));
}

static inline uint32_t get_le32(const uint8_t *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

static inline uint64_t get_le64(const uint8_t *p)
{
	return (uint64_t)get_le32(p) | (uint64_t)get_le32(p + 4) << 32;
}

/* The last error message (ulvm_last_error()) names `needle`. */
static inline void assert_msg_contains(const char *needle)
{
	const char *msg = ulvm_last_error();

	if (!msg || !strstr(msg, needle))
		fail_msg("error message \"%s\" does not contain \"%s\"", msg ? msg : "(none)",
		         needle);
}

#endif
