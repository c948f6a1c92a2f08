/*
 * Export: the model -> a config tree -> LVM2 metadata text, in LVM2's key order, in the
 * on-disk (raw) form or the vgcfgbackup file form. Kept items (`extra`) are written back
 * where LVM2 would put them and in the order they were read. A segment's keys after its
 * type are its type's module's (segtype.h).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>
#include <time.h>
#include <unistd.h>

#include "segtype.h"

struct exporter {
	struct cfg_tree *t;
	bool file_form;
	bool oom;
};

static struct cfg_node *chk(struct exporter *ex, struct cfg_node *n)
{
	if (!n)
		ex->oom = true;
	return n;
}

static void add_comment(struct exporter *ex, struct cfg_node *n, const char *c)
{
	if (n && ex->file_form)
		n->comment = cfg_strdup(ex->t, c);
}

/* "# 4 Megabytes" style size comment, as LVM2's file form writes after sizes. */
static void size_comment(struct exporter *ex, struct cfg_node *n, uint64_t sectors)
{
	static const char *const units[] = {"Kilobytes", "Megabytes", "Gigabytes",
	                                    "Terabytes", "Petabytes", "Exabytes"};
	double v = (double)sectors / 2.0;
	unsigned u = 0;
	char buf[64];

	if (!ex->file_form || !n)
		return;
	/* LVM2's rule: the next unit only above 1024 of this one, printed with %g. */
	while (v > 1024.0 && u + 1 < ARRAY_SIZE(units)) {
		v /= 1024.0;
		u++;
	}
	snprintf(buf, sizeof(buf), "%g %s", v, units[u]);
	add_comment(ex, n, buf);
}

static void add_strlist(struct exporter *ex, struct cfg_node *parent, const char *key,
                        const struct ulvm_strlist *l)
{
	struct cfg_node *a = chk(ex, cfg_add_array(ex->t, parent, key));

	for (size_t i = 0; a && i < l->n; i++)
		if (cfg_array_push_str(ex->t, a, l->v[i]))
			ex->oom = true;
}

static void add_extras(struct exporter *ex, struct cfg_node *parent, const struct cfg_node *extra)
{
	for (const struct cfg_node *n = extra ? extra->child : NULL; n; n = n->next) {
		struct cfg_node *c = chk(ex, cfg_copy(ex->t, parent, n));
		/* LVM2 says what an LV's read_ahead of -1 means (the on-disk form has no
		 * comments to keep) */
		if (c && !c->comment && !strcmp(c->key, "read_ahead") && c->kind == CFG_ASSIGN &&
		    c->v.type == CFG_INT && c->v.i == -1)
			add_comment(ex, c, "None");
	}
}

/* For the segment types' modules (segtype.h). */
struct cfg_tree *export_tree(struct exporter *ex)
{
	return ex->t;
}

struct cfg_node *export_chk(struct exporter *ex, struct cfg_node *n)
{
	return chk(ex, n);
}

void export_comment(struct exporter *ex, struct cfg_node *n, const char *c)
{
	add_comment(ex, n, c);
}

void export_size_comment(struct exporter *ex, struct cfg_node *n, uint64_t sectors)
{
	size_comment(ex, n, sectors);
}

void export_strlist(struct exporter *ex, struct cfg_node *parent, const char *key,
                    const struct ulvm_strlist *l)
{
	add_strlist(ex, parent, key, l);
}

void export_extras(struct exporter *ex, struct cfg_node *parent, const struct cfg_node *extra)
{
	add_extras(ex, parent, extra);
}

void export_oom(struct exporter *ex)
{
	ex->oom = true;
}

static void export_pv(struct exporter *ex, struct cfg_node *pvs, const struct ulvm_pv *pv)
{
	struct cfg_node *s = chk(ex, cfg_add_section(ex->t, pvs, pv->key)), *n;
	char uuid[UUID_STR_LEN + 1];
	const char *hint = pv->device ? pv->device : pv->device_hint;

	if (!s)
		return;
	s->blank_before = true;
	uuid_format(pv->uuid, uuid);
	chk(ex, cfg_add_str(ex->t, s, "id", uuid));
	if (hint)
		add_comment(ex, chk(ex, cfg_add_str(ex->t, s, "device", hint)), "Hint only");
	n = chk(ex, cfg_add_array(ex->t, s, "status"));
	if (n)
		n->blank_before = true;
	for (size_t i = 0; n && i < pv->status.n; i++)
		if (cfg_array_push_str(ex->t, n, pv->status.v[i]))
			ex->oom = true;
	add_strlist(ex, s, "flags", &pv->flags);
	if (pv->tags.n)
		add_strlist(ex, s, "tags", &pv->tags);
	if (pv->dev_size)
		size_comment(ex, chk(ex, cfg_add_int(ex->t, s, "dev_size", (int64_t)pv->dev_size)),
		             pv->dev_size);
	chk(ex, cfg_add_int(ex->t, s, "pe_start", (int64_t)pv->pe_start));
	/* pe_count's size comment needs the extent size: export_vg adds it. */
	chk(ex, cfg_add_int(ex->t, s, "pe_count", pv->pe_count));
	if (pv->ba_size) {
		chk(ex, cfg_add_int(ex->t, s, "ba_start", (int64_t)pv->ba_start));
		size_comment(ex, chk(ex, cfg_add_int(ex->t, s, "ba_size", (int64_t)pv->ba_size)),
		             pv->ba_size);
	}
	add_extras(ex, s, pv->extra);
}

static void export_seg(struct exporter *ex, struct cfg_node *lvsec, const struct ulvm_seg *seg,
                       size_t idx, uint32_t extent_size)
{
	char key[32];
	struct cfg_node *s, *n;

	snprintf(key, sizeof(key), "segment%zu", idx + 1);
	if (!(s = chk(ex, cfg_add_section(ex->t, lvsec, key))))
		return;
	s->blank_before = idx == 0; /* LVM2: one blank line after segment_count, none between */
	chk(ex, cfg_add_int(ex->t, s, "start_extent", seg->start_extent));
	size_comment(ex, chk(ex, cfg_add_int(ex->t, s, "extent_count", seg->extent_count)),
	             (uint64_t)seg->extent_count * extent_size);
	n = chk(ex, cfg_add_str(ex->t, s, "type", seg->type));
	if (n)
		n->blank_before = true;
	seg->segtype->text_export(ex, s, seg, extent_size);
}

static void time_comment(struct exporter *ex, struct cfg_node *n, int64_t t, bool with_zone)
{
	char buf[64];
	time_t tt = (time_t)t;
	struct tm tm;

	if (!ex->file_form || !n || !localtime_r(&tt, &tm))
		return;
	strftime(buf, sizeof(buf), with_zone ? "%Y-%m-%d %T %z" : "%a %b %e %T %Y", &tm);
	add_comment(ex, n, buf);
}

static void export_lv(struct exporter *ex, struct cfg_node *lvs, const struct ulvm_lv *lv,
                      uint32_t extent_size)
{
	struct cfg_node *s = chk(ex, cfg_add_section(ex->t, lvs, lv->name));
	char uuid[UUID_STR_LEN + 1];

	if (!s)
		return;
	s->blank_before = true;
	uuid_format(lv->uuid, uuid);
	chk(ex, cfg_add_str(ex->t, s, "id", uuid));
	add_strlist(ex, s, "status", &lv->status);
	add_strlist(ex, s, "flags", &lv->flags);
	if (lv->tags.n)
		add_strlist(ex, s, "tags", &lv->tags);
	if (lv->creation_time) {
		time_comment(ex, chk(ex, cfg_add_int(ex->t, s, "creation_time", lv->creation_time)),
		             lv->creation_time, true);
		chk(ex, cfg_add_str(ex->t, s, "creation_host",
		                    lv->creation_host ? lv->creation_host : ""));
	}
	add_extras(ex, s, lv->extra);
	chk(ex, cfg_add_int(ex->t, s, "segment_count", (int64_t)lv->nsegs));
	for (size_t i = 0; i < lv->nsegs; i++)
		export_seg(ex, s, &lv->segs[i], i, extent_size);
}

/* Where LVM2's _print_vg puts the VG keys ulvm keeps: system_id, lock_type and lock_args
 * before extent_size; allocation_policy (after an empty line) and profile after max_pv.
 * A key ulvm does not know stays beside the known one it followed when read (before
 * extent_size unless it came after allocation_policy or profile), so that a VG read and
 * written again keeps its keys in their order. */
static bool vg_key_before_extent_size(const char *key)
{
	return !strcmp(key, "system_id") || !strcmp(key, "lock_type") || !strcmp(key, "lock_args");
}

static bool vg_key_after_max_pv(const char *key)
{
	return !strcmp(key, "allocation_policy") || !strcmp(key, "profile");
}

static void add_vg_extras(struct exporter *ex, struct cfg_node *parent,
                          const struct cfg_node *extra, bool after_max_pv)
{
	bool tail = false; /* past allocation_policy or profile */

	for (const struct cfg_node *n = extra ? extra->child : NULL; n; n = n->next) {
		struct cfg_node *c;
		tail |= vg_key_after_max_pv(n->key);
		if ((tail && !vg_key_before_extent_size(n->key)) != after_max_pv)
			continue;
		if ((c = chk(ex, cfg_copy(ex->t, parent, n))) && after_max_pv)
			c->blank_before = !strcmp(n->key, "allocation_policy");
	}
}

/* As LVM2 writes a VG of a system ID or lock type: WRITE in flags as WRITE_LOCKED (first
 * there), which LVM2 before 2.02.117 does not know, so that it does not write the VG;
 * import takes it back into status. */
static bool vg_write_locked(const struct ulvm_vg *vg)
{
	const struct cfg_node *id = vg->extra ? cfg_find(NULL, vg->extra, "system_id") : NULL;
	bool owned = (id && id->kind == CFG_ASSIGN && id->v.type == CFG_STRING && *id->v.s) ||
	             (vg->extra && cfg_find(NULL, vg->extra, "lock_type"));

	return owned && ulvm_strlist_has(&vg->status, "WRITE");
}

static void add_vg_status(struct exporter *ex, struct cfg_node *s, const struct ulvm_vg *vg)
{
	bool locked = vg_write_locked(vg);
	struct cfg_node *st = chk(ex, cfg_add_array(ex->t, s, "status"));
	struct cfg_node *fl = chk(ex, cfg_add_array(ex->t, s, "flags"));

	for (size_t i = 0; st && i < vg->status.n; i++)
		if ((!locked || strcmp(vg->status.v[i], "WRITE")) &&
		    cfg_array_push_str(ex->t, st, vg->status.v[i]))
			ex->oom = true;
	if (fl && locked && cfg_array_push_str(ex->t, fl, "WRITE_LOCKED"))
		ex->oom = true;
	for (size_t i = 0; fl && i < vg->flags.n; i++)
		if (cfg_array_push_str(ex->t, fl, vg->flags.v[i]))
			ex->oom = true;
}

static void export_vg(struct exporter *ex, const struct ulvm_vg *vg)
{
	struct cfg_node *s = chk(ex, cfg_add_section(ex->t, NULL, vg->name)), *n, *pvs, *lvs;
	char uuid[UUID_STR_LEN + 1];

	if (!s)
		return;
	uuid_format(vg->uuid, uuid);
	chk(ex, cfg_add_str(ex->t, s, "id", uuid));
	chk(ex, cfg_add_int(ex->t, s, "seqno", vg->seqno));
	add_comment(ex, chk(ex, cfg_add_str(ex->t, s, "format", vg->format ? vg->format : "lvm2")),
	            "informational");
	add_vg_status(ex, s, vg);
	if (vg->tags.n)
		add_strlist(ex, s, "tags", &vg->tags);
	add_vg_extras(ex, s, vg->extra, false);
	size_comment(ex, chk(ex, cfg_add_int(ex->t, s, "extent_size", vg->extent_size)),
	             vg->extent_size);
	chk(ex, cfg_add_int(ex->t, s, "max_lv", vg->max_lv));
	chk(ex, cfg_add_int(ex->t, s, "max_pv", vg->max_pv));
	add_vg_extras(ex, s, vg->extra, true);
	if (vg->metadata_copies >= 0)
		chk(ex, cfg_add_int(ex->t, s, "metadata_copies", vg->metadata_copies));

	if ((pvs = chk(ex, cfg_add_section(ex->t, s, "physical_volumes")))) {
		pvs->blank_before = true;
		for (size_t i = 0; i < vg->npvs; i++) {
			export_pv(ex, pvs, vg->pvs[i]);
			/* pe_count's comment: the PV's data size. */
			n = pvs->last_child ? cfg_find(ex->t, pvs->last_child, "pe_count") : NULL;
			size_comment(ex, n, (uint64_t)vg->pvs[i]->pe_count * vg->extent_size);
		}
	}
	if (vg->nlvs && (lvs = chk(ex, cfg_add_section(ex->t, s, "logical_volumes")))) {
		lvs->blank_before = true;
		/* LVM2 writes visible LVs first, then hidden ones. */
		for (int pass = 0; pass < 2; pass++)
			for (size_t i = 0; i < vg->nlvs; i++)
				if (lv_visible_lvm2(vg, vg->lvs[i]) == (pass == 0))
					export_lv(ex, lvs, vg->lvs[i], vg->extent_size);
	}
	for (n = vg->extra_sections ? vg->extra_sections->child : NULL; n; n = n->next) {
		struct cfg_node *c = chk(ex, cfg_copy(ex->t, s, n));
		if (c)
			c->blank_before = true;
	}
	/* As LVM2 writes it: one empty line before the VG's closing brace, two without LVs. */
	s->blank_lines_before_end = vg->nlvs ? 1 : 2;
}

static void export_header(struct exporter *ex, const char *description)
{
	struct utsname un;
	char buf[512];
	time_t now = time(NULL);
	struct cfg_node *n;

	chk(ex, cfg_add_str(ex->t, NULL, "contents", "Text Format Volume Group"));
	chk(ex, cfg_add_int(ex->t, NULL, "version", 1));
	n = chk(ex, cfg_add_str(ex->t, NULL, "description", description ? description : ""));
	if (n)
		n->blank_before = true;
	if (uname(&un) < 0)
		memset(&un, 0, sizeof(un));
	n = chk(ex, cfg_add_str(ex->t, NULL, "creation_host", un.nodename));
	if (n)
		n->blank_before = true;
	snprintf(buf, sizeof(buf), "%s %s %s %s %s", un.sysname, un.nodename, un.release,
	         un.version, un.machine);
	add_comment(ex, n, buf);
	time_comment(ex, chk(ex, cfg_add_int(ex->t, NULL, "creation_time", (int64_t)now)), now,
	             false);
}

int vg_export(const struct ulvm_vg *vg, bool file_form, const char *description, char **text,
              size_t *len)
{
	struct exporter ex = {.file_form = file_form};
	struct strbuf sb;
	int r;

	*text = NULL;
	if (!(ex.t = cfg_tree_new()))
		return ulvm_error(-ENOMEM, "out of memory");
	/* On disk the VG comes first; in a backup file the header does (as LVM2 writes). */
	if (file_form) {
		export_header(&ex, description);
		export_vg(&ex, vg);
		if (ex.t->top.child && ex.t->top.last_child)
			ex.t->top.last_child->blank_before = true;
	} else {
		export_vg(&ex, vg);
		export_header(&ex, description);
		if (ex.t->top.child && ex.t->top.child->next)
			ex.t->top.child->next->blank_before = true;
	}
	sb_init(&sb);
	/* One allocation for the whole text (about 300 bytes per LV), faulted in at once,
	 * instead of a doubling series of copies. */
	if (sb_reserve(&sb, 4096 + 400 * vg->nlvs + 200 * vg->npvs))
		prefault_pages(sb.buf, sb.cap);
	if (file_form) {
		char date[64];
		time_t now = time(NULL);
		struct tm tm;
		localtime_r(&now, &tm);
		strftime(date, sizeof(date), "%a %b %e %T %Y", &tm);
		sb_printf(&sb, "# Generated by ulvm version %s: %s\n\n", "0.1.0", date);
	}
	r = ex.oom ? -ENOMEM : cfg_print(ex.t, file_form ? CFG_STYLE_FILE : CFG_STYLE_RAW, &sb);
	cfg_tree_free(ex.t);
	if (r) {
		sb_free(&sb);
		return ulvm_error(-ENOMEM, "out of memory while writing metadata text");
	}
	/* LVM2's on-disk text ends "\n\n\0" (pvck warns about anything else); the NUL is
	 * counted in the size and covered by the checksum. */
	if (!file_form)
		sb_put(&sb, "\n", 2);
	*len = sb.len;
	*text = sb_steal(&sb);
	if (!*text)
		return ulvm_error(-ENOMEM, "out of memory while writing metadata text");
	return 0;
}
