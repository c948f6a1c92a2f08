/* Unit tests for lvm/alloc (through lvm/lv): extent allocation on in-memory VGs imported from
 * small texts: linear first fit, in-place extension, new segments, striped allocation across
 * PVs in PV order, ENOSPC cases, the contiguous policy, PV restriction, free ranges of
 * fragmented PVs, shrinking, rollback of failed extensions, and a PV image truncated below
 * its recorded size (warned about once; nothing allocated past its end). */
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
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
#include "lvm/segtype.h"

/* ---- building VGs ------------------------------------------------------------------------ */

/*
 * A VG "avg" with extent size 4 MiB, PVs pv0..pv<n-1> with the given extent counts (device
 * paths /dev/pv0, ...), and linear LVs described by `lvspec`: space-separated
 * "name=P@E+C,P@E+C..." where each P@E+C is a segment of C extents on pvP from PE E,
 * following each other in LE order. Every PV is ALLOCATABLE.
 */
static struct ulvm_vg *build_vg(const uint32_t *pe_counts, size_t npvs, const char *lvspec)
{
	struct strbuf sb;
	struct cfg_tree *tree = NULL;
	struct ulvm_vg *vg = NULL;
	char *spec = strdup(lvspec ? lvspec : ""), *save = NULL;
	unsigned lvno = 0;
	int r;

	assert_non_null(spec);
	sb_init(&sb);
	sb_printf(&sb, "avg {\nid = \"vgvgvg-aaaa-bbbb-cccc-dddd-eeee-ffffff\"\nseqno = 1\n"
	               "format = \"lvm2\"\nstatus = [\"RESIZEABLE\", \"READ\", \"WRITE\"]\n"
	               "flags = []\nextent_size = 8192\nmax_lv = 0\nmax_pv = 0\n"
	               "metadata_copies = 0\nphysical_volumes {\n");
	for (size_t i = 0; i < npvs; i++)
		sb_printf(&sb,
		          "pv%zu {\nid = \"pv%04zu-aaaa-bbbb-cccc-dddd-eeee-ffffff\"\n"
		          "device = \"/dev/pv%zu\"\nstatus = [\"ALLOCATABLE\"]\nflags = []\n"
		          "dev_size = %llu\npe_start = 2048\npe_count = %u\n}\n",
		          i, i, i, (unsigned long long)pe_counts[i] * 8192 + 2048, pe_counts[i]);
	sb_printf(&sb, "}\nlogical_volumes {\n");
	for (char *lv = strtok_r(spec, " ", &save); lv; lv = strtok_r(NULL, " ", &save)) {
		char *eq = strchr(lv, '='), *segsave = NULL;
		unsigned nseg = 0, le = 0;
		struct strbuf segs;

		assert_non_null(eq);
		*eq = '\0';
		sb_init(&segs);
		for (char *s = strtok_r(eq + 1, ",", &segsave); s;
		     s = strtok_r(NULL, ",", &segsave)) {
			unsigned pv, pe, count;
			assert_int_equal(sscanf(s, "%u@%u+%u", &pv, &pe, &count), 3);
			nseg++;
			sb_printf(
			    &segs,
			    "segment%u {\nstart_extent = %u\nextent_count = %u\n"
			    "type = \"striped\"\nstripe_count = 1\nstripes = [\"pv%u\", %u]\n}\n",
			    nseg, le, count, pv, pe);
			le += count;
		}
		sb_printf(
		    &sb,
		    "%s {\nid = \"lv%04u-aaaa-bbbb-cccc-dddd-eeee-ffffff\"\n"
		    "status = [\"READ\", \"WRITE\", \"VISIBLE\"]\nflags = []\n"
		    "creation_time = 1700000000\ncreation_host = \"t\"\nsegment_count = %u\n%s}\n",
		    lv, lvno++, nseg, segs.buf ? segs.buf : "");
		sb_free(&segs);
	}
	sb_printf(&sb, "}\n}\ncontents = \"Text Format Volume Group\"\nversion = 1\n");
	assert_false(sb.oom);
	r = cfg_parse(sb.buf, sb.len, "build_vg", &tree);
	if (!r)
		r = vg_import(NULL, tree, "build_vg", &vg);
	if (r)
		fail_msg("build_vg: %s\n%s", ulvm_last_error(), sb.buf);
	cfg_tree_free(tree);
	sb_free(&sb);
	free(spec);
	/* Give every PV a device path, as vg_read does, so PV lists can name them. */
	for (size_t i = 0; i < vg->npvs; i++) {
		vg->pvs[i]->device = strdup(vg->pvs[i]->device_hint);
		assert_non_null(vg->pvs[i]->device);
	}
	return vg;
}

static void check_area(const struct ulvm_seg *seg, uint32_t a, const struct ulvm_pv *pv,
                       uint32_t pe)
{
	assert_true(a < seg->stripe_count);
	assert_int_equal(seg->areas[a].type, ULVM_AREA_PV);
	if (seg->areas[a].pv != pv)
		fail_msg("stripe %u is on %s, expected %s", a, seg->areas[a].pv->key, pv->key);
	assert_int_equal(seg->areas[a].pe, pe);
}

static void check_linear_seg(const struct ulvm_lv *lv, size_t s, uint32_t le, uint32_t count,
                             const struct ulvm_pv *pv, uint32_t pe)
{
	const struct ulvm_seg *seg;

	assert_true(s < lv->nsegs);
	seg = &lv->segs[s];
	assert_string_equal(seg->type, "striped");
	assert_int_equal(seg->stripe_count, 1);
	assert_int_equal(seg->stripe_size, 0);
	assert_int_equal(seg->start_extent, le);
	assert_int_equal(seg->extent_count, count);
	check_area(seg, 0, pv, pe);
}

static struct ulvm_lv *create(struct ulvm_vg *vg, const char *name, uint64_t extents,
                              uint32_t stripes)
{
	struct ulvm_lv_params p = {.name = name, .extents = extents, .stripes = stripes};
	struct ulvm_lv *lv = NULL;
	int r = ulvm_lv_create(vg, &p, &lv);

	if (r)
		fail_msg("creating %s (%llu extents, %u stripes) failed: %s", name,
		         (unsigned long long)extents, stripes, ulvm_last_error());
	assert_non_null(lv);
	assert_ptr_equal(ulvm_lv_find(vg, name), lv);
	assert_int_equal(lv->le_count, extents);
	return lv;
}

static void resize_ok(struct ulvm_vg *vg, struct ulvm_lv *lv, uint64_t extents,
                      const struct ulvm_lv_params *p)
{
	int r = ulvm_lv_resize(vg, lv, extents, p);

	if (r)
		fail_msg("resizing %s to %llu extents failed: %s", lv->name,
		         (unsigned long long)extents, ulvm_last_error());
	assert_int_equal(lv->le_count, extents);
}

/* The VG section of the raw export: the whole model as LVM2 would store it. */
static char *snapshot(const struct ulvm_vg *vg)
{
	char *text = NULL, *end;
	size_t len;

	assert_int_equal(vg_export(vg, false, NULL, &text, &len), 0);
	end = strstr(text, "\ncontents = ");
	assert_non_null(end);
	end[1] = '\0';
	return text;
}

static void free_ranges(const struct ulvm_vg *vg, const struct ulvm_pv *pv, char *out, size_t len)
{
	struct pe_range *fr = NULL;
	size_t n = 0;

	assert_int_equal(pv_free_ranges(vg, pv, &fr, &n), 0);
	out[0] = '\0';
	for (size_t i = 0; i < n; i++)
		snprintf(out + strlen(out), len - strlen(out), "%s%u+%u", i ? " " : "", fr[i].start,
		         fr[i].count);
	free(fr);
}

/* No two areas of any LVs share an extent, and pe_alloc_count matches the areas. */
static void check_no_overlap(const struct ulvm_vg *vg)
{
	for (size_t p = 0; p < vg->npvs; p++) {
		const struct ulvm_pv *pv = vg->pvs[p];
		uint8_t *used = calloc(pv->pe_count ? pv->pe_count : 1, 1);
		uint32_t n = 0;

		assert_non_null(used);
		for (size_t i = 0; i < vg->nlvs; i++)
			for (size_t s = 0; s < vg->lvs[i]->nsegs; s++) {
				const struct ulvm_seg *seg = &vg->lvs[i]->segs[s];
				for (uint32_t a = 0; seg->areas && a < seg->stripe_count; a++) {
					uint32_t per = seg->extent_count / seg->stripe_count;
					if (seg->areas[a].pv != pv)
						continue;
					assert_true(seg->areas[a].pe + per <= pv->pe_count);
					for (uint32_t e = 0; e < per; e++) {
						if (used[seg->areas[a].pe + e])
							fail_msg("%s PE %u allocated twice (LV %s)",
							         pv->key, seg->areas[a].pe + e,
							         vg->lvs[i]->name);
						used[seg->areas[a].pe + e] = 1;
						n++;
					}
				}
			}
		assert_int_equal(pv->pe_alloc_count, n);
		free(used);
	}
}

/* ---- linear ---------------------------------------------------------------------------------- */

static void test_linear_first_fit(void **state)
{
	uint32_t pes[] = {100, 100};
	struct ulvm_vg *vg = build_vg(pes, 2, NULL);
	struct ulvm_lv *lv;

	(void)state;
	lv = create(vg, "a", 10, 1);
	assert_int_equal(lv->nsegs, 1);
	check_linear_seg(lv, 0, 0, 10, vg->pvs[0], 0);
	lv = create(vg, "b", 20, 1);
	check_linear_seg(lv, 0, 0, 20, vg->pvs[0], 10);
	assert_int_equal(ulvm_lv_remove(vg, ulvm_lv_find(vg, "a")), 0);
	assert_int_equal(vg->pvs[0]->pe_alloc_count, 20);
	/* the hole at 0..9 is the first range that holds 5 */
	lv = create(vg, "c", 5, 1);
	check_linear_seg(lv, 0, 0, 5, vg->pvs[0], 0);
	/* 5..9 is too small for 15: the next range on pv0 */
	lv = create(vg, "d", 15, 1);
	check_linear_seg(lv, 0, 0, 15, vg->pvs[0], 30);
	/* pv0 has 5 + 55 free: 80 fits only on pv1, in one piece */
	lv = create(vg, "e", 80, 1);
	assert_int_equal(lv->nsegs, 1);
	check_linear_seg(lv, 0, 0, 80, vg->pvs[1], 0);
	/* the default name */
	lv = create(vg, "lvol0", 1, 0);
	check_linear_seg(lv, 0, 0, 1, vg->pvs[0], 5);
	{
		struct ulvm_lv_params p = {.extents = 1};
		assert_int_equal(ulvm_lv_create(vg, &p, &lv), 0);
		assert_string_equal(lv->name, "lvol1");
	}
	assert_int_equal(vg->pvs[0]->pe_alloc_count, 42);
	assert_int_equal(vg->pvs[1]->pe_alloc_count, 80);
	assert_int_equal(ulvm_vg_free_extents(vg), 78);
	check_no_overlap(vg);
	vg_free(vg);
}

static void test_linear_spans_pvs_when_needed(void **state)
{
	uint32_t pes[] = {30, 50};
	struct ulvm_vg *vg = build_vg(pes, 2, "x=0@10+5");
	struct ulvm_lv *lv;

	(void)state;
	/* No range holds 70: the largest first (pv1's 50), then the rest. */
	lv = create(vg, "big", 70, 1);
	assert_int_equal(lv->nsegs, 3);
	check_linear_seg(lv, 0, 0, 50, vg->pvs[1], 0);
	check_linear_seg(lv, 1, 50, 15, vg->pvs[0], 15);
	check_linear_seg(lv, 2, 65, 5, vg->pvs[0], 0);
	assert_int_equal(ulvm_vg_free_extents(vg), 5);
	check_no_overlap(vg);
	vg_free(vg);
}

static void test_extend_in_place(void **state)
{
	uint32_t pes[] = {100, 100};
	struct ulvm_vg *vg = build_vg(pes, 2, NULL);
	struct ulvm_lv *a;

	(void)state;
	a = create(vg, "a", 10, 1);
	resize_ok(vg, a, 25, NULL);
	assert_int_equal(a->nsegs, 1); /* merged into the last segment */
	check_linear_seg(a, 0, 0, 25, vg->pvs[0], 0);
	assert_int_equal(vg->pvs[0]->pe_alloc_count, 25);
	/* in place wins over first fit even with a hole before it */
	create(vg, "b", 5, 1);
	assert_int_equal(ulvm_lv_remove(vg, a), 0);
	a = create(vg, "c", 3, 1);
	check_linear_seg(a, 0, 0, 3, vg->pvs[0], 0);
	resize_ok(vg, a, 20, NULL);
	assert_int_equal(a->nsegs, 1);
	check_linear_seg(a, 0, 0, 20, vg->pvs[0], 0);
	check_no_overlap(vg);
	vg_free(vg);
}

static void test_extend_new_segment(void **state)
{
	uint32_t pes[] = {100, 100};
	struct ulvm_vg *vg = build_vg(pes, 2, NULL);
	struct ulvm_lv *a;

	(void)state;
	a = create(vg, "a", 10, 1);
	create(vg, "b", 10, 1); /* right behind a */
	resize_ok(vg, a, 15, NULL);
	assert_int_equal(a->nsegs, 2);
	check_linear_seg(a, 0, 0, 10, vg->pvs[0], 0);
	check_linear_seg(a, 1, 10, 5, vg->pvs[0], 20);
	/* and that new segment then grows in place */
	resize_ok(vg, a, 18, NULL);
	assert_int_equal(a->nsegs, 2);
	check_linear_seg(a, 1, 10, 8, vg->pvs[0], 20);
	check_no_overlap(vg);
	vg_free(vg);
}

/* ---- striped ----------------------------------------------------------------------------------
 */

static void test_striped_pv_order(void **state)
{
	uint32_t pes[] = {100, 100, 100};
	struct ulvm_vg *vg = build_vg(pes, 3, "fill=0@0+50");
	struct ulvm_lv *s;

	(void)state;
	s = create(vg, "s2", 20, 2);
	assert_int_equal(s->nsegs, 1);
	assert_int_equal(s->segs[0].stripe_count, 2);
	assert_int_equal(s->segs[0].stripe_size, 128); /* 64 KiB default */
	assert_int_equal(s->segs[0].extent_count, 20);
	check_area(&s->segs[0], 0, vg->pvs[0], 50);
	check_area(&s->segs[0], 1, vg->pvs[1], 0);
	assert_string_equal(ulvm_lv_segtype(s), "striped");

	s = create(vg, "s3", 30, 3);
	check_area(&s->segs[0], 0, vg->pvs[0], 60);
	check_area(&s->segs[0], 1, vg->pvs[1], 10);
	check_area(&s->segs[0], 2, vg->pvs[2], 0);

	/* extension in place on every stripe merges */
	resize_ok(vg, s, 45, NULL);
	assert_int_equal(s->nsegs, 1);
	assert_int_equal(s->segs[0].extent_count, 45);
	/* uneven sizes round up to full stripes */
	{
		struct ulvm_lv_params p = {
		    .name = "odd", .extents = 5, .stripes = 2, .stripe_size = 16};
		struct ulvm_lv *lv;
		assert_int_equal(ulvm_lv_create(vg, &p, &lv), 0);
		assert_int_equal(lv->le_count, 6);
		assert_int_equal(lv->segs[0].stripe_size, 16);
	}
	check_no_overlap(vg);
	vg_free(vg);
}

/* A PV that cannot hold a whole stripe loses to those that can; the picks still come out in
 * PV order. */
static void test_striped_prefers_whole_ranges(void **state)
{
	uint32_t pes[] = {100, 100, 100};
	struct ulvm_vg *vg = build_vg(pes, 3, "fill=0@0+95");
	struct ulvm_lv *s;

	(void)state;
	s = create(vg, "s", 20, 2);
	assert_int_equal(s->nsegs, 1);
	check_area(&s->segs[0], 0, vg->pvs[1], 0);
	check_area(&s->segs[0], 1, vg->pvs[2], 0);
	for (uint32_t a = 0; a < 2; a++)
		for (uint32_t b = a + 1; b < 2; b++)
			assert_ptr_not_equal(s->segs[0].areas[a].pv, s->segs[0].areas[b].pv);
	check_no_overlap(vg);
	vg_free(vg);
}

static void test_striped_insufficient(void **state)
{
	uint32_t pes[] = {100, 100, 100};
	struct ulvm_vg *vg = build_vg(pes, 3, "full=2@0+100");
	struct ulvm_lv_params p = {.name = "s", .extents = 30, .stripes = 3};
	struct ulvm_lv *lv = (struct ulvm_lv *)1;
	char *before = snapshot(vg), *after;
	int r;

	(void)state;
	/* three PVs, but only two with free space */
	r = ulvm_lv_create(vg, &p, &lv);
	assert_int_equal(r, -ENOSPC);
	assert_null(lv);
	assert_non_null(strstr(ulvm_last_error(), "Insufficient"));
	assert_non_null(strstr(ulvm_last_error(), "avg"));
	assert_null(ulvm_lv_find(vg, "s"));
	/* more stripes than PVs */
	p.stripes = 4;
	p.extents = 40;
	assert_int_equal(ulvm_lv_create(vg, &p, &lv), -EINVAL);
	assert_non_null(strstr(ulvm_last_error(), "stripes"));
	/* fill pv0 to 60, then 2 x 40 takes the rest of pv0 and the start of pv1 */
	create(vg, "fill0", 60, 1);
	lv = create(vg, "s2", 80, 2);
	assert_int_equal(lv->nsegs, 1);
	check_area(&lv->segs[0], 0, vg->pvs[0], 60);
	check_area(&lv->segs[0], 1, vg->pvs[1], 0);
	/* now pv0 is full: no second PV for a 2-stripe segment */
	p.stripes = 2;
	p.extents = 20;
	p.name = "s3";
	free(before);
	before = snapshot(vg);
	r = ulvm_lv_create(vg, &p, &lv);
	assert_int_equal(r, -ENOSPC);
	assert_non_null(strstr(ulvm_last_error(), "Insufficient"));
	after = snapshot(vg);
	assert_string_equal(after, before);
	/* a bad stripe size */
	p.stripe_size = 100;
	p.extents = 2;
	assert_int_equal(ulvm_lv_create(vg, &p, &lv), -EINVAL);
	p.stripe_size = 16384; /* larger than the 4 MiB extent */
	assert_int_equal(ulvm_lv_create(vg, &p, &lv), -EINVAL);
	free(before);
	free(after);
	check_no_overlap(vg);
	vg_free(vg);
}

static void test_not_enough_space(void **state)
{
	uint32_t pes[] = {10, 10};
	struct ulvm_vg *vg = build_vg(pes, 2, "x=0@0+5");
	struct ulvm_lv_params p = {.name = "big", .extents = 16};
	struct ulvm_lv *lv;
	char *before = snapshot(vg), *after;

	(void)state;
	assert_int_equal(ulvm_lv_create(vg, &p, &lv), -ENOSPC);
	assert_non_null(strstr(ulvm_last_error(), "Insufficient"));
	after = snapshot(vg);
	assert_string_equal(after, before);
	assert_int_equal(vg->nlvs, 1);
	assert_int_equal(vg->pvs[0]->pe_alloc_count, 5);
	assert_int_equal(vg->pvs[1]->pe_alloc_count, 0);
	/* exactly what is left works */
	p.extents = 15;
	assert_int_equal(ulvm_lv_create(vg, &p, &lv), 0);
	assert_int_equal(ulvm_vg_free_extents(vg), 0);
	check_no_overlap(vg);
	free(before);
	free(after);
	vg_free(vg);
}

/* ---- policies and PV lists ------------------------------------------------------------------- */

static void test_contiguous(void **state)
{
	uint32_t pes[] = {100, 100};
	/* pv0 free: 0..4 and 10..14; pv1 full */
	struct ulvm_vg *vg = build_vg(pes, 2, "u1=0@5+5 u2=0@15+85 u3=1@0+100");
	struct ulvm_lv_params p = {.name = "c", .extents = 8, .alloc = ULVM_ALLOC_CONTIGUOUS};
	struct ulvm_lv *lv = NULL;
	char *before = snapshot(vg), *after;
	int r;

	(void)state;
	r = ulvm_lv_create(vg, &p, &lv);
	assert_int_equal(r, -ENOSPC);
	assert_non_null(strstr(ulvm_last_error(), "contiguous"));
	after = snapshot(vg);
	assert_string_equal(after, before);
	free(after);
	/* 5 fits in one range */
	p.extents = 5;
	assert_int_equal(ulvm_lv_create(vg, &p, &lv), 0);
	assert_int_equal(lv->nsegs, 1);
	check_linear_seg(lv, 0, 0, 5, vg->pvs[0], 0);
	/* growing contiguously needs the extents right behind: 5..9 are taken */
	free(before);
	before = snapshot(vg);
	assert_int_equal(ulvm_lv_resize(vg, lv, 7, &p), -ENOSPC);
	after = snapshot(vg);
	assert_string_equal(after, before);
	free(after);
	/* the normal policy splits the request over both ranges */
	assert_int_equal(ulvm_lv_remove(vg, lv), 0);
	p.alloc = ULVM_ALLOC_NORMAL;
	p.extents = 8;
	p.name = "n";
	assert_int_equal(ulvm_lv_create(vg, &p, &lv), 0);
	assert_int_equal(lv->nsegs, 2);
	check_linear_seg(lv, 0, 0, 5, vg->pvs[0], 0);
	check_linear_seg(lv, 1, 5, 3, vg->pvs[0], 10);
	check_no_overlap(vg);
	free(before);
	vg_free(vg);
}

static void test_contiguous_extend_in_place(void **state)
{
	uint32_t pes[] = {100};
	struct ulvm_vg *vg = build_vg(pes, 1, "a=0@0+10 b=0@30+10");
	struct ulvm_lv_params p = {.alloc = ULVM_ALLOC_CONTIGUOUS};
	struct ulvm_lv *a = ulvm_lv_find(vg, "a");

	(void)state;
	resize_ok(vg, a, 30, &p); /* 10..29 free behind it */
	assert_int_equal(a->nsegs, 1);
	assert_int_equal(a->segs[0].extent_count, 30);
	assert_int_equal(ulvm_lv_resize(vg, a, 31, &p), -ENOSPC);
	assert_int_equal(a->le_count, 30);
	check_no_overlap(vg);
	vg_free(vg);
}

static void test_restrict_pvs(void **state)
{
	uint32_t pes[] = {100, 100, 100};
	struct ulvm_vg *vg = build_vg(pes, 3, NULL);
	const char *only1[] = {"/dev/pv1"};
	const char *two[] = {"/dev/pv2", "/dev/pv0"};
	const char *bad[] = {"/dev/nope"};
	struct ulvm_lv_params p = {.name = "r1", .extents = 10, .pvs = only1, .npvs = 1};
	struct ulvm_lv *lv;

	(void)state;
	assert_int_equal(ulvm_lv_create(vg, &p, &lv), 0);
	check_linear_seg(lv, 0, 0, 10, vg->pvs[1], 0);
	/* growing with a list outside the LV's PV: a new segment there */
	p.pvs = two;
	p.npvs = 2;
	resize_ok(vg, lv, 15, &p);
	assert_int_equal(lv->nsegs, 2);
	check_linear_seg(lv, 1, 10, 5, vg->pvs[0], 0);
	/* striped over the two listed PVs, in VG order */
	p.name = "r2";
	p.stripes = 2;
	p.extents = 20;
	assert_int_equal(ulvm_lv_create(vg, &p, &lv), 0);
	check_area(&lv->segs[0], 0, vg->pvs[0], 5);
	check_area(&lv->segs[0], 1, vg->pvs[2], 0);
	/* a listed PV that cannot take it */
	p.name = "r3";
	p.stripes = 1;
	p.pvs = only1;
	p.npvs = 1;
	p.extents = 91;
	assert_int_equal(ulvm_lv_create(vg, &p, &lv), -ENOSPC);
	assert_null(ulvm_lv_find(vg, "r3"));
	/* an unknown PV */
	p.pvs = bad;
	p.extents = 1;
	assert_int_equal(ulvm_lv_create(vg, &p, &lv), -EINVAL);
	assert_non_null(strstr(ulvm_last_error(), "/dev/nope"));
	/* a PV that is not allocatable is skipped */
	strlist_del(&vg->pvs[1]->status, "ALLOCATABLE");
	p.pvs = NULL;
	p.npvs = 0;
	p.name = "r4";
	/* pv0 has 85 free, pv2 90, pv1 (90 free) does not count */
	p.extents = 176;
	assert_int_equal(ulvm_lv_create(vg, &p, &lv), -ENOSPC);
	p.extents = 175;
	assert_int_equal(ulvm_lv_create(vg, &p, &lv), 0);
	for (size_t s = 0; s < lv->nsegs; s++)
		assert_ptr_not_equal(lv->segs[s].areas[0].pv, vg->pvs[1]);
	check_no_overlap(vg);
	vg_free(vg);
}

/* ---- free ranges -------------------------------------------------------------------------------
 */

static void test_free_ranges(void **state)
{
	uint32_t pes[] = {50, 20, 10, 0};
	struct ulvm_vg *vg =
	    build_vg(pes, 4, "a=0@3+4,0@20+5,1@0+20 b=0@7+1 c=0@45+5 d=2@2+2,2@8+1");
	struct ulvm_lv *s;
	char buf[256];

	(void)state;
	free_ranges(vg, vg->pvs[0], buf, sizeof(buf));
	assert_string_equal(buf, "0+3 8+12 25+20");
	free_ranges(vg, vg->pvs[1], buf, sizeof(buf)); /* full */
	assert_string_equal(buf, "");
	free_ranges(vg, vg->pvs[2], buf, sizeof(buf));
	assert_string_equal(buf, "0+2 4+4 9+1");
	free_ranges(vg, vg->pvs[3], buf, sizeof(buf)); /* no extents at all */
	assert_string_equal(buf, "");
	assert_int_equal(vg->pvs[0]->pe_alloc_count, 15);
	assert_int_equal(vg->pvs[2]->pe_alloc_count, 3);

	/* a striped area counts extent_count / stripe_count per PV */
	s = create(vg, "s", 4, 2); /* first fit on pv0 and pv2: both at PE 0 */
	check_area(&s->segs[0], 0, vg->pvs[0], 0);
	check_area(&s->segs[0], 1, vg->pvs[2], 0);
	free_ranges(vg, vg->pvs[0], buf, sizeof(buf));
	assert_string_equal(buf, "2+1 8+12 25+20");
	free_ranges(vg, vg->pvs[2], buf, sizeof(buf));
	assert_string_equal(buf, "4+4 9+1");
	/* removing an LV gives its ranges back, merged with their neighbours */
	assert_int_equal(ulvm_lv_remove(vg, ulvm_lv_find(vg, "b")), 0);
	free_ranges(vg, vg->pvs[0], buf, sizeof(buf));
	assert_string_equal(buf, "2+1 7+13 25+20");
	assert_int_equal(ulvm_lv_remove(vg, ulvm_lv_find(vg, "a")), 0);
	free_ranges(vg, vg->pvs[0], buf, sizeof(buf));
	assert_string_equal(buf, "2+43");
	free_ranges(vg, vg->pvs[1], buf, sizeof(buf));
	assert_string_equal(buf, "0+20");
	check_no_overlap(vg);
	vg_free(vg);
}

/* ---- shrinking and rollback
 * ---------------------------------------------------------------------- */

static void test_shrink(void **state)
{
	uint32_t pes[] = {100, 100};
	struct ulvm_vg *vg = build_vg(pes, 2, "x=0@0+10,1@0+10,0@50+5");
	struct ulvm_lv *x = ulvm_lv_find(vg, "x");
	char buf[128];

	(void)state;
	assert_int_equal(x->le_count, 25);
	/* into the middle segment: the last is dropped, the middle truncated */
	resize_ok(vg, x, 15, NULL);
	assert_int_equal(x->nsegs, 2);
	check_linear_seg(x, 0, 0, 10, vg->pvs[0], 0);
	check_linear_seg(x, 1, 10, 5, vg->pvs[1], 0);
	assert_int_equal(vg->pvs[0]->pe_alloc_count, 10);
	assert_int_equal(vg->pvs[1]->pe_alloc_count, 5);
	free_ranges(vg, vg->pvs[1], buf, sizeof(buf));
	assert_string_equal(buf, "5+95");
	free_ranges(vg, vg->pvs[0], buf, sizeof(buf));
	assert_string_equal(buf, "10+90");
	/* exactly at a segment boundary */
	resize_ok(vg, x, 10, NULL);
	assert_int_equal(x->nsegs, 1);
	assert_int_equal(vg->pvs[1]->pe_alloc_count, 0);
	resize_ok(vg, x, 1, NULL);
	check_linear_seg(x, 0, 0, 1, vg->pvs[0], 0);
	assert_int_equal(ulvm_vg_free_extents(vg), 199);
	/* zero and same size are refused */
	assert_int_equal(ulvm_lv_resize(vg, x, 0, NULL), -EINVAL);
	assert_int_equal(ulvm_lv_resize(vg, x, 1, NULL), -EINVAL);
	assert_int_equal(x->le_count, 1);
	check_no_overlap(vg);
	vg_free(vg);
}

static void test_shrink_striped(void **state)
{
	uint32_t pes[] = {100, 100};
	struct ulvm_vg *vg = build_vg(pes, 2, NULL);
	struct ulvm_lv *s = create(vg, "s", 20, 2);
	struct ulvm_lv_params lin = {.stripes = 1};
	char *before, *after;

	(void)state;
	resize_ok(vg, s, 12, NULL);
	assert_int_equal(s->segs[0].extent_count, 12);
	assert_int_equal(vg->pvs[0]->pe_alloc_count, 6);
	assert_int_equal(vg->pvs[1]->pe_alloc_count, 6);
	/* a linear tail after the striped segment */
	resize_ok(vg, s, 16, &lin);
	assert_int_equal(s->nsegs, 2);
	assert_int_equal(s->segs[1].stripe_count, 1);
	/* 11 would drop the linear tail and cut the striped segment to 11 extents: not a whole
	 * number per stripe. The model must stay as it was, linear tail included. */
	before = snapshot(vg);
	assert_int_equal(ulvm_lv_resize(vg, s, 11, NULL), -EINVAL);
	after = snapshot(vg);
	assert_string_equal(after, before);
	assert_int_equal(s->nsegs, 2);
	assert_int_equal(s->le_count, 16);
	free(before);
	free(after);
	check_no_overlap(vg);
	vg_free(vg);
}

static void test_failed_extension_unchanged(void **state)
{
	uint32_t pes[] = {100, 100};
	/* a: pv0 0..9, then pv0 10..14 free, pv0 15.. taken; pv1: 95..99 free */
	struct ulvm_vg *vg = build_vg(pes, 2, "a=0@0+10 b=0@15+85 c=1@0+95");
	struct ulvm_lv *a = ulvm_lv_find(vg, "a");
	char *before = snapshot(vg), *after;
	uint32_t alloc0 = vg->pvs[0]->pe_alloc_count, alloc1 = vg->pvs[1]->pe_alloc_count;

	(void)state;
	/* 10 free extents in all: 11 more cannot be had. The first 5 would grow a in place and
	 * the next 5 would add a segment on pv1 before the allocator runs dry. */
	assert_int_equal(ulvm_lv_resize(vg, a, 21, NULL), -ENOSPC);
	assert_non_null(strstr(ulvm_last_error(), "Insufficient"));
	after = snapshot(vg);
	assert_string_equal(after, before);
	free(after);
	assert_int_equal(a->nsegs, 1);
	assert_int_equal(a->le_count, 10);
	assert_int_equal(a->segs[0].extent_count, 10);
	assert_int_equal(vg->pvs[0]->pe_alloc_count, alloc0);
	assert_int_equal(vg->pvs[1]->pe_alloc_count, alloc1);
	/* striped growth that cannot be met */
	{
		struct ulvm_lv_params p = {.stripes = 2};
		assert_int_equal(ulvm_lv_resize(vg, a, 30, &p), -ENOSPC);
		after = snapshot(vg);
		assert_string_equal(after, before);
		free(after);
	}
	/* a failed create leaves no trace either */
	{
		struct ulvm_lv_params p = {.name = "n", .extents = 11};
		struct ulvm_lv *lv;
		assert_int_equal(ulvm_lv_create(vg, &p, &lv), -ENOSPC);
		after = snapshot(vg);
		assert_string_equal(after, before);
		free(after);
	}
	/* and the exact amount still works afterwards */
	resize_ok(vg, a, 20, NULL);
	assert_int_equal(a->nsegs, 2);
	check_linear_seg(a, 0, 0, 15, vg->pvs[0], 0);
	check_linear_seg(a, 1, 15, 5, vg->pvs[1], 95);
	assert_int_equal(ulvm_vg_free_extents(vg), 0);
	check_no_overlap(vg);
	free(before);
	vg_free(vg);
}

/* Resizing LVs of types ulvm keeps verbatim is refused, the LV untouched. */
static void test_resize_kept_type_refused(void **state)
{
	uint32_t pes[] = {100};
	struct ulvm_vg *vg = build_vg(pes, 1, "a=0@0+10");
	struct ulvm_lv *a = ulvm_lv_find(vg, "a");

	(void)state;
	free(a->segs[0].type);
	a->segs[0].type = strdup("raid1");
	assert_non_null(a->segs[0].type);
	a->segs[0].segtype = segtype_find("raid1"); /* as import would have found it */
	assert_int_equal(ulvm_lv_resize(vg, a, 20, NULL), -EOPNOTSUPP);
	assert_int_equal(ulvm_lv_remove(vg, a), -EOPNOTSUPP);
	assert_int_equal(a->le_count, 10);
	vg_free(vg);
}

/* ---- a device shorter than its PV -------------------------------------------------------- */

static char shrunk_log[4096];

static void capture_warnings(enum ulvm_log_level level, const char *msg, void *arg)
{
	size_t len = strlen(shrunk_log);

	(void)arg;
	if (level == ULVM_LOG_WARN)
		snprintf(shrunk_log + len, sizeof(shrunk_log) - len, "%s\n", msg);
}

static int remove_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	(void)st;
	(void)flag;
	(void)ftw;
	return remove(path);
}

static struct ulvm_ctx *ctx_for(const char *img, const char *locks)
{
	struct ulvm_ctx_opts o = {.devices = img, .lock_dir = locks};
	struct ulvm_ctx *ctx = NULL;

	if (ulvm_ctx_new(&o, &ctx))
		fail_msg("ulvm_ctx_new: %s", ulvm_last_error());
	return ctx;
}

/* A 64 MiB PV (15 extents of 4 MiB after 1 MiB of metadata) cut to 40 MiB keeps extents
 * 0-8 on the device: they are allocated, extent 9 never is, and reading the VG warns. */
static void test_stops_at_device_end(void **state)
{
	const char *tmp = getenv("TMPDIR");
	char dir[256], img[300], locks[300], want[600];
	const char *pvs[1];
	struct ulvm_ctx *ctx;
	struct ulvm_vg *vg = NULL;
	struct ulvm_lv_params p = {.name = "lv1", .extents = 3};
	struct ulvm_lv *lv = NULL;
	int fd;

	(void)state;
	snprintf(dir, sizeof(dir), "%s/ulvm-test-alloc-XXXXXX", tmp && *tmp ? tmp : "/tmp");
	assert_non_null(mkdtemp(dir));
	snprintf(img, sizeof(img), "%s/a.img", dir);
	snprintf(locks, sizeof(locks), "%s/locks", dir);
	fd = open(img, O_RDWR | O_CREAT | O_TRUNC, 0600);
	assert_true(fd >= 0);
	assert_int_equal(ftruncate(fd, 64 << 20), 0);
	close(fd);
	pvs[0] = img;
	ctx = ctx_for(img, locks);
	if (ulvm_vgcreate(ctx, "tvg", pvs, 1, NULL) ||
	    ulvm_vg_open(ctx, "tvg", ULVM_LOCK_WRITE, &vg) || ulvm_lv_create(vg, &p, NULL) ||
	    ulvm_vg_commit(vg, "test"))
		fail_msg("setting up: %s", ulvm_last_error());
	ulvm_vg_close(vg);
	ulvm_ctx_free(ctx);
	assert_int_equal(truncate(img, 40 << 20), 0);

	shrunk_log[0] = 0;
	ulvm_set_log(capture_warnings, NULL, ULVM_LOG_WARN);
	ctx = ctx_for(img, locks);
	if (ulvm_vg_open(ctx, "tvg", ULVM_LOCK_WRITE, &vg))
		fail_msg("ulvm_vg_open: %s", ulvm_last_error());
	assert_int_equal(vg->pvs[0]->pe_count, 15);
	snprintf(want, sizeof(want),
	         "Device %s has size of 81920 sectors which is smaller than corresponding PV "
	         "size of 131072 sectors. Was device resized?\n"
	         "One or more devices used as PVs in VG tvg have changed sizes.\n",
	         img);
	assert_string_equal(shrunk_log, want);

	p.name = "lv2";
	p.extents = 7; /* one more than the device holds */
	assert_int_equal(ulvm_lv_create(vg, &p, NULL), -ENOSPC);
	p.extents = 6;
	if (ulvm_lv_create(vg, &p, &lv))
		fail_msg("lv2: %s", ulvm_last_error());
	assert_int_equal(lv->nsegs, 1);
	assert_int_equal(lv->segs[0].areas[0].pe, 3);
	assert_int_equal(lv->segs[0].extent_count, 6);
	assert_int_equal(ulvm_lv_resize(vg, lv, 7, NULL), -ENOSPC);
	ulvm_vg_close(vg);
	ulvm_ctx_free(ctx);
	ulvm_set_log(NULL, NULL, ULVM_LOG_WARN);
	assert_int_equal(nftw(dir, remove_entry, 8, FTW_DEPTH | FTW_PHYS), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_linear_first_fit),
	    cmocka_unit_test(test_linear_spans_pvs_when_needed),
	    cmocka_unit_test(test_extend_in_place),
	    cmocka_unit_test(test_extend_new_segment),
	    cmocka_unit_test(test_striped_pv_order),
	    cmocka_unit_test(test_striped_prefers_whole_ranges),
	    cmocka_unit_test(test_striped_insufficient),
	    cmocka_unit_test(test_not_enough_space),
	    cmocka_unit_test(test_contiguous),
	    cmocka_unit_test(test_contiguous_extend_in_place),
	    cmocka_unit_test(test_restrict_pvs),
	    cmocka_unit_test(test_free_ranges),
	    cmocka_unit_test(test_shrink),
	    cmocka_unit_test(test_shrink_striped),
	    cmocka_unit_test(test_failed_extension_unchanged),
	    cmocka_unit_test(test_resize_kept_type_refused),
	    cmocka_unit_test(test_stops_at_device_end),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
