/* Unit tests for lvm/vgsplit (the model side of vgsplit and vgmerge): which LVs move with
 * which PVs, LVM2's refusals (an LV on both sides, a snapshot or a thin pool parted from what
 * it uses, no metadata area left, PVs not in the VG, incompatible VGs for a merge), and that
 * both resulting VGs stand on their own (the destination's kept keys survive freeing the
 * source; each exports, parses and imports again; PV keys are renumbered as LVM2 writes
 * them; merged LV UUIDs stay unique). */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "lvm/lvm.h"

/* ---- building VGs ------------------------------------------------------------------------ */

/*
 * VG `name` (extent size `es` sectors) with `npvs` PVs of 100 extents each (devices
 * /dev/NAME-pvI, one metadata area in use each) and the LV sections `lvs` (raw text; "pvI"
 * names PV I).
 */
static struct ulvm_vg *build_vg(const char *name, unsigned uuid_seed, uint32_t es, size_t npvs,
                                const char *lvs)
{
	struct strbuf sb;
	struct cfg_tree *tree = NULL;
	struct ulvm_vg *vg = NULL;
	int r;

	sb_init(&sb);
	sb_printf(&sb,
	          "%s {\nid = \"vg%04u-aaaa-bbbb-cccc-dddd-eeee-ffffff\"\nseqno = 3\n"
	          "format = \"lvm2\"\nstatus = [\"RESIZEABLE\", \"READ\", \"WRITE\"]\n"
	          "flags = []\nextent_size = %u\nmax_lv = 0\nmax_pv = 0\n"
	          "metadata_copies = 0\nphysical_volumes {\n",
	          name, uuid_seed, es);
	for (size_t i = 0; i < npvs; i++)
		sb_printf(
		    &sb,
		    "pv%zu {\nid = \"p%02u%03zu-aaaa-bbbb-cccc-dddd-eeee-ffffff\"\n"
		    "device = \"/dev/%s-pv%zu\"\nstatus = [\"ALLOCATABLE\"]\nflags = []\n"
		    "dev_size = %llu\npe_start = 2048\npe_count = 100\nkept_pv_key = %zu\n}\n",
		    i, uuid_seed, i, name, i, (unsigned long long)100 * es + 2048, i);
	sb_printf(&sb,
	          "}\nlogical_volumes {\n%s}\n}\ncontents = \"Text Format Volume Group\"\n"
	          "version = 1\n",
	          lvs ? lvs : "");
	assert_false(sb.oom);
	r = cfg_parse(sb.buf, sb.len, "build_vg", &tree);
	if (!r)
		r = vg_import(NULL, tree, "build_vg", &vg);
	if (r)
		fail_msg("build_vg: %s\n%s", ulvm_last_error(), sb.buf);
	cfg_tree_free(tree);
	sb_free(&sb);
	for (size_t i = 0; i < vg->npvs; i++) {
		vg->pvs[i]->device = strdup(vg->pvs[i]->device_hint);
		assert_non_null(vg->pvs[i]->device);
		vg->pvs[i]->mda_count = vg->pvs[i]->mda_used_count = 1;
	}
	return vg;
}

/* A linear LV of `n` extents at PE `pe` of each listed PV in turn ("0:5" = pv0 from PE 5). */
static void lv_text(struct strbuf *sb, const char *name, unsigned id, bool visible,
                    const char *extra_keys, const char *const *areas, size_t nareas, uint32_t n)
{
	sb_printf(sb,
	          "%s {\nid = \"lv%04u-aaaa-bbbb-cccc-dddd-eeee-ffffff\"\nstatus = [\"READ\", "
	          "\"WRITE\"%s]\nflags = []\n%screation_time = 1700000000\ncreation_host = "
	          "\"t\"\nsegment_count = %zu\n",
	          name, id, visible ? ", \"VISIBLE\"" : "", extra_keys ? extra_keys : "", nareas);
	for (size_t i = 0; i < nareas; i++) {
		unsigned pv, pe;
		assert_int_equal(sscanf(areas[i], "%u:%u", &pv, &pe), 2);
		sb_printf(sb,
		          "segment%zu {\nstart_extent = %zu\nextent_count = %u\ntype = "
		          "\"striped\"\nstripe_count = 1\nstripes = [\"pv%u\", %u]\n}\n",
		          i + 1, i * n, n, pv, pe);
	}
	sb_puts(sb, "}\n");
}

static struct ulvm_lv *find_lv(struct ulvm_vg *vg, const char *name)
{
	return ulvm_lv_find(vg, name);
}

/* The VG exports, parses and imports again with the same PVs and LVs. */
static void assert_vg_roundtrips(struct ulvm_vg *vg)
{
	struct cfg_tree *tree = NULL;
	struct ulvm_vg *again = NULL;
	char *text = NULL;
	size_t len;

	assert_int_equal(vg_export(vg, false, "test", &text, &len), 0);
	assert_int_equal(cfg_parse(text, len, "again", &tree), 0);
	if (vg_import(NULL, tree, "again", &again))
		fail_msg("re-import: %s\n%s", ulvm_last_error(), text);
	assert_int_equal(again->npvs, vg->npvs);
	assert_int_equal(again->nlvs, vg->nlvs);
	for (size_t i = 0; i < vg->npvs; i++)
		assert_memory_equal(again->pvs[i]->uuid, vg->pvs[i]->uuid, UUID_LEN);
	vg_free(again);
	cfg_tree_free(tree);
	free(text);
}

static struct ulvm_vg *empty_vg(const char *name)
{
	return build_vg(name, 90, 8192, 0, NULL);
}

static const char *err(void)
{
	return ulvm_last_error() ? ulvm_last_error() : "";
}

/* ---- split: plain LVs ------------------------------------------------------------------- */

static struct ulvm_vg *plain_vg(void)
{
	struct strbuf sb;
	struct ulvm_vg *vg;

	sb_init(&sb);
	lv_text(&sb, "a", 1, true, "kept_lv_key = \"A\"\n", (const char *[]){"0:0"}, 1, 4);
	lv_text(&sb, "b", 2, true, NULL, (const char *[]){"1:0", "2:0"}, 2, 4);
	lv_text(&sb, "c", 3, true, NULL, (const char *[]){"2:10"}, 1, 4);
	lv_text(&sb, "d", 4, true, "kept_lv_key = \"D\"\n", (const char *[]){"1:20"}, 1, 2);
	vg = build_vg("vg0", 1, 8192, 3, sb.buf);
	sb_free(&sb);
	return vg;
}

static void test_split_lv_on_both_sides(void **state)
{
	struct ulvm_vg *src = plain_vg(), *dst = empty_vg("vg1");
	const char *pvs[] = {"/dev/vg0-pv1"};

	(void)state;
	assert_int_equal(vg_split_move(src, dst, pvs, 1, NULL), -EINVAL);
	assert_string_equal(err(), "Can't split Logical Volume b between two Volume Groups");
	/* nothing moved */
	assert_int_equal(src->npvs, 3);
	assert_int_equal(src->nlvs, 4);
	assert_int_equal(dst->npvs, 0);
	vg_free(src);
	vg_free(dst);
}

static void test_split_moves_lvs_with_their_pvs(void **state)
{
	struct ulvm_vg *src = plain_vg(), *dst = empty_vg("vg1");
	const char *pvs[] = {"/dev/vg0-pv2", "/dev/vg0-pv1"};

	(void)state;
	assert_int_equal(vg_split_move(src, dst, pvs, 2, NULL), 0);
	assert_int_equal(src->npvs, 1);
	assert_string_equal(src->pvs[0]->device, "/dev/vg0-pv0");
	assert_int_equal(src->nlvs, 1);
	assert_non_null(find_lv(src, "a"));
	/* PVs in the source's order, renumbered from pv0 */
	assert_int_equal(dst->npvs, 2);
	assert_string_equal(dst->pvs[0]->device, "/dev/vg0-pv1");
	assert_string_equal(dst->pvs[0]->key, "pv0");
	assert_string_equal(dst->pvs[1]->key, "pv1");
	assert_int_equal(dst->nlvs, 3);
	assert_string_equal(dst->lvs[0]->name, "b");
	assert_string_equal(dst->lvs[2]->name, "d");
	assert_int_equal(dst->pvs[0]->pe_alloc_count, 6); /* b's 4 + d's 2 */
	assert_int_equal(src->pvs[0]->pe_alloc_count, 4);
	/* The destination's kept keys are its own: free the source first. */
	vg_free(src);
	assert_vg_roundtrips(dst);
	{
		char *text;
		size_t len;
		assert_int_equal(vg_export(dst, false, "t", &text, &len), 0);
		assert_non_null(strstr(text, "kept_lv_key = \"D\""));
		assert_non_null(strstr(text, "kept_pv_key = 2"));
		free(text);
	}
	vg_free(dst);
}

static void test_split_by_lv_name(void **state)
{
	struct ulvm_vg *src = plain_vg(), *dst = empty_vg("vg1");

	(void)state;
	assert_int_equal(vg_split_move(src, dst, NULL, 0, "nolv"), -ENOENT);
	assert_string_equal(err(), "Logical volume nolv not in volume group vg0");
	/* b uses pv1 and pv2: c and d go with them */
	assert_int_equal(vg_split_move(src, dst, NULL, 0, "vg0/b"), 0);
	assert_int_equal(dst->npvs, 2);
	assert_int_equal(dst->nlvs, 3);
	assert_int_equal(src->nlvs, 1);
	assert_vg_roundtrips(src);
	assert_vg_roundtrips(dst);
	vg_free(src);
	vg_free(dst);
}

static void test_split_pv_not_in_vg(void **state)
{
	struct ulvm_vg *src = plain_vg(), *dst = empty_vg("vg1");
	const char *pvs[] = {"/dev/elsewhere"};
	const char *twice[] = {"/dev/vg0-pv0", "/dev/vg0-pv0"};

	(void)state;
	assert_int_equal(vg_split_move(src, dst, pvs, 1, NULL), -ENOENT);
	assert_string_equal(err(), "Physical volume /dev/elsewhere not in volume group vg0");
	assert_int_equal(vg_split_move(src, dst, twice, 2, NULL), -ENOENT);
	assert_string_equal(err(), "Physical volume /dev/vg0-pv0 not in volume group vg0");
	vg_free(src);
	vg_free(dst);
}

static void test_split_needs_metadata_areas(void **state)
{
	struct ulvm_vg *src = plain_vg(), *dst = empty_vg("vg1");
	const char *pvs[] = {"/dev/vg0-pv0"};

	(void)state;
	src->pvs[0]->mda_used_count = 0;
	assert_int_equal(vg_split_move(src, dst, pvs, 1, NULL), -ENOSPC);
	assert_string_equal(err(), "Cannot split: Nowhere to store metadata for new Volume Group");
	src->pvs[0]->mda_used_count = 1;
	src->pvs[1]->mda_used_count = src->pvs[2]->mda_used_count = 0;
	assert_int_equal(vg_split_move(src, dst, pvs, 1, NULL), -ENOSPC);
	vg_free(src);
	vg_free(dst);
}

/* Every PV may go (LVM2 then writes no source). */
static void test_split_every_pv(void **state)
{
	struct ulvm_vg *src = plain_vg(), *dst = empty_vg("vg1");
	const char *pvs[] = {"/dev/vg0-pv0", "/dev/vg0-pv1", "/dev/vg0-pv2"};

	(void)state;
	src->pvs[0]->mda_used_count = 0;
	assert_int_equal(vg_split_move(src, dst, pvs, 3, NULL), 0);
	assert_int_equal(src->npvs, 0);
	assert_int_equal(src->nlvs, 0);
	assert_int_equal(dst->nlvs, 4);
	vg_free(src);
	vg_free(dst);
}

/* ---- split: snapshots and thin pools ---------------------------------------------------- */

static struct ulvm_vg *snapshot_vg(void)
{
	struct strbuf sb;
	struct ulvm_vg *vg;

	sb_init(&sb);
	lv_text(&sb, "orig", 1, true, NULL, (const char *[]){"0:0"}, 1, 4);
	lv_text(&sb, "snap", 2, false, NULL, (const char *[]){"1:0"}, 1, 2);
	lv_text(&sb, "other", 3, true, NULL, (const char *[]){"2:0"}, 1, 2);
	sb_puts(&sb, "snapshot0 {\nid = \"lv0009-aaaa-bbbb-cccc-dddd-eeee-ffffff\"\nstatus = "
	             "[\"READ\"]\nflags = []\ncreation_time = 1700000000\ncreation_host = "
	             "\"t\"\nsegment_count = 1\nsegment1 {\nstart_extent = 0\nextent_count = "
	             "4\ntype = \"snapshot\"\nchunk_size = 8\norigin = \"orig\"\ncow_store = "
	             "\"snap\"\n}\n}\n");
	vg = build_vg("vg0", 2, 8192, 3, sb.buf);
	sb_free(&sb);
	return vg;
}

static void test_split_snapshot(void **state)
{
	struct ulvm_vg *src = snapshot_vg(), *dst = empty_vg("vg1");
	const char *cow_only[] = {"/dev/vg0-pv1"}, *both[] = {"/dev/vg0-pv0", "/dev/vg0-pv1"};

	(void)state;
	assert_int_equal(vg_split_move(src, dst, cow_only, 1, NULL), -EINVAL);
	assert_string_equal(err(), "Can't split snapshot snap between two Volume Groups");
	assert_int_equal(vg_split_move(src, dst, both, 2, NULL), 0);
	assert_int_equal(dst->nlvs, 3); /* orig, snap, snapshot0 */
	assert_non_null(find_lv(dst, "snapshot0"));
	assert_int_equal(src->nlvs, 1);
	{
		struct ulvm_snapshot s;
		assert_true(ulvm_lv_snapshot(dst, find_lv(dst, "snap"), &s));
		assert_ptr_equal(s.origin, find_lv(dst, "orig"));
	}
	vg_free(src);
	assert_vg_roundtrips(dst);
	vg_free(dst);
}

static struct ulvm_vg *thin_vg(void)
{
	struct strbuf sb;
	struct ulvm_vg *vg;

	sb_init(&sb);
	sb_puts(&sb, "pool {\nid = \"lv0001-aaaa-bbbb-cccc-dddd-eeee-ffffff\"\nstatus = "
	             "[\"READ\", \"WRITE\", \"VISIBLE\"]\nflags = []\ncreation_time = "
	             "1700000000\ncreation_host = \"t\"\nsegment_count = 1\nsegment1 "
	             "{\nstart_extent = 0\nextent_count = 4\ntype = \"thin-pool\"\nmetadata = "
	             "\"pool_tmeta\"\npool = \"pool_tdata\"\ntransaction_id = 1\nchunk_size = "
	             "128\ndiscards = \"passdown\"\nzero_new_blocks = 1\n}\n}\n");
	sb_puts(&sb, "thin1 {\nid = \"lv0002-aaaa-bbbb-cccc-dddd-eeee-ffffff\"\nstatus = "
	             "[\"READ\", \"WRITE\", \"VISIBLE\"]\nflags = []\ncreation_time = "
	             "1700000000\ncreation_host = \"t\"\nsegment_count = 1\nsegment1 "
	             "{\nstart_extent = 0\nextent_count = 8\ntype = \"thin\"\nthin_pool = "
	             "\"pool\"\ntransaction_id = 0\ndevice_id = 1\n}\n}\n");
	lv_text(&sb, "lvol0_pmspare", 3, false, NULL, (const char *[]){"2:0"}, 1, 1);
	lv_text(&sb, "pool_tmeta", 4, false, NULL, (const char *[]){"1:0"}, 1, 1);
	lv_text(&sb, "pool_tdata", 5, false, NULL, (const char *[]){"0:0"}, 1, 4);
	vg = build_vg("vg0", 3, 8192, 3, sb.buf);
	sb_free(&sb);
	return vg;
}

static void test_split_thin_pool(void **state)
{
	struct ulvm_vg *src = thin_vg(), *dst = empty_vg("vg1");
	const char *data_only[] = {"/dev/vg0-pv0"}, *both[] = {"/dev/vg0-pv0", "/dev/vg0-pv1"};

	(void)state;
	assert_int_equal(vg_split_move(src, dst, data_only, 1, NULL), -EINVAL);
	assert_string_equal(err(), "Can't split pool data and metadata pool between two Volume "
	                           "Groups.");
	assert_int_equal(vg_split_move(src, dst, both, 2, NULL), 0);
	/* pool, thin1, pool_tmeta, pool_tdata go; the spare stays with its PV */
	assert_int_equal(dst->nlvs, 4);
	assert_true(ulvm_lv_is_thin_pool(find_lv(dst, "pool")));
	assert_ptr_equal(ulvm_thin_pool_of(dst, find_lv(dst, "thin1")), find_lv(dst, "pool"));
	assert_int_equal(src->nlvs, 1);
	assert_non_null(find_lv(src, "lvol0_pmspare"));
	vg_free(src);
	assert_vg_roundtrips(dst);
	vg_free(dst);
}

static void test_split_thin_by_pool_name(void **state)
{
	struct ulvm_vg *src = thin_vg(), *dst = empty_vg("vg1");

	(void)state;
	/* As LVM2 2.03: -n THIN and -n POOL move the PVs of the pool's data and metadata LVs
	 * (and the spare on them). */
	assert_int_equal(vg_split_move(src, dst, NULL, 0, "thin1"), 0);
	assert_int_equal(dst->npvs, 2);
	assert_int_equal(dst->nlvs, 4);
	assert_int_equal(src->nlvs, 1);
	vg_free(src);
	vg_free(dst);
	src = thin_vg();
	dst = empty_vg("vg1");
	assert_int_equal(vg_split_move(src, dst, NULL, 0, "pool"), 0);
	assert_int_equal(dst->nlvs, 4);
	vg_free(src);
	vg_free(dst);
}

/* ---- merge ------------------------------------------------------------------------------ */

static void test_merge_checks(void **state)
{
	struct ulvm_vg *to = plain_vg(), *from = snapshot_vg(),
	               *big = build_vg("vg8", 8, 16384, 1, NULL);

	(void)state;
	assert_int_equal(vg_merge_check(big, from), -EINVAL);
	assert_string_equal(err(), "Extent sizes differ: 16384 (vg8) and 8192 (vg0)");
	free(from->name);
	from->name = strdup("vg2");
	assert_int_equal(vg_merge_check(to, from), 0);
	to->max_pv = 5;
	assert_int_equal(vg_merge_check(to, from), -ENOSPC);
	assert_string_equal(err(), "Maximum number of physical volumes (5) exceeded  for \"vg0\" "
	                           "and \"vg2\"");
	to->max_pv = 0;
	to->max_lv = 6; /* 4 + 3 visible (the snapshot counts by its COW LV, snapshot0 not) */
	assert_int_equal(vg_merge_check(to, from), -ENOSPC);
	assert_string_equal(err(), "Maximum number of logical volumes (6) exceeded  for \"vg0\" "
	                           "and \"vg2\"");
	to->max_lv = 7;
	assert_int_equal(vg_merge_check(to, from), 0);
	free(from->lvs[2]->name); /* "other" */
	from->lvs[2]->name = strdup("c");
	assert_int_equal(vg_merge_check(to, from), -EEXIST);
	assert_string_equal(err(), "Duplicate logical volume name \"c\" in \"vg0\" and \"vg2\"");
	vg_free(to);
	vg_free(from);
	vg_free(big);
}

static void test_merge_moves_everything(void **state)
{
	struct ulvm_vg *to = plain_vg(), *from = snapshot_vg();
	char same_uuid[UUID_LEN];

	(void)state;
	free(from->name);
	from->name = strdup("vg2");
	/* an LV UUID both VGs have: the source's LV gets a new one */
	memcpy(from->lvs[2]->uuid, to->lvs[0]->uuid, UUID_LEN);
	memcpy(same_uuid, to->lvs[0]->uuid, UUID_LEN);
	assert_int_equal(vg_merge_check(to, from), 0);
	assert_int_equal(vg_merge_move(to, from), 0);
	assert_int_equal(from->npvs, 0);
	assert_int_equal(from->nlvs, 0);
	assert_int_equal(to->npvs, 6);
	for (size_t i = 0; i < to->npvs; i++) {
		char key[32];
		snprintf(key, sizeof(key), "pv%zu", i);
		assert_string_equal(to->pvs[i]->key, key);
	}
	assert_int_equal(to->nlvs, 8);
	assert_memory_equal(find_lv(to, "a")->uuid, same_uuid, UUID_LEN);
	assert_memory_not_equal(find_lv(to, "other")->uuid, same_uuid, UUID_LEN);
	vg_free(from);
	assert_vg_roundtrips(to);
	vg_free(to);
}

int main(void)
{
	char run[] = "/tmp/ulvm-test-vgsplit.XXXXXX";
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_split_lv_on_both_sides),
	    cmocka_unit_test(test_split_moves_lvs_with_their_pvs),
	    cmocka_unit_test(test_split_by_lv_name),
	    cmocka_unit_test(test_split_pv_not_in_vg),
	    cmocka_unit_test(test_split_needs_metadata_areas),
	    cmocka_unit_test(test_split_every_pv),
	    cmocka_unit_test(test_split_snapshot),
	    cmocka_unit_test(test_split_thin_pool),
	    cmocka_unit_test(test_split_thin_by_pool_name),
	    cmocka_unit_test(test_merge_checks),
	    cmocka_unit_test(test_merge_moves_everything),
	};
	int r;

	/* No LV is active: an empty runtime directory of our own. */
	if (!mkdtemp(run))
		return 1;
	setenv("ULVM_RUN_DIR", run, 1);
	r = cmocka_run_group_tests(tests, NULL, NULL);
	rmdir(run);
	return r;
}
