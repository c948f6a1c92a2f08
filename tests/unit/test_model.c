/* Unit tests for lvm/import and lvm/export (with lvm/model): real LVM2 metadata texts (raw
 * on-disk copies and vgcfgbackup files from tests/data) imported, exported in both forms,
 * re-parsed and re-imported into an identical model; kept keys, kept segment types and kept
 * sections survive in order; malformed VGs are refused with a message naming the object. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cmocka.h>

#include "lvm/lvm.h"

#include "test_fixture.h"

/* ---- helpers ------------------------------------------------------------------------------ */

/* Parse and import; returns the error and leaves *out NULL on failure. */
static int import_text(const char *text, size_t len, const char *what, struct ulvm_vg **out)
{
	struct cfg_tree *tree = NULL;
	int r;

	*out = NULL;
	ulvm_clear_error();
	r = cfg_parse(text, len, what, &tree);
	if (r)
		return r;
	r = vg_import(NULL, tree, what, out);
	cfg_tree_free(tree);
	return r;
}

static struct ulvm_vg *import_ok(const char *text, size_t len, const char *what)
{
	struct ulvm_vg *vg = NULL;
	int r = import_text(text, len, what, &vg);

	if (r)
		fail_msg("import of %s failed (%d): %s", what, r, ulvm_last_error());
	assert_non_null(vg);
	return vg;
}

static struct ulvm_vg *import_file(const char *name)
{
	size_t len;
	char *t = fixture_load(name, &len);
	struct ulvm_vg *vg = import_ok(t, len, name);

	free(t);
	return vg;
}

static char *export_ok(const struct ulvm_vg *vg, bool file_form, size_t *len)
{
	char *text = NULL;
	size_t l = 0;
	int r = vg_export(vg, file_form, "test export", &text, &l);

	if (r)
		fail_msg("export failed (%d): %s", r, ulvm_last_error());
	assert_non_null(text);
	if (!file_form) {
		/* raw form: one NUL at the end, counted in the length */
		assert_true(l > 0);
		assert_int_equal(text[l - 1], '\0');
		assert_int_equal(strlen(text), l - 1);
	} else {
		assert_int_equal(strlen(text), l);
	}
	if (len)
		*len = l;
	return text;
}

/* The text of the VG section only: from "<name> {" at the start of a line to the brace that
 * closes it (braces in strings and comments skipped). Leaves out the header (time, host,
 * description), which differs from one export to the next. */
static char *vg_section_text(const char *text, const char *vgname)
{
	char pat[256];
	const char *a, *p;
	int depth = 0;
	char *out;

	snprintf(pat, sizeof(pat), "%s {\n", vgname);
	if (!strncmp(text, pat, strlen(pat))) {
		a = text;
	} else {
		snprintf(pat, sizeof(pat), "\n%s {\n", vgname);
		a = strstr(text, pat);
		if (!a)
			fail_msg("no section \"%s\" in the text", vgname);
		a++;
	}
	for (p = a; *p; p++) {
		if (*p == '"') {
			for (p++; *p && *p != '"'; p++)
				if (*p == '\\' && p[1])
					p++;
		} else if (*p == '#') {
			while (p[1] && p[1] != '\n')
				p++;
		} else if (*p == '{') {
			depth++;
		} else if (*p == '}' && --depth == 0) {
			break;
		}
	}
	assert_int_equal(*p, '}');
	out = strndup(a, (size_t)(p + 1 - a));
	assert_non_null(out);
	return out;
}

/* ---- model comparison --------------------------------------------------------------------- */

static void cmp_value(const struct cfg_value *a, const struct cfg_value *b, const char *where)
{
	if (a->type != b->type)
		fail_msg("%s: value type %d != %d", where, a->type, b->type);
	if (a->type == CFG_INT && a->i != b->i)
		fail_msg("%s: %lld != %lld", where, (long long)a->i, (long long)b->i);
	if (a->type != CFG_INT && strcmp(a->s, b->s))
		fail_msg("%s: \"%s\" != \"%s\"", where, a->s, b->s);
}

/* Deep, ordered comparison of two sibling lists. */
static void cmp_nodes(const struct cfg_node *a, const struct cfg_node *b, const char *where)
{
	char w[512];

	for (; a && b; a = a->next, b = b->next) {
		snprintf(w, sizeof(w), "%s/%s", where, a->key);
		if (strcmp(a->key, b->key))
			fail_msg("%s: key order differs: \"%s\" vs \"%s\"", where, a->key, b->key);
		if (a->kind != b->kind)
			fail_msg("%s: node kind %d != %d", w, a->kind, b->kind);
		switch (a->kind) {
		case CFG_ASSIGN:
			cmp_value(&a->v, &b->v, w);
			break;
		case CFG_ARRAY:
			if (a->nitems != b->nitems)
				fail_msg("%s: %zu items != %zu", w, a->nitems, b->nitems);
			for (size_t i = 0; i < a->nitems; i++)
				cmp_value(&a->items[i], &b->items[i], w);
			break;
		case CFG_SECTION:
			cmp_nodes(a->child, b->child, w);
			break;
		}
	}
	if (a || b)
		fail_msg("%s: extra key \"%s\" on one side", where, a ? a->key : b->key);
}

static void cmp_extra(const struct cfg_node *a, const struct cfg_node *b, const char *where)
{
	if (!a || !b) {
		if ((a && a->child) || (b && b->child))
			fail_msg("%s: kept keys on one side only", where);
		return;
	}
	cmp_nodes(a->child, b->child, where);
}

static void cmp_strlist(const struct ulvm_strlist *a, const struct ulvm_strlist *b,
                        const char *where)
{
	if (a->n != b->n)
		fail_msg("%s: %zu words != %zu", where, a->n, b->n);
	for (size_t i = 0; i < a->n; i++)
		if (strcmp(a->v[i], b->v[i]))
			fail_msg("%s[%zu]: \"%s\" != \"%s\"", where, i, a->v[i], b->v[i]);
}

static void cmp_str(const char *a, const char *b, const char *where)
{
	if ((!a) != (!b) || (a && strcmp(a, b)))
		fail_msg("%s: \"%s\" != \"%s\"", where, a ? a : "(null)", b ? b : "(null)");
}

static void cmp_pv(const struct ulvm_pv *a, const struct ulvm_pv *b)
{
	char w[128];

	snprintf(w, sizeof(w), "PV %s", a->key);
	cmp_str(a->key, b->key, w);
	assert_string_equal(a->uuid, b->uuid);
	cmp_str(a->device_hint, b->device_hint, w);
	assert_int_equal(a->dev_size, b->dev_size);
	assert_int_equal(a->pe_start, b->pe_start);
	assert_int_equal(a->pe_count, b->pe_count);
	assert_int_equal(a->ba_start, b->ba_start);
	assert_int_equal(a->ba_size, b->ba_size);
	cmp_strlist(&a->status, &b->status, w);
	cmp_strlist(&a->flags, &b->flags, w);
	cmp_strlist(&a->tags, &b->tags, w);
	cmp_extra(a->extra, b->extra, w);
	assert_int_equal(a->missing, b->missing);
	assert_int_equal(a->pe_alloc_count, b->pe_alloc_count);
}

static void cmp_seg(const struct ulvm_seg *a, const struct ulvm_seg *b, const char *w)
{
	assert_int_equal(a->start_extent, b->start_extent);
	assert_int_equal(a->extent_count, b->extent_count);
	cmp_str(a->type, b->type, w);
	assert_int_equal(a->stripe_count, b->stripe_count);
	assert_int_equal(a->stripe_size, b->stripe_size);
	assert_int_equal(!a->areas, !b->areas);
	for (uint32_t i = 0; a->areas && i < a->stripe_count; i++) {
		const struct ulvm_area *x = &a->areas[i], *y = &b->areas[i];
		assert_int_equal(x->type, y->type);
		assert_int_equal(x->pe, y->pe);
		if (x->type == ULVM_AREA_PV)
			assert_string_equal(x->pv->key, y->pv->key);
		else
			assert_string_equal(x->lv_name, y->lv_name);
	}
	cmp_strlist(&a->tags, &b->tags, w);
	cmp_extra(a->extra, b->extra, w);
}

static void cmp_lv(const struct ulvm_lv *a, const struct ulvm_lv *b)
{
	char w[256];

	snprintf(w, sizeof(w), "LV %s", a->name);
	assert_string_equal(a->name, b->name);
	assert_string_equal(a->uuid, b->uuid);
	cmp_strlist(&a->status, &b->status, w);
	cmp_strlist(&a->flags, &b->flags, w);
	cmp_strlist(&a->tags, &b->tags, w);
	assert_int_equal(a->creation_time, b->creation_time);
	cmp_str(a->creation_host, b->creation_host, w);
	cmp_extra(a->extra, b->extra, w);
	assert_int_equal(a->le_count, b->le_count);
	assert_int_equal(a->nsegs, b->nsegs);
	for (size_t s = 0; s < a->nsegs; s++) {
		char ws[300];
		snprintf(ws, sizeof(ws), "%s segment %zu", w, s + 1);
		cmp_seg(&a->segs[s], &b->segs[s], ws);
	}
}

/* LVs are compared by name: the exporter writes visible LVs before hidden ones, as LVM2
 * does, so their order may change. PVs keep their order. */
static void cmp_vg(const struct ulvm_vg *a, const struct ulvm_vg *b)
{
	assert_string_equal(a->name, b->name);
	assert_string_equal(a->uuid, b->uuid);
	assert_int_equal(a->seqno, b->seqno);
	cmp_str(a->format, b->format, "VG format");
	cmp_strlist(&a->status, &b->status, "VG status");
	cmp_strlist(&a->flags, &b->flags, "VG flags");
	cmp_strlist(&a->tags, &b->tags, "VG tags");
	assert_int_equal(a->extent_size, b->extent_size);
	assert_int_equal(a->max_lv, b->max_lv);
	assert_int_equal(a->max_pv, b->max_pv);
	assert_int_equal(a->metadata_copies, b->metadata_copies);
	cmp_extra(a->extra, b->extra, "VG");
	cmp_extra(a->extra_sections, b->extra_sections, "VG sections");
	assert_int_equal(a->npvs, b->npvs);
	for (size_t i = 0; i < a->npvs; i++)
		cmp_pv(a->pvs[i], b->pvs[i]);
	assert_int_equal(a->nlvs, b->nlvs);
	for (size_t i = 0; i < a->nlvs; i++) {
		struct ulvm_lv *o = ulvm_lv_find((struct ulvm_vg *)b, a->lvs[i]->name);
		if (!o)
			fail_msg("LV %s missing after the round trip", a->lvs[i]->name);
		cmp_lv(a->lvs[i], o);
	}
	assert_int_equal(ulvm_vg_free_extents(a), ulvm_vg_free_extents(b));
}

/* Import -> export (raw and file) -> parse -> import; both must equal the first model, and
 * exporting the second model must give the same text again (a fixed point). */
static void round_trip(struct ulvm_vg *vg)
{
	for (int form = 0; form < 2; form++) {
		size_t len, len2;
		char *t1 = export_ok(vg, form, &len);
		struct ulvm_vg *vg2 = import_ok(t1, len, form ? "exported file" : "exported raw");
		char *t2 = export_ok(vg2, form, &len2);
		char *s1 = vg_section_text(t1, vg->name), *s2 = vg_section_text(t2, vg->name);

		cmp_vg(vg, vg2);
		assert_string_equal(s1, s2);
		free(s1);
		free(s2);
		free(t1);
		free(t2);
		vg_free(vg2);
	}
}

/* ---- the LVM2 samples ----------------------------------------------------------------------- */

static void test_import_linear_striped(void **state)
{
	struct ulvm_vg *vg = import_file("lvm2-raw-linear-striped.txt");
	struct ulvm_lv *lin, *str;

	(void)state;
	assert_string_equal(vg->name, "specvg");
	assert_string_equal(vg->uuid, "3P4OrCb9N0cW05JQ8IRBZ6O77WmrtygL");
	assert_int_equal(vg->seqno, 5);
	assert_int_equal(vg->extent_size, 8192);
	assert_int_equal(vg->metadata_copies, 0);
	assert_true(ulvm_strlist_has(&vg->status, "RESIZEABLE"));
	assert_int_equal(vg->npvs, 2);
	assert_string_equal(vg->pvs[0]->key, "pv0");
	assert_string_equal(vg->pvs[0]->uuid, "F7dY1vFdeEyrfPl39qzvygqeEAh06R6U");
	assert_string_equal(vg->pvs[0]->device_hint, "/dev/loop2");
	assert_null(vg->pvs[0]->device);
	assert_int_equal(vg->pvs[0]->dev_size, 524288);
	assert_int_equal(vg->pvs[0]->pe_start, 2048);
	assert_int_equal(vg->pvs[0]->pe_count, 63);
	/* lin: 3 + 2, str: 2 per stripe, lin2: 2 on pv0; str: 2 on pv1 */
	assert_int_equal(vg->pvs[0]->pe_alloc_count, 9);
	assert_int_equal(vg->pvs[1]->pe_alloc_count, 2);
	assert_int_equal(ulvm_vg_total_extents(vg), 126);
	assert_int_equal(ulvm_vg_free_extents(vg), 115);

	assert_int_equal(vg->nlvs, 3);
	lin = ulvm_lv_find(vg, "lin");
	assert_non_null(lin);
	assert_int_equal(lin->nsegs, 2);
	assert_int_equal(lin->le_count, 5);
	assert_int_equal(lin->creation_time, 1796001738);
	assert_string_equal(lin->creation_host, "vm");
	assert_string_equal(lin->segs[1].type, "striped");
	assert_int_equal(lin->segs[1].start_extent, 3);
	assert_int_equal(lin->segs[1].extent_count, 2);
	assert_int_equal(lin->segs[1].areas[0].type, ULVM_AREA_PV);
	assert_ptr_equal(lin->segs[1].areas[0].pv, vg->pvs[0]);
	assert_int_equal(lin->segs[1].areas[0].pe, 7);
	assert_string_equal(ulvm_lv_segtype(lin), "linear");
	assert_true(ulvm_lv_visible(lin));

	str = ulvm_lv_find(vg, "str");
	assert_non_null(str);
	assert_string_equal(ulvm_lv_segtype(str), "striped");
	assert_int_equal(str->segs[0].stripe_count, 2);
	assert_int_equal(str->segs[0].stripe_size, 128);
	assert_ptr_equal(str->segs[0].areas[1].pv, vg->pvs[1]);
	assert_int_equal(str->segs[0].areas[0].pe, 3);
	assert_null(ulvm_lv_find(vg, "nope"));

	round_trip(vg);
	vg_free(vg);
}

/* The raw and backup forms of the same VG give the same model. */
static void test_raw_and_file_forms_agree(void **state)
{
	static const char *const pairs[][2] = {
	    {"lvm2-raw-linear-striped.txt", "lvm2-backup-linear-striped.vg"},
	    {"lvm2-raw-tags-oddnames.txt", "lvm2-backup-tags-oddnames.vg"},
	    {"lvm2-raw-thin-snapshot.txt", "lvm2-backup-thin-snapshot.vg"},
	};

	(void)state;
	for (size_t i = 0; i < sizeof(pairs) / sizeof(pairs[0]); i++) {
		struct ulvm_vg *a = import_file(pairs[i][0]), *b = import_file(pairs[i][1]);
		cmp_vg(a, b);
		round_trip(a);
		round_trip(b);
		vg_free(a);
		vg_free(b);
	}
}

/* For a VG with nothing ulvm orders differently, the VG section is byte-identical to what
 * LVM2 wrote, in both forms. */
static void test_export_matches_lvm2_bytes(void **state)
{
	struct ulvm_vg *vg = import_file("lvm2-raw-linear-striped.txt");
	char *orig_raw = fixture_load("lvm2-raw-linear-striped.txt", NULL);
	char *orig_file = fixture_load("lvm2-backup-linear-striped.vg", NULL);
	char *raw = export_ok(vg, false, NULL), *file = export_ok(vg, true, NULL);
	char *a, *b;

	(void)state;
	a = vg_section_text(orig_raw, "specvg");
	b = vg_section_text(raw, "specvg");
	assert_string_equal(b, a);
	free(a);
	free(b);
	a = vg_section_text(orig_file, "specvg");
	b = vg_section_text(file, "specvg");
	assert_string_equal(b, a);
	free(a);
	free(b);
	/* raw: VG first, header after it; file: header first */
	assert_true(!strncmp(raw, "specvg {\n", 9));
	assert_non_null(strstr(raw, "\ncontents = \"Text Format Volume Group\"\n"));
	assert_non_null(strstr(raw, "\nversion = 1\n"));
	assert_non_null(strstr(raw, "\ndescription = \"test export\"\n"));
	assert_null(strchr(raw, '\t'));
	assert_true(!strncmp(file, "# Generated by ulvm", 19));
	assert_true(strstr(file, "contents = ") < strstr(file, "specvg {"));
	free(raw);
	free(file);
	free(orig_raw);
	free(orig_file);
	vg_free(vg);
}

/* LVM2 ends the VG section with an empty line before its closing brace. */
static void test_export_blank_before_vg_end(void **state)
{
	struct ulvm_vg *vg = import_file("lvm2-raw-linear-striped.txt");
	char *raw = export_ok(vg, false, NULL);
	char *sec = vg_section_text(raw, "specvg");
	size_t n = strlen(sec);
	bool ok = n >= 3 && !strcmp(sec + n - 3, "\n\n}");

	(void)state;
	free(sec);
	free(raw);
	vg_free(vg);
	assert_true(ok);
}

static void test_import_tags_oddnames(void **state)
{
	struct ulvm_vg *vg = import_file("lvm2-backup-tags-oddnames.vg");
	struct ulvm_lv *lv;

	(void)state;
	assert_string_equal(vg->name, "odd.vg_1+x");
	assert_int_equal(vg->tags.n, 2);
	assert_string_equal(vg->tags.v[0], "vgtag1");
	assert_string_equal(vg->tags.v[1], "vg.tag+2");
	assert_int_equal(vg->extent_size, 2048);
	/* allocation_policy is kept, not interpreted */
	assert_non_null(vg->extra);
	assert_string_equal(vg->extra->child->key, "allocation_policy");
	assert_string_equal(vg->extra->child->v.s, "contiguous");
	assert_int_equal(vg->pvs[0]->tags.n, 1);
	assert_string_equal(vg->pvs[0]->tags.v[0], "pv_tag/x=1");
	assert_int_equal(vg->pvs[1]->tags.n, 0);

	lv = ulvm_lv_find(vg, "lv+plus");
	assert_non_null(lv);
	assert_string_equal(lv->tags.v[0], "lt:1&a");
	assert_true(ulvm_strlist_has(&lv->status, "FIXED_MINOR"));
	assert_non_null(lv->extra);
	assert_string_equal(lv->extra->child->key, "major");
	assert_string_equal(lv->extra->child->next->key, "minor");
	assert_int_equal(lv->extra->child->next->v.i, 77);
	lv = ulvm_lv_find(vg, "lv.dot");
	assert_non_null(lv);
	assert_string_equal(lv->extra->child->key, "read_ahead");
	assert_int_equal(lv->extra->child->v.i, -1);
	assert_non_null(ulvm_lv_find(vg, "_under-score"));
	lv = ulvm_lv_find(vg, "a-b.c+d_e");
	assert_non_null(lv);
	assert_string_equal(lv->tags.v[0], "t#h!x");

	round_trip(vg);
	vg_free(vg);
}

static void test_import_thin_snapshot(void **state)
{
	struct ulvm_vg *vg = import_file("lvm2-raw-thin-snapshot.txt");
	struct ulvm_lv *pool, *thin, *snap;
	const struct cfg_node *n;
	static const char *const pool_keys[] = {"metadata",   "pool",     "transaction_id",
	                                        "chunk_size", "discards", "zero_new_blocks"};
	size_t i = 0;

	(void)state;
	assert_int_equal(vg->nlvs, 9);
	pool = ulvm_lv_find(vg, "pool");
	assert_non_null(pool);
	assert_string_equal(ulvm_lv_segtype(pool), "thin-pool");
	/* its one area is the data LV (the pool's extents are that LV's) */
	assert_int_equal(pool->segs[0].area_count, 1);
	assert_int_equal(pool->segs[0].areas[0].type, ULVM_AREA_LV);
	assert_string_equal(pool->segs[0].areas[0].lv_name, "pool_tdata");
	assert_int_equal(pool->segs[0].extent_count, 16);
	for (n = pool->segs[0].extra->child; n; n = n->next, i++) {
		assert_true(i < 6);
		assert_string_equal(n->key, pool_keys[i]);
	}
	assert_int_equal(i, 6);
	thin = ulvm_lv_find(vg, "thinsnap");
	assert_non_null(thin);
	assert_string_equal(ulvm_lv_segtype(thin), "thin");
	snap = ulvm_lv_find(vg, "snapshot0");
	assert_non_null(snap);
	assert_string_equal(ulvm_lv_segtype(snap), "snapshot");
	/* kept segments reference LVs by name */
	assert_true(vg_lv_referenced(vg, "pool_tdata"));
	assert_true(vg_lv_referenced(vg, "snap"));
	assert_true(vg_lv_referenced(vg, "thin1"));
	assert_false(vg_lv_referenced(vg, "lin2"));
	/* striped LVs only count towards PV use: 2+2+16+1+1 */
	assert_int_equal(vg->pvs[0]->pe_alloc_count, 22);
	assert_false(ulvm_lv_visible(ulvm_lv_find(vg, "pool_tmeta")));

	round_trip(vg);
	vg_free(vg);
}

/* ---- kept keys, kept types, kept sections -----------------------------------------------------
 */

static const char kept_text[] = "keepvg {\n"
                                "id = \"aaaaaa-bbbb-cccc-dddd-eeee-ffff-gggggg\"\n"
                                "seqno = 42\n"
                                "format = \"lvm2\"\n"
                                "status = [\"RESIZEABLE\", \"READ\", \"WRITE\"]\n"
                                "flags = []\n"
                                "foo_bar = 7\n"
                                "system_id = \"host1\"\n"
                                "extent_size = 8192\n"
                                "max_lv = 0\n"
                                "max_pv = 0\n"
                                "allocation_policy = \"normal\"\n"
                                "metadata_copies = 0\n"
                                "future_list = [\"x\", 1, \"y\"]\n"
                                "physical_volumes {\n"
                                "pv0 {\n"
                                "id = \"pv0pv0-bbbb-cccc-dddd-eeee-ffff-gggggg\"\n"
                                "device = \"/dev/sda\"\n"
                                "status = [\"ALLOCATABLE\"]\n"
                                "flags = []\n"
                                "foo_bar = 7\n"
                                "dev_size = 2097152\n"
                                "pe_start = 2048\n"
                                "pe_count = 255\n"
                                "pv_weird = \"w\"\n"
                                "}\n"
                                "}\n"
                                "logical_volumes {\n"
                                "lin {\n"
                                "id = \"lin000-bbbb-cccc-dddd-eeee-ffff-gggggg\"\n"
                                "status = [\"READ\", \"WRITE\", \"VISIBLE\"]\n"
                                "flags = []\n"
                                "creation_time = 1700000000\n"
                                "creation_host = \"h\"\n"
                                "foo_bar = 7\n"
                                "read_ahead = -1\n"
                                "ratio = 1.5\n"
                                "segment_count = 1\n"
                                "segment1 {\n"
                                "start_extent = 0\n"
                                "extent_count = 10\n"
                                "type = \"striped\"\n"
                                "stripe_count = 1\n"
                                "foo_bar = 7\n"
                                "stripes = [\"pv0\", 0]\n"
                                "seg_after = \"z\"\n"
                                "}\n"
                                "}\n"
                                "cow {\n"
                                "id = \"cow000-bbbb-cccc-dddd-eeee-ffff-gggggg\"\n"
                                "status = [\"READ\", \"WRITE\"]\n"
                                "flags = []\n"
                                "segment_count = 1\n"
                                "segment1 {\n"
                                "start_extent = 0\n"
                                "extent_count = 2\n"
                                "type = \"striped\"\n"
                                "stripe_count = 1\n"
                                "stripes = [\"pv0\", 10]\n"
                                "}\n"
                                "}\n"
                                "snapshot0 {\n"
                                "id = \"snap00-bbbb-cccc-dddd-eeee-ffff-gggggg\"\n"
                                "status = [\"READ\", \"WRITE\", \"VISIBLE\"]\n"
                                "flags = []\n"
                                "segment_count = 1\n"
                                "segment1 {\n"
                                "start_extent = 0\n"
                                "extent_count = 10\n"
                                "type = \"snapshot\"\n"
                                "chunk_size = 8\n"
                                "origin = \"lin\"\n"
                                "cow_store = \"cow\"\n"
                                "foo_bar = 7\n"
                                "}\n"
                                "}\n"
                                "pool {\n"
                                "id = \"pool00-bbbb-cccc-dddd-eeee-ffff-gggggg\"\n"
                                "status = [\"READ\", \"WRITE\", \"VISIBLE\"]\n"
                                "flags = []\n"
                                "segment_count = 1\n"
                                "segment1 {\n"
                                "start_extent = 0\n"
                                "extent_count = 16\n"
                                "type = \"thin-pool\"\n"
                                "metadata = \"pool_tmeta\"\n"
                                "pool = \"pool_tdata\"\n"
                                "transaction_id = 3\n"
                                "chunk_size = 128\n"
                                "discards = \"passdown\"\n"
                                "zero_new_blocks = 1\n"
                                "foo_bar = 7\n"
                                "}\n"
                                "}\n"
                                "thin1 {\n"
                                "id = \"thin01-bbbb-cccc-dddd-eeee-ffff-gggggg\"\n"
                                "status = [\"READ\", \"WRITE\", \"VISIBLE\"]\n"
                                "flags = []\n"
                                "segment_count = 2\n"
                                "segment2 {\n"
                                "start_extent = 25\n"
                                "extent_count = 5\n"
                                "type = \"thin\"\n"
                                "thin_pool = \"pool\"\n"
                                "transaction_id = 1\n"
                                "device_id = 2\n"
                                "}\n"
                                "segment1 {\n"
                                "start_extent = 0\n"
                                "extent_count = 25\n"
                                "type = \"thin\"\n"
                                "thin_pool = \"pool\"\n"
                                "transaction_id = 0\n"
                                "device_id = 1\n"
                                "}\n"
                                "}\n"
                                "pool_tdata {\n"
                                "id = \"tdata0-bbbb-cccc-dddd-eeee-ffff-gggggg\"\n"
                                "status = [\"READ\", \"WRITE\"]\n"
                                "flags = []\n"
                                "segment_count = 1\n"
                                "segment1 {\n"
                                "start_extent = 0\n"
                                "extent_count = 16\n"
                                "type = \"striped\"\n"
                                "stripe_count = 1\n"
                                "stripes = [\"pv0\", 12]\n"
                                "}\n"
                                "}\n"
                                "pool_tmeta {\n"
                                "id = \"tmeta0-bbbb-cccc-dddd-eeee-ffff-gggggg\"\n"
                                "status = [\"READ\", \"WRITE\"]\n"
                                "flags = []\n"
                                "segment_count = 1\n"
                                "segment1 {\n"
                                "start_extent = 0\n"
                                "extent_count = 1\n"
                                "type = \"striped\"\n"
                                "stripe_count = 1\n"
                                "stripes = [\"pv0\", 28]\n"
                                "}\n"
                                "}\n"
                                "}\n"
                                "historical_logical_volumes {\n"
                                "hist1 {\n"
                                "id = \"hist01-bbbb-cccc-dddd-eeee-ffff-gggggg\"\n"
                                "creation_time = 1600000000\n"
                                "removal_time = 1600000100\n"
                                "descendants = [\"thin1\"]\n"
                                "}\n"
                                "}\n"
                                "}\n"
                                "contents = \"Text Format Volume Group\"\n"
                                "version = 1\n"
                                "description = \"\"\n"
                                "creation_host = \"h\"\n"
                                "creation_time = 1700000000\n";

/* Keys of section `path` ("keepvg/logical_volumes/pool/segment1") in a parsed tree. */
static const struct cfg_node *section_at(const struct cfg_tree *t, const char *path)
{
	char buf[256], *save = NULL;
	const struct cfg_node *n = NULL;

	snprintf(buf, sizeof(buf), "%s", path);
	for (char *tok = strtok_r(buf, "/", &save); tok; tok = strtok_r(NULL, "/", &save)) {
		n = cfg_find(t, n, tok);
		if (!n)
			fail_msg("section %s: \"%s\" not found", path, tok);
	}
	return n;
}

/* The keys in `sec` that are among `names`, in order, joined with ','. */
static void keys_of(const struct cfg_node *sec, const char *const *names, char *out, size_t len)
{
	out[0] = '\0';
	for (const struct cfg_node *n = sec->child; n; n = n->next)
		for (size_t i = 0; names[i]; i++)
			if (!strcmp(n->key, names[i])) {
				strncat(out, n->key, len - strlen(out) - 1);
				strncat(out, ",", len - strlen(out) - 1);
			}
}

static void check_kept_in_tree(const struct cfg_tree *orig, const struct cfg_tree *t)
{
	static const char *const vg_kept[] = {"foo_bar", "system_id", "allocation_policy",
	                                      "future_list", NULL};
	static const char *const pv_kept[] = {"foo_bar", "pv_weird", NULL};
	static const char *const lv_kept[] = {"foo_bar", "read_ahead", "ratio", NULL};
	static const char *const seg_kept[] = {"foo_bar", "seg_after", NULL};
	static const char *const *const sets[] = {vg_kept, pv_kept, lv_kept, seg_kept};
	static const char *const paths[] = {"keepvg", "keepvg/physical_volumes/pv0",
	                                    "keepvg/logical_volumes/lin",
	                                    "keepvg/logical_volumes/lin/segment1"};
	/* Whole sections that must come back exactly, every key in order. */
	static const char *const whole[] = {
	    "keepvg/logical_volumes/pool/segment1", "keepvg/logical_volumes/snapshot0/segment1",
	    "keepvg/logical_volumes/thin1/segment1", "keepvg/logical_volumes/thin1/segment2",
	    "keepvg/historical_logical_volumes"};
	char a[512], b[512];

	for (size_t i = 0; i < 4; i++) {
		keys_of(section_at(orig, paths[i]), sets[i], a, sizeof(a));
		keys_of(section_at(t, paths[i]), sets[i], b, sizeof(b));
		assert_string_equal(b, a);
		{
			const struct cfg_node *x =
			    cfg_find(orig, section_at(orig, paths[i]), "foo_bar");
			const struct cfg_node *y = cfg_find(t, section_at(t, paths[i]), "foo_bar");
			assert_non_null(x);
			assert_non_null(y);
			assert_int_equal(y->kind, CFG_ASSIGN);
			cmp_value(&x->v, &y->v, paths[i]);
			assert_int_equal(y->v.i, 7);
		}
	}
	for (size_t i = 0; i < sizeof(whole) / sizeof(whole[0]); i++) {
		const struct cfg_node *x = section_at(orig, whole[i]), *y = section_at(t, whole[i]);
		cmp_nodes(x->child, y->child, whole[i]);
	}
}

static void test_kept_items_round_trip(void **state)
{
	struct ulvm_vg *vg = import_ok(kept_text, sizeof(kept_text) - 1, "kept");
	struct cfg_tree *orig = NULL;
	struct ulvm_lv *lv;

	(void)state;
	assert_int_equal(cfg_parse(kept_text, sizeof(kept_text) - 1, "kept", &orig), 0);
	/* what went where */
	assert_non_null(vg->extra);
	assert_string_equal(vg->extra->child->key, "foo_bar");
	assert_int_equal(vg->extra->child->v.i, 7);
	assert_non_null(vg->extra_sections);
	assert_string_equal(vg->extra_sections->child->key, "historical_logical_volumes");
	assert_string_equal(vg->pvs[0]->extra->child->key, "foo_bar");
	lv = ulvm_lv_find(vg, "lin");
	assert_string_equal(lv->extra->child->key, "foo_bar");
	assert_string_equal(lv->segs[0].extra->child->key, "foo_bar");
	assert_string_equal(lv->segs[0].extra->child->next->key, "seg_after");
	lv = ulvm_lv_find(vg, "thin1");
	/* segments are sorted by start_extent */
	assert_int_equal(lv->segs[0].start_extent, 0);
	assert_int_equal(lv->segs[1].start_extent, 25);
	assert_int_equal(lv->le_count, 30);
	assert_string_equal(ulvm_lv_segtype(ulvm_lv_find(vg, "snapshot0")), "snapshot");
	assert_int_equal(vg->pvs[0]->pe_alloc_count, 10 + 2 + 16 + 1);

	round_trip(vg);

	/* import -> export -> parse: kept keys in the same order with the same values */
	for (int form = 0; form < 2; form++) {
		size_t len;
		char *text = export_ok(vg, form, &len);
		struct cfg_tree *t = NULL;
		struct ulvm_vg *vg2, *vg3;
		char *text2;
		size_t len2;

		assert_int_equal(cfg_parse(text, len, "exported", &t), 0);
		check_kept_in_tree(orig, t);
		/* once more through the model */
		vg2 = import_ok(text, len, "exported");
		text2 = export_ok(vg2, form, &len2);
		cfg_tree_free(t);
		t = NULL;
		assert_int_equal(cfg_parse(text2, len2, "exported twice", &t), 0);
		check_kept_in_tree(orig, t);
		vg3 = import_ok(text2, len2, "exported twice");
		cmp_vg(vg, vg3);
		cfg_tree_free(t);
		free(text);
		free(text2);
		vg_free(vg2);
		vg_free(vg3);
	}
	cfg_tree_free(orig);
	vg_free(vg);
}

/* Changing the model keeps what it does not touch: remove an LV, rename another. */
static void test_kept_items_survive_changes(void **state)
{
	struct ulvm_vg *vg = import_ok(kept_text, sizeof(kept_text) - 1, "kept");
	struct ulvm_vg *vg2;
	char *text;
	size_t len;

	(void)state;
	/* pool_tdata is used by the thin pool (and hidden); snapshot0 uses lin and cow */
	assert_int_equal(ulvm_lv_remove(vg, ulvm_lv_find(vg, "pool_tdata")), -EBUSY);
	assert_int_equal(ulvm_lv_rename(vg, ulvm_lv_find(vg, "pool_tdata"), "tdata2"), -EPERM);
	assert_int_equal(ulvm_lv_remove(vg, ulvm_lv_find(vg, "pool")), -EOPNOTSUPP);
	vg->seqno++;
	text = export_ok(vg, false, &len);
	vg2 = import_ok(text, len, "changed");
	cmp_vg(vg, vg2);
	free(text);
	vg_free(vg2);
	vg_free(vg);
}

/* ---- import errors ----------------------------------------------------------------------------
 */

/* A copy of `text` with the first `from` replaced by `to`. */
static char *replace1(const char *text, const char *from, const char *to)
{
	const char *p = strstr(text, from);
	size_t a, lf = strlen(from), lt = strlen(to), n = strlen(text);
	char *out;

	if (!p)
		fail_msg("\"%s\" not in the text", from);
	a = (size_t)(p - text);
	out = malloc(n - lf + lt + 1);
	assert_non_null(out);
	memcpy(out, text, a);
	memcpy(out + a, to, lt);
	memcpy(out + a + lt, p + lf, n - a - lf + 1);
	return out;
}

static void expect_import_error(const char *text, const char *what, const char *const *words)
{
	struct ulvm_vg *vg = (struct ulvm_vg *)1;
	int r = import_text(text, strlen(text), what, &vg);
	const char *msg = ulvm_last_error();

	if (r != -EINVAL)
		fail_msg("%s: import gave %d, not -EINVAL (%s)", what, r, msg ? msg : "");
	assert_null(vg);
	assert_non_null(msg);
	for (size_t i = 0; words[i]; i++)
		if (!strstr(msg, words[i]))
			fail_msg("%s: message \"%s\" does not name \"%s\"", what, msg, words[i]);
}

struct bad_case {
	const char *name, *from, *to;
	const char *words[4];
};

static void test_import_errors(void **state)
{
	static const struct bad_case cases[] = {
	    {"LV without id",
	     "id = \"hidUKo-kLfG-hZ19-vu7s-zk6r-kK3O-HTXgY4\"\n",
	     "",
	     {"specvg", "str", "id", NULL}},
	    {"PV without id",
	     "id = \"3BEzTc-mHg7-XsAF-I7jJ-yeAY-o8yL-pef3M6\"\n",
	     "",
	     {"specvg", "pv1", "id", NULL}},
	    {"bad LV id", "h5Gmpm-ZWAd", "h5Gmpm-ZW?d", {"specvg", "lin", "id", NULL}},
	    {"segment gap",
	     "start_extent = 3\n",
	     "start_extent = 4\n",
	     {"specvg", "lin", "gap", NULL}},
	    {"segment overlap",
	     "start_extent = 3\n",
	     "start_extent = 2\n",
	     {"specvg", "lin", "overlap", NULL}},
	    {"segment not at 0",
	     "start_extent = 0\nextent_count = 4\n",
	     "start_extent = 1\nextent_count = 4\n",
	     {"specvg", "str", NULL}},
	    {"stripe beyond PV end",
	     "\"pv0\", 5\n",
	     "\"pv0\", 62\n",
	     {"specvg", "lin2", "pv0", NULL}},
	    {"stripe of a striped seg beyond PV end",
	     "\"pv1\", 0\n",
	     "\"pv1\", 62\n",
	     {"specvg", "str", "pv1", NULL}},
	    {"unknown PV key in stripes",
	     "\"pv0\", 7\n",
	     "\"pv7\", 7\n",
	     {"specvg", "lin", "pv7", NULL}},
	    {"duplicate LV name", "\nlin2 {\n", "\nlin {\n", {"specvg", "lin", "twice", NULL}},
	    {"segment_count too high",
	     "segment_count = 2\n",
	     "segment_count = 3\n",
	     {"specvg", "lin", "segment_count", NULL}},
	    {"segment_count too low",
	     "segment_count = 2\n",
	     "segment_count = 1\n",
	     {"specvg", "lin", "segment_count", NULL}},
	    {"stripe_count mismatch",
	     "stripe_count = 2\n",
	     "stripe_count = 3\n",
	     {"specvg", "str", NULL}},
	    {"segment without type",
	     "type = \"striped\"\nstripe_count = 2\n",
	     "stripe_count = 2\n",
	     {"specvg", "str", "type", NULL}},
	    {"duplicate PV key", "\npv1 {\n", "\npv0 {\n", {"specvg", "pv0", NULL}},
	    {"negative pe_count",
	     "pe_count = 63\n",
	     "pe_count = -1\n",
	     {"specvg", "pv0", "pe_count", NULL}},
	    {"string extent_count",
	     "extent_count = 2\n",
	     "extent_count = \"2\"\n",
	     {"specvg", "lin", "extent_count", NULL}},
	    {"VG without id",
	     "id = \"3P4OrC-b9N0-cW05-JQ8I-RBZ6-O77W-mrtygL\"\n",
	     "",
	     {"specvg", "id", NULL}},
	    {"VG without seqno", "seqno = 5\n", "", {"specvg", "seqno", NULL}},
	    {"VG without extent_size", "extent_size = 8192\n", "", {"specvg", NULL}},
	    {"zero extent_size",
	     "extent_size = 8192\n",
	     "extent_size = 0\n",
	     {"specvg", "extent_size", NULL}},
	    {"no physical_volumes",
	     "physical_volumes {",
	     "physical_volumez {",
	     {"specvg", "physical_volumes", NULL}},
	    {"odd stripe_size",
	     "stripe_size = 128\n",
	     "stripe_size = 100\n",
	     {"specvg", "str", "stripe_size", NULL}},
	    {"wrong contents",
	     "contents = \"Text Format Volume Group\"",
	     "contents = \"Something else\"",
	     {"contents", NULL}},
	    {"version 2", "version = 1\n", "version = 2\n", {"version", NULL}},
	};
	char *text = fixture_load("lvm2-raw-linear-striped.txt", NULL);

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		char *bad = replace1(text, cases[i].from, cases[i].to);
		expect_import_error(bad, cases[i].name, cases[i].words);
		free(bad);
	}
	free(text);
}

/* More extents in use than a PV has, and two LVs on the same extents, are refused. */
static void test_import_overcommitted_pv(void **state)
{
	char *text = fixture_load("lvm2-raw-linear-striped.txt", NULL);
	/* lin (0..2, 7..8), str (3..4), lin2 (5..6) on pv0: 9 extents; a PV of 8 cannot hold
	 * them */
	char *bad = replace1(text, "pe_count = 63\n", "pe_count = 8\n");
	static const char *const words[] = {"specvg", "pv0", NULL};
	static const char *const words2[] = {"specvg", "pv0", "lin", "lin2", NULL};

	(void)state;
	expect_import_error(bad, "small PV", words);
	free(bad);
	/* lin2 moved onto lin's first extents: each fits, together they overlap */
	bad = replace1(text, "\"pv0\", 5\n", "\"pv0\", 1\n");
	expect_import_error(bad, "overlapping LVs", words2);
	free(bad);
	free(text);
}

/* ---- model helpers ------------------------------------------------------------------------------
 */

static void test_names_and_tags(void **state)
{
	char why[128];
	struct ulvm_strlist l = {0};

	(void)state;
	assert_true(lvm_name_valid("lv+plus", why, sizeof(why)));
	assert_true(lvm_name_valid("a-b.c+d_e", why, sizeof(why)));
	assert_false(lvm_name_valid("", why, sizeof(why)));
	assert_false(lvm_name_valid("-x", why, sizeof(why)));
	assert_false(lvm_name_valid(".", why, sizeof(why)));
	assert_false(lvm_name_valid("..", why, sizeof(why)));
	assert_false(lvm_name_valid("a b", why, sizeof(why)));
	assert_false(lvm_name_valid("x_tmeta", why, sizeof(why)));
	assert_false(lvm_name_valid("snapshot1", why, sizeof(why)));
	assert_false(lvm_name_valid("pvmove0", why, sizeof(why)));

	assert_int_equal(ulvm_tag_add(&l, "t#h!x"), 0);
	assert_int_equal(ulvm_tag_add(&l, "t#h!x"), 0); /* no duplicates */
	assert_int_equal(ulvm_tag_add(&l, "b"), 0);
	assert_int_equal(l.n, 2);
	assert_int_equal(ulvm_tag_add(&l, "bad tag"), -EINVAL);
	assert_int_equal(ulvm_tag_add(&l, ""), -EINVAL);
	assert_int_equal(ulvm_tag_del(&l, "t#h!x"), 0);
	assert_int_equal(l.n, 1);
	assert_string_equal(l.v[0], "b");
	strlist_free(&l);
}

static int setup_tz(void **state)
{
	(void)state;
	/* The file form writes local-time comments; the LVM2 samples were made in UTC. */
	setenv("TZ", "UTC", 1);
	tzset();
	return 0;
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_import_linear_striped),
	    cmocka_unit_test(test_raw_and_file_forms_agree),
	    cmocka_unit_test(test_export_matches_lvm2_bytes),
	    cmocka_unit_test(test_export_blank_before_vg_end),
	    cmocka_unit_test(test_import_tags_oddnames),
	    cmocka_unit_test(test_import_thin_snapshot),
	    cmocka_unit_test(test_kept_items_round_trip),
	    cmocka_unit_test(test_kept_items_survive_changes),
	    cmocka_unit_test(test_import_errors),
	    cmocka_unit_test(test_import_overcommitted_pv),
	    cmocka_unit_test(test_names_and_tags),
	};

	return cmocka_run_group_tests(tests, setup_tz, NULL);
}
