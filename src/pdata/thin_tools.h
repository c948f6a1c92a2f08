/*
 * pdata/thin_tools: the offline tools on dm-thin pool metadata, as library functions the
 * `ulvm thin_*` commands call: a checker, the XML dump and restore of thin-provisioning-tools,
 * and the per-device usage report (thin_ls).
 *
 * The checker reads every block reachable from the superblock (and from the metadata
 * snapshot) and recomputes what the space maps must say. Beyond what thin_check 0.9.0 checks
 * (checksums, node structure, key order, node fill, metadata reference counts), it checks
 * the superblock's magic, block number, version and sizes, the data space map's counts,
 * nr_allocated and the index hints of both space maps, mappings past the end of the data
 * device, mapping and device times, each device's mapped_blocks against its mappings, and
 * that the details and mapping trees hold the same devices. Each finding is one line naming
 * the block or device and the problem. Fatal findings are damage; non-fatal ones are leaks
 * (a count higher than the references found). Stale allocation hints (an index entry's
 * nr_free or none_free_before, a space map's nr_allocated), which the kernel tolerates and
 * thin_restore 0.9.0 writes, are warnings: a line each, but the check still passes.
 *
 * Who may call what: the CLI and tests. Uses thin_metadata and the pdata layers read-only
 * (thin_restore writes through thin_metadata).
 */
#ifndef ULVM_PDATA_THIN_TOOLS_H
#define ULVM_PDATA_THIN_TOOLS_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "io/bdev.h"

struct thin_check_opts {
	bool skip_mappings;
	bool super_block_only;
	bool metadata_snap; /* check the metadata snapshot's trees instead */
	bool quiet;         /* no progress lines (findings still go to report) */
	/* --override-mapping-root: check the mapping tree at this block instead of the
	 * superblock's (the space maps are then compared with what it references). */
	bool override_mapping_root;
	uint64_t mapping_root;
	size_t cache_bytes;
	/* Each finding, one line without newline; NULL: printed to stdout. */
	void (*report)(void *arg, bool fatal, const char *line);
	void *arg;
};

struct thin_check_result {
	unsigned fatal, non_fatal;
	unsigned warnings; /* tolerated discrepancies: reported, not failures */
	bool needs_check;  /* the superblock's flag */
};

/* 0 when the check ran (see the result), or a negative errno if it could not run at all. */
int thin_check_metadata(struct bdev *bd, const struct thin_check_opts *o,
                        struct thin_check_result *res);

struct thin_dump_opts {
	bool metadata_snap;
	uint64_t
	    snap_block; /* with metadata_snap: this block instead of held_root (0: held_root) */
	bool skip_mappings;
	bool repair;         /* skip unreadable subtrees and devices without details, and go on */
	bool human_readable; /* --format human_readable instead of XML */
	/* --dev-id: only these devices (n_dev_ids 0: every device) */
	const uint64_t *dev_ids;
	size_t n_dev_ids;
	size_t cache_bytes;
};
/* The XML thin_dump 0.9.0 prints (or its human-readable form: the same content, one line
 * per field and mapping). With repair, what can still be read (each skipped block is named
 * on stderr). */
int thin_dump_xml(struct bdev *bd, const struct thin_dump_opts *o, FILE *out);

/* Build metadata on bd from thin_dump XML. A <superblock> without a version attribute
 * writes version 1, as thin_restore 0.9.0 does. */
int thin_restore_xml(const char *xml, size_t len, struct bdev *bd);
/* thin_restore's overrides of the XML's superblock values. */
struct thin_restore_opts {
	bool set_trans_id, set_data_block_size, set_nr_data_blocks;
	uint64_t trans_id;
	uint32_t data_block_size;
	uint64_t nr_data_blocks;
};
int thin_restore_xml_opts(const char *xml, size_t len, struct bdev *bd,
                          const struct thin_restore_opts *o);

enum thin_ls_field {
	LS_DEV,
	LS_MAPPED_BLOCKS,
	LS_EXCLUSIVE_BLOCKS,
	LS_SHARED_BLOCKS,
	LS_MAPPED_SECTORS,
	LS_EXCLUSIVE_SECTORS,
	LS_SHARED_SECTORS,
	LS_MAPPED_BYTES,
	LS_EXCLUSIVE_BYTES,
	LS_SHARED_BYTES,
	LS_MAPPED,
	LS_EXCLUSIVE,
	LS_SHARED,
	LS_TRANSACTION,
	LS_CREATE_TIME,
	LS_SNAP_TIME,
	LS_HIGHEST_BLOCK,
	LS_NR_FIELDS
};
int thin_ls_field_by_name(const char *name);
int thin_ls(struct bdev *bd, bool metadata_snap, const int *fields, int nfields, bool headers,
            FILE *out);

#endif
