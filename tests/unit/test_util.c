/* util: LVM2's CRC, UUIDs, growable strings, error messages. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "util/util.h"

/* The definition, one bit at a time: what every faster form must agree with. */
static uint32_t crc_bitwise(uint32_t crc, const uint8_t *p, size_t n)
{
	while (n--) {
		crc ^= *p++;
		for (int k = 0; k < 8; k++)
			crc = (crc & 1) ? (crc >> 1) ^ 0xedb88320u : crc >> 1;
	}
	return crc;
}

static void crc_matches_bitwise_definition(void **state)
{
	uint8_t buf[1031];

	(void)state;
	for (size_t i = 0; i < sizeof(buf); i++)
		buf[i] = (uint8_t)(i * 131 + 7);
	/* Every length and misalignment around the 8-byte stride. */
	for (size_t off = 0; off < 9; off++)
		for (size_t len = 0; len + off <= sizeof(buf); len += (len < 40 ? 1 : 97))
			assert_int_equal(lvm_crc(LVM_INITIAL_CRC, buf + off, len),
			                 crc_bitwise(LVM_INITIAL_CRC, buf + off, len));
}

static void crc_known_lvm2_value(void **state)
{
	/* zlib: crc32("123456789") = 0xcbf43926 with inversion on entry and exit. */
	uint32_t c = lvm_crc(0xffffffffu, "123456789", 9) ^ 0xffffffffu;

	(void)state;
	assert_int_equal(c, 0xcbf43926u);
	assert_int_equal(lvm_crc(LVM_INITIAL_CRC, "", 0), LVM_INITIAL_CRC);
}

static void uuid_generate_format_parse(void **state)
{
	char raw[UUID_LEN + 1], text[UUID_STR_LEN + 1], back[UUID_LEN + 1];

	(void)state;
	assert_int_equal(uuid_generate(raw), 0);
	assert_int_equal(strlen(raw), UUID_LEN);
	uuid_format(raw, text);
	assert_int_equal(strlen(text), UUID_STR_LEN);
	assert_int_equal(text[6], '-');
	assert_int_equal(text[31], '-');
	assert_int_equal(uuid_parse(text, back), 0);
	assert_string_equal(back, raw);
	assert_int_equal(uuid_parse("short", back), -EINVAL);
	assert_non_null(strstr(ulvm_last_error(), "short"));
	assert_int_equal(uuid_parse("XgHQKo-3OAm-L7LI-WfVO-IGWZ-z29q-V4Yhd$", back), -EINVAL);
}

static void strbuf_grows_and_formats(void **state)
{
	struct strbuf sb;
	char *s;

	(void)state;
	sb_init(&sb);
	for (int i = 0; i < 1000; i++)
		sb_printf(&sb, "%d,", i);
	assert_int_equal(sb.len, 3890);
	assert_memory_equal(sb.buf, "0,1,2,", 6);
	sb_reset(&sb);
	sb_printf(&sb, "%s", "");
	assert_int_equal(sb.len, 0);
	sb_puts(&sb, "abc");
	sb_putc(&sb, 'd');
	s = sb_steal(&sb);
	assert_string_equal(s, "abcd");
	free(s);
	assert_null(sb.buf);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(crc_matches_bitwise_definition),
	    cmocka_unit_test(crc_known_lvm2_value),
	    cmocka_unit_test(uuid_generate_format_parse),
	    cmocka_unit_test(strbuf_grows_and_formats),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
