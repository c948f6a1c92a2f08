/* Unit tests for lvm/mda: real LVM2 headers and wrapped copies, header validation, the
 * circular-buffer placement rules (docs/formats/lvm2-metadata-area.md and a real LVM2
 * trace), wrap-around
 * writes with zero padding through a file bdev, the commit sequence, truncated devices. */
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "lvm/mda.h"

#include "test_fixture.h"

#define WHAT "pv /dev/sdb: metadata area 1"

/* ---- helpers ------------------------------------------------------------------------------ */

static void fix_crc(uint8_t *hdr)
{
	put_le32(hdr, lvm_crc(LVM_INITIAL_CRC, hdr + 4, 508));
}

/* A temp file of `size` bytes filled with `fill`, optionally starting with `init`. */
static struct bdev *temp_bdev(uint64_t size, uint8_t fill, const uint8_t *init, size_t init_len,
                              char *path)
{
	struct bdev *bd;
	uint8_t *buf = malloc((size_t)size);
	int fd;

	assert_non_null(buf);
	memset(buf, fill, (size_t)size);
	if (init)
		memcpy(buf, init, init_len);
	strcpy(path, "/var/tmp/ulvm-mda-XXXXXX");
	fd = mkstemp(path);
	assert_true(fd >= 0);
	assert_int_equal(write(fd, buf, (size_t)size), (ssize_t)size);
	close(fd);
	free(buf);
	assert_int_equal(bdev_open(path, 0, &bd), 0);
	return bd;
}

static void pread_at(const char *path, void *buf, size_t len, off_t off)
{
	int fd = open(path, O_RDONLY);

	assert_true(fd >= 0);
	assert_int_equal(pread(fd, buf, len, off), (ssize_t)len);
	close(fd);
}

static void pwrite_at(const char *path, const void *buf, size_t len, off_t off)
{
	int fd = open(path, O_WRONLY);

	assert_true(fd >= 0);
	assert_int_equal(pwrite(fd, buf, len, off), (ssize_t)len);
	close(fd);
}

static char *make_text(size_t len, unsigned seed)
{
	char *t = malloc(len);

	assert_non_null(t);
	for (size_t i = 0; i < len; i++)
		t[i] = (char)('a' + (i * 7 + seed) % 26);
	t[len - 1] = '\0'; /* LVM2 counts one trailing NUL */
	return t;
}

static struct mda_header header_with(uint64_t start, uint64_t size, uint64_t off, uint64_t len)
{
	struct mda_header h;

	mda_header_init(&h, start, size);
	h.slot[0].offset = off;
	h.slot[0].size = len;
	return h;
}

/* ---- headers written by LVM2 -------------------------------------------------------------- */

static void test_decode_lvm2_headers(void **state)
{
	size_t len;
	uint8_t *vg = fixture_load("lvm2-vg-head.bin", &len);
	uint8_t *orphan = fixture_load("lvm2-pv-label.bin", &len);
	struct mda_header h;
	uint8_t enc[MDA_HEADER_SIZE];

	(void)state;
	assert_int_equal(mda_header_decode(vg + 4096, 4096, WHAT, &h), 0);
	assert_int_equal(h.version, 1);
	assert_int_equal(h.start, 4096);
	assert_int_equal(h.size, 1044480);
	assert_int_equal(h.slot[0].offset, 1536);
	assert_int_equal(h.slot[0].size, 1253);
	assert_int_equal(h.slot[0].checksum, 0xa2a8f241);
	assert_int_equal(h.slot[0].flags, 0);
	assert_int_equal(h.slot[1].offset, 0);
	assert_int_equal(h.slot[1].size, 0);
	assert_true(mda_has_text(&h));
	/* Encoding reproduces LVM2's header byte for byte. */
	mda_header_encode(&h, enc);
	assert_memory_equal(enc, vg + 4096, MDA_HEADER_SIZE);

	assert_int_equal(mda_header_decode(orphan + 4096, 4096, WHAT, &h), 0);
	assert_false(mda_has_text(&h));
	mda_header_encode(&h, enc);
	assert_memory_equal(enc, orphan + 4096, MDA_HEADER_SIZE);
	free(vg);
	free(orphan);
}

static void test_init_matches_pvcreate(void **state)
{
	size_t len;
	uint8_t *orphan = fixture_load("lvm2-pv-label.bin", &len);
	struct mda_header h;
	uint8_t enc[MDA_HEADER_SIZE];

	(void)state;
	mda_header_init(&h, 4096, 1044480);
	mda_header_encode(&h, enc);
	assert_memory_equal(enc, orphan + 4096, MDA_HEADER_SIZE);
	free(orphan);
}

/* ---- header validation ---------------------------------------------------------------------- */

static void expect_bad_header(const uint8_t *hdr, uint64_t at, const char *why)
{
	struct mda_header h;

	assert_int_equal(mda_header_decode(hdr, at, WHAT, &h), -EINVAL);
	assert_msg_contains(why);
}

static void test_header_validation(void **state)
{
	size_t len;
	uint8_t *vg = fixture_load("lvm2-vg-head.bin", &len);
	uint8_t h[MDA_HEADER_SIZE];
	char expect[160];

	(void)state;
	memcpy(h, vg + 4096, sizeof(h));
	h[300] = 1;
	snprintf(expect, sizeof(expect),
	         WHAT ": header checksum mismatch (stored 0x%08x, computed 0x%08x)", get_le32(h),
	         lvm_crc(LVM_INITIAL_CRC, h + 4, 508));
	expect_bad_header(h, 4096, expect);
	assert_string_equal(ulvm_last_error(), expect);

	memcpy(h, vg + 4096, sizeof(h));
	h[5] = 'X';
	fix_crc(h);
	expect_bad_header(h, 4096, WHAT ": bad magic");

	memcpy(h, vg + 4096, sizeof(h));
	put_le32(h + 20, 2);
	fix_crc(h);
	expect_bad_header(h, 4096, "unsupported header version 2");

	memcpy(h, vg + 4096, sizeof(h));
	expect_bad_header(h, 8192, "header records start 4096 but was read at 8192");

	memcpy(h, vg + 4096, sizeof(h));
	put_le64(h + 32, 511);
	fix_crc(h);
	expect_bad_header(h, 4096, "area size 511 is smaller than its 512-byte header");

	memcpy(h, vg + 4096, sizeof(h));
	put_le64(h + 24, UINT64_MAX - 1000);
	fix_crc(h);
	expect_bad_header(h, UINT64_MAX - 1000, "overflows");

	memcpy(h, vg + 4096, sizeof(h));
	put_le64(h + 40, 100); /* slot 0 offset inside the header */
	fix_crc(h);
	expect_bad_header(h, 4096, "offset 100 lies inside the 512-byte header");

	memcpy(h, vg + 4096, sizeof(h));
	put_le64(h + 40, 1044480);
	fix_crc(h);
	expect_bad_header(h, 4096, "offset 1044480 is beyond the area size 1044480");

	memcpy(h, vg + 4096, sizeof(h));
	put_le64(h + 48, 1044480 - 511);
	fix_crc(h);
	expect_bad_header(h, 4096, "size 1043969 exceeds the area's 1043968-byte buffer");

	memcpy(h, vg + 4096, sizeof(h));
	put_le64(h + 48, 0);
	fix_crc(h);
	expect_bad_header(h, 4096, "has size 0");

	memcpy(h, vg + 4096, sizeof(h));
	put_le64(h + 40, 0); /* offset 0 with a size: not an empty slot */
	fix_crc(h);
	expect_bad_header(h, 4096, "offset 0 lies inside");
	free(vg);
}

/* ---- reading -----------------------------------------------------------------------------------
 */

static void test_read_lvm2_text(void **state)
{
	size_t len, tlen;
	uint8_t *vg = fixture_load("lvm2-vg-head.bin", &len);
	char path[64];
	struct bdev *bd = temp_bdev(4096 + 1044480, 0, vg, len, path);
	struct mda_header h;
	char *text;

	(void)state;
	assert_int_equal(mda_header_read(bd, 4096, WHAT, &h), 0);
	assert_int_equal(mda_read_text(bd, &h, WHAT, &text, &tlen), 0);
	assert_int_equal(tlen, 1253);
	assert_int_equal(strncmp(text, "vg1 {\nid = \"", 12), 0);
	assert_int_equal(text[1252], '\0'); /* LVM2's own trailing NUL */
	assert_int_equal(text[1253], '\0');
	assert_non_null(strstr(text, "contents = \"Text Format Volume Group\""));
	free(text);

	/* A flipped text byte is caught by the text checksum. */
	pwrite_at(path, "X", 1, 4096 + 1536 + 10);
	assert_int_equal(mda_read_text(bd, &h, WHAT, &text, &tlen), -EINVAL);
	assert_msg_contains(WHAT ": metadata text at offset 1536 (1253 bytes): checksum mismatch "
	                         "(stored 0xa2a8f241, computed 0x");
	bdev_close(bd);
	unlink(path);
	free(vg);
}

static void test_read_lvm2_wrapped(void **state)
{
	size_t len, tlen, tlen2;
	uint8_t *img = fixture_load("lvm2-wrapped-mda.bin", &len);
	char path[64];
	struct bdev *bd = temp_bdev(len, 0, img, len, path);
	struct mda_header h;
	char *text, *text2;

	(void)state;
	assert_int_equal(mda_header_read(bd, 4096, WHAT, &h), 0);
	assert_int_equal(h.size, 61440);
	assert_int_equal(h.slot[0].offset, 57344);
	assert_int_equal(h.slot[0].size, 8039); /* 4096 bytes at the end, 3943 wrapped */
	assert_int_equal(mda_read_text(bd, &h, WHAT, &text, &tlen), 0);
	assert_int_equal(tlen, 8039);
	assert_int_equal(strncmp(text, "wrapvg {", 8), 0);
	assert_int_equal(text[8038], '\0');
	assert_non_null(strstr(text, "lv_26 {"));

	/* The in-memory reader agrees. */
	assert_int_equal(mda_read_text_mem(&h, img + 4096, len - 4096, WHAT, &text2, &tlen2), 0);
	assert_int_equal(tlen2, tlen);
	assert_memory_equal(text, text2, tlen);
	free(text2);
	/* An image that stops before the text ends. */
	assert_int_equal(mda_read_text_mem(&h, img + 4096, 60000, WHAT, &text2, &tlen2), -EIO);
	assert_msg_contains("lies beyond the 60000-byte area image");
	free(text);
	bdev_close(bd);
	unlink(path);
	free(img);
}

static void test_truncated_device(void **state)
{
	size_t len, tlen;
	uint8_t *vg = fixture_load("lvm2-vg-head.bin", &len);
	char path[64];
	struct bdev *bd = temp_bdev(len, 0, vg, len, path); /* 8192 bytes of a 1 MiB area */
	struct mda_header h;
	struct raw_locn loc;
	char *text = NULL;

	(void)state;
	assert_int_equal(mda_header_read(bd, 4096, WHAT, &h), 0);
	assert_int_equal(mda_read_text(bd, &h, WHAT, &text, &tlen), -EIO);
	assert_msg_contains(WHAT ": metadata area at 4096 (1044480 bytes) extends past the end of "
	                         "the device (8192 bytes)");
	assert_null(text);

	text = make_text(100, 1);
	assert_int_equal(mda_place_text(&h, 100, WHAT, &loc), 0);
	assert_int_equal(mda_write_text(bd, &h, text, 100, &loc), -EIO);
	assert_msg_contains("extends past the end of the device");
	free(text);

	assert_int_equal(mda_header_read(bd, 8000, WHAT, &h), -EIO);
	assert_msg_contains("header at 8000 lies beyond the end of the device");
	bdev_close(bd);
	unlink(path);
	free(vg);
}

static void test_no_text(void **state)
{
	struct mda_header h = header_with(4096, 61440, 0, 0);
	uint8_t area[1024] = {0};
	char *text;
	size_t len;

	(void)state;
	assert_false(mda_has_text(&h));
	assert_int_equal(mda_read_text_mem(&h, area, sizeof(area), WHAT, &text, &len), -ENOENT);
	h = header_with(4096, 61440, 512, 100);
	h.slot[0].flags = RAW_LOCN_IGNORED;
	assert_false(mda_has_text(&h));
	assert_int_equal(mda_read_text_mem(&h, area, sizeof(area), WHAT, &text, &len), -ENOENT);
}

/* ---- placement ----------------------------------------------------------------------------------
 */

static void test_max_size(void **state)
{
	struct mda_header h = header_with(4096, 61440, 0, 0);
	struct raw_locn loc;

	(void)state;
	assert_int_equal(mda_max_text_size(61440), 29952);
	assert_int_equal(mda_max_text_size(1044480), 521472);
	assert_int_equal(mda_max_text_size(1024), 0);
	assert_int_equal(mda_place_text(&h, 29953, WHAT, &loc), -ENOSPC);
	assert_msg_contains(WHAT ": metadata (29953 bytes) exceeds maximum metadata size (29952 "
	                         "bytes)");
	assert_int_equal(mda_place_text(&h, 29952, WHAT, &loc), 0);
	assert_int_equal(mda_place_text(&h, 0, WHAT, &loc), -EINVAL);
}

static void test_place_doc_trace(void **state)
{
	struct mda_header h = header_with(4096, 61440, 0, 0);
	struct raw_locn loc;

	(void)state;
	/* First copy of a new VG. */
	assert_int_equal(mda_place_text(&h, 1000, WHAT, &loc), 0);
	assert_int_equal(loc.offset, 512);
	assert_int_equal(loc.size, 1000);
	/* Section 5.3: a copy at 56832 of 8382 bytes wraps by 3774; the next starts at 4608. */
	h = header_with(4096, 61440, 0, 0);
	assert_int_equal(mda_place_text(&h, 8382, WHAT, &loc), 0);
	h.slot[0].offset = 56832;
	h.slot[0].size = 8382;
	assert_int_equal(h.slot[0].offset + h.slot[0].size - h.size, 3774);
	assert_int_equal(mda_place_text(&h, 8400, WHAT, &loc), 0);
	assert_int_equal(loc.offset, 4608);
	/* Successive copies at 512-aligned offsets right after each other. */
	h = header_with(4096, 1044480, 512, 900);
	assert_int_equal(mda_place_text(&h, 1000, WHAT, &loc), 0);
	assert_int_equal(loc.offset, 1536);
	h.slot[0] = loc;
	assert_int_equal(mda_place_text(&h, 1000, WHAT, &loc), 0);
	assert_int_equal(loc.offset, 2560);
	/* A copy ending exactly on a boundary is followed directly (no extra sector). */
	h = header_with(4096, 61440, 512, 1024);
	assert_int_equal(mda_place_text(&h, 100, WHAT, &loc), 0);
	assert_int_equal(loc.offset, 1536);
}

static void test_place_near_end(void **state)
{
	struct mda_header h;
	struct raw_locn loc;

	(void)state;
	/* Less than 512 bytes after the old copy: back to the start. */
	h = header_with(4096, 61440, 60000, 1000);
	assert_int_equal(mda_place_text(&h, 100, WHAT, &loc), 0);
	assert_int_equal(loc.offset, 512);
	/* Rounded start exactly at S - 512 is still used (and the copy wraps). */
	h = header_with(4096, 61440, 59904, 600);
	assert_int_equal(mda_place_text(&h, 1000, WHAT, &loc), 0);
	assert_int_equal(loc.offset, 60928);
	/* Rounded start past S - 512: back to the start. */
	h = header_with(4096, 61440, 59904, 1025);
	assert_int_equal(mda_place_text(&h, 1000, WHAT, &loc), 0);
	assert_int_equal(loc.offset, 512);
	/* An oversized old copy (bigger than LVM2's limit) that the new one would wrap into. */
	h = header_with(4096, 61440, 512, 40000);
	assert_int_equal(mda_place_text(&h, 29952, WHAT, &loc), -ENOSPC);
	assert_msg_contains("would overlap the committed copy at 512 (40000 bytes)");
	/* Ignored slot 0: its location is stale, start over. */
	h = header_with(4096, 61440, 20480, 1000);
	h.slot[0].flags = RAW_LOCN_IGNORED;
	assert_int_equal(mda_place_text(&h, 100, WHAT, &loc), 0);
	assert_int_equal(loc.offset, 512);
}

/* Forty successive copies written by LVM2 2.03.16 into a 61440-byte area (repeated
 * lvcreate): each placement must match where LVM2 put the next copy. */
static void test_place_lvm2_trace(void **state)
{
	static const struct {
		uint64_t off, size;
	} trace[] = {
	    {1536, 1054},   {3072, 1332},   {4608, 1610},   {6656, 1888},  {8704, 2166},
	    {11264, 2444},  {13824, 2722},  {16896, 3000},  {19968, 3279}, {23552, 3559},
	    {27136, 3839},  {31232, 4119},  {35840, 4399},  {40448, 4679}, {45568, 4959},
	    {50688, 5239},  {56320, 5519},  {1024, 5799},   {7168, 6079},  {13312, 6359},
	    {19968, 6639},  {26624, 6919},  {33792, 7199},  {41472, 7479}, {49152, 7759},
	    {57344, 8039},  {4608, 8319},   {13312, 8599},  {22016, 8879}, {31232, 9159},
	    {40448, 9439},  {50176, 9719},  {59904, 9999},  {9216, 10279}, {19968, 10559},
	    {30720, 10839}, {41984, 11119}, {53248, 11399}, {4096, 11679}, {15872, 11959},
	};
	struct raw_locn loc;

	(void)state;
	for (size_t i = 0; i + 1 < sizeof(trace) / sizeof(trace[0]); i++) {
		struct mda_header h = header_with(4096, 61440, trace[i].off, trace[i].size);

		assert_int_equal(mda_place_text(&h, trace[i + 1].size, WHAT, &loc), 0);
		assert_int_equal(loc.offset, trace[i + 1].off);
		assert_int_equal(loc.offset % 512, 0);
	}
}

/* ---- writing ------------------------------------------------------------------------------------
 */

static void assert_bytes(const uint8_t *p, size_t len, uint8_t v)
{
	for (size_t i = 0; i < len; i++)
		if (p[i] != v)
			fail_msg("byte %zu is 0x%02x, expected 0x%02x", i, p[i], v);
}

/* Wrap-around copy through a real file: text split across the end, part 2 zero-padded to
 * the next sector, nothing else touched, checksum recorded, readable after commit. */
static void test_write_wrapped(void **state)
{
	const uint64_t start = 4096, S = 61440;
	char path[64];
	struct bdev *bd = temp_bdev(start + S + 4096, 0xaa, NULL, 0, path);
	struct mda_header h, ondisk;
	struct raw_locn loc;
	uint8_t *img = malloc(start + S + 4096);
	char *text = make_text(8000, 3), *back;
	size_t blen;

	(void)state;
	assert_non_null(img);
	/* An old copy at 56320..60319: the next starts at 60416 and wraps by 6976. */
	h = header_with(start, S, 56320, 4000);
	assert_int_equal(mda_header_write(bd, &h), 0);
	assert_int_equal(mda_place_text(&h, 8000, WHAT, &loc), 0);
	assert_int_equal(loc.offset, 60416);
	assert_int_equal(mda_write_text(bd, &h, text, 8000, &loc), 0);
	assert_int_equal(loc.checksum, lvm_crc(LVM_INITIAL_CRC, text, 8000));

	pread_at(path, img, start + S + 4096, 0);
	assert_memory_equal(img + start + 60416, text, 1024);      /* part 1 to the end */
	assert_memory_equal(img + start + 512, text + 1024, 6976); /* part 2 at 512 */
	assert_bytes(img + start + 512 + 6976, 7680 - 7488, 0);    /* zero padding */
	assert_bytes(img + start + 7680, 56320 - 7680, 0xaa);      /* free space untouched */
	assert_bytes(img + start + 56320, 60416 - 56320, 0xaa);    /* old copy untouched */
	assert_bytes(img + start + S, 4096, 0xaa);                 /* nothing past the area */

	/* Not committed yet: the header on disk still names the old copy. */
	assert_int_equal(mda_header_read(bd, start, WHAT, &ondisk), 0);
	assert_int_equal(ondisk.slot[0].offset, 56320);

	assert_int_equal(mda_commit(bd, &h, &loc), 0);
	assert_int_equal(mda_header_read(bd, start, WHAT, &ondisk), 0);
	assert_int_equal(ondisk.slot[0].offset, 60416);
	assert_int_equal(mda_read_text(bd, &ondisk, WHAT, &back, &blen), 0);
	assert_int_equal(blen, 8000);
	assert_memory_equal(back, text, 8000);
	free(back);

	/* The next copy follows the wrapped part. */
	assert_int_equal(mda_place_text(&ondisk, 100, WHAT, &loc), 0);
	assert_int_equal(loc.offset, 7680);
	free(text);
	free(img);
	bdev_close(bd);
	unlink(path);
}

/* Padding is to a device sector boundary, even for an area that does not start on one. */
static void test_write_padding_device_relative(void **state)
{
	const uint64_t start = 4096 + 256, S = 8192;
	char path[64];
	struct bdev *bd = temp_bdev(16384, 0xaa, NULL, 0, path);
	struct mda_header h;
	struct raw_locn loc;
	uint8_t img[16384];
	char *text = make_text(100, 5);

	(void)state;
	mda_header_init(&h, start, S);
	assert_int_equal(mda_place_text(&h, 100, WHAT, &loc), 0);
	assert_int_equal(mda_write_text(bd, &h, text, 100, &loc), 0);
	pread_at(path, img, sizeof(img), 0);
	assert_memory_equal(img + start + 512, text, 100);
	/* Text ends at device byte 4964; zeros up to 5120. */
	assert_bytes(img + 4964, 5120 - 4964, 0);
	assert_bytes(img + 5120, 512, 0xaa);
	free(text);
	bdev_close(bd);
	unlink(path);
}

static void test_write_refuses_overlap(void **state)
{
	char path[64];
	struct bdev *bd = temp_bdev(4096 + 61440, 0, NULL, 0, path);
	struct mda_header h = header_with(4096, 61440, 1024, 2000);
	struct raw_locn loc = {.offset = 2048, .size = 100};
	char *text = make_text(100, 1);

	(void)state;
	assert_int_equal(mda_write_text(bd, &h, text, 100, &loc), -EINVAL);
	assert_msg_contains("would overwrite the committed copy");
	loc.offset = 100; /* inside the header */
	assert_int_equal(mda_write_text(bd, &h, text, 100, &loc), -EINVAL);
	loc.offset = 4096;
	loc.size = 99;
	assert_int_equal(mda_write_text(bd, &h, text, 100, &loc), -EINVAL);
	memset(&loc, 0, sizeof(loc));
	assert_int_equal(mda_commit(bd, &h, &loc), -EINVAL);
	assert_msg_contains("cannot commit an empty metadata location");
	free(text);
	bdev_close(bd);
	unlink(path);
}

/* ---- commit -------------------------------------------------------------------------------------
 */

static void test_commit_sequence(void **state)
{
	char path[64];
	struct bdev *bd = temp_bdev(4096 + 61440, 0, NULL, 0, path);
	struct mda_header h, ondisk;
	struct raw_locn loc;
	uint8_t raw[MDA_HEADER_SIZE];
	char *text = make_text(777, 9), *back;
	size_t blen;

	(void)state;
	mda_header_init(&h, 4096, 61440);
	assert_int_equal(mda_header_write(bd, &h), 0);
	for (int round = 0; round < 60; round++) {
		text[0] = (char)('A' + round % 26);
		assert_int_equal(mda_place_text(&h, 777, WHAT, &loc), 0);
		assert_int_equal(mda_write_text(bd, &h, text, 777, &loc), 0);
		assert_int_equal(mda_commit(bd, &h, &loc), 0);

		pread_at(path, raw, sizeof(raw), 4096);
		assert_int_equal(get_le64(raw + 40), loc.offset);
		assert_int_equal(get_le64(raw + 48), 777);
		assert_int_equal(get_le32(raw + 56), loc.checksum);
		assert_int_equal(get_le32(raw + 60), 0);
		assert_bytes(raw + 64, 512 - 64, 0); /* slot 1 and the rest are zero */

		assert_int_equal(mda_header_read(bd, 4096, WHAT, &ondisk), 0);
		assert_int_equal(mda_read_text(bd, &ondisk, WHAT, &back, &blen), 0);
		assert_memory_equal(back, text, 777);
		free(back);
	}
	/* Committing un-ignores the area. */
	h.slot[0].flags = RAW_LOCN_IGNORED;
	assert_int_equal(mda_place_text(&h, 777, WHAT, &loc), 0);
	assert_int_equal(loc.offset, 512);
	assert_int_equal(mda_write_text(bd, &h, text, 777, &loc), 0);
	assert_int_equal(mda_commit(bd, &h, &loc), 0);
	assert_int_equal(h.slot[0].flags, 0);
	assert_true(mda_has_text(&h));

	assert_int_equal(mda_clear(bd, &h), 0);
	pread_at(path, raw, sizeof(raw), 4096);
	assert_bytes(raw + 40, 512 - 40, 0);
	assert_int_equal(mda_header_read(bd, 4096, WHAT, &ondisk), 0);
	assert_false(mda_has_text(&ondisk));
	free(text);
	bdev_close(bd);
	unlink(path);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_decode_lvm2_headers),
	    cmocka_unit_test(test_init_matches_pvcreate),
	    cmocka_unit_test(test_header_validation),
	    cmocka_unit_test(test_read_lvm2_text),
	    cmocka_unit_test(test_read_lvm2_wrapped),
	    cmocka_unit_test(test_truncated_device),
	    cmocka_unit_test(test_no_text),
	    cmocka_unit_test(test_max_size),
	    cmocka_unit_test(test_place_doc_trace),
	    cmocka_unit_test(test_place_near_end),
	    cmocka_unit_test(test_place_lvm2_trace),
	    cmocka_unit_test(test_write_wrapped),
	    cmocka_unit_test(test_write_padding_device_relative),
	    cmocka_unit_test(test_write_refuses_overlap),
	    cmocka_unit_test(test_commit_sequence),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
