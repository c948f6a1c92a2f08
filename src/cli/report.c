/*
 * Reports: pvs, vgs, lvs. Field names, headings and value formats are LVM2's (see
 * `lvs -o help`), so scripts written for LVM2 read ulvm's output unchanged: aligned columns
 * (or --separator), --noheadings, --units/--nosuffix, -o/-O, and --reportformat json in the
 * shape LVM2 prints.
 */
#include <ctype.h>
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <time.h>

#include "../util/util.h"
#include "cli.h"

/* The active devices' names, read once per report (sorted). */
struct active_set {
	const char **names;
	size_t n;
};

struct row {
	const struct active_set *active;
	struct ulvm_vg *vg;
	struct ulvm_pv *pv;
	const struct ulvm_dev_info *dev;
	struct ulvm_lv *lv;
	struct ulvm_seg *seg;
	/* pvs --segments: one row per used or free range of extents of `pv` */
	uint32_t pvseg_start, pvseg_size;
	bool unselected;                   /* -S with the selected field: shown, but not picked */
	const struct cli_devtype *devtype; /* devtypes: one of LVM2's device types */
};

/* fullreport: set while report_run makes one of a VG's five reports */
static struct full_state {
	bool on;
	const char *vg;  /* the VG; NULL: the PVs of no VG */
	bool json_first; /* the first report of the VG's group (JSON) */
	bool warned;     /* about no devices given */
	bool titled;     /* a report was printed with its title (the log report is on) */
} full;

enum ftype { F_STR, F_NUM, F_SIZ };
enum fobj { O_PV, O_VG, O_LV, O_SEG, O_PVSEG, O_DEVTYPE };

struct field {
	const char *name;
	const char *heading;
	enum ftype type;
	enum fobj obj;
	size_t width; /* minimum column width, as LVM2 declares it */
	void (*get)(struct cli *c, const struct row *r, struct strbuf *out);
	bool right; /* a string aligned right: LVM2's binary fields (words, "unknown") */
};

void size_str(struct cli *c, uint64_t sectors, char *buf, size_t len)
{
	if (c->units_factor) { /* --units 4k: in units of that many bytes, suffix U */
		char sfx[2] = {c->nosuffix ? '\0' : c->units, '\0'};
		snprintf(buf, len, "%.2f%s", (double)sectors * 512 / (double)c->units_factor, sfx);
		return;
	}
	ulvm_format_size(sectors, c->units ? c->units : 'r', !c->nosuffix, false, buf, len);
}

static void put_size(struct cli *c, struct strbuf *o, uint64_t sectors)
{
	char b[64];

	size_str(c, sectors, b, sizeof(b));
	sb_puts(o, b);
}

static void put_list(struct strbuf *o, const struct ulvm_strlist *l)
{
	for (size_t i = 0; i < l->n; i++) {
		if (i)
			sb_putc(o, ',');
		sb_puts(o, l->v[i]);
	}
}

static int cmp_cstr(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Tags are reported sorted, as LVM2 does; the metadata keeps the order they were added. */
static void put_tags(struct strbuf *o, const struct ulvm_strlist *l)
{
	char **v = l->n ? malloc(l->n * sizeof(*v)) : NULL;

	if (!v) {
		put_list(o, l);
		return;
	}
	memcpy(v, l->v, l->n * sizeof(*v));
	qsort(v, l->n, sizeof(*v), cmp_cstr);
	for (size_t i = 0; i < l->n; i++) {
		if (i)
			sb_putc(o, ',');
		sb_puts(o, v[i]);
	}
	free(v);
}

static void put_uuid(struct strbuf *o, const char *raw)
{
	char u[UUID_STR_LEN + 1];

	if (!raw[0])
		return;
	uuid_format(raw, u);
	sb_puts(o, u);
}

/* ---- PV fields ---- */
static bool pv_in_vg(const struct row *r)
{
	return r->vg && r->pv;
}
static void f_pv_name(struct cli *c, const struct row *r, struct strbuf *o)
{
	(void)c;
	if (r->pv && r->pv->device)
		sb_puts(o, r->pv->device);
	else if (r->pv)
		sb_printf(o, "[unknown]");
	else
		sb_puts(o, r->dev->path);
}
static void f_vg_name(struct cli *c, const struct row *r, struct strbuf *o)
{
	(void)c;
	if (r->vg)
		sb_puts(o, r->vg->name);
}
static void f_pv_fmt(struct cli *c, const struct row *r, struct strbuf *o)
{
	(void)c;
	(void)r;
	sb_puts(o, "lvm2");
}
static void f_pv_attr(struct cli *c, const struct row *r, struct strbuf *o)
{
	(void)c;
	if (!pv_in_vg(r)) {
		sb_puts(o, "---");
		return;
	}
	/* as LVM2: a PV of a VG is (a)llocatable, or else (u)sed */
	sb_putc(o, ulvm_strlist_has(&r->pv->status, "ALLOCATABLE") ? 'a' : 'u');
	sb_putc(o, ulvm_strlist_has(&r->pv->status, "EXPORTED") ? 'x' : '-');
	sb_putc(o, r->pv->missing ? 'm' : '-');
}
static uint64_t pv_size(const struct row *r)
{
	if (pv_in_vg(r))
		return (uint64_t)r->pv->pe_count * r->vg->extent_size;
	/* An orphan's size is the one its header records, as LVM2 shows it (dev_size is the
	 * device's own). */
	return (r->dev->label_size ? r->dev->label_size : r->dev->size) / SECTOR_SIZE;
}
static void f_pv_size(struct cli *c, const struct row *r, struct strbuf *o)
{
	put_size(c, o, pv_size(r));
}
static void f_pv_free(struct cli *c, const struct row *r, struct strbuf *o)
{
	if (pv_in_vg(r))
		put_size(c, o,
		         (uint64_t)(r->pv->pe_count - r->pv->pe_alloc_count) * r->vg->extent_size);
	else
		put_size(c, o, pv_size(r));
}
static void f_pv_used(struct cli *c, const struct row *r, struct strbuf *o)
{
	put_size(c, o, pv_in_vg(r) ? (uint64_t)r->pv->pe_alloc_count * r->vg->extent_size : 0);
}
static void f_pv_uuid(struct cli *c, const struct row *r, struct strbuf *o)
{
	(void)c;
	put_uuid(o, r->pv ? r->pv->uuid : r->dev->pv_uuid);
}
static void f_dev_size(struct cli *c, const struct row *r, struct strbuf *o)
{
	put_size(c, o, r->dev ? r->dev->size / SECTOR_SIZE : r->pv ? r->pv->dev_size : 0);
}
static void f_pe_start(struct cli *c, const struct row *r, struct strbuf *o)
{
	put_size(c, o, r->pv ? r->pv->pe_start : r->dev->pe_start);
}
static void f_pv_pe_count(struct cli *c, const struct row *r, struct strbuf *o)
{
	(void)c;
	sb_printf(o, "%u", pv_in_vg(r) ? r->pv->pe_count : 0);
}
static void f_pv_pe_alloc(struct cli *c, const struct row *r, struct strbuf *o)
{
	(void)c;
	sb_printf(o, "%u", pv_in_vg(r) ? r->pv->pe_alloc_count : 0);
}
static void f_pv_tags(struct cli *c, const struct row *r, struct strbuf *o)
{
	(void)c;
	if (r->pv)
		put_tags(o, &r->pv->tags);
}
static void f_pv_mda_count(struct cli *c, const struct row *r, struct strbuf *o)
{
	(void)c;
	sb_printf(o, "%u", r->dev ? r->dev->mda_count : r->pv->mda_count);
}
static void f_pv_ext_vsn(struct cli *c, const struct row *r, struct strbuf *o)
{
	(void)c;
	sb_printf(o, "%u", r->dev ? r->dev->ext_version : 0);
}
static void f_pv_mda_used(struct cli *c, const struct row *r, struct strbuf *o)
{
	(void)c;
	sb_printf(o, "%u", r->pv ? r->pv->mda_used_count : r->dev->mda_used_count);
}
static void f_pv_mda_size(struct cli *c, const struct row *r, struct strbuf *o)
{
	put_size(c, o, (r->dev ? r->dev->mda_size : r->pv->mda_size) / SECTOR_SIZE);
}
static void f_pv_mda_free(struct cli *c, const struct row *r, struct strbuf *o)
{
	put_size(c, o, (r->dev ? r->dev->mda_free : r->pv->mda_free) / SECTOR_SIZE);
}
static void f_pv_allocatable(struct cli *c, const struct row *r, struct strbuf *o)
{
	(void)c;
	if (pv_in_vg(r) && ulvm_strlist_has(&r->pv->status, "ALLOCATABLE"))
		sb_puts(o, "allocatable");
}
static void f_pv_missing(struct cli *c, const struct row *r, struct strbuf *o)
{
	(void)c;
	if (r->pv && r->pv->missing)
		sb_puts(o, "missing");
}
static void f_pvseg_start(struct cli *c, const struct row *r, struct strbuf *o)
{
	(void)c;
	sb_printf(o, "%u", r->pvseg_start);
}
static void f_pvseg_size(struct cli *c, const struct row *r, struct strbuf *o)
{
	(void)c;
	sb_printf(o, "%u", r->pvseg_size);
}
static void f_pv_ba_start(struct cli *c, const struct row *r, struct strbuf *o)
{
	put_size(c, o, r->pv ? r->pv->ba_start : 0);
}
static void f_pv_ba_size(struct cli *c, const struct row *r, struct strbuf *o)
{
	put_size(c, o, r->pv ? r->pv->ba_size : 0);
}

/* ---- VG fields ---- */
static void f_vg_attr(struct cli *c, const struct row *r, struct strbuf *o)
{
	const struct ulvm_vg *vg = r->vg;
	bool partial = false;

	(void)c;
	if (!vg)
		return;
	for (size_t i = 0; i < vg->npvs; i++)
		partial |= vg->pvs[i]->missing;
	sb_putc(o, ulvm_strlist_has(&vg->status, "WRITE") ? 'w' : 'r');
	sb_putc(o, ulvm_strlist_has(&vg->status, "RESIZEABLE") ? 'z' : '-');
	sb_putc(o, ulvm_strlist_has(&vg->status, "EXPORTED") ? 'x' : '-');
	sb_putc(o, partial ? 'p' : '-');
	/* the allocation policy's letter, as LVM2's alloc_policy_char */
	const char *pol = ulvm_vg_alloc_policy(vg);
	sb_putc(o, !strcmp(pol, "contiguous") ? 'c'
	           : !strcmp(pol, "cling")    ? 'l'
	           : !strcmp(pol, "anywhere") ? 'a'
	                                      : 'n');
	sb_putc(o, ulvm_strlist_has(&vg->status, "CLUSTERED") ? 'c' : '-');
}
static void f_vg_uuid(struct cli *c, const struct row *r, struct strbuf *o)
{
	(void)c;
	if (r->vg)
		put_uuid(o, r->vg->uuid);
}
static void f_vg_size(struct cli *c, const struct row *r, struct strbuf *o)
{
	if (r->vg)
		put_size(c, o, ulvm_vg_total_extents(r->vg) * r->vg->extent_size);
}
static void f_vg_free(struct cli *c, const struct row *r, struct strbuf *o)
{
	if (r->vg)
		put_size(c, o, ulvm_vg_free_extents(r->vg) * r->vg->extent_size);
}
static void f_vg_extent_size(struct cli *c, const struct row *r, struct strbuf *o)
{
	if (r->vg)
		put_size(c, o, r->vg->extent_size);
}
static void f_vg_extent_count(struct cli *c, const struct row *r, struct strbuf *o)
{
	(void)c;
	if (r->vg)
		sb_printf(o, "%llu", (unsigned long long)ulvm_vg_total_extents(r->vg));
}
static void f_vg_free_count(struct cli *c, const struct row *r, struct strbuf *o)
{
	(void)c;
	if (r->vg)
		sb_printf(o, "%llu", (unsigned long long)ulvm_vg_free_extents(r->vg));
}
static void f_max_lv(struct cli *c, const struct row *r, struct strbuf *o)
{
	(void)c;
	if (r->vg)
		sb_printf(o, "%u", r->vg->max_lv);
}
static void f_max_pv(struct cli *c, const struct row *r, struct strbuf *o)
{
	(void)c;
	if (r->vg)
		sb_printf(o, "%u", r->vg->max_pv);
}
static void f_pv_count(struct cli *c, const struct row *r, struct strbuf *o)
{
	(void)c;
	if (r->vg)
		sb_printf(o, "%zu", r->vg->npvs);
}
/* A snapshot's COW LV, which LVM2 shows under the snapshot's name; not while it merges
 * (then it is hidden: "[snap]"). */
static bool lv_is_snapshot_cow(const struct ulvm_vg *vg, const struct ulvm_lv *lv)
{
	struct ulvm_lv_info info;

	ulvm_lv_info(vg, lv, &info);
	return info.snapshot_cow && info.role != 'S';
}
static bool lv_is_snapshot(const struct ulvm_vg *vg, const struct ulvm_lv *lv)
{
	struct ulvm_lv_info info;

	ulvm_lv_info(vg, lv, &info);
	return info.snapshot;
}
static void f_lv_count(struct cli *c, const struct row *r, struct strbuf *o)
{
	size_t n = 0;

	(void)c;
	if (!r->vg)
		return;
	/* LVM2 counts visible LVs and snapshots (whose COW LVs are hidden). */
	for (size_t i = 0; i < r->vg->nlvs; i++)
		n += ulvm_lv_visible(r->vg->lvs[i]) || lv_is_snapshot_cow(r->vg, r->vg->lvs[i]);
	sb_printf(o, "%zu", n);
}
static void f_snap_count(struct cli *c, const struct row *r, struct strbuf *o)
{
	size_t n = 0;

	(void)c;
	if (!r->vg)
		return;
	for (size_t i = 0; i < r->vg->nlvs; i++)
		n += lv_is_snapshot(r->vg, r->vg->lvs[i]);
	sb_printf(o, "%zu", n);
}
static void f_vg_seqno(struct cli *c, const struct row *r, struct strbuf *o)
{
	(void)c;
	if (r->vg)
		sb_printf(o, "%u", r->vg->seqno);
}
static void f_vg_tags(struct cli *c, const struct row *r, struct strbuf *o)
{
	(void)c;
	if (r->vg)
		put_tags(o, &r->vg->tags);
}
static void vg_mda_totals(const struct ulvm_vg *vg, unsigned *count, unsigned *used, uint64_t *size,
                          uint64_t *fr)
{
	bool first = true;

	*count = *used = 0;
	*size = *fr = 0;
	for (size_t i = 0; i < vg->npvs; i++) {
		const struct ulvm_pv *pv = vg->pvs[i];
		*count += pv->mda_count;
		*used += pv->mda_used_count;
		if (!pv->mda_count)
			continue;
		if (first || pv->mda_size < *size)
			*size = pv->mda_size;
		if (first || pv->mda_free < *fr)
			*fr = pv->mda_free;
		first = false;
	}
}
static void f_vg_mda_count(struct cli *c, const struct row *r, struct strbuf *o)
{
	unsigned n, u;
	uint64_t s, f;

	(void)c;
	vg_mda_totals(r->vg, &n, &u, &s, &f);
	sb_printf(o, "%u", n);
}
static void f_vg_mda_used(struct cli *c, const struct row *r, struct strbuf *o)
{
	unsigned n, u;
	uint64_t s, f;

	(void)c;
	vg_mda_totals(r->vg, &n, &u, &s, &f);
	sb_printf(o, "%u", u);
}
static void f_vg_mda_size(struct cli *c, const struct row *r, struct strbuf *o)
{
	unsigned n, u;
	uint64_t s, f;

	vg_mda_totals(r->vg, &n, &u, &s, &f);
	put_size(c, o, s / SECTOR_SIZE);
}
static void f_vg_mda_free(struct cli *c, const struct row *r, struct strbuf *o)
{
	unsigned n, u;
	uint64_t s, f;

	vg_mda_totals(r->vg, &n, &u, &s, &f);
	put_size(c, o, f / SECTOR_SIZE);
}
static void f_vg_fmt(struct cli *c, const struct row *r, struct strbuf *o)
{
	f_pv_fmt(c, r, o);
}
static void f_vg_permissions(struct cli *c, const struct row *r, struct strbuf *o)
{
	(void)c;
	sb_puts(o, ulvm_strlist_has(&r->vg->status, "WRITE") ? "writeable" : "read-only");
}
static void f_vg_extendable(struct cli *c, const struct row *r, struct strbuf *o)
{
	(void)c;
	if (ulvm_strlist_has(&r->vg->status, "RESIZEABLE"))
		sb_puts(o, "extendable");
}
static void f_vg_alloc_policy(struct cli *c, const struct row *r, struct strbuf *o)
{
	(void)c;
	sb_puts(o, ulvm_vg_alloc_policy(r->vg));
}
static void f_vg_mda_copies(struct cli *c, const struct row *r, struct strbuf *o)
{
	(void)c;
	if (r->vg->metadata_copies > 0)
		sb_printf(o, "%lld", (long long)r->vg->metadata_copies);
	else
		sb_puts(o, "unmanaged");
}

/* ---- LV fields ---- */
/* Shown: visible LVs and snapshot COW LVs (LVM2 shows a snapshot under its COW name). */
static bool lv_shown(const struct ulvm_vg *vg, const struct ulvm_lv *lv, bool all)
{
	if (lv_is_snapshot(vg, lv))
		return false;
	return all || ulvm_lv_visible(lv) || lv_is_snapshot_cow(vg, lv);
}
static void f_lv_name(struct cli *c, const struct row *r, struct strbuf *o)
{
	(void)c;
	if (!ulvm_lv_visible(r->lv) && !lv_is_snapshot_cow(r->vg, r->lv))
		sb_printf(o, "[%s]", r->lv->name);
	else
		sb_puts(o, r->lv->name);
}
static void f_lv_full_name(struct cli *c, const struct row *r, struct strbuf *o)
{
	(void)c;
	sb_printf(o, "%s/%s", r->vg->name, r->lv->name);
}
/* lv_path: none for internal LVs, nor for a thin pool (no device of its own to use) */
static void f_lv_path(struct cli *c, const struct row *r, struct strbuf *o)
{
	(void)c;
	if (ulvm_lv_is_thin_pool(r->lv))
		return;
	if (ulvm_lv_visible(r->lv) || lv_is_snapshot_cow(r->vg, r->lv))
		sb_printf(o, "/dev/%s/%s", r->vg->name, r->lv->name);
}
static void f_lv_uuid(struct cli *c, const struct row *r, struct strbuf *o)
{
	(void)c;
	put_uuid(o, r->lv->uuid);
}
static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* Whether the LV has an active device (its own, by UUID): only LVs named in the list of
 * active devices are looked at closely. */
static bool lv_active(const struct row *r)
{
	char name[300];
	const char *key = name;

	char uuid[ULVM_DM_UUID_LEN];

	if (!r->active || !r->active->n)
		return false;
	/* A thin pool's real device says it (VG-POOL-tpool while it has thin LVs). */
	ulvm_lv_state_device(r->vg, r->lv, name, sizeof(name), uuid, sizeof(uuid));
	return bsearch(&key, r->active->names, r->active->n, sizeof(*r->active->names), cmp_str) !=
	           NULL &&
	       ulvm_lv_active(r->vg, r->lv);
}

/* Whether anything holds the LV's device open (lv_attr's sixth character). */
static bool lv_open(const struct row *r)
{
	char name[300], uuid[ULVM_DM_UUID_LEN];
	unsigned opens = 0;

	ulvm_lv_state_device(r->vg, r->lv, name, sizeof(name), uuid, sizeof(uuid));
	return lv_active(r) && !ulvm_active_open_count(name, &opens) && opens;
}

/* A snapshot's status, when it is active (lv_active first: cheap for the others). */
static bool lv_snap_status(const struct row *r, struct ulvm_snapshot_status *st)
{
	return lv_active(r) && ulvm_lv_snapshot_status(r->vg, r->lv, st);
}
static void f_snap_percent(struct cli *c, const struct row *r, struct strbuf *o)
{
	struct ulvm_snapshot_status st;
	unsigned p;

	(void)c;
	if (!lv_snap_status(r, &st))
		return;
	p = ulvm_snapshot_percent(&st);
	sb_printf(o, "%u.%02u", p / 100, p % 100);
}
static void f_snap_invalid(struct cli *c, const struct row *r, struct strbuf *o)
{
	struct ulvm_snapshot_status st;

	(void)c;
	if (!lv_snap_status(r, &st))
		sb_puts(o, "unknown");
	else if (st.invalid)
		sb_puts(o, "snapshot invalid");
}
static void f_chunk_size(struct cli *c, const struct row *r, struct strbuf *o)
{
	struct ulvm_snapshot snap;
	struct ulvm_lv_info info;

	ulvm_lv_info(r->vg, r->lv, &info);
	if (info.thin_kind == ULVM_THIN_POOL)
		put_size(c, o, info.chunk_size);
	else
		put_size(c, o, ulvm_lv_snapshot(r->vg, r->lv, &snap) ? snap.chunk_size : 0);
}
static void f_lv_merging(struct cli *c, const struct row *r, struct strbuf *o)
{
	struct ulvm_lv_info info;

	(void)c;
	ulvm_lv_info(r->vg, r->lv, &info);
	if (info.role == 'O' || info.role == 'S')
		sb_puts(o, "merging");
}
static void f_lv_attr(struct cli *c, const struct row *r, struct strbuf *o)
{
	const struct ulvm_lv *lv = r->lv;
	struct ulvm_lv_info info;

	(void)c;
	ulvm_lv_info(r->vg, lv, &info);
	sb_putc(o, info.role);
	/* a pvmove LV has no permissions of its own, as in LVM2 */
	sb_putc(o, info.role == 'p' ? '-' : ulvm_strlist_has(&lv->status, "WRITE") ? 'w' : 'r');
	sb_putc(o, info.alloc);
	sb_putc(o, ulvm_strlist_has(&lv->status, "FIXED_MINOR") ? 'm' : '-');
	if (info.snapshot_cow && lv_active(r)) {
		struct ulvm_snapshot_status st;
		sb_putc(o, lv_snap_status(r, &st) && st.invalid ? 'I' : 'a');
	} else {
		sb_putc(o, lv_active(r) ? 'a' : '-');
	}
	sb_putc(o, lv_open(r) ? 'o' : '-');
	sb_putc(o, info.target);
	sb_putc(o, info.zero ? 'z' : '-');
	/* health: thin pools and thin LVs from their status (lvm/thin.c) */
	sb_putc(o, info.thin_kind && lv_active(r) ? ulvm_lv_thin_health(r->vg, lv, NULL) : '-');
	sb_putc(o, ulvm_strlist_has(&lv->flags, "ACTIVATION_SKIP") ? 'k' : '-');
}
static void f_lv_alloc_policy(struct cli *c, const struct row *r, struct strbuf *o)
{
	(void)c;
	sb_puts(o, ulvm_lv_alloc_policy(r->lv));
}
/* lv_read_ahead: "auto", or the sectors recorded (none: 0) */
static void f_lv_read_ahead(struct cli *c, const struct row *r, struct strbuf *o)
{
	uint32_t ra = ulvm_lv_read_ahead(r->lv);

	if (ra == ULVM_READ_AHEAD_AUTO)
		sb_puts(o, "auto");
	else
		put_size(c, o, ra);
}
/* The kernel's numbers and read ahead of an active LV: ulvm's LVs are not kernel devices
 * (its device-mapper is its own), so -1 as LVM2 shows for an inactive LV. */
static void f_minus_one(struct cli *c, const struct row *r, struct strbuf *o)
{
	(void)c;
	(void)r;
	sb_puts(o, "-1");
}
static void f_lv_major(struct cli *c, const struct row *r, struct strbuf *o)
{
	int ma, mi;

	(void)c;
	ulvm_lv_persistent(r->lv, &ma, &mi);
	sb_printf(o, "%d", ma);
}
static void f_lv_minor(struct cli *c, const struct row *r, struct strbuf *o)
{
	int ma, mi;

	(void)c;
	ulvm_lv_persistent(r->lv, &ma, &mi);
	sb_printf(o, "%d", mi);
}
static void f_lv_fixed_minor(struct cli *c, const struct row *r, struct strbuf *o)
{
	(void)c;
	if (ulvm_strlist_has(&r->lv->status, "FIXED_MINOR"))
		sb_puts(o, "fixed minor");
}
static void f_lv_autoactivation(struct cli *c, const struct row *r, struct strbuf *o)
{
	(void)c;
	if (!ulvm_strlist_has(&r->lv->flags, "NOAUTOACTIVATE"))
		sb_puts(o, "enabled");
}
static void f_vg_autoactivation(struct cli *c, const struct row *r, struct strbuf *o)
{
	(void)c;
	if (!ulvm_strlist_has(&r->vg->flags, "NOAUTOACTIVATE"))
		sb_puts(o, "enabled");
}
static void f_lv_profile(struct cli *c, const struct row *r, struct strbuf *o)
{
	const char *p = ulvm_lv_profile(r->lv);

	(void)c;
	if (p)
		sb_puts(o, p);
}
static void f_vg_profile(struct cli *c, const struct row *r, struct strbuf *o)
{
	const char *p = ulvm_vg_profile(r->vg);

	(void)c;
	if (p)
		sb_puts(o, p);
}
static void f_lv_alloc_locked(struct cli *c, const struct row *r, struct strbuf *o)
{
	(void)c;
	if (ulvm_strlist_has(&r->lv->status, "LOCKED"))
		sb_puts(o, "allocation locked");
}
/* lv_health_status: for thin pools from their status (LVM2's words) */
static void f_lv_health(struct cli *c, const struct row *r, struct strbuf *o)
{
	const char *word = "";

	(void)c;
	if (ulvm_lv_is_thin_pool(r->lv) && lv_active(r))
		ulvm_lv_thin_health(r->vg, r->lv, &word);
	sb_puts(o, word);
}
static uint64_t lv_size(const struct row *r)
{
	/* A snapshot (shown under its COW LV's name) reports the COW LV's size, as LVM2's
	 * lvs does (lvdisplay shows the origin's). */
	return (uint64_t)r->lv->le_count * r->vg->extent_size;
}
static void f_lv_size(struct cli *c, const struct row *r, struct strbuf *o)
{
	put_size(c, o, lv_size(r));
}
static void f_pool_lv(struct cli *c, const struct row *r, struct strbuf *o)
{
	struct ulvm_lv_info info;

	(void)c;
	ulvm_lv_info(r->vg, r->lv, &info);
	if (info.pool_lv)
		sb_puts(o, info.pool_lv);
}
/* data_lv, metadata_lv: a thin pool's sub-LVs, hidden ones in brackets as LVM2 shows them */
static void put_sub_lv(struct strbuf *o, const struct ulvm_lv *sub)
{
	if (!sub)
		return;
	if (ulvm_lv_visible(sub))
		sb_puts(o, sub->name);
	else {
		sb_puts(o, "[");
		sb_puts(o, sub->name);
		sb_puts(o, "]");
	}
}
static void f_data_lv(struct cli *c, const struct row *r, struct strbuf *o)
{
	struct ulvm_thin_pool_info pi;

	(void)c;
	ulvm_thin_pool_get(r->vg, r->lv, &pi);
	put_sub_lv(o, pi.data_lv);
}
static void f_metadata_lv(struct cli *c, const struct row *r, struct strbuf *o)
{
	struct ulvm_thin_pool_info pi;

	(void)c;
	ulvm_thin_pool_get(r->vg, r->lv, &pi);
	put_sub_lv(o, pi.metadata_lv);
}
static void f_origin(struct cli *c, const struct row *r, struct strbuf *o)
{
	struct ulvm_lv_info info;

	(void)c;
	ulvm_lv_info(r->vg, r->lv, &info);
	if (info.origin)
		sb_puts(o, info.origin);
}
/* ---- thin pools and thin LVs (data% and meta% from the active devices' status) ---- */
/* LVM2's dm_make_percent and its 2-digit display: never 0.00 for some, 100.00 for not all. */
static void put_percent(struct strbuf *o, uint64_t num, uint64_t den)
{
	long long p;

	if (!den || num >= den)
		p = 100000000;
	else if (!num)
		p = 0;
	else {
		p = (long long)(100000000.0 * ((double)num / (double)den));
		if (p >= 100000000)
			p = 100000000 - 1;
		if (p <= 0)
			p = 1;
	}
	if (p > 0 && p < 10000)
		p = 10000;
	else if (p > 100000000 - 10000 && p < 100000000)
		p = 100000000 - 10000;
	sb_printf(o, "%.2f", (float)p / 1000000.0f);
}
/* copy_percent, sync_percent: a pvmove LV's, while its device is active (as LVM2). */
static void f_copy_percent(struct cli *c, const struct row *r, struct strbuf *o)
{
	uint64_t copied, total;

	(void)c;
	if (ulvm_strlist_has(&r->lv->status, "PVMOVE") && lv_active(r) &&
	    !ulvm_pvmove_copied(r->vg, r->lv, &copied, &total))
		put_percent(o, copied, total);
}
static void f_data_percent(struct cli *c, const struct row *r, struct strbuf *o)
{
	struct ulvm_thin_usage u;

	if (!ulvm_lv_thin_usage(r->vg, r->lv, &u)) {
		put_percent(o, u.data_used, u.data_total);
		if (!u.has_meta && u.mapped > u.data_total) { /* a reduced thin LV, as LVM2 */
			char b1[64], b2[64];
			ulvm_format_size(u.mapped, 'h', true, true, b1, sizeof(b1));
			ulvm_format_size(u.data_total, 'h', true, true, b2, sizeof(b2));
			ulvm_warn("Thin volume %s/%s maps %s while the size is only %s.",
			          r->vg->name, r->lv->name, b1, b2);
		}
	} else
		f_snap_percent(c, r, o); /* a snapshot's data% is its snap% */
}
static void f_metadata_percent(struct cli *c, const struct row *r, struct strbuf *o)
{
	struct ulvm_thin_usage u;

	(void)c;
	if (!ulvm_lv_thin_usage(r->vg, r->lv, &u) && u.has_meta)
		put_percent(o, u.meta_used, u.meta_total);
}
static void f_thin_id(struct cli *c, const struct row *r, struct strbuf *o)
{
	struct ulvm_lv_info info;

	(void)c;
	ulvm_lv_info(r->vg, r->lv, &info);
	if (info.thin_kind == ULVM_THIN_VOLUME)
		sb_printf(o, "%u", info.thin_id);
}
static void f_transaction_id(struct cli *c, const struct row *r, struct strbuf *o)
{
	struct ulvm_lv_info info;

	(void)c;
	ulvm_lv_info(r->vg, r->lv, &info);
	if (info.thin_kind != ULVM_THIN_NONE)
		sb_printf(o, "%lld", (long long)info.transaction_id);
}
static void f_discards(struct cli *c, const struct row *r, struct strbuf *o)
{
	struct ulvm_lv_info info;

	(void)c;
	ulvm_lv_info(r->vg, r->lv, &info);
	if (info.thin_kind != ULVM_THIN_NONE && info.discards)
		sb_puts(o, info.discards);
}
static void f_zero(struct cli *c, const struct row *r, struct strbuf *o)
{
	struct ulvm_lv_info info;

	(void)c;
	ulvm_lv_info(r->vg, r->lv, &info);
	if (info.thin_kind == ULVM_THIN_NONE)
		sb_puts(o, "unknown");
	else if (info.zero)
		sb_puts(o, "zero");
}
static void f_seg_monitor(struct cli *c, const struct row *r, struct strbuf *o)
{
	(void)c;
	if (r->seg)
		sb_puts(o, cli_seg_monitor(r->vg, r->lv, r->seg));
}
static void f_lv_metadata_size(struct cli *c, const struct row *r, struct strbuf *o)
{
	struct ulvm_lv_info info;
	const struct ulvm_lv *m;

	ulvm_lv_info(r->vg, r->lv, &info);
	if (info.thin_kind == ULVM_THIN_POOL && info.metadata_lv &&
	    (m = ulvm_lv_find(r->vg, info.metadata_lv)))
		put_size(c, o, (uint64_t)m->le_count * r->vg->extent_size);
}
static void f_empty(struct cli *c, const struct row *r, struct strbuf *o)
{
	(void)c;
	(void)r;
	(void)o;
}
static void f_lv_tags(struct cli *c, const struct row *r, struct strbuf *o)
{
	(void)c;
	put_tags(o, &r->lv->tags);
}
static void f_seg_count(struct cli *c, const struct row *r, struct strbuf *o)
{
	(void)c;
	sb_printf(o, "%zu", r->lv->nsegs);
}
static void f_lv_layout(struct cli *c, const struct row *r, struct strbuf *o)
{
	struct ulvm_lv_info info;

	(void)c;
	ulvm_lv_info(r->vg, r->lv, &info);
	sb_puts(o, info.layout);
}
static bool name_has(const char *name, const char *part)
{
	return strstr(name, part) != NULL;
}

/* How many thin LVs of the VG are thin snapshots of `lv`. */
static size_t thin_snapshots_of(const struct ulvm_vg *vg, const struct ulvm_lv *lv)
{
	size_t n = 0;

	for (size_t i = 0; i < vg->nlvs; i++) {
		struct ulvm_lv_info in;
		ulvm_lv_info(vg, vg->lvs[i], &in);
		n += in.thin_kind == ULVM_THIN_VOLUME && in.origin && !strcmp(in.origin, lv->name);
	}
	return n;
}

/* lv_role as LVM2's lv_layout_and_role words it: "public" or "private" first, then what the
 * LV is to the others (pvmove, a mirror's image or log, a pool's data, metadata or spare, an
 * origin, a snapshot, ...). */
static void f_lv_role(struct cli *c, const struct row *r, struct strbuf *o)
{
	const struct ulvm_lv *lv = r->lv;
	const char *seg = lv->nsegs ? lv->segs[0].type : "";
	struct ulvm_lv_info info;
	struct strbuf w;
	bool private = false;
	size_t n;

	(void)c;
	ulvm_lv_info(r->vg, lv, &info);
	sb_init(&w);
	if (info.role == 'p') {
		sb_puts(&w, ",pvmove");
		private = true;
	} else if (info.role == 'I' || info.role == 'i') {
		sb_puts(&w, ",mirror,image");
		private = true;
	} else if (name_has(lv->name, "_mlog")) {
		sb_puts(&w, ",mirror,log");
		private = true;
	} else if (name_has(lv->name, "_rimage_") || name_has(lv->name, "_rmeta_")) {
		sb_puts(&w, name_has(lv->name, "_rimage_") ? ",raid,image" : ",raid,metadata");
		private = true;
	} else if (info.role == 'T' || (info.role == 'e' && name_has(lv->name, "_tmeta"))) {
		sb_puts(&w, info.role == 'T' ? ",thin,pool,data" : ",thin,pool,metadata");
		private = true;
	} else if (name_has(lv->name, "_cdata") || name_has(lv->name, "_cmeta")) {
		sb_puts(&w,
		        name_has(lv->name, "_cdata") ? ",cache,pool,data" : ",cache,pool,metadata");
		private = true;
	} else if (name_has(lv->name, "_corig")) {
		sb_puts(&w, ",cache,origin,cacheorigin");
		private = true;
	} else if (name_has(lv->name, "_vdata")) {
		sb_puts(&w, ",vdo,pool,data");
		private = true;
	} else if (info.thin_kind == ULVM_THIN_POOL || !strcmp(seg, "cache-pool") ||
	           !strcmp(seg, "vdo-pool")) {
		private = true;
	}
	if (name_has(lv->name, "_pmspare")) {
		sb_puts(&w, ",pool,spare");
		private = true;
	}
	if (info.thin_kind == ULVM_THIN_VOLUME) {
		if ((n = thin_snapshots_of(r->vg, lv)))
			sb_puts(&w, n > 1 ? ",origin,thinorigin,multithinorigin"
			                  : ",origin,thinorigin");
		if (info.origin)
			sb_puts(&w, ",snapshot,thinsnapshot");
	}
	if ((n = ulvm_lv_snapshots(r->vg, lv, NULL, 0))) {
		if (!w.buf || !strstr(w.buf, ",origin,"))
			sb_puts(&w, ",origin");
		sb_puts(&w, n > 1 ? ",thickorigin,multithickorigin" : ",thickorigin");
	} else if (info.snapshot_cow) {
		sb_puts(&w, ",snapshot,thicksnapshot");
	}
	sb_puts(o, private ? "private" : "public");
	if (w.buf)
		sb_puts(o, w.buf);
	sb_free(&w);
}
static void f_lv_active(struct cli *c, const struct row *r, struct strbuf *o)
{
	(void)c;
	if (lv_active(r))
		sb_puts(o, "active");
}
static void f_lv_time(struct cli *c, const struct row *r, struct strbuf *o)
{
	char b[64];
	time_t t = (time_t)r->lv->creation_time;
	struct tm tm;

	(void)c;
	if (!t || !localtime_r(&t, &tm))
		return;
	strftime(b, sizeof(b), "%Y-%m-%d %T %z", &tm);
	sb_puts(o, b);
}
static void f_lv_host(struct cli *c, const struct row *r, struct strbuf *o)
{
	(void)c;
	if (r->lv->creation_host)
		sb_puts(o, r->lv->creation_host);
}

/* ---- segment fields ---- */
static const struct ulvm_seg *row_seg(const struct row *r)
{
	return r->seg ? r->seg : r->lv->nsegs ? &r->lv->segs[0] : NULL;
}
static void f_segtype(struct cli *c, const struct row *r, struct strbuf *o)
{
	const struct ulvm_seg *s = row_seg(r);

	(void)c;
	if (!s)
		return;
	sb_puts(o, ulvm_seg_type(s));
}
static void f_stripes(struct cli *c, const struct row *r, struct strbuf *o)
{
	const struct ulvm_seg *s = row_seg(r);

	struct ulvm_lv_info info;

	(void)c;
	ulvm_lv_info(r->vg, r->lv, &info);
	/* A thin LV's segment has no areas: LVM2 says 0 (other kept types 1). */
	if (info.thin_kind == ULVM_THIN_VOLUME)
		sb_puts(o, "0");
	else
		sb_printf(o, "%u", s && s->area_count ? s->area_count : s ? 1 : 0);
}
static void f_stripe_size(struct cli *c, const struct row *r, struct strbuf *o)
{
	const struct ulvm_seg *s = row_seg(r);

	put_size(c, o, s ? s->stripe_size : 0);
}
static void f_seg_start(struct cli *c, const struct row *r, struct strbuf *o)
{
	const struct ulvm_seg *s = row_seg(r);

	put_size(c, o, s ? (uint64_t)s->start_extent * r->vg->extent_size : 0);
}
static void f_seg_start_pe(struct cli *c, const struct row *r, struct strbuf *o)
{
	const struct ulvm_seg *s = row_seg(r);

	(void)c;
	sb_printf(o, "%u", s ? s->start_extent : 0);
}
static void f_seg_size(struct cli *c, const struct row *r, struct strbuf *o)
{
	const struct ulvm_seg *s = row_seg(r);

	put_size(c, o, s ? (uint64_t)s->extent_count * r->vg->extent_size : 0);
}
static void f_seg_size_pe(struct cli *c, const struct row *r, struct strbuf *o)
{
	const struct ulvm_seg *s = row_seg(r);

	(void)c;
	sb_printf(o, "%u", s ? s->extent_count : 0);
}
static void put_area_name(struct strbuf *o, const struct ulvm_area *a)
{
	if (a->type == ULVM_AREA_LV)
		sb_puts(o, a->lv_name);
	else if (a->pv->device)
		sb_puts(o, a->pv->device);
	else
		sb_puts(o, "[unknown]");
}
/* For segments of every LV row (lvs without seg fields lists all segments' devices). */
static void seg_areas(const struct row *r, enum cli_area_form form, struct strbuf *o)
{
	bool first = true;

	if (r->seg) {
		cli_seg_areas(o, r->vg, r->seg, form, &first);
		return;
	}
	for (size_t i = 0; i < r->lv->nsegs; i++)
		cli_seg_areas(o, r->vg, &r->lv->segs[i], form, &first);
}
static void f_devices(struct cli *c, const struct row *r, struct strbuf *o)
{
	(void)c;
	seg_areas(r, CLI_AREA_DEVICES, o);
}
static void f_seg_pe_ranges(struct cli *c, const struct row *r, struct strbuf *o)
{
	(void)c;
	seg_areas(r, CLI_AREA_PE_RANGES, o);
}
static void f_seg_le_ranges(struct cli *c, const struct row *r, struct strbuf *o)
{
	(void)c;
	seg_areas(r, CLI_AREA_LE_RANGES, o);
}
/* move_pv: a pvmove LV's source PV, the first area of its first segment (as LVM2). */
/* A pvmove LV's source: the first area of its first segment, or for an --atomic move the
 * first area of its old image (as LVM2); NULL while pvmoveN is linear (between an --atomic
 * move's finishing commits) and for other LVs. */
static const struct ulvm_area *move_source(const struct row *r)
{
	const struct ulvm_lv *lv = r->lv, *img;

	if (!ulvm_strlist_has(&lv->status, "PVMOVE") || !lv->nsegs || !lv->segs[0].area_count ||
	    strcmp(lv->segs[0].type, "mirror"))
		return NULL;
	if (lv->segs[0].areas[0].type != ULVM_AREA_LV)
		return &lv->segs[0].areas[0];
	img = ulvm_lv_find(r->vg, lv->segs[0].areas[0].lv_name);
	if (img && img->nsegs && img->segs[0].area_count &&
	    img->segs[0].areas[0].type == ULVM_AREA_PV)
		return &img->segs[0].areas[0];
	return NULL;
}
static void f_move_pv(struct cli *c, const struct row *r, struct strbuf *o)
{
	const struct ulvm_area *a = move_source(r);

	(void)c;
	if (a)
		put_area_name(o, a);
}
static void f_move_pv_uuid(struct cli *c, const struct row *r, struct strbuf *o)
{
	const struct ulvm_area *a = move_source(r);

	(void)c;
	if (a && a->pv)
		put_uuid(o, a->pv->uuid);
}
static void f_selected(struct cli *c, const struct row *r, struct strbuf *o)
{
	(void)c;
	sb_putc(o, r->unselected ? '0' : '1');
}
static void f_seg_tags(struct cli *c, const struct row *r, struct strbuf *o)
{
	const struct ulvm_seg *s = row_seg(r);

	(void)c;
	if (s)
		put_tags(o, &s->tags);
}

/* ---- LVM2's binary and relation fields (words as LVM2's report prints them) ---- */
static void f_lv_skip_activation(struct cli *c, const struct row *r, struct strbuf *o)
{
	(void)c;
	if (ulvm_strlist_has(&r->lv->flags, "ACTIVATION_SKIP"))
		sb_puts(o, "skip activation");
}
/* lv_when_full: a thin pool queues or fails writes when its data space is full */
static void f_lv_when_full(struct cli *c, const struct row *r, struct strbuf *o)
{
	(void)c;
	if (ulvm_lv_is_thin_pool(r->lv))
		sb_puts(o, ulvm_strlist_has(&r->lv->flags, "ERROR_WHEN_FULL") ||
		                   ulvm_strlist_has(&r->lv->status, "ERROR_WHEN_FULL")
		               ? "error"
		               : "queue");
}
/* lv_permissions: a writeable LV's word needs its device (LVM2 says "unknown" without one);
 * ulvm's devices are never read-only while the metadata says WRITE, so no "-override" */
static void f_lv_permissions(struct cli *c, const struct row *r, struct strbuf *o)
{
	const struct ulvm_lv *lv = r->lv;

	(void)c;
	if (ulvm_strlist_has(&lv->status, "PVMOVE"))
		return;
	if (ulvm_strlist_has(&lv->status, "WRITE"))
		sb_puts(o, lv_active(r) ? "writeable" : "unknown");
	else
		sb_puts(o, ulvm_strlist_has(&lv->status, "READ") ? "read-only" : "unknown");
}
static void f_lv_dm_path(struct cli *c, const struct row *r, struct strbuf *o)
{
	char name[300];

	(void)c;
	ulvm_lv_dm_name(r->vg->name, r->lv->name, name, sizeof(name));
	sb_printf(o, "/dev/mapper/%s", name);
}
/* The LV whose segment uses hidden `lv` as a component (an area, or a thin pool's metadata);
 * a pvmove LV is not a component of the LVs moved through it. */
static const struct ulvm_lv *lv_parent(const struct ulvm_vg *vg, const struct ulvm_lv *lv)
{
	if (ulvm_lv_visible(lv) || ulvm_strlist_has(&lv->status, "PVMOVE"))
		return NULL;
	for (size_t i = 0; i < vg->nlvs; i++) {
		const struct ulvm_lv *p = vg->lvs[i];
		if (p == lv)
			continue;
		for (size_t s = 0; s < p->nsegs; s++)
			for (uint32_t a = 0; a < p->segs[s].area_count; a++)
				if (p->segs[s].areas[a].type == ULVM_AREA_LV &&
				    !strcmp(p->segs[s].areas[a].lv_name, lv->name))
					return p;
		if (ulvm_lv_is_thin_pool(p)) {
			struct ulvm_thin_pool_info pi;
			ulvm_thin_pool_get(vg, p, &pi);
			if (pi.metadata_lv == lv)
				return p;
		}
	}
	return NULL;
}
static void f_lv_parent(struct cli *c, const struct row *r, struct strbuf *o)
{
	const struct ulvm_lv *p = lv_parent(r->vg, r->lv);

	(void)c;
	if (p)
		sb_puts(o, p->name);
}
static struct ulvm_lv *lv_origin_lv(const struct row *r)
{
	struct ulvm_lv_info info;

	ulvm_lv_info(r->vg, r->lv, &info);
	return info.origin ? ulvm_lv_find(r->vg, info.origin) : NULL;
}
static void f_origin_uuid(struct cli *c, const struct row *r, struct strbuf *o)
{
	const struct ulvm_lv *org = lv_origin_lv(r);

	(void)c;
	if (org)
		put_uuid(o, org->uuid);
}
/* origin_size: a snapshot's origin's size, an origin's own; nothing for thin snapshots */
static void f_origin_size(struct cli *c, const struct row *r, struct strbuf *o)
{
	struct ulvm_snapshot snap;
	const struct ulvm_lv *org;

	if (ulvm_lv_snapshot(r->vg, r->lv, &snap) && (org = snap.origin))
		put_size(c, o, (uint64_t)org->le_count * r->vg->extent_size);
	else if (ulvm_lv_snapshots(r->vg, r->lv, NULL, 0))
		put_size(c, o, lv_size(r));
}
/* lv_ancestors: the origin, its origin, ... nearest first */
static void f_lv_ancestors(struct cli *c, const struct row *r, struct strbuf *o)
{
	struct row up = *r;
	bool first = true;

	(void)c;
	for (size_t depth = 0; depth < r->vg->nlvs && (up.lv = lv_origin_lv(&up)); depth++) {
		sb_printf(o, "%s%s", first ? "" : ",", up.lv->name);
		first = false;
	}
}
/* lv_descendants: the LVs made from `lv` (snapshots, thin snapshots), depth first */
static void put_descendants(const struct row *r, const struct ulvm_lv *lv, size_t depth,
                            struct strbuf *o)
{
	if (depth > r->vg->nlvs)
		return;
	for (size_t i = 0; i < r->vg->nlvs; i++) {
		struct row d = *r;
		struct ulvm_lv_info info;
		d.lv = r->vg->lvs[i];
		if (lv_is_snapshot(r->vg, d.lv))
			continue; /* snapshotN: its COW LV stands for it */
		ulvm_lv_info(r->vg, d.lv, &info);
		if (!info.origin || strcmp(info.origin, lv->name))
			continue;
		sb_printf(o, "%s%s", o->len ? "," : "", d.lv->name);
		put_descendants(r, d.lv, depth + 1, o);
	}
}
static void f_lv_descendants(struct cli *c, const struct row *r, struct strbuf *o)
{
	(void)c;
	put_descendants(r, r->lv, 0, o);
}
static void f_pool_lv_uuid(struct cli *c, const struct row *r, struct strbuf *o)
{
	struct ulvm_lv_info info;
	const struct ulvm_lv *pool;

	(void)c;
	ulvm_lv_info(r->vg, r->lv, &info);
	if (info.pool_lv && (pool = ulvm_lv_find(r->vg, info.pool_lv)))
		put_uuid(o, pool->uuid);
}
static void f_data_lv_uuid(struct cli *c, const struct row *r, struct strbuf *o)
{
	struct ulvm_thin_pool_info pi;

	(void)c;
	ulvm_thin_pool_get(r->vg, r->lv, &pi);
	if (pi.data_lv)
		put_uuid(o, pi.data_lv->uuid);
}
static void f_metadata_lv_uuid(struct cli *c, const struct row *r, struct strbuf *o)
{
	struct ulvm_thin_pool_info pi;

	(void)c;
	ulvm_thin_pool_get(r->vg, r->lv, &pi);
	if (pi.metadata_lv)
		put_uuid(o, pi.metadata_lv->uuid);
}
static void f_thin_count(struct cli *c, const struct row *r, struct strbuf *o)
{
	struct ulvm_thin_pool_info pi;

	(void)c;
	if (!ulvm_lv_is_thin_pool(r->lv))
		return;
	ulvm_thin_pool_get(r->vg, r->lv, &pi);
	sb_printf(o, "%zu", pi.thin_count);
}
/* lv_active_locally, lv_active_exclusively: ulvm's VGs are local, so an active LV is both;
 * lv_active_remotely is never set */
static void f_lv_active_locally(struct cli *c, const struct row *r, struct strbuf *o)
{
	(void)c;
	if (lv_active(r))
		sb_puts(o, "active locally");
}
static void f_lv_active_exclusively(struct cli *c, const struct row *r, struct strbuf *o)
{
	(void)c;
	if (lv_active(r))
		sb_puts(o, "active exclusively");
}
/* The device-info fields: LVM2's word when the LV's device has the property, nothing when it
 * has not, "unknown" without an active device (as LVM2 says). */
enum dev_info_word { DI_SUSPENDED, DI_LIVE_TABLE, DI_INACTIVE_TABLE };
static void put_dev_info(const struct row *r, enum dev_info_word which, struct strbuf *o)
{
	static const char *const words[] = {"suspended", "live table present",
	                                    "inactive table present"};
	char name[300], uuid[ULVM_DM_UUID_LEN];
	char *table = NULL, *loaded = NULL;
	bool suspended = false, on;

	ulvm_lv_state_device(r->vg, r->lv, name, sizeof(name), uuid, sizeof(uuid));
	if (!lv_active(r) || ulvm_active_info(name, &table, &loaded, &suspended)) {
		sb_puts(o, "unknown");
		return;
	}
	on = which == DI_SUSPENDED ? suspended : which == DI_LIVE_TABLE ? !!table : !!loaded;
	free(table);
	free(loaded);
	if (on)
		sb_puts(o, words[which]);
}
static void f_lv_suspended(struct cli *c, const struct row *r, struct strbuf *o)
{
	(void)c;
	put_dev_info(r, DI_SUSPENDED, o);
}
static void f_lv_live_table(struct cli *c, const struct row *r, struct strbuf *o)
{
	(void)c;
	put_dev_info(r, DI_LIVE_TABLE, o);
}
static void f_lv_inactive_table(struct cli *c, const struct row *r, struct strbuf *o)
{
	(void)c;
	put_dev_info(r, DI_INACTIVE_TABLE, o);
}
static void f_lv_device_open(struct cli *c, const struct row *r, struct strbuf *o)
{
	(void)c;
	if (!lv_active(r))
		sb_puts(o, "unknown");
	else if (lv_open(r))
		sb_puts(o, "open");
}
/* The status of an active thin pool's own device (NULL: none) */
static char *pool_status_line(const struct row *r)
{
	char name[300], uuid[ULVM_DM_UUID_LEN];
	char *st = NULL;

	if (!ulvm_lv_is_thin_pool(r->lv) || !lv_active(r))
		return NULL;
	ulvm_lv_state_device(r->vg, r->lv, name, sizeof(name), uuid, sizeof(uuid));
	return ulvm_active_status(name, &st) ? NULL : st;
}
/* lv_check_needed: a thin pool's needs_check flag; "unknown" for every other LV */
static void f_lv_check_needed(struct cli *c, const struct row *r, struct strbuf *o)
{
	struct ulvm_thin_pool_status ps;
	char *st = pool_status_line(r);

	(void)c;
	if (!st || ulvm_thin_pool_status(st, &ps) || ps.failed)
		sb_puts(o, "unknown");
	else if (ps.needs_check)
		sb_puts(o, "check needed");
	free(st);
}
/* kernel_discards: what the active pool does with discards, from its status line */
static void f_kernel_discards(struct cli *c, const struct row *r, struct strbuf *o)
{
	char *st = pool_status_line(r);

	(void)c;
	if (!st)
		return;
	if (strstr(st, "ignore_discard"))
		sb_puts(o, "ignore");
	else if (strstr(st, "no_discard_passdown"))
		sb_puts(o, "nopassdown");
	else if (strstr(st, "discard_passdown"))
		sb_puts(o, "passdown");
	free(st);
}
static void f_lv_merge_failed(struct cli *c, const struct row *r, struct strbuf *o)
{
	struct ulvm_snapshot_status st;
	struct ulvm_lv_info info;

	(void)c;
	ulvm_lv_info(r->vg, r->lv, &info);
	if (!info.snapshot_cow || !lv_snap_status(r, &st))
		sb_puts(o, "unknown");
	else if (st.merge_failed)
		sb_puts(o, "merge failed");
}
static void f_lv_converting(struct cli *c, const struct row *r, struct strbuf *o)
{
	(void)c;
	if (ulvm_strlist_has(&r->lv->status, "CONVERTING"))
		sb_puts(o, "converting");
}
/* lv_initial_image_sync: a mirror or raid LV not created with --nosync */
static void f_lv_initial_image_sync(struct cli *c, const struct row *r, struct strbuf *o)
{
	const struct ulvm_seg *s = row_seg(r);

	(void)c;
	if (s && (!strcmp(s->type, "mirror") || !strncmp(s->type, "raid", 4)) &&
	    !ulvm_strlist_has(&r->lv->status, "NOTSYNCED"))
		sb_puts(o, "initial image sync");
}
static void add_module(struct strbuf *o, const char *m)
{
	size_t n = strlen(m);

	for (const char *p = o->buf; p && *p;) {
		const char *e = strchr(p, ',');
		size_t len = e ? (size_t)(e - p) : strlen(p);
		if (len == n && !strncmp(p, m, n))
			return;
		p += len + (e ? 1 : 0);
	}
	sb_printf(o, "%s%s", o->len ? "," : "", m);
}
/* lv_modules: the kernel targets beyond linear and striped that the LV and what it stacks
 * on need */
static void lv_modules(const struct ulvm_vg *vg, const struct ulvm_lv *lv, size_t depth,
                       struct strbuf *o)
{
	struct ulvm_lv_info info;

	if (depth > vg->nlvs)
		return;
	ulvm_lv_info(vg, lv, &info);
	if (info.snapshot_cow || ulvm_lv_snapshots(vg, lv, NULL, 0))
		add_module(o, "snapshot");
	for (size_t s = 0; s < lv->nsegs; s++) {
		const struct ulvm_seg *seg = &lv->segs[s];
		if (!strcmp(seg->type, "thin")) {
			const struct ulvm_lv *pool =
			    info.pool_lv ? ulvm_lv_find((struct ulvm_vg *)vg, info.pool_lv) : NULL;
			add_module(o, "thin");
			if (pool)
				lv_modules(vg, pool, depth + 1, o);
		} else if (!strcmp(seg->type, "thin-pool")) {
			add_module(o, "thin-pool");
		} else if (!strcmp(seg->type, "snapshot")) {
			add_module(o, "snapshot");
		} else if (!strcmp(seg->type, "mirror")) {
			add_module(o, "mirror");
		}
		for (uint32_t a = 0; a < seg->area_count; a++) {
			const struct ulvm_lv *sub;
			if (seg->areas[a].type == ULVM_AREA_LV &&
			    (sub = ulvm_lv_find((struct ulvm_vg *)vg, seg->areas[a].lv_name)))
				lv_modules(vg, sub, depth + 1, o);
		}
	}
}
static void f_lv_modules(struct cli *c, const struct row *r, struct strbuf *o)
{
	(void)c;
	lv_modules(r->vg, r->lv, 0, o);
}
static void f_lv_lockargs(struct cli *c, const struct row *r, struct strbuf *o)
{
	const char *a = ulvm_lv_text_str(r->lv, "lock_args");

	(void)c;
	if (a)
		sb_puts(o, a);
}
/* data_copies, data_stripes: for the types ulvm maps, one copy; a thin LV has no stripes */
static void f_data_copies(struct cli *c, const struct row *r, struct strbuf *o)
{
	const struct ulvm_seg *s = row_seg(r);

	(void)c;
	sb_printf(o, "%u", s && !strcmp(s->type, "mirror") && s->area_count ? s->area_count : 1);
}
static void f_data_stripes(struct cli *c, const struct row *r, struct strbuf *o)
{
	const struct ulvm_seg *s = row_seg(r);

	if (s && !strcmp(s->type, "mirror"))
		sb_puts(o, "1");
	else
		f_stripes(c, r, o);
}
static void f_region_size(struct cli *c, const struct row *r, struct strbuf *o)
{
	const struct ulvm_seg *s = row_seg(r);
	uint64_t rs = 0;

	if (s && !strcmp(s->type, "mirror"))
		rs = ulvm_seg_region_size(s);
	put_size(c, o, rs);
}

/* ---- PV and VG fields of LVM2's that follow from the metadata ---- */
static void f_pv_in_use(struct cli *c, const struct row *r, struct strbuf *o)
{
	(void)c;
	if (pv_in_vg(r))
		sb_puts(o, "used");
}
static void f_pv_exported(struct cli *c, const struct row *r, struct strbuf *o)
{
	(void)c;
	if (pv_in_vg(r) && ulvm_strlist_has(&r->vg->status, "EXPORTED"))
		sb_puts(o, "exported");
}
/* pv_major, pv_minor: a block device's numbers; an image file has none (-1) */
static void pv_dev_numbers(const struct row *r, int *major, int *minor)
{
	const char *path = r->pv && r->pv->device ? r->pv->device : r->dev ? r->dev->path : NULL;
	struct stat st;

	*major = *minor = -1;
	if (path && !stat(path, &st) && S_ISBLK(st.st_mode)) {
		*major = (int)major(st.st_rdev);
		*minor = (int)minor(st.st_rdev);
	}
}
static void f_pv_major(struct cli *c, const struct row *r, struct strbuf *o)
{
	int ma, mi;

	(void)c;
	pv_dev_numbers(r, &ma, &mi);
	sb_printf(o, "%d", ma);
}
static void f_pv_minor(struct cli *c, const struct row *r, struct strbuf *o)
{
	int ma, mi;

	(void)c;
	pv_dev_numbers(r, &ma, &mi);
	sb_printf(o, "%d", mi);
}
static void f_vg_exported(struct cli *c, const struct row *r, struct strbuf *o)
{
	(void)c;
	if (ulvm_strlist_has(&r->vg->status, "EXPORTED"))
		sb_puts(o, "exported");
}
static size_t vg_missing_pvs(const struct ulvm_vg *vg)
{
	size_t n = 0;

	for (size_t i = 0; i < vg->npvs; i++)
		n += vg->pvs[i]->missing;
	return n;
}
static void f_vg_partial(struct cli *c, const struct row *r, struct strbuf *o)
{
	(void)c;
	if (vg_missing_pvs(r->vg))
		sb_puts(o, "partial");
}
static void f_vg_missing_pv_count(struct cli *c, const struct row *r, struct strbuf *o)
{
	(void)c;
	sb_printf(o, "%zu", vg_missing_pvs(r->vg));
}
static void put_vg_key(const struct row *r, const char *key, struct strbuf *o)
{
	const char *v = ulvm_vg_text_str(r->vg, key);

	if (v)
		sb_puts(o, v);
}
static void f_vg_systemid(struct cli *c, const struct row *r, struct strbuf *o)
{
	(void)c;
	put_vg_key(r, "system_id", o);
}
static void f_vg_lock_type(struct cli *c, const struct row *r, struct strbuf *o)
{
	(void)c;
	put_vg_key(r, "lock_type", o);
}
static void f_vg_lock_args(struct cli *c, const struct row *r, struct strbuf *o)
{
	(void)c;
	put_vg_key(r, "lock_args", o);
}
static void f_vg_clustered(struct cli *c, const struct row *r, struct strbuf *o)
{
	(void)c;
	if (ulvm_strlist_has(&r->vg->status, "CLUSTERED"))
		sb_puts(o, "clustered");
}
/* vg_shared: a VG of lvmlockd's (lock_type sanlock, dlm or idm) */
static void f_vg_shared(struct cli *c, const struct row *r, struct strbuf *o)
{
	const char *t = ulvm_vg_text_str(r->vg, "lock_type");

	(void)c;
	if (t && (!strcmp(t, "sanlock") || !strcmp(t, "dlm") || !strcmp(t, "idm")))
		sb_puts(o, "shared");
}

static void f_devtype_name(struct cli *c, const struct row *r, struct strbuf *o)
{
	(void)c;
	sb_puts(o, r->devtype->name);
}

static void f_devtype_max_partitions(struct cli *c, const struct row *r, struct strbuf *o)
{
	(void)c;
	sb_printf(o, "%u", r->devtype->max_partitions);
}

static void f_devtype_description(struct cli *c, const struct row *r, struct strbuf *o)
{
	(void)c;
	sb_puts(o, r->devtype->description);
}

static const struct field fields[] = {
    {"pv_name", "PV", F_STR, O_PV, 10, f_pv_name},
    {"pv_fmt", "Fmt", F_STR, O_PV, 0, f_pv_fmt},
    {"pv_uuid", "PV UUID", F_STR, O_PV, 38, f_pv_uuid},
    {"dev_size", "DevSize", F_SIZ, O_PV, 0, f_dev_size},
    {"pv_mda_free", "PMdaFree", F_SIZ, O_PV, 9, f_pv_mda_free},
    {"pv_mda_size", "PMdaSize", F_SIZ, O_PV, 9, f_pv_mda_size},
    {"pe_start", "1st PE", F_SIZ, O_PV, 7, f_pe_start},
    {"pv_size", "PSize", F_SIZ, O_PV, 0, f_pv_size},
    {"pv_free", "PFree", F_SIZ, O_PV, 0, f_pv_free},
    {"pv_used", "Used", F_SIZ, O_PV, 0, f_pv_used},
    {"pvseg_start", "Start", F_NUM, O_PVSEG, 0, f_pvseg_start},
    {"pvseg_size", "SSize", F_NUM, O_PVSEG, 0, f_pvseg_size},
    {"pv_attr", "Attr", F_STR, O_PV, 0, f_pv_attr},
    {"pv_allocatable", "Allocatable", F_STR, O_PV, 0, f_pv_allocatable},
    {"pv_missing", "Missing", F_STR, O_PV, 10, f_pv_missing},
    {"pv_pe_count", "PE", F_NUM, O_PV, 3, f_pv_pe_count},
    {"pv_pe_alloc_count", "Alloc", F_NUM, O_PV, 0, f_pv_pe_alloc},
    {"pv_tags", "PV Tags", F_STR, O_PV, 0, f_pv_tags},
    {"pv_mda_count", "#PMda", F_NUM, O_PV, 0, f_pv_mda_count},
    {"pv_ext_vsn", "ExtVsn", F_NUM, O_PV, 0, f_pv_ext_vsn},
    {"pv_mda_used_count", "#PMdaUse", F_NUM, O_PV, 0, f_pv_mda_used},
    {"pv_ba_start", "BA Start", F_SIZ, O_PV, 0, f_pv_ba_start},
    {"pv_ba_size", "BA Size", F_SIZ, O_PV, 0, f_pv_ba_size},
    {"pv_in_use", "PInUse", F_STR, O_PV, 0, f_pv_in_use, true},
    {"pv_exported", "Exported", F_STR, O_PV, 10, f_pv_exported, true},
    {"pv_duplicate", "Duplicate", F_STR, O_PV, 0, f_empty, true},
    {"pv_major", "Maj", F_STR, O_PV, 0, f_pv_major},
    {"pv_minor", "Min", F_STR, O_PV, 0, f_pv_minor},

    {"vg_fmt", "Fmt", F_STR, O_VG, 0, f_vg_fmt},
    {"vg_uuid", "VG UUID", F_STR, O_VG, 38, f_vg_uuid},
    {"vg_name", "VG", F_STR, O_VG, 0, f_vg_name},
    {"vg_attr", "Attr", F_STR, O_VG, 5, f_vg_attr},
    {"vg_permissions", "VPerms", F_STR, O_VG, 10, f_vg_permissions},
    {"vg_extendable", "Extendable", F_STR, O_VG, 0, f_vg_extendable},
    {"vg_allocation_policy", "AllocPol", F_STR, O_VG, 10, f_vg_alloc_policy},
    {"vg_size", "VSize", F_SIZ, O_VG, 0, f_vg_size},
    {"vg_free", "VFree", F_SIZ, O_VG, 0, f_vg_free},
    {"vg_extent_size", "Ext", F_SIZ, O_VG, 0, f_vg_extent_size},
    {"vg_extent_count", "#Ext", F_NUM, O_VG, 0, f_vg_extent_count},
    {"vg_free_count", "Free", F_NUM, O_VG, 0, f_vg_free_count},
    {"max_lv", "MaxLV", F_NUM, O_VG, 0, f_max_lv},
    {"max_pv", "MaxPV", F_NUM, O_VG, 0, f_max_pv},
    {"pv_count", "#PV", F_NUM, O_VG, 0, f_pv_count},
    {"lv_count", "#LV", F_NUM, O_VG, 0, f_lv_count},
    {"snap_count", "#SN", F_NUM, O_VG, 0, f_snap_count},
    {"vg_seqno", "Seq", F_NUM, O_VG, 0, f_vg_seqno},
    {"vg_tags", "VG Tags", F_STR, O_VG, 0, f_vg_tags},
    {"vg_mda_count", "#VMda", F_NUM, O_VG, 0, f_vg_mda_count},
    {"vg_mda_used_count", "#VMdaUse", F_NUM, O_VG, 0, f_vg_mda_used},
    {"vg_mda_free", "VMdaFree", F_SIZ, O_VG, 0, f_vg_mda_free},
    {"vg_mda_size", "VMdaSize", F_SIZ, O_VG, 0, f_vg_mda_size},
    {"vg_mda_copies", "#VMdaCps", F_STR, O_VG, 0, f_vg_mda_copies},
    {"vg_autoactivation", "AutoAct", F_STR, O_VG, 0, f_vg_autoactivation},
    {"vg_profile", "VProfile", F_STR, O_VG, 0, f_vg_profile},
    {"vg_exported", "Exported", F_STR, O_VG, 10, f_vg_exported, true},
    {"vg_partial", "Partial", F_STR, O_VG, 10, f_vg_partial, true},
    {"vg_missing_pv_count", "#PV Missing", F_NUM, O_VG, 0, f_vg_missing_pv_count},
    {"vg_systemid", "System ID", F_STR, O_VG, 0, f_vg_systemid},
    {"vg_sysid", "SYS ID", F_STR, O_VG, 0, f_vg_systemid},
    {"vg_clustered", "Clustered", F_STR, O_VG, 10, f_vg_clustered, true},
    {"vg_shared", "Shared", F_STR, O_VG, 7, f_vg_shared, true},
    {"vg_lock_type", "LockType", F_STR, O_VG, 0, f_vg_lock_type},
    {"vg_lock_args", "VLockArgs", F_STR, O_VG, 0, f_vg_lock_args},

    {"lv_uuid", "LV UUID", F_STR, O_LV, 38, f_lv_uuid},
    {"lv_name", "LV", F_STR, O_LV, 4, f_lv_name},
    {"lv_full_name", "LV", F_STR, O_LV, 4, f_lv_full_name},
    {"lv_path", "Path", F_STR, O_LV, 0, f_lv_path},
    {"lv_layout", "Layout", F_STR, O_LV, 10, f_lv_layout},
    {"lv_role", "Role", F_STR, O_LV, 10, f_lv_role},
    {"lv_active", "Active", F_STR, O_LV, 0, f_lv_active},
    {"lv_size", "LSize", F_SIZ, O_LV, 0, f_lv_size},
    {"seg_count", "#Seg", F_NUM, O_LV, 0, f_seg_count},
    {"origin", "Origin", F_STR, O_LV, 0, f_origin},
    {"move_pv", "Move", F_STR, O_LV, 0, f_move_pv},
    {"lv_allocation_policy", "AllocPol", F_STR, O_LV, 0, f_lv_alloc_policy},
    {"lv_allocation_locked", "AllocLock", F_STR, O_LV, 10, f_lv_alloc_locked},
    {"lv_read_ahead", "Rahead", F_SIZ, O_LV, 0, f_lv_read_ahead},
    {"lv_kernel_read_ahead", "KRahead", F_SIZ, O_LV, 0, f_minus_one},
    {"lv_major", "Maj", F_NUM, O_LV, 0, f_lv_major},
    {"lv_minor", "Min", F_NUM, O_LV, 0, f_lv_minor},
    {"lv_kernel_major", "KMaj", F_NUM, O_LV, 0, f_minus_one},
    {"lv_kernel_minor", "KMin", F_NUM, O_LV, 0, f_minus_one},
    {"lv_fixed_minor", "FixMin", F_STR, O_LV, 10, f_lv_fixed_minor},
    {"lv_autoactivation", "AutoAct", F_STR, O_LV, 0, f_lv_autoactivation},
    {"lv_profile", "LProfile", F_STR, O_LV, 0, f_lv_profile},
    {"convert_lv", "Convert", F_STR, O_LV, 0, f_empty},
    {"mirror_log", "Log", F_STR, O_LV, 0, f_empty},
    {"pool_lv", "Pool", F_STR, O_LV, 0, f_pool_lv},
    {"data_lv", "Data", F_STR, O_LV, 0, f_data_lv},
    {"metadata_lv", "Meta", F_STR, O_LV, 0, f_metadata_lv},
    {"lv_tags", "LV Tags", F_STR, O_LV, 0, f_lv_tags},
    {"lv_time", "CTime", F_STR, O_LV, 26, f_lv_time},
    /* a live LV was not removed: LVM2's historical LVs (-H) are refused (report_run) */
    {"lv_time_removed", "RTime", F_STR, O_LV, 26, f_empty},
    {"lv_host", "Host", F_STR, O_LV, 10, f_lv_host},
    {"data_percent", "Data%", F_STR, O_LV, 6, f_data_percent},
    {"snap_percent", "Snap%", F_NUM, O_LV, 6, f_snap_percent},
    {"chunk_size", "Chunk", F_SIZ, O_SEG, 6, f_chunk_size},
    {"lv_snapshot_invalid", "SnapInvalid", F_STR, O_LV, 16, f_snap_invalid},
    {"lv_merging", "Merging", F_STR, O_LV, 0, f_lv_merging},
    {"metadata_percent", "Meta%", F_STR, O_LV, 6, f_metadata_percent},
    {"thin_id", "ThId", F_NUM, O_SEG, 4, f_thin_id},
    {"transaction_id", "TransId", F_NUM, O_SEG, 0, f_transaction_id},
    {"discards", "Discards", F_STR, O_SEG, 0, f_discards},
    {"zero", "Zero", F_STR, O_SEG, 0, f_zero},
    {"seg_monitor", "Monitor", F_STR, O_SEG, 0, f_seg_monitor},
    {"lv_metadata_size", "MSize", F_SIZ, O_LV, 0, f_lv_metadata_size},
    {"copy_percent", "Cpy%Sync", F_NUM, O_LV, 0, f_copy_percent},
    {"sync_percent", "Cpy%Sync", F_NUM, O_LV, 0, f_copy_percent},
    {"lv_attr", "Attr", F_STR, O_LV, 0, f_lv_attr},
    {"lv_health_status", "Health", F_STR, O_LV, 0, f_lv_health},
    {"lv_skip_activation", "SkipAct", F_STR, O_LV, 15, f_lv_skip_activation, true},
    {"lv_when_full", "WhenFull", F_STR, O_LV, 15, f_lv_when_full},
    {"lv_permissions", "LPerms", F_STR, O_LV, 8, f_lv_permissions},
    {"lv_dm_path", "DMPath", F_STR, O_LV, 0, f_lv_dm_path},
    {"lv_parent", "Parent", F_STR, O_LV, 0, f_lv_parent},
    {"origin_uuid", "Origin UUID", F_STR, O_LV, 38, f_origin_uuid},
    {"origin_size", "OSize", F_SIZ, O_LV, 0, f_origin_size},
    {"lv_ancestors", "Ancestors", F_STR, O_LV, 0, f_lv_ancestors},
    {"lv_full_ancestors", "FAncestors", F_STR, O_LV, 0, f_lv_ancestors},
    {"lv_descendants", "Descendants", F_STR, O_LV, 0, f_lv_descendants},
    {"lv_full_descendants", "FDescendants", F_STR, O_LV, 0, f_lv_descendants},
    {"pool_lv_uuid", "Pool UUID", F_STR, O_LV, 38, f_pool_lv_uuid},
    {"data_lv_uuid", "Data UUID", F_STR, O_LV, 38, f_data_lv_uuid},
    {"metadata_lv_uuid", "Meta UUID", F_STR, O_LV, 38, f_metadata_lv_uuid},
    {"convert_lv_uuid", "Convert UUID", F_STR, O_LV, 38, f_empty},
    {"mirror_log_uuid", "Log UUID", F_STR, O_LV, 38, f_empty},
    {"move_pv_uuid", "Move UUID", F_STR, O_LV, 38, f_move_pv_uuid},
    {"thin_count", "#Thins", F_NUM, O_SEG, 0, f_thin_count},
    {"lv_active_locally", "ActLocal", F_STR, O_LV, 10, f_lv_active_locally, true},
    {"lv_active_remotely", "ActRemote", F_STR, O_LV, 10, f_empty, true},
    {"lv_active_exclusively", "ActExcl", F_STR, O_LV, 10, f_lv_active_exclusively, true},
    {"lv_suspended", "Suspended", F_STR, O_LV, 10, f_lv_suspended, true},
    {"lv_live_table", "LiveTable", F_STR, O_LV, 20, f_lv_live_table, true},
    {"lv_inactive_table", "InactiveTable", F_STR, O_LV, 20, f_lv_inactive_table, true},
    {"lv_device_open", "DevOpen", F_STR, O_LV, 10, f_lv_device_open, true},
    {"lv_check_needed", "CheckNeeded", F_STR, O_LV, 15, f_lv_check_needed, true},
    {"lv_merge_failed", "MergeFailed", F_STR, O_LV, 15, f_lv_merge_failed, true},
    /* LVM2's historical LVs (-H) are refused: every LV reported is live */
    {"lv_historical", "Historical", F_STR, O_LV, 0, f_empty, true},
    {"lv_image_synced", "ImgSynced", F_STR, O_LV, 10, f_empty, true},
    {"lv_initial_image_sync", "InitImgSyn", F_STR, O_LV, 10, f_lv_initial_image_sync, true},
    {"lv_converting", "Converting", F_STR, O_LV, 0, f_lv_converting, true},
    {"lv_modules", "Modules", F_STR, O_LV, 0, f_lv_modules},
    {"kernel_discards", "KDiscards", F_STR, O_LV, 0, f_kernel_discards},
    {"lv_lockargs", "LLockArgs", F_STR, O_LV, 0, f_lv_lockargs},

    {"segtype", "Type", F_STR, O_SEG, 0, f_segtype},
    {"stripes", "#Str", F_NUM, O_SEG, 0, f_stripes},
    {"stripe_size", "Stripe", F_SIZ, O_SEG, 0, f_stripe_size},
    {"seg_start", "Start", F_SIZ, O_SEG, 0, f_seg_start},
    {"seg_start_pe", "Start", F_NUM, O_SEG, 0, f_seg_start_pe},
    {"seg_size", "SSize", F_SIZ, O_SEG, 0, f_seg_size},
    {"seg_size_pe", "SSize", F_NUM, O_SEG, 0, f_seg_size_pe},
    {"seg_tags", "Seg Tags", F_STR, O_SEG, 0, f_seg_tags},
    {"region_size", "Region", F_SIZ, O_SEG, 0, f_region_size},
    {"data_copies", "#Cpy", F_NUM, O_SEG, 0, f_data_copies},
    {"data_stripes", "#DStr", F_NUM, O_SEG, 0, f_data_stripes},
    {"devices", "Devices", F_STR, O_SEG, 0, f_devices},
    {"seg_pe_ranges", "PE Ranges", F_STR, O_SEG, 0, f_seg_pe_ranges},
    {"seg_le_ranges", "LE Ranges", F_STR, O_SEG, 0, f_seg_le_ranges},
    /* raid's metadata sub-LVs: ulvm keeps raid segments without areas of its own */
    {"metadata_devices", "Metadata Devs", F_STR, O_SEG, 0, f_empty},
    {"seg_metadata_le_ranges", "Metadata LE Ranges", F_STR, O_SEG, 0, f_empty},
    {"devtype_name", "DevType", F_STR, O_DEVTYPE, 0, f_devtype_name},
    {"devtype_max_partitions", "MaxParts", F_NUM, O_DEVTYPE, 0, f_devtype_max_partitions},
    {"devtype_description", "Description", F_STR, O_DEVTYPE, 0, f_devtype_description},
    {"selected", "Selected", F_NUM, O_VG, 0, f_selected},
};

/* Field names compared as LVM2 does: without underscores, ignoring case. */
static bool same_field_name(const char *a, const char *b)
{
	for (;;) {
		while (*a == '_')
			a++;
		while (*b == '_')
			b++;
		if (!*a || !*b)
			return !*a && !*b;
		if (tolower((unsigned char)*a++) != tolower((unsigned char)*b++))
			return false;
	}
}

/* LVM2 accepts names without their type prefix and a few aliases. */
static const struct field *find_field(const char *name, enum report_type type)
{
	static const char *const prefixes[][3] = {
	    [REPORT_PV] = {"pv_", "", "vg_"},    [REPORT_VG] = {"vg_", "", NULL},
	    [REPORT_LV] = {"lv_", "", "seg_"},   [REPORT_SEG] = {"lv_", "", "seg_"},
	    [REPORT_PVSEG] = {"pv_", "", "vg_"}, [REPORT_DEVTYPE] = {"devtype_", "", NULL},
	};
	static const char *const aliases[][2] = {
	    {"stripesize", "stripe_size"}, {"size", NULL}, {"regionsize", "region_size"}};
	char buf[128];

	(void)aliases;
	/* exact names first; then as LVM2, without case and underscores ("LV_Size", "lvsize") */
	for (int loose = 0; loose < 2; loose++)
		for (size_t p = 0; p < 3; p++) {
			const char *pre = prefixes[type][p];
			if (!pre)
				continue;
			snprintf(buf, sizeof(buf), "%s%s", pre, name);
			for (size_t i = 0; i < ARRAY_SIZE(fields); i++) {
				/* devtypes has its fields (and selected) only; the others not */
				if (fields[i].get != f_selected &&
				    (fields[i].obj == O_DEVTYPE) != (type == REPORT_DEVTYPE))
					continue;
				if (loose ? same_field_name(fields[i].name, buf)
				          : !strcmp(fields[i].name, buf))
					return &fields[i];
			}
		}
	return NULL;
}

/* Whether ulvm reports the field (under its LVM2 name). */
static bool have_field(const char *name)
{
	for (size_t i = 0; i < ARRAY_SIZE(fields); i++)
		if (!strcmp(fields[i].name, name))
			return true;
	return false;
}

int report_list_fields(enum report_type type)
{
	/* as LVM2: one list for every report, on stderr, in LVM2's sections and words */
	(void)type;
	lvm2_fields_help(stderr, false, have_field);
	fputs("   \n", stderr);
	return 0;
}

/* ---- selection (-S) ---- */

struct sel_ctx {
	struct cli *c;
	struct cli num; /* sizes in sectors, without a suffix */
	enum report_type type;
	const struct row *row;
	struct strbuf buf;
};

static int sel_lookup(void *arg, const char *name, size_t len, struct sel_field_info *out)
{
	static const char *const prefixes[] = {
	    [REPORT_PV] = "pv_",   [REPORT_VG] = "vg_",       [REPORT_LV] = "lv_",
	    [REPORT_SEG] = "seg_", [REPORT_PVSEG] = "pvseg_", [REPORT_DEVTYPE] = "devtype_"};
	struct sel_ctx *x = arg;
	const struct field *f;
	char buf[128], pre[160];
	enum sel_type t;

	if (len >= sizeof(buf))
		return -ENOENT;
	memcpy(buf, name, len);
	buf[len] = '\0';
	if (!strcmp(buf, "help") || !strcmp(buf, "?"))
		return -EPERM;
	if (!(f = find_field(buf, x->type))) {
		snprintf(pre, sizeof(pre), "%s%s", prefixes[x->type], buf);
		return lvm2_field_type(buf, &t) || lvm2_field_type(pre, &t) ? -ENOTSUP : -ENOENT;
	}
	out->id = (int)(f - fields);
	out->name = f->name;
	if (!lvm2_field_type(f->name, &out->type))
		out->type = f->type == F_STR   ? SEL_T_STRING
		            : f->type == F_SIZ ? SEL_T_SIZE
		                               : SEL_T_NUMBER;
	return 0;
}

static void sel_value(void *arg, int id, struct sel_row_value *v)
{
	struct sel_ctx *x = arg;
	const struct field *f = &fields[id];
	const struct row *r = x->row;

	sb_reset(&x->buf);
	v->s = "";
	if ((f->obj == O_LV || f->obj == O_SEG) && !r->lv)
		return;            /* a free PV segment */
	if (f->get == f_lv_name) { /* hidden LVs by their name, not "[name]" */
		v->s = r->lv->name;
		return;
	}
	if (f->get == f_lv_time) {
		v->has_time = r->lv->creation_time != 0;
		v->time = (long long)r->lv->creation_time;
	}
	if (f->get == f_seg_pe_ranges)
		v->delim = ' ';
	f->get(f->type == F_SIZ ? &x->num : x->c, r, &x->buf);
	if (x->buf.buf)
		v->s = x->buf.buf;
}

struct report_sel {
	struct sel_ctx ctx;
	struct selection *sel;
	struct active_set active; /* for lv_attr and lv_active of the LVs a command selects */
};

int report_select_init(struct cli *c, enum report_type type, struct report_sel **out)
{
	struct report_sel *rs;
	int r;

	*out = NULL;
	if (!c->select)
		return 0;
	if (!(rs = calloc(1, sizeof(*rs))))
		return -ENOMEM;
	rs->ctx.c = c;
	rs->ctx.num = *c;
	rs->ctx.num.units = 's';
	rs->ctx.num.units_factor = 0;
	rs->ctx.num.nosuffix = true;
	rs->ctx.type = type;
	sb_init(&rs->ctx.buf);
	if ((r = selection_parse(c->select, sel_lookup, &rs->ctx, have_field, stderr, &rs->sel))) {
		report_select_free(rs);
		return r;
	}
	if (!rs->sel) { /* "all" */
		report_select_free(rs);
		return 0;
	}
	*out = rs;
	return 0;
}

void report_select_free(struct report_sel *rs)
{
	if (!rs)
		return;
	selection_free(rs->sel);
	sb_free(&rs->ctx.buf);
	if (rs->active.n)
		ulvm_active_list_free(rs->active.names, rs->active.n);
	free(rs);
}

static bool select_row(struct report_sel *rs, const struct row *r)
{
	if (!rs)
		return true;
	rs->ctx.row = r;
	return selection_match(rs->sel, sel_value, &rs->ctx);
}

bool report_select_vg(struct report_sel *rs, struct ulvm_vg *vg)
{
	struct row r = {.vg = vg};

	return select_row(rs, &r);
}

bool report_select_lv(struct report_sel *rs, struct ulvm_vg *vg, struct ulvm_lv *lv)
{
	struct row r = {.vg = vg, .lv = lv};

	if (!rs)
		return true;
	if (!rs->active.names && ulvm_active_list(&rs->active.names, &rs->active.n))
		rs->active.n = 0;
	r.active = &rs->active;
	return select_row(rs, &r);
}

bool report_select_pv(struct report_sel *rs, struct ulvm_vg *vg, struct ulvm_pv *pv,
                      const struct ulvm_dev_info *dev)
{
	struct row r = {.vg = vg, .pv = pv, .dev = dev};

	return select_row(rs, &r);
}

/* The names -S picks for a command, kept until exit (the command's arguments point here). */
struct select_names {
	struct report_sel *rs;
	enum report_type type;
	char *const *args;
	int nargs;
	char **v;
	int n;
};

static int select_add(struct select_names *sn, const char *vg, const char *lv)
{
	char **v = realloc(sn->v, (size_t)(sn->n + 1) * sizeof(*v));
	size_t len = strlen(vg) + (lv ? strlen(lv) + 1 : 0) + 1;

	if (!v || !(v[sn->n] = malloc(len))) {
		if (v)
			sn->v = v;
		return ulvm_error(-ENOMEM, "out of memory");
	}
	sn->v = v;
	snprintf(v[sn->n++], len, lv ? "%s/%s" : "%s", vg, lv ? lv : "");
	return 0;
}

static int select_vg_names(struct cli *c, struct ulvm_vg *vg, void *arg)
{
	struct select_names *sn = arg;
	int r = 0;

	/* As LVM2: an exported VG is passed over unless named (then the command says it is
	 * exported) or the command is vgimport. */
	if (ulvm_strlist_has(&vg->status, "EXPORTED") && !c->allow_exported) {
		if (sn->nargs && sn->type == REPORT_VG)
			r = select_add(sn, vg->name, NULL);
		ulvm_vg_close(vg);
		return r ? cli_fail(r) : ECMD_PROCESSED;
	}
	if (sn->type == REPORT_VG) {
		if (report_select_vg(sn->rs, vg))
			r = select_add(sn, vg->name, NULL);
		ulvm_vg_close(vg);
		return r ? cli_fail(r) : ECMD_PROCESSED;
	}
	for (size_t l = 0; l < vg->nlvs && !r; l++) {
		struct ulvm_lv *lv = vg->lvs[l];
		bool named = !sn->nargs;
		for (int i = 0; i < sn->nargs && !named; i++) {
			char vgn[256], lvn[256];
			if (!strcmp(sn->args[i], vg->name))
				named = true;
			else if (!cli_split_lv(sn->args[i], vgn, sizeof(vgn), lvn, sizeof(lvn)))
				named = !strcmp(vgn, vg->name) && !strcmp(lvn, lv->name);
		}
		if (named && lv_shown(vg, lv, false) && report_select_lv(sn->rs, vg, lv))
			r = select_add(sn, vg->name, lv->name);
	}
	ulvm_vg_close(vg);
	return r ? cli_fail(r) : ECMD_PROCESSED;
}

int cli_select_names(struct cli *c, enum report_type type, char ***args, int *nargs)
{
	static struct select_names sn;
	int r, rc;

	if (!c->select)
		return ECMD_PROCESSED;
	sn = (struct select_names){.type = type, .args = *args, .nargs = *nargs};
	if ((r = report_select_init(c, type, &sn.rs)))
		return r == -EINVAL ? ECMD_FAILED : cli_fail(r);
	rc = cli_each_vg(c, *args, *nargs, ULVM_LOCK_READ, select_vg_names, &sn);
	report_select_free(sn.rs);
	*args = sn.v;
	*nargs = sn.n;
	return rc;
}

bool cli_vg_exported_skip(struct cli *c, const struct ulvm_vg *vg)
{
	char vgn[256], lvn[256];
	bool named = false;

	if (!ulvm_strlist_has(&vg->status, "EXPORTED"))
		return false;
	for (int i = 0; i < c->nargs && !named; i++)
		named = !strcmp(c->args[i], vg->name) ||
		        (!cli_split_lv(c->args[i], vgn, sizeof(vgn), lvn, sizeof(lvn)) &&
		         !strcmp(vgn, vg->name));
	if (named)
		fprintf(stderr, "  Volume group %s is exported\n", vg->name);
	return named;
}

/* -S help (or ?): the fields with their types, then the language. */
int report_select_help(void)
{
	lvm2_fields_help(stderr, true, have_field);
	fputs("   \n", stderr);
	selection_help(stderr);
	return ECMD_PROCESSED;
}

#define MAX_COLS 64

struct table {
	bool segments_given; /* --segments (not fields that imply segments) */
	const struct field *cols[MAX_COLS];
	size_t ncols;
	char **cells; /* nrows * ncols */
	struct row *rows;
	size_t nrows, cap;
};

/* One field of an "X_all" (LVM2's section), when ulvm has it. */
static void add_section_field(const char *name, void *arg)
{
	struct table *t = arg;

	for (size_t i = 0; i < ARRAY_SIZE(fields); i++)
		if (!strcmp(fields[i].name, name) && t->ncols < MAX_COLS)
			t->cols[t->ncols++] = &fields[i];
}

static int add_cols(struct cli *c, struct table *t, const char *spec, enum report_type type)
{
	char *copy = strdup(spec), *save = NULL, *tok;
	int r = 0;

	if (!copy)
		return ulvm_error(-ENOMEM, "out of memory");
	for (tok = strtok_r(copy, ",", &save); tok && !r; tok = strtok_r(NULL, ",", &save)) {
		const struct field *f;
		while (*tok == ' ')
			tok++;
		if (!*tok)
			continue;
		if (!strcmp(tok, "all")) {
			for (size_t i = 0; i < ARRAY_SIZE(fields) && t->ncols < MAX_COLS; i++)
				if (find_field(fields[i].name, type) == &fields[i] &&
				    fields[i].get != f_selected)
					t->cols[t->ncols++] = &fields[i];
			continue;
		}
		if (strlen(tok) > 4 && !strcmp(tok + strlen(tok) - 4, "_all")) {
			size_t before = t->ncols;
			lvm2_section_fields(tok, add_section_field, t);
			if (t->ncols > before)
				continue;
		}
		if (!(f = find_field(tok, type))) {
			report_list_fields(type); /* as LVM2: the fields, then which is not one */
			r = ulvm_error(-EINVAL, "Unrecognised field: %s", tok);
			break;
		}
		if (t->ncols == MAX_COLS) {
			r = ulvm_error(-EINVAL, "too many fields");
			break;
		}
		t->cols[t->ncols++] = f;
		/* as LVM2: a PV report with LV or segment fields has a row per PV segment */
		if (f->obj == O_SEG || f->obj == O_PVSEG || (type == REPORT_PV && f->obj == O_LV))
			c->segments = true;
	}
	free(copy);
	return r;
}

static int add_row(struct table *t, const struct row *r)
{
	if (t->nrows == t->cap) {
		size_t cap = t->cap ? t->cap * 2 : 64;
		struct row *nr = realloc(t->rows, cap * sizeof(*nr));
		if (!nr)
			return ulvm_error(-ENOMEM, "out of memory");
		t->rows = nr;
		t->cap = cap;
	}
	t->rows[t->nrows++] = *r;
	return 0;
}

/* A used range of a PV's extents, and the LV segment that uses it. */
struct pv_range {
	uint32_t start, len;
	struct ulvm_lv *lv;
	struct ulvm_seg *seg;
};

static int range_start_cmp(const void *a, const void *b)
{
	const struct pv_range *x = a, *y = b;

	return x->start < y->start ? -1 : x->start > y->start;
}

/* A PV's row, or with `segments` its rows as LVM2's pvs --segments gives them: each area of
 * an LV segment on it and each free range between them, in extent order (an orphan PV: one
 * row of 0 extents). */
static int add_pv_rows(struct table *t, struct row *r, bool segments)
{
	struct pv_range *used = NULL;
	uint32_t pos = 0;
	size_t n = 0, cap = 0;
	int rc = 0;

	if (!segments || !r->pv)
		return add_row(t, r);
	for (size_t l = 0; l < r->vg->nlvs; l++)
		for (size_t s = 0; s < r->vg->lvs[l]->nsegs; s++) {
			struct ulvm_seg *seg = &r->vg->lvs[l]->segs[s];
			for (uint32_t a = 0; a < seg->area_count; a++) {
				if (seg->areas[a].type != ULVM_AREA_PV || seg->areas[a].pv != r->pv)
					continue;
				if (n == cap) {
					struct pv_range *nu =
					    realloc(used, (cap = cap ? cap * 2 : 16) * sizeof(*nu));
					if (!nu) {
						free(used);
						return ulvm_error(-ENOMEM, "out of memory");
					}
					used = nu;
				}
				used[n++] = (struct pv_range){
				    seg->areas[a].pe, ulvm_seg_area_len(seg), r->vg->lvs[l], seg};
			}
		}
	if (n)
		qsort(used, n, sizeof(*used), range_start_cmp);
	for (size_t i = 0; i <= n && !rc; i++) {
		uint32_t end = i < n ? used[i].start : r->pv->pe_count;
		if (end > pos) { /* free: no LV */
			r->pvseg_start = pos;
			r->pvseg_size = end - pos;
			r->lv = NULL;
			r->seg = NULL;
			rc = add_row(t, r);
		}
		if (i < n && !rc) {
			r->pvseg_start = used[i].start;
			r->pvseg_size = used[i].len;
			r->lv = used[i].lv;
			r->seg = used[i].seg;
			rc = add_row(t, r);
			pos = MAX(pos, used[i].start + used[i].len);
		}
	}
	free(used);
	return rc;
}

/* Sorting: each row's key values are computed once, then rows are ordered by them. */
struct sort_key {
	const char *s; /* string fields: into the key pool */
	uint64_t n;    /* size and number fields */
};

struct sort_spec {
	const struct field *keys[8];
	bool desc[8];
	size_t nkeys;
	const struct sort_key *vals; /* nrows * nkeys */
};

static int cmp_rows(const void *a, const void *b, void *arg)
{
	const struct sort_spec *sp = arg;
	size_t x = *(const size_t *)a, y = *(const size_t *)b;

	for (size_t k = 0; k < sp->nkeys; k++) {
		const struct sort_key *kx = &sp->vals[x * sp->nkeys + k];
		const struct sort_key *ky = &sp->vals[y * sp->nkeys + k];
		int d;

		if (sp->keys[k]->type == F_STR)
			d = strcmp(kx->s, ky->s);
		else
			d = kx->n < ky->n ? -1 : kx->n > ky->n;
		if (d)
			return sp->desc[k] ? -d : d;
	}
	/* Stable on ties: keep discovery order. */
	return x < y ? -1 : x > y;
}

/* Order t->rows by the sort keys. */
static int sort_rows(struct cli *c, struct table *t, struct sort_spec *sp)
{
	struct cli numeric = *c;
	struct sort_key *vals = calloc(t->nrows * sp->nkeys + 1, sizeof(*vals));
	size_t *order = calloc(t->nrows + 1, sizeof(*order)), *offs = NULL;
	struct row *sorted = calloc(t->nrows + 1, sizeof(*sorted));
	struct strbuf pool, cell;
	int r = 0;

	/* Sizes compare as numbers: format them in bytes without a suffix. */
	numeric.units = 'b';
	numeric.units_factor = 0;
	numeric.nosuffix = true;
	sb_init(&pool);
	sb_init(&cell);
	offs = calloc(t->nrows * sp->nkeys + 1, sizeof(*offs));
	if (!vals || !order || !sorted || !offs) {
		r = ulvm_error(-ENOMEM, "out of memory");
		goto out;
	}
	for (size_t i = 0; i < t->nrows; i++) {
		order[i] = i;
		for (size_t k = 0; k < sp->nkeys; k++) {
			const struct field *f = sp->keys[k];
			sb_reset(&cell);
			/* LVM2 sorts hidden LVs by their name, not by the "[name]" shown. */
			if (f->get == f_lv_name)
				sb_puts(&cell, t->rows[i].lv->name);
			else
				f->get(f->type == F_STR ? c : &numeric, &t->rows[i], &cell);
			if (f->type == F_STR) {
				offs[i * sp->nkeys + k] = pool.len;
				sb_put(&pool, cell.buf ? cell.buf : "", cell.len + 1);
			} else {
				vals[i * sp->nkeys + k].n =
				    strtoull(cell.buf ? cell.buf : "0", NULL, 10);
			}
		}
	}
	if (pool.oom || cell.oom) {
		r = ulvm_error(-ENOMEM, "out of memory");
		goto out;
	}
	for (size_t i = 0; i < t->nrows * sp->nkeys; i++)
		if (sp->keys[i % sp->nkeys]->type == F_STR)
			vals[i].s = pool.buf + offs[i];
	sp->vals = vals;
	qsort_r(order, t->nrows, sizeof(*order), cmp_rows, sp);
	for (size_t i = 0; i < t->nrows; i++)
		sorted[i] = t->rows[order[i]];
	memcpy(t->rows, sorted, t->nrows * sizeof(*sorted));
out:
	sp->vals = NULL;
	free(vals);
	free(order);
	free(offs);
	free(sorted);
	sb_free(&pool);
	sb_free(&cell);
	return r;
}

static void put_spaces(struct strbuf *o, size_t n)
{
	static const char spaces[64] =
	    "                                                                ";

	for (; n > sizeof(spaces); n -= sizeof(spaces))
		sb_put(o, spaces, sizeof(spaces));
	sb_put(o, spaces, n);
}

static void put_padded(struct strbuf *o, const char *v, size_t width, bool right)
{
	size_t n = strlen(v), pad = n < width ? width - n : 0;

	if (right)
		put_spaces(o, pad);
	sb_put(o, v, n);
	if (!right)
		put_spaces(o, pad);
}

/* How a field's value goes into JSON: LVM2's json quotes everything; json_std writes
 * numbers (and blank ones as null) bare and string lists as arrays. */
static void json_value(struct cli *c, struct strbuf *o, const struct field *f, const char *v)
{
	enum sel_type t;

	if (!c->json_std || !lvm2_field_type(f->name, &t))
		t = f->type == F_NUM ? SEL_T_NUMBER : SEL_T_STRING;
	if (c->json_std && (t == SEL_T_NUMBER || t == SEL_T_PERCENT)) {
		bool numeric = *v && strspn(v, "0123456789.-") == strlen(v);
		if (!*v)
			sb_puts(o, "null");
		else if (numeric)
			sb_puts(o, v);
		else
			sb_put_quoted(o, v);
		return;
	}
	if (c->json_std && t == SEL_T_STRLIST) {
		const char *p = v;
		char delim = !strcmp(f->name, "seg_pe_ranges") ? ' ' : ',';
		sb_putc(o, '[');
		while (*p) {
			const char *e = strchr(p, delim);
			char item[4096];
			size_t n = e ? (size_t)(e - p) : strlen(p);
			snprintf(item, sizeof(item), "%.*s", (int)n, p);
			if (p != v)
				sb_putc(o, ',');
			sb_put_quoted(o, item);
			p += n + (e != NULL);
		}
		sb_putc(o, ']');
		return;
	}
	sb_put_quoted(o, v);
}

/* --nameprefixes: LVM2_FIELD_NAME='value' */
static void put_prefixed(struct cli *c, struct strbuf *o, const struct field *f, const char *v)
{
	sb_puts(o, "LVM2_");
	for (const char *p = f->name; *p; p++)
		sb_putc(o, (char)toupper((unsigned char)*p));
	sb_putc(o, '=');
	if (!c->unquoted)
		sb_putc(o, '\'');
	sb_puts(o, v);
	if (!c->unquoted)
		sb_putc(o, '\'');
}

/* The name LVM2 gives a report above it when the log report follows ("Logical Volume"
 * and a line of '='s); a PV report is one of labels (but in fullreport). */
static const char *log_report_title(const struct table *t, enum report_type type)
{
	(void)t;
	switch (type) {
	case REPORT_VG:
		return "  Volume Group\n  ============\n";
	case REPORT_LV:
		return "  Logical Volume\n  ==============\n";
	case REPORT_SEG:
		return "  Logical Volume Segment\n  ======================\n";
	case REPORT_PVSEG:
		return "  Physical Volume Segment\n  =======================\n";
	default:
		return full.on ? "  Physical Volume\n  ===============\n"
		               : "  Physical Volume Label\n  =====================\n";
	}
}

/* The status rows of the log report, as LVM2's processing records them: each LV, PV, VG
 * (and the orphan PVs) a report went through. */
static void log_uuid(char *buf, size_t len, const char *raw)
{
	struct strbuf o;

	sb_init(&o);
	put_uuid(&o, raw);
	snprintf(buf, len, "%s", o.buf ? o.buf : "");
	sb_free(&o);
}

static void log_status_vg(const struct ulvm_vg *vg, bool ok)
{
	char id[64];

	log_uuid(id, sizeof(id), vg->uuid);
	cmdlog_status("vg", vg->name, id, NULL, NULL, ok);
}

static void log_status_lv(const struct ulvm_vg *vg, const struct ulvm_lv *lv)
{
	char id[64], gid[64];

	log_uuid(id, sizeof(id), lv->uuid);
	log_uuid(gid, sizeof(gid), vg->uuid);
	cmdlog_status("lv", lv->name, id, vg->name, gid, true);
}

static void log_status_pv(const char *path, const char *uuid, const struct ulvm_vg *vg)
{
	char id[64], gid[64];

	log_uuid(id, sizeof(id), uuid);
	if (vg)
		log_uuid(gid, sizeof(gid), vg->uuid);
	cmdlog_status("pv", path, id, vg ? vg->name : NULL, vg ? gid : NULL, true);
}

/* A PV report's status rows: each VG's PVs (the ones the report is about) then the VG,
 * the PVs of no VG, then the orphans. */
static void log_status_pvs(struct cli *c, struct ulvm_vg **vgs, size_t nvgs,
                           const struct ulvm_dev_info *devs, size_t ndevs)
{
	for (size_t v = 0; v <= nvgs; v++) {
		for (size_t p = 0; v < nvgs && p < vgs[v]->npvs; p++)
			for (size_t d = 0; d < ndevs; d++) {
				bool sel = !c->nargs;
				if (!devs[d].is_pv || strcmp(vgs[v]->pvs[p]->uuid, devs[d].pv_uuid))
					continue;
				for (int i = 0; i < c->nargs; i++)
					sel |= cli_same_device(c->args[i], devs[d].path);
				if (sel)
					log_status_pv(devs[d].path, devs[d].pv_uuid, vgs[v]);
			}
		for (size_t d = 0; v == nvgs && d < ndevs; d++) {
			bool sel = !c->nargs, orphan = devs[d].is_pv;
			for (size_t w = 0; w < nvgs; w++)
				for (size_t p = 0; p < vgs[w]->npvs; p++)
					orphan &=
					    strcmp(vgs[w]->pvs[p]->uuid, devs[d].pv_uuid) != 0;
			for (int i = 0; i < c->nargs; i++)
				sel |= cli_same_device(c->args[i], devs[d].path);
			if (sel && orphan)
				log_status_pv(devs[d].path, devs[d].pv_uuid, NULL);
		}
		if (v < nvgs)
			log_status_vg(vgs[v], true);
	}
	cmdlog_status("orphan", "lvm2", NULL, NULL, NULL, true);
}

/* An LV report's end of a VG in the log report: the LVs named that it lacks (an error and
 * their failure), then its own status. */
static void log_status_lvs_vg(struct cli *c, const struct ulvm_vg *vg)
{
	char gid[64];
	bool ok = true;

	log_uuid(gid, sizeof(gid), vg->uuid);
	for (int i = 0; i < c->nargs; i++) {
		char vgn[256], lvn[256];
		bool vg_named = false;
		if (cli_split_lv(c->args[i], vgn, sizeof(vgn), lvn, sizeof(lvn)) ||
		    strcmp(vgn, vg->name))
			continue;
		for (int k = 0; k < c->nargs; k++)
			vg_named |= !strcmp(c->args[k], vgn);
		if (vg_named || ulvm_lv_find((struct ulvm_vg *)vg, lvn))
			continue;
		cli_report_error("lv", lvn, NULL, vgn, gid,
		                 "Failed to find logical volume \"%s/%s\"", vgn, lvn);
		cmdlog_status("lv", lvn, NULL, vgn, gid, false);
		ok = false;
	}
	log_status_vg(vg, ok);
}

static void full_vg_order(struct cli *c, char **names, size_t n);

/* With the log report: the VGs in LVM2's order, so that their status rows come in it: as
 * the arguments name them, else as LVM2 finds them. */
static void log_vg_order(struct cli *c, struct ulvm_vg **vgs, size_t n, bool by_args)
{
	char **names;
	struct ulvm_vg **copy;

	if (!n)
		return;
	names = calloc(n + 1, sizeof(*names));
	copy = calloc(n + 1, sizeof(*copy));
	if (names && copy) {
		size_t placed = 0;
		for (size_t i = 0; i < n; i++)
			names[i] = (char *)vgs[i]->name;
		if (!by_args || !c->nargs)
			full_vg_order(c, names, n);
		for (int a = 0; by_args && a < c->nargs; a++) {
			char vgn[256], lvn[256];
			if (cli_split_lv(c->args[a], vgn, sizeof(vgn), lvn, sizeof(lvn)))
				snprintf(vgn, sizeof(vgn), "%s", c->args[a]);
			for (size_t i = placed; i < n; i++)
				if (!strcmp(names[i], vgn)) {
					char *x = names[i];
					memmove(names + placed + 1, names + placed,
					        (i - placed) * sizeof(*names));
					names[placed++] = x;
					break;
				}
		}
		memcpy(copy, vgs, n * sizeof(*vgs));
		for (size_t i = 0; i < n; i++)
			for (size_t k = 0; k < n; k++)
				if (copy[k] && names[i] == copy[k]->name) {
					vgs[i] = copy[k];
					copy[k] = NULL;
					break;
				}
	}
	free(names);
	free(copy);
}

static void print_table(struct cli *c, struct table *t, enum report_type type)
{
	static const char *const json_names[] = {"pv", "vg", "lv", "seg", "pvseg", "devtype"};
	size_t widths[MAX_COLS];
	struct strbuf o;

	/* Rows go to stdout a line at a time (stdio buffers them). */
	sb_init(&o);
	if (c->json) {
		/* as LVM2: "seg" and "pvseg" only for --segments; LV or segment fields in a
		 * report keep its name */
		if (!t->segments_given && !full.on)
			type = type == REPORT_SEG     ? REPORT_LV
			       : type == REPORT_PVSEG ? REPORT_PV
			                              : type;
		if (full.on && !full.json_first)
			sb_puts(&o, "              ,\n");
		else if (!full.on)
			sb_puts(&o, "  {\n      \"report\": [\n          {\n");
		full.json_first = false;
		sb_printf(&o, "              \"%s\": [\n", json_names[type]);
		for (size_t r = 0; r < t->nrows; r++) {
			sb_puts(&o, "                  {");
			for (size_t k = 0; k < t->ncols; k++) {
				if (k)
					sb_puts(&o, ", ");
				sb_put_quoted(&o, t->cols[k]->name);
				sb_putc(&o, ':');
				json_value(c, &o, t->cols[k], t->cells[r * t->ncols + k]);
			}
			sb_puts(&o, r + 1 < t->nrows ? "},\n" : "}\n");
			fputs(o.buf, stdout);
			sb_reset(&o);
		}
		sb_puts(&o, full.on ? "              ]\n"
		            : cmdlog_on()
		                ? "              ]\n          }\n      ]\n" /* the log next */
		                : "              ]\n          }\n      ]\n  }\n");
		fputs(o.buf ? o.buf : "", stdout);
		sb_free(&o);
		return;
	}
	if (!t->nrows)
		return;    /* LVM2 prints nothing, not even headings, for an empty report */
	if (cmdlog_on()) { /* as LVM2: with the log report, each report is named */
		if (full.titled)
			sb_puts(&o, "  \n");
		full.titled = full.on;
		sb_puts(&o, log_report_title(t, type));
	}
	/* LVM2's declared widths hold the heading, and hold without headings too */
	for (size_t k = 0; k < t->ncols; k++) {
		widths[k] = MAX(strlen(t->cols[k]->heading), t->cols[k]->width);
		/* --unbuffered: each row goes out as it is read, so the widths are the
		 * first row's (LVM2 prints the headings with it) */
		for (size_t r = 0; r < t->nrows && (!c->unbuffered || !r); r++)
			widths[k] = MAX(widths[k], strlen(t->cells[r * t->ncols + k]));
	}
	bool align = (!c->separator || c->aligned) && !c->nameprefixes && !c->rows;
	const char *sep = c->separator ? c->separator : " ";
	if (c->rows) { /* --rows: a line per field, its values across */
		for (size_t k = 0; k < t->ncols; k++) {
			sb_puts(&o, "  ");
			if (!c->noheadings) {
				sb_puts(&o, t->cols[k]->heading);
				sb_puts(&o, sep);
			}
			for (size_t r = 0; r < t->nrows; r++) {
				if (r)
					sb_puts(&o, sep);
				if (c->nameprefixes)
					put_prefixed(c, &o, t->cols[k], t->cells[r * t->ncols + k]);
				else
					sb_puts(&o, t->cells[r * t->ncols + k]);
			}
			sb_putc(&o, '\n');
			fputs(o.buf, stdout);
			sb_reset(&o);
		}
		sb_free(&o);
		return;
	}
	if (!c->noheadings) {
		sb_puts(&o, "  ");
		for (size_t k = 0; k < t->ncols; k++) {
			if (k)
				sb_puts(&o, sep);
			if (align)
				sb_printf(&o, "%-*s", (int)widths[k], t->cols[k]->heading);
			else
				sb_puts(&o, t->cols[k]->heading);
		}
		sb_putc(&o, '\n');
	}
	for (size_t r = 0; r < t->nrows; r++) {
		fputs(o.buf ? o.buf : "", stdout);
		sb_reset(&o);
		sb_puts(&o, "  ");
		for (size_t k = 0; k < t->ncols; k++) {
			const char *v = t->cells[r * t->ncols + k];
			bool right = t->cols[k]->type != F_STR || t->cols[k]->right ||
			             (c->binary && selection_binary_field(t->cols[k]->name));
			if (k)
				sb_puts(&o, sep);
			if (c->nameprefixes)
				put_prefixed(c, &o, t->cols[k], v);
			else if (align)
				put_padded(&o, v, widths[k], right);
			else
				sb_puts(&o, v);
		}
		sb_putc(&o, '\n');
	}
	fputs(o.buf ? o.buf : "", stdout);
	sb_free(&o);
}

static bool lv_selected(struct cli *c, const struct ulvm_vg *vg, const struct ulvm_lv *lv)
{
	if (!c->nargs)
		return true;
	for (int i = 0; i < c->nargs; i++) {
		char vgn[256], lvn[256];
		if (!strcmp(c->args[i], vg->name))
			return true;
		if (!cli_split_lv(c->args[i], vgn, sizeof(vgn), lvn, sizeof(lvn)) &&
		    !strcmp(vgn, vg->name) && !strcmp(lvn, lv->name))
			return true;
	}
	return false;
}

/* The VGs of a report, open while its rows refer to them. */
struct vg_set {
	struct ulvm_vg **v;
	size_t n;
};

static int collect_vg(struct cli *c, struct ulvm_vg *vg, void *arg)
{
	struct vg_set *set = arg;
	struct ulvm_vg **nv = realloc(set->v, (set->n + 1) * sizeof(*nv));

	(void)c;
	if (!nv) {
		ulvm_vg_close(vg);
		return cli_fail(ulvm_error(-ENOMEM, "out of memory"));
	}
	set->v = nv;
	set->v[set->n++] = vg;
	return ECMD_PROCESSED;
}

static bool nvgs_has(struct ulvm_vg *const *vgs, size_t n, const char *name)
{
	for (size_t v = 0; v < n; v++)
		if (!strcmp(vgs[v]->name, name))
			return true;
	return false;
}

/* A PV report's rows as LVM2 reads them: the VGs by name, each one's PVs in its metadata's
 * order, then the PVs of no VG in the devices' order. */
static int unbuffered_pv_cmp(const void *a, const void *b)
{
	const struct row *x = a, *y = b;
	size_t i = 0, j = 0;
	int d;

	if (!x->vg != !y->vg)
		return x->vg ? -1 : 1;
	if (x->vg && (d = strcmp(x->vg->name, y->vg->name)))
		return d;
	if (x->vg) {
		while (i < x->vg->npvs && x->vg->pvs[i] != x->pv)
			i++;
		while (j < y->vg->npvs && y->vg->pvs[j] != y->pv)
			j++;
	} else {
		i = (size_t)(x->dev - y->dev > 0);
		j = (size_t)(x->dev - y->dev < 0);
	}
	if (i != j)
		return i < j ? -1 : 1;
	return (x->pvseg_start > y->pvseg_start) - (x->pvseg_start < y->pvseg_start);
}

static void unbuffered_pv_order(struct table *t)
{
	if (t->nrows > 1)
		qsort(t->rows, t->nrows, sizeof(*t->rows), unbuffered_pv_cmp);
}

/* As LVM2, the fields of other objects change what a report's rows are: vgs with PV fields
 * has a row per PV of its VGs (per PV segment with pvseg fields), with LV fields a row per LV
 * (per segment with segment fields); LV and PV fields together in lvs or vgs are refused. */
static int promote_report(const struct table *t, enum report_type *type)
{
	bool pv = false, pvseg = false, lv = false, seg = false;

	for (size_t k = 0; k < t->ncols; k++) {
		pv |= t->cols[k]->obj == O_PV;
		pvseg |= t->cols[k]->obj == O_PVSEG;
		lv |= t->cols[k]->obj == O_LV;
		seg |= t->cols[k]->obj == O_SEG;
	}
	if ((*type == REPORT_LV || *type == REPORT_SEG || *type == REPORT_VG) && (pv || pvseg) &&
	    (lv || seg || *type != REPORT_VG))
		return ulvm_error(-EINVAL,
		                  "Can't report LV and PV fields at the same time in report type "
		                  "\"%s\".",
		                  *type == REPORT_VG    ? "vg"
		                  : *type == REPORT_SEG ? "seg"
		                                        : "lv");
	if (*type == REPORT_VG)
		*type = pvseg ? REPORT_PVSEG
		        : pv  ? REPORT_PV
		        : seg ? REPORT_SEG
		        : lv  ? REPORT_LV
		              : *type;
	return 0;
}

int report_run(struct cli *c, enum report_type type)
{
	static const char *const defaults[] = {
	    [REPORT_PV] = "pv_name,vg_name,pv_fmt,pv_attr,pv_size,pv_free",
	    [REPORT_VG] = "vg_name,pv_count,lv_count,snap_count,vg_attr,vg_size,vg_free",
	    /* clang-format off */
		[REPORT_LV] = "lv_name,vg_name,lv_attr,lv_size,pool_lv,origin,data_percent,metadata_percent,move_pv,mirror_log,copy_percent,convert_lv",
	    /* clang-format on */
	    [REPORT_SEG] = "lv_name,vg_name,lv_attr,stripes,segtype,seg_size",
	    [REPORT_PVSEG] =
	        "pv_name,vg_name,pv_fmt,pv_attr,pv_size,pv_free,pvseg_start,pvseg_size",
	    [REPORT_DEVTYPE] = "devtype_name,devtype_max_partitions,devtype_description",
	};
	static const char *const default_sort[] = {[REPORT_PV] = "pv_name",
	                                           [REPORT_VG] = "vg_name",
	                                           [REPORT_LV] = "vg_name,lv_name",
	                                           [REPORT_SEG] = "vg_name,lv_name,seg_start",
	                                           [REPORT_PVSEG] = "pv_name,pvseg_start",
	                                           [REPORT_DEVTYPE] = "devtype_name"};
	/* fullreport's: LVM2's report/TYPE_cols_full and TYPE_sort_full */
	static const char *const full_defaults[] = {[REPORT_PV] = "pv_all",
	                                            [REPORT_VG] = "vg_all",
	                                            [REPORT_LV] = "lv_all",
	                                            [REPORT_SEG] = "seg_all,lv_uuid",
	                                            [REPORT_PVSEG] = "pvseg_all,pv_uuid,lv_uuid"};
	static const char *const full_sort[] = {[REPORT_PV] = "pv_name",
	                                        [REPORT_VG] = "vg_name",
	                                        [REPORT_LV] = "vg_name,lv_name",
	                                        [REPORT_SEG] = "lv_uuid,seg_start",
	                                        [REPORT_PVSEG] = "pv_uuid,pvseg_start"};
	struct table t = {0};
	struct vg_set set = {0};
	struct ulvm_vg **vgs = NULL;
	size_t nvgs = 0;
	struct active_set active = {0};
	struct sort_spec sp = {0};
	struct report_sel *rsel = NULL;
	const struct ulvm_dev_info *devs;
	size_t ndevs;
	int r, rc;
	bool replaced = false, pv_report, vg_args;
	const enum report_type base = type; /* the command's: its sort order and report name */

	if (!full.on) {
		if ((r = cmdlog_check()))
			return r;
		cmdlog_start();
	}
	t.segments_given = c->segments;
	if (c->segments && type == REPORT_LV)
		type = REPORT_SEG;
	if (c->segments && type == REPORT_PV)
		type = REPORT_PVSEG;
	for (int i = 0; i < c->nfields; i++)
		if (c->fields[i][0] != '+')
			replaced = true;
	if (!replaced &&
	    (r = add_cols(c, &t, full.on ? full_defaults[type] : defaults[type], type)))
		return cli_fail(r);
	for (int i = 0; i < c->nfields; i++)
		if ((r = add_cols(c, &t, c->fields[i] + (c->fields[i][0] == '+'), type)))
			return cli_fail(r);
	if (c->segments && type == REPORT_LV)
		type = REPORT_SEG;
	if (c->segments && type == REPORT_PV)
		type = REPORT_PVSEG;
	if ((r = promote_report(&t, &type)))
		return cli_fail(r);
	/* vgs promoted to a PV report: its arguments are still VG names */
	vg_args = base == REPORT_VG && type != REPORT_VG;
	/* the criteria are checked before anything is read, as in LVM2 */
	if ((r = report_select_init(c, type, &rsel)))
		return r == -EINVAL ? ECMD_FAILED : cli_fail(r);

	pv_report = type == REPORT_PV || type == REPORT_PVSEG;
	if (type == REPORT_DEVTYPE) { /* a static table: no devices, no VGs */
		size_t n;
		const struct cli_devtype *dt = cli_devtypes(&n);
		for (size_t i = 0; i < n; i++) {
			struct row row = {.devtype = &dt[i]};
			if ((r = add_row(&t, &row)))
				return cli_fail(r);
		}
		rc = ECMD_PROCESSED;
		goto rows_done;
	}
	if ((r = cli_open_ctx(c))) {
		report_select_free(rsel);
		return cli_fail(r);
	}
	if (!ulvm_ctx_device_count(c->ctx) && !c->quiet && !full.warned)
		fprintf(stderr, "  WARNING: no devices given: use --devices PATH[,PATH...], "
		                "--devicesfile FILE or $ULVM_DEVICES (ulvm never scans the host's "
		                "/dev).\n");
	full.warned = full.on;
	/* A PV report's arguments are devices: it reads every VG. */
	rc = cli_each_vg(c, c->args, pv_report && !vg_args ? 0 : c->nargs, ULVM_LOCK_READ,
	                 collect_vg, &set);
	vgs = set.v;
	nvgs = set.n;
	for (size_t v = 0; c->history && v < nvgs; v++)
		if (ulvm_vg_historical_lvs(vgs[v])) {
			report_select_free(rsel);
			rc = cli_fail(
			    ulvm_error(-EOPNOTSUPP,
			               "VG %s records historical LVs: ulvm does not report "
			               "them (-H|--history)",
			               vgs[v]->name));
			for (size_t k = 0; k < nvgs; k++)
				ulvm_vg_close(vgs[k]);
			free(vgs);
			return rc;
		}
	if (cmdlog_on() && !full.on)
		log_vg_order(c, vgs, nvgs, !pv_report);
	if (!pv_report && type != REPORT_VG && ulvm_active_list(&active.names, &active.n))
		active.n = 0;
	/* Rows. */
	if (pv_report) {
		if ((r = ulvm_scan(c->ctx, &devs, &ndevs))) {
			report_select_free(rsel);
			return cli_fail(r);
		}
		if (!vg_args && cli_check_pv_args(c->args, c->nargs, devs, ndevs))
			rc = ECMD_FAILED;
		for (size_t d = 0; d < ndevs; d++) {
			struct row row = {.active = &active, .dev = &devs[d]};
			if (!devs[d].is_pv)
				continue;
			if (c->nargs && !vg_args) {
				bool sel = false;
				for (int i = 0; i < c->nargs; i++)
					sel |= cli_same_device(c->args[i], devs[d].path);
				if (!sel)
					continue;
			}
			for (size_t v = 0; v < nvgs; v++) {
				struct ulvm_pv *pv = NULL;
				for (size_t p = 0; p < vgs[v]->npvs; p++)
					if (!strcmp(vgs[v]->pvs[p]->uuid, devs[d].pv_uuid))
						pv = vgs[v]->pvs[p];
				if (pv) {
					row.vg = vgs[v];
					row.pv = pv;
				}
			}
			if (full.on &&
			    (full.vg ? !row.vg || strcmp(row.vg->name, full.vg) : !!row.vg))
				continue; /* fullreport: this VG's PVs, or the PVs of no VG */
			if (vg_args && !row.vg)
				continue; /* vgs: the PVs of its VGs */
			if (full.on)
				log_status_pv(devs[d].path, devs[d].pv_uuid, row.vg);
			add_pv_rows(&t, &row, type == REPORT_PVSEG);
		}
		for (size_t v = 0; v < nvgs; v++)
			for (size_t p = 0; p < vgs[v]->npvs; p++)
				if (!vgs[v]->pvs[p]->device && (!c->nargs || vg_args) &&
				    (!full.on || (full.vg && !strcmp(full.vg, vgs[v]->name)))) {
					struct row row = {
					    .active = &active, .vg = vgs[v], .pv = vgs[v]->pvs[p]};
					static struct ulvm_dev_info missing = {.path = "[unknown]"};
					row.dev = &missing;
					add_pv_rows(&t, &row, type == REPORT_PVSEG);
				}
	} else {
		for (size_t v = 0; v < nvgs; v++) {
			struct ulvm_vg *vg = vgs[v];
			if (type == REPORT_VG) {
				struct row row = {.active = &active, .vg = vg};
				add_row(&t, &row);
				if (!full.on)
					log_status_vg(vg, true);
				continue;
			}
			/* as LVM2: an exported VG's LVs are not read; naming it fails */
			if (cli_vg_exported_skip(c, vg)) {
				rc = ECMD_FAILED;
				continue;
			}
			if (ulvm_strlist_has(&vg->status, "EXPORTED"))
				continue;
			for (size_t l = 0; l < vg->nlvs; l++) {
				struct ulvm_lv *lv = vg->lvs[l];
				bool named = false;
				for (int i = 0; i < c->nargs; i++) {
					char vgn[256], lvn[256];
					named |= !cli_split_lv(c->args[i], vgn, sizeof(vgn), lvn,
					                       sizeof(lvn)) &&
					         !strcmp(lvn, lv->name) && !strcmp(vgn, vg->name);
				}
				if (!lv_selected(c, vg, lv) ||
				    (!named && !lv_shown(vg, lv, c->all)))
					continue;
				log_status_lv(vg, lv);
				if (type == REPORT_SEG) {
					for (size_t s = 0; s < lv->nsegs; s++) {
						struct row row = {.active = &active,
						                  .vg = vg,
						                  .lv = lv,
						                  .seg = &lv->segs[s]};
						add_row(&t, &row);
					}
				} else {
					struct row row = {.active = &active, .vg = vg, .lv = lv};
					add_row(&t, &row);
				}
			}
			if (cmdlog_on() && !full.on)
				log_status_lvs_vg(c, vg);
		}
	}
	/* A named LV that is not there fails, as in LVM2 (unless its VG is named too). */
	for (int i = 0; !pv_report && !vg_args && type != REPORT_VG && i < c->nargs; i++) {
		char vgn[256], lvn[256];
		bool seen = false, vg_named = false;
		if (cli_split_lv(c->args[i], vgn, sizeof(vgn), lvn, sizeof(lvn)))
			continue;
		for (int k = 0; k < c->nargs; k++)
			vg_named |= !strcmp(c->args[k], vgn);
		for (size_t v = 0; v < nvgs && !seen; v++)
			if (!strcmp(vgs[v]->name, vgn))
				seen = vg_named || ulvm_lv_find(vgs[v], lvn);
		if (!seen && nvgs_has(vgs, nvgs, vgn)) {
			if (!cmdlog_on() || full.on) /* else in the log report, with its VG */
				fprintf(stderr, "  Failed to find logical volume \"%s/%s\"\n", vgn,
				        lvn);
			rc = ECMD_FAILED;
		}
	}
	if (cmdlog_on() && pv_report && !full.on)
		log_status_pvs(c, vgs, nvgs, devs, ndevs);
rows_done:
	/* -S: only the rows that match; with the selected field, as LVM2, every row, and
	 * whether it matched */
	if (rsel) {
		size_t kept = 0;
		bool show_all = false;
		for (size_t k = 0; k < t.ncols; k++)
			show_all |= t.cols[k]->get == f_selected;
		for (size_t i = 0; i < t.nrows; i++) {
			bool match = select_row(rsel, &t.rows[i]);
			if (show_all)
				t.rows[i].unselected = !match;
			if (match || show_all)
				t.rows[kept++] = t.rows[i];
		}
		t.nrows = kept;
		report_select_free(rsel);
		rsel = NULL;
	}
	/* Sort. */
	{
		char *spec = strdup(c->sort   ? c->sort
		                    : full.on ? full_sort[type]
		                              : default_sort[vg_args ? base : type]),
		     *save = NULL, *tok;
		for (tok = spec ? strtok_r(spec, ",", &save) : NULL; tok && sp.nkeys < 8;
		     tok = strtok_r(NULL, ",", &save)) {
			bool desc = *tok == '-';
			const struct field *f = find_field(tok + (desc || *tok == '+'), type);
			if (!f) { /* as LVM2: the fields, then which is not one */
				report_list_fields(type);
				r = ulvm_error(-EINVAL, "dm_report: Unrecognised field: %s", tok);
				free(spec);
				free(t.rows);
				for (size_t v = 0; v < nvgs; v++)
					ulvm_vg_close(vgs[v]);
				free(vgs);
				if (active.n)
					ulvm_active_list_free(active.names, active.n);
				return cli_fail(r);
			}
			sp.desc[sp.nkeys] = desc;
			sp.keys[sp.nkeys++] = f;
		}
		free(spec);
	}
	/* --unbuffered: rows in the order they were read (as LVM2's: the VGs by name, their
	 * LVs and PVs as the metadata lists them, then the PVs of no VG) */
	if (c->unbuffered && pv_report)
		unbuffered_pv_order(&t);
	else if (t.nrows && !c->unbuffered && (r = sort_rows(c, &t, &sp)))
		return cli_fail(r);
	/* Cells: every value is appended, NUL-terminated, to one pool; building each in a
	 * strbuf of its own would touch a fresh 256-byte buffer per cell. */
	{
		struct strbuf pool, cell;
		size_t *offs = calloc(t.nrows * t.ncols + 1, sizeof(*offs));

		sb_init(&pool);
		sb_init(&cell);
		for (size_t rr = 0; offs && rr < t.nrows; rr++)
			for (size_t k = 0; k < t.ncols; k++) {
				sb_reset(&cell);
				/* a free PV segment has no LV: its LV and segment fields are empty
				 */
				if ((t.cols[k]->obj == O_LV && !t.rows[rr].lv) ||
				    (t.cols[k]->obj == O_SEG && !t.rows[rr].seg)) {
					if (t.cols[k]->type != F_STR)
						put_size(c, &cell, 0);
				} else {
					t.cols[k]->get(c, &t.rows[rr], &cell);
				}
				/* --binary (and json_std): 1 or 0 for the fields that are set or
				 * not */
				if ((c->binary || c->json_std) &&
				    selection_binary_field(t.cols[k]->name)) {
					bool on = cell.len > 0;
					bool undef = on && !strcmp(cell.buf, "unknown");
					sb_reset(&cell);
					sb_puts(&cell, undef ? "-1" : on ? "1" : "0");
				}
				offs[rr * t.ncols + k] = pool.len;
				sb_put(&pool, cell.buf ? cell.buf : "", cell.len + 1);
			}
		t.cells = calloc(t.nrows * t.ncols + 1, sizeof(char *));
		if (offs && t.cells && !pool.oom && !cell.oom) {
			for (size_t i = 0; i < t.nrows * t.ncols; i++)
				t.cells[i] = pool.buf + offs[i];
			if (!cmdlog_only())
				print_table(c, &t, vg_args ? base : type);
		} else {
			rc = cli_fail(ulvm_error(-ENOMEM, "out of memory"));
		}
		free(t.cells);
		free(offs);
		sb_free(&pool);
		sb_free(&cell);
	}
	free(t.rows);
	if (!full.on) {
		cmdlog_print(c, !cmdlog_only());
		cmdlog_reset();
	}
	for (size_t v = 0; v < nvgs; v++)
		ulvm_vg_close(vgs[v]);
	free(vgs);
	if (active.n)
		ulvm_active_list_free(active.names, active.n);
	return rc;
}

/* ---- fullreport ---- */

/* A sub-report's -o, -O and -S (after --configreport NAME). */
struct full_sub {
	const char *fields[16];
	int nfields;
	const char *sort, *select;
};

/* One VG's reports (or, vg NULL, those of the PVs of no VG). */
static int full_group(struct cli *c, const char *vg, struct full_sub *subs)
{
	static const enum report_type order[] = {REPORT_VG, REPORT_PV, REPORT_LV, REPORT_PVSEG,
	                                         REPORT_SEG};
	int rc = ECMD_PROCESSED;
	char *arg[] = {(char *)vg, NULL};

	full.vg = vg;
	full.json_first = true;
	if (c->json)
		fputs("          {\n", stdout);
	for (size_t i = 0; i < ARRAY_SIZE(order); i++) {
		enum report_type type = order[i];
		bool pv_report = type == REPORT_PV || type == REPORT_PVSEG;
		struct cli sub = *c;
		if (!vg && !pv_report)
			continue;
		memcpy(sub.fields, subs[type].fields, sizeof(sub.fields));
		sub.nfields = subs[type].nfields;
		sub.sort = subs[type].sort;
		sub.select = subs[type].select;
		sub.args = pv_report ? NULL : arg;
		sub.nargs = pv_report ? 0 : 1;
		if (report_run(&sub, type) != ECMD_PROCESSED)
			rc = ECMD_FAILED;
		fflush(stdout);
	}
	if (c->json)
		fputs("          }\n", stdout);
	return rc;
}

static bool have_orphans(struct cli *c)
{
	const struct ulvm_dev_info *devs;
	size_t n;

	if (ulvm_scan(c->ctx, &devs, &n))
		return false;
	for (size_t d = 0; d < n; d++)
		if (devs[d].is_pv && !(devs[d].vg_name && devs[d].vg_name[0]))
			return true;
	return false;
}

/* The VGs in LVM2's order: its cache lists each VG it finds before the ones found
 * earlier, so the VG of the last device comes first. */
static void full_vg_order(struct cli *c, char **names, size_t n)
{
	const struct ulvm_dev_info *devs;
	size_t nd, placed = 0;

	if (ulvm_scan(c->ctx, &devs, &nd))
		return;
	for (size_t d = 0; d < nd; d++)
		for (size_t v = placed; v < n && devs[d].vg_name; v++)
			if (!strcmp(names[v], devs[d].vg_name)) {
				char *x = names[v];
				memmove(names + placed + 1, names + placed,
				        (v - placed) * sizeof(*names));
				names[placed++] = x;
				break;
			}
	for (size_t i = 0; i < placed / 2; i++) {
		char *x = names[i];
		names[i] = names[placed - 1 - i];
		names[placed - 1 - i] = x;
	}
}

int report_opt(struct cli *c, int opt, const char *arg); /* cmd_pv.c */

int cmd_fullreport(struct cli *c, int argc, char **argv)
{
	static const struct option lo[] = {COMMON_LONGOPTS,
	                                   {"options", required_argument, NULL, 'o'},
	                                   {"sort", required_argument, NULL, 'O'},
	                                   {"select", required_argument, NULL, 'S'},
	                                   {"all", no_argument, NULL, 'a'},
	                                   {"units", required_argument, NULL, 3000},
	                                   {"nosuffix", no_argument, NULL, 3001},
	                                   {"noheadings", no_argument, NULL, 3002},
	                                   {"separator", required_argument, NULL, 3003},
	                                   {"reportformat", required_argument, NULL, 3004},
	                                   {"aligned", no_argument, NULL, 3006},
	                                   {"binary", no_argument, NULL, 3007},
	                                   {"nameprefixes", no_argument, NULL, 3008},
	                                   {"unquoted", no_argument, NULL, 3009},
	                                   {"rows", no_argument, NULL, 3010},
	                                   {"configreport", required_argument, NULL, 3011},
	                                   {"logonly", no_argument, NULL, CMDLOG_OPT_LOGONLY},
	                                   {"foreign", no_argument, NULL, CMDLOG_OPT_FOREIGN},
	                                   {0}};
	static const char *const kinds[] = {"log", "vg", "pv", "lv", "pvseg", "seg"};
	static const int kind_type[] = {-3 /* log */, REPORT_VG,    REPORT_PV,
	                                REPORT_LV,    REPORT_PVSEG, REPORT_SEG};
	struct full_sub subs[REPORT_PVSEG + 1] = {0};
	int cur = -1;       /* the report -o, -O and -S are for: none before --configreport */
	bool fresh = false; /* no -o since that --configreport */
	int opt, r, rc = ECMD_PROCESSED;
	char **names;
	size_t n;

	while ((opt = getopt_long(argc, argv, COMMON_SHORTOPTS "o:O:aS:", lo, NULL)) != -1) {
		if (cli_common_opt(c, opt, optarg) == 1)
			continue;
		if (opt == 3011) {
			fresh = true;
			cur = -2;
			for (size_t k = 0; k < ARRAY_SIZE(kinds); k++)
				if (!strcmp(kinds[k], optarg))
					cur = kind_type[k];
			if (cur == -2) {
				fprintf(stderr, "  Invalid argument for --configreport: %s\n",
				        optarg);
				cli_parse_error();
				return EINVALID_CMD_LINE;
			}
			continue;
		}
		if (opt == CMDLOG_OPT_FOREIGN)
			continue; /* ulvm has no system ID: no VG is foreign */
		if (opt == CMDLOG_OPT_LOGONLY ||
		    (cur == -3 && (opt == 'o' || opt == 'O' || opt == 'S'))) {
			cmdlog_opt(opt, optarg); /* the log report's */
			continue;
		}
		if (opt == 'o' || opt == 'O' || opt == 'S') {
			struct full_sub *s = cur >= 0 ? &subs[cur] : NULL;
			if (!s)
				continue;
			if (opt == 'o' && fresh) /* as LVM2: a later --configreport's -o replaces */
				s->nfields = 0;
			if (opt == 'o')
				fresh = false;
			if (opt == 'o' && s->nfields < (int)ARRAY_SIZE(s->fields))
				s->fields[s->nfields++] = optarg;
			else if (opt == 'O')
				s->sort = optarg;
			else if (opt == 'S')
				s->select = optarg;
			continue;
		}
		if (report_opt(c, opt, optarg) != 1)
			return EINVALID_CMD_LINE;
	}
	for (int t = 0; t <= REPORT_PVSEG; t++) {
		struct report_sel *rs;
		struct cli probe = *c;
		for (int i = 0; i < subs[t].nfields; i++)
			if (!strcmp(subs[t].fields[i], "help") || !strcmp(subs[t].fields[i], "?"))
				return report_list_fields((enum report_type)t);
		if (subs[t].select &&
		    (!strcasecmp(subs[t].select, "help") || !strcmp(subs[t].select, "?")))
			return report_select_help();
		/* bad criteria fail before anything is read, once */
		probe.select = subs[t].select;
		if ((r = report_select_init(&probe, (enum report_type)t, &rs)))
			return r == -EINVAL ? ECMD_FAILED : cli_fail(r);
		report_select_free(rs);
	}
	for (int i = optind; i < argc; i++)
		if (strchr(argv[i], '/')) {
			fprintf(stderr, "  Invalid volume group name %s.\n", argv[i]);
			fprintf(stderr, "  Run `fullreport --help' for more information.\n");
			return EINVALID_CMD_LINE;
		}
	if ((r = cmdlog_check()))
		return r;
	cmdlog_start();
	if ((r = cli_vg_names(c, &names, &n)))
		return cli_fail(r);
	full_vg_order(c, names, n);
	full = (struct full_state){.on = true};
	struct cli quiet = *c, *orig = c; /* --logonly: the reports are made, not printed */
	quiet.json = false;
	if (cmdlog_only())
		c = &quiet;
	if (c->json)
		fputs("  {\n      \"report\": [\n", stdout);
	bool first = true;
	for (size_t v = 0; v < n; v++) {
		bool named = optind >= argc;
		for (int i = optind; i < argc && !named; i++)
			named = !strcmp(names[v], argv[i]);
		if (!named)
			continue;
		if (c->json && !first)
			fputs("          ,\n", stdout);
		first = false;
		bool ok = full_group(c, names[v], subs) == ECMD_PROCESSED;
		if (!ok)
			rc = ECMD_FAILED;
		if (cmdlog_on()) { /* the VG's status, after its five reports' */
			struct ulvm_vg *vg;
			if (!ulvm_vg_open(c->ctx, names[v], ULVM_LOCK_READ, &vg)) {
				log_status_vg(vg, ok);
				ulvm_vg_close(vg);
			}
		}
	}
	if (optind >= argc && have_orphans(c)) {
		if (c->json && !first)
			fputs("          ,\n", stdout);
		if (full_group(c, NULL, subs) != ECMD_PROCESSED)
			rc = ECMD_FAILED;
	}
	/* as LVM2: the VGs named that are not there, after the others */
	for (int i = optind; i < argc; i++) {
		bool found = false;
		for (size_t v = 0; v < n && !found; v++)
			found = !strcmp(names[v], argv[i]);
		if (!found) {
			cli_report_error("vg", argv[i], NULL, NULL, NULL,
			                 "Volume group \"%s\" not found", argv[i]);
			cli_report_error("vg", argv[i], NULL, NULL, NULL,
			                 "Cannot process volume group %s", argv[i]);
			cmdlog_status("vg", argv[i], NULL, NULL, NULL, false);
			rc = ECMD_FAILED;
		}
	}
	if (optind >= argc)
		cmdlog_status("orphan", "lvm2", NULL, NULL, NULL, true);
	if (c->json)
		fputs(cmdlog_on() ? "      ]\n" : "      ]\n  }\n", stdout);
	cmdlog_print(orig, !cmdlog_only());
	cmdlog_reset();
	full = (struct full_state){0};
	cli_free_names(names, n);
	return rc;
}
