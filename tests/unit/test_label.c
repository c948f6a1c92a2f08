/* Unit tests for lvm/label: decoding real LVM2 labels, byte-exact encoding, the scan rules
 * of docs/formats/lvm2-label.md ("Reading a label"), corruption handling, and
 * label_write/label_wipe on a file. */
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

#include "lvm/label.h"

#include "test_fixture.h"

/* ---- helpers ------------------------------------------------------------------------------ */

static void fix_crc(uint8_t *sec)
{
	put_le32(sec + 16, lvm_crc(LVM_INITIAL_CRC, sec + 20, 492));
}

static const char *UUID_A = "T2WmsxMgYDSQwJZ6tp6WOztst8hV1g1N";

static struct pv_label sample_label(void)
{
	struct pv_label l;

	memset(&l, 0, sizeof(l));
	l.sector = 1;
	memcpy(l.pv_uuid, UUID_A, UUID_LEN + 1);
	l.device_size = 67108864;
	l.data_areas[0] = (struct disk_locn){1048576, 0};
	l.n_data_areas = 1;
	l.mdas[0] = (struct disk_locn){4096, 1044480};
	l.n_mdas = 1;
	l.ext_version = 2;
	return l;
}

static void assert_labels_equal(const struct pv_label *a, const struct pv_label *b)
{
	assert_int_equal(a->sector, b->sector);
	assert_string_equal(a->pv_uuid, b->pv_uuid);
	assert_int_equal(a->device_size, b->device_size);
	assert_int_equal(a->n_data_areas, b->n_data_areas);
	assert_int_equal(a->n_mdas, b->n_mdas);
	assert_int_equal(a->n_bootloader_areas, b->n_bootloader_areas);
	for (unsigned i = 0; i < a->n_data_areas; i++) {
		assert_int_equal(a->data_areas[i].offset, b->data_areas[i].offset);
		assert_int_equal(a->data_areas[i].size, b->data_areas[i].size);
	}
	for (unsigned i = 0; i < a->n_mdas; i++) {
		assert_int_equal(a->mdas[i].offset, b->mdas[i].offset);
		assert_int_equal(a->mdas[i].size, b->mdas[i].size);
	}
	for (unsigned i = 0; i < a->n_bootloader_areas; i++) {
		assert_int_equal(a->bootloader_areas[i].offset, b->bootloader_areas[i].offset);
		assert_int_equal(a->bootloader_areas[i].size, b->bootloader_areas[i].size);
	}
	assert_int_equal(a->ext_version, b->ext_version);
	assert_int_equal(a->ext_flags, b->ext_flags);
}

/* ---- real LVM2 labels ------------------------------------------------------------------- */

static void test_decode_lvm2_orphan(void **state)
{
	size_t len;
	uint8_t *buf = fixture_load("lvm2-pv-label.bin", &len);
	struct pv_label l;

	(void)state;
	assert_int_equal(label_decode(buf, LABEL_SCAN_SIZE, "/dev/test", &l), 0);
	assert_int_equal(l.sector, 1);
	assert_string_equal(l.pv_uuid, UUID_A);
	assert_int_equal(l.device_size, 67108864);
	assert_int_equal(l.n_data_areas, 1);
	assert_int_equal(l.data_areas[0].offset, 1048576);
	assert_int_equal(l.data_areas[0].size, 0);
	assert_int_equal(l.n_mdas, 1);
	assert_int_equal(l.mdas[0].offset, 4096);
	assert_int_equal(l.mdas[0].size, 1044480);
	assert_int_equal(l.ext_version, 2);
	assert_int_equal(l.ext_flags, 0);
	assert_int_equal(l.n_bootloader_areas, 0);
	free(buf);
}

static void test_decode_lvm2_two_mdas(void **state)
{
	size_t len;
	uint8_t *buf = fixture_load("lvm2-pv-2mda-label.bin", &len);
	struct pv_label l;

	(void)state;
	assert_int_equal(label_decode(buf, len, "/dev/test", &l), 0);
	assert_string_equal(l.pv_uuid, "737PKBb2ta0hNZt8OJ1948CiAGbSFbiO");
	assert_int_equal(l.n_mdas, 2);
	assert_int_equal(l.mdas[0].offset, 4096);
	assert_int_equal(l.mdas[0].size, 1044480);
	assert_int_equal(l.mdas[1].offset, 66060288);
	assert_int_equal(l.mdas[1].size, 1048576);
	assert_int_equal(l.n_bootloader_areas, 0);
	free(buf);
}

static void test_decode_lvm2_bootloader(void **state)
{
	size_t len;
	uint8_t *buf = fixture_load("lvm2-pv-bootloader-label.bin", &len);
	struct pv_label l;

	(void)state;
	assert_int_equal(label_decode(buf, len, "/dev/test", &l), 0);
	assert_int_equal(l.data_areas[0].offset, 2097152);
	assert_int_equal(l.n_bootloader_areas, 1);
	assert_int_equal(l.bootloader_areas[0].offset, 1048576);
	assert_int_equal(l.bootloader_areas[0].size, 1048576);
	free(buf);
}

static void test_decode_lvm2_in_vg(void **state)
{
	size_t len;
	uint8_t *buf = fixture_load("lvm2-vg-head.bin", &len);
	struct pv_label l;

	(void)state;
	assert_int_equal(label_decode(buf, LABEL_SCAN_SIZE, "/dev/test", &l), 0);
	assert_int_equal(l.ext_flags, PV_EXT_USED);
	free(buf);
}

/* Re-encoding what LVM2 wrote must reproduce its sector byte for byte. */
static void test_encode_matches_lvm2(void **state)
{
	static const char *const names[] = {"lvm2-pv-label.bin", "lvm2-pv-2mda-label.bin",
	                                    "lvm2-pv-bootloader-label.bin", "lvm2-vg-head.bin",
	                                    "lvm2-wrapped-mda.bin"};

	(void)state;
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		size_t len;
		uint8_t *buf = fixture_load(names[i], &len);
		uint8_t sec[SECTOR_SIZE];
		struct pv_label l;

		assert_int_equal(label_decode(buf, LABEL_SCAN_SIZE, names[i], &l), 0);
		assert_int_equal(label_encode(&l, sec), 0);
		if (memcmp(sec, buf + SECTOR_SIZE, SECTOR_SIZE) != 0)
			fail_msg("%s: re-encoded label differs from LVM2's", names[i]);
		free(buf);
	}
}

/* ---- encoding ------------------------------------------------------------------------------ */

static void test_roundtrip(void **state)
{
	struct pv_label l = sample_label(), d;
	uint8_t win[LABEL_SCAN_SIZE] = {0};

	(void)state;
	l.data_areas[1] = (struct disk_locn){8 << 20, 4096};
	l.n_data_areas = 2;
	l.mdas[1] = (struct disk_locn){66060288, 1048576};
	l.n_mdas = 2;
	l.ext_flags = PV_EXT_USED;
	l.bootloader_areas[0] = (struct disk_locn){1048576, 1048576};
	l.bootloader_areas[1] = (struct disk_locn){3 << 20, 512};
	l.n_bootloader_areas = 2;
	assert_int_equal(label_encode(&l, win + SECTOR_SIZE), 0);
	assert_int_equal(label_decode(win, sizeof(win), "/dev/test", &d), 0);
	assert_labels_equal(&l, &d);
}

static void test_layout(void **state)
{
	struct pv_label l = sample_label();
	uint8_t sec[SECTOR_SIZE];

	(void)state;
	assert_int_equal(label_encode(&l, sec), 0);
	assert_memory_equal(sec, "LABELONE", 8);
	assert_int_equal(sec[8], 1);
	assert_int_equal(get_le32(sec + 20), 32);
	assert_memory_equal(sec + 24, "LVM2 001", 8);
	assert_int_equal(get_le32(sec + 16), lvm_crc(LVM_INITIAL_CRC, sec + 20, 492));
	assert_int_equal(get_le32(sec + 136), 2); /* extension version after the two lists */
	for (int i = 144 + 16; i < 512; i++)
		assert_int_equal(sec[i], 0);
}

static void test_max_lists_fit(void **state)
{
	struct pv_label l = sample_label(), d;
	uint8_t win[LABEL_SCAN_SIZE] = {0};

	(void)state;
	for (unsigned i = 0; i < LABEL_MAX_AREAS; i++) {
		l.data_areas[i] = (struct disk_locn){(i + 1) << 20, i};
		l.mdas[i] = (struct disk_locn){(i + 1) << 12, 1 << 20};
		l.bootloader_areas[i] = (struct disk_locn){(i + 100) << 20, 1 << 20};
	}
	l.n_data_areas = l.n_mdas = l.n_bootloader_areas = LABEL_MAX_AREAS;
	assert_int_equal(label_encode(&l, win + SECTOR_SIZE), 0);
	assert_int_equal(label_decode(win, sizeof(win), "/dev/test", &d), 0);
	assert_labels_equal(&l, &d);
}

static void test_encode_refuses(void **state)
{
	struct pv_label l;
	uint8_t sec[SECTOR_SIZE];

	(void)state;
	l = sample_label();
	l.n_mdas = LABEL_MAX_AREAS + 1;
	assert_int_equal(label_encode(&l, sec), -EINVAL);
	l = sample_label();
	l.mdas[0].offset = 0; /* would terminate the list */
	assert_int_equal(label_encode(&l, sec), -EINVAL);
	l = sample_label();
	l.sector = 4;
	assert_int_equal(label_encode(&l, sec), -EINVAL);
	l = sample_label();
	l.pv_uuid[5] = '-';
	assert_int_equal(label_encode(&l, sec), -EINVAL);
}

/* ---- scanning rules ------------------------------------------------------------------------- */

static void test_no_label(void **state)
{
	uint8_t win[LABEL_SCAN_SIZE] = {0};
	struct pv_label l;

	(void)state;
	ulvm_clear_error();
	assert_int_equal(label_decode(win, sizeof(win), "/dev/test", &l), -ENOENT);
	assert_null(ulvm_last_error());
	assert_int_equal(label_decode(win, 100, "/dev/test", &l), -ENOENT);
}

static void test_label_in_sector_3(void **state)
{
	struct pv_label l = sample_label(), d;
	uint8_t win[LABEL_SCAN_SIZE] = {0};

	(void)state;
	l.sector = 3;
	assert_int_equal(label_encode(&l, win + 3 * SECTOR_SIZE), 0);
	assert_int_equal(label_decode(win, sizeof(win), "/dev/test", &d), 0);
	assert_int_equal(d.sector, 3);
	assert_string_equal(d.pv_uuid, UUID_A);
	/* Only the first 2048 bytes count. */
	assert_int_equal(label_decode(win, 3 * SECTOR_SIZE, "/dev/test", &d), -ENOENT);
}

/* LVM2's own sector moved to sector 3 with sector_xl and CRC fixed (doc 4.2, verified). */
static void test_lvm2_label_moved(void **state)
{
	size_t len;
	uint8_t *buf = fixture_load("lvm2-pv-label.bin", &len);
	uint8_t win[LABEL_SCAN_SIZE] = {0};
	struct pv_label d;

	(void)state;
	memcpy(win + 3 * SECTOR_SIZE, buf + SECTOR_SIZE, SECTOR_SIZE);
	put_le64(win + 3 * SECTOR_SIZE + 8, 3);
	fix_crc(win + 3 * SECTOR_SIZE);
	assert_int_equal(label_decode(win, sizeof(win), "/dev/test", &d), 0);
	assert_int_equal(d.sector, 3);
	assert_string_equal(d.pv_uuid, UUID_A);
	free(buf);
}

static void test_wrong_sector_xl(void **state)
{
	struct pv_label l = sample_label(), d;
	uint8_t win[LABEL_SCAN_SIZE] = {0};

	(void)state;
	/* A valid sector-1 label copied to sector 2 is not a label for sector 2. */
	assert_int_equal(label_encode(&l, win + 2 * SECTOR_SIZE), 0);
	assert_int_equal(label_decode(win, sizeof(win), "/dev/sdb", &d), -EINVAL);
	assert_msg_contains("pv /dev/sdb: label in sector 2: records sector 1");
	/* ... and it is ignored when the real one is in a later sector. */
	l.sector = 3;
	l.device_size = 12345;
	assert_int_equal(label_encode(&l, win + 3 * SECTOR_SIZE), 0);
	assert_int_equal(label_decode(win, sizeof(win), "/dev/sdb", &d), 0);
	assert_int_equal(d.sector, 3);
	assert_int_equal(d.device_size, 12345);
}

static void test_first_valid_wins(void **state)
{
	struct pv_label l = sample_label(), d;
	uint8_t win[LABEL_SCAN_SIZE] = {0};

	(void)state;
	assert_int_equal(label_encode(&l, win + SECTOR_SIZE), 0);
	l.sector = 2;
	l.device_size = 999;
	assert_int_equal(label_encode(&l, win + 2 * SECTOR_SIZE), 0);
	assert_int_equal(label_decode(win, sizeof(win), "/dev/test", &d), 0);
	assert_int_equal(d.sector, 1);
	assert_int_equal(d.device_size, 67108864);
}

static void test_bad_crc(void **state)
{
	size_t len;
	uint8_t *buf = fixture_load("lvm2-pv-label.bin", &len);
	uint8_t *sec = buf + SECTOR_SIZE;
	struct pv_label d;
	char expect[160];

	(void)state;
	sec[40] ^= 0x01; /* inside the UUID */
	snprintf(expect, sizeof(expect),
	         "pv /dev/sdb: label in sector 1: checksum mismatch (stored 0x%08x, computed "
	         "0x%08x)",
	         get_le32(sec + 16), lvm_crc(LVM_INITIAL_CRC, sec + 20, 492));
	assert_int_equal(label_decode(buf, LABEL_SCAN_SIZE, "/dev/sdb", &d), -EINVAL);
	assert_string_equal(ulvm_last_error(), expect);
	assert_string_equal(expect, "pv /dev/sdb: label in sector 1: checksum mismatch (stored "
	                            "0x64cdc95e, computed 0xfa2be017)");
	free(buf);
}

static void test_corrupt_then_valid(void **state)
{
	struct pv_label l = sample_label(), d;
	uint8_t win[LABEL_SCAN_SIZE] = {0};

	(void)state;
	l.sector = 0;
	assert_int_equal(label_encode(&l, win), 0);
	win[100] ^= 0xff; /* corrupt the sector-0 label */
	l.sector = 1;
	assert_int_equal(label_encode(&l, win + SECTOR_SIZE), 0);
	assert_int_equal(label_decode(win, sizeof(win), "/dev/test", &d), 0);
	assert_int_equal(d.sector, 1);
}

/* Builds a sector: LABELONE header with the pv_header at `off`, then raw little-endian
 * u64 words (list entries are offset/size pairs) from off + 40. */
static void raw_label(uint8_t *sec, uint32_t off, const uint64_t *words, size_t n)
{
	memset(sec, 0, SECTOR_SIZE);
	memcpy(sec, "LABELONE", 8);
	put_le64(sec + 8, 1);
	put_le32(sec + 20, off);
	memcpy(sec + 24, "LVM2 001", 8);
	memcpy(sec + off, UUID_A, UUID_LEN);
	put_le64(sec + off + 32, 1 << 30);
	for (size_t i = 0; i < n && off + 40 + 8 * i + 8 <= SECTOR_SIZE; i++)
		put_le64(sec + off + 40 + 8 * i, words[i]);
	fix_crc(sec);
}

static void expect_corrupt(uint32_t off, const uint64_t *words, size_t n, const char *why)
{
	uint8_t win[LABEL_SCAN_SIZE] = {0};
	struct pv_label d;

	raw_label(win + SECTOR_SIZE, off, words, n);
	assert_int_equal(label_decode(win, sizeof(win), "/dev/test", &d), -EINVAL);
	assert_msg_contains(why);
}

static void test_unterminated_lists(void **state)
{
	/* pv_header at 400: room for four entries before the end of the sector. */
	static const uint64_t data_open[] = {1 << 20, 0, 2 << 20, 0, 3 << 20, 0, 4 << 20, 0};
	static const uint64_t mda_open[] = {1 << 20, 0, 0, 0, 4096, 1 << 20, 8192, 1 << 20};
	/* pv_header at 360: both lists end, the bootloader list does not. */
	static const uint64_t boot_open[] = {1 << 20, 0, 0,       0,       4096,    1 << 20, 0,
	                                     0,       2, 1 << 20, 1 << 20, 3 << 20, 1 << 20};

	(void)state;
	expect_corrupt(400, data_open, 8,
	               "pv /dev/test: label in sector 1: data area list is not terminated inside "
	               "the sector");
	expect_corrupt(400, mda_open, 8, "metadata area list is not terminated inside the sector");
	expect_corrupt(360, boot_open, 13,
	               "bootloader area list is not terminated inside the sector");
}

static void test_extension_overrun(void **state)
{
	uint64_t w[4] = {0};
	uint8_t win[LABEL_SCAN_SIZE] = {0};
	uint8_t *sec = win + SECTOR_SIZE;
	struct pv_label d;

	(void)state;
	/* pv_header at 436: both lists are empty and the extension's version lands in
	 * bytes 508..511, its flags would be past the end. */
	raw_label(sec, 436, w, 4);
	put_le32(sec + 508, 2);
	fix_crc(sec);
	assert_int_equal(label_decode(win, sizeof(win), "/dev/test", &d), -EINVAL);
	assert_msg_contains("pv_header extension overruns the sector");
	/* At 440 the lists end exactly at byte 512: no extension at all. */
	raw_label(sec, 440, w, 4);
	assert_int_equal(label_decode(win, sizeof(win), "/dev/test", &d), 0);
	assert_int_equal(d.ext_version, 0);
	assert_int_equal(d.n_data_areas, 0);
}

static void test_too_many_areas(void **state)
{
	uint64_t w[2 * (LABEL_MAX_AREAS + 1) + 2] = {0};

	(void)state;
	for (size_t i = 0; i <= LABEL_MAX_AREAS; i++)
		w[2 * i] = (i + 1) << 20;
	expect_corrupt(32, w, sizeof(w) / sizeof(w[0]),
	               "more than 8 entries in the data area list");
}

static void test_ext_version_0(void **state)
{
	uint8_t win[LABEL_SCAN_SIZE] = {0};
	uint64_t e[16] = {0};
	uint8_t sec[SECTOR_SIZE];
	struct pv_label d;

	(void)state;
	e[0] = 1 << 20;
	e[4] = 4096, e[5] = 1044480;
	raw_label(win + SECTOR_SIZE, 32, e, 16); /* extension version 0: an old label */
	assert_int_equal(label_decode(win, sizeof(win), "/dev/test", &d), 0);
	assert_int_equal(d.ext_version, 0);
	assert_int_equal(d.n_mdas, 1);
	assert_int_equal(label_encode(&d, sec), 0);
	assert_int_equal(get_le32(sec + 136), 2);
}

static void test_bad_uuid(void **state)
{
	struct pv_label l = sample_label(), d;
	uint8_t win[LABEL_SCAN_SIZE] = {0};

	(void)state;
	assert_int_equal(label_encode(&l, win + SECTOR_SIZE), 0);
	win[SECTOR_SIZE + 40] = '-';
	fix_crc(win + SECTOR_SIZE);
	assert_int_equal(label_decode(win, sizeof(win), "/dev/test", &d), -EINVAL);
	assert_msg_contains("invalid character 0x2d in the PV UUID");
}

static void test_bad_offset_and_type(void **state)
{
	struct pv_label l = sample_label(), d;
	uint8_t win[LABEL_SCAN_SIZE] = {0};
	uint8_t *sec = win + SECTOR_SIZE;

	(void)state;
	assert_int_equal(label_encode(&l, sec), 0);
	put_le32(sec + 20, 490);
	fix_crc(sec);
	assert_int_equal(label_decode(win, sizeof(win), "/dev/test", &d), -EINVAL);
	assert_msg_contains("pv_header offset 490 is out of range");
	put_le32(sec + 20, 8);
	fix_crc(sec);
	assert_int_equal(label_decode(win, sizeof(win), "/dev/test", &d), -EINVAL);

	assert_int_equal(label_encode(&l, sec), 0);
	memcpy(sec + 24,
	       "LVM1\x01"
	       "001",
	       8);
	fix_crc(sec);
	assert_int_equal(label_decode(win, sizeof(win), "/dev/test", &d), -EINVAL);
	assert_msg_contains("unsupported label type \"LVM1\\x01001\"");
}

/* A non-standard pv_header offset is accepted (LVM2 reads offset_xl as given). */
static void test_other_offset(void **state)
{
	struct pv_label l = sample_label(), d;
	uint8_t win[LABEL_SCAN_SIZE] = {0};
	uint8_t *sec = win + SECTOR_SIZE;
	uint8_t tmp[SECTOR_SIZE];

	(void)state;
	assert_int_equal(label_encode(&l, tmp), 0);
	memcpy(sec, tmp, 32);
	memcpy(sec + 64, tmp + 32, SECTOR_SIZE - 64);
	put_le32(sec + 20, 64);
	fix_crc(sec);
	assert_int_equal(label_decode(win, sizeof(win), "/dev/test", &d), 0);
	assert_labels_equal(&l, &d);
}

/* ---- label_write / label_read / label_wipe on a file ------------------------------------------
 */

static struct bdev *temp_bdev(size_t size, char *path)
{
	struct bdev *bd;
	int fd;

	strcpy(path, "/var/tmp/ulvm-label-XXXXXX");
	fd = mkstemp(path);
	assert_true(fd >= 0);
	assert_int_equal(ftruncate(fd, (off_t)size), 0);
	close(fd);
	assert_int_equal(bdev_open(path, 0, &bd), 0);
	return bd;
}

static void pwrite_at(const char *path, const void *buf, size_t len, off_t off)
{
	int fd = open(path, O_WRONLY);

	assert_true(fd >= 0);
	assert_int_equal(pwrite(fd, buf, len, off), (ssize_t)len);
	close(fd);
}

static void pread_at(const char *path, void *buf, size_t len, off_t off)
{
	int fd = open(path, O_RDONLY);

	assert_true(fd >= 0);
	assert_int_equal(pread(fd, buf, len, off), (ssize_t)len);
	close(fd);
}

static void test_write_read_wipe(void **state)
{
	char path[64];
	struct bdev *bd = temp_bdev(1 << 20, path);
	struct pv_label l = sample_label(), d;
	uint8_t junk[SECTOR_SIZE], win[LABEL_SCAN_SIZE];
	static const uint8_t zero[SECTOR_SIZE];

	(void)state;
	/* Stale label-looking sectors at 0 and 2; an unrelated pattern in sector 3. */
	memset(junk, 0x5a, sizeof(junk));
	memcpy(junk, "LABELONE", 8);
	pwrite_at(path, junk, SECTOR_SIZE, 0);
	pwrite_at(path, junk, SECTOR_SIZE, 2 * SECTOR_SIZE);
	memset(junk, 0x77, sizeof(junk));
	pwrite_at(path, junk, SECTOR_SIZE, 3 * SECTOR_SIZE);

	assert_int_equal(label_write(bd, &l), 0);
	pread_at(path, win, sizeof(win), 0);
	assert_memory_equal(win, zero, SECTOR_SIZE);
	assert_memory_equal(win + 2 * SECTOR_SIZE, zero, SECTOR_SIZE);
	assert_memory_equal(win + 3 * SECTOR_SIZE, junk, SECTOR_SIZE);
	assert_int_equal(label_read(bd, &d), 0);
	assert_labels_equal(&l, &d);

	/* Moving the label to sector 3 clears sector 1. */
	l.sector = 3;
	assert_int_equal(label_write(bd, &l), 0);
	pread_at(path, win, sizeof(win), 0);
	assert_memory_equal(win + SECTOR_SIZE, zero, SECTOR_SIZE);
	assert_int_equal(label_read(bd, &d), 0);
	assert_int_equal(d.sector, 3);

	assert_int_equal(label_wipe(bd), 0);
	assert_int_equal(label_read(bd, &d), -ENOENT);
	pread_at(path, win, sizeof(win), 0);
	for (size_t i = 0; i < sizeof(win); i++)
		assert_int_equal(win[i], 0);
	bdev_close(bd);
	unlink(path);
}

static void test_read_tiny_device(void **state)
{
	char path[64];
	struct bdev *bd = temp_bdev(1024, path);
	struct pv_label l = sample_label(), d;

	(void)state;
	assert_int_equal(label_write(bd, &l), 0);
	assert_int_equal(label_read(bd, &d), 0);
	assert_int_equal(d.sector, 1);
	l.sector = 2; /* beyond the device */
	assert_true(label_write(bd, &l) < 0);
	bdev_close(bd);
	unlink(path);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_decode_lvm2_orphan),
	    cmocka_unit_test(test_decode_lvm2_two_mdas),
	    cmocka_unit_test(test_decode_lvm2_bootloader),
	    cmocka_unit_test(test_decode_lvm2_in_vg),
	    cmocka_unit_test(test_encode_matches_lvm2),
	    cmocka_unit_test(test_roundtrip),
	    cmocka_unit_test(test_layout),
	    cmocka_unit_test(test_max_lists_fit),
	    cmocka_unit_test(test_encode_refuses),
	    cmocka_unit_test(test_no_label),
	    cmocka_unit_test(test_label_in_sector_3),
	    cmocka_unit_test(test_lvm2_label_moved),
	    cmocka_unit_test(test_wrong_sector_xl),
	    cmocka_unit_test(test_first_valid_wins),
	    cmocka_unit_test(test_bad_crc),
	    cmocka_unit_test(test_corrupt_then_valid),
	    cmocka_unit_test(test_unterminated_lists),
	    cmocka_unit_test(test_extension_overrun),
	    cmocka_unit_test(test_too_many_areas),
	    cmocka_unit_test(test_ext_version_0),
	    cmocka_unit_test(test_bad_uuid),
	    cmocka_unit_test(test_bad_offset_and_type),
	    cmocka_unit_test(test_other_offset),
	    cmocka_unit_test(test_write_read_wipe),
	    cmocka_unit_test(test_read_tiny_device),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
