/*
 * LVM2's catalogue of report fields: the sections `-o help` shows them in, each field's
 * description and its type for selection (`-S help`). The text is LVM2's (2.03) so the help
 * reads the same; the help lists only the fields ulvm reports (`have`).
 */
#include <stdio.h>
#include <string.h>

#include "../util/util.h"
#include "cli.h"

struct lvm2_field {
	unsigned char section;
	const char *name;
	const char *desc;
	enum sel_type type; /* SEL_T_ALL: the section's "all fields" line */
};

/* clang-format off */
static const char *const lvm2_sections[] = {
    "Logical Volume Fields",
    "Logical Volume Device Info Fields",
    "Logical Volume Device Status Fields",
    "Logical Volume Device Info and Status Combined Fields",
    "Physical Volume Label Fields",
    "Physical Volume Fields",
    "Volume Group Fields",
    "Logical Volume Segment Fields",
    "Physical Volume Segment Fields",
    "Special Fields",
    "Device Types Fields",
};

/* The section of devtypes' fields, and whether the catalogue is devtypes' (that section and
 * the special fields) or every other report's (all but that section). */
#define DEVTYPE_SECTION 10
static bool devtypes_view;

void lvm2_fields_devtypes(bool on)
{
	devtypes_view = on;
}

bool lvm2_fields_devtypes_on(void)
{
	return devtypes_view;
}

static bool in_view(unsigned char section)
{
	return devtypes_view ? section == DEVTYPE_SECTION || section == 9
	                     : section != DEVTYPE_SECTION;
}

static const struct lvm2_field lvm2_fields[] = {
    {0, "lv_all", "All fields in this section.", SEL_T_ALL},
    {0, "lv_uuid", "Unique identifier.", SEL_T_STRING},
    {0, "lv_name", "Name.  LVs created for internal use are enclosed in brackets.", SEL_T_STRING},
    {0, "lv_full_name", "Full name of LV including its VG, namely VG/LV.", SEL_T_STRING},
    {0, "lv_path", "Full pathname for LV. Blank for internal LVs.", SEL_T_STRING},
    {0, "lv_dm_path", "Internal device-mapper pathname for LV (in /dev/mapper directory).", SEL_T_STRING},
    {0, "lv_parent", "For LVs that are components of another LV, the parent LV.", SEL_T_STRING},
    {0, "lv_layout", "LV layout.", SEL_T_STRLIST},
    {0, "lv_role", "LV role.", SEL_T_STRLIST},
    {0, "lv_initial_image_sync", "Set if mirror/RAID images underwent initial resynchronization.", SEL_T_NUMBER},
    {0, "lv_image_synced", "Set if mirror/RAID image is synchronized.", SEL_T_NUMBER},
    {0, "lv_merging", "Set if snapshot LV is being merged to origin.", SEL_T_NUMBER},
    {0, "lv_converting", "Set if LV is being converted.", SEL_T_NUMBER},
    {0, "lv_allocation_policy", "LV allocation policy.", SEL_T_STRING},
    {0, "lv_allocation_locked", "Set if LV is locked against allocation changes.", SEL_T_NUMBER},
    {0, "lv_fixed_minor", "Set if LV has fixed minor number assigned.", SEL_T_NUMBER},
    {0, "lv_skip_activation", "Set if LV is skipped on activation.", SEL_T_NUMBER},
    {0, "lv_autoactivation", "Set if LV autoactivation is enabled.", SEL_T_NUMBER},
    {0, "lv_when_full", "For thin pools, behavior when full.", SEL_T_STRING},
    {0, "lv_active", "Active state of the LV.", SEL_T_STRING},
    {0, "lv_active_locally", "Set if the LV is active locally.", SEL_T_NUMBER},
    {0, "lv_active_remotely", "Set if the LV is active remotely.", SEL_T_NUMBER},
    {0, "lv_active_exclusively", "Set if the LV is active exclusively.", SEL_T_NUMBER},
    {0, "lv_major", "Persistent major number or -1 if not persistent.", SEL_T_NUMBER},
    {0, "lv_minor", "Persistent minor number or -1 if not persistent.", SEL_T_NUMBER},
    {0, "lv_read_ahead", "Read ahead setting in current units.", SEL_T_SIZE},
    {0, "lv_size", "Size of LV in current units.", SEL_T_SIZE},
    {0, "lv_metadata_size", "For thin and cache pools, the size of the LV that holds the metadata.", SEL_T_SIZE},
    {0, "seg_count", "Number of segments in LV.", SEL_T_NUMBER},
    {0, "origin", "For snapshots and thins, the origin device of this LV.", SEL_T_STRING},
    {0, "origin_uuid", "For snapshots and thins, the UUID of origin device of this LV.", SEL_T_STRING},
    {0, "origin_size", "For snapshots, the size of the origin device of this LV.", SEL_T_SIZE},
    {0, "lv_ancestors", "LV ancestors ignoring any stored history of the ancestry chain.", SEL_T_STRLIST},
    {0, "lv_full_ancestors", "LV ancestors including stored history of the ancestry chain.", SEL_T_STRLIST},
    {0, "lv_descendants", "LV descendants ignoring any stored history of the ancestry chain.", SEL_T_STRLIST},
    {0, "lv_full_descendants", "LV descendants including stored history of the ancestry chain.", SEL_T_STRLIST},
    {0, "raid_mismatch_count", "For RAID, number of mismatches found or repaired.", SEL_T_NUMBER},
    {0, "raid_sync_action", "For RAID, the current synchronization action being performed.", SEL_T_STRING},
    {0, "raid_write_behind", "For RAID1, the number of outstanding writes allowed to writemostly devices.", SEL_T_NUMBER},
    {0, "raid_min_recovery_rate", "For RAID1, the minimum recovery I/O load in kiB/sec/disk.", SEL_T_NUMBER},
    {0, "raid_max_recovery_rate", "For RAID1, the maximum recovery I/O load in kiB/sec/disk.", SEL_T_NUMBER},
    {0, "raidintegritymode", "The integrity mode", SEL_T_STRING},
    {0, "raidintegrityblocksize", "The integrity block size", SEL_T_NUMBER},
    {0, "integritymismatches", "The number of integrity mismatches.", SEL_T_NUMBER},
    {0, "move_pv", "For pvmove, Source PV of temporary LV created by pvmove.", SEL_T_STRING},
    {0, "move_pv_uuid", "For pvmove, the UUID of Source PV of temporary LV created by pvmove.", SEL_T_STRING},
    {0, "convert_lv", "For lvconvert, Name of temporary LV created by lvconvert.", SEL_T_STRING},
    {0, "convert_lv_uuid", "For lvconvert, UUID of temporary LV created by lvconvert.", SEL_T_STRING},
    {0, "mirror_log", "For mirrors, the LV holding the synchronisation log.", SEL_T_STRING},
    {0, "mirror_log_uuid", "For mirrors, the UUID of the LV holding the synchronisation log.", SEL_T_STRING},
    {0, "data_lv", "For cache/thin/vdo pools, the LV holding the associated data.", SEL_T_STRING},
    {0, "data_lv_uuid", "For cache/thin/vdo pools, the UUID of the LV holding the associated data.", SEL_T_STRING},
    {0, "metadata_lv", "For cache/thin pools, the LV holding the associated metadata.", SEL_T_STRING},
    {0, "metadata_lv_uuid", "For cache/thin pools, the UUID of the LV holding the associated metadata.", SEL_T_STRING},
    {0, "pool_lv", "For cache/thin/vdo volumes, the cache/thin/vdo pool LV for this volume.", SEL_T_STRING},
    {0, "pool_lv_uuid", "For cache/thin/vdo volumes, the UUID of the cache/thin/vdo pool LV for this volume.", SEL_T_STRING},
    {0, "lv_tags", "Tags, if any.", SEL_T_STRLIST},
    {0, "lv_profile", "Configuration profile attached to this LV.", SEL_T_STRING},
    {0, "lv_lockargs", "Lock args of the LV used by lvmlockd.", SEL_T_STRING},
    {0, "lv_time", "Creation time of the LV, if known", SEL_T_TIME},
    {0, "lv_time_removed", "Removal time of the LV, if known", SEL_T_TIME},
    {0, "lv_host", "Creation host of the LV, if known.", SEL_T_STRING},
    {0, "lv_modules", "Kernel device-mapper modules required for this LV.", SEL_T_STRLIST},
    {0, "lv_historical", "Set if the LV is historical.", SEL_T_NUMBER},
    {0, "writecache_block_size", "The writecache block size", SEL_T_NUMBER},
    {1, "lv_all", "All fields in this section.", SEL_T_ALL},
    {1, "lv_kernel_major", "Currently assigned major number or -1 if LV is not active.", SEL_T_NUMBER},
    {1, "lv_kernel_minor", "Currently assigned minor number or -1 if LV is not active.", SEL_T_NUMBER},
    {1, "lv_kernel_read_ahead", "Currently-in-use read ahead setting in current units.", SEL_T_SIZE},
    {1, "lv_permissions", "LV permissions.", SEL_T_STRING},
    {1, "lv_suspended", "Set if LV is suspended.", SEL_T_NUMBER},
    {1, "lv_live_table", "Set if LV has live table present.", SEL_T_NUMBER},
    {1, "lv_inactive_table", "Set if LV has inactive table present.", SEL_T_NUMBER},
    {1, "lv_device_open", "Set if LV device is open.", SEL_T_NUMBER},
    {2, "lv_all", "All fields in this section.", SEL_T_ALL},
    {2, "data_percent", "For snapshot, cache and thin pools and volumes, the percentage full if LV is active.", SEL_T_PERCENT},
    {2, "snap_percent", "For snapshots, the percentage full if LV is active.", SEL_T_PERCENT},
    {2, "metadata_percent", "For cache and thin pools, the percentage of metadata full if LV is active.", SEL_T_PERCENT},
    {2, "copy_percent", "For Cache, RAID, mirrors and pvmove, current percentage in-sync.", SEL_T_PERCENT},
    {2, "sync_percent", "For Cache, RAID, mirrors and pvmove, current percentage in-sync.", SEL_T_PERCENT},
    {2, "cache_total_blocks", "Total cache blocks.", SEL_T_NUMBER},
    {2, "cache_used_blocks", "Used cache blocks.", SEL_T_NUMBER},
    {2, "cache_dirty_blocks", "Dirty cache blocks.", SEL_T_NUMBER},
    {2, "cache_read_hits", "Cache read hits.", SEL_T_NUMBER},
    {2, "cache_read_misses", "Cache read misses.", SEL_T_NUMBER},
    {2, "cache_write_hits", "Cache write hits.", SEL_T_NUMBER},
    {2, "cache_write_misses", "Cache write misses.", SEL_T_NUMBER},
    {2, "kernel_cache_settings", "Cache settings/parameters as set in kernel, including default values (cached segments only).", SEL_T_STRLIST},
    {2, "kernel_cache_policy", "Cache policy used in kernel.", SEL_T_STRING},
    {2, "kernel_metadata_format", "Cache metadata format used in kernel.", SEL_T_NUMBER},
    {2, "lv_health_status", "LV health status.", SEL_T_STRING},
    {2, "kernel_discards", "For thin pools, how discards are handled in kernel.", SEL_T_STRING},
    {2, "lv_check_needed", "For thin pools and cache volumes, whether metadata check is needed.", SEL_T_NUMBER},
    {2, "lv_merge_failed", "Set if snapshot merge failed.", SEL_T_NUMBER},
    {2, "lv_snapshot_invalid", "Set if snapshot LV is invalid.", SEL_T_NUMBER},
    {2, "vdo_operating_mode", "For vdo pools, its current operating mode.", SEL_T_STRING},
    {2, "vdo_compression_state", "For vdo pools, whether compression is running.", SEL_T_STRING},
    {2, "vdo_index_state", "For vdo pools, state of index for deduplication.", SEL_T_STRING},
    {2, "vdo_used_size", "For vdo pools, currently used space.", SEL_T_NUMBER},
    {2, "vdo_saving_percent", "For vdo pools, percentage of saved space.", SEL_T_NUMBER},
    {2, "writecache_total_blocks", "Total writecache blocks.", SEL_T_NUMBER},
    {2, "writecache_free_blocks", "Total writecache free blocks.", SEL_T_NUMBER},
    {2, "writecache_writeback_blocks", "Total writecache writeback blocks.", SEL_T_NUMBER},
    {2, "writecache_error", "Total writecache errors.", SEL_T_NUMBER},
    {3, "lv_all", "All fields in this section.", SEL_T_ALL},
    {3, "lv_attr", "Various attributes - see man page.", SEL_T_STRING},
    {4, "pv_all", "All fields in this section.", SEL_T_ALL},
    {4, "pv_fmt", "Type of metadata.", SEL_T_STRING},
    {4, "pv_uuid", "Unique identifier.", SEL_T_STRING},
    {4, "dev_size", "Size of underlying device in current units.", SEL_T_SIZE},
    {4, "pv_name", "Name.", SEL_T_STRING},
    {4, "pv_major", "Device major number.", SEL_T_STRING},
    {4, "pv_minor", "Device minor number.", SEL_T_STRING},
    {4, "pv_mda_free", "Free metadata area space on this device in current units.", SEL_T_SIZE},
    {4, "pv_mda_size", "Size of smallest metadata area on this device in current units.", SEL_T_SIZE},
    {4, "pv_ext_vsn", "PV header extension version.", SEL_T_NUMBER},
    {5, "pv_all", "All fields in this section.", SEL_T_ALL},
    {5, "pe_start", "Offset to the start of data on the underlying device.", SEL_T_NUMBER},
    {5, "pv_size", "Size of PV in current units.", SEL_T_SIZE},
    {5, "pv_free", "Total amount of unallocated space in current units.", SEL_T_SIZE},
    {5, "pv_used", "Total amount of allocated space in current units.", SEL_T_SIZE},
    {5, "pv_attr", "Various attributes - see man page.", SEL_T_STRING},
    {5, "pv_allocatable", "Set if this device can be used for allocation.", SEL_T_NUMBER},
    {5, "pv_exported", "Set if this device is exported.", SEL_T_NUMBER},
    {5, "pv_missing", "Set if this device is missing in system.", SEL_T_NUMBER},
    {5, "pv_pe_count", "Total number of Physical Extents.", SEL_T_NUMBER},
    {5, "pv_pe_alloc_count", "Total number of allocated Physical Extents.", SEL_T_NUMBER},
    {5, "pv_tags", "Tags, if any.", SEL_T_STRLIST},
    {5, "pv_mda_count", "Number of metadata areas on this device.", SEL_T_NUMBER},
    {5, "pv_mda_used_count", "Number of metadata areas in use on this device.", SEL_T_NUMBER},
    {5, "pv_ba_start", "Offset to the start of PV Bootloader Area on the underlying device in current units.", SEL_T_SIZE},
    {5, "pv_ba_size", "Size of PV Bootloader Area in current units.", SEL_T_SIZE},
    {5, "pv_in_use", "Set if PV is used.", SEL_T_NUMBER},
    {5, "pv_duplicate", "Set if PV is an unchosen duplicate.", SEL_T_NUMBER},
    {5, "pv_device_id", "Device ID such as the WWID.", SEL_T_STRING},
    {5, "pv_device_id_type", "Type of device ID such as WWID.", SEL_T_STRING},
    {6, "vg_all", "All fields in this section.", SEL_T_ALL},
    {6, "vg_fmt", "Type of metadata.", SEL_T_STRING},
    {6, "vg_uuid", "Unique identifier.", SEL_T_STRING},
    {6, "vg_name", "Name.", SEL_T_STRING},
    {6, "vg_attr", "Various attributes - see man page.", SEL_T_STRING},
    {6, "vg_permissions", "VG permissions.", SEL_T_STRING},
    {6, "vg_extendable", "Set if VG is extendable.", SEL_T_NUMBER},
    {6, "vg_exported", "Set if VG is exported.", SEL_T_NUMBER},
    {6, "vg_autoactivation", "Set if VG autoactivation is enabled.", SEL_T_NUMBER},
    {6, "vg_partial", "Set if VG is partial.", SEL_T_NUMBER},
    {6, "vg_allocation_policy", "VG allocation policy.", SEL_T_STRING},
    {6, "vg_clustered", "Set if VG is clustered.", SEL_T_NUMBER},
    {6, "vg_shared", "Set if VG is shared.", SEL_T_NUMBER},
    {6, "vg_size", "Total size of VG in current units.", SEL_T_SIZE},
    {6, "vg_free", "Total amount of free space in current units.", SEL_T_SIZE},
    {6, "vg_sysid", "System ID of the VG indicating which host owns it.", SEL_T_STRING},
    {6, "vg_systemid", "System ID of the VG indicating which host owns it.", SEL_T_STRING},
    {6, "vg_lock_type", "Lock type of the VG used by lvmlockd.", SEL_T_STRING},
    {6, "vg_lock_args", "Lock args of the VG used by lvmlockd.", SEL_T_STRING},
    {6, "vg_extent_size", "Size of Physical Extents in current units.", SEL_T_SIZE},
    {6, "vg_extent_count", "Total number of Physical Extents.", SEL_T_NUMBER},
    {6, "vg_free_count", "Total number of unallocated Physical Extents.", SEL_T_NUMBER},
    {6, "max_lv", "Maximum number of LVs allowed in VG or 0 if unlimited.", SEL_T_NUMBER},
    {6, "max_pv", "Maximum number of PVs allowed in VG or 0 if unlimited.", SEL_T_NUMBER},
    {6, "pv_count", "Number of PVs in VG.", SEL_T_NUMBER},
    {6, "vg_missing_pv_count", "Number of PVs in VG which are missing.", SEL_T_NUMBER},
    {6, "lv_count", "Number of LVs.", SEL_T_NUMBER},
    {6, "snap_count", "Number of snapshots.", SEL_T_NUMBER},
    {6, "vg_seqno", "Revision number of internal metadata.  Incremented whenever it changes.", SEL_T_NUMBER},
    {6, "vg_tags", "Tags, if any.", SEL_T_STRLIST},
    {6, "vg_profile", "Configuration profile attached to this VG.", SEL_T_STRING},
    {6, "vg_mda_count", "Number of metadata areas on this VG.", SEL_T_NUMBER},
    {6, "vg_mda_used_count", "Number of metadata areas in use on this VG.", SEL_T_NUMBER},
    {6, "vg_mda_free", "Free metadata area space for this VG in current units.", SEL_T_SIZE},
    {6, "vg_mda_size", "Size of smallest metadata area for this VG in current units.", SEL_T_SIZE},
    {6, "vg_mda_copies", "Target number of in use metadata areas in the VG.", SEL_T_NUMBER},
    {7, "seg_all", "All fields in this section.", SEL_T_ALL},
    {7, "segtype", "Type of LV segment.", SEL_T_STRING},
    {7, "stripes", "Number of stripes or mirror/raid1 legs.", SEL_T_NUMBER},
    {7, "data_stripes", "Number of data stripes or mirror/raid1 legs.", SEL_T_NUMBER},
    {7, "reshape_len", "Size of out-of-place reshape space in current units.", SEL_T_SIZE},
    {7, "reshape_len_le", "Size of out-of-place reshape space in logical extents.", SEL_T_NUMBER},
    {7, "data_copies", "Number of data copies.", SEL_T_NUMBER},
    {7, "data_offset", "Data offset on each image device.", SEL_T_NUMBER},
    {7, "new_data_offset", "New data offset after any reshape on each image device.", SEL_T_NUMBER},
    {7, "parity_chunks", "Number of (rotating) parity chunks.", SEL_T_NUMBER},
    {7, "stripe_size", "For stripes, amount of data placed on one device before switching to the next.", SEL_T_SIZE},
    {7, "region_size", "For mirrors/raids, the unit of data per leg when synchronizing devices.", SEL_T_SIZE},
    {7, "chunk_size", "For snapshots, the unit of data used when tracking changes.", SEL_T_SIZE},
    {7, "thin_count", "For thin pools, the number of thin volumes in this pool.", SEL_T_NUMBER},
    {7, "discards", "For thin pools, how discards are handled.", SEL_T_STRING},
    {7, "cache_metadata_format", "For cache, metadata format in use.", SEL_T_NUMBER},
    {7, "cache_mode", "For cache, how writes are cached.", SEL_T_STRING},
    {7, "zero", "For thin pools and volumes, if zeroing is enabled.", SEL_T_NUMBER},
    {7, "transaction_id", "For thin pools, the transaction id and creation transaction id for thins.", SEL_T_NUMBER},
    {7, "thin_id", "For thin volume, the thin device id.", SEL_T_NUMBER},
    {7, "seg_start", "Offset within the LV to the start of the segment in current units.", SEL_T_SIZE},
    {7, "seg_start_pe", "Offset within the LV to the start of the segment in physical extents.", SEL_T_NUMBER},
    {7, "seg_size", "Size of segment in current units.", SEL_T_SIZE},
    {7, "seg_size_pe", "Size of segment in physical extents.", SEL_T_SIZE},
    {7, "seg_tags", "Tags, if any.", SEL_T_STRLIST},
    {7, "seg_pe_ranges", "Ranges of Physical Extents of underlying devices in command line format (deprecated, use seg_le_ranges for common format).", SEL_T_STRLIST},
    {7, "seg_le_ranges", "Ranges of Logical Extents of underlying devices in command line format.", SEL_T_STRLIST},
    {7, "seg_metadata_le_ranges", "Ranges of Logical Extents of underlying metadata devices in command line format.", SEL_T_STRLIST},
    {7, "devices", "Underlying devices used with starting extent numbers.", SEL_T_STRLIST},
    {7, "metadata_devices", "Underlying metadata devices used with starting extent numbers.", SEL_T_STRLIST},
    {7, "seg_monitor", "Dmeventd monitoring status of the segment.", SEL_T_STRING},
    {7, "cache_policy", "The cache policy (cached segments only).", SEL_T_STRING},
    {7, "cache_settings", "Cache settings/parameters (cached segments only).", SEL_T_STRLIST},
    {7, "vdo_compression", "Set for compressed LV (vdopool).", SEL_T_NUMBER},
    {7, "vdo_deduplication", "Set for deduplicated LV (vdopool).", SEL_T_NUMBER},
    {7, "vdo_use_metadata_hints", "Use REQ_SYNC for writes (vdopool).", SEL_T_NUMBER},
    {7, "vdo_minimum_io_size", "Minimum acceptable IO size (vdopool).", SEL_T_NUMBER},
    {7, "vdo_block_map_cache_size", "Allocated caching size (vdopool).", SEL_T_SIZE},
    {7, "vdo_block_map_era_length", "Speed of cache writes (vdopool).", SEL_T_NUMBER},
    {7, "vdo_use_sparse_index", "Sparse indexing (vdopool).", SEL_T_NUMBER},
    {7, "vdo_index_memory_size", "Allocated indexing memory (vdopool).", SEL_T_SIZE},
    {7, "vdo_slab_size", "Increment size for growing (vdopool).", SEL_T_SIZE},
    {7, "vdo_ack_threads", "Acknowledging threads (vdopool).", SEL_T_NUMBER},
    {7, "vdo_bio_threads", "IO submitting threads (vdopool).", SEL_T_NUMBER},
    {7, "vdo_bio_rotation", "IO enqueue (vdopool).", SEL_T_NUMBER},
    {7, "vdo_cpu_threads", "CPU threads for compression and hashing (vdopool).", SEL_T_NUMBER},
    {7, "vdo_hash_zone_threads", "Threads for subdivide parts (vdopool).", SEL_T_NUMBER},
    {7, "vdo_logical_threads", "Logical threads for subdivide parts (vdopool).", SEL_T_NUMBER},
    {7, "vdo_physical_threads", "Physical threads for subdivide parts (vdopool).", SEL_T_NUMBER},
    {7, "vdo_max_discard", "Maximum discard size volume can recieve (vdopool).", SEL_T_NUMBER},
    {7, "vdo_write_policy", "Specified write policy (vdopool).", SEL_T_STRING},
    {7, "vdo_header_size", "Header size at front of vdopool.", SEL_T_SIZE},
    {8, "pvseg_all", "All fields in this section.", SEL_T_ALL},
    {8, "pvseg_start", "Physical Extent number of start of segment.", SEL_T_NUMBER},
    {8, "pvseg_size", "Number of extents in segment.", SEL_T_NUMBER},
    {10, "devtype_all", "All fields in this section.", SEL_T_ALL},
    {10, "devtype_name", "Name of Device Type exactly as it appears in /proc/devices.", SEL_T_STRING},
    {10, "devtype_max_partitions", "Maximum number of partitions. (How many device minor numbers get reserved for each device.)", SEL_T_NUMBER},
    {10, "devtype_description", "Description of Device Type.", SEL_T_STRING},
    {9, "selected", "Set if item passes selection criteria.", SEL_T_NUMBER},
    {9, "help", "Show help.", SEL_T_NONE},
    {9, "?", "Show help.", SEL_T_NONE},
};
/* clang-format on */

#define NFIELDS (sizeof(lvm2_fields) / sizeof(lvm2_fields[0]))

bool lvm2_field_type(const char *name, enum sel_type *type)
{
	for (size_t i = 0; i < NFIELDS; i++)
		if (lvm2_fields[i].type != SEL_T_ALL && in_view(lvm2_fields[i].section) &&
		    !strcmp(lvm2_fields[i].name, name)) {
			*type = lvm2_fields[i].type;
			return true;
		}
	return false;
}

void lvm2_fields_help(FILE *f, bool types, bool (*have)(const char *field))
{
	int width = 0, section = -1;

	/* LVM2 aligns the descriptions after its longest field name */
	for (size_t i = 0; i < NFIELDS; i++)
		if (in_view(lvm2_fields[i].section) && (int)strlen(lvm2_fields[i].name) > width)
			width = (int)strlen(lvm2_fields[i].name);
	for (size_t i = 0; i < NFIELDS; i++) {
		const struct lvm2_field *fl = &lvm2_fields[i];
		bool special = !strcmp(lvm2_sections[fl->section], "Special Fields");

		if (!in_view(fl->section))
			continue;
		if (fl->section != section) {
			size_t n = strlen(lvm2_sections[fl->section]);
			if (section >= 0)
				fputs("   \n", f);
			section = fl->section;
			fprintf(f, "  %s\n  ", lvm2_sections[section]);
			while (n--)
				fputc('-', f);
			fputc('\n', f);
		}
		if (fl->type == SEL_T_ALL) {
			if (!types)
				fprintf(f, "    %-*s - %s\n", width, fl->name, fl->desc);
			continue;
		}
		if (have && !special && !have(fl->name))
			continue;
		if (types)
			fprintf(f, "    %-*s - %s [%s]\n", width, fl->name, fl->desc,
			        selection_type_name(fl->type));
		else
			fprintf(f, "    %-*s - %s\n", width, fl->name, fl->desc);
	}
}

void lvm2_section_fields(const char *all, void (*fn)(const char *name, void *arg), void *arg)
{
	bool in[sizeof(lvm2_sections) / sizeof(lvm2_sections[0])] = {0};

	for (size_t i = 0; i < NFIELDS; i++)
		if (lvm2_fields[i].type == SEL_T_ALL && in_view(lvm2_fields[i].section) &&
		    !strcmp(lvm2_fields[i].name, all))
			in[lvm2_fields[i].section] = true;
	for (size_t i = 0; i < NFIELDS; i++)
		if (in[lvm2_fields[i].section] && lvm2_fields[i].type != SEL_T_ALL)
			fn(lvm2_fields[i].name, arg);
}

/*
 * A segment's areas as LVM2 2.03 formats them. An area on an LV names the whole LV -- from
 * extent 0 to the LV's last, whatever part of it the segment maps -- so every segment of an
 * LV LOCKED on pvmove0 reads "pvmove0(0)" and "pvmove0:0-41" (pvmove0's extents), as LVM2
 * prints them; seg_le_ranges also brackets a hidden LV ("[pvmove0]:0-41").
 */
void cli_seg_areas(struct strbuf *o, struct ulvm_vg *vg, const struct ulvm_seg *s,
                   enum cli_area_form form, bool *first)
{
	uint32_t len = ulvm_seg_area_len(s);

	for (uint32_t i = 0; i < s->area_count; i++) {
		const struct ulvm_area *a = &s->areas[i];
		uint32_t start = a->pe, n = len;
		bool hidden = false;

		if (!*first)
			sb_putc(o, form == CLI_AREA_PE_RANGES ? ' ' : ',');
		*first = false;
		if (a->type == ULVM_AREA_LV) {
			struct ulvm_lv *sub = ulvm_lv_find(vg, a->lv_name);
			start = 0;
			n = sub ? sub->le_count : len;
			hidden = form == CLI_AREA_LE_RANGES && sub && !ulvm_lv_visible(sub);
			sb_printf(o, hidden ? "[%s]" : "%s", a->lv_name);
		} else {
			sb_puts(o, a->pv->device ? a->pv->device : "[unknown]");
		}
		if (form == CLI_AREA_DEVICES)
			sb_printf(o, "(%u)", start);
		else
			sb_printf(o, ":%u-%u", start, start + n - 1);
	}
}
