/* Unit tests for cli/select: LVM2's selection language parsed and matched against rows of
 * made-up values (each expectation is what LVM2 2.03 selects from the same values), and the
 * messages for bad criteria. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "cli/cli.h"

enum { F_NAME, F_TAGS, F_STRIPES, F_SIZE, F_DATA, F_TIME, F_ALLOC, F_N };
static const struct {
	const char *name;
	enum sel_type type;
} fields[F_N] = {
    {"lv_name", SEL_T_STRING},        {"lv_tags", SEL_T_STRLIST},      {"stripes", SEL_T_NUMBER},
    {"lv_size", SEL_T_SIZE},          {"data_percent", SEL_T_PERCENT}, {"lv_time", SEL_T_TIME},
    {"pv_allocatable", SEL_T_NUMBER},
};

static int lookup(void *arg, const char *name, size_t len, struct sel_field_info *out)
{
	(void)arg;
	for (int i = 0; i < F_N; i++) {
		const char *n = fields[i].name, *bare = strchr(n, '_') ? strchr(n, '_') + 1 : n;
		if ((strlen(n) == len && !memcmp(n, name, len)) ||
		    (strlen(bare) == len && !memcmp(bare, name, len))) {
			*out = (struct sel_field_info){i, fields[i].type, n};
			return 0;
		}
	}
	return -ENOENT;
}

/* rows: lv1 (8m, tags t1,t2, 1 stripe), lv2 (16m, t2, 2 stripes, 50%), big (32m, none) */
static const char *const rows[3][F_N] = {
    {"lv1", "t1,t2", "1", "16384", "", "", "allocatable"},
    {"lv2", "t2", "2", "32768", "50.00", "", ""},
    {"big", "", "1", "65536", "", "", "allocatable"},
};
static const long long times[3] = {1600000000LL, 1700000000LL, 0};

static void get(void *arg, int field, struct sel_row_value *v)
{
	int r = *(int *)arg;

	v->s = rows[r][field];
	if (field == F_TIME) {
		v->has_time = times[r] != 0;
		v->time = times[r];
	}
}

/* The rows `text` selects, as a string of their names ("lv1 big"), or "ERR". */
static const char *select_rows(const char *text)
{
	static char out[64];
	struct selection *sel;
	FILE *null = fopen("/dev/null", "w");

	out[0] = '\0';
	if (selection_parse(text, lookup, NULL, NULL, null, &sel)) {
		fclose(null);
		return "ERR";
	}
	fclose(null);
	for (int r = 0; r < 3; r++)
		if (selection_match(sel, get, &r)) {
			if (out[0])
				strcat(out, " ");
			strcat(out, rows[r][F_NAME]);
		}
	selection_free(sel);
	return out;
}

static void test_sizes_and_numbers(void **state)
{
	(void)state;
	assert_string_equal(select_rows("size>8m"), "lv2 big");
	assert_string_equal(select_rows("size>8"), "lv2 big"); /* m by default */
	assert_string_equal(select_rows("size=8192k"), "lv1");
	assert_string_equal(select_rows("size<24576s"), "lv1");
	assert_string_equal(select_rows("size=0.03125g"), "big");
	assert_string_equal(select_rows("size=16.777216M"), "lv2"); /* powers of 1000 */
	assert_string_equal(select_rows("stripes=2"), "lv2");
	assert_string_equal(select_rows("stripes!=2"), "lv1 big");
	assert_string_equal(select_rows("stripes=-1"), ""); /* reserved: undefined */
	assert_string_equal(select_rows("pv_allocatable=yes"), "lv1 big");
	assert_string_equal(select_rows("allocatable=0"), "lv2");
}

static void test_strings_and_lists(void **state)
{
	(void)state;
	assert_string_equal(select_rows("name=~^l"), "lv1 lv2");
	assert_string_equal(select_rows("name!~v"), "big");
	assert_string_equal(select_rows("name='lv1'"), "lv1");
	assert_string_equal(select_rows("tags=t1"), "lv1");
	assert_string_equal(select_rows("tags={t1,t2}"), "lv1");
	assert_string_equal(select_rows("tags=[t2]"), "lv2");
	assert_string_equal(select_rows("tags=[t2,t1]"), "lv1");
	assert_string_equal(select_rows("tags={t1||t2}"), "lv1 lv2");
	assert_string_equal(select_rows("tags=\"\""), "big");
	assert_string_equal(select_rows("tags!=\"\""), "lv1 lv2");
}

static void test_logic_percent_time(void **state)
{
	(void)state;
	assert_string_equal(select_rows("!(name=lv1)"), "lv2 big");
	assert_string_equal(select_rows("(size<10m # stripes=2), name!=big"), "lv1 lv2");
	assert_string_equal(select_rows("name=lv1 || name=big && size>8"), "lv1 big");
	assert_string_equal(select_rows("data_percent=50"), "lv2");
	assert_string_equal(select_rows("data_percent<60%"), "lv2"); /* blank: never */
	assert_string_equal(select_rows("data_percent!=50"), "");
	assert_string_equal(select_rows("lv_time>@1650000000"), "lv2");
	assert_string_equal(select_rows("lv_time before 2030"), "lv1 lv2");
	assert_string_equal(select_rows(""), "lv1 lv2 big");
	assert_string_equal(select_rows("all"), "lv1 lv2 big");
}

static void test_errors(void **state)
{
	static const char *const bad[] = {
	    "nosuch=1",
	    "size=abc",
	    "name=lv1 &&",
	    "(name=lv1",
	    "name=lv1)",
	    "!name=lv1",
	    "name",
	    "name<lv2",
	    "name=\"lv1",
	    "tags=[t1",
	    "tags=[t1,t2||t3]",
	    "tags=[t1}",
	    "tags=~t1",
	    "size=8%",
	    "stripes=2m",
	    "data_percent=101",
	    "name=~",
	    "lv_time>abc",
	    "name=~\"((a{200}){200})\"",
	};
	char *msg = NULL;
	size_t len = 0;
	FILE *f;
	struct selection *sel;

	(void)state;
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		assert_string_equal(select_rows(bad[i]), "ERR");
	/* LVM2's words */
	f = open_memstream(&msg, &len);
	assert_int_equal(selection_parse("size=abc", lookup, NULL, NULL, f, &sel), -EINVAL);
	fclose(f);
	assert_string_equal(msg, "  Failed to parse numeric value for selection field lv_size.\n"
	                         "  Selection syntax error at 'size=abc'.\n"
	                         "  Use 'help' for selection to get more help.\n");
	free(msg);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_sizes_and_numbers),
	    cmocka_unit_test(test_strings_and_lists),
	    cmocka_unit_test(test_logic_percent_time),
	    cmocka_unit_test(test_errors),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
