/* libFuzzer target for lvm/mda: the input is an image of a metadata area (its 512-byte
 * header first, then the circular buffer, possibly cut short) recorded at device offset
 * 4096, where LVM2 puts the first area. A header that decodes must re-encode to one that
 * decodes to the same fields; its committed text is read out of the image; and the next copy
 * is placed for a few sizes, checking the placement invariants ("Placing a new copy" in
 * docs/formats/lvm2-metadata-area.md). Each input is
 * tried as is, then with the header and text checksums fixed up so mutations get past them. */
#include <stdlib.h>
#include <string.h>

#include "lvm/mda.h"

#define AREA_START 4096u

static void check_place(const struct mda_header *h, size_t len)
{
	struct raw_locn loc;
	uint64_t max = mda_max_text_size(h->size);
	int r = mda_place_text(h, len, "fuzz", &loc);

	if (len == 0 || len > max) {
		if (r == 0)
			abort();
		return;
	}
	if (r != 0) {
		/* Refusal is only allowed for copies LVM2 would not have written: oversized,
		 * or not on a sector boundary. */
		if (!mda_has_text(h) ||
		    (h->slot[0].size <= max && h->slot[0].offset % 512 == 0 && h->size % 512 == 0))
			abort();
		return;
	}
	if (loc.size != len || loc.offset < MDA_HEADER_SIZE || loc.offset >= h->size ||
	    loc.offset % 512 != 0)
		abort();
	/* The new copy must not overlap the committed one (both possibly wrapped). */
	if (mda_has_text(h)) {
		uint64_t S = h->size;
		uint64_t a[2][2], b[2][2];
		unsigned na = 1, nb = 1;
		uint64_t r1 = S - h->slot[0].offset, n1 = h->slot[0].size;

		a[0][0] = h->slot[0].offset;
		a[0][1] = h->slot[0].offset + (n1 < r1 ? n1 : r1);
		if (n1 > r1)
			a[1][0] = MDA_HEADER_SIZE, a[1][1] = MDA_HEADER_SIZE + n1 - r1, na = 2;
		r1 = S - loc.offset;
		b[0][0] = loc.offset;
		b[0][1] = loc.offset + (len < r1 ? len : r1);
		if (len > r1)
			b[1][0] = MDA_HEADER_SIZE, b[1][1] = MDA_HEADER_SIZE + len - r1, nb = 2;
		for (unsigned i = 0; i < na; i++)
			for (unsigned j = 0; j < nb; j++)
				if (a[i][0] < b[j][1] && b[j][0] < a[i][1])
					abort();
	}
}

static void put_le32(uint8_t *p, uint32_t v)
{
	for (int i = 0; i < 4; i++)
		p[i] = (uint8_t)(v >> (8 * i));
}

static uint64_t get_le64(const uint8_t *p)
{
	uint64_t v = 0;

	for (int i = 7; i >= 0; i--)
		v = v << 8 | p[i];
	return v;
}

/* Make the header checksum, and where the slot-0 text lies inside the image its checksum,
 * match the bytes. */
static void fix_checksums(uint8_t *img, size_t size)
{
	uint64_t S = get_le64(img + 32), off = get_le64(img + 40), n = get_le64(img + 48);

	if (off >= MDA_HEADER_SIZE && off < S && n && n <= S - MDA_HEADER_SIZE) {
		uint64_t n1 = n < S - off ? n : S - off, n2 = n - n1;

		if (off + n1 <= size && MDA_HEADER_SIZE + n2 <= size) {
			uint32_t crc = lvm_crc(LVM_INITIAL_CRC, img + off, (size_t)n1);

			crc = lvm_crc(crc, img + MDA_HEADER_SIZE, (size_t)n2);
			put_le32(img + 56, crc);
		}
	}
	put_le32(img, lvm_crc(LVM_INITIAL_CRC, img + 4, MDA_HEADER_SIZE - 4));
}

static void check(const uint8_t *data, size_t size)
{
	struct mda_header h, again;
	uint8_t enc[MDA_HEADER_SIZE];
	char *text;
	size_t len;

	if (mda_header_decode(data, AREA_START, "fuzz", &h) != 0)
		return;

	mda_header_encode(&h, enc);
	if (mda_header_decode(enc, AREA_START, "fuzz", &again) != 0 ||
	    memcmp(&h.slot, &again.slot, sizeof(h.slot)) != 0 || h.size != again.size)
		abort();

	if (mda_read_text_mem(&h, data, size, "fuzz", &text, &len) == 0) {
		if (len != h.slot[0].size || text[len] != '\0')
			abort();
		free(text);
	}

	check_place(&h, 1);
	check_place(&h, h.slot[0].size ? (size_t)h.slot[0].size : 1000);
	check_place(&h, (size_t)mda_max_text_size(h.size));
	check_place(&h, (size_t)mda_max_text_size(h.size) + 1);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	uint8_t *img;

	if (size < MDA_HEADER_SIZE)
		return 0;
	check(data, size);
	img = malloc(size);
	if (!img)
		return 0;
	memcpy(img, data, size);
	fix_checksums(img, size);
	check(img, size);
	free(img);
	return 0;
}
