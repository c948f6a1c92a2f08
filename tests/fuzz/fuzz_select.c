/*
 * libFuzzer target for the selection parser of the reports (-S): the input is parsed as
 * criteria over a few fields of every type (names as lvs knows them, with and without their
 * prefix); whatever parses is evaluated against rows of made-up values, which must neither
 * crash nor leak. Messages go nowhere.
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../src/cli/cli.h"

static const struct {
	const char *name;
	enum sel_type type;
} fake_fields[] = {
    {"lv_name", SEL_T_STRING},        {"lv_tags", SEL_T_STRLIST},       {"stripes", SEL_T_NUMBER},
    {"lv_size", SEL_T_SIZE},          {"data_percent", SEL_T_PERCENT},  {"lv_time", SEL_T_TIME},
    {"pv_allocatable", SEL_T_NUMBER}, {"vg_permissions", SEL_T_STRING},
};
#define NF (sizeof(fake_fields) / sizeof(fake_fields[0]))

static int lookup(void *arg, const char *name, size_t len, struct sel_field_info *out)
{
	(void)arg;
	if (len == 4 && !memcmp(name, "help", 4))
		return -EPERM;
	for (size_t i = 0; i < NF; i++) {
		const char *n = fake_fields[i].name;
		const char *bare = strchr(n, '_') ? strchr(n, '_') + 1 : n;
		if ((strlen(n) == len && !memcmp(n, name, len)) ||
		    (strlen(bare) == len && !memcmp(bare, name, len))) {
			out->id = (int)i;
			out->type = fake_fields[i].type;
			out->name = n;
			return 0;
		}
	}
	return len == 3 && !memcmp(name, "seg", 3) ? -ENOTSUP : -ENOENT;
}

static const char *const values[][NF] = {
    {"lv1", "a,b", "2", "16384", "12.50", "", "allocatable", "writeable"},
    {"", "", "1", "0", "", "", "", "read-only"},
    {"x y", "t2", "18446744073709551615", "99999999999", "100.00", "", "", ""},
};

static int row;

static void get(void *arg, int field, struct sel_row_value *v)
{
	(void)arg;
	v->s = values[row][field];
	if (fake_fields[field].type == SEL_T_TIME) {
		v->has_time = row != 1;
		v->time = row ? 1700000000LL : 0;
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *text = malloc(size + 1);
	struct selection *sel = NULL;
	FILE *devnull = fopen("/dev/null", "w");

	if (!text || !devnull)
		abort();
	memcpy(text, data, size);
	text[size] = '\0';
	if (!selection_parse(text, lookup, NULL, NULL, devnull, &sel))
		for (row = 0; row < 3; row++)
			(void)selection_match(sel, get, NULL);
	selection_free(sel);
	fclose(devnull);
	free(text);
	return 0;
}
