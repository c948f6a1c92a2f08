/*
 * The PV label: one 512-byte LABELONE sector within the first four sectors of a device.
 *
 * Layout (little-endian; docs/formats/lvm2-label.md):
 *
 *   label_header   0  id "LABELONE"        8  sector_xl (where this label sits)
 *                 16  crc_xl (bytes 20..511) 20  offset_xl (pv_header offset, 32)
 *                 24  type "LVM2 001"
 *   pv_header     32  pv_uuid[32] (no hyphens)  64  device_size_xl
 *                 72  disk_locn[]: data areas, {0,0}, metadata areas, {0,0}
 *   extension         version (2), flags (PV_EXT_USED), disk_locn[] bootloader areas, {0,0}
 *
 * A list ends at the first entry whose offset is 0; everything after the last terminator is
 * zero. LVM2 writes the label in sector 1; readers take the first valid one in 0..3.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "label.h"

#define LABEL_ID      "LABELONE"
#define LABEL_TYPE    "LVM2 001"
#define LABEL_HDR_LEN 32u /* where LVM2 puts the pv_header (offset_xl) */
#define CRC_FROM      20u /* the checksum covers offset_xl to the end of the sector */
#define PV_EXT_VSN    2u

struct label_header_disk {
	char id[8];
	le64 sector_xl;
	le32 crc_xl;
	le32 offset_xl;
	char type[8];
} __attribute__((packed));

struct disk_locn_disk {
	le64 offset;
	le64 size;
} __attribute__((packed));

struct pv_header_disk {
	char pv_uuid[UUID_LEN];
	le64 device_size_xl;
} __attribute__((packed));

struct pv_header_ext_disk {
	le32 version;
	le32 flags;
} __attribute__((packed));

_Static_assert(sizeof(struct label_header_disk) == LABEL_HDR_LEN, "label_header is 32 bytes");
_Static_assert(sizeof(struct disk_locn_disk) == 16, "disk_locn is 16 bytes");
_Static_assert(sizeof(struct pv_header_disk) == 40, "pv_header prefix is 40 bytes");

static bool uuid_char_ok(char c)
{
	return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
	       c == '!' || c == '#';
}

static bool looks_like_label(const uint8_t *sector)
{
	return memcmp(sector, LABEL_ID, 8) == 0;
}

/* Printable rendering of an 8-byte on-disk tag for messages (the bytes may be anything). */
static void tag_str(const char tag[8], char out[33])
{
	size_t o = 0;

	for (int i = 0; i < 8; i++) {
		unsigned char c = (unsigned char)tag[i];
		if (c >= 0x20 && c < 0x7f && c != '\\')
			out[o++] = (char)c;
		else
			o += (size_t)snprintf(out + o, 5, "\\x%02x", c);
	}
	out[o] = '\0';
}

/* Decode one zero-terminated disk_locn list starting at *pos; advances past the
 * terminator. False with the problem in `why` when it is malformed. */
static bool read_list(const uint8_t *sec, size_t *pos, struct disk_locn *out, unsigned *n,
                      const char *name, char *why, size_t whylen)
{
	*n = 0;
	for (;;) {
		struct disk_locn_disk d;

		if (*pos + sizeof(d) > SECTOR_SIZE) {
			snprintf(why, whylen, "%s list is not terminated inside the sector", name);
			return false;
		}
		memcpy(&d, sec + *pos, sizeof(d));
		*pos += sizeof(d);
		if (!le64_to_cpu(d.offset))
			return true;
		if (*n == LABEL_MAX_AREAS) {
			snprintf(why, whylen, "more than %u entries in the %s list",
			         LABEL_MAX_AREAS, name);
			return false;
		}
		out[*n].offset = le64_to_cpu(d.offset);
		out[*n].size = le64_to_cpu(d.size);
		(*n)++;
	}
}

/* Validate and decode the sector at position `s`. Returns 0, -ENOENT (no LABELONE), or
 * -EINVAL with the problem in `why`. A LABELONE sector of another type is -EINVAL rather
 * than "not a PV": something owns this device, and pvcreate must not silently take it. */
static int decode_sector(const uint8_t *sec, unsigned s, struct pv_label *out, char *why,
                         size_t whylen)
{
	struct label_header_disk lh;
	struct pv_header_disk ph;
	struct pv_header_ext_disk ext;
	uint32_t stored, computed, off;
	uint64_t sector_xl;
	size_t pos;
	char tag[33];

	memcpy(&lh, sec, sizeof(lh));
	if (memcmp(lh.id, LABEL_ID, 8) != 0)
		return -ENOENT;
	sector_xl = le64_to_cpu(lh.sector_xl);
	if (sector_xl != s) {
		/* A copied sector: LVM2 ignores it too ("Label for sector N found at M"). */
		snprintf(why, whylen, "records sector %llu", (unsigned long long)sector_xl);
		return -EINVAL;
	}
	stored = le32_to_cpu(lh.crc_xl);
	computed = lvm_crc(LVM_INITIAL_CRC, sec + CRC_FROM, SECTOR_SIZE - CRC_FROM);
	if (stored != computed) {
		snprintf(why, whylen, "checksum mismatch (stored 0x%08x, computed 0x%08x)", stored,
		         computed);
		return -EINVAL;
	}
	if (memcmp(lh.type, LABEL_TYPE, 8) != 0) {
		tag_str(lh.type, tag);
		snprintf(why, whylen, "unsupported label type \"%s\" (expected \"%s\")", tag,
		         LABEL_TYPE);
		return -EINVAL;
	}
	off = le32_to_cpu(lh.offset_xl);
	if (off < LABEL_HDR_LEN || off > SECTOR_SIZE - sizeof(ph)) {
		snprintf(why, whylen, "pv_header offset %u is out of range", off);
		return -EINVAL;
	}

	memset(out, 0, sizeof(*out));
	out->sector = s;
	memcpy(&ph, sec + off, sizeof(ph));
	for (int i = 0; i < UUID_LEN; i++) {
		if (!uuid_char_ok(ph.pv_uuid[i])) {
			snprintf(why, whylen, "invalid character 0x%02x in the PV UUID",
			         (unsigned char)ph.pv_uuid[i]);
			return -EINVAL;
		}
	}
	memcpy(out->pv_uuid, ph.pv_uuid, UUID_LEN);
	out->pv_uuid[UUID_LEN] = '\0';
	out->device_size = le64_to_cpu(ph.device_size_xl);

	pos = off + sizeof(ph);
	if (!read_list(sec, &pos, out->data_areas, &out->n_data_areas, "data area", why, whylen) ||
	    !read_list(sec, &pos, out->mdas, &out->n_mdas, "metadata area", why, whylen))
		return -EINVAL;

	/* The extension is optional (labels from before LVM2 2.02.110 have version 0). A
	 * version field that does not fit means there is none. */
	if (pos + sizeof(ext.version) > SECTOR_SIZE)
		return 0;
	memcpy(&ext.version, sec + pos, sizeof(ext.version));
	out->ext_version = le32_to_cpu(ext.version);
	if (!out->ext_version)
		return 0;
	if (pos + sizeof(ext) > SECTOR_SIZE) {
		snprintf(why, whylen, "pv_header extension overruns the sector");
		return -EINVAL;
	}
	memcpy(&ext, sec + pos, sizeof(ext));
	out->ext_flags = le32_to_cpu(ext.flags);
	pos += sizeof(ext);
	if (!read_list(sec, &pos, out->bootloader_areas, &out->n_bootloader_areas,
	               "bootloader area", why, whylen))
		return -EINVAL;
	return 0;
}

int label_decode(const uint8_t *buf, size_t len, const char *devname, struct pv_label *out)
{
	unsigned nsec = (unsigned)MIN(len / SECTOR_SIZE, (size_t)LABEL_SCAN_SECTORS);
	unsigned bad_sector = 0;
	char why[160], first_why[160];
	int first_err = -ENOENT;

	for (unsigned s = 0; s < nsec; s++) {
		struct pv_label l;
		int r = decode_sector(buf + (size_t)s * SECTOR_SIZE, s, &l, why, sizeof(why));

		if (r == 0) {
			*out = l;
			return 0;
		}
		/* Keep looking: a later sector may hold the real label. Report the first
		 * corrupt one if none is found. */
		if (r == -EINVAL && first_err == -ENOENT) {
			first_err = r;
			bad_sector = s;
			memcpy(first_why, why, sizeof(why));
		}
	}
	if (first_err == -ENOENT)
		return -ENOENT;
	return ulvm_error(first_err, "pv %s: label in sector %u: %s", devname, bad_sector,
	                  first_why);
}

/* Append one list plus its terminator at *pos; false if it does not fit. */
static bool write_list(uint8_t *sec, size_t *pos, const struct disk_locn *l, unsigned n)
{
	struct disk_locn_disk d;

	if (n > LABEL_MAX_AREAS || *pos + (n + 1) * sizeof(d) > SECTOR_SIZE)
		return false;
	for (unsigned i = 0; i < n; i++) {
		/* An offset of 0 would end the list early and lose the entries behind it. */
		if (!l[i].offset)
			return false;
		d.offset = cpu_to_le64(l[i].offset);
		d.size = cpu_to_le64(l[i].size);
		memcpy(sec + *pos, &d, sizeof(d));
		*pos += sizeof(d);
	}
	memset(sec + *pos, 0, sizeof(d));
	*pos += sizeof(d);
	return true;
}

int label_encode(const struct pv_label *l, uint8_t sector[SECTOR_SIZE])
{
	struct label_header_disk lh;
	struct pv_header_disk ph;
	struct pv_header_ext_disk ext;
	size_t pos;

	memset(sector, 0, SECTOR_SIZE);
	if (l->sector >= LABEL_SCAN_SECTORS)
		return ulvm_error(-EINVAL, "label: sector %u is outside the first %u sectors",
		                  l->sector, LABEL_SCAN_SECTORS);
	for (int i = 0; i < UUID_LEN; i++)
		if (!uuid_char_ok(l->pv_uuid[i]))
			return ulvm_error(-EINVAL, "label: invalid PV UUID \"%.*s\"", UUID_LEN,
			                  l->pv_uuid);

	memcpy(ph.pv_uuid, l->pv_uuid, UUID_LEN);
	ph.device_size_xl = cpu_to_le64(l->device_size);
	memcpy(sector + LABEL_HDR_LEN, &ph, sizeof(ph));
	pos = LABEL_HDR_LEN + sizeof(ph);
	if (!write_list(sector, &pos, l->data_areas, l->n_data_areas) ||
	    !write_list(sector, &pos, l->mdas, l->n_mdas) || pos + sizeof(ext) > SECTOR_SIZE)
		goto no_fit;
	/* Always the current extension version, as LVM2 does when it rewrites a label. */
	ext.version = cpu_to_le32(PV_EXT_VSN);
	ext.flags = cpu_to_le32(l->ext_flags);
	memcpy(sector + pos, &ext, sizeof(ext));
	pos += sizeof(ext);
	if (!write_list(sector, &pos, l->bootloader_areas, l->n_bootloader_areas))
		goto no_fit;

	memcpy(lh.id, LABEL_ID, 8);
	lh.sector_xl = cpu_to_le64(l->sector);
	lh.crc_xl = cpu_to_le32(0);
	lh.offset_xl = cpu_to_le32(LABEL_HDR_LEN);
	memcpy(lh.type, LABEL_TYPE, 8);
	memcpy(sector, &lh, sizeof(lh));
	lh.crc_xl =
	    cpu_to_le32(lvm_crc(LVM_INITIAL_CRC, sector + CRC_FROM, SECTOR_SIZE - CRC_FROM));
	memcpy(sector, &lh, sizeof(lh));
	return 0;

no_fit:
	memset(sector, 0, SECTOR_SIZE);
	return ulvm_error(-EINVAL,
	                  "label: %u data, %u metadata and %u bootloader areas do not fit in the "
	                  "label sector (at most %u each, none at offset 0)",
	                  l->n_data_areas, l->n_mdas, l->n_bootloader_areas, LABEL_MAX_AREAS);
}

/* Read the label window; a device shorter than 2048 bytes yields what it has. */
static int read_window(struct bdev *bd, uint8_t *buf, size_t *len)
{
	*len = (size_t)MIN(bd->size, (uint64_t)LABEL_SCAN_SIZE) / SECTOR_SIZE * SECTOR_SIZE;
	if (!*len)
		return 0;
	return bdev_read(bd, buf, *len, 0);
}

int label_read(struct bdev *bd, struct pv_label *out)
{
	uint8_t buf[LABEL_SCAN_SIZE];
	size_t len;
	int r = read_window(bd, buf, &len);

	if (r)
		return r;
	return label_decode(buf, len, bd->path, out);
}

/* Zero every label-looking sector in 0..3 except `keep` (LABEL_SCAN_SECTORS = none). */
static int zero_labels(struct bdev *bd, unsigned keep)
{
	uint8_t buf[LABEL_SCAN_SIZE];
	static const uint8_t zero[SECTOR_SIZE];
	size_t len;
	int r = read_window(bd, buf, &len);

	if (r)
		return r;
	for (unsigned s = 0; s < len / SECTOR_SIZE; s++) {
		if (s == keep || !looks_like_label(buf + (size_t)s * SECTOR_SIZE))
			continue;
		r = bdev_write(bd, zero, SECTOR_SIZE, (uint64_t)s * SECTOR_SIZE);
		if (r)
			return r;
	}
	return 0;
}

int label_write(struct bdev *bd, const struct pv_label *l)
{
	uint8_t sec[SECTOR_SIZE];
	int r = label_encode(l, sec);

	if (r)
		return r;
	/* The new label is durable before any other copy goes, so a crash in between leaves
	 * a label either way. */
	r = bdev_write(bd, sec, SECTOR_SIZE, (uint64_t)l->sector * SECTOR_SIZE);
	if (!r)
		r = bdev_flush(bd);
	/* Stale labels elsewhere in the window: a reader scanning from sector 0 would take
	 * an earlier one first. */
	if (!r)
		r = zero_labels(bd, l->sector);
	if (!r)
		r = bdev_flush(bd);
	return r;
}

int label_wipe(struct bdev *bd)
{
	int r = zero_labels(bd, LABEL_SCAN_SECTORS);

	return r ? r : bdev_flush(bd);
}
