/*
 * The other forms of LVM2's display commands: the maps (lvdisplay -m, pvdisplay -m), the
 * colon-separated lines for scripts (-c), the short forms (-s) and vgdisplay -v's lists,
 * each in LVM2's words and layout. lvdisplay, pvdisplay and vgdisplay print their main
 * blocks themselves and call these.
 */
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../util/util.h"
#include "cli.h"

/* LVM2's status bits, as the colon forms print them */
#define ST_EXPORTED    0x002
#define ST_RESIZEABLE  0x004
#define ST_ALLOCATABLE 0x008
#define ST_READ        0x100
#define ST_WRITE       0x200
#define ST_CLUSTERED   0x400

void cli_display_size(const struct cli *c, uint64_t sectors, char *b, size_t len)
{
	static const char units[] = "kmgtpe";
	static const char *const binary[] = {" KiB", " MiB", " GiB", " TiB", " PiB", " EiB"};
	static const char *const decimal[] = {" kB", " MB", " GB", " TB", " PB", " EB"};
	char u = c->units ? c->units : 'r';
	const char *sfx = "   ", *p;
	uint64_t factor = 1;

	if (!c->units_factor && strchr("hHrR", u)) {
		if (sectors) /* the suffix is kept, --nosuffix or not (as libdm) */
			ulvm_format_size(sectors, u, true, true, b, len);
		else
			snprintf(b, len, "0%s", c->nosuffix ? "" : sfx);
		return;
	}
	if (u == 'U') {
		sfx = " Un";
	} else if (u == 'b' || u == 'B') {
		sfx = " B ";
	} else if (u == 's' || u == 'S') {
		sfx = " Se";
		factor = SECTOR_SIZE;
	} else if ((p = strchr(units, tolower((unsigned char)u)))) {
		sfx = isupper((unsigned char)u) ? decimal[p - units] : binary[p - units];
		for (long i = 0; i <= p - units; i++)
			factor *= isupper((unsigned char)u) ? 1000 : 1024;
	}
	if (c->units_factor)
		factor = c->units_factor;
	if (c->nosuffix)
		sfx = "";
	if (!sectors)
		snprintf(b, len, "0%s", sfx);
	else if (!c->units_factor && (factor == 1 || factor == SECTOR_SIZE))
		snprintf(b, len, "%llu%s", (unsigned long long)(sectors * SECTOR_SIZE / factor),
		         sfx);
	else
		snprintf(b, len, "%.2f%s", (double)sectors * SECTOR_SIZE / (double)factor, sfx);
}

static void area_name(const struct ulvm_area *a, char *b, size_t len)
{
	if (a->type == ULVM_AREA_LV)
		snprintf(b, len, "%s", a->lv_name);
	else
		snprintf(b, len, "%s", a->pv && a->pv->device ? a->pv->device : "[unknown]");
}

void cli_display_lv_map(const struct cli *c, const struct ulvm_vg *vg, const struct ulvm_lv *lv)
{
	printf("  --- Segments ---\n");
	for (size_t s = 0; s < lv->nsegs; s++) {
		const struct ulvm_seg *seg = &lv->segs[s];
		uint32_t len = ulvm_seg_area_len(seg);
		const char *type = ulvm_seg_type(seg);
		char name[4096], b[64];

		printf("  Logical extents %u to %u:\n", seg->start_extent,
		       seg->start_extent + seg->extent_count - 1);
		if (!strcmp(type, "striped") && seg->area_count == 1)
			type = "linear";
		printf("    Type\t\t%s\n", type);
		if (!strcmp(type, "linear")) {
			area_name(&seg->areas[0], name, sizeof(name));
			printf("    %s\t%s\n",
			       seg->areas[0].type == ULVM_AREA_LV ? "Logical volume"
			                                          : "Physical volume",
			       name);
			printf("    %s\t%u to %u\n",
			       seg->areas[0].type == ULVM_AREA_LV ? "Logical extents"
			                                          : "Physical extents",
			       seg->areas[0].pe, seg->areas[0].pe + len - 1);
		} else if (!strcmp(type, "striped")) {
			printf("    Stripes\t\t%u\n", seg->area_count);
			cli_display_size(c, seg->stripe_size, b, sizeof(b));
			printf("    Stripe size\t\t%s\n", b);
			for (uint32_t a = 0; a < seg->area_count; a++) {
				area_name(&seg->areas[a], name, sizeof(name));
				printf("    Stripe %u:\n", a);
				printf("      Physical volume\t%s\n", name);
				printf("      Physical extents\t%u to %u\n", seg->areas[a].pe,
				       seg->areas[a].pe + len - 1);
			}
		}
		printf("   \n");
	}
	(void)vg;
	printf("   \n");
}

void cli_display_lv_colon(const struct ulvm_vg *vg, const struct ulvm_lv *lv, bool active,
                          unsigned opens)
{
	unsigned access =
	    ST_READ >> 8 | (ulvm_strlist_has(&lv->status, "WRITE") ? ST_WRITE >> 8 : 0);

	printf("  /dev/%s/%s:%s:%u:%d:-1:%u:%llu:%u:-1:0:-1:-1:-1\n", vg->name, lv->name, vg->name,
	       access, active ? 1 : 0, opens, (unsigned long long)lv->le_count * vg->extent_size,
	       lv->le_count);
}

/* A PV's extents in order: the LV segment areas on it and the free ranges between. */
struct pv_piece {
	uint32_t pe, len;
	const struct ulvm_lv *lv;
	const struct ulvm_seg *seg;
};

static int piece_cmp(const void *a, const void *b)
{
	const struct pv_piece *x = a, *y = b;

	return x->pe < y->pe ? -1 : x->pe > y->pe;
}

void cli_display_pv_map(const struct ulvm_vg *vg, const struct ulvm_pv *pv)
{
	struct pv_piece *p = NULL;
	size_t n = 0;
	uint32_t pos = 0;

	if (!vg || !pv) {
		printf("   \n");
		return;
	}
	for (size_t l = 0; l < vg->nlvs; l++)
		for (size_t s = 0; s < vg->lvs[l]->nsegs; s++) {
			const struct ulvm_seg *seg = &vg->lvs[l]->segs[s];
			for (uint32_t a = 0; a < seg->area_count; a++) {
				struct pv_piece *np;
				if (seg->areas[a].type != ULVM_AREA_PV || seg->areas[a].pv != pv)
					continue;
				if (!(np = realloc(p, (n + 1) * sizeof(*np))))
					continue;
				p = np;
				p[n++] = (struct pv_piece){seg->areas[a].pe, ulvm_seg_area_len(seg),
				                           vg->lvs[l], seg};
			}
		}
	if (n)
		qsort(p, n, sizeof(*p), piece_cmp);
	printf("  --- Physical Segments ---\n");
	for (size_t i = 0; i <= n; i++) {
		uint32_t end = i < n ? p[i].pe : pv->pe_count;
		if (end > pos)
			printf("  Physical extent %u to %u:\n    FREE\n", pos, end - 1);
		if (i == n)
			break;
		printf("  Physical extent %u to %u:\n", p[i].pe, p[i].pe + p[i].len - 1);
		printf("    Logical volume\t/dev/%s/%s\n", vg->name, p[i].lv->name);
		printf("    Logical extents\t%u to %u\n", p[i].seg->start_extent,
		       p[i].seg->start_extent + p[i].seg->extent_count - 1);
		if (p[i].pe + p[i].len > pos)
			pos = p[i].pe + p[i].len;
	}
	printf("   \n");
	free(p);
}

void cli_display_pv_colon(const char *path, const struct ulvm_vg *vg, const struct ulvm_pv *pv,
                          uint64_t dev_sectors, const char *uuid)
{
	unsigned st = 0;

	if (pv) {
		st |= ulvm_strlist_has(&pv->status, "ALLOCATABLE") ? ST_ALLOCATABLE : 0;
		st |= ulvm_strlist_has(&pv->status, "EXPORTED") ? ST_EXPORTED : 0;
	}
	printf("  %s:%s:%llu:-1:%u:%u:-1:%llu:%u:%u:%u:%s\n", path, vg ? vg->name : "",
	       (unsigned long long)dev_sectors, st, st & ST_ALLOCATABLE,
	       vg && pv ? (unsigned long long)vg->extent_size / 2 : 0ULL,
	       pv && vg ? pv->pe_count : 0, pv && vg ? pv->pe_count - pv->pe_alloc_count : 0,
	       pv && vg ? pv->pe_alloc_count : 0, uuid);
}

void cli_display_pv_short(const struct cli *c, const char *path, uint64_t free_sectors)
{
	char b[64];

	cli_display_size(c, free_sectors, b, sizeof(b));
	printf("  Device \"%s\" has a capacity of %s\n", path, b);
}

static void vg_counts(const struct ulvm_vg *vg, size_t *lvs, size_t *open, size_t *active_pvs)
{
	*lvs = *open = *active_pvs = 0;
	for (size_t l = 0; l < vg->nlvs; l++) {
		char dm[600];
		unsigned opens = 0;
		if (!ulvm_lv_visible(vg->lvs[l]))
			continue;
		(*lvs)++;
		ulvm_lv_dm_name(vg->name, vg->lvs[l]->name, dm, sizeof(dm));
		if (ulvm_lv_active(vg, vg->lvs[l]) && !ulvm_active_open_count(dm, &opens) && opens)
			(*open)++;
	}
	for (size_t p = 0; p < vg->npvs; p++)
		*active_pvs += !vg->pvs[p]->missing;
}

void cli_display_vg_colon(const struct ulvm_vg *vg)
{
	char u[UUID_STR_LEN + 1];
	unsigned st = ST_READ;
	size_t lvs, open, act;
	uint64_t tot = ulvm_vg_total_extents(vg), fr = ulvm_vg_free_extents(vg);

	st |= ulvm_strlist_has(&vg->status, "WRITE") ? ST_WRITE : 0;
	st |= ulvm_strlist_has(&vg->status, "RESIZEABLE") ? ST_RESIZEABLE : 0;
	st |= ulvm_strlist_has(&vg->status, "EXPORTED") ? ST_EXPORTED : 0;
	st |= ulvm_strlist_has(&vg->status, "CLUSTERED") ? ST_CLUSTERED : 0;
	vg_counts(vg, &lvs, &open, &act);
	uuid_format(vg->uuid, u);
	printf("  %s:%s:%u:-1:%u:%zu:%zu:-1:%u:%zu:%zu:%llu:%llu:%llu:%llu:%llu:%s\n", vg->name,
	       st & ST_WRITE ? "r/w" : "r", st, vg->max_lv, lvs, open, vg->max_pv, vg->npvs, act,
	       (unsigned long long)(tot * vg->extent_size / 2),
	       (unsigned long long)vg->extent_size / 2, (unsigned long long)tot,
	       (unsigned long long)(tot - fr), (unsigned long long)fr, u);
}

void cli_display_vg_short(const struct cli *c, const struct ulvm_vg *vg)
{
	char s1[64], s2[64], s3[64];
	uint64_t tot = ulvm_vg_total_extents(vg), fr = ulvm_vg_free_extents(vg);

	cli_display_size(c, tot * vg->extent_size, s1, sizeof(s1));
	cli_display_size(c, (tot - fr) * vg->extent_size, s2, sizeof(s2));
	cli_display_size(c, fr * vg->extent_size, s3, sizeof(s3));
	printf("  \"%s\" %-9s [%-9s used / %s free]\n", vg->name, s1, s2, s3);
}

void cli_display_vg_pvs(const struct ulvm_vg *vg)
{
	char u[UUID_STR_LEN + 1];

	printf("  --- Physical volumes ---\n");
	for (size_t p = 0; p < vg->npvs; p++) {
		const struct ulvm_pv *pv = vg->pvs[p];
		uuid_format(pv->uuid, u);
		printf("  PV Name               %s     \n", pv->device ? pv->device : "[unknown]");
		printf("  PV UUID               %s\n", u);
		printf("  PV Status             %sallocatable\n",
		       ulvm_strlist_has(&pv->status, "ALLOCATABLE") ? "" : "NOT ");
		printf("  Total PE / Free PE    %u / %u\n   \n", pv->pe_count,
		       pv->pe_count - pv->pe_alloc_count);
	}
}
