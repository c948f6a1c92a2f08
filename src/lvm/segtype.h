/*
 * lvm/segtype: LVM2 segment types as modules, one file each (seg_*.c), behind one table of
 * operations, the way LVM2's segtype handlers work. Everything that depends on a segment's
 * type goes through its module: reading and writing its text (import.c and export.c do the
 * keys every segment has), the device-mapper table it activates to and the devices that
 * table stacks on (activate.c), what the reports show (ulvm_lv_info), which extents and LVs
 * its areas use (allocation, checks) and what the LV operations may do with it (lv.c).
 *
 * A type no module claims is kept by seg_kept.c: every key written back as it was read.
 * Adding a type is a new seg_*.c file and one line in seg_table.c.
 */
#ifndef ULVM_LVM_SEGTYPE_H
#define ULVM_LVM_SEGTYPE_H

#include "lvm.h"

struct importer; /* import.c */
struct exporter; /* export.c */

/* Flags of a segment type. */
#define SEG_AREAS_STRIPED (1u << 0) /* areas are stripes: lv.c and alloc.c may change it */
#define SEG_LV_HIDDEN     (1u << 1) /* its LV is never visible, whatever its status says */

/* Called for each device a table stacks on: an LV of the VG, or a layer of one (`layer` is
 * the dm name suffix LVM2 gives it: "real", "cow", "tpool"; NULL = the LV itself). */
typedef int (*seg_lower_fn)(void *arg, const struct ulvm_lv *lower, const char *layer);
/* Called for each device an activation loads: LV `lv`'s layer `suffix` (NULL: its own
 * device) with `table`. */
typedef int (*seg_layer_fn)(void *arg, const struct ulvm_lv *lv, const char *suffix,
                            const char *table);

struct ulvm_segtype {
	const char *name; /* the metadata's "type"; a trailing '*' matches a prefix ("raid*") */
	unsigned flags;

	/* Text import: the segment section `sec` into `seg`, whose type, start_extent and
	 * extent_count are already read (skip those keys: import_common_key()). Keys the module
	 * does not interpret go to seg->extra (import_keep), in their order. `obj` names the
	 * segment in errors. Sets seg->areas and seg->area_count. */
	int (*text_import)(struct importer *im, const char *obj, const struct cfg_node *sec,
	                   struct ulvm_seg *seg);
	/* Text export: the keys after "type", into section `sec`. */
	void (*text_export)(struct exporter *ex, struct cfg_node *sec, const struct ulvm_seg *seg,
	                    uint32_t extent_size);

	/* Allocation: how many extents each of seg->areas spans. */
	uint32_t (*area_len)(const struct ulvm_seg *seg);
	/* After every change to the VG (vg_update_derived): record which LVs this segment uses
	 * in ways its areas do not say (a snapshot's origin and COW store), by setting their
	 * used_by (when still NULL). NULL: none. */
	void (*link)(struct ulvm_vg *vg, struct ulvm_lv *lv, size_t seg_index);

	/* Activation: the target type and arguments of seg's table line (the caller writes
	 * start and length). NULL: ulvm cannot activate this type yet. */
	int (*add_target_line)(const struct ulvm_vg *vg, const struct ulvm_lv *lv,
	                       const struct ulvm_seg *seg, struct strbuf *sb);
	/* Activation of `used`, an LV this segment uses (see link): the table of used's own
	 * device while this segment uses it, whole lines (a snapshot's origin: snapshot-origin
	 * over its "-real" layer; its COW LV: the snapshot). NULL: used's own segments. */
	int (*used_table)(const struct ulvm_vg *vg, const struct ulvm_lv *used,
	                  const struct ulvm_seg *seg, struct strbuf *sb);
	/* The devices activating `used` loads (ulvm_lv_layers), in LVM2's order, each through
	 * fn. NULL: used's own device only. */
	int (*used_layers)(const struct ulvm_vg *vg, const struct ulvm_lv *used,
	                   const struct ulvm_seg *seg, seg_layer_fn fn, void *arg);
	/* The devices that line stacks on besides PVs, which must be active first (LVM2's
	 * "-real", "-cow", "_tdata", "_tmeta"). NULL: none. */
	int (*lower_devices)(const struct ulvm_vg *vg, const struct ulvm_lv *lv,
	                     const struct ulvm_seg *seg, seg_lower_fn fn, void *arg);
	/* The suffix LVM2 puts on the dm UUID of the LV's own device ("pool"), and on that of
	 * `used`, an LV this segment uses ("tdata", "tmeta"). NULL: none. */
	const char *(*uuid_suffix)(const struct ulvm_vg *vg, const struct ulvm_lv *lv,
	                           const struct ulvm_seg *seg);
	const char *(*used_uuid_suffix)(const struct ulvm_vg *vg, const struct ulvm_lv *used,
	                                const struct ulvm_seg *seg);

	/* Reports: the segtype field (NULL: the metadata's type). */
	const char *(*report_name)(const struct ulvm_seg *seg);
	/* lvcreate --type TYPE: -ENOENT if TYPE is not this module's, else 0 with `p` set for
	 * it (or an error). NULL: ulvm cannot create LVs of this type. */
	int (*lvcreate_type)(const char *type, struct ulvm_lv_params *p);
	/* What the LV whose first segment this is shows (ulvm_lv_info fills the defaults and
	 * what other LVs' report_user said first). NULL: the defaults. */
	void (*report)(const struct ulvm_vg *vg, const struct ulvm_lv *lv,
	               const struct ulvm_seg *seg, struct ulvm_lv_info *info);
	/* What `used` shows because segment `seg` of another LV uses it (see link). */
	void (*report_user)(const struct ulvm_vg *vg, const struct ulvm_lv *used,
	                    const struct ulvm_seg *seg, struct ulvm_lv_info *info);
};

/* seg_table.c: the module for `type` (the kept handler when no module claims it). */
const struct ulvm_segtype *segtype_find(const char *type);

/* The modules (one file each). */
extern const struct ulvm_segtype segtype_striped;   /* seg_striped.c */
extern const struct ulvm_segtype segtype_mirror;    /* seg_mirror.c */
extern const struct ulvm_segtype segtype_snapshot;  /* seg_snapshot.c */
extern const struct ulvm_segtype segtype_thin_pool; /* seg_thin.c */
extern const struct ulvm_segtype segtype_thin;      /* seg_thin.c */
extern const struct ulvm_segtype segtype_raid;      /* seg_raid.c */
extern const struct ulvm_segtype segtype_kept;      /* seg_kept.c */

/* seg_striped.c: make `seg` a new striped segment with `stripes` areas (filled in by the
 * caller) covering `extents` LEs from `le`. */
int seg_striped_init(struct ulvm_seg *seg, uint32_t le, uint32_t extents, uint32_t stripes,
                     uint32_t stripe_size);

/* seg_striped.c: a PV's device as `dmsetup table` names it (MAJ:MIN of a block device, else
 * its path). */
void seg_put_pv_device(struct strbuf *sb, const struct ulvm_pv *pv);

/* seg_kept.c: for modules that interpret a kept segment read-only. Every key but the common
 * ones is kept (written back untouched); these read them. */
int kept_text_import(struct importer *im, const char *obj, const struct cfg_node *sec,
                     struct ulvm_seg *seg);
void kept_text_export(struct exporter *ex, struct cfg_node *sec, const struct ulvm_seg *seg,
                      uint32_t extent_size);
const struct cfg_node *kept_key(const struct ulvm_seg *seg, const char *key);
const char *kept_str(const struct ulvm_seg *seg, const char *key); /* NULL: absent, no string */
bool kept_int(const struct ulvm_seg *seg, const char *key, int64_t *v);
/* Areas from a kept area array ("name", extent, ...) as LVM2's "mirrors" lists them: PV keys
 * become PV areas, other names LV areas. A malformed array gives no areas (the text is kept
 * as it is either way). */
int kept_areas_from(struct importer *im, const char *obj, struct ulvm_seg *seg, const char *key);
/* Each area spans the whole segment (mirror legs, a pool's data LV). */
uint32_t seg_whole_area_len(const struct ulvm_seg *seg);
/* lv_attr's role and target `kind` ('m', 'r'), unless what uses the LV set them already. */
void seg_report_kind(struct ulvm_lv_info *info, char kind);
/* Set `name`'s used_by to (lv, seg_index) if it is an LV of the VG and has none yet. */
void seg_mark_used(struct ulvm_vg *vg, const char *name, struct ulvm_lv *lv, size_t seg_index);

/* import.c: helpers for the modules' text_import. */
struct ulvm_vg *import_vg(struct importer *im);
bool import_common_key(const struct cfg_node *n); /* type, start_extent, extent_count */
int import_u32(struct importer *im, const char *obj, const struct cfg_node *n, uint32_t *out);
int import_strlist(struct importer *im, const char *obj, const struct cfg_node *n,
                   struct ulvm_strlist *out);
int import_keep(struct importer *im, struct cfg_node **extra, const struct cfg_node *n);
/* An error about `obj`: "<what>: VG <vg>: <obj>: <msg>"; -EINVAL. */
int import_bad(struct importer *im, const char *obj, const char *fmt, const char *a, const char *b);

/* export.c: helpers for the modules' text_export (out of memory is remembered, not
 * returned). */
struct cfg_tree *export_tree(struct exporter *ex);
struct cfg_node *export_chk(struct exporter *ex, struct cfg_node *n);
void export_comment(struct exporter *ex, struct cfg_node *n, const char *c);
void export_size_comment(struct exporter *ex, struct cfg_node *n, uint64_t sectors);
void export_strlist(struct exporter *ex, struct cfg_node *parent, const char *key,
                    const struct ulvm_strlist *l);
void export_extras(struct exporter *ex, struct cfg_node *parent, const struct cfg_node *extra);
void export_oom(struct exporter *ex);

/* seg_snapshot.c: remove the snapshot whose COW LV is `cow` (both its LVs) from the model. */
int snapshot_remove(struct ulvm_vg *vg, struct ulvm_lv *cow);

/* seg_snapshot.c: LVM2's lv_is_visible: a snapshot's COW LV is as visible as its origin
 * (unless it merges), whatever its status says. */
bool lv_visible_lvm2(const struct ulvm_vg *vg, const struct ulvm_lv *lv);

/* activate.c: the table of `lv`'s own segments (no layer), appended to sb. */
int lv_segments_table(const struct ulvm_vg *vg, const struct ulvm_lv *lv, struct strbuf *sb);
/* seg_thin.c: the keys of thin-pool and thin segments (strings point into the kept text). */
struct thin_pool_seg {
	const char *metadata, *data; /* LV names */
	const char *discards;        /* "ignore", "nopassdown" or "passdown" */
	uint64_t transaction_id;
	uint32_t chunk_size; /* sectors */
	bool zero;
	size_t nmessages; /* queued messageN sections */
};
struct thin_seg {
	const char *pool, *origin, *external_origin;
	uint64_t transaction_id;
	uint32_t device_id;
};
bool seg_is_thin_pool(const struct ulvm_seg *seg);
bool seg_is_thin(const struct ulvm_seg *seg);
void thin_pool_seg_get(const struct ulvm_seg *seg, struct thin_pool_seg *out);
void thin_seg_get(const struct ulvm_seg *seg, struct thin_seg *out);
/* The pool of thin LV `lv` (NULL: not a thin LV), and whether a pool has thin LVs. */
struct ulvm_lv *thin_pool_of(const struct ulvm_vg *vg, const struct ulvm_lv *lv);
bool thin_pool_has_thins(const struct ulvm_vg *vg, const struct ulvm_lv *pool);
/* The real pool's `thin-pool ...` table arguments. */
int thin_pool_target_line(const struct ulvm_vg *vg, const struct ulvm_lv *pool, struct strbuf *sb);

/* activate.c: every device `lv`'s table stacks on besides PVs, each once per segment. */
int lv_lower_devices(const struct ulvm_vg *vg, const struct ulvm_lv *lv, seg_lower_fn fn,
                     void *arg);

#endif
