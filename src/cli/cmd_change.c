/*
 * Attribute changes of lvchange and vgchange beyond tags and activation, with LVM2's
 * words: lvchange -p r|rw (the LV's WRITE flag), vgchange -x y|n (RESIZEABLE), -l N
 * (max_lv), -u (a new VG UUID). They change the VG in memory; the command commits.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "../util/util.h"
#include "cli.h"

/* Set or clear a status word; a word set goes right after `after` when that is there, as
 * LVM2 orders them ("READ", "WRITE", ...), so the metadata reads as LVM2 writes it. */
int cli_status_set(struct ulvm_strlist *l, const char *word, bool on, const char *after)
{
	size_t at = l->n;
	int r;

	if (!on)
		return ulvm_tag_del(l, word);
	if (ulvm_strlist_has(l, word))
		return 0;
	if ((r = ulvm_tag_add(l, word)))
		return r;
	for (size_t i = 0; after && i + 1 < l->n; i++)
		if (!strcmp(l->v[i], after))
			at = i + 1;
	if (at < l->n - 1) {
		char *w = l->v[l->n - 1];
		memmove(&l->v[at + 1], &l->v[at], (l->n - 1 - at) * sizeof(*l->v));
		l->v[at] = w;
	}
	return 0;
}

int cli_lv_permission(struct ulvm_vg *vg, struct ulvm_lv *lv, const char *perm)
{
	bool want = !strcmp(perm, "rw"), has = ulvm_strlist_has(&lv->status, "WRITE");

	if (want == has)
		return want ? ulvm_error(-EEXIST, "Logical volume %s/%s is already writable.",
		                         vg->name, lv->name)
		            : ulvm_error(-EEXIST, "Logical volume \"%s/%s\" is already read only.",
		                         vg->name, lv->name);
	return cli_status_set(&lv->status, "WRITE", want, "READ");
}

int cli_vg_attrs(struct ulvm_vg *vg, const struct cli_vg_attrs *a)
{
	int r;

	if (a->resizeable >= 0) {
		bool has = ulvm_strlist_has(&vg->status, "RESIZEABLE");
		if (has == (a->resizeable == 1))
			return ulvm_error(-EEXIST, "Volume group \"%s\" is already %sresizeable",
			                  vg->name, has ? "" : "not ");
		if ((r = cli_status_set(&vg->status, "RESIZEABLE", a->resizeable == 1, "WRITE")))
			return r;
	}
	if (a->max_lv >= 0) {
		size_t lvs = 0;
		for (size_t l = 0; l < vg->nlvs; l++)
			lvs += ulvm_lv_visible(vg->lvs[l]);
		if (a->max_lv && (size_t)a->max_lv < lvs)
			return ulvm_error(-EINVAL,
			                  "MaxLogicalVolume is less than the current number %zu of "
			                  "LVs for %s",
			                  lvs, vg->name);
		vg->max_lv = (uint32_t)a->max_lv;
	}
	if (a->new_uuid) {
		/* the LVs' devices are named by the VG's UUID: not while any is active */
		for (size_t l = 0; l < vg->nlvs; l++)
			if (ulvm_lv_active(vg, vg->lvs[l]))
				return ulvm_error(-EBUSY,
				                  "Volume group \"%s\" has active logical volumes: "
				                  "deactivate them before changing its UUID",
				                  vg->name);
		char u[UUID_LEN + 1];
		if ((r = uuid_generate(u)))
			return ulvm_error(r, "cannot make a UUID");
		memcpy(vg->uuid, u, sizeof(vg->uuid));
	}
	return 0;
}

/* The number after `key = ` in text[from, to), or -1. */
static long long text_number(const char *from, const char *to, const char *key)
{
	size_t kl = strlen(key);

	for (const char *p = from; p && p < to; p = strstr(p + 1, key)) {
		const char *q = p + kl;
		if (p != from && p[-1] != '\t' && p[-1] != ' ' && p[-1] != '\n')
			continue;
		if (strncmp(p, key, kl))
			continue;
		while (*q == ' ' || *q == '\t')
			q++;
		if (*q++ != '=')
			continue;
		return strtoll(q, NULL, 10);
	}
	return -1;
}

int cli_pv_layout_from_backup(const char *file, const char *uuid, struct ulvm_pvcreate_opts *o)
{
	char key[96], *text = NULL;
	const char *at, *end;
	long long pe_start;
	size_t len = 0, cap = 0, n;
	FILE *f = fopen(file, "re");
	struct stat st;

	if (!f || fstat(fileno(f), &st)) {
		fprintf(stderr, "  %s: stat failed: %s\n", file, strerror(errno));
		fprintf(stderr, "  WARNING: couldn't read volume group metadata from file.\n");
		fprintf(stderr, "  Failed to read VG (null) from %s\n", file);
		fprintf(stderr, "  Unable to read volume group from %s\n", file);
		fprintf(stderr, "  Run `pvcreate --help' for more information.\n");
		if (f)
			fclose(f);
		return EINVALID_CMD_LINE;
	}
	do {
		if (len + 4096 >= cap) {
			char *t = realloc(text, cap = cap ? 2 * cap : 65536);
			if (!t) {
				free(text);
				fclose(f);
				return cli_fail(ulvm_error(-ENOMEM, "out of memory"));
			}
			text = t;
		}
		n = fread(text + len, 1, cap - len - 1, f);
		len += n;
	} while (n > 0 && len < (64u << 20));
	fclose(f);
	text[len] = '\0';
	snprintf(key, sizeof(key), "id = \"%s\"", uuid);
	/* the PV's section: from its id to the end of its block */
	if (!(at = strstr(text, key))) {
		fprintf(stderr, "  Can't find uuid %s in backup file %s\n", uuid, file);
		fprintf(stderr, "  Run `pvcreate --help' for more information.\n");
		free(text);
		return EINVALID_CMD_LINE;
	}
	end = strchr(at, '}');
	pe_start = text_number(at, end ? end : text + len, "pe_start");
	if (pe_start > 0)
		o->data_alignment = (uint64_t)pe_start * 512; /* the first boundary after the
		                                                 metadata area is pe_start */
	free(text);
	return ECMD_PROCESSED;
}
