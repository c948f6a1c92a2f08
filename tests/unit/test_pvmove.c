/* Unit tests for lvm/pvmove: the metadata a move goes through, on in-memory VGs imported from
 * small texts (no devices, no commits): the pvmove LV and its mirror segments as LVM2 2.03
 * writes them (status words and their order, allocation_policy, one segment per moved area
 * in LV order, legs old then new, extents_moved, region_size), the moved LVs' areas and
 * LOCKED, PE ranges splitting segments, a striped LV's stripe, new extents split across
 * free ranges, the region size for small extents, finishing and aborting (which leg each
 * segment keeps; adjacent segments merged), the text written and read back, and refusals. */
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

/* VG "mv" (extent size `es` sectors) with PVs pv0..pv<n-1> of `pe` extents each (devices
 * /dev/pvN) and the LVs' text `lvs` (their sections, without the logical_volumes braces). */
static struct ulvm_vg *vg_from(uint32_t es, unsigned n, uint32_t pe, const char *lvs)
{
	struct strbuf sb;
	struct cfg_tree *tree = NULL;
	struct ulvm_vg *vg = NULL;

	sb_init(&sb);
	sb_printf(&sb,
	          "mv {\nid = \"vgvgvg-aaaa-bbbb-cccc-dddd-eeee-ffffff\"\nseqno = 1\n"
	          "format = \"lvm2\"\nstatus = [\"RESIZEABLE\", \"READ\", \"WRITE\"]\nflags = []\n"
	          "extent_size = %u\nmax_lv = 0\nmax_pv = 0\nmetadata_copies = 0\n"
	          "physical_volumes {\n",
	          es);
	for (unsigned i = 0; i < n; i++)
		sb_printf(&sb,
		          "pv%u {\nid = \"pv%04u-aaaa-bbbb-cccc-dddd-eeee-ffffff\"\n"
		          "device = \"/dev/pv%u\"\nstatus = [\"ALLOCATABLE\"]\nflags = []\n"
		          "dev_size = %llu\npe_start = 2048\npe_count = %u\n}\n",
		          i, i, i, (unsigned long long)pe * es + 2048, pe);
	sb_printf(&sb,
	          "}\nlogical_volumes {\n%s}\n}\ncontents = \"Text Format Volume Group\"\n"
	          "version = 1\n",
	          lvs);
	assert_false(sb.oom);
	if (cfg_parse(sb.buf, sb.len, "vg_from", &tree) || vg_import(NULL, tree, "vg_from", &vg))
		fail_msg("vg_from: %s\n%s", ulvm_last_error(), sb.buf);
	cfg_tree_free(tree);
	sb_free(&sb);
	for (size_t i = 0; i < vg->npvs; i++)
		assert_non_null(vg->pvs[i]->device = strdup(vg->pvs[i]->device_hint));
	return vg;
}

/* A linear LV's text: segments "P@E+C,..." on pvP from PE E, C extents, in LE order. */
static void lv_text(struct strbuf *sb, const char *name, const char *segs)
{
	static unsigned lvno;
	char *s = strdup(segs), *save = NULL;
	unsigned n = 0, le = 0, pv, pe, count;
	struct strbuf body;

	assert_non_null(s);
	sb_init(&body);
	for (char *t = strtok_r(s, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
		assert_int_equal(sscanf(t, "%u@%u+%u", &pv, &pe, &count), 3);
		sb_printf(&body,
		          "segment%u {\nstart_extent = %u\nextent_count = %u\ntype = \"striped\"\n"
		          "stripe_count = 1\nstripes = [\"pv%u\", %u]\n}\n",
		          ++n, le, count, pv, pe);
		le += count;
	}
	sb_printf(sb,
	          "%s {\nid = \"lv%04u-aaaa-bbbb-cccc-dddd-eeee-ffffff\"\n"
	          "status = [\"READ\", \"WRITE\", \"VISIBLE\"]\nflags = []\n"
	          "creation_time = 1700000000\ncreation_host = \"t\"\nsegment_count = %u\n%s}\n",
	          name, lvno++, n, body.buf ? body.buf : "");
	sb_free(&body);
	free(s);
}

static struct ulvm_vg *vg_linear(uint32_t es, unsigned n, uint32_t pe, const char *spec)
{
	/* spec: "name=segs name=segs" */
	char *s = strdup(spec), *save = NULL;
	struct strbuf sb;
	struct ulvm_vg *vg;

	assert_non_null(s);
	sb_init(&sb);
	for (char *t = strtok_r(s, " ", &save); t; t = strtok_r(NULL, " ", &save)) {
		char *eq = strchr(t, '=');
		assert_non_null(eq);
		*eq = 0;
		lv_text(&sb, t, eq + 1);
	}
	vg = vg_from(es, n, pe, sb.buf ? sb.buf : "");
	sb_free(&sb);
	free(s);
	return vg;
}

static void check_status(const struct ulvm_lv *lv, const char *want)
{
	struct strbuf sb;

	sb_init(&sb);
	for (size_t i = 0; i < lv->status.n; i++)
		sb_printf(&sb, "%s%s", i ? "," : "", lv->status.v[i]);
	assert_string_equal(sb.buf ? sb.buf : "", want);
	sb_free(&sb);
}

static int64_t kept(const struct ulvm_seg *seg, const char *key)
{
	int64_t v = -1;

	assert_true(kept_int(seg, key, &v));
	return v;
}

/* Segment s of the pvmove LV: le, count, old leg pvA@a, new leg pvB@b, moved. */
static void check_mseg(const struct ulvm_lv *m, size_t s, uint32_t le, uint32_t count, unsigned pa,
                       uint32_t a, unsigned pb, uint32_t b, int64_t moved)
{
	const struct ulvm_seg *seg;
	char k[8];

	assert_true(s < m->nsegs);
	seg = &m->segs[s];
	assert_string_equal(seg->type, "mirror");
	assert_int_equal(seg->start_extent, le);
	assert_int_equal(seg->extent_count, count);
	assert_int_equal(seg->area_count, 2);
	snprintf(k, sizeof(k), "pv%u", pa);
	assert_string_equal(seg->areas[0].pv->key, k);
	assert_int_equal(seg->areas[0].pe, a);
	snprintf(k, sizeof(k), "pv%u", pb);
	assert_string_equal(seg->areas[1].pv->key, k);
	assert_int_equal(seg->areas[1].pe, b);
	assert_int_equal(kept(seg, "mirror_count"), 2);
	assert_int_equal(kept(seg, "extents_moved"), moved);
}

/* Segment s of a linear LV: le, count, on LV `on` at LE e (on NULL: on pvP at PE e). */
static void check_lseg(const struct ulvm_lv *lv, size_t s, uint32_t le, uint32_t count,
                       const char *on, unsigned p, uint32_t e)
{
	const struct ulvm_seg *seg;

	assert_true(s < lv->nsegs);
	seg = &lv->segs[s];
	assert_string_equal(seg->type, "striped");
	assert_int_equal(seg->start_extent, le);
	assert_int_equal(seg->extent_count, count);
	if (on) {
		assert_int_equal(seg->areas[0].type, ULVM_AREA_LV);
		assert_string_equal(seg->areas[0].lv_name, on);
	} else {
		char k[8];
		snprintf(k, sizeof(k), "pv%u", p);
		assert_int_equal(seg->areas[0].type, ULVM_AREA_PV);
		assert_string_equal(seg->areas[0].pv->key, k);
	}
	assert_int_equal(seg->areas[0].pe, e);
}

static struct ulvm_lv *plan_ok(struct ulvm_vg *vg, const char *src, const char *const *dests,
                               size_t nd, const char *lv, enum ulvm_alloc_policy alloc)
{
	struct ulvm_pvmove_opts o = {.lv_name = lv, .alloc = alloc, .dests = dests, .ndests = nd};
	struct ulvm_lv *m = NULL;

	if (pvmove_plan(vg, src, &o, &m))
		fail_msg("pvmove_plan %s: %s", src, ulvm_last_error());
	assert_non_null(m);
	return m;
}

static void plan_fails(struct ulvm_vg *vg, const char *src, const char *dest, int err,
                       const char *msg)
{
	struct ulvm_pvmove_opts o = {.dests = dest ? &dest : NULL, .ndests = dest ? 1 : 0};
	struct ulvm_lv *m = NULL;

	if (pvmove_plan(vg, src, &o, &m) != err)
		fail_msg("pvmove %s %s: not refused with %d (%s)", src, dest ? dest : "", err,
		         ulvm_last_error());
	assert_string_equal(ulvm_last_error(), msg);
}

/* Everything off pv0: segments per moved area in LV order, legs, LOCKED, the text. */
static void test_setup_layout(void **state)
{
	struct ulvm_vg *vg = vg_linear(8192, 2, 10, "a=0@0+3,0@5+2 b=0@3+2 c=1@9+1");
	struct ulvm_lv *m, *a = ulvm_lv_find(vg, "a"), *b = ulvm_lv_find(vg, "b");
	char *text = NULL;
	size_t len;

	(void)state;
	m = plan_ok(vg, "/dev/pv0", NULL, 0, NULL, ULVM_ALLOC_NORMAL);
	assert_string_equal(m->name, "pvmove0");
	assert_ptr_equal(vg->lvs[vg->nlvs - 1], m);
	check_status(m, "READ,WRITE,PVMOVE,LOCKED");
	check_status(a, "READ,WRITE,VISIBLE,LOCKED");
	check_status(b, "READ,WRITE,VISIBLE,LOCKED");
	check_status(ulvm_lv_find(vg, "c"), "READ,WRITE,VISIBLE");
	assert_false(ulvm_lv_visible(m));
	assert_int_equal(m->nsegs, 3);
	assert_int_equal(m->le_count, 7);
	/* pv1 has 0-8 free: the new extents follow one another there. */
	check_mseg(m, 0, 0, 3, 0, 0, 1, 0, 0);
	check_mseg(m, 1, 3, 2, 0, 5, 1, 3, 0);
	check_mseg(m, 2, 5, 2, 0, 3, 1, 5, 0);
	assert_int_equal(kept(&m->segs[0], "region_size"), 4096);
	check_lseg(a, 0, 0, 3, "pvmove0", 0, 0);
	check_lseg(a, 1, 3, 2, "pvmove0", 0, 3);
	check_lseg(b, 0, 0, 2, "pvmove0", 0, 5);
	/* Both legs are used extents. */
	assert_int_equal(vg->pvs[0]->pe_alloc_count, 7);
	assert_int_equal(vg->pvs[1]->pe_alloc_count, 8);
	assert_int_equal(vg_export(vg, false, "t", &text, &len), 0);
	assert_non_null(strstr(text, "status = [\"READ\", \"WRITE\", \"PVMOVE\", \"LOCKED\"]\n"));
	assert_non_null(strstr(text, "creation_host = \"t\"\nsegment_count = 2\n") ||
	                strstr(text, "segment_count = 2"));
	assert_non_null(strstr(text, "allocation_policy = \"contiguous\"\nsegment_count = 3\n"));
	assert_non_null(strstr(text,
	                       "type = \"mirror\"\nmirror_count = 2\nextents_moved = 0\n"
	                       "region_size = 4096\n\nmirrors = [\n\"pv0\", 5,\n\"pv1\", 3\n]\n"));
	assert_non_null(strstr(text, "stripes = [\n\"pvmove0\", 3\n]"));
	free(text);
	vg_free(vg);
}

/* The text read back is the same move: the mirror segments and the stacked areas. */
static void test_text_round_trip(void **state)
{
	struct ulvm_vg *vg = vg_linear(8192, 2, 10, "a=0@0+3,0@5+2 b=0@3+2"), *back = NULL;
	struct cfg_tree *tree = NULL;
	struct ulvm_lv *m[2];
	char *text = NULL, *again = NULL;
	size_t len, len2;

	(void)state;
	plan_ok(vg, "/dev/pv0", NULL, 0, NULL, ULVM_ALLOC_NORMAL);
	assert_int_equal(vg_export(vg, false, "t", &text, &len), 0);
	assert_int_equal(cfg_parse(text, len, "back", &tree), 0);
	assert_int_equal(vg_import(NULL, tree, "back", &back), 0);
	for (size_t i = 0; i < back->npvs; i++)
		back->pvs[i]->device = strdup(back->pvs[i]->device_hint);
	assert_int_equal(ulvm_pvmove_list(back, NULL, m, 2), 1);
	assert_int_equal(ulvm_pvmove_list(back, "/dev/pv0", m, 2), 1);
	assert_int_equal(ulvm_pvmove_list(back, "/dev/pv1", m, 2), 1);
	assert_ptr_equal(ulvm_pvmove_source(m[0]), back->pvs[0]);
	check_mseg(m[0], 2, 5, 2, 0, 3, 1, 5, 0);
	assert_int_equal(back->pvs[1]->pe_alloc_count, 7);
	assert_int_equal(vg_export(back, false, "t", &again, &len2), 0);
	/* The same LVs; the text read back has lost only the blank lines before the legs
	 * (the parser keeps no layout; LVM2 reads both alike). */
	for (char *p; (p = strstr(text, "\n\nmirrors"));)
		memmove(p, p + 1, strlen(p));
	assert_string_equal(strstr(text, "logical_volumes"), strstr(again, "logical_volumes"));
	free(text);
	free(again);
	cfg_tree_free(tree);
	vg_free(back);
	vg_free(vg);
}

/* PE ranges split segments where they end; only the areas inside move. */
static void test_pe_ranges(void **state)
{
	struct ulvm_vg *vg = vg_linear(8192, 2, 10, "a=0@0+6 b=0@6+2");
	struct ulvm_lv *m, *a = ulvm_lv_find(vg, "a");

	(void)state;
	m = plan_ok(vg, "/dev/pv0:2-3:7", NULL, 0, NULL, ULVM_ALLOC_NORMAL);
	assert_int_equal(a->nsegs, 3);
	check_lseg(a, 0, 0, 2, NULL, 0, 0);
	check_lseg(a, 1, 2, 2, "pvmove0", 0, 0);
	check_lseg(a, 2, 4, 2, NULL, 0, 4);
	check_lseg(ulvm_lv_find(vg, "b"), 0, 0, 1, NULL, 0, 6);
	check_lseg(ulvm_lv_find(vg, "b"), 1, 1, 1, "pvmove0", 0, 2);
	assert_int_equal(m->nsegs, 2);
	check_mseg(m, 0, 0, 2, 0, 2, 1, 0, 0);
	check_mseg(m, 1, 2, 1, 0, 7, 1, 2, 0);
	vg_free(vg);
}

/* A striped LV: the stripe on the source PV moves (per-stripe extents). -n names one LV. */
static void test_striped_and_name(void **state)
{
	struct ulvm_vg *vg = vg_from(8192, 3, 10,
	                             "st {\nid = \"st0000-aaaa-bbbb-cccc-dddd-eeee-ffffff\"\n"
	                             "status = [\"READ\", \"WRITE\", \"VISIBLE\"]\nflags = []\n"
	                             "segment_count = 1\nsegment1 {\nstart_extent = 0\n"
	                             "extent_count = 8\ntype = \"striped\"\nstripe_count = 2\n"
	                             "stripe_size = 128\nstripes = [\"pv0\", 0, \"pv1\", 0]\n}\n}\n"
	                             "other {\nid = \"ot0000-aaaa-bbbb-cccc-dddd-eeee-ffffff\"\n"
	                             "status = [\"READ\", \"WRITE\", \"VISIBLE\"]\nflags = []\n"
	                             "segment_count = 1\nsegment1 {\nstart_extent = 0\n"
	                             "extent_count = 2\ntype = \"striped\"\nstripe_count = 1\n"
	                             "stripes = [\"pv0\", 4]\n}\n}\n");
	const char *dest = "/dev/pv2";
	struct ulvm_lv *m, *st = ulvm_lv_find(vg, "st");

	(void)state;
	m = plan_ok(vg, "/dev/pv0", &dest, 1, "st", ULVM_ALLOC_NORMAL);
	assert_int_equal(m->nsegs, 1);
	check_mseg(m, 0, 0, 4, 0, 0, 2, 0, 0);
	assert_int_equal(st->segs[0].areas[0].type, ULVM_AREA_LV);
	assert_int_equal(st->segs[0].areas[1].type, ULVM_AREA_PV);
	check_status(ulvm_lv_find(vg, "other"), "READ,WRITE,VISIBLE");
	vg_free(vg);
}

/* New extents in two free ranges: the pvmove segment is split where the first ends. */
static void test_split_at_free_ranges(void **state)
{
	struct ulvm_vg *vg = vg_linear(8192, 2, 10, "a=0@0+5 x=1@3+2");
	struct ulvm_lv *m, *a = ulvm_lv_find(vg, "a");

	(void)state;
	m = plan_ok(vg, "/dev/pv0", NULL, 0, NULL, ULVM_ALLOC_NORMAL);
	/* pv1: 0-2 and 5-9 free; normal takes the first range that holds all 5: 5-9. */
	assert_int_equal(m->nsegs, 1);
	check_mseg(m, 0, 0, 5, 0, 0, 1, 5, 0);
	vg_free(vg);
	vg = vg_linear(8192, 2, 10, "a=0@0+9 x=1@4+2");
	/* pv1: 0-3 and 6-9 free, 8 in all. */
	plan_fails(vg, "/dev/pv0", NULL, -ENOSPC,
	           "Insufficient free space: 9 extents needed, but only 8 available");
	vg_free(vg);
	vg = vg_linear(8192, 3, 10, "a=0@0+7 x=1@4+2");
	m = plan_ok(vg, "/dev/pv0", NULL, 0, NULL, ULVM_ALLOC_NORMAL);
	/* pv1 0-3 and 6-9, pv2 0-9: first fit is pv2. */
	check_mseg(m, 0, 0, 7, 0, 0, 2, 0, 0);
	vg_free(vg);
	vg = vg_linear(8192, 2, 10, "a=0@0+7 x=1@4+2");
	a = ulvm_lv_find(vg, "a");
	m = plan_ok(vg, "/dev/pv0", NULL, 0, NULL, ULVM_ALLOC_NORMAL);
	assert_int_equal(m->nsegs, 2);
	check_mseg(m, 0, 0, 4, 0, 0, 1, 0, 0);
	check_mseg(m, 1, 4, 3, 0, 4, 1, 6, 0);
	/* The LV still names one area on pvmove0; finishing splits it at the legs. */
	assert_int_equal(a->nsegs, 1);
	assert_int_equal(pvmove_segment_moved(vg, m, 0), 0);
	assert_int_equal(pvmove_segment_moved(vg, m, 1), 0);
	assert_int_equal(pvmove_detach(vg, m), 0);
	assert_int_equal(a->nsegs, 2);
	check_lseg(a, 0, 0, 4, NULL, 1, 0);
	check_lseg(a, 1, 4, 3, NULL, 1, 6);
	vg_free(vg);
	vg = vg_linear(8192, 2, 10, "a=0@0+7 x=1@4+2");
	{
		struct ulvm_pvmove_opts o = {.alloc = ULVM_ALLOC_CONTIGUOUS};
		assert_int_equal(pvmove_plan(vg, "/dev/pv0", &o, &m), -ENOSPC);
	}
	vg_free(vg);
}

/* Finish (every segment moved) and abort (only the first): legs kept, merges, LOCKED gone,
 * the pvmove LV one error extent, then gone. */
static void test_finish_and_abort(void **state)
{
	for (int abort = 0; abort < 2; abort++) {
		struct ulvm_vg *vg = vg_linear(8192, 2, 10, "a=0@0+3,0@5+2 b=0@3+2");
		struct ulvm_lv *m, *a = ulvm_lv_find(vg, "a"), *b = ulvm_lv_find(vg, "b");
		char *text = NULL;
		size_t len, n = vg->nlvs;

		(void)state;
		m = plan_ok(vg, "/dev/pv0", NULL, 0, NULL, ULVM_ALLOC_NORMAL);
		for (size_t s = 0; s < (abort ? 1 : m->nsegs); s++)
			assert_int_equal(pvmove_segment_moved(vg, m, s), 0);
		check_mseg(m, 0, 0, 3, 0, 0, 1, 0, 3);
		assert_int_equal(pvmove_detach(vg, m), 0);
		check_status(a, "READ,WRITE,VISIBLE");
		check_status(b, "READ,WRITE,VISIBLE");
		check_status(m, "READ,WRITE");
		assert_int_equal(m->nsegs, 1);
		assert_string_equal(m->segs[0].type, "error");
		assert_int_equal(m->segs[0].extent_count, 1);
		assert_int_equal(m->segs[0].area_count, 0);
		if (abort) {
			/* a's first segment moved, its second and b did not. */
			assert_int_equal(a->nsegs, 2);
			check_lseg(a, 0, 0, 3, NULL, 1, 0);
			check_lseg(a, 1, 3, 2, NULL, 0, 5);
			check_lseg(b, 0, 0, 2, NULL, 0, 3);
		} else {
			/* pv1 0-2 and 3-4 follow each other: one segment, as LVM2 merges them. */
			assert_int_equal(a->nsegs, 1);
			check_lseg(a, 0, 0, 5, NULL, 1, 0);
			check_lseg(b, 0, 0, 2, NULL, 1, 5);
		}
		assert_int_equal(vg_export(vg, false, "t", &text, &len), 0);
		assert_non_null(strstr(text, "pvmove0 {\nid = "));
		assert_non_null(strstr(text, "segment_count = 1\n\nsegment1 {\nstart_extent = 0\n"
		                             "extent_count = 1\n\ntype = \"error\"\n}\n"));
		free(text);
		pvmove_remove_lv(vg, m);
		assert_int_equal(vg->nlvs, n);
		assert_null(ulvm_lv_find(vg, "pvmove0"));
		assert_int_equal(vg->pvs[0]->pe_alloc_count, abort ? 4 : 0);
		vg_free(vg);
	}
}

/* The tables of an online move, as LVM2 loads them: pvmove0 a mirror for its first segment
 * not moved (region 2 MiB, less for a smaller segment), linear on the new leg before it and on
 * the old leg after it; the LVs linear over pvmove0's device. */
static void test_tables(void **state)
{
	struct ulvm_vg *vg = vg_linear(2048, 2, 10, "a=0@0+3,0@5+2 b=0@3+1");
	struct ulvm_lv *m;
	char *t = NULL;

	(void)state;
	m = plan_ok(vg, "/dev/pv0", NULL, 0, NULL, ULVM_ALLOC_NORMAL);
	assert_int_equal(ulvm_lv_table(vg, m, &t), 0);
	assert_string_equal(t, "0 6144 mirror core 1 4096 2 /dev/pv0 2048 /dev/pv1 2048\n"
	                       "6144 4096 linear /dev/pv0 12288\n"
	                       "10240 2048 linear /dev/pv0 8192\n");
	free(t);
	assert_int_equal(pvmove_segment_moved(vg, m, 0), 0);
	assert_int_equal(pvmove_segment_moved(vg, m, 1), 0);
	assert_int_equal(ulvm_lv_table(vg, m, &t), 0);
	assert_string_equal(t, "0 6144 linear /dev/pv1 2048\n"
	                       "6144 4096 linear /dev/pv1 8192\n"
	                       "10240 2048 mirror core 1 2048 2 /dev/pv0 8192 /dev/pv1 12288\n");
	free(t);
	assert_int_equal(ulvm_lv_table(vg, ulvm_lv_find(vg, "a"), &t), 0);
	assert_string_equal(t, "0 6144 linear mv-pvmove0 0\n6144 4096 linear mv-pvmove0 6144\n");
	free(t);
	vg_free(vg);
}

/* An LV LOCKED on pvmove0 activates with pvmove0's device under it, first (as LVM2 activates
 * that dependency), once; an LV not on the move has no such layer. */
static void test_layers(void **state)
{
	struct ulvm_vg *vg = vg_linear(2048, 2, 10, "a=0@0+3,0@5+2 b=0@3+1 c=1@9+1");
	struct ulvm_lv_layer *l = NULL;
	struct ulvm_lv *m;
	size_t n = 0;

	(void)state;
	m = plan_ok(vg, "/dev/pv0", NULL, 0, NULL, ULVM_ALLOC_NORMAL);
	assert_int_equal(ulvm_lv_layers(vg, ulvm_lv_find(vg, "a"), &l, &n), 0);
	assert_int_equal(n, 2);
	assert_ptr_equal(l[0].lv, m);
	assert_null(l[0].suffix);
	assert_string_equal(l[0].name, "mv-pvmove0");
	assert_non_null(strstr(l[0].table, "0 6144 mirror core 1 4096 2 /dev/pv0 2048 /dev/pv1"));
	assert_string_equal(l[1].name, "mv-a");
	assert_string_equal(l[1].table,
	                    "0 6144 linear mv-pvmove0 0\n6144 4096 linear mv-pvmove0 6144\n");
	ulvm_lv_layers_free(l, n);
	assert_int_equal(ulvm_lv_layers(vg, ulvm_lv_find(vg, "c"), &l, &n), 0);
	assert_int_equal(n, 1);
	assert_string_equal(l[0].name, "mv-c");
	ulvm_lv_layers_free(l, n);
	vg_free(vg);
}

/* copy_percent's extents, as LVM2 sums them: the running mirror's in-sync share of its
 * segment rounded down to extents, the other segments their extents_moved. */
static void test_copied(void **state)
{
	struct ulvm_vg *vg = vg_linear(4096, 2, 20, "a=0@0+5,0@8+4 b=0@5+3");
	struct ulvm_lv *m;
	uint64_t c, t;

	(void)state;
	m = plan_ok(vg, "/dev/pv0", NULL, 0, NULL, ULVM_ALLOC_NORMAL);
	assert_int_equal(m->nsegs, 3);
	pvmove_copied_from_status(vg, m, "", &c, &t);
	assert_int_equal(c, 0);
	assert_int_equal(t, 12);
	assert_int_equal(pvmove_segment_moved(vg, m, 0), 0);
	/* segment 1 moved, segment 2 (4 extents: 4 regions) running with 3 in sync */
	pvmove_copied_from_status(vg, m,
	                          "0 20480 linear \n20480 16384 mirror 2 7:0 7:1 3/4 1 AA 1 core\n"
	                          "36864 12288 linear \n",
	                          &c, &t);
	assert_int_equal(c, 5 + 3);
	/* 5 extents in 3 regions, 1 in sync: 5 * 1 / 3 = 1 extent */
	pvmove_copied_from_status(vg, m, "0 20480 mirror 2 7:0 7:1 1/3 1 AA 1 core\n", &c, &t);
	assert_int_equal(c, 1);
	vg_free(vg);
}

/* LVM2's messages for what it refuses; a second move takes the next name and skips
 * LOCKED LVs. */
static void test_refusals_and_second_move(void **state)
{
	struct ulvm_vg *vg = vg_linear(8192, 3, 4, "a=0@0+3 b=1@0+3 f=2@0+4");
	struct ulvm_lv *m;

	(void)state;
	plan_fails(vg, "/dev/pv2", "/dev/pv2", -ENOSPC, "No extents available for allocation.");
	plan_fails(vg, "/dev/pvX", NULL, -ENOENT,
	           "Physical Volume \"/dev/pvX\" not found in Volume Group \"mv\".");
	plan_fails(vg, "/dev/pv0", "/dev/pvY", -ENOENT,
	           "Physical Volume \"/dev/pvY\" not found in Volume Group \"mv\".");
	plan_fails(vg, "/dev/pv0:1-x", NULL, -EINVAL, "Physical extent parsing error at x");
	plan_fails(vg, "/dev/pv0:3", NULL, -ENODATA, "No data to move for mv.");
	plan_fails(vg, "/dev/pv2", NULL, -ENOSPC,
	           "Insufficient free space: 4 extents needed, but only 2 available");
	vg_free(vg);
	vg = vg_linear(8192, 3, 8, "a=0@0+2 b=0@2+2");
	m = plan_ok(vg, "/dev/pv0:0-1", NULL, 0, NULL, ULVM_ALLOC_NORMAL);
	assert_string_equal(m->name, "pvmove0");
	m = plan_ok(vg, "/dev/pv0", NULL, 0, NULL, ULVM_ALLOC_NORMAL);
	assert_string_equal(m->name, "pvmove1");
	assert_int_equal(m->nsegs, 1); /* a is LOCKED by pvmove0: only b */
	check_mseg(m, 0, 0, 2, 0, 2, 1, 2, 0);
	vg_free(vg);
}

/* Small extents: the region size is at most the largest power of two in the LV's size. */
static void test_region_size(void **state)
{
	struct ulvm_vg *vg = vg_linear(2048, 2, 10, "a=0@0+3");
	struct ulvm_lv *m = plan_ok(vg, "/dev/pv0", NULL, 0, NULL, ULVM_ALLOC_NORMAL);

	(void)state;
	assert_int_equal(kept(&m->segs[0], "region_size"), 2048);
	vg_free(vg);
	vg = vg_linear(2048, 2, 10, "a=0@0+4");
	m = plan_ok(vg, "/dev/pv0", NULL, 0, NULL, ULVM_ALLOC_NORMAL);
	assert_int_equal(kept(&m->segs[0], "region_size"), 4096);
	vg_free(vg);
}

/* --atomic: LVM2 2.03.16's layout (pvmove0 one mirror over pvmove0_mimage_0/1, the images'
 * segments one per moved area), its text and reading back, then the switch of the finish
 * and of an abort (pvmove0 on the kept image's extents, that image an error segment, the
 * other merged, both VISIBLE, pvmove0 listed last) and the LVs detached onto pvmove0's
 * extents once the images are gone. */
static void test_atomic(void **state)
{
	for (int keep_new = 0; keep_new < 2; keep_new++) {
		struct ulvm_vg *vg = vg_linear(8192, 2, 10, "a=0@0+3,0@5+2 b=0@3+2 c=1@9+1"),
		               *back = NULL;
		struct ulvm_pvmove_opts o = {.alloc = ULVM_ALLOC_NORMAL, .atomic = true};
		struct ulvm_lv *m = NULL, *i0, *i1, *a, *b, *found[2];
		struct cfg_tree *tree = NULL;
		char *text = NULL;
		size_t len;

		(void)state;
		assert_int_equal(pvmove_plan(vg, "/dev/pv0", &o, &m), 0);
		assert_string_equal(m->name, "pvmove0");
		i0 = ulvm_lv_find(vg, "pvmove0_mimage_0");
		i1 = ulvm_lv_find(vg, "pvmove0_mimage_1");
		assert_non_null(i0);
		assert_non_null(i1);
		assert_ptr_equal(vg->lvs[vg->nlvs - 3], m);
		assert_ptr_equal(vg->lvs[vg->nlvs - 1], i1);
		check_status(m, "READ,WRITE,PVMOVE,LOCKED");
		check_status(i0, "READ,WRITE");
		check_status(i1, "READ,WRITE");
		assert_int_equal(m->nsegs, 1);
		assert_string_equal(m->segs[0].type, "mirror");
		assert_int_equal(m->segs[0].extent_count, 7);
		assert_int_equal(m->segs[0].areas[0].type, ULVM_AREA_LV);
		assert_string_equal(m->segs[0].areas[1].lv_name, "pvmove0_mimage_1");
		assert_int_equal(kept(&m->segs[0], "extents_moved"), 0);
		check_lseg(i0, 0, 0, 3, NULL, 0, 0);
		check_lseg(i0, 1, 3, 2, NULL, 0, 5);
		check_lseg(i0, 2, 5, 2, NULL, 0, 3);
		check_lseg(i1, 0, 0, 3, NULL, 1, 0);
		check_lseg(i1, 1, 3, 2, NULL, 1, 3);
		check_lseg(i1, 2, 5, 2, NULL, 1, 5);
		assert_ptr_equal(i0->used_by, m);
		assert_ptr_equal(ulvm_pvmove_source_in(vg, m), vg->pvs[0]);
		assert_int_equal(ulvm_pvmove_list(vg, "/dev/pv0", found, 2), 1);
		assert_int_equal(vg->pvs[1]->pe_alloc_count, 8);
		assert_int_equal(vg_export(vg, false, "t", &text, &len), 0);
		assert_non_null(
		    strstr(text, "type = \"mirror\"\nmirror_count = 2\nextents_moved = 0\n"
		                 "region_size = 4096\n\nmirrors = [\n\"pvmove0_mimage_0\", 0,\n"
		                 "\"pvmove0_mimage_1\", 0\n]\n"));
		assert_int_equal(cfg_parse(text, len, "back", &tree), 0);
		assert_int_equal(vg_import(NULL, tree, "back", &back), 0);
		assert_int_equal(ulvm_pvmove_list(back, NULL, found, 2), 1);
		assert_int_equal(back->pvs[1]->pe_alloc_count, 8);
		free(text);
		cfg_tree_free(tree);
		vg_free(back);

		assert_int_equal(pvmove_atomic_switch(vg, m, keep_new), 0);
		assert_ptr_equal(vg->lvs[vg->nlvs - 1], m);
		check_status(i0, "READ,WRITE,VISIBLE");
		check_status(i1, "READ,WRITE,VISIBLE");
		check_status(m, "READ,WRITE,PVMOVE,LOCKED");
		assert_int_equal(m->nsegs, 3);
		check_lseg(m, 2, 5, 2, NULL, keep_new ? 1 : 0, keep_new ? 5 : 3);
		assert_string_equal((keep_new ? i1 : i0)->segs[0].type, "error");
		assert_int_equal((keep_new ? i1 : i0)->segs[0].extent_count, 7);
		/* the image dropped: merged where adjacent (pv1 0-6 in one) */
		assert_int_equal((keep_new ? i0 : i1)->nsegs, keep_new ? 3 : 1);
		assert_int_equal(pvmove_atomic_switch(vg, m, keep_new), -EINVAL);

		pvmove_remove_lv(vg, i0);
		pvmove_remove_lv(vg, i1);
		assert_int_equal(pvmove_detach(vg, m), 0);
		a = ulvm_lv_find(vg, "a");
		b = ulvm_lv_find(vg, "b");
		check_status(a, "READ,WRITE,VISIBLE");
		if (keep_new) {
			check_lseg(a, 0, 0, 5, NULL, 1, 0);
			check_lseg(b, 0, 0, 2, NULL, 1, 5);
		} else {
			check_lseg(a, 0, 0, 3, NULL, 0, 0);
			check_lseg(a, 1, 3, 2, NULL, 0, 5);
			check_lseg(b, 0, 0, 2, NULL, 0, 3);
		}
		assert_string_equal(m->segs[0].type, "error");
		vg_free(vg);
	}
}

/* An atomic move's LVs as reports see them (inactive: the images 'I'), the layouts LVM2 gives
 * (the kept image an error segment: "unknown"), and the mirror status the image letter and
 * the online move read. */
static void test_atomic_report(void **state)
{
	struct ulvm_vg *vg = vg_linear(8192, 2, 10, "a=0@0+3,1@9+1");
	struct ulvm_pvmove_opts o = {.alloc = ULVM_ALLOC_NORMAL, .atomic = true};
	struct ulvm_lv *m = NULL;
	struct ulvm_lv_info in;
	uint64_t sync = 0, regions = 0;
	bool failed = true;

	(void)state;
	ulvm_lv_info(vg, ulvm_lv_find(vg, "a"), &in);
	assert_string_equal(in.layout, "linear");
	assert_int_equal(pvmove_plan(vg, "/dev/pv0", &o, &m), 0);
	ulvm_lv_info(vg, m, &in);
	assert_int_equal(in.role, 'p');
	assert_string_equal(in.layout, "mirror");
	ulvm_lv_info(vg, ulvm_lv_find(vg, "pvmove0_mimage_0"), &in);
	assert_int_equal(in.role, 'I');
	assert_int_equal(in.target, 'm');
	assert_string_equal(in.layout, "linear");
	assert_int_equal(pvmove_atomic_switch(vg, m, true), 0);
	ulvm_lv_info(vg, ulvm_lv_find(vg, "pvmove0_mimage_1"), &in);
	assert_string_equal(in.layout, "unknown");
	assert_int_equal(in.role, 'v');
	vg_free(vg);

	assert_true(
	    mirror_status_sync("0 36864 mirror 2 v-pvmove0_mimage_0 v-pvmove0_mimage_1 3/9 1 "
	                       "AA 1 core\n",
	                       0, &sync, &regions, &failed));
	assert_int_equal(sync, 3);
	assert_int_equal(regions, 9);
	assert_false(failed);
	assert_true(mirror_status_sync("0 8 linear\n8 16 mirror 2 7:0 7:1 2/2 1 AD 1 core\n", 8,
	                               &sync, &regions, &failed));
	assert_true(failed);
	assert_false(mirror_status_sync("0 8 linear\n", 0, &sync, &regions, &failed));
	assert_false(mirror_status_sync("0 16 mirror 2 7:0 7:1 2/2 1 AA 1 core\n", 8, &sync,
	                                &regions, &failed));
}

int main(void)
{
	static const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_setup_layout),
	    cmocka_unit_test(test_text_round_trip),
	    cmocka_unit_test(test_pe_ranges),
	    cmocka_unit_test(test_striped_and_name),
	    cmocka_unit_test(test_split_at_free_ranges),
	    cmocka_unit_test(test_finish_and_abort),
	    cmocka_unit_test(test_refusals_and_second_move),
	    cmocka_unit_test(test_region_size),
	    cmocka_unit_test(test_tables),
	    cmocka_unit_test(test_layers),
	    cmocka_unit_test(test_copied),
	    cmocka_unit_test(test_atomic),
	    cmocka_unit_test(test_atomic_report),
	};

	setenv("ULVM_RUN_DIR", "/nonexistent-ulvm-test-run", 1);
	ulvm_set_log(NULL, NULL, ULVM_LOG_ERROR);
	return cmocka_run_group_tests(tests, NULL, NULL);
}
