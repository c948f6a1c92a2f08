/*
 * A metadata area: a 512-byte mda_header followed by a circular buffer of VG text copies.
 *
 * mda_header (little-endian; docs/formats/lvm2-metadata-area.md):
 *    0  checksum_xl   lvm_crc of bytes 4..511
 *    4  magic[16]     " LVM2 x[5A%r0N*>"
 *   20  version       1
 *   24  start         absolute byte offset of this header
 *   32  size          whole area in bytes, header included
 *   40  raw_locn[0]   committed copy:    offset (area-relative), size, checksum, flags
 *   64  raw_locn[1]   precommitted copy
 *   88  raw_locn[2]   zero terminator; the rest of the sector is zero
 *
 * A copy that runs past the end of the area continues at area offset 512 ("wraps"). New
 * copies go after the committed one, so a crash before the header is rewritten leaves the
 * old copy intact; the header is only rewritten once the new text is durable.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mda.h"

#define TEXT_ALIGN 512u /* copies start on, and are zero-padded to, 512-byte boundaries */

struct raw_locn_disk {
	le64 offset;
	le64 size;
	le32 checksum;
	le32 flags;
} __attribute__((packed));

struct mda_header_disk {
	le32 checksum_xl;
	char magic[16];
	le32 version;
	le64 start;
	le64 size;
	struct raw_locn_disk raw_locns[3];
	uint8_t zero[400];
} __attribute__((packed));

_Static_assert(sizeof(struct raw_locn_disk) == 24, "raw_locn is 24 bytes");
_Static_assert(sizeof(struct mda_header_disk) == MDA_HEADER_SIZE, "mda_header is 512 bytes");

/* ---- header ---------------------------------------------------------------------------- */

static bool slot_empty(const struct raw_locn *rl)
{
	return !rl->offset && !rl->size;
}

/* A non-empty slot must describe text inside the area's buffer (LVM2 2.03.17+ checks the
 * same before reading). Empty slots pass. */
static int check_slot(const struct raw_locn *rl, uint64_t area_size, const char *what,
                      const char *name)
{
	if (slot_empty(rl))
		return 0;
	if (rl->offset < MDA_HEADER_SIZE)
		return ulvm_error(-EINVAL, "%s: %s offset %llu lies inside the %u-byte header",
		                  what, name, (unsigned long long)rl->offset, MDA_HEADER_SIZE);
	if (rl->offset >= area_size)
		return ulvm_error(-EINVAL, "%s: %s offset %llu is beyond the area size %llu", what,
		                  name, (unsigned long long)rl->offset,
		                  (unsigned long long)area_size);
	if (!rl->size)
		return ulvm_error(-EINVAL, "%s: %s at offset %llu has size 0", what, name,
		                  (unsigned long long)rl->offset);
	if (rl->size > area_size - MDA_HEADER_SIZE)
		return ulvm_error(-EINVAL, "%s: %s size %llu exceeds the area's %llu-byte buffer",
		                  what, name, (unsigned long long)rl->size,
		                  (unsigned long long)(area_size - MDA_HEADER_SIZE));
	return 0;
}

static struct raw_locn slot_from_disk(const struct raw_locn_disk *d)
{
	struct raw_locn rl = {
	    .offset = le64_to_cpu(d->offset),
	    .size = le64_to_cpu(d->size),
	    .checksum = le32_to_cpu(d->checksum),
	    .flags = le32_to_cpu(d->flags),
	};
	return rl;
}

static struct raw_locn_disk slot_to_disk(const struct raw_locn *rl)
{
	struct raw_locn_disk d = {
	    .offset = cpu_to_le64(rl->offset),
	    .size = cpu_to_le64(rl->size),
	    .checksum = cpu_to_le32(rl->checksum),
	    .flags = cpu_to_le32(rl->flags),
	};
	return d;
}

int mda_header_decode(const uint8_t buf[MDA_HEADER_SIZE], uint64_t expected_start, const char *what,
                      struct mda_header *out)
{
	struct mda_header_disk d;
	struct mda_header h;
	uint32_t stored, computed;
	uint64_t end;
	int r;

	memcpy(&d, buf, sizeof(d));
	stored = le32_to_cpu(d.checksum_xl);
	computed = lvm_crc(LVM_INITIAL_CRC, buf + 4, MDA_HEADER_SIZE - 4);
	if (stored != computed)
		return ulvm_error(-EINVAL,
		                  "%s: header checksum mismatch (stored 0x%08x, computed 0x%08x)",
		                  what, stored, computed);
	if (memcmp(d.magic, MDA_MAGIC, sizeof(d.magic)) != 0)
		return ulvm_error(-EINVAL,
		                  "%s: bad magic in the header (not an LVM2 metadata area)", what);
	memset(&h, 0, sizeof(h));
	h.version = le32_to_cpu(d.version);
	h.start = le64_to_cpu(d.start);
	h.size = le64_to_cpu(d.size);
	if (h.version != MDA_VERSION)
		return ulvm_error(-EINVAL, "%s: unsupported header version %u (expected %u)", what,
		                  h.version, MDA_VERSION);
	if (h.start != expected_start)
		return ulvm_error(-EINVAL, "%s: header records start %llu but was read at %llu",
		                  what, (unsigned long long)h.start,
		                  (unsigned long long)expected_start);
	if (h.size < MDA_HEADER_SIZE)
		return ulvm_error(-EINVAL, "%s: area size %llu is smaller than its %u-byte header",
		                  what, (unsigned long long)h.size, MDA_HEADER_SIZE);
	if (add_overflows_u64(h.start, h.size, &end))
		return ulvm_error(-EINVAL, "%s: area of %llu bytes at %llu overflows", what,
		                  (unsigned long long)h.size, (unsigned long long)h.start);
	h.slot[0] = slot_from_disk(&d.raw_locns[0]);
	h.slot[1] = slot_from_disk(&d.raw_locns[1]);
	r = check_slot(&h.slot[0], h.size, what, "committed metadata (slot 0)");
	if (r)
		return r;
	*out = h;
	return 0;
}

void mda_header_encode(const struct mda_header *h, uint8_t buf[MDA_HEADER_SIZE])
{
	struct mda_header_disk d;

	memset(&d, 0, sizeof(d));
	memcpy(d.magic, MDA_MAGIC, sizeof(d.magic));
	d.version = cpu_to_le32(MDA_VERSION);
	d.start = cpu_to_le64(h->start);
	d.size = cpu_to_le64(h->size);
	d.raw_locns[0] = slot_to_disk(&h->slot[0]);
	d.raw_locns[1] = slot_to_disk(&h->slot[1]);
	memcpy(buf, &d, sizeof(d));
	d.checksum_xl = cpu_to_le32(lvm_crc(LVM_INITIAL_CRC, buf + 4, MDA_HEADER_SIZE - 4));
	memcpy(buf, &d.checksum_xl, sizeof(d.checksum_xl));
}

int mda_header_read(struct bdev *bd, uint64_t start, const char *what, struct mda_header *out)
{
	uint8_t *buf;
	int r;

	if (bd->size < MDA_HEADER_SIZE || start > bd->size - MDA_HEADER_SIZE)
		return ulvm_error(
		    -EIO, "%s: header at %llu lies beyond the end of the device (%llu bytes)", what,
		    (unsigned long long)start, (unsigned long long)bd->size);
	buf = bdev_alloc_buffer(MDA_HEADER_SIZE);
	if (!buf)
		return ulvm_error(-ENOMEM, "%s: out of memory", what);
	r = bdev_read(bd, buf, MDA_HEADER_SIZE, start);
	if (!r)
		r = mda_header_decode(buf, start, what, out);
	free(buf);
	return r;
}

int mda_header_write(struct bdev *bd, const struct mda_header *h)
{
	uint8_t *buf = bdev_alloc_buffer(MDA_HEADER_SIZE);
	int r;

	if (!buf)
		return ulvm_error(-ENOMEM, "%s: out of memory", bd->path);
	mda_header_encode(h, buf);
	r = bdev_write(bd, buf, MDA_HEADER_SIZE, h->start);
	free(buf);
	return r ? r : bdev_flush(bd);
}

void mda_header_init(struct mda_header *h, uint64_t start, uint64_t size)
{
	memset(h, 0, sizeof(*h));
	h->version = MDA_VERSION;
	h->start = start;
	h->size = size;
}

bool mda_has_text(const struct mda_header *h)
{
	return !slot_empty(&h->slot[0]) && !(h->slot[0].flags & RAW_LOCN_IGNORED);
}

/* ---- reading ----------------------------------------------------------------------------- */

/* Where slot 0's text lies: part 1 at off1, and the wrapped rest (len2 bytes, maybe 0) at
 * the start of the buffer. Offsets are area-relative. */
struct text_parts {
	uint64_t off1, len1, len2;
};

static int locate_text(const struct mda_header *h, const char *what, struct text_parts *p)
{
	const struct raw_locn *rl = &h->slot[0];
	uint64_t room;
	int r;

	if (!mda_has_text(h))
		return -ENOENT;
	r = check_slot(rl, h->size, what, "committed metadata (slot 0)");
	if (r)
		return r;
	room = h->size - rl->offset; /* check_slot: offset < size */
	p->off1 = rl->offset;
	p->len1 = MIN(rl->size, room);
	p->len2 = rl->size - p->len1;
	return 0;
}

static int alloc_text(uint64_t size, const char *what, char **out)
{
	if (size >= SIZE_MAX || !(*out = malloc((size_t)size + 1)))
		return ulvm_error(-ENOMEM, "%s: out of memory for %llu bytes of metadata", what,
		                  (unsigned long long)size);
	prefault_pages(*out, (size_t)size + 1);
	return 0;
}

/* NUL-terminate and verify the reassembled text; frees it on a mismatch. */
static int finish_text(const struct raw_locn *rl, const char *what, char *buf, char **text,
                       size_t *len)
{
	uint32_t computed;

	buf[rl->size] = '\0';
	computed = lvm_crc(LVM_INITIAL_CRC, buf, (size_t)rl->size);
	if (computed != rl->checksum) {
		free(buf);
		return ulvm_error(
		    -EINVAL,
		    "%s: metadata text at offset %llu (%llu bytes): checksum mismatch "
		    "(stored 0x%08x, computed 0x%08x)",
		    what, (unsigned long long)rl->offset, (unsigned long long)rl->size,
		    rl->checksum, computed);
	}
	*text = buf;
	*len = (size_t)rl->size;
	return 0;
}

/* The whole area must be on the device: a shorter device is truncated or the wrong one. */
static int check_area_on_device(const struct bdev *bd, const struct mda_header *h, const char *what)
{
	if (h->start > bd->size || h->size > bd->size - h->start)
		return ulvm_error(-EIO,
		                  "%s: metadata area at %llu (%llu bytes) extends past the end of "
		                  "the device (%llu bytes): device truncated?",
		                  what, (unsigned long long)h->start, (unsigned long long)h->size,
		                  (unsigned long long)bd->size);
	return 0;
}

int mda_read_text(struct bdev *bd, const struct mda_header *h, const char *what, char **text,
                  size_t *len)
{
	struct text_parts p;
	char *buf;
	int r = locate_text(h, what, &p);

	if (!r)
		r = check_area_on_device(bd, h, what);
	if (!r)
		r = alloc_text(h->slot[0].size, what, &buf);
	if (r)
		return r;
	r = bdev_read(bd, buf, (size_t)p.len1, h->start + p.off1);
	if (!r && p.len2)
		r = bdev_read(bd, buf + p.len1, (size_t)p.len2, h->start + MDA_HEADER_SIZE);
	if (r) {
		free(buf);
		return r;
	}
	return finish_text(&h->slot[0], what, buf, text, len);
}

int mda_read_text_mem(const struct mda_header *h, const uint8_t *area, size_t area_len,
                      const char *what, char **text, size_t *len)
{
	struct text_parts p;
	char *buf;
	int r = locate_text(h, what, &p);

	if (r)
		return r;
	/* off1 + len1 <= size and 512 + len2 <= off1 by check_slot: no overflow below. */
	if (p.off1 + p.len1 > area_len || MDA_HEADER_SIZE + p.len2 > area_len)
		return ulvm_error(-EIO,
		                  "%s: metadata text at offset %llu (%llu bytes) lies beyond the "
		                  "%zu-byte area image",
		                  what, (unsigned long long)p.off1,
		                  (unsigned long long)h->slot[0].size, area_len);
	r = alloc_text(h->slot[0].size, what, &buf);
	if (r)
		return r;
	memcpy(buf, area + p.off1, (size_t)p.len1);
	memcpy(buf + p.len1, area + MDA_HEADER_SIZE, (size_t)p.len2);
	return finish_text(&h->slot[0], what, buf, text, len);
}

/* ---- placing and writing ------------------------------------------------------------------ */

uint64_t mda_max_text_size(uint64_t mda_size)
{
	/* Two copies must fit beside each other, each possibly losing up to 512 bytes to
	 * alignment of its start. */
	if (mda_size < MDA_HEADER_SIZE + 2 * TEXT_ALIGN)
		return 0;
	return (mda_size - MDA_HEADER_SIZE) / 2 - TEXT_ALIGN;
}

/* A half-open byte range [a, b) relative to the area start. */
struct span {
	uint64_t a, b;
};

/* The ranges a copy at `off` of `size` bytes occupies (one, or two when it wraps). With
 * `pad`, the last range is extended the way mda_write_text zero-pads it. */
static unsigned copy_spans(const struct mda_header *h, uint64_t off, uint64_t size, bool pad,
                           struct span sp[2])
{
	uint64_t room = h->size - off, len1 = MIN(size, room), len2 = size - len1;
	unsigned n = 1;

	sp[0].a = off;
	sp[0].b = off + len1;
	if (len2) {
		sp[1].a = MDA_HEADER_SIZE;
		sp[1].b = MDA_HEADER_SIZE + len2;
		n = 2;
	}
	if (pad) {
		/* Pad to a device-relative boundary, never past the end of the area. */
		uint64_t end = sp[n - 1].b;
		uint64_t rem = (h->start % TEXT_ALIGN + end % TEXT_ALIGN) % TEXT_ALIGN;
		uint64_t extra = rem ? TEXT_ALIGN - rem : 0;

		sp[n - 1].b = extra > h->size - end ? h->size : end + extra;
	}
	return n;
}

static bool spans_overlap(const struct span *x, unsigned nx, const struct span *y, unsigned ny)
{
	for (unsigned i = 0; i < nx; i++)
		for (unsigned j = 0; j < ny; j++)
			if (x[i].a < y[j].b && y[j].a < x[i].b)
				return true;
	return false;
}

/* Would writing `loc` (padding included) touch slot 0's committed text? Both locations
 * must have passed check_slot. */
static bool overlaps_committed(const struct mda_header *h, const struct raw_locn *loc)
{
	struct span old[2], cur[2];
	unsigned no, nc;

	if (!mda_has_text(h))
		return false;
	no = copy_spans(h, h->slot[0].offset, h->slot[0].size, false, old);
	nc = copy_spans(h, loc->offset, loc->size, true, cur);
	return spans_overlap(old, no, cur, nc);
}

int mda_place_text(const struct mda_header *h, size_t len, const char *what, struct raw_locn *loc)
{
	const struct raw_locn *old = &h->slot[0];
	uint64_t max = mda_max_text_size(h->size), S = h->size, start;
	int r;

	if (!len)
		return ulvm_error(-EINVAL, "%s: refusing to write empty metadata", what);
	if (len > max)
		return ulvm_error(
		    -ENOSPC, "%s: metadata (%zu bytes) exceeds maximum metadata size (%llu bytes)",
		    what, len, (unsigned long long)max);
	if (!mda_has_text(h)) {
		/* Empty, or ignored (its old location is stale): start at the beginning. */
		start = MDA_HEADER_SIZE;
	} else {
		uint64_t room, last, next;

		r = check_slot(old, S, what, "committed metadata (slot 0)");
		if (r)
			return r;
		room = S - old->offset;
		last = old->size > room ? MDA_HEADER_SIZE + (old->size - room) - 1
		                        : old->offset + old->size - 1;
		next = last + 1;
		if (S - last < TEXT_ALIGN) {
			start = MDA_HEADER_SIZE;
		} else {
			/* S - last >= 512 so rounding up cannot pass S. */
			start = next % TEXT_ALIGN ? next + (TEXT_ALIGN - next % TEXT_ALIGN) : next;
			if (start > S - TEXT_ALIGN)
				start = MDA_HEADER_SIZE;
		}
	}
	memset(loc, 0, sizeof(*loc));
	loc->offset = start;
	loc->size = len;
	/* Cannot happen within max_size for copies LVM2 or ulvm wrote; guards odd layouts. */
	if (overlaps_committed(h, loc))
		return ulvm_error(-ENOSPC,
		                  "%s: metadata (%zu bytes) at offset %llu would overlap the "
		                  "committed copy at %llu (%llu bytes)",
		                  what, len, (unsigned long long)start,
		                  (unsigned long long)old->offset, (unsigned long long)old->size);
	return 0;
}

/* Write `len` bytes at area offset `off`, followed by zeros up to `padded_len`. */
static int write_part(struct bdev *bd, const struct mda_header *h, uint64_t off, const char *src,
                      uint64_t len, uint64_t padded_len)
{
	uint8_t *buf = bdev_alloc_buffer((size_t)padded_len);
	int r;

	if (!buf)
		return ulvm_error(-ENOMEM, "%s: out of memory for %llu bytes of metadata", bd->path,
		                  (unsigned long long)padded_len);
	memcpy(buf, src, (size_t)len);
	memset(buf + len, 0, (size_t)(padded_len - len));
	r = bdev_write(bd, buf, (size_t)padded_len, h->start + off);
	free(buf);
	return r;
}

int mda_write_text(struct bdev *bd, const struct mda_header *h, const char *text, size_t len,
                   struct raw_locn *loc)
{
	char what[96];
	struct span sp[2];
	unsigned n;
	int r;

	snprintf(what, sizeof(what), "%s: metadata area at %llu", bd->path,
	         (unsigned long long)h->start);
	if (!len || loc->size != len)
		return ulvm_error(-EINVAL, "%s: location holds %llu bytes, text has %zu", what,
		                  (unsigned long long)loc->size, len);
	r = check_slot(loc, h->size, what, "new metadata");
	if (!r)
		r = check_slot(&h->slot[0], h->size, what, "committed metadata (slot 0)");
	if (r)
		return r;
	if (overlaps_committed(h, loc))
		return ulvm_error(-EINVAL,
		                  "%s: new metadata at offset %llu would overwrite the "
		                  "committed copy",
		                  what, (unsigned long long)loc->offset);
	r = check_area_on_device(bd, h, what);
	if (r)
		return r;

	n = copy_spans(h, loc->offset, len, true, sp);
	if (n == 1) {
		r = write_part(bd, h, sp[0].a, text, len, sp[0].b - sp[0].a);
	} else {
		uint64_t len1 = h->size - loc->offset;

		/* Part 1 runs exactly to the end of the area; only part 2 is padded. */
		r = write_part(bd, h, sp[0].a, text, len1, len1);
		if (!r)
			r = write_part(bd, h, sp[1].a, text + len1, len - len1, sp[1].b - sp[1].a);
	}
	if (r)
		return r;
	loc->checksum = lvm_crc(LVM_INITIAL_CRC, text, len);
	loc->flags = 0;
	return 0;
}

/* ---- committing ---------------------------------------------------------------------------- */

int mda_commit(struct bdev *bd, struct mda_header *h, const struct raw_locn *loc)
{
	struct mda_header next = *h;
	uint8_t *buf;
	int r;

	r = check_slot(loc, h->size, bd->path, "new metadata");
	if (r)
		return r;
	if (slot_empty(loc))
		return ulvm_error(-EINVAL, "%s: cannot commit an empty metadata location",
		                  bd->path);

	/* One single-sector write switches slot 0 to the new copy (and un-ignores the area).
	 * LVM2 first writes a "precommitted" slot 1 for readers that run while devices are
	 * suspended; ulvm has no such readers, and the switch itself is atomic either way,
	 * so it saves that extra write and flush. */
	next.slot[0] = *loc;
	next.slot[0].flags = 0;
	memset(&next.slot[1], 0, sizeof(next.slot[1]));
	if (!(buf = bdev_alloc_buffer(MDA_HEADER_SIZE)))
		return ulvm_error(-ENOMEM, "%s: out of memory", bd->path);
	mda_header_encode(&next, buf);
	r = bdev_write(bd, buf, MDA_HEADER_SIZE, next.start);
	free(buf);
	if (r)
		return r;
	*h = next;
	return 0;
}

int mda_clear(struct bdev *bd, struct mda_header *h)
{
	struct mda_header next = *h;
	int r;

	memset(next.slot, 0, sizeof(next.slot));
	r = mda_header_write(bd, &next);
	if (!r)
		*h = next;
	return r;
}
