/* Unit tests for lvm/units: format_size() against the strings LVM2 prints (lvs/vgs/pvs
 * with --units r/h/H/b/s/k/m/g and vgdisplay's long form), the '<' marker of rounded 'r'
 * values, and ulvm_parse_size() with LVM2's size suffixes. */
#include <errno.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "lvm/lvm.h"

#define MIB (2048ull) /* sectors */
#define GIB (1024ull * MIB)

static const char *fmt(uint64_t sectors, char unit, bool suffix, bool long_form)
{
	static char buf[64];

	memset(buf, 'X', sizeof(buf));
	format_size(sectors, unit, suffix, long_form, buf, sizeof(buf));
	return buf;
}

/* ---- format_size ------------------------------------------------------------------------ */

static void test_format_r_lvm2_outputs(void **state)
{
	(void)state;
	/* lvs/vgs default (--units r): values observed from LVM2. */
	assert_string_equal(fmt(12 * MIB, 'r', true, false), "12.00m");
	assert_string_equal(fmt(504 * MIB, 'r', true, false), "504.00m");
	assert_string_equal(fmt(1020 * MIB, 'r', true, false), "1020.00m");
	assert_string_equal(fmt(252 * MIB, 'r', true, false), "252.00m");
	assert_string_equal(fmt(GIB, 'r', true, false), "1.00g");
	assert_string_equal(fmt(4 * MIB, 'r', true, false), "4.00m");
	assert_string_equal(fmt(1024 * GIB, 'r', true, false), "1.00t");
	assert_string_equal(fmt(8, 'r', true, false), "4.00k");
	/* without the suffix */
	assert_string_equal(fmt(12 * MIB, 'r', false, false), "12.00m");
}

static void test_format_zero(void **state)
{
	(void)state;
	/* libdm prints zero with the blank "unit" suffix. */
	assert_string_equal(fmt(0, 'r', true, false), "0 ");
	assert_string_equal(fmt(0, 'h', true, false), "0 ");
	assert_string_equal(fmt(0, 'r', false, false), "0");
	assert_string_equal(fmt(0, 'm', true, false), "0m");
	assert_string_equal(fmt(0, 'b', true, false), "0B");
	assert_string_equal(fmt(0, 's', true, false), "0S");
}

static void test_format_bytes_sectors(void **state)
{
	(void)state;
	assert_string_equal(fmt(12 * MIB, 'b', true, false), "12582912B");
	assert_string_equal(fmt(12 * MIB, 's', true, false), "24576S");
	assert_string_equal(fmt(12 * MIB, 'B', true, false), "12582912B");
	assert_string_equal(fmt(12 * MIB, 'S', true, false), "24576S");
	assert_string_equal(fmt(12 * MIB, 'b', false, false), "12582912");
	assert_string_equal(fmt(1, 's', true, false), "1S");
}

static void test_format_fixed_units(void **state)
{
	(void)state;
	assert_string_equal(fmt(12 * MIB, 'm', true, false), "12.00m");
	assert_string_equal(fmt(12 * MIB, 'k', true, false), "12288.00k");
	assert_string_equal(fmt(12 * MIB, 'g', true, false), "0.01g");
	assert_string_equal(fmt(GIB, 'm', true, false), "1024.00m");
	assert_string_equal(fmt(GIB, 't', true, false), "0.00t");
	/* upper case = powers of 1000 */
	assert_string_equal(fmt(12 * MIB, 'M', true, false), "12.58M");
	assert_string_equal(fmt(12 * MIB, 'K', true, false), "12582.91K");
	assert_string_equal(fmt(12 * MIB, 'm', false, false), "12.00");
}

static void test_format_long_form(void **state)
{
	(void)state;
	/* vgdisplay / pvdisplay style */
	assert_string_equal(fmt(12 * MIB, 'h', true, true), "12.00 MiB");
	assert_string_equal(fmt(GIB, 'h', true, true), "1.00 GiB");
	assert_string_equal(fmt(8, 'h', true, true), "4.00 KiB");
	assert_string_equal(fmt(12 * MIB, 'H', true, true), "12.58 MB");
	assert_string_equal(fmt(2043 * MIB, 'r', true, true), "<2.00 GiB");
}

static void test_format_rounding_prefix(void **state)
{
	(void)state;
	/* 2043 MiB = 1.99512 GiB: shown as 2.00, so LVM2 marks it "<". */
	assert_string_equal(fmt(2043 * MIB, 'r', true, false), "<2.00g");
	assert_string_equal(fmt(2043 * MIB, 'h', true, false), "2.00g"); /* 'h' never marks */
	/* 1535 MiB = 1.49902 GiB -> "<1.50g" */
	assert_string_equal(fmt(1535 * MIB, 'r', true, false), "<1.50g");
	/* 1025 MiB = 1.00098 GiB rounds down: no prefix */
	assert_string_equal(fmt(1025 * MIB, 'r', true, false), "1.00g");
	/* 1023 MiB stays in MiB (below 1 GiB): exact */
	assert_string_equal(fmt(1023 * MIB, 'r', true, false), "1023.00m");
	/* A PV of 128 MiB less the 1 MiB of metadata space and one sector: 126.99... */
	assert_string_equal(fmt(127 * MIB - 1, 'r', true, false), "<127.00m");

	/* Against the rule itself: '<' exactly when floor(100 v) != round(100 v). */
	for (uint64_t s = 1; s < 3 * GIB; s = s * 3 + 7) {
		char want[64], unit = 'b';
		double v = (double)s * 512.0, div = 1.0;
		const char *units = "kmgt";

		for (int i = 0; i < 4 && v / div >= 1024.0; i++) {
			div *= 1024.0;
			unit = units[i];
		}
		if (unit == 'b')
			continue;
		v /= div;
		snprintf(want, sizeof(want), "%s%.2f%c",
		         floor(100.0 * v) != nearbyint(100.0 * v) ? "<" : "", v, unit);
		assert_string_equal(fmt(s, 'r', true, false), want);
	}
}

static void test_format_si(void **state)
{
	(void)state;
	/* 'H': powers of 1000. 1 GB = 1953125 sectors exactly. */
	assert_string_equal(fmt(1953125, 'H', true, false), "1.00G");
	assert_string_equal(fmt(GIB, 'H', true, false), "1.07G");
	assert_string_equal(fmt(12 * MIB, 'H', true, false), "12.58M");
	assert_string_equal(fmt(2, 'H', true, false), "1.02K");
	/* 'R': SI with the rounding marker: 999.999 MB shows as 1000.00M */
	assert_string_equal(fmt(1953124, 'R', true, false), "<1000.00M");
	assert_string_equal(fmt(1953125, 'R', true, false), "1.00G");
}

static void test_format_small_buffer(void **state)
{
	char buf[4];

	(void)state;
	format_size(12 * MIB, 'r', true, false, buf, sizeof(buf));
	assert_string_equal(buf, "12.");
}

/* ---- ulvm_parse_size ---------------------------------------------------------------------- */

static uint64_t parse_ok(const char *s, char def)
{
	uint64_t v = 12345;

	if (ulvm_parse_size(s, def, &v) != 0)
		fail_msg("ulvm_parse_size(\"%s\") failed: %s", s, ulvm_last_error());
	return v;
}

static void test_parse_units(void **state)
{
	(void)state;
	assert_int_equal(parse_ok("12M", 'm'), 12 * MIB);
	assert_int_equal(parse_ok("12m", 'm'), 12 * MIB);
	assert_int_equal(parse_ok("1.5g", 'm'), 3 * GIB / 2);
	assert_int_equal(parse_ok("1.5G", 'm'), 3 * GIB / 2);
	assert_int_equal(parse_ok("4k", 'm'), 8);
	assert_int_equal(parse_ok("4K", 'm'), 8);
	assert_int_equal(parse_ok("512b", 'm'), 1);
	assert_int_equal(parse_ok("512B", 'm'), 1);
	assert_int_equal(parse_ok("8s", 'm'), 8);
	assert_int_equal(parse_ok("8S", 'm'), 8);
	assert_int_equal(parse_ok("2t", 'm'), 2048 * GIB);
	assert_int_equal(parse_ok("1p", 'm'), 1024ull * 1024 * GIB);
	assert_int_equal(parse_ok("12MiB", 'm'), 12 * MIB);
	assert_int_equal(parse_ok("0", 'm'), 0);
	assert_int_equal(parse_ok("1e", 'm'), 1ull << 51); /* 'e': exabytes */
	assert_int_equal(parse_ok(".5m", 'm'), 1024);
}

static void test_parse_default_unit(void **state)
{
	(void)state;
	assert_int_equal(parse_ok("100", 'm'), 100 * MIB);
	assert_int_equal(parse_ok("100", 'k'), 200);
	assert_int_equal(parse_ok("100", 's'), 100);
	assert_int_equal(parse_ok("3", 'g'), 3 * GIB);
	/* a suffix overrides the default */
	assert_int_equal(parse_ok("100k", 'g'), 200);
}

static void test_parse_rounds_up(void **state)
{
	(void)state;
	/* partial sectors round up */
	assert_int_equal(parse_ok("1b", 'm'), 1);
	assert_int_equal(parse_ok("513b", 'm'), 2);
	assert_int_equal(parse_ok("1000b", 'm'), 2);
	assert_int_equal(parse_ok("0.1k", 'm'), 1);
	assert_int_equal(parse_ok("1.0001m", 'm'), 2049);
}

static void test_parse_invalid(void **state)
{
	static const char *const bad[] = {"",     "abc", "-1",   "-1m",   "+5m",  "12x",
	                                  "12mm", "m",   "12 m", "1..5m", "12m3", "k12",
	                                  "nan",  "inf", "12q",  "infm"};
	uint64_t v;

	(void)state;
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		int r;

		ulvm_clear_error();
		v = 777;
		r = ulvm_parse_size(bad[i], 'm', &v);
		if (r >= 0)
			fail_msg("\"%s\" was accepted as %llu sectors", bad[i],
			         (unsigned long long)v);
		assert_true(r == -EINVAL || r == -ERANGE);
		assert_non_null(ulvm_last_error());
		assert_int_equal(v, 777); /* untouched on error */
	}
	assert_int_equal(ulvm_parse_size(NULL, 'm', &v), -EINVAL);
	/* too large for 64-bit byte counts */
	assert_int_equal(ulvm_parse_size("100000000e", 'm', &v), -ERANGE);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_format_r_lvm2_outputs),
	    cmocka_unit_test(test_format_zero),
	    cmocka_unit_test(test_format_bytes_sectors),
	    cmocka_unit_test(test_format_fixed_units),
	    cmocka_unit_test(test_format_long_form),
	    cmocka_unit_test(test_format_rounding_prefix),
	    cmocka_unit_test(test_format_si),
	    cmocka_unit_test(test_format_small_buffer),
	    cmocka_unit_test(test_parse_units),
	    cmocka_unit_test(test_parse_default_unit),
	    cmocka_unit_test(test_parse_rounds_up),
	    cmocka_unit_test(test_parse_invalid),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
