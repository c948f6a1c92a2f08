/* Unit tests for the segment types' table (lvm/segtype.h, lvm/seg_*.c): one VG holding a
 * segment of every type (linear, striped, stacked on pvmove's mirror, mirror, snapshot,
 * thin-pool, thin, raid1 and a type no module knows) is imported and written back byte for
 * byte, also after ulvm changed other LVs; every area of every segment counts for
 * allocation; the reports' view (ulvm_lv_info), activation lines and the devices each type
 * stacks on come from the modules; lvcreate --type goes through the table. */
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
#include "lvm/segtype.h"

/* ---- the VG ---------------------------------------------------------------------------- */

/* A raw metadata text as LVM2 and ulvm write it (visible LVs first). Extents on pv0: lin
 * 0-9, str 10-13, pvmove0's old leg 40-44, snap 50-51, pool_tmeta 52, pool_tdata 53-60,
 * lvol0_pmspare 61, r1_rmeta_0 62, r1_rimage_0 63-66; on pv1: str 0-3, pvmove0's new leg
 * 40-44, r1_rmeta_1 62, r1_rimage_1 63-66. */
static void lv_head(struct strbuf *sb, const char *name, int n, bool visible, unsigned nsegs)
{
	sb_printf(sb,
	          "\n%s {\nid = \"Lv%04d-aaaa-bbbb-cccc-dddd-eeee-ffffff\"\n"
	          "status = [\"READ\", \"WRITE\"%s]\nflags = []\ncreation_time = 1796001772\n"
	          "creation_host = \"vm\"\nsegment_count = %u\n",
	          name, n, visible ? ", \"VISIBLE\"" : "", nsegs);
}

static void seg_head(struct strbuf *sb, unsigned idx, unsigned start, unsigned count,
                     const char *type)
{
	sb_printf(sb, "%ssegment%u {\nstart_extent = %u\nextent_count = %u\n\ntype = \"%s\"\n",
	          idx == 1 ? "\n" : "", idx, start, count, type);
}

static void linear_lv(struct strbuf *sb, const char *name, int n, bool visible, const char *pv,
                      unsigned pe, unsigned count)
{
	lv_head(sb, name, n, visible, 1);
	seg_head(sb, 1, 0, count, "striped");
	sb_printf(sb, "stripe_count = 1\n\nstripes = [\n\"%s\", %u\n]\n}\n}\n", pv, pe);
}

/* The kept segments' bodies, as they must come back. (The parser keeps no blank lines, so
 * kept sections are written without the one LVM2 puts before "raids" and "mirrors".) */
static const char odd_body[] = "zeta = \"last\\\\first \\\"quoted\\\"\"\nratio = 0.25\n"
                               "devices = [\"pv0\", 7, \"lin\", 0]\nempty = []\n"
                               "nested {\nkey = -3\ninner {\nlist = [1, 2, 3]\n}\n}\n";
static const char pool_body[] = "metadata = \"pool_tmeta\"\npool = \"pool_tdata\"\n"
                                "transaction_id = 2\nchunk_size = 128\ndiscards = \"passdown\"\n"
                                "zero_new_blocks = 1\n";

static char *vg_text(void)
{
	struct strbuf sb;

	sb_init(&sb);
	sb_puts(&sb, "stvg {\nid = \"PMWMtQ-26oW-OmWr-JFhs-YdPN-VGTS-9QpAly\"\nseqno = 7\n"
	             "format = \"lvm2\"\nstatus = [\"RESIZEABLE\", \"READ\", \"WRITE\"]\n"
	             "flags = []\nextent_size = 8192\nmax_lv = 0\nmax_pv = 0\n"
	             "metadata_copies = 0\n\nphysical_volumes {\n");
	for (int i = 0; i < 2; i++)
		sb_printf(&sb,
		          "\npv%d {\nid = \"pvpv0%d-jQRQ-cnhZ-Dqp6-gfAc-rE3x-QqB7mb\"\n"
		          "device = \"/dev/pv%d\"\n\nstatus = [\"ALLOCATABLE\"]\nflags = []\n"
		          "dev_size = 821248\npe_start = 2048\npe_count = 100\n}\n",
		          i, i, i);
	sb_puts(&sb, "}\n\nlogical_volumes {\n");
	linear_lv(&sb, "lin", 1, true, "pv0", 0, 10);
	lv_head(&sb, "str", 2, true, 1);
	seg_head(&sb, 1, 0, 8, "striped");
	sb_puts(&sb,
	        "stripe_count = 2\nstripe_size = 128\n\nstripes = [\n\"pv0\", 10,\n\"pv1\", 0\n]\n"
	        "}\n}\n");
	lv_head(&sb, "moved", 3, true, 1);
	seg_head(&sb, 1, 0, 5, "striped");
	sb_puts(&sb, "stripe_count = 1\n\nstripes = [\n\"pvmove0\", 0\n]\n}\n}\n");
	lv_head(&sb, "pool", 4, true, 1);
	seg_head(&sb, 1, 0, 8, "thin-pool");
	sb_printf(&sb, "%s}\n}\n", pool_body);
	lv_head(&sb, "thin1", 5, true, 1);
	seg_head(&sb, 1, 0, 25, "thin");
	sb_puts(&sb, "thin_pool = \"pool\"\ntransaction_id = 0\ndevice_id = 1\n}\n}\n");
	lv_head(&sb, "r1", 7, true, 1);
	seg_head(&sb, 1, 0, 4, "raid1");
	sb_puts(&sb, "device_count = 2\nregion_size = 1024\nraids = [\n\"r1_rmeta_0\", "
	             "\"r1_rimage_0\",\n\"r1_rmeta_1\", \"r1_rimage_1\"\n]\n}\n}\n");
	lv_head(&sb, "odd", 8, true, 2);
	seg_head(&sb, 1, 0, 3, "frobnicate");
	sb_printf(&sb, "%s}\n", odd_body);
	seg_head(&sb, 2, 3, 1, "frobnicate");
	sb_puts(&sb, "}\n}\n");
	/* LVM2's order: a COW LV counts as visible, a snapshot LV never does. */
	linear_lv(&sb, "snap", 10, false, "pv0", 50, 2);
	lv_head(&sb, "snapshot0", 6, true, 1);
	seg_head(&sb, 1, 0, 10, "snapshot");
	sb_puts(&sb, "chunk_size = 8\norigin = \"lin\"\ncow_store = \"snap\"\n}\n}\n");
	lv_head(&sb, "pvmove0", 9, false, 1);
	seg_head(&sb, 1, 0, 5, "mirror");
	sb_puts(&sb,
	        "mirror_count = 2\nextents_moved = 2\nmirrors = [\n\"pv0\", 40,\n\"pv1\", 40\n]\n"
	        "}\n}\n");
	linear_lv(&sb, "pool_tmeta", 11, false, "pv0", 52, 1);
	linear_lv(&sb, "pool_tdata", 12, false, "pv0", 53, 8);
	linear_lv(&sb, "lvol0_pmspare", 13, false, "pv0", 61, 1);
	linear_lv(&sb, "r1_rmeta_0", 14, false, "pv0", 62, 1);
	linear_lv(&sb, "r1_rimage_0", 15, false, "pv0", 63, 4);
	linear_lv(&sb, "r1_rmeta_1", 16, false, "pv1", 62, 1);
	linear_lv(&sb, "r1_rimage_1", 17, false, "pv1", 63, 4);
	sb_puts(&sb, "}\n\n}\n\ncontents = \"Text Format Volume Group\"\nversion = 1\n\n"
	             "description = \"\"\n\ncreation_host = \"vm\"\ncreation_time = 1796001772\n");
	assert_false(sb.oom);
	return sb_steal(&sb);
}

static struct ulvm_vg *import_ok(const char *text)
{
	struct cfg_tree *tree = NULL;
	struct ulvm_vg *vg = NULL;
	int r = cfg_parse(text, strlen(text), "test", &tree);

	if (!r)
		r = vg_import(NULL, tree, "test", &vg);
	cfg_tree_free(tree);
	if (r)
		fail_msg("import failed (%d): %s", r, ulvm_last_error());
	return vg;
}

static struct ulvm_vg *the_vg(void)
{
	char *t = vg_text();
	struct ulvm_vg *vg = import_ok(t);

	free(t);
	return vg;
}

/* The VG section of a raw text: up to its closing brace (the header after it differs). */
static size_t vg_part(const char *text)
{
	const char *c = strstr(text, "contents = \"Text Format Volume Group\"");

	assert_non_null(c);
	while (c > text && c[-1] != '}')
		c--;
	return (size_t)(c - text);
}

static char *export_raw(const struct ulvm_vg *vg)
{
	char *text = NULL;
	size_t len = 0;
	int r = vg_export(vg, false, "", &text, &len);

	if (r)
		fail_msg("export failed (%d): %s", r, ulvm_last_error());
	return text;
}

static void assert_same_vg_section(const char *want, const char *got)
{
	size_t n = vg_part(want);

	if (vg_part(got) != n || memcmp(want, got, n)) {
		size_t i = 0;
		while (i < n && want[i] == got[i])
			i++;
		fail_msg("VG sections differ at byte %zu:\nwant: %.80s\ngot:  %.80s", i, want + i,
		         got + i);
	}
}

/* The text of LV `name`'s section in a raw text (malloc'd). */
static char *lv_section(const char *text, const char *name)
{
	char pat[128];
	const char *a, *p;
	int depth = 0;

	snprintf(pat, sizeof(pat), "\n%s {\n", name);
	assert_non_null(a = strstr(text, pat));
	for (p = a + strlen(pat) - 1; *p; p++) {
		if (*p == '{')
			depth++;
		else if (*p == '}' && --depth == 0)
			break;
	}
	return strndup(a, (size_t)(p - a + 1));
}

/* ---- tests --------------------------------------------------------------------------------- */

static void test_table(void **state)
{
	struct ulvm_lv_params p = {.stripes = 3};

	(void)state;
	assert_ptr_equal(segtype_find("striped"), &segtype_striped);
	assert_ptr_equal(segtype_find("mirror"), &segtype_mirror);
	assert_ptr_equal(segtype_find("snapshot"), &segtype_snapshot);
	assert_ptr_equal(segtype_find("thin-pool"), &segtype_thin_pool);
	assert_ptr_equal(segtype_find("thin"), &segtype_thin);
	assert_ptr_equal(segtype_find("raid1"), &segtype_raid);
	assert_ptr_equal(segtype_find("raid5_ls"), &segtype_raid);
	assert_ptr_equal(segtype_find("frobnicate"), &segtype_kept);
	assert_ptr_equal(segtype_find("stripe"), &segtype_kept);
	assert_ptr_equal(segtype_find(""), &segtype_kept);
	/* only linear and striped can be created, and linear is one stripe */
	assert_int_equal(ulvm_lv_params_set_type(&p, "striped"), 0);
	assert_int_equal(p.stripes, 3);
	assert_int_equal(ulvm_lv_params_set_type(&p, "linear"), 0);
	assert_int_equal(p.stripes, 1);
	assert_int_equal(ulvm_lv_params_set_type(&p, "thin"), -EOPNOTSUPP);
	assert_non_null(strstr(ulvm_last_error(), "type thin"));
	assert_int_equal(ulvm_lv_params_set_type(&p, "frobnicate"), -EOPNOTSUPP);
}

/* Every type imports to its module and comes back byte for byte, in both forms. */
static void test_round_trip_each_type(void **state)
{
	static const struct {
		const char *lv, *type;
		const struct ulvm_segtype *st;
	} want[] = {
	    {"lin", "linear", &segtype_striped},    {"str", "striped", &segtype_striped},
	    {"moved", "linear", &segtype_striped},  {"pool", "thin-pool", &segtype_thin_pool},
	    {"thin1", "thin", &segtype_thin},       {"snapshot0", "snapshot", &segtype_snapshot},
	    {"r1", "raid1", &segtype_raid},         {"odd", "frobnicate", &segtype_kept},
	    {"pvmove0", "mirror", &segtype_mirror},
	};
	char *text = vg_text(), *out, *file = NULL;
	struct ulvm_vg *vg = import_ok(text), *again;
	size_t len;

	(void)state;
	for (size_t i = 0; i < ARRAY_SIZE(want); i++) {
		struct ulvm_lv *lv = ulvm_lv_find(vg, want[i].lv);
		assert_non_null(lv);
		assert_ptr_equal(lv->segs[0].segtype, want[i].st);
		assert_string_equal(ulvm_seg_type(&lv->segs[0]), want[i].type);
		assert_string_equal(ulvm_lv_segtype(lv), want[i].type);
	}
	out = export_raw(vg);
	assert_same_vg_section(text, out);
	free(out);
	/* the file form (comments, indentation) reads back into the same VG */
	assert_int_equal(vg_export(vg, true, "test", &file, &len), 0);
	again = import_ok(file);
	out = export_raw(again);
	assert_same_vg_section(text, out);
	free(out);
	free(file);
	vg_free(again);
	vg_free(vg);
	free(text);
}

/* A type no module knows keeps every key, nested section, float, escape and empty array in
 * its order, also after ulvm changes other LVs; so do the read-only modules' types. */
static void test_unknown_kept_byte_identical(void **state)
{
	static const char *const kept[] = {"odd", "pool", "thin1", "snapshot0", "r1", "pvmove0"};
	char *text = vg_text(), *out;
	struct ulvm_vg *vg = import_ok(text);
	struct ulvm_lv *odd = ulvm_lv_find(vg, "odd"), *str = ulvm_lv_find(vg, "str");
	struct ulvm_lv_params p = {.name = "new", .extents = 7};
	struct ulvm_lv *nl;

	(void)state;
	assert_non_null(odd);
	assert_int_equal(odd->nsegs, 2);
	assert_null(odd->segs[0].areas); /* a kept type's arrays are not areas */
	assert_null(odd->segs[1].extra); /* a segment with only the common keys */
	assert_int_equal(ulvm_lv_create(vg, &p, &nl), 0);
	assert_int_equal(ulvm_lv_resize(vg, str, 12, NULL), 0);
	out = export_raw(vg);
	for (size_t i = 0; i < ARRAY_SIZE(kept); i++) {
		char *a = lv_section(text, kept[i]), *b = lv_section(out, kept[i]);
		assert_string_equal(a, b);
		free(a);
		free(b);
	}
	assert_non_null(strstr(out, odd_body));
	assert_non_null(strstr(out, pool_body));
	free(out);
	/* the kept types cannot be changed by ulvm */
	assert_int_equal(ulvm_lv_resize(vg, odd, 10, NULL), -EOPNOTSUPP);
	assert_int_equal(ulvm_lv_remove(vg, ulvm_lv_find(vg, "pool")), -EOPNOTSUPP);
	assert_int_equal(ulvm_lv_rename(vg, ulvm_lv_find(vg, "r1"), "r2"), -EOPNOTSUPP);
	vg_free(vg);
	free(text);
}

/* Whether extent `pe` of `pv` is in an area of any segment of any LV but `skip`. */
static const struct ulvm_lv *owner_of(const struct ulvm_vg *vg, const struct ulvm_pv *pv,
                                      uint32_t pe, const struct ulvm_lv *skip)
{
	for (size_t i = 0; i < vg->nlvs; i++)
		for (size_t s = 0; vg->lvs[i] != skip && s < vg->lvs[i]->nsegs; s++) {
			const struct ulvm_seg *seg = &vg->lvs[i]->segs[s];
			for (uint32_t a = 0; a < seg->area_count; a++)
				if (seg->areas[a].type == ULVM_AREA_PV && seg->areas[a].pv == pv &&
				    pe >= seg->areas[a].pe &&
				    pe < seg->areas[a].pe + ulvm_seg_area_len(seg))
					return vg->lvs[i];
		}
	return NULL;
}

/* Allocation sees every area of every segment: pvmove's mirror legs too. */
static void test_allocation_sees_every_area(void **state)
{
	struct ulvm_vg *vg = the_vg();
	struct ulvm_lv *pvmove = ulvm_lv_find(vg, "pvmove0"), *pool = ulvm_lv_find(vg, "pool");
	struct ulvm_lv *big;
	struct pe_range *fr;
	size_t n;
	/* pv0: 10+4+5+2+1+8+1+1+4, pv1: 4+5+1+4 */
	struct ulvm_lv_params p = {.name = "big", .extents = 200 - 36 - 14};

	(void)state;
	assert_int_equal(pvmove->segs[0].area_count, 2);
	assert_int_equal(ulvm_seg_area_len(&pvmove->segs[0]), 5);
	assert_int_equal(pvmove->segs[0].areas[1].type, ULVM_AREA_PV);
	assert_ptr_equal(pvmove->segs[0].areas[1].pv, vg->pvs[1]);
	assert_int_equal(pvmove->segs[0].areas[1].pe, 40);
	/* a thin pool's area is its data LV, whose own segment holds the extents */
	assert_int_equal(pool->segs[0].area_count, 1);
	assert_int_equal(pool->segs[0].areas[0].type, ULVM_AREA_LV);
	assert_string_equal(pool->segs[0].areas[0].lv_name, "pool_tdata");
	assert_int_equal(vg->pvs[0]->pe_alloc_count, 36);
	assert_int_equal(vg->pvs[1]->pe_alloc_count, 14);
	assert_int_equal(pv_free_ranges(vg, vg->pvs[1], &fr, &n), 0);
	assert_int_equal(n, 3);
	assert_int_equal(fr[0].start, 4);
	assert_int_equal(fr[0].count, 36);
	assert_int_equal(fr[1].start, 45);
	assert_int_equal(fr[1].count, 17);
	free(fr);
	/* every free extent, and none of any area */
	assert_int_equal(ulvm_lv_create(vg, &p, &big), 0);
	assert_int_equal(ulvm_vg_free_extents(vg), 0);
	for (size_t s = 0; s < big->nsegs; s++) {
		const struct ulvm_seg *seg = &big->segs[s];
		for (uint32_t e = 0; e < seg->extent_count; e++) {
			const struct ulvm_lv *o =
			    owner_of(vg, seg->areas[0].pv, seg->areas[0].pe + e, big);
			if (o)
				fail_msg("big got extent %u of %s, which %s uses",
				         seg->areas[0].pe + e, seg->areas[0].pv->key, o->name);
		}
	}
	vg_free(vg);
}

/* A mirror leg over extents another LV uses is refused, as LVM2 refuses it. */
static void test_mirror_overlap_refused(void **state)
{
	char *text = vg_text(), *at = strstr(text, "\"pv1\", 40");
	struct cfg_tree *tree = NULL;
	struct ulvm_vg *vg = NULL;

	(void)state;
	assert_non_null(at);
	memcpy(at, "\"pv1\", 62", 9); /* r1_rmeta_1's extent */
	assert_int_equal(cfg_parse(text, strlen(text), "test", &tree), 0);
	assert_int_equal(vg_import(NULL, tree, "test", &vg), -EINVAL);
	assert_non_null(strstr(ulvm_last_error(), "allocated twice"));
	cfg_tree_free(tree);
	free(text);
}

static void check_info(const struct ulvm_vg *vg, const char *name, char role, char target,
                       const char *layout, const char *origin, const char *pool, bool zero)
{
	struct ulvm_lv_info info;

	ulvm_lv_info(vg, ulvm_lv_find((struct ulvm_vg *)vg, name), &info);
	if (info.role != role || info.target != target || strcmp(info.layout, layout) ||
	    info.zero != zero ||
	    (origin ? !info.origin || strcmp(origin, info.origin) : !!info.origin) ||
	    (pool ? !info.pool_lv || strcmp(pool, info.pool_lv) : !!info.pool_lv))
		fail_msg("%s: role %c target %c layout %s origin %s pool %s zero %d", name,
		         info.role, info.target, info.layout, info.origin ? info.origin : "-",
		         info.pool_lv ? info.pool_lv : "-", info.zero);
}

/* What the reports show comes from the modules. */
static void test_lv_info(void **state)
{
	struct ulvm_vg *vg = the_vg();
	struct ulvm_lv_info info;

	(void)state;
	check_info(vg, "lin", 'o', 's', "linear", NULL, NULL, false);
	check_info(vg, "snap", 's', 's', "linear", "lin", NULL, false);
	check_info(vg, "snapshot0", '-', 's', "snapshot", "lin", NULL, false);
	check_info(vg, "str", '-', '-', "striped", NULL, NULL, false);
	check_info(vg, "pool", 't', 't', "thin,pool", NULL, NULL, true);
	check_info(vg, "thin1", 'V', 't', "thin,sparse", NULL, "pool", true);
	check_info(vg, "pool_tmeta", 'e', '-', "linear", NULL, NULL, false);
	check_info(vg, "lvol0_pmspare", 'e', '-', "linear", NULL, NULL, false);
	check_info(vg, "pool_tdata", 'T', '-', "linear", NULL, NULL, false);
	check_info(vg, "r1", 'r', 'r', "raid1", NULL, NULL, false);
	check_info(vg, "pvmove0", 'm', 'm', "mirror", NULL, NULL, false);
	check_info(vg, "odd", '-', '-', "frobnicate", NULL, NULL, false);
	ulvm_lv_info(vg, ulvm_lv_find(vg, "snap"), &info);
	assert_true(info.snapshot_cow);
	assert_false(info.snapshot);
	ulvm_lv_info(vg, ulvm_lv_find(vg, "snapshot0"), &info);
	assert_true(info.snapshot);
	/* removing the snapshot ends the relations */
	ulvm_lv_find(vg, "snapshot0")->segs[0].segtype = &segtype_striped; /* not a snapshot now */
	vg_update_derived(vg);
	check_info(vg, "lin", '-', '-', "linear", NULL, NULL, false);
	check_info(vg, "snap", '-', '-', "linear", NULL, NULL, false);
	ulvm_lv_find(vg, "snapshot0")->segs[0].segtype = &segtype_snapshot;
	vg_free(vg);
}

struct lowers {
	char names[8][64];
	size_t n;
};

static int collect(void *arg, const struct ulvm_lv *lower, const char *layer)
{
	struct lowers *l = arg;

	assert_true(l->n < 8);
	snprintf(l->names[l->n++], sizeof(l->names[0]), "%s%s%s", lower->name, layer ? "-" : "",
	         layer ? layer : "");
	return 0;
}

/* Activation: table lines from the modules, and the devices each type stacks on. */
static void test_activation(void **state)
{
	struct ulvm_vg *vg = the_vg();
	struct lowers l = {0};
	char *table = NULL;

	(void)state;
	for (size_t i = 0; i < vg->npvs; i++) {
		char path[64];
		snprintf(path, sizeof(path), "/nonexistent/pv%zu", i);
		vg->pvs[i]->device = strdup(path);
	}
	/* "lin" is snapshot0's origin, "snap" its COW LV: LVM2's stack. */
	assert_int_equal(ulvm_lv_table(vg, ulvm_lv_find(vg, "lin"), &table), 0);
	assert_string_equal(table, "0 81920 snapshot-origin stvg-lin-real\n");
	free(table);
	assert_int_equal(ulvm_lv_table(vg, ulvm_lv_find(vg, "snap"), &table), 0);
	assert_string_equal(table, "0 81920 snapshot stvg-lin-real stvg-snap-cow P 8\n");
	free(table);
	{
		struct ulvm_lv_layer *ly;
		size_t n;
		static const char *const names[] = {"stvg-lin-real", "stvg-snap-cow", "stvg-snap",
		                                    "stvg-lin"};
		/* activating either activates the whole stack, in LVM2's resume order */
		for (int which = 0; which < 2; which++) {
			assert_int_equal(
			    ulvm_lv_layers(vg, ulvm_lv_find(vg, which ? "snap" : "lin"), &ly, &n),
			    0);
			assert_int_equal(n, 4);
			for (size_t i = 0; i < n; i++)
				assert_string_equal(ly[i].name, names[i]);
			assert_string_equal(ly[0].table, "0 81920 linear /nonexistent/pv0 2048\n");
			assert_string_equal(ly[1].table,
			                    "0 16384 linear /nonexistent/pv0 411648\n");
			assert_non_null(strstr(ly[0].uuid, "-real"));
			assert_non_null(strstr(ly[1].uuid, "-cow"));
			ulvm_lv_layers_free(ly, n);
		}
	}
	assert_int_equal(ulvm_lv_table(vg, ulvm_lv_find(vg, "str"), &table), 0);
	assert_string_equal(table, "0 65536 striped 2 128 /nonexistent/pv0 83968 "
	                           "/nonexistent/pv1 2048\n");
	free(table);
	/* An LV stacked on pvmove0 names its device; pvmove0 without PVMOVE in its status is
	 * an old-style mirror, which ulvm does not activate. */
	assert_int_equal(ulvm_lv_table(vg, ulvm_lv_find(vg, "moved"), &table), 0);
	assert_string_equal(table, "0 40960 linear stvg-pvmove0 0\n");
	free(table);
	assert_int_equal(ulvm_lv_table(vg, ulvm_lv_find(vg, "pvmove0"), &table), -EOPNOTSUPP);
	assert_null(table);
	/* A pool with thin LVs: its own device is a linear over the "-tpool" layer. */
	assert_int_equal(ulvm_lv_table(vg, ulvm_lv_find(vg, "pool"), &table), 0);
	assert_string_equal(table, "0 65536 linear stvg-pool-tpool 0\n");
	free(table);
	assert_int_equal(ulvm_lv_table(vg, ulvm_lv_find(vg, "thin1"), &table), 0);
	assert_string_equal(table, "0 204800 thin stvg-pool-tpool 1\n");
	free(table);
	assert_int_equal(ulvm_lv_table(vg, ulvm_lv_find(vg, "odd"), &table), -EOPNOTSUPP);
	assert_non_null(strstr(ulvm_last_error(), "cannot activate frobnicate segments yet"));

	assert_int_equal(lv_lower_devices(vg, ulvm_lv_find(vg, "lin"), collect, &l), 0);
	assert_int_equal(l.n, 0);
	assert_int_equal(lv_lower_devices(vg, ulvm_lv_find(vg, "snapshot0"), collect, &l), 0);
	assert_int_equal(l.n, 2);
	assert_string_equal(l.names[0], "lin-real");
	assert_string_equal(l.names[1], "snap-cow");
	l.n = 0;
	assert_int_equal(lv_lower_devices(vg, ulvm_lv_find(vg, "pool"), collect, &l), 0);
	assert_int_equal(l.n, 2);
	assert_string_equal(l.names[0], "pool_tmeta");
	assert_string_equal(l.names[1], "pool_tdata");
	l.n = 0;
	assert_int_equal(lv_lower_devices(vg, ulvm_lv_find(vg, "thin1"), collect, &l), 0);
	assert_int_equal(l.n, 1);
	assert_string_equal(l.names[0], "pool-tpool");
	vg_free(vg);
}

/* Snapshot status lines, LVM2's percentages, and the operations on the model. */
static void test_snapshot_ops(void **state)
{
	struct ulvm_vg *vg = the_vg();
	struct ulvm_snapshot_status st;
	struct ulvm_snapshot sn;
	struct ulvm_lv_params p = {.name = "c2", .extents = 2};
	struct ulvm_lv *cow, *str;
	uint64_t ext = 100;
	char *table;

	(void)state;
	assert_int_equal(ulvm_snapshot_status_parse("120/16384 16", &st), 0);
	assert_int_equal(st.used, 120);
	assert_int_equal(ulvm_snapshot_percent(&st), 73); /* lvm2: 0.73 */
	assert_int_equal(ulvm_snapshot_status_parse("16/16384 16", &st), 0);
	assert_int_equal(ulvm_snapshot_percent(&st), 0); /* only metadata: 0.00 */
	assert_int_equal(ulvm_snapshot_status_parse("384/16384 256", &st), 0);
	assert_int_equal(ulvm_snapshot_percent(&st), 234);
	assert_int_equal(ulvm_snapshot_status_parse("16383/16384 16", &st), 0);
	assert_int_equal(ulvm_snapshot_percent(&st), 9999); /* never 100.00 unless full */
	assert_int_equal(ulvm_snapshot_status_parse("Invalid", &st), 0);
	assert_true(st.invalid);
	assert_int_equal(ulvm_snapshot_percent(&st), 10000);
	assert_int_equal(ulvm_snapshot_status_parse("Merge failed", &st), 0);
	assert_true(st.merge_failed);
	assert_int_equal(ulvm_snapshot_status_parse("12/x", &st), -EINVAL);

	for (size_t i = 0; i < vg->npvs; i++)
		vg->pvs[i]->device = strdup("/nonexistent/pv");
	str = ulvm_lv_find(vg, "str");
	/* checks: chunk sizes, snapshots of snapshots, the COW cut to what the origin fills */
	assert_int_equal(ulvm_lv_snapshot_check(vg, str, 12, &ext), -EINVAL);
	assert_int_equal(ulvm_lv_snapshot_check(vg, str, 2048, &ext), -EINVAL);
	assert_int_equal(ulvm_lv_snapshot_check(vg, ulvm_lv_find(vg, "snap"), 8, &ext), -EINVAL);
	assert_int_equal(ulvm_lv_snapshot_check(vg, str, 8, &ext), 0);
	assert_int_equal(ext, 9); /* 32 MiB origin, 4k chunks: 65536+8+128 sectors -> 9 extents */
	assert_int_equal(ulvm_lv_create(vg, &p, &cow), 0);
	assert_true(ulvm_lv_visible(cow));
	assert_int_equal(ulvm_lv_snapshot_create(vg, str, cow, 16), 0);
	assert_false(ulvm_lv_visible(cow));
	assert_true(ulvm_lv_snapshot(vg, cow, &sn));
	assert_ptr_equal(sn.origin, str);
	assert_ptr_equal(sn.cow, cow);
	assert_int_equal(sn.chunk_size, 16);
	assert_string_equal(sn.snap->name, "snapshot1");
	assert_false(ulvm_lv_visible(sn.snap)); /* VISIBLE in its status, never visible */
	assert_true(ulvm_strlist_has(&sn.snap->status, "VISIBLE"));
	assert_int_equal(ulvm_lv_snapshots(vg, str, NULL, 0), 1);
	assert_int_equal(ulvm_lv_remove(vg, str), -EBUSY); /* its snapshot first */
	/* merge: merging_store, the snapshot LV loses VISIBLE, the origin gets snapshot-merge */
	assert_int_equal(ulvm_lv_snapshot_merge(vg, cow), 0);
	assert_true(ulvm_lv_snapshot(vg, cow, &sn));
	assert_true(sn.merging);
	assert_false(ulvm_strlist_has(&sn.snap->status, "VISIBLE"));
	assert_int_equal(ulvm_lv_snapshot_merge(vg, cow), -EBUSY);
	assert_int_equal(ulvm_lv_table(vg, str, &table), 0);
	assert_string_equal(table, "0 65536 snapshot-merge stvg-str-real stvg-c2-cow P 16\n");
	free(table);
	assert_int_equal(ulvm_lv_table(vg, cow, &table), 0);
	assert_string_equal(table, "0 65536 error\n");
	free(table);
	/* removing the COW LV removes the snapshot */
	assert_int_equal(ulvm_lv_remove(vg, cow), 0);
	assert_null(ulvm_lv_find(vg, "c2"));
	assert_null(ulvm_lv_find(vg, "snapshot1"));
	assert_int_equal(ulvm_lv_snapshots(vg, str, NULL, 0), 0);
	assert_int_equal(ulvm_lv_table(vg, str, &table), 0);
	assert_string_equal(table,
	                    "0 65536 striped 2 128 /nonexistent/pv 83968 /nonexistent/pv 2048\n");
	free(table);
	vg_free(vg);
}

/* lvrename follows LVM2: references in snapshot and thin segments follow the new name, a
 * pool's sub-LVs take its new prefix, hidden LVs and names in use are refused, and an LV a
 * kept type names is refused and left as it was. */
static void test_rename_follows(void **state)
{
	struct ulvm_vg *vg = the_vg();
	struct ulvm_lv *lin = ulvm_lv_find(vg, "lin"), *pool = ulvm_lv_find(vg, "pool");
	struct ulvm_lv *snap0 = ulvm_lv_find(vg, "snapshot0");
	struct ulvm_snapshot sn;

	(void)state;
	assert_int_equal(ulvm_lv_rename(vg, lin, "lin2"), -EOPNOTSUPP); /* "odd" names it */
	assert_string_equal(lin->name, "lin");
	assert_string_equal(kept_str(&snap0->segs[0], "origin"), "lin");
	assert_int_equal(ulvm_lv_rename(vg, ulvm_lv_find(vg, "snap"), "snap2"), 0);
	assert_string_equal(kept_str(&snap0->segs[0], "cow_store"), "snap2");
	assert_true(ulvm_lv_snapshot(vg, ulvm_lv_find(vg, "snap2"), &sn));
	assert_ptr_equal(sn.origin, lin);
	assert_int_equal(ulvm_lv_rename(vg, snap0, "x"), -EPERM);
	assert_int_equal(ulvm_lv_rename(vg, ulvm_lv_find(vg, "pool_tdata"), "x"), -EPERM);
	assert_int_equal(ulvm_lv_rename(vg, pool, "str"), -EEXIST);
	assert_int_equal(ulvm_lv_rename(vg, pool, "tp"), 0);
	assert_null(ulvm_lv_find(vg, "pool_tdata"));
	assert_non_null(ulvm_lv_find(vg, "tp_tdata"));
	assert_non_null(ulvm_lv_find(vg, "tp_tmeta"));
	assert_string_equal(kept_str(&pool->segs[0], "pool"), "tp_tdata");
	assert_string_equal(kept_str(&pool->segs[0], "metadata"), "tp_tmeta");
	assert_string_equal(kept_str(&ulvm_lv_find(vg, "thin1")->segs[0], "thin_pool"), "tp");
	assert_ptr_equal(ulvm_thin_pool_of(vg, ulvm_lv_find(vg, "thin1")), pool);
	assert_int_equal(ulvm_lv_rename(vg, ulvm_lv_find(vg, "thin1"), "thin2"), 0);
	vg_free(vg);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_table),
	    cmocka_unit_test(test_round_trip_each_type),
	    cmocka_unit_test(test_unknown_kept_byte_identical),
	    cmocka_unit_test(test_allocation_sees_every_area),
	    cmocka_unit_test(test_mirror_overlap_refused),
	    cmocka_unit_test(test_lv_info),
	    cmocka_unit_test(test_activation),
	    cmocka_unit_test(test_snapshot_ops),
	    cmocka_unit_test(test_rename_follows),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
