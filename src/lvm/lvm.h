/*
 * lvm: LVM2 on-disk metadata and its logic, the implementation of include/ulvm.h.
 * Format I/O (label, mda, text) is kept apart from meaning (import/export: tree <-> model)
 * and from policy (alloc, the pv/vg/lv operations). Uses util and io.
 *
 * This header is internal to the layer: the modules' shared types and functions.
 */
#ifndef ULVM_LVM_LVM_H
#define ULVM_LVM_LVM_H

#include <stdbool.h>
#include <stdint.h>

#include "ulvm.h"

#include "../io/bdev.h"
#include "../util/util.h"
#include "label.h"
#include "mda.h"
#include "text.h"

#define LVM_DEFAULT_EXTENT_SIZE 8192u           /* sectors: 4 MiB */
#define LVM_DEFAULT_MDA_SIZE    (1044480u)      /* bytes: 1 MiB - 4 KiB */
#define LVM_DEFAULT_DATA_ALIGN  (1024u * 1024u) /* bytes */
#define LVM_DEFAULT_STRIPE_SIZE 128u            /* sectors: 64 KiB */
#define LVM_MDA_START           4096u           /* bytes: first metadata area */
#define LVM_MIN_MDA_SIZE        (32u * 1024u)
#define LVM_NAME_MAX            127

/* One metadata area found on a device by the scan. */
struct dev_mda {
	struct mda_header h;
	bool header_ok;
	bool has_text;
	struct cfg_tree *tree; /* the parsed text (shared between identical copies) */
	bool owns_tree;
	const char *vg_name; /* in tree */
	char vg_uuid[UUID_LEN + 1];
	uint32_t seqno;
	char *problem;
};

struct dev_entry {
	char *path;
	uint64_t ident; /* see dev_identity() */
	bool have_ident;
	bool is_file; /* a regular file: metadata I/O goes through the page cache */
	uint8_t label_raw[LABEL_SCAN_SIZE]; /* as scanned, to revalidate cheaply */
	struct bdev *bd;
	bool scanned;
	bool has_label;
	struct pv_label label;
	struct dev_mda mdas[2];
	unsigned nmdas;
	char *problem; /* corrupt label: one line */
	struct ulvm_dev_info info;
};

struct vg_lock {
	char *name;
	int fd;
	int mode;
	unsigned refs;
};

struct io_engine;
struct dm_registry;
struct dev_hold;

struct ulvm_ctx {
	struct ulvm_ctx_opts opts;
	struct io_engine *engine; /* made on first use by dev.c */
	struct dm_registry *dm;
	struct ulvm_dev *open_devs;
	char *lock_dir;
	struct dev_entry *devs;
	size_t ndevs, cap;
	/* The devices come from $ULVM_DEVICES or $ULVM_DEVICESFILE, ulvm's stand-in for the
	 * system's devices: lvm.conf's filters apply (LVM2 ignores them for --devices and a
	 * devices file, as ulvm does). */
	bool filtered;
	bool scanned;
	struct ulvm_dev_info *infos;
	const char **vg_names;
	size_t n_vg_names;
	struct vg_lock locks[16];
	size_t nlocks;
	char **reported; /* problems already reported by scans */
	size_t nreported;
	struct dev_write_watch *write_watch; /* dev.c: ctx_set_write_watch */
	struct dev_hold *holds;              /* dev.c: completions held by the watch */
};

/* devices.c */
int ctx_scan(struct ulvm_ctx *ctx); /* scan if not yet done */
/* Under a VG lock: keep the scan if every label and metadata area header still reads the
 * same (a writer always rewrites a header to commit), else rescan. */
int ctx_revalidate(struct ulvm_ctx *ctx);
void ctx_invalidate(struct ulvm_ctx *ctx); /* forget scan results */
struct dev_entry *ctx_find_dev(struct ulvm_ctx *ctx, const char *path);
struct dev_entry *ctx_find_pv_uuid(struct ulvm_ctx *ctx, const char *uuid);
int dev_open_rw(struct ulvm_ctx *ctx, struct dev_entry *d); /* reopen writable if needed */
void dev_mda_summary(const struct dev_mda *m, uint64_t *size, uint64_t *free_bytes);
/* Warn with `msg` unless this context already did (or scans are silent). */
void ctx_report_once(struct ulvm_ctx *ctx, const char *msg);

/* dev.c */
void ctx_free_dm(struct ulvm_ctx *ctx);
/* Where [offset, offset + len) of `dev` lies in one backing file read through the page cache
 * (dm_map_direct): 0 with the file's descriptor and the byte offset there, -ENOTSUP when the
 * range is mapped otherwise. For the NBD export, which then reads (pread) or writes (splice)
 * those bytes in the file itself within the same turn of its loop. */
int dev_map_file(struct ulvm_dev *dev, uint64_t offset, uint64_t len, int *fd,
                 uint64_t *file_offset);
/* From any thread, for an export that does its own I/O on the backing files (the FUSE
 * workers): where [offset, offset + len) of `dev` lies in backing files, when it maps through
 * linear and striped targets straight onto them and the device is not suspended
 * (dm_direct_enter): 0 with at most `max` pieces that follow each other in the range (each
 * `len` bytes at `file_offset` of the file `fd`; `direct`: the file is open with O_DIRECT,
 * else it is read through the page cache), and the caller is inside the device's gate until
 * dev_direct_leave(), which it calls once that I/O is done (a suspend waits for it; it must
 * not wait for the context's thread meanwhile). -ENOTSUP: the caller submits it
 * (ulvm_dev_submit) on the context's thread instead. That I/O bypasses the write watch: for
 * exports whose writes no page-cache export needs to see. `dev` stays open meanwhile. */
struct dev_direct_piece {
	int fd;
	bool direct;
	uint64_t file_offset, len;
	/* A read's bytes in the page-cache file's shared mapping (bdev_map_read), for the
	 * kernel to copy from (a writev) while inside the gate; NULL: pread them. */
	const uint8_t *map;
};
#define DEV_DIRECT_MAX_PIECES 64u
int dev_direct_enter(struct ulvm_dev *dev, uint64_t offset, uint64_t len, bool write,
                     struct dev_direct_piece *pieces, unsigned max, unsigned *npieces);
void dev_direct_leave(struct ulvm_dev *dev);
/* Page-cache exports in this process (FUSE cache mounts), any thread: while there is one,
 * exports write only through ulvm_dev_submit, where the write watch sees it (not through
 * dev_direct_enter or dev_map_file). */
void dev_cache_exports_add(int delta);
bool dev_cache_exports(void);
/*
 * A watch on what changes a device's contents, for exports that keep a cache of them (the
 * FUSE export's page-cache mode): `written` runs on the context's thread when a write, write
 * zeroes or discard of `dev` finished (before its `done`), with `io` (NULL: everything may
 * have changed, after a resume). It may return a hold (from dev_hold_new()) to keep that
 * completion back until others (other threads) have released it with dev_hold_release():
 * ulvm_ctx_poll() and ulvm_dev_poll() then deliver it. `can_hold` is false where holding is
 * not allowed (a resume, a synchronous call of this context). One watch per context.
 */
struct dev_write_watch {
	struct dev_hold *(*written)(void *arg, struct ulvm_dev *dev, const struct ulvm_io *io,
	                            bool can_hold);
	void *arg;
};
void ctx_set_write_watch(struct ulvm_ctx *ctx, struct dev_write_watch *w); /* NULL: none */
/* A hold with `count` releases to wait for; NULL when out of memory (nothing is held). */
struct dev_hold *dev_hold_new(unsigned count);
/* From any thread: one of the releases; the last makes the completion deliverable (the
 * caller wakes the context's thread, which delivers it at its next poll). */
void dev_hold_release(struct dev_hold *h);

/* active.c: take the owner lock of device `name` (see ulvm_dev_own); *fd keeps it. */
int active_owner_lock(const char *name, int *fd);
/* $ULVM_RUN_DIR, else /run/ulvm when writable, else /tmp/ulvm-run-<uid> (made if need be) */
int active_run_dir(char *out, size_t len);

/* lock.c */
int lock_vg(struct ulvm_ctx *ctx, const char *name, enum ulvm_lock_mode mode);
void unlock_vg(struct ulvm_ctx *ctx, const char *name);
#define ORPHAN_LOCK "#orphans" /* LVM2's P_orphans */
#define GLOBAL_LOCK "#global"  /* LVM2's P_global */

/* model.c */
struct vg_priv {
	/* Metadata ulvm keeps without interpreting: every `extra` pointer of the model is a
	 * section node of this tree whose children are the kept items, in their order. */
	struct cfg_tree *keep;
	char *lock_name; /* the VG lock this handle holds (the name it was opened under) */
	bool removed;
	bool exported_on_disk; /* read from a device with EXPORTED set (vgexport) */
};
/* LVM2 changes nothing in an exported VG but its name and its export state. */
int vg_refuse_exported(const struct ulvm_vg *vg, bool removing);
struct ulvm_vg *vg_alloc(struct ulvm_ctx *ctx);
void vg_free(struct ulvm_vg *vg);
struct ulvm_pv *vg_find_pv_key(const struct ulvm_vg *vg, const char *key);
struct ulvm_pv *vg_find_pv_path(const struct ulvm_vg *vg, const char *path);
struct ulvm_pv *vg_find_pv_uuid(const struct ulvm_vg *vg, const char *uuid);
void vg_update_derived(struct ulvm_vg *vg); /* le_count, pe_alloc_count */
/* A resize of `lv` to `extents` that LVM2 refuses (zero, too large, the same): its error. */
int lv_resize_check(const struct ulvm_lv *lv, uint64_t extents);
void lv_free(struct ulvm_lv *lv);
void seg_free_contents(struct ulvm_seg *seg);
int strlist_add(struct ulvm_strlist *l, const char *s);
/* `s` as the item at index `at` (<= l->n), the later ones after it */
int strlist_insert(struct ulvm_strlist *l, size_t at, const char *s);
void strlist_del(struct ulvm_strlist *l, const char *s);
void strlist_free(struct ulvm_strlist *l);
int strlist_copy(struct ulvm_strlist *dst, const struct ulvm_strlist *src);
bool lvm_name_valid(const char *name, char *why, size_t whylen);
/* Is `name` referred to by another LV's segment that ulvm keeps verbatim? */
bool vg_lv_referenced(const struct ulvm_vg *vg, const char *name);

/* import.c / export.c */
int vg_import(struct ulvm_ctx *ctx, struct cfg_tree *tree, const char *what, struct ulvm_vg **out);
/* The whole metadata text: raw (on-disk, NUL-terminated, *len includes the NUL) or the
 * vgcfgbackup file form. */
/* archive.c: LVM2's automatic archives and backups around a commit (ulvm_ctx_opts.archive).
 * vg_archive_before archives the committed copy of `vg` and returns its name (to free). */
void vg_archive_before(struct ulvm_vg *vg, const char *description, char **old_name);
void vg_backup_after(struct ulvm_vg *vg, const char *description, const char *old_name);

/* lvm2conf.c: LVM2's configuration as the library reads it (lvm.conf with the process's
 * --config over it, ulvm_lvm2_config_override); loading never fails (no file: no settings). */
struct lvm2_conf {
	struct cfg_tree *file, *override;
	char sysdir[3072]; /* $LVM_SYSTEM_DIR or /etc/lvm */
};
void lvm2_conf_load(struct lvm2_conf *lc);
/* A file (lvm.conf, a backup) read whole, NUL-terminated, at most 16 MiB; NULL when
 * it cannot be read. Caller frees. */
char *lvm2_read_whole(const char *path, size_t *len);
void lvm2_conf_free(struct lvm2_conf *lc);
/* Does the device at `path` pass lvm.conf's devices/global_filter and devices/filter (LVM2's
 * "a|REGEX|", "r|REGEX|" lists)? When not, *which says which ("global filter", "filter"). */
bool lvm2_conf_device_passes(const struct lvm2_conf *lc, const char *path, const char **which);
/* A setting of the right type ("backup/retain_min"): --config's, else lvm.conf's; false (or
 * NULL, and for an empty string) when neither sets it. */
bool lvm2_conf_int(const struct lvm2_conf *lc, const char *path, int64_t *out);
const char *lvm2_conf_str(const struct lvm2_conf *lc, const char *path);
void vg_backup_remove(struct ulvm_vg *vg);
int vg_export(const struct ulvm_vg *vg, bool file_form, const char *description, char **text,
              size_t *len);

/* metadata.c */
int vg_read(struct ulvm_ctx *ctx, const char *name, struct ulvm_vg **out);
/* Write `vg` to every metadata area of its PVs, plus `extra_devs` (PVs leaving the VG get
 * an empty area: vgreduce/vgremove) */
int vg_write_commit(struct ulvm_vg *vg, const char *description);
int pv_set_label_used(struct ulvm_ctx *ctx, struct dev_entry *d, bool used);
int dev_clear_mdas(struct ulvm_ctx *ctx, struct dev_entry *d);

/* lv.c: a new LV with no segments (READ, WRITE, VISIBLE if `visible`; creation time and
 * host), not yet in a VG; and LVM2's name for a new LV ("lvolN"). */
int lv_new(const char *name, bool visible, const char *const *tags, size_t ntags,
           struct ulvm_lv **out);
void lv_generate_name(const struct ulvm_vg *vg, char *out, size_t len);

/* alloc.c: append one segment of per * stripes extents at LE `le`, stripe `a` on pvs[a]
 * from PE pes[a] (merged into the last segment when it continues it). */
int alloc_append(struct ulvm_lv *lv, uint32_t le, uint32_t per, uint32_t stripes,
                 uint32_t stripe_size, struct ulvm_pv *const *pvs, const uint32_t *pes);

/* alloc.c */
struct alloc_request {
	uint32_t extents; /* LV extents to add */
	uint32_t stripes;
	uint32_t stripe_size;
	enum ulvm_alloc_policy policy;
	struct ulvm_pv **pvs; /* candidates; NULL = all allocatable PVs of the VG */
	size_t npvs;
	uint32_t start_le;
};
/* Append segments to `lv` covering `extents` more LEs. */
int alloc_extend_lv(struct ulvm_vg *vg, struct ulvm_lv *lv, const struct alloc_request *req);
/* Free-extent ranges of a PV, sorted by PE. */
struct pe_range {
	uint32_t start, count;
};
int pv_free_ranges(const struct ulvm_vg *vg, const struct ulvm_pv *pv, struct pe_range **out,
                   size_t *n);

/* vgsplit.c: the model side of vgsplit and vgmerge, no I/O. vg_split_move moves PVs (by
 * path, or those LV `lv` uses) of `src` and the LVs that go with them to `dst`;
 * vg_merge_check is LVM2's vgs_are_compatible; vg_merge_move moves everything. */
int vg_split_move(struct ulvm_vg *src, struct ulvm_vg *dst, const char *const *pv_paths,
                  size_t npvs, const char *lv);
int vg_merge_check(const struct ulvm_vg *to, const struct ulvm_vg *from);
int vg_merge_move(struct ulvm_vg *to, struct ulvm_vg *from);

/* pvmove.c: the model changes of a move, each followed by a commit in ulvm_pvmove_*:
 * set it up (the pvmove LV appended to vg), mark segment `s` of it copied, point the LVs at
 * the legs kept and make the pvmove LV one error extent, then drop it. */
int pvmove_plan(struct ulvm_vg *vg, const char *source, const struct ulvm_pvmove_opts *o,
                struct ulvm_lv **mirr);
int pvmove_segment_moved(struct ulvm_vg *vg, struct ulvm_lv *mirr, size_t s);
int pvmove_detach(struct ulvm_vg *vg, struct ulvm_lv *mirr);
/* The first finishing change of an --atomic move (keep_new: finish; else abort): pvmoveN on
 * the kept image's extents, that image an error segment, both images VISIBLE. */
int pvmove_atomic_switch(struct ulvm_vg *vg, struct ulvm_lv *mirr, bool keep_new);
void pvmove_remove_lv(struct ulvm_vg *vg, struct ulvm_lv *mirr);
/* The mirror target at sector `start` of a device's status text `status`: its regions in
 * sync of *regions, and whether a leg's letter is not A. False when there is none. */
bool mirror_status_sync(const char *status, uint64_t start, uint64_t *in_sync, uint64_t *regions,
                        bool *failed);
/* ulvm_pvmove_copied's sum over the device's status text `status`. */
void pvmove_copied_from_status(const struct ulvm_vg *vg, const struct ulvm_lv *mirr,
                               const char *status, uint64_t *copied, uint64_t *total);

/* units.c */
/* Format `sectors` as LVM2 does for unit character `unit` ('r','h','b','s','k','m','g',
 * 't','p','e', upper case = powers of 1000). long_form: "12.00 MiB" (vgdisplay); short:
 * "12.00m" (reports). */
void format_size(uint64_t sectors, char unit, bool suffix, bool long_form, char *buf, size_t len);

#endif
