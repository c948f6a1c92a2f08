/*
 * libulvm: LVM2-compatible logical volume management in userspace.
 *
 * This is the one public header. The `ulvm` command is built on it and nothing else: a
 * program that links libulvm can do everything the command does.
 *
 * Model: a context knows which devices to consider (never the host's /dev by default). A
 * volume group is read from the newest valid metadata copy on its PVs into the structures
 * below, which callers may read freely; changes go through the ulvm_* operations, and
 * ulvm_vg_commit() writes them to every metadata area with LVM2's crash-safe ordering.
 * Sizes are in 512-byte sectors unless a name says otherwise; extents are VG extents.
 * Functions return 0 or a negative errno; ulvm_last_error() describes the failure.
 */
#ifndef ULVM_H
#define ULVM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#ifdef __cplusplus
extern "C" {
#endif

struct ulvm_ctx;
struct ulvm_signature;
struct cfg_node;     /* kept metadata that ulvm does not interpret (opaque) */
struct ulvm_segtype; /* the module of a segment type (opaque) */

const char *ulvm_last_error(void);

/* ---- the model ------------------------------------------------------------------------ */

struct ulvm_strlist {
	char **v;
	size_t n;
};

struct ulvm_pv {
	char *key;         /* reference key in the metadata text: "pv0", "pv1", ... */
	char uuid[33];     /* raw, no hyphens */
	char *device;      /* path it was found at; NULL when missing */
	char *device_hint; /* the "device" hint recorded in the metadata */
	uint64_t dev_size; /* sectors */
	uint64_t pe_start; /* sectors */
	uint32_t pe_count;
	uint64_t ba_start, ba_size; /* bootloader area, sectors (0 = none) */
	struct ulvm_strlist status; /* words as stored: ALLOCATABLE, EXPORTED, MISSING */
	struct ulvm_strlist flags;
	struct ulvm_strlist tags;
	struct cfg_node *extra; /* keys ulvm does not interpret, written back as they were */
	/* derived */
	bool missing;
	uint32_t pe_alloc_count;
	unsigned mda_count, mda_used_count;
	uint64_t mda_size, mda_free; /* bytes: the smallest area's size and free space */
	uint64_t label_sector;
};

enum ulvm_area_type { ULVM_AREA_PV, ULVM_AREA_LV };

struct ulvm_area {
	enum ulvm_area_type type;
	struct ulvm_pv *pv; /* ULVM_AREA_PV */
	uint32_t pe;        /* first PE on the PV, or first LE of the LV */
	char *lv_name;      /* ULVM_AREA_LV */
};

struct ulvm_seg {
	uint32_t start_extent, extent_count;
	char *type; /* "striped" is interpreted; other types are kept verbatim */
	uint32_t stripe_count;
	uint32_t stripe_size; /* sectors; 0 when stripe_count == 1 */
	struct ulvm_area *areas;
	struct ulvm_strlist tags;
	/* Keys ulvm does not interpret; for types other than striped, every key but
	 * start_extent, extent_count and type, written back in their order. */
	struct cfg_node *extra;
	/* Entries of `areas` (stripes, mirror legs, a thin pool's data LV), each spanning
	 * ulvm_seg_area_len() extents: every extent the segment uses. */
	uint32_t area_count;
	const struct ulvm_segtype *segtype; /* reads, writes, activates and reports it */
};

struct ulvm_lv {
	char *name;
	char uuid[33];
	struct ulvm_strlist status; /* READ, WRITE, VISIBLE, ... */
	struct ulvm_strlist flags;
	struct ulvm_strlist tags;
	int64_t creation_time; /* 0 = not recorded */
	char *creation_host;
	struct cfg_node *extra;
	struct ulvm_seg *segs;
	size_t nsegs;
	/* derived */
	uint32_t le_count;
	/* An LV whose segment used_by->segs[used_by_seg] uses this one other than as an area
	 * (a snapshot's origin or COW store); NULL: none. */
	struct ulvm_lv *used_by;
	size_t used_by_seg;
};

struct ulvm_vg {
	char *name;
	char uuid[33];
	uint32_t seqno;
	char *format;
	struct ulvm_strlist status, flags, tags;
	uint32_t extent_size; /* sectors */
	uint32_t max_lv, max_pv;
	int64_t metadata_copies;         /* -1 = not recorded */
	struct cfg_node *extra;          /* VG-level keys ulvm does not interpret */
	struct cfg_node *extra_sections; /* e.g. historical_logical_volumes */
	struct ulvm_pv **pvs;
	size_t npvs;
	struct ulvm_lv **lvs;
	size_t nlvs;
	/* private */
	struct ulvm_ctx *ctx;
	void *priv;
};

/* ---- context and devices --------------------------------------------------------------- */

struct ulvm_ctx_opts {
	/* Devices to consider: a comma-separated list, the way LVM2's --devices takes it. NULL
	 * falls back to the devices file, then $ULVM_DEVICES, then $ULVM_DEVICESFILE. */
	const char *devices;
	const char *devicesfile; /* one path per line, or LVM2 devices-file lines (DEVNAME=) */
	/* NULL: $ULVM_LOCK_DIR, else LVM2's locking_dir (lvm.conf; /run/lock/lvm), else
	 * /run/lock/ulvm or /tmp/ulvm-<uid> */
	const char *lock_dir;
	bool readonly; /* open devices read-only; no locks for writing */
	bool no_locking;
	bool ignore_lock_failure;
	/* Do not log damaged labels or metadata areas found by scans (the caller reports the
	 * `problem` of each ulvm_dev_info itself, as pvck does). */
	bool silent_scan;
	/* Test mode (LVM2's -t): the metadata is computed and "written" as always, but nothing
	 * reaches the devices (their writes are dropped). */
	bool test_mode;
	/* Archive the metadata before every commit and back it up after, as LVM2 does, where
	 * LVM2's lvm.conf says (see ulvm_backup_dirs); the command sets it, programs may. */
	bool archive;
};

int ulvm_ctx_new(const struct ulvm_ctx_opts *opts, struct ulvm_ctx **out);
void ulvm_ctx_free(struct ulvm_ctx *ctx);
/* Add a device to the set considered (e.g. a command's PV arguments). */
int ulvm_ctx_add_device(struct ulvm_ctx *ctx, const char *path);
size_t ulvm_ctx_device_count(const struct ulvm_ctx *ctx);

/* What a scan of the devices found on one device. */
struct ulvm_dev_info {
	const char *path;
	bool is_pv;
	char pv_uuid[33];
	uint64_t size;     /* bytes */
	uint64_t pe_start; /* sectors, from the label */
	unsigned mda_count;
	unsigned mda_used_count; /* the areas not flagged ignored (LVM2's pv_mda_used_count) */
	uint64_t mda_size, mda_free;
	const char *vg_name;  /* NULL for an orphan PV */
	const char *problem;  /* a corrupt label or metadata area: one line, else NULL */
	uint64_t label_size;  /* bytes: the device size its PV header records */
	unsigned ext_version; /* of the PV header extension: 0 (none), 1 (old) or 2 */
};
/* Scan every device (labels and metadata areas). The array stays valid until the next
 * scan or ulvm_ctx_free. */
int ulvm_scan(struct ulvm_ctx *ctx, const struct ulvm_dev_info **devs, size_t *ndevs);
/* What pvck shows of device `index` of ulvm_scan's array: its label and metadata areas. */
struct ulvm_label_info {
	bool has_label;
	const char *problem; /* a corrupt label: one line; NULL when there is none at all */
	unsigned sector;     /* where the label is */
	unsigned nmdas;
	struct {
		uint64_t offset, size; /* bytes */
		const char *problem;   /* a damaged area: one line, else NULL */
	} mdas[2];
};
int ulvm_dev_label_info(struct ulvm_ctx *ctx, size_t index, struct ulvm_label_info *out);
/* pvck --dump and --repairtype, as LVM2's: the headers and metadata of one device or image
 * file read raw (they may be damaged), LVM2's lines on `out` and its errors and warnings on
 * `err`. 0, or a negative errno once the messages are out. */
struct ulvm_pvck_opts {
	const char *file;            /* -f: the metadata file to write (dump) or read (repair) */
	const char *const *settings; /* each --settings "key=value ..." */
	size_t nsettings;
	uint64_t labelsector; /* --labelsector: 1 by default */
	int mda_num;          /* --pvmetadatacopies as the area to dump: 0 = not given */
	bool verbose, yes, test;
	const char *devices; /* repair: the other devices (comma list) a PV UUID must not be on */
	/* A question LVM2 asks before writing: 'y' or 'n' (NULL: always 'n'). */
	int (*ask)(const char *question);
};
/* `what`: headers, metadata, metadata_all, metadata_search, metadata_area, backup_to_raw
 * (which reads no device: `path` may be NULL). */
int ulvm_pvck_dump(const char *path, const char *what, const struct ulvm_pvck_opts *o, FILE *out,
                   FILE *err);
/* `what`: label_header, pv_header or metadata; NULL for --repair (pv_header, then metadata). */
int ulvm_pvck_repair(const char *path, const char *what, const struct ulvm_pvck_opts *o, FILE *out,
                     FILE *err);
/* Log (once per context) each damaged label or metadata area the scan found: all of them,
 * or those on the PVs of `vg`. Reading a VG does this for its own PVs. */
void ulvm_report_problems(struct ulvm_ctx *ctx, const struct ulvm_vg *vg);
/* Names of all VGs found, sorted. Valid until the next scan. */
int ulvm_vg_names(struct ulvm_ctx *ctx, const char *const **names, size_t *n);

/* ---- PVs -------------------------------------------------------------------------------- */

struct ulvm_pvcreate_opts {
	const char *uuid;         /* NULL: generate */
	uint64_t metadata_size;   /* bytes per metadata area; 0: LVM2 default (1 MiB - 4 KiB) */
	unsigned metadata_copies; /* 0, 1 or 2; default 1 (pass ULVM_DEFAULT) */
	uint64_t data_alignment;  /* bytes; 0: 1 MiB */
	uint64_t bootloader_size; /* bytes; 0: none */
	uint64_t set_size;        /* bytes; 0: the device size */
	bool force;               /* overwrite a PV that belongs to a VG (-ff) */
	/* Other signatures on the device (file systems, partition tables, ...; see below) are
	 * offered to `decide` (LVM2's "Wipe it?"); without it, or when one is kept, the device
	 * is left as it was and -EEXIST returned. */
	int (*decide)(void *arg, const struct ulvm_signature *sig);
	void *decide_arg;
	/* bytes: the data start this far past an alignment boundary (LVM2's
	 * --dataalignmentoffset; not more than the alignment) */
	uint64_t data_alignment_offset;
	/* the sector (0..3) of the label when label_sector_set (LVM2's --labelsector); else 1 */
	unsigned label_sector;
	bool label_sector_set;
};
#define ULVM_DEFAULT 0xffffffffu
/* bytes: LVM2's devices/pv_min_size; LVM2 does not use smaller devices as PVs */
#define ULVM_PV_MIN_SIZE (2048u * 1024u)

int ulvm_pvcreate(struct ulvm_ctx *ctx, const char *path, const struct ulvm_pvcreate_opts *o);
int ulvm_pvremove(struct ulvm_ctx *ctx, const char *path, bool force);

/* ---- signatures -------------------------------------------------------------------------
 * What libblkid finds on a device (file systems, partition tables, swap, RAID members, LUKS,
 * LVM labels), and wiping them as LVM2's pvcreate and lvcreate do: each one found is offered
 * to `decide`, which returns 1 to wipe it (its magic is zeroed and the place probed again),
 * 0 to keep it, or a negative errno to stop. *found counts the signatures offered, *wiped
 * those wiped. */
struct ulvm_signature {
	const char *device;       /* the path probed, or the mapped device's name */
	const char *type;         /* blkid's TYPE or PTTYPE: "ext4", "swap", "gpt", ... */
	const char *usage;        /* "filesystem", "raid", "crypto", "other", "partition table" */
	const char *label, *uuid; /* NULL when it has none */
	uint64_t offset;          /* bytes: where its magic is */
	size_t magic_len;
};
typedef int (*ulvm_signature_fn)(void *arg, const struct ulvm_signature *sig);
#define ULVM_SIG_SKIP_LVM (1u << 0) /* LVM2_member/LVM1_member are neither offered nor counted */
#define ULVM_SIG_READONLY (1u << 1) /* only look: the device is opened read-only */
int ulvm_signatures_wipe(const char *path, unsigned flags, ulvm_signature_fn decide, void *arg,
                         unsigned *found, unsigned *wiped);
struct ulvm_dev;
int ulvm_dev_signatures_wipe(struct ulvm_dev *dev, unsigned flags, ulvm_signature_fn decide,
                             void *arg, unsigned *found, unsigned *wiped);

/* ---- VGs -------------------------------------------------------------------------------- */

enum ulvm_lock_mode { ULVM_LOCK_READ, ULVM_LOCK_WRITE };
/* LVM2's global lock (P_global), taken before any VG lock by what changes the set of VGs or
 * orphan PVs (exclusive: vgextend, vgreduce, vgremove, vgrename, ...) or lists every VG
 * (shared). pvcreate, pvremove, vgcreate and vgcfgrestore take it themselves. */
int ulvm_lock_global(struct ulvm_ctx *ctx, enum ulvm_lock_mode mode);
void ulvm_unlock_global(struct ulvm_ctx *ctx);

struct ulvm_vgcreate_opts {
	uint32_t extent_size; /* sectors; 0: 8192 (4 MiB) */
	uint32_t max_lv, max_pv;
	const char *const *tags;
	size_t ntags;
	struct ulvm_pvcreate_opts pv; /* for arguments that are not yet PVs */
	const char *alloc;            /* allocation policy; NULL: normal */
	const char *profile;          /* metadata profile recorded; NULL: none */
	bool no_autoactivation;       /* flag NOAUTOACTIVATE (--setautoactivation n) */
	const char *system_id;        /* key system_id recorded; NULL: none */
};

int ulvm_vgcreate(struct ulvm_ctx *ctx, const char *name, const char *const *pv_paths, size_t npvs,
                  const struct ulvm_vgcreate_opts *o);
/* Read a VG under a lock (shared for READ, exclusive for WRITE). -ENOENT if not found. */
int ulvm_vg_open(struct ulvm_ctx *ctx, const char *name, enum ulvm_lock_mode mode,
                 struct ulvm_vg **out);
/* Write the in-memory VG as a new metadata version (seqno + 1) to every metadata area. */
int ulvm_vg_commit(struct ulvm_vg *vg, const char *description);
void ulvm_vg_close(struct ulvm_vg *vg);

/* 0, or -ENXIO with LVM2's message when PVs of the VG are missing. LVM2 2.03 refuses then:
 * lvcreate, lvextend/lvreduce/lvresize, lvrename, vgrename, vgreduce (not lvremove,
 * lvchange, vgchange, vgextend, vgremove). ulvm_vg_rename and ulvm_vg_reduce check it. */
int ulvm_vg_require_complete(const struct ulvm_vg *vg);
int ulvm_vg_extend(struct ulvm_vg *vg, const char *const *pv_paths, size_t n,
                   const struct ulvm_pvcreate_opts *o);
int ulvm_vg_reduce(struct ulvm_vg *vg, const char *pv_path);
int ulvm_vg_rename(struct ulvm_vg *vg, const char *new_name);
/* Remove the VG (its LVs must already be removed, or `force`); commits. */
int ulvm_vg_remove(struct ulvm_vg *vg, bool force);
/* Metadata text of the VG: CFG style raw (what goes on disk) or file (vgcfgbackup). */
int ulvm_vg_export_text(struct ulvm_vg *vg, bool file_form, const char *description, char **text);
/* Replace a VG's metadata by a backup file's (vgcfgrestore). PVs are matched by UUID. */
int ulvm_vg_restore(struct ulvm_ctx *ctx, const char *name, const char *text, size_t len,
                    const char *what);
/* Consistency checks (vgck): returns the number of problems found, each logged. */
int ulvm_vg_check(struct ulvm_vg *vg);

/* ---- LVs -------------------------------------------------------------------------------- */

/* cling: an extension goes only on the PVs of the LV's last segment (a new LV: as normal). */
enum ulvm_alloc_policy {
	ULVM_ALLOC_NORMAL,
	ULVM_ALLOC_CONTIGUOUS,
	ULVM_ALLOC_ANYWHERE,
	ULVM_ALLOC_CLING,
};

struct ulvm_lv_params {
	const char *name;     /* NULL: lvolN */
	uint64_t extents;     /* size in extents (callers convert sizes) */
	uint32_t stripes;     /* 0/1: linear */
	uint32_t stripe_size; /* sectors; 0: 128 (64 KiB) */
	enum ulvm_alloc_policy alloc;
	const char *const *pvs; /* restrict allocation to these PVs (paths); NULL: any */
	size_t npvs;
	const char *const *tags;
	size_t ntags;
};

struct ulvm_lv *ulvm_lv_find(struct ulvm_vg *vg, const char *name);
/* lvcreate --type TYPE: set `p` for it ("linear": one stripe); -EOPNOTSUPP for a type ulvm
 * cannot create. */
int ulvm_lv_params_set_type(struct ulvm_lv_params *p, const char *type);
int ulvm_lv_create(struct ulvm_vg *vg, const struct ulvm_lv_params *p, struct ulvm_lv **out);
/* Grow or shrink to `extents`. Growing uses p's stripes/alloc/pvs (stripes 0 = as the last
 * segment). */
int ulvm_lv_resize(struct ulvm_vg *vg, struct ulvm_lv *lv, uint64_t extents,
                   const struct ulvm_lv_params *p);
int ulvm_lv_remove(struct ulvm_vg *vg, struct ulvm_lv *lv);
int ulvm_lv_rename(struct ulvm_vg *vg, struct ulvm_lv *lv, const char *new_name);
int ulvm_tag_add(struct ulvm_strlist *tags, const char *tag);
int ulvm_tag_del(struct ulvm_strlist *tags, const char *tag);

/* Derived properties, as LVM2 reports them. */
bool ulvm_lv_visible(const struct ulvm_lv *lv);
/* How many historical LVs (metadata/record_lvs_history) the VG's metadata records; ulvm
 * keeps them as they are and does not report them. */
size_t ulvm_vg_historical_lvs(const struct ulvm_vg *vg);
const char *ulvm_lv_segtype(const struct ulvm_lv *lv); /* type of the first segment */
/* The allocation policy the metadata records ("contiguous", "cling", ...): an LV's default is
 * "inherit", a VG's "normal". */
const char *ulvm_lv_alloc_policy(const struct ulvm_lv *lv);
const char *ulvm_vg_alloc_policy(const struct ulvm_vg *vg);
/* Record a policy as LVM2 does ("inherit" for an LV and "normal" for a VG are their defaults:
 * no key); -EINVAL for another word, or "inherit" for a VG (LVM2's message). */
int ulvm_lv_set_alloc_policy(struct ulvm_vg *vg, struct ulvm_lv *lv, const char *policy);
int ulvm_vg_set_alloc_policy(struct ulvm_vg *vg, const char *policy);
enum ulvm_alloc_policy ulvm_alloc_policy_of(const char *policy);
/* The policy an allocation for `lv` (NULL: a new LV) follows: its own, else the VG's. */
enum ulvm_alloc_policy ulvm_lv_effective_alloc(const struct ulvm_vg *vg, const struct ulvm_lv *lv);
/* The metadata profile attached (key "profile"), NULL: none; set NULL to detach. ulvm
 * records it; it does not apply the profile's settings. */
const char *ulvm_lv_profile(const struct ulvm_lv *lv);
const char *ulvm_vg_profile(const struct ulvm_vg *vg);
int ulvm_lv_set_profile(struct ulvm_vg *vg, struct ulvm_lv *lv, const char *name);
int ulvm_vg_set_profile(struct ulvm_vg *vg, const char *name);
/* A string key of the VG's (or LV's) text metadata that ulvm keeps without interpreting it
 * (system_id, lock_type, lock_args, ...); NULL when it is not there or not a string. */
const char *ulvm_vg_text_str(const struct ulvm_vg *vg, const char *key);
const char *ulvm_lv_text_str(const struct ulvm_lv *lv, const char *key);
/* A mirror (or pvmove) segment's region size in sectors; 0 when it records none. */
uint32_t ulvm_seg_region_size(const struct ulvm_seg *seg);
/* The VG's system_id key (NULL: none); ulvm reads no local system ID, no VG is foreign. */
int ulvm_vg_set_system_id(struct ulvm_vg *vg, const char *id);
/* Read ahead in sectors (key read_ahead, as LVM2: none written -1, auto not written). */
#define ULVM_READ_AHEAD_AUTO UINT32_MAX
#define ULVM_READ_AHEAD_NONE 0
uint32_t ulvm_lv_read_ahead(const struct ulvm_lv *lv);
int ulvm_lv_set_read_ahead(struct ulvm_vg *vg, struct ulvm_lv *lv, uint32_t sectors);
/* A persistent device number (FIXED_MINOR, keys major and minor): true when set; -1 for a
 * number not recorded. minor < 0 clears it. */
bool ulvm_lv_persistent(const struct ulvm_lv *lv, int *major, int *minor);
int ulvm_lv_set_persistent(struct ulvm_vg *vg, struct ulvm_lv *lv, int major, int minor);
bool ulvm_strlist_has(const struct ulvm_strlist *l, const char *word);
/* LVM2's rules for VG and LV names; false with the reason in `why` for a name it refuses. */
bool ulvm_name_valid(const char *name, char *why, size_t whylen);
uint64_t ulvm_vg_free_extents(const struct ulvm_vg *vg);
uint64_t ulvm_vg_total_extents(const struct ulvm_vg *vg);
/* A segment's type as reports name it ("linear" for one stripe) and the extents each of its
 * areas spans. */
const char *ulvm_seg_type(const struct ulvm_seg *seg);
uint32_t ulvm_seg_area_len(const struct ulvm_seg *seg);
/* What an LV is, as LVM2's reports say it, from its segment types. */
struct ulvm_lv_info {
	const char *segtype; /* of the first segment, as ulvm_seg_type names it */
	const char *layout;  /* lv_layout: "linear", "thin,pool", ... */
	const char *origin;  /* origin: a snapshot's (also on its COW LV); NULL: none */
	const char *pool_lv; /* a thin LV's pool; NULL: none */
	char role;           /* lv_attr[0]: 't' thin pool, 'V' thin, 's' snapshot, 'o' origin,
	                      * 'p' pvmove, ... */
	char alloc;          /* lv_attr[2]: the policy's letter, capital while LOCKED (pvmove) */
	char target;         /* lv_attr[6]: 't' thin, 's' snapshot, 'r' raid, 'm' mirror, '-' */
	bool zero;           /* lv_attr[7]: new blocks are zeroed (a thin pool's setting) */
	bool snapshot;       /* an old-style snapshot: LVM2 reports it as its COW LV */
	bool snapshot_cow;   /* a snapshot's COW LV: reported (under the snapshot) though hidden */
	/* Thin provisioning (ULVM_THIN_NONE for other LVs): */
	enum { ULVM_THIN_NONE, ULVM_THIN_POOL, ULVM_THIN_VOLUME } thin_kind;
	uint32_t thin_id;        /* a thin LV's device id in its pool */
	int64_t transaction_id;  /* the pool's, or the one a thin LV was created at */
	const char *discards;    /* the pool's (also a thin LV's): "passdown", ... */
	uint32_t chunk_size;     /* a pool's data block size, sectors */
	const char *metadata_lv; /* a pool's metadata LV */
};
void ulvm_lv_info(const struct ulvm_vg *vg, const struct ulvm_lv *lv, struct ulvm_lv_info *out);

/* ---- old-style snapshots (dm-snapshot) ----------------------------------------------------
 * As LVM2 records them: the COW LV (the name the user gave, hidden, a plain striped LV holding
 * the exception store) and an LV "snapshotN" whose one segment (type "snapshot") names the
 * origin, the COW LV (`cow_store`, `merging_store` while a merge is pending) and the chunk
 * size. Reports and commands name the snapshot by its COW LV. */
#define ULVM_SNAPSHOT_CHUNK_DEFAULT 8u /* sectors: LVM2's default, 4 KiB */
#define ULVM_SNAPSHOT_CHUNK_MIN     8u
#define ULVM_SNAPSHOT_CHUNK_MAX     1024u
struct ulvm_snapshot {
	struct ulvm_lv *snap;   /* "snapshotN", holding the snapshot segment */
	struct ulvm_lv *origin; /* NULL when the metadata names no such LV */
	struct ulvm_lv *cow;    /* the LV the user names */
	uint32_t chunk_size;    /* sectors */
	bool merging;           /* lvconvert --merge recorded (merging_store) */
};
/* Whether `lv` is a snapshot: its COW LV or its snapshotN LV (*out filled, may be NULL). */
bool ulvm_lv_snapshot(const struct ulvm_vg *vg, const struct ulvm_lv *lv,
                      struct ulvm_snapshot *out);
/* The snapshots of `origin`, in the order they were made: the count (at most `max` filled). */
size_t ulvm_lv_snapshots(const struct ulvm_vg *vg, const struct ulvm_lv *origin,
                         struct ulvm_snapshot *out, size_t max);
/* lvcreate -s, as LVM2 does it: check the request (chunk_size sectors, a power of 2 from
 * 4 KiB to 512 KiB; the origin a plain visible LV without a merging snapshot) and cut
 * *extents to the largest COW the origin can fill; then make the COW LV as a
 * plain LV of *extents, commit, zero its first 4 KiB, and turn it into the snapshot's COW
 * with ulvm_lv_snapshot_create (the snapshotN LV is added, the COW LV hidden); commit. */
int ulvm_lv_snapshot_check(const struct ulvm_vg *vg, const struct ulvm_lv *origin,
                           uint32_t chunk_size, uint64_t *extents);
int ulvm_lv_snapshot_create(struct ulvm_vg *vg, struct ulvm_lv *origin, struct ulvm_lv *cow,
                            uint32_t chunk_size);
/* lvconvert --merge: record the merge (LVM2's merging_store); the caller commits. */
int ulvm_lv_snapshot_merge(struct ulvm_vg *vg, struct ulvm_lv *cow);
/* lvconvert --splitsnapshot: the snapshotN LV goes, the COW LV `cow` is a plain visible LV
 * again (its data stays). */
int ulvm_lv_snapshot_split(struct ulvm_vg *vg, struct ulvm_lv *cow);
/* ulvm_lv_remove of a snapshot's COW LV removes the snapshot (both LVs); an origin with
 * snapshots cannot be removed before them. */

/* A snapshot target's status line ("<used>/<total> <metadata>", "Invalid", "Merge failed",
 * "Overflow"), as `dmsetup status` prints it after the start, length and type. */
struct ulvm_snapshot_status {
	bool invalid, merge_failed, overflow;
	uint64_t used, total, metadata; /* sectors */
};
int ulvm_snapshot_status_parse(const char *params, struct ulvm_snapshot_status *st);
/* The status of snapshot `cow` (its COW LV) when it is active (ulvm_active_status of its
 * device): false when it is not active, or not a snapshot. While a merge runs, the merging
 * origin and its snapshot both have the origin's snapshot-merge status, as in LVM2. */
bool ulvm_lv_snapshot_status(const struct ulvm_vg *vg, const struct ulvm_lv *cow,
                             struct ulvm_snapshot_status *st);
/* LVM2's percentage of a snapshot's status, in hundredths ("0.73" is 73): 10000 when it is
 * invalid, as lvs shows it. */
unsigned ulvm_snapshot_percent(const struct ulvm_snapshot_status *st);
/* ---- thin pools and thin LVs ------------------------------------------------------------
 * As LVM2 makes them: a pool LV POOL (segment type thin-pool) over hidden POOL_tdata and
 * POOL_tmeta, with one spare metadata LV lvolN_pmspare per VG; thin LVs (type thin) name
 * their pool and their device id in it. Changes to thin LVs queue pool messages in the
 * metadata (raising the pool's transaction_id); commit, then ulvm_thin_pool_send_messages
 * on the active pool, then commit again (the pool superblock's transaction id and the
 * text's agree again). */
struct ulvm_thin_pool_params {
	const char *name;          /* NULL: lvolN */
	uint64_t extents;          /* data extents */
	bool percent_free;         /* extents came from %FREE/%PVS: room for metadata is kept */
	uint32_t chunk_size;       /* sectors; 0: LVM2's default for the size */
	uint64_t metadata_extents; /* 0: LVM2's estimate */
	int zero;                  /* -1: default (yes) */
	const char *discards;      /* "ignore", "nopassdown", "passdown"; NULL: passdown */
	bool no_spare;             /* --poolmetadataspare n */
	uint32_t stripes, stripe_size;
	const char *const *pvs;
	size_t npvs;
	const char *const *tags;
	size_t ntags;
};
/* LVM2's chunk size and metadata size for a pool of `data_extents` (0 in: choose). */
int ulvm_thin_pool_sizes(const struct ulvm_vg *vg, uint64_t data_extents, uint32_t *chunk_size,
                         uint64_t *metadata_extents);
/* Sectors of data a pool with this chunk size can address (LVM2's "can address at most"). */
uint64_t ulvm_thin_pool_max_data(uint32_t chunk_size);
int ulvm_thin_pool_create(struct ulvm_vg *vg, const struct ulvm_thin_pool_params *p,
                          struct ulvm_lv **pool);
/* lvconvert --type thin-pool: `lv` becomes the pool (its name and UUID), its extents move to
 * the new hidden LV_tdata; `meta` (NULL: a new LV of LVM2's estimate or p->metadata_extents)
 * becomes LV_tmeta; the spare is made or grown unless p->no_spare. p->chunk_size, zero and
 * discards as for a new pool; the metadata LV is to be zeroed after the commit. */
int ulvm_thin_pool_convert(struct ulvm_vg *vg, struct ulvm_lv *lv, struct ulvm_lv *meta,
                           const struct ulvm_thin_pool_params *p);
/* lvconvert --swapmetadata: `meta` becomes the pool's POOL_tmeta (hidden) and the old
 * metadata LV takes meta's name, visible. */
int ulvm_thin_pool_swap_metadata(struct ulvm_vg *vg, struct ulvm_lv *pool, struct ulvm_lv *meta);
int ulvm_thin_create(struct ulvm_vg *vg, struct ulvm_lv *pool, const char *name, uint64_t extents,
                     const char *const *tags, size_t ntags, struct ulvm_lv **out);
/* A thin snapshot of thin LV `origin` (LVM2 sets the activation skip flag by default). */
int ulvm_thin_snapshot(struct ulvm_vg *vg, struct ulvm_lv *origin, const char *name,
                       bool activation_skip, struct ulvm_lv **out);
int ulvm_thin_remove(struct ulvm_vg *vg, struct ulvm_lv *lv);
/* Change a thin LV's virtual size to `extents` (nothing is allocated in the VG). */
int ulvm_thin_resize(struct ulvm_vg *vg, struct ulvm_lv *lv, uint64_t extents);
/* The pool, its thin LVs (no messages: the pool goes), its sub-LVs, and the spare with the
 * last pool. */
int ulvm_thin_pool_remove(struct ulvm_vg *vg, struct ulvm_lv *pool);
/* Grow a pool's data and/or metadata LV to these extents (0: unchanged); the spare grows
 * with the metadata. */
int ulvm_thin_pool_extend(struct ulvm_vg *vg, struct ulvm_lv *pool, uint64_t data_extents,
                          uint64_t metadata_extents, const struct ulvm_lv_params *lp);
bool ulvm_lv_is_thin_pool(const struct ulvm_lv *lv);
bool ulvm_lv_is_thin(const struct ulvm_lv *lv);
struct ulvm_lv *ulvm_thin_pool_of(const struct ulvm_vg *vg, const struct ulvm_lv *lv);
struct ulvm_lv *ulvm_thin_pool_spare(const struct ulvm_vg *vg);
struct ulvm_thin_pool_info {
	struct ulvm_lv *metadata_lv, *data_lv;
	uint64_t transaction_id;
	uint32_t chunk_size;
	const char *discards;
	bool zero;
	size_t queued_messages;
	size_t thin_count;
	uint64_t thin_sectors; /* the thin LVs' sizes, summed */
};
void ulvm_thin_pool_get(const struct ulvm_vg *vg, const struct ulvm_lv *pool,
                        struct ulvm_thin_pool_info *out);
/* Send the queued messages to the active pool and drop them from the model (commit after).
 * A pool already at the text's transaction id had them: they are only dropped. */
int ulvm_thin_pool_send_messages(struct ulvm_vg *vg, struct ulvm_lv *pool);
/* LVM2's check of an active pool: its superblock's transaction id is the text's (or one
 * lower while messages are queued). */
int ulvm_thin_check_transaction(struct ulvm_vg *vg, struct ulvm_lv *pool);
/* The pool checker on the pool's metadata LV (a new, all-zero one is not checked), as LVM2
 * runs thin_check -q before it loads a pool: -EUCLEAN when it finds damage. */
int ulvm_thin_pool_check(struct ulvm_vg *vg, const struct ulvm_lv *pool);
/* Activate (or refresh) an LV with every device it stacks on, or deactivate it and what only
 * it used (LVM2's activation tree). *vg_changed: queued pool messages were sent (commit). */
int ulvm_lv_activate(struct ulvm_vg *vg, struct ulvm_lv *lv, bool on, bool *vg_changed);
/* Reload the devices of `lv`'s stack that are active and whose tables changed (a grown
 * pool: data, metadata, the pool's real device, its own). */
int ulvm_lv_refresh(struct ulvm_vg *vg, struct ulvm_lv *lv);
/* Remove the VG's pool metadata spare (lvremove of lvolN_pmspare, after LVM2's question). */
int ulvm_thin_spare_remove(struct ulvm_vg *vg, struct ulvm_lv *spare);
/* lvconvert --repair of an inactive pool, as LVM2 runs thin_repair: the metadata, read as
 * far as it can be, is rebuilt into the VG's spare (made first when there is none, and then
 * committed at once, as LVM2 commits it before it writes into it), which becomes the pool's
 * tmeta under the old tmeta's name and UUID; the old tmeta stays as the visible LV POOL_metaN
 * and a new spare is made unless no_spare. Commit afterwards (that commit does the swap). */
struct ulvm_thin_repair_params {
	const char *const *pvs; /* where a new spare may go (NULL: anywhere) */
	size_t npvs;
	bool no_spare;           /* --poolmetadataspare n */
	const char *description; /* of the new spare's commit (the command line) */
};
struct ulvm_thin_repair_result {
	char backup_name[128];            /* POOL_metaN, the unrepaired metadata */
	char spare_dm[300];               /* the repaired copy's device name before the swap */
	uint64_t repaired_transaction_id; /* the repaired superblock's */
	bool transaction_mismatch;        /* neither the VG's transaction id nor one above */
	bool spare_made;                  /* there was no spare: one was made for the repair */
};
int ulvm_thin_pool_repair(struct ulvm_vg *vg, struct ulvm_lv *pool,
                          const struct ulvm_thin_repair_params *p,
                          struct ulvm_thin_repair_result *res);
struct ulvm_thin_pool_status {
	uint64_t transaction_id, used_metadata, total_metadata, used_data, total_data;
	bool read_only, out_of_data, needs_check;
	bool failed; /* the pool said "Fail" (nothing else is known then) */
};
int ulvm_thin_pool_status(const char *status_line, struct ulvm_thin_pool_status *st);
/* lv_attr's ninth character for a thin pool or thin LV from its active device's status, as
 * LVM2 computes it: 'F' failed, 'D' out of data space, 'M' metadata read-only, 'X' status
 * unknown, '-' otherwise (and for inactive LVs and other LVs). *health, if not NULL:
 * lv_health_status' word ("failed", "out_of_data", "metadata_read_only" or ""). */
char ulvm_lv_thin_health(const struct ulvm_vg *vg, const struct ulvm_lv *lv, const char **health);
/* What lvs' data_percent and metadata_percent are made of, from the active devices' status:
 * -ENXIO when inactive, -ENOENT for other LVs. */
struct ulvm_thin_usage {
	uint64_t data_used, data_total; /* pool: blocks; thin LV: sectors */
	uint64_t meta_used, meta_total; /* pool only */
	bool has_meta;
	uint64_t mapped; /* thin LV: sectors mapped (more than data_total after a reduce) */
};
int ulvm_lv_thin_usage(const struct ulvm_vg *vg, const struct ulvm_lv *lv,
                       struct ulvm_thin_usage *u);

/* ---- activation and I/O ------------------------------------------------------------------
 * An LV is activated the way LVM2 activates it: its segments become a device-mapper table
 * (`dmsetup table` syntax) of linear and striped targets over the PVs, and a userspace
 * mapped device is built from that table. I/O on it runs on the io_uring engine. */

/* The table LVM2 would load for `lv` (one line per segment, lower devices named by path, or
 * MAJ:MIN for block devices), and the device-mapper name LVM2 gives it ("vg-lv", with '-'
 * doubled inside names). */
int ulvm_lv_table(const struct ulvm_vg *vg, const struct ulvm_lv *lv, char **table);
void ulvm_lv_dm_name(const char *vg, const char *lv, char *out, size_t len);
/* The inverse of ulvm_lv_dm_name: false when `dm` is not of the form VG-LV. */
bool ulvm_dm_name_split(const char *dm, char *vg, size_t vglen, char *lv, size_t lvlen);
/* The UUID LVM2 gives an LV's device: "LVM-" + VG uuid + LV uuid, without dashes. */
#define ULVM_DM_UUID_LEN 129
void ulvm_lv_dm_uuid(const struct ulvm_vg *vg, const struct ulvm_lv *lv, char *out, size_t len);

/* The devices LVM2 loads to activate `lv`, lowest first, in the order it resumes them: one
 * for a plain LV; for an origin with snapshots (or one of its snapshots, which are activated
 * with it) the origin's "-real" layer, each snapshot's "-cow" layer and snapshot device, and
 * the origin's device; an LV LOCKED on a pvmove first has the pvmove LV's device (its own
 * layer, shared with the other LVs on it). Names are dm names; tables name the layers by
 * their dm names. */
struct ulvm_lv_layer {
	const struct ulvm_lv *lv;
	const char *suffix; /* "real", "cow", or NULL for the LV's own device */
	char name[300];
	char uuid[ULVM_DM_UUID_LEN + 8];
	char *table;
};
int ulvm_lv_layers(const struct ulvm_vg *vg, const struct ulvm_lv *lv, struct ulvm_lv_layer **out,
                   size_t *n);
void ulvm_lv_layers_free(struct ulvm_lv_layer *layers, size_t n);
/* The device whose presence says the LV is active: its own, or for a thin pool its real
 * `thin-pool` device (VG-POOL-tpool while it has thin LVs), with the UUID LVM2 gives it. */
void ulvm_lv_state_device(const struct ulvm_vg *vg, const struct ulvm_lv *lv, char *name,
                          size_t nlen, char *uuid, size_t ulen);
/* Every device LVM2 loads to activate `lv`, the lowest first, the LV's own last: a thin LV
 * stacks on its pool's real device, which stacks on the pool's metadata and data LVs. */
struct ulvm_dm_node {
	char name[300];
	char uuid[ULVM_DM_UUID_LEN];
	char *table;
	const struct ulvm_lv *lv; /* whose device it is */
	bool real_pool;           /* a thin pool's `thin-pool` device */
};
int ulvm_lv_dm_nodes(const struct ulvm_vg *vg, const struct ulvm_lv *lv,
                     struct ulvm_dm_node **nodes, size_t *n);
void ulvm_dm_nodes_free(struct ulvm_dm_node *nodes, size_t n);

struct ulvm_dev;

/* Activate VG/LV in this process and open it. */
int ulvm_dev_open_lv(struct ulvm_ctx *ctx, const char *vg, const char *lv, struct ulvm_dev **out);
/* A mapped device from a raw table (dmsetup syntax); lower devices are paths, MAJ:MIN, or
 * names of devices already open in this context. */
int ulvm_dev_open_table(struct ulvm_ctx *ctx, const char *name, const char *table,
                        struct ulvm_dev **out);
/* Waits for the device's I/O to finish, then removes it. */
void ulvm_dev_close(struct ulvm_dev *dev);
/* Open counts, as `dmsetup info` shows them: each user of a device beyond the handle that
 * built it (an NBD connection, an open FUSE file, a caller of the C API) holds it, and
 * deactivation refuses a held device. ulvm_dev_open_count() is the number of holds. */
void ulvm_dev_hold(struct ulvm_dev *dev);
void ulvm_dev_unhold(struct ulvm_dev *dev);
unsigned ulvm_dev_open_count(const struct ulvm_dev *dev);
/* Become the one owner of the device among processes (an exclusive lock on its name in the
 * runtime directory, kept until ulvm_dev_close): -EBUSY, naming the holder's pid and command,
 * when another process owns it. ulvm_active_open and ulvm_dev_open_lv do this themselves. */
int ulvm_dev_own(struct ulvm_dev *dev);
uint64_t ulvm_dev_size(const struct ulvm_dev *dev); /* bytes */
unsigned ulvm_dev_sector_size(const struct ulvm_dev *dev);
const char *ulvm_dev_name(const struct ulvm_dev *dev);
/* A new name for an open device (as DM_DEV_RENAME): its holders and I/O go on. -EEXIST when
 * the context has one of that name, -EBUSY while another device's table stacks on it. */
int ulvm_dev_rename(struct ulvm_dev *dev, const char *name);
/* Its table (or status) as `dmsetup table` (`status`) prints it; malloc'd. */
int ulvm_dev_table(struct ulvm_dev *dev, bool status, char **out);
/* Suspend (in-flight I/O drains, new I/O waits), load a new table, resume. */
int ulvm_dev_suspend(struct ulvm_dev *dev);
int ulvm_dev_reload(struct ulvm_dev *dev, const char *table);
int ulvm_dev_resume(struct ulvm_dev *dev);
/* `dmsetup message`: `msg` to the target holding `sector`; *reply (malloc'd) its answer. */
int ulvm_dev_message(struct ulvm_dev *dev, uint64_t sector, const char *msg, char **reply);

/* A backing file or block device itself, with no mapping: the baseline for benchmarks. */
int ulvm_dev_open_raw(struct ulvm_ctx *ctx, const char *path, struct ulvm_dev **out);
/* A device already open in this context, by name. */
struct ulvm_dev *ulvm_dev_find(struct ulvm_ctx *ctx, const char *name);

/* Synchronous I/O. Offsets and lengths are multiples of the sector size; the buffer may
 * have any alignment (an unaligned one is copied through an aligned bounce buffer). */
int ulvm_dev_pread(struct ulvm_dev *dev, void *buf, size_t len, uint64_t offset);
int ulvm_dev_pwrite(struct ulvm_dev *dev, const void *buf, size_t len, uint64_t offset, bool fua);
int ulvm_dev_flush(struct ulvm_dev *dev);
int ulvm_dev_discard(struct ulvm_dev *dev, uint64_t offset, uint64_t len);
int ulvm_dev_write_zeroes(struct ulvm_dev *dev, uint64_t offset, uint64_t len, bool no_unmap);

/* Block status: what [offset, offset + length) holds, as up to `max` consecutive extents from
 * `offset` (any alignment; inside the device), each data (flags 0) or with ULVM_EXTENT_HOLE
 * (no space allocated: a thin LV's unprovisioned blocks, a zero target, a hole of a backing
 * file) and ULVM_EXTENT_ZERO (reads return zeros). Returns how many extents were filled (>= 1;
 * they may cover less than asked: ask again from where they end), or -errno: -EINVAL for a
 * range outside the device, -EIO where it cannot be read (an error target). Synchronous, no
 * I/O through the engine; writes and discards already completed are reflected. */
#define ULVM_EXTENT_HOLE (1u << 0)
#define ULVM_EXTENT_ZERO (1u << 1)
struct ulvm_extent {
	uint64_t offset, length; /* bytes */
	uint32_t flags;
};
int ulvm_dev_block_status(struct ulvm_dev *dev, uint64_t offset, uint64_t length,
                          struct ulvm_extent *ext, unsigned max);

/* Asynchronous I/O: fill in a ulvm_io, submit, and run completions with ulvm_dev_poll().
 * Many requests may be in flight; each `done` runs exactly once, from ulvm_dev_poll(). */
enum ulvm_io_op {
	ULVM_IO_READ,
	ULVM_IO_WRITE,
	ULVM_IO_FLUSH,
	ULVM_IO_DISCARD,
	ULVM_IO_WRITE_ZEROES
};
#define ULVM_IO_FUA      (1u << 0) /* WRITE, DISCARD, WRITE_ZEROES: durable when done */
#define ULVM_IO_NO_UNMAP (1u << 1)

struct ulvm_io {
	enum ulvm_io_op op;
	unsigned flags;
	uint64_t offset, length; /* bytes */
	void *buf;
	void (*done)(struct ulvm_io *io, int result); /* 0 or -errno */
	void *private;
	uint64_t reserved[16]; /* the library's */
};

/* Memory for READ and WRITE requests is aligned to this (devices may be opened O_DIRECT). */
#define ULVM_IO_ALIGN 4096u

/* -EINVAL at once for a request outside the device, not sector-aligned, or with a READ/WRITE
 * buffer not aligned to ULVM_IO_ALIGN. */
int ulvm_dev_submit(struct ulvm_dev *dev, struct ulvm_io *io);
/* Run completions: wait until at least `min_complete` requests finished. Returns how many. */
int ulvm_dev_poll(struct ulvm_dev *dev, unsigned min_complete);
unsigned ulvm_dev_inflight(const struct ulvm_dev *dev);

/* For event loops serving many devices of one context: run completions of all of them
 * (waiting for at least `min_complete`), a file descriptor that becomes readable when
 * completions arrive (-1: none, poll on every turn), and whether work is ready now. */
int ulvm_ctx_poll(struct ulvm_ctx *ctx, unsigned min_complete);
int ulvm_ctx_event_fd(struct ulvm_ctx *ctx);
bool ulvm_ctx_io_ready(struct ulvm_ctx *ctx);

/* ---- active devices --------------------------------------------------------------------
 * Device-mapper state kept between commands (until ulvmd holds it): each active device's
 * live table, a loaded inactive table, and whether it is suspended, in a runtime directory
 * ($ULVM_RUN_DIR, /run/ulvm, or /tmp/ulvm-run-<uid>). Tables are checked (arguments, lower
 * devices) before they are recorded. */
int ulvm_active_create(struct ulvm_ctx *ctx, const char *name, const char *table);
/* With a UUID (unique among active devices; LVs get ulvm_lv_dm_uuid's, as in LVM2). */
int ulvm_active_create_uuid(struct ulvm_ctx *ctx, const char *name, const char *uuid,
                            const char *table);
/* The recorded UUID ("" when none). */
int ulvm_active_uuid(const char *name, char *out, size_t len);
/* 0 when the record can be used; -ESTALE when its backing devices are gone or were
 * replaced since it was made (reported once as a warning naming it; never used for I/O;
 * ulvm_active_remove clears it). */
int ulvm_active_check(const char *name);
/* Is the LV active: a usable record under its dm name with its dm UUID. A record under its
 * name that is not its own (another LV's of an old VG of the same name) is stale: reported
 * once, and the LV counts as inactive. */
bool ulvm_lv_active(const struct ulvm_vg *vg, const struct ulvm_lv *lv);
/* How many hold the device open (ulvm_dev_open_count in its owner, NBD connections of
 * ulvmd, devices whose tables stack on it; a process owning it without ulvmd counts 1). */
int ulvm_active_open_count(const char *name, unsigned *count);
/* 0 when nothing holds device `name` open, else -EBUSY with LVM2's message ("Logical volume
 * VG/LV in use.", or "... is used by another device." when a table stacks on it). */
int ulvm_active_busy(const char *name);
/* Whether a process owns device `name` (ulvm_dev_own), and which: "pid N (COMMAND)". */
bool ulvm_active_owner(const char *name, char *who, size_t len);
int ulvm_active_remove(struct ulvm_ctx *ctx, const char *name);
/* Rename active device `name` in place, as `dmsetup rename` does in the kernel: its records
 * follow, its owner (ulvmd's NBD clients and FUSE files, an in-process user) keeps it open
 * and doing I/O, its UUID stays, and the tables of the devices stacked on it name it by its
 * new name (the kernel's name it by its number, which stays). -EEXIST when `new_name` is
 * active, -ENXIO when `name` is not. */
int ulvm_active_rename(struct ulvm_ctx *ctx, const char *name, const char *new_name);
/* `dmsetup rename NAME --setuuid UUID`: a UUID for a device that has none. -EINVAL when it
 * has one (the kernel does not change it), -EBUSY when another device has that UUID. */
int ulvm_active_set_uuid(struct ulvm_ctx *ctx, const char *name, const char *uuid);
/* The devices of a VG's LVs follow a rename of an LV or of the VG, in place, as LVM2 renames
 * them (VG-LV and its layers: -real, -cow, -tpool, _tdata, _tmeta; UUIDs kept; open devices
 * stay open). Taken before the names change in memory (ulvm_lv_rename, ulvm_vg_rename),
 * applied after: every active device whose name LVM2 would change is renamed, all or none.
 * _undo gives the old names back (a commit that failed). */
struct ulvm_dm_renames;
int ulvm_dm_renames_new(const struct ulvm_vg *vg, struct ulvm_dm_renames **out);
int ulvm_dm_renames_apply(struct ulvm_ctx *ctx, struct ulvm_dm_renames *rn,
                          const struct ulvm_vg *vg);
/* Before a vgrename commits: -EEXIST when a device could not take its name under
 * `vg_name` (another device has it). */
int ulvm_dm_renames_check(struct ulvm_dm_renames *rn, struct ulvm_vg *vg, const char *vg_name);
void ulvm_dm_renames_undo(struct ulvm_ctx *ctx, struct ulvm_dm_renames *rn);
size_t ulvm_dm_renames_done(const struct ulvm_dm_renames *rn);
void ulvm_dm_renames_free(struct ulvm_dm_renames *rn);
int ulvm_active_load(struct ulvm_ctx *ctx, const char *name, const char *table);
/* suspend = false resumes: a loaded table becomes the live one. */
int ulvm_active_suspend(const char *name, bool suspend);
int ulvm_active_info(const char *name, char **table, char **inactive, bool *suspended);
bool ulvm_active_exists(const char *name);
int ulvm_active_list(const char ***names, size_t *n);
void ulvm_active_list_free(const char **names, size_t n);
/* Build an active device (and the active devices it stacks on) in this process and own it
 * (ulvm_dev_own): -ESTALE for a stale record, -EBUSY when another process owns it. While
 * ulvmd runs it owns every active device: use its NBD export instead. */
int ulvm_active_open(struct ulvm_ctx *ctx, const char *name, struct ulvm_dev **out);
/* `dmsetup message NAME SECTOR MSG`: to ulvmd when it runs, else to the device built and
 * owned in this process for the message (a thin pool commits it when it is closed). */
int ulvm_active_message(struct ulvm_ctx *ctx, const char *name, uint64_t sector, const char *msg,
                        char **reply);
/* Build a device from a table without owning it (checks, status of stateless targets; the
 * daemon owns what it builds). Refuses a stale record's table. */
int ulvm_active_open_table(struct ulvm_ctx *ctx, const char *name, const char *table,
                           struct ulvm_dev **out);

/* The status of active device `name` as `dmsetup status` prints it: from ulvmd when it runs,
 * else built from its record in a scratch context (a snapshot's from its COW store). */
int ulvm_active_status(const char *name, char **status);

/* Inside ulvmd: what the recorded changes do to the daemon's own devices. */
struct ulvm_active_hooks {
	int (*create)(void *arg, const char *name, const char *table);
	int (*load)(void *arg, const char *name, const char *table);
	int (*suspend)(void *arg, const char *name, bool suspend); /* false: resume */
	int (*remove)(void *arg, const char *name);                /* -EBUSY while open */
	/* -ENODEV from remove and open_count: the daemon does not hold that device. */
	int (*open_count)(void *arg, const char *name, unsigned *count);
	/* -ENODEV: the daemon does not hold that device (the records are renamed alone) */
	int (*rename)(void *arg, const char *name, const char *new_name);
	void *arg;
};
void ulvm_active_set_hooks(const struct ulvm_active_hooks *hooks);
/* The daemon's control socket ($ULVM_RUN_DIR/ulvmd.sock) and one request to it (see
 * daemon/control.c for the verbs). -ENOTCONN when no daemon runs. */
int ulvm_control_socket_path(char *out, size_t len);
int ulvm_control_call(const char *verb, const char *name, const char *payload, char **reply);

/* New UUIDs for the VG and every PV of it (or only for PV `only`, the VG's kept), and a
 * new name unless NULL: what vgimportclone does to a copied VG so that it opens beside the
 * original (give a context holding only the copy's devices), and pvchange -u. The
 * metadata is committed, then each PV's label rewritten. */
int ulvm_vg_new_uuids(struct ulvm_vg *vg, const char *new_name, const struct ulvm_pv *only,
                      const char *description);
/* PV `pv` of `vg` is `sectors` long now (pvresize): its extents follow, refused when an
 * allocated one would be cut off. Metadata committed, then the label's size. */
int ulvm_pv_resize(struct ulvm_vg *vg, struct ulvm_pv *pv, uint64_t sectors,
                   const char *description);

/* ---- vgsplit, vgmerge ------------------------------------------------------------------- */
/* What vgsplit moves (the PVs named, or those LV `lv` uses) and, for a new VG, its
 * attributes (unset: the source's, as LVM2). */
struct ulvm_vgsplit_opts {
	const char *const *pvs;
	size_t npvs;
	const char *lv; /* -n */
	bool set_max_lv, set_max_pv, set_metadata_copies;
	uint32_t max_lv, max_pv;
	int64_t metadata_copies;
	const char *alloc; /* allocation policy; NULL: the source's */
};
/* Move PVs of VG `src` and the LVs on them into VG `dst`: a new VG, or an existing one of the
 * same extent size (*existing says which). LVM2's refusals (an LV on both sides, active LVs
 * moving, snapshots and thin pools parted from what they use, no metadata area left on a
 * side). Written as LVM2 writes it: `dst` EXPORTED, then `src`, then `dst` without the mark. */
int ulvm_vg_split(struct ulvm_ctx *ctx, const char *src, const char *dst,
                  const struct ulvm_vgsplit_opts *o, bool *existing);
/* Move every PV and LV of inactive VG `src` into VG `dst` (vgmerge), in one commit. */
int ulvm_vg_merge(struct ulvm_ctx *ctx, const char *dst, const char *src);

/* ---- pvmove ------------------------------------------------------------------------------
 * As LVM2 2.03 records a move: a hidden LV "pvmoveN" (READ, WRITE, PVMOVE, LOCKED,
 * allocation_policy "contiguous") of "mirror" segments, one per moved area (legs: the old
 * extents, then the new), which the moved LVs' areas name instead of the old PV (the LVs
 * LOCKED). Each segment is copied and committed (extents_moved) in turn; the old leg stays
 * the one read until the commit that follows its copy, so a move can be stopped at any
 * point and resumed or aborted by ulvm or LVM2. */
struct ulvm_pvmove_opts {
	const char *lv_name;          /* -n: only this LV's extents */
	enum ulvm_alloc_policy alloc; /* where the new extents go (normal, contiguous, anywhere) */
	const char *const *dests;     /* "PV[:PE ranges]" to allocate on; none: every other PV */
	size_t ndests;
	bool atomic; /* --atomic: every LV moves at once (LVM2's pvmoveN_mimage_0/1 layout) */
};
/* Start moving the extents of `source` ("PV[:PE[-PE]|PE+N...]") of `vg`: the pvmove LV set
 * up and committed (*mirr, in vg). Refused as LVM2 refuses ("No data to move for VG.", "No
 * extents available for allocation.", ...). */
int ulvm_pvmove_setup(struct ulvm_vg *vg, const char *source, const struct ulvm_pvmove_opts *o,
                      const char *description, struct ulvm_lv **mirr);
/* The pvmove LVs of `vg` in progress (PVMOVE), or that with a leg on PV `path` (NULL:
 * any): how many (at most max filled). */
size_t ulvm_pvmove_list(const struct ulvm_vg *vg, const char *path, struct ulvm_lv **out,
                        size_t max);
/* The PV a pvmove LV moves from (its first segment's old leg). */
const struct ulvm_pv *ulvm_pvmove_source(const struct ulvm_lv *mirr);
/* The same, knowing the VG: an --atomic move's source is its pvmoveN_mimage_0's. */
const struct ulvm_pv *ulvm_pvmove_source_in(const struct ulvm_vg *vg, const struct ulvm_lv *mirr);
struct ulvm_pvmove_progress {
	uint64_t done, total; /* sectors of the move copied (committed or in this run) / all */
	unsigned commits;     /* commits this run made so far */
};
typedef void (*ulvm_pvmove_progress_fn)(void *arg, const struct ulvm_pvmove_progress *p);
/* Copy what is left of move `mirr` (inactive LVs: the copy is done here, extent by extent),
 * committing after each segment, then finish it as LVM2 does (the LVs on their new extents,
 * the pvmove LV replaced by an error segment, committed; then removed, committed). */
int ulvm_pvmove_run(struct ulvm_vg *vg, struct ulvm_lv *mirr, ulvm_pvmove_progress_fn fn, void *arg,
                    const char *description);
/* pvmove --abort: segments already moved stay on their new extents, the others on the old
 * ones; the pvmove LV goes (two commits, as finishing). Online: the LVs' devices follow. */
int ulvm_pvmove_abort(struct ulvm_vg *vg, struct ulvm_lv *mirr, const char *description);
/* Online moves (an LV of the move, or the pvmove LV, is active): the copy is ulvmd's, as the
 * kernel's in LVM2: the pvmove LV's device holds a `mirror` target for the segment being
 * moved and linear ones for the others (an --atomic move: one mirror over its images'
 * devices, finished in one go once in sync), the LVs' devices stack on it. ulvm_pvmove_poll is one
 * look at it, under the VG's lock (release the lock between looks, as LVM2's polling does):
 * the devices made what the metadata says (first time, or after a stop), the progress read
 * from the mirror's status; a segment in sync is committed as moved and the next one loaded,
 * the last one finishes the move (ulvm_pvmove_run's two commits, the LVs' devices loaded
 * with their new tables between them, the pvmove LV's device removed). Returns 1 when the
 * move is finished, 0 while it goes on, or -errno (-ENOTCONN: ulvmd is not running). */
bool ulvm_pvmove_online(const struct ulvm_vg *vg, const struct ulvm_lv *mirr);
int ulvm_pvmove_poll(struct ulvm_vg *vg, struct ulvm_lv *mirr, struct ulvm_pvmove_progress *p,
                     const char *description);
/* A pvmove LV a stop between the two finishing commits left (one error extent, no PVMOVE) is
 * kept in the metadata, as LVM2 keeps it; its device, when still active under the LVs', is
 * taken out of their stack (they are loaded with their tables) and removed. */
int ulvm_pvmove_tidy(struct ulvm_vg *vg);
/* A pvmove LV's copy_percent as LVM2 computes it, in extents: *copied of *total, from its
 * active device's status (each segment running as a mirror counts its in-sync share, the
 * others their extents_moved). -ENODATA when it is not a pvmove LV or its device is not
 * active (LVM2 then prints nothing). */
int ulvm_pvmove_copied(const struct ulvm_vg *vg, const struct ulvm_lv *lv, uint64_t *copied,
                       uint64_t *total);

/* ---- event activation's online records (pvscan --cache) --------------------------------
 * LVM2's files, under ulvm's runtime directory ($ULVM_RUN_DIR): pvs_online/<PVID> says a PV
 * has been seen ("MAJOR:MINOR\nvg:NAME\ndev:PATH\n", 0:0 for an image file), vgs_online/<VG>
 * that the VG's autoactivation has been run. */
int ulvm_pv_online_set(const char *pvid, const char *vg, const char *dev);
bool ulvm_pv_online(const char *pvid);
/* 0 when made now, -EEXIST when it was there */
int ulvm_vg_online_create(const char *vg);
bool ulvm_vg_online(const char *vg);
/* Remove every online record (pvscan --cache of all devices starts afresh). */
int ulvm_online_clear(void);
/* How many PVs of `vg` have no online record (0: the VG is complete). */
size_t ulvm_vg_pvs_offline(const struct ulvm_vg *vg);
/* Does `lv` have an extent on `pv` (directly or through the LVs it stacks on)? */
bool ulvm_lv_uses_pv(const struct ulvm_vg *vg, const struct ulvm_lv *lv, const struct ulvm_pv *pv);
/* Are all the PVs `lv` has extents on online? */
bool ulvm_lv_online(const struct ulvm_vg *vg, const struct ulvm_lv *lv);

/* ---- metadata archives and backups ---------------------------------------------------- */
/* LVM2's --config for this process: its settings go over lvm.conf's wherever the library
 * reads LVM2's configuration (backup/archive, archive_dir, retain_min, retain_days, backup,
 * backup_dir; global/locking_dir). NULL: none. A text that does not parse counts as none. */
int ulvm_lvm2_config_override(const char *text);
/* LVM2's archive and backup directories: backup/archive_dir and backup/backup_dir of
 * $LVM_SYSTEM_DIR/lvm.conf (and --config), default /etc/lvm/archive and /etc/lvm/backup. */
void ulvm_backup_dirs(char *archive_dir, char *backup_dir, size_t len);
struct ulvm_backup_file {
	char *path;
	char *vg_name;
	char *description; /* "Created *before* executing '...'" */
	int64_t time;      /* creation_time */
};
/* The archives of VG `vg_name`, oldest first, then its backup: what vgcfgrestore --list
 * shows. Unreadable files are left out. */
int ulvm_vg_backups(const char *vg_name, struct ulvm_backup_file **files, size_t *n);
/* One backup or archive file, as one entry (freed with ulvm_vg_backups_free(f, 1)). */
int ulvm_backup_file_read(const char *path, struct ulvm_backup_file **file);
void ulvm_vg_backups_free(struct ulvm_backup_file *files, size_t n);

/* ---- sizes ------------------------------------------------------------------------------ */
/* Parse "12M", "1.5g", "100" (default unit `def`, LVM2 suffixes bBsSkKmMgGtTpPeE; lower
 * case = 1024-based like LVM2's lvcreate) into sectors, rounded up. */
int ulvm_parse_size(const char *s, char def_unit, uint64_t *sectors);
/* Format `sectors` as LVM2 does for unit character `unit` ('r','h','b','s','k','m','g',
 * 't','p','e'; upper case = powers of 1000): long_form "12.00 MiB" (the display commands),
 * else "12.00m" (reports); `suffix` false leaves the unit out. */
void ulvm_format_size(uint64_t sectors, char unit, bool suffix, bool long_form, char *buf,
                      size_t len);

#ifdef __cplusplus
}
#endif
#endif
