/*
 * lvm/mda: a metadata area: the 512-byte mda_header with its raw_locn slots, and the
 * circular text buffer behind it. Reads the committed copy (reassembling a wrapped one,
 * verifying its checksum), places and writes a new copy following LVM2's circular-buffer
 * rules, and commits it by rewriting the header (precommit slot 1, then commit slot 0).
 * Uses util and io. Format: docs/formats/lvm2-metadata-area.md.
 */
#ifndef ULVM_LVM_MDA_H
#define ULVM_LVM_MDA_H

#include <stdbool.h>
#include <stdint.h>

#include "../io/bdev.h"
#include "../util/util.h"

#define MDA_HEADER_SIZE  512u
#define MDA_MAGIC        " LVM2 x[5A%r0N*>"
#define MDA_VERSION      1u
#define RAW_LOCN_IGNORED 0x1u

struct raw_locn {
	uint64_t offset; /* relative to the MDA start; 0 = empty slot */
	uint64_t size;   /* bytes of text, including LVM2's trailing NUL */
	uint32_t checksum;
	uint32_t flags;
};

struct mda_header {
	uint32_t version;
	uint64_t start;          /* absolute byte offset of the header on the device */
	uint64_t size;           /* whole area, header included */
	struct raw_locn slot[2]; /* [0] committed, [1] precommitted */
};

/* Decode/validate a header read at `expected_start`. `what` names it in messages, e.g.
 * "pv /dev/sdb: metadata area 1". -EINVAL with a message on bad checksum (stored and
 * computed values), magic, version, start, size or slot bounds. */
int mda_header_decode(const uint8_t buf[MDA_HEADER_SIZE], uint64_t expected_start, const char *what,
                      struct mda_header *out);
void mda_header_encode(const struct mda_header *h, uint8_t buf[MDA_HEADER_SIZE]);

int mda_header_read(struct bdev *bd, uint64_t start, const char *what, struct mda_header *out);
int mda_header_write(struct bdev *bd, const struct mda_header *h); /* writes and flushes */

/* A fresh, empty area (pvcreate): header with empty slots; the caller writes it. */
void mda_header_init(struct mda_header *h, uint64_t start, uint64_t size);

/* True when slot 0 holds committed text that is not ignored. */
bool mda_has_text(const struct mda_header *h);

/* Read slot 0's text (wrapped copies reassembled), check its checksum. *text is malloc'd,
 * NUL-terminated, *len = slot size. -EINVAL with a message (naming `what`) on a bad
 * checksum or out-of-bounds location; -ENOENT when the area holds no metadata. */
int mda_read_text(struct bdev *bd, const struct mda_header *h, const char *what, char **text,
                  size_t *len);
/* The same from an in-memory image of the area (`area[0]` = the header's first byte); the
 * image may stop short of h->size as long as the text lies inside it. For tests and fuzzing. */
int mda_read_text_mem(const struct mda_header *h, const uint8_t *area, size_t area_len,
                      const char *what, char **text, size_t *len);

/* Largest text that can be written into an area of this size: (S - 512)/2 - 512. */
uint64_t mda_max_text_size(uint64_t mda_size);

/* Where the next copy goes after slot 0's copy ("Placing a new copy" in
 * docs/formats/lvm2-metadata-area.md). Fills loc->offset and loc->size = len; -ENOSPC with
 * a message if `len` exceeds mda_max_text_size(). */
int mda_place_text(const struct mda_header *h, size_t len, const char *what, struct raw_locn *loc);

/* Write `len` bytes of text at the placed location (wrapping, zero-padding the last part to
 * a 512-byte boundary) and set loc->checksum. The header is not touched: the old copy stays
 * committed. The caller flushes the device before mda_commit(), so the text is durable
 * before any header points at it. */
int mda_write_text(struct bdev *bd, const struct mda_header *h, const char *text, size_t len,
                   struct raw_locn *loc);

/* Publish `loc`: rewrite the header with slot 0 = loc and slot 1 empty (one sector write).
 * Does not flush: the caller flushes once per device after committing every area on it.
 * Updates *h. */
int mda_commit(struct bdev *bd, struct mda_header *h, const struct raw_locn *loc);

/* Empty both slots (vgremove; and pvcreate of an area). */
int mda_clear(struct bdev *bd, struct mda_header *h);

#endif
