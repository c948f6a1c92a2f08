/*
 * Reading a VG (the newest valid copy across all metadata areas of all PVs) and committing
 * a new version of it to every area, in LVM2's crash-safe order: every area gets the new
 * text first (flushed; the old copy stays committed), then every header is switched over.
 * A power cut at any write leaves each area with the old or the new copy, and readers take
 * the highest seqno.
 */
#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lvm.h"

/* The newest copy of VG `name` among scanned areas; warns about stale copies. */
static struct dev_mda *newest_copy(struct ulvm_ctx *ctx, const char *name, struct dev_entry **dev)
{
	struct dev_mda *best = NULL;
	struct dev_entry *bestdev = NULL;

	for (size_t i = 0; i < ctx->ndevs; i++)
		for (unsigned k = 0; k < ctx->devs[i].nmdas; k++) {
			struct dev_mda *m = &ctx->devs[i].mdas[k];
			if (!m->has_text || strcmp(m->vg_name, name))
				continue;
			if (best && strcmp(best->vg_uuid, m->vg_uuid)) {
				ulvm_warn("VG name %s is used by two VGs (%s and %s); using the "
				          "one on %s",
				          name, best->vg_uuid, m->vg_uuid, bestdev->path);
				continue;
			}
			if (!best || m->seqno > best->seqno) {
				best = m;
				bestdev = &ctx->devs[i];
			}
		}
	if (best)
		for (size_t i = 0; i < ctx->ndevs; i++)
			for (unsigned k = 0; k < ctx->devs[i].nmdas; k++) {
				struct dev_mda *m = &ctx->devs[i].mdas[k];
				if (m->has_text && !strcmp(m->vg_name, name) &&
				    m->seqno < best->seqno)
					ulvm_warn(
					    "ignoring metadata seqno %u on %s for seqno %u on %s "
					    "for VG %s",
					    m->seqno, ctx->devs[i].path, best->seqno, bestdev->path,
					    name);
			}
	*dev = bestdev;
	return best;
}

/* A device now smaller than the size its PV recorded ("was it resized?"): LVM2 warns once per
 * device and once per VG; extents past the device's end are never allocated (alloc.c). */
static void warn_shrunk_devices(struct ulvm_ctx *ctx, const struct ulvm_vg *vg)
{
	char msg[PATH_MAX + 160];
	bool any = false;

	for (size_t i = 0; i < vg->npvs; i++) {
		const struct ulvm_pv *pv = vg->pvs[i];
		struct dev_entry *d = pv->device ? ctx_find_dev(ctx, pv->device) : NULL;
		uint64_t sectors = d && d->bd ? d->bd->size / SECTOR_SIZE : 0;

		if (!d || !d->bd || pv->missing || sectors >= pv->dev_size)
			continue;
		snprintf(msg, sizeof(msg),
		         "Device %s has size of %llu sectors which is smaller than corresponding "
		         "PV size of %llu sectors. Was device resized?",
		         pv->device, (unsigned long long)sectors, (unsigned long long)pv->dev_size);
		ctx_report_once(ctx, msg);
		any = true;
	}
	if (any) {
		snprintf(msg, sizeof(msg),
		         "One or more devices used as PVs in VG %s have changed sizes.", vg->name);
		ctx_report_once(ctx, msg);
	}
}

int vg_read(struct ulvm_ctx *ctx, const char *name, struct ulvm_vg **out)
{
	struct dev_entry *src;
	struct dev_mda *m;
	struct ulvm_vg *vg;
	char what[512];
	int r;

	*out = NULL;
	if ((r = ctx_scan(ctx)))
		return r;
	if (!(m = newest_copy(ctx, name, &src))) {
		/* Say why when a device that could hold it is damaged. */
		ulvm_report_problems(ctx, NULL);
		return ulvm_error(-ENOENT, "Volume group \"%s\" not found", name);
	}
	snprintf(what, sizeof(what), "pv %s: metadata area", src->path);
	if ((r = vg_import(ctx, m->tree, what, &vg)))
		return r;
	for (size_t i = 0; i < vg->npvs; i++) {
		struct ulvm_pv *pv = vg->pvs[i];
		struct dev_entry *d = ctx_find_pv_uuid(ctx, pv->uuid);
		char u[UUID_STR_LEN + 1];

		if (!d) {
			uuid_format(pv->uuid, u);
			if (!pv->missing)
				ulvm_warn("Couldn't find device with uuid %s.", u);
			pv->missing = true;
			continue;
		}
		if (!(pv->device = strdup(d->path))) {
			vg_free(vg);
			return ulvm_error(-ENOMEM, "out of memory");
		}
		pv->mda_count = d->nmdas;
		pv->label_sector = d->label.sector;
		for (unsigned k = 0; k < d->nmdas; k++) {
			uint64_t sz, fr;
			dev_mda_summary(&d->mdas[k], &sz, &fr);
			if (!(d->mdas[k].h.slot[0].flags & RAW_LOCN_IGNORED))
				pv->mda_used_count++;
			if (!k || sz < pv->mda_size)
				pv->mda_size = sz;
			if (!k || fr < pv->mda_free)
				pv->mda_free = fr;
		}
	}
	warn_shrunk_devices(ctx, vg);
	ulvm_report_problems(ctx, vg);
	*out = vg;
	return 0;
}

int pv_set_label_used(struct ulvm_ctx *ctx, struct dev_entry *d, bool used)
{
	struct pv_label l;
	int r;

	/* After a commit the scan was dropped: the label must be current. */
	if ((r = ctx_scan(ctx)) || (r = dev_open_rw(ctx, d)))
		return r;
	l = d->label;
	if (used)
		l.ext_flags |= PV_EXT_USED;
	else
		l.ext_flags &= ~PV_EXT_USED;
	if (l.ext_version < 2)
		l.ext_version = 2;
	if (l.ext_flags == d->label.ext_flags && l.ext_version == d->label.ext_version)
		return 0;
	if ((r = label_write(d->bd, &l)))
		return r;
	d->label = l;
	return 0;
}

int dev_clear_mdas(struct ulvm_ctx *ctx, struct dev_entry *d)
{
	int r;

	if ((r = ctx_scan(ctx)) || (r = dev_open_rw(ctx, d)))
		return r;
	for (unsigned k = 0; k < d->nmdas; k++)
		if (d->mdas[k].header_ok && (r = mda_clear(d->bd, &d->mdas[k].h)))
			return r;
	return 0;
}

struct pending {
	struct dev_entry *d;
	unsigned mda;
	struct raw_locn loc;
	bool failed;
};

struct flush_job {
	struct bdev *bd;
	int result;
	char msg[512]; /* error messages are per thread: carried back in the job */
	pthread_t thread;
	bool threaded;
};

static void *flush_thread(void *arg)
{
	struct flush_job *j = arg;

	if ((j->result = bdev_flush(j->bd)))
		snprintf(j->msg, sizeof(j->msg), "%s",
		         ulvm_last_error() ? ulvm_last_error() : "flush failed");
	return NULL;
}

/* One flush per device, however many of its areas were written; the devices flush in
 * parallel (each flush waits for its disk's cache, and the disks are independent). */
static int flush_pending(struct pending *pend, size_t n)
{
	struct flush_job *jobs = calloc(n + 1, sizeof(*jobs));
	size_t njobs = 0;
	int r = 0;

	if (!jobs)
		return ulvm_error(-ENOMEM, "out of memory");
	for (size_t i = 0; i < n; i++) {
		bool seen = false;
		for (size_t k = 0; k < njobs; k++)
			seen |= jobs[k].bd == pend[i].d->bd;
		if (!seen)
			jobs[njobs++].bd = pend[i].d->bd;
	}
	/* The first device is flushed by this thread; a thread that cannot start is run here. */
	for (size_t k = 1; k < njobs; k++)
		jobs[k].threaded = !pthread_create(&jobs[k].thread, NULL, flush_thread, &jobs[k]);
	for (size_t k = 0; k < njobs; k++)
		if (!jobs[k].threaded)
			flush_thread(&jobs[k]);
	for (size_t k = 0; k < njobs; k++) {
		if (jobs[k].threaded)
			pthread_join(jobs[k].thread, NULL);
		if (jobs[k].result && !r)
			r = ulvm_error(jobs[k].result, "%s", jobs[k].msg);
	}
	free(jobs);
	return r;
}

int vg_refuse_exported(const struct ulvm_vg *vg, bool removing)
{
	const struct vg_priv *p = vg->priv;
	bool renamed = p->lock_name && strcmp(p->lock_name, vg->name);

	/* vgimport clears the flag, vgrename keeps it: both may commit, as in LVM2 */
	if (!p->exported_on_disk ||
	    (!removing && (renamed || !ulvm_strlist_has(&vg->status, "EXPORTED"))))
		return 0;
	return ulvm_error(-EPERM, "Volume group %s is exported", vg->name);
}

int vg_write_commit(struct ulvm_vg *vg, const char *description)
{
	struct ulvm_ctx *ctx = vg->ctx;
	struct pending *pend = NULL;
	size_t npend = 0, committed = 0;
	char *text = NULL, *old_name = NULL;
	bool old_label = false;
	size_t len;
	int r;

	if ((r = vg_refuse_exported(vg, false)) || (r = ctx_scan(ctx)))
		return r;
	vg_archive_before(vg, description, &old_name);
	vg->seqno++;
	if ((r = vg_export(vg, false, description, &text, &len)))
		goto out;
	if (!(pend = calloc(vg->npvs * 2 + 1, sizeof(*pend)))) {
		r = ulvm_error(-ENOMEM, "out of memory");
		goto out;
	}
	/* Phase 1: the new text into free space of every area; headers untouched. */
	for (size_t i = 0; i < vg->npvs; i++) {
		struct dev_entry *d =
		    vg->pvs[i]->device ? ctx_find_dev(ctx, vg->pvs[i]->device) : NULL;
		if (!d)
			continue;
		for (unsigned k = 0; k < d->nmdas; k++) {
			struct pending *p = &pend[npend];
			char what[512];

			if (!d->mdas[k].header_ok ||
			    (d->mdas[k].h.slot[0].flags & RAW_LOCN_IGNORED))
				continue;
			snprintf(what, sizeof(what), "pv %s: metadata area %u", d->path, k + 1);
			if ((r = dev_open_rw(ctx, d)) ||
			    (r = mda_place_text(&d->mdas[k].h, len, what, &p->loc)) ||
			    (r = mda_write_text(d->bd, &d->mdas[k].h, text, len, &p->loc)))
				goto out;
			p->d = d;
			p->mda = k;
			npend++;
		}
	}
	if (!npend) {
		r = ulvm_error(-ENOSPC,
		               "VG %s: no metadata area to write to (every PV is missing "
		               "or has no metadata area)",
		               vg->name);
		goto out;
	}
	/* The text must be durable everywhere before any header points at it. */
	if ((r = flush_pending(pend, npend)))
		goto out;
	/* Phase 2: switch each header to the new copy, then make the switch durable. */
	for (size_t i = 0; i < npend; i++) {
		struct dev_mda *m = &pend[i].d->mdas[pend[i].mda];
		int e = mda_commit(pend[i].d->bd, &m->h, &pend[i].loc);
		if (e) {
			ulvm_warn("%s", ulvm_last_error());
			r = e;
			pend[i].failed = true;
			continue;
		}
		committed++;
	}
	if (flush_pending(pend, npend)) {
		ulvm_warn("%s", ulvm_last_error());
		committed = 0;
		r = r ? r : -EIO;
	}
	/* LVM2's rule: the commit stands if any area took it. */
	r = committed ? 0 : r;
out:
	if (r)
		vg->seqno--;
	else
		vg_backup_after(vg, description, old_name);
	free(old_name);
	free(pend);
	free(text);
	/* As LVM2's write does: a PV with an older header extension (version 1, no "used"
	 * flag) gets the current one. The labels are as the scan before the commit read them
	 * (a commit writes areas, not labels): only then is a rescan needed here. */
	for (size_t i = 0; !r && !old_label && i < vg->npvs; i++) {
		struct dev_entry *d =
		    vg->pvs[i]->device ? ctx_find_dev(ctx, vg->pvs[i]->device) : NULL;
		old_label = d && d->has_label && d->label.ext_version < 2;
	}
	/* The cached copies are stale now; the next use rescans. */
	ctx_invalidate(ctx);
	for (size_t i = 0; !r && old_label && i < vg->npvs; i++) {
		struct dev_entry *d;
		if (!vg->pvs[i]->device || ctx_scan(ctx) ||
		    !(d = ctx_find_dev(ctx, vg->pvs[i]->device)) || !d->has_label ||
		    d->label.ext_version >= 2)
			continue;
		if (pv_set_label_used(ctx, d, true))
			ulvm_warn("%s", ulvm_last_error());
	}
	return r;
}

int ulvm_vg_open(struct ulvm_ctx *ctx, const char *name, enum ulvm_lock_mode mode,
                 struct ulvm_vg **out)
{
	int r;

	*out = NULL;
	if ((r = lock_vg(ctx, name, mode)))
		return r;
	/* What was scanned before the lock may be stale. */
	r = ctx_revalidate(ctx);
	if (!r)
		r = vg_read(ctx, name, out);
	if (!r)
		((struct vg_priv *)(*out)->priv)->exported_on_disk =
		    ulvm_strlist_has(&(*out)->status, "EXPORTED");
	if (!r && !(((struct vg_priv *)(*out)->priv)->lock_name = strdup(name))) {
		vg_free(*out);
		*out = NULL;
		r = ulvm_error(-ENOMEM, "out of memory");
	}
	if (r)
		unlock_vg(ctx, name);
	return r;
}

int ulvm_vg_commit(struct ulvm_vg *vg, const char *description)
{
	return vg_write_commit(vg, description);
}

void ulvm_vg_close(struct ulvm_vg *vg)
{
	struct vg_priv *p;

	if (!vg)
		return;
	p = vg->priv;
	if (p->lock_name)
		unlock_vg(vg->ctx, p->lock_name);
	vg_free(vg);
}

int ulvm_vg_export_text(struct ulvm_vg *vg, bool file_form, const char *description, char **text)
{
	size_t len;

	return vg_export(vg, file_form, description, text, &len);
}
