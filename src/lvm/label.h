/*
 * lvm/label: the PV label (LABELONE sector within the first four sectors), its pv_header
 * with data and metadata area lists, and the pv_header_extension. Decodes and encodes the
 * on-disk bytes; reads and writes them through io/bdev. Uses util and io.
 * Format: docs/formats/lvm2-label.md.
 */
#ifndef ULVM_LVM_LABEL_H
#define ULVM_LVM_LABEL_H

#include <stdint.h>

#include "../io/bdev.h"
#include "../util/util.h"

#define LABEL_SCAN_SECTORS 4
#define LABEL_SCAN_SIZE    (LABEL_SCAN_SECTORS * SECTOR_SIZE)
#define LABEL_MAX_AREAS    8 /* per list; far more than fit LVM2's use (1 data, 2 metadata) */

struct disk_locn {
	uint64_t offset; /* bytes from the start of the device */
	uint64_t size;   /* bytes; 0 for the data area (LVM2 records no length) */
};

struct pv_label {
	unsigned sector; /* where the label was found (LVM2 writes sector 1) */
	char pv_uuid[UUID_LEN + 1];
	uint64_t device_size; /* bytes, as recorded */
	struct disk_locn data_areas[LABEL_MAX_AREAS];
	unsigned n_data_areas;
	struct disk_locn mdas[LABEL_MAX_AREAS];
	unsigned n_mdas;
	uint32_t ext_version; /* 0 when there is no extension */
	uint32_t ext_flags;   /* PV_EXT_USED */
	struct disk_locn bootloader_areas[LABEL_MAX_AREAS];
	unsigned n_bootloader_areas;
};

#define PV_EXT_USED 0x1u

/*
 * Decode the label from the first LABEL_SCAN_SIZE bytes of a device. `devname` is used in
 * messages. Returns 0 when a valid label was found; -ENOENT when there is no LVM2 label at
 * all (not a PV: no message set); -EINVAL when a LABELONE sector was found but is corrupt
 * (bad checksum, wrong sector number, lists overrunning the sector, bad UUID): the message
 * names the device, the sector and the problem.
 */
int label_decode(const uint8_t *buf, size_t len, const char *devname, struct pv_label *out);

/* Encode into one 512-byte sector for sector `l->sector`, with checksum. -EINVAL if the
 * lists do not fit in the sector. */
int label_encode(const struct pv_label *l, uint8_t sector[SECTOR_SIZE]);

int label_read(struct bdev *bd, struct pv_label *out);
/* Write the label in sector l->sector, zeroing any other label-looking sector in 0..3
 * (as LVM2 does), then flush. */
int label_write(struct bdev *bd, const struct pv_label *l);
/* Wipe every LABELONE sector in 0..3 (pvremove), then flush. */
int label_wipe(struct bdev *bd);

#endif
