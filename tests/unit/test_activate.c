/* lvm/activate: LVs -> the device-mapper tables LVM2 loads, and dm names. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "lvm/lvm.h"

#ifndef TEST_DATA_DIR
#define TEST_DATA_DIR "tests/data"
#endif

static struct ulvm_vg *load_vg(const char *file)
{
	char path[512], *text;
	struct cfg_tree *t;
	struct ulvm_vg *vg;
	FILE *f;
	long n;

	snprintf(path, sizeof(path), "%s/%s", TEST_DATA_DIR, file);
	assert_non_null(f = fopen(path, "r"));
	fseek(f, 0, SEEK_END);
	n = ftell(f);
	rewind(f);
	assert_non_null(text = malloc((size_t)n + 1));
	assert_int_equal(fread(text, 1, (size_t)n, f), (size_t)n);
	fclose(f);
	assert_int_equal(cfg_parse(text, (size_t)n, path, &t), 0);
	assert_int_equal(vg_import(NULL, t, path, &vg), 0);
	cfg_tree_free(t);
	free(text);
	/* Pretend the PVs were found at these paths (regular files: named by path). */
	for (size_t i = 0; i < vg->npvs; i++) {
		char dev[64];
		snprintf(dev, sizeof(dev), "/nonexistent/pv%zu.img", i);
		vg->pvs[i]->device = strdup(dev);
	}
	return vg;
}

static void linear_in_two_segments(void **state)
{
	struct ulvm_vg *vg = load_vg("lvm2-raw-linear-striped.txt");
	char *table;

	(void)state;
	assert_int_equal(ulvm_lv_table(vg, ulvm_lv_find(vg, "lin"), &table), 0);
	/* pe_start 2048 + pe * 8192 sectors */
	assert_string_equal(table, "0 24576 linear /nonexistent/pv0.img 2048\n"
	                           "24576 16384 linear /nonexistent/pv0.img 59392\n");
	free(table);
	vg_free(vg);
}

static void striped_two_stripes(void **state)
{
	struct ulvm_vg *vg = load_vg("lvm2-raw-linear-striped.txt");
	char *table;

	(void)state;
	assert_int_equal(ulvm_lv_table(vg, ulvm_lv_find(vg, "str"), &table), 0);
	assert_string_equal(table, "0 32768 striped 2 128 /nonexistent/pv0.img 26624 "
	                           "/nonexistent/pv1.img 2048\n");
	free(table);
	vg_free(vg);
}

/* Thin LVs activate as LVM2 loads them: the pool LV as a linear over its "-tpool" layer
 * (it has thin LVs), a thin LV as a thin target on that layer, and the whole stack of a
 * thin LV lowest first, with LVM2's UUID suffixes. */
static void thin_tables_and_stack(void **state)
{
	struct ulvm_vg *vg = load_vg("lvm2-raw-thin-snapshot.txt");
	struct ulvm_dm_node *nodes;
	char *table = NULL, uuid[ULVM_DM_UUID_LEN], want[256];
	size_t n;

	(void)state;
	assert_int_equal(ulvm_lv_table(vg, ulvm_lv_find(vg, "pool"), &table), 0);
	assert_string_equal(table, "0 131072 linear thinvg-pool-tpool 0\n");
	free(table);
	assert_int_equal(ulvm_lv_table(vg, ulvm_lv_find(vg, "thinsnap"), &table), 0);
	assert_non_null(strstr(table, " thin thinvg-pool-tpool 2\n"));
	free(table);
	assert_int_equal(ulvm_lv_dm_nodes(vg, ulvm_lv_find(vg, "thin1"), &nodes, &n), 0);
	assert_int_equal(n, 4);
	assert_string_equal(nodes[0].name, "thinvg-pool_tmeta");
	assert_string_equal(nodes[1].name, "thinvg-pool_tdata");
	assert_string_equal(nodes[2].name, "thinvg-pool-tpool");
	assert_string_equal(nodes[3].name, "thinvg-thin1");
	assert_true(nodes[2].real_pool);
	assert_string_equal(nodes[2].table,
	                    "0 131072 thin-pool thinvg-pool_tmeta thinvg-pool_tdata 128 0 0\n");
	ulvm_lv_dm_uuid(vg, ulvm_lv_find(vg, "pool_tmeta"), uuid, sizeof(uuid));
	assert_string_equal(nodes[0].uuid, uuid);
	assert_non_null(strstr(uuid, "-tmeta"));
	snprintf(want, sizeof(want), "LVM-%s%s-tpool", vg->uuid, ulvm_lv_find(vg, "pool")->uuid);
	assert_string_equal(nodes[2].uuid, want);
	ulvm_dm_nodes_free(nodes, n);
	vg_free(vg);
}

static void missing_pv_refused(void **state)
{
	struct ulvm_vg *vg = load_vg("lvm2-raw-linear-striped.txt");
	char *table = NULL;

	(void)state;
	vg->pvs[1]->missing = true;
	assert_int_equal(ulvm_lv_table(vg, ulvm_lv_find(vg, "str"), &table), -ENODEV);
	assert_null(table);
	vg_free(vg);
}

static void dm_names_double_dashes(void **state)
{
	char n[64];

	(void)state;
	ulvm_lv_dm_name("vg0", "lin", n, sizeof(n));
	assert_string_equal(n, "vg0-lin");
	ulvm_lv_dm_name("vg-1m", "my-lv", n, sizeof(n));
	assert_string_equal(n, "vg--1m-my--lv");
	ulvm_lv_dm_name("a", "b", n, 4);
	assert_string_equal(n, "a-b");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(linear_in_two_segments), cmocka_unit_test(striped_two_stripes),
	    cmocka_unit_test(thin_tables_and_stack),  cmocka_unit_test(missing_pv_refused),
	    cmocka_unit_test(dm_names_double_dashes),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
