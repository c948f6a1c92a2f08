/*
 * libFuzzer target for lvm/import and lvm/export with the segment types' modules
 * (lvm/seg_*.c): whatever text parses and imports as a VG must export, in both forms, to a
 * text that imports again; the raw export of that VG must be the same text (export is a
 * fixed point after one round); and every LV's report view, lower devices and table must
 * come out without a crash (errors are fine: the PVs have no devices here).
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lvm/lvm.h"
#include "lvm/segtype.h"

static void die(const char *why)
{
	fprintf(stderr, "fuzz_import: %s (%s)\n", why, ulvm_last_error() ? ulvm_last_error() : "");
	abort();
}

static struct ulvm_vg *import(const char *text, size_t len)
{
	struct cfg_tree *t;
	struct ulvm_vg *vg = NULL;

	if (cfg_parse(text, len, "fuzz", &t))
		return NULL;
	if (vg_import(NULL, t, "fuzz", &vg))
		vg = NULL;
	cfg_tree_free(t);
	return vg;
}

/* The VG section of a raw export: the header after it holds the time of the export. */
static size_t vg_part(const char *text)
{
	const char *mark = "contents = \"Text Format Volume Group\"", *last = NULL;

	for (const char *p = strstr(text, mark); p; p = strstr(p + 1, mark))
		last = p;
	if (!last)
		die("raw export without its header");
	return (size_t)(last - text);
}

static char *export(const struct ulvm_vg *vg, bool file_form, size_t *len)
{
	char *text;

	if (vg_export(vg, file_form, "fuzz", &text, len))
		die("export failed");
	return text;
}

static int count_lower(void *arg, const struct ulvm_lv *lower, const char *layer)
{
	(void)lower;
	(void)layer;
	++*(size_t *)arg;
	return 0;
}

static void look_at_lvs(const struct ulvm_vg *vg)
{
	for (size_t i = 0; i < vg->nlvs; i++) {
		const struct ulvm_lv *lv = vg->lvs[i];
		struct ulvm_lv_info info;
		size_t n = 0;
		char *table = NULL;

		ulvm_lv_info(vg, lv, &info);
		if (!info.segtype || !info.layout || !info.role || !info.target)
			die("ulvm_lv_info left a field unset");
		(void)lv_lower_devices(vg, lv, count_lower, &n);
		if (!ulvm_lv_table(vg, lv, &table))
			free(table);
		for (size_t s = 0; s < lv->nsegs; s++)
			if (!ulvm_seg_type(&lv->segs[s]))
				die("segment without a type name");
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct ulvm_vg *vg = import((const char *)data, size), *again;
	char *raw, *raw2, *file;
	size_t len, len2, flen;

	if (!vg)
		return 0;
	look_at_lvs(vg);
	raw = export(vg, false, &len);
	file = export(vg, true, &flen);
	if (!(again = import(raw, len)))
		die("the raw export does not import");
	raw2 = export(again, false, &len2);
	if (vg_part(raw) != vg_part(raw2) || memcmp(raw, raw2, vg_part(raw)))
		die("raw export of the re-imported VG differs");
	vg_free(again);
	if (!(again = import(file, flen)))
		die("the file-form export does not import");
	free(raw2);
	raw2 = export(again, false, &len2);
	if (vg_part(raw) != vg_part(raw2) || memcmp(raw, raw2, vg_part(raw)))
		die("raw export of the file form's VG differs");
	vg_free(again);
	free(raw2);
	free(file);
	free(raw);
	vg_free(vg);
	return 0;
}
