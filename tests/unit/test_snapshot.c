/* Unit tests for dm/exception_store and dm/snapshot: the COW bytes the targets write (the
 * kernel's layout, checked field by field against docs/formats/dm-snapshot.md's examples),
 * status and table lines, reload round trips, every refusal of a corrupt or truncated store,
 * table argument errors, COW-full invalidation (P) and overflow (PO), the transient store,
 * handover on reload, and a merge. Files in a temp dir on /tmp. */
#include <errno.h>
#include <inttypes.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "dm/dm.h"
#include "dm/exception_store.h"
#include "io/bdev.h"
#include "io/engine.h"
#include "util/util.h"

#include "test_dm_util.h"
#include "test_snapshot_util.h"

static int setup(void **state)
{
	unsetenv("ULVM_SNAPSHOT_COPY_AHEAD"); /* a failed test may have left it set */
	*state = senv_new("/tmp");
	return 0;
}

/* Tests of the kernel's layout for a given order of writes: without copy-ahead, which adds
 * exceptions for chunks not written yet (test_copy_ahead). Read by each new snapshot table. */
static void copy_ahead_off(void)
{
	assert_int_equal(setenv("ULVM_SNAPSHOT_COPY_AHEAD", "off", 1), 0);
}

static int teardown(void **state)
{
	senv_free(*state);
	return 0;
}

static void put32(const char *path, uint64_t off, uint32_t v)
{
	int fd = open(path, O_RDWR);
	le32 x = cpu_to_le32(v);

	assert_true(fd >= 0);
	assert_int_equal(pwrite(fd, &x, 4, (off_t)off), 4);
	close(fd);
}

static void put64(const char *path, uint64_t off, uint64_t v)
{
	int fd = open(path, O_RDWR);
	le64 x = cpu_to_le64(v);

	assert_true(fd >= 0);
	assert_int_equal(pwrite(fd, &x, 8, (off_t)off), 8);
	close(fd);
}

static uint64_t get64(const char *path, uint64_t off)
{
	le64 x;

	read_file(path, &x, 8, off);
	return le64_to_cpu(x);
}

static void fill_pattern(uint8_t *p, size_t n, uint8_t gen, uint64_t off)
{
	for (size_t i = 0; i < n; i++)
		p[i] = (uint8_t)(gen * 31 + ((off + i) >> 9) * 7 + (off + i));
}

/* Write `n` bytes of generation `gen` at `off` of md. */
static void wgen(struct senv *v, struct dm_dev *md, uint64_t off, size_t n, uint8_t gen)
{
	uint8_t *b = xbuf(n);

	fill_pattern(b, n, gen, off);
	assert_int_equal(sio(v, md, IO_OP_WRITE, off, n, b), 0);
	free(b);
}

/* md reads as generation `gen` at [off, off+n) */
static void rgen(struct senv *v, struct dm_dev *md, uint64_t off, size_t n, uint8_t gen)
{
	uint8_t *b = xbuf(n), *want = xbuf(n);

	fill_pattern(want, n, gen, off);
	assert_int_equal(sio(v, md, IO_OP_READ, off, n, b), 0);
	assert_memory_equal(b, want, n);
	free(b);
	free(want);
}

/* The first `n` bytes of the file at `path` as generation `gen` (through a linear table). */
static void fill_gen(struct senv *v, const char *path, size_t n, uint8_t gen)
{
	struct dm_dev *lin = create_dev(v->r, "lin", "0 %zu linear %s 0", n / SECTOR_SIZE, path);

	wgen(v, lin, 0, n, gen);
	assert_int_equal(dm_remove(v->r, "lin"), 0);
}

/* The doc's example: 4 KiB chunks, origin writes to chunks 10, 11, 12, 5, 0, 20, then
 * snapshot writes to 30 and 31: area 0 holds (10,2) (11,3) (12,4) (5,5) (0,6) (20,7) (30,8)
 * (31,9) and zeros; the header is SnAp 1 1 8; status 80/16384 16. Reloaded, the same. */
static void test_layout_and_reload(void **state)
{
	struct senv *v = *state;
	const char *org = sfile(v, "org", 16 * MIB), *cow = sfile(v, "cow", 8 * MIB);
	struct dm_dev *o, *s;
	static const uint64_t olds[] = {10, 11, 12, 5, 0, 20, 30, 31};
	uint8_t hdr[16], want[16] = {0x53, 0x6e, 0x41, 0x70, 1, 0, 0, 0, 1, 0, 0, 0, 8, 0, 0, 0};

	copy_ahead_off(); /* chunks 10, 11, 12 are written one after the other */
	/* origin contents: generation 1 everywhere touched */
	o = create_dev(v->r, "o", "0 32768 linear %s 0", org);
	wgen(v, o, 0, 256 * KIB, 1);
	assert_int_equal(dm_remove(v->r, "o"), 0);

	s = create_dev(v->r, "s", "0 32768 snapshot %s %s P 8", org, cow);
	o = create_dev(v->r, "o", "0 32768 snapshot-origin %s", org);
	assert_string_equal(sline(s, DM_STATUS_INFO), "16/16384 16");
	for (unsigned i = 0; i < 6; i++)
		wgen(v, o, olds[i] * 4 * KIB, 4 * KIB, 2);
	wgen(v, s, 30 * 4 * KIB, 4 * KIB, 3);
	wgen(v, s, 31 * 4 * KIB + 1024, 1024, 3); /* partial: copies the rest first */
	assert_string_equal(sline(s, DM_STATUS_INFO), "80/16384 16");

	read_file(cow, hdr, 16, 0);
	assert_memory_equal(hdr, want, 16);
	for (unsigned i = 0; i < 8; i++) {
		assert_int_equal(get64(cow, 4096 + 16 * i), olds[i]);
		assert_int_equal(get64(cow, 4096 + 16 * i + 8), 2 + i);
	}
	assert_int_equal(get64(cow, 4096 + 16 * 8 + 8), 0);

	/* views */
	for (unsigned i = 0; i < 6; i++) {
		rgen(v, o, olds[i] * 4 * KIB, 4 * KIB, 2);
		rgen(v, s, olds[i] * 4 * KIB, 4 * KIB, 1);
	}
	rgen(v, s, 30 * 4 * KIB, 4 * KIB, 3);
	rgen(v, s, 31 * 4 * KIB, 1024, 1);
	rgen(v, s, 31 * 4 * KIB + 1024, 1024, 3);
	rgen(v, s, 31 * 4 * KIB + 2048, 2048, 1);
	rgen(v, o, 30 * 4 * KIB, 8 * KIB, 1);

	/* restart: the store loads as it was */
	senv_restart(v);
	s = create_dev(v->r, "s", "0 32768 snapshot %s %s P 8", org, cow);
	o = create_dev(v->r, "o", "0 32768 snapshot-origin %s", org);
	assert_string_equal(sline(s, DM_STATUS_INFO), "80/16384 16");
	rgen(v, s, 10 * 4 * KIB, 4 * KIB, 1);
	rgen(v, s, 30 * 4 * KIB, 4 * KIB, 3);
	rgen(v, s, 31 * 4 * KIB + 1024, 1024, 3);
	rgen(v, o, 10 * 4 * KIB, 4 * KIB, 2);
	/* a new exception appends at record 8, COW chunk 10 */
	wgen(v, o, 40 * 4 * KIB, 4 * KIB, 4);
	assert_int_equal(get64(cow, 4096 + 16 * 8), 40);
	assert_int_equal(get64(cow, 4096 + 16 * 8 + 8), 10);
	rgen(v, s, 40 * 4 * KIB, 4 * KIB, 1);
}

static void test_table_lines(void **state)
{
	struct senv *v = *state;
	const char *org = sfile(v, "org", 4 * MIB), *cow = sfile(v, "cow", 1 * MIB);
	struct dm_dev *s, *o;
	char *text;
	char want[1024];

	s = create_dev(v->r, "s", "0 8192 snapshot %s %s PO 16", org, cow);
	o = create_dev(v->r, "o", "0 8192 snapshot-origin %s", org);
	assert_int_equal(dm_table_text(s, DM_STATUS_TABLE, &text), 0);
	snprintf(want, sizeof(want), "0 8192 snapshot %s %s PO 16\n", org, cow);
	assert_string_equal(text, want);
	free(text);
	assert_int_equal(dm_table_text(o, DM_STATUS_TABLE, &text), 0);
	snprintf(want, sizeof(want), "0 8192 snapshot-origin %s\n", org);
	assert_string_equal(text, want);
	free(text);
	assert_string_equal(sline(s, DM_STATUS_INFO), "32/2048 32");
	assert_int_equal(dm_remove(v->r, "s"), 0);

	/* P 0 on a fresh store: the kernel's default, 32 sectors, written to the header */
	cow = sfile(v, "cow0", 1 * MIB);
	s = create_dev(v->r, "s0", "0 8192 snapshot %s %s P 0", org, cow);
	assert_int_equal(dm_table_text(s, DM_STATUS_TABLE, &text), 0);
	snprintf(want, sizeof(want), "0 8192 snapshot %s %s P 32\n", org, cow);
	assert_string_equal(text, want);
	free(text);
	assert_int_equal(dm_remove(v->r, "s0"), 0);
	/* the header's chunk size wins over the table's */
	s = create_dev(v->r, "s0", "0 8192 snapshot %s %s P 8", org, cow);
	assert_string_equal(sline(s, DM_STATUS_INFO), "64/2048 64");
	assert_int_equal(dm_remove(v->r, "s0"), 0);

	/* transient: data from COW chunk 0, no metadata */
	cow = sfile(v, "cowN", 1 * MIB);
	s = create_dev(v->r, "sN", "0 8192 snapshot %s %s N 8", org, cow);
	assert_string_equal(sline(s, DM_STATUS_INFO), "0/2048 0");
	wgen(v, o, 0, 12 * KIB, 5);
	assert_string_equal(sline(s, DM_STATUS_INFO), "24/2048 0");
	wgen(v, s, 100 * KIB, 4 * KIB, 6);
	rgen(v, s, 100 * KIB, 4 * KIB, 6);
	assert_int_equal(dm_table_text(s, DM_STATUS_TABLE, &text), 0);
	snprintf(want, sizeof(want), "0 8192 snapshot %s %s N 8\n", org, cow);
	assert_string_equal(text, want);
	free(text);
}

static void bad_table(struct senv *v, const char *table, const char *msg_part)
{
	struct dm_dev *md;
	int r = dm_create(v->r, "bad", table, &md);

	if (!r)
		fail_msg("table accepted: %s", table);
	if (!strstr(ulvm_last_error(), msg_part))
		fail_msg("table %s: error '%s' does not say '%s'", table, ulvm_last_error(),
		         msg_part);
	assert_null(dm_find(v->r, "bad"));
}

static void test_bad_tables(void **state)
{
	struct senv *v = *state;
	const char *org = sfile(v, "org", 4 * MIB), *cow = sfile(v, "cow", 1 * MIB);
	char t[1024];

	snprintf(t, sizeof(t), "0 8192 snapshot %s %s P", org, cow);
	bad_table(v, t, "expected 4 arguments");
	snprintf(t, sizeof(t), "0 8192 snapshot %s %s X 8", org, cow);
	bad_table(v, t, "is not P, PO or N");
	snprintf(t, sizeof(t), "0 8192 snapshot %s %s PX 8", org, cow);
	bad_table(v, t, "unsupported persistent store option X");
	snprintf(t, sizeof(t), "0 8192 snapshot %s %s P 12", org, cow);
	bad_table(v, t, "chunk size 12 is not a power of 2");
	snprintf(t, sizeof(t), "0 8192 snapshot %s %s P x", org, cow);
	bad_table(v, t, "chunk size x is not a number");
	/* the kernel's feature rules */
	snprintf(t, sizeof(t), "0 8192 snapshot %s %s P 8 1 discard_passdown_origin", org, cow);
	bad_table(v, t, "discard_passdown_origin feature depends on discard_zeroes_cow");
	snprintf(t, sizeof(t), "0 8192 snapshot %s %s P 8 3 a b c", org, cow);
	bad_table(v, t, "Invalid number of feature arguments");
	snprintf(t, sizeof(t), "0 8192 snapshot %s %s P 8 1 discard_frobs", org, cow);
	bad_table(v, t, "Unrecognised feature requested");
	snprintf(t, sizeof(t), "0 8192 snapshot %s %s P 8 2 discard_zeroes_cow", org, cow);
	bad_table(v, t, "2 feature arguments announced, 1 given");
	snprintf(t, sizeof(t), "0 8192 snapshot %s %s P 8", org, org);
	bad_table(v, t, "must not be the origin");
	snprintf(t, sizeof(t), "0 8192 snapshot-merge %s %s N 8", org, cow);
	bad_table(v, t, "cannot be merged");
	snprintf(t, sizeof(t), "0 8192 snapshot-origin %s %s", org, cow);
	bad_table(v, t, "expected 1 argument");
	snprintf(t, sizeof(t), "0 8192 snapshot %s %s N 0", org, cow);
	bad_table(v, t, "chunk size not set");
	/* a COW too small for header + area 0 */
	cow = sfile(v, "tiny", 4096);
	snprintf(t, sizeof(t), "0 8192 snapshot %s %s P 8", org, cow);
	bad_table(v, t, "too small");
}

/* Each corruption of a valid store is refused with a message naming it; the origin opens. */
static void test_corrupt_stores(void **state)
{
	struct senv *v = *state;
	const char *org = sfile(v, "org", 4 * MIB), *cow = sfile(v, "cow", 1 * MIB);
	char t[1024];
	struct dm_dev *s, *o;
	int fd;

	copy_ahead_off(); /* exactly the records of the chunks written */
	snprintf(t, sizeof(t), "0 8192 snapshot %s %s P 8", org, cow);
	s = create_dev(v->r, "s", "%s", t);
	o = create_dev(v->r, "o", "0 8192 snapshot-origin %s", org);
	/* one chunk at a time, so that the records are (0,2) (1,3) (2,4) (3,5): a 16 KiB write
	 * copies its four chunks at once and they may be allocated in any order */
	for (uint64_t c = 0; c < 4; c++)
		wgen(v, o, c * 4 * KIB, 4 * KIB, 1);
	senv_restart(v);

	put32(cow, 0, 0x12345678);
	bad_table(v, t, "magic 0x12345678 is not SnAp");
	put32(cow, 0, SNAP_MAGIC);
	put32(cow, 8, 2);
	bad_table(v, t, "disk version 2");
	put32(cow, 8, 1);
	put32(cow, 12, 12);
	bad_table(v, t, "invalid on-disk chunk size 12");
	put32(cow, 12, 0);
	bad_table(v, t, "invalid on-disk chunk size 0");
	put32(cow, 12, 1u << 30);
	bad_table(v, t, "chunk size 1073741824 is too large");
	put32(cow, 12, 8);
	put64(cow, 4096 + 16 + 8, (1ull << 56) | 3);
	bad_table(v, t, "top 8 bits");
	put64(cow, 4096 + 16 + 8, 5000);
	bad_table(v, t, "beyond the COW device");
	put64(cow, 4096 + 16 + 8, 1);
	bad_table(v, t, "is a metadata area");
	put64(cow, 4096 + 16 + 8, 3);
	put64(cow, 4096 + 16, 0);
	bad_table(v, t, "origin chunk 0 has two exceptions");
	put64(cow, 4096 + 16, 1);
	/* stale records behind the end are dropped, not revived */
	put64(cow, 4096 + 16 * 6, 77);
	put64(cow, 4096 + 16 * 6 + 8, 9);
	s = create_dev(v->r, "s", "%s", t);
	assert_string_equal(sline(s, DM_STATUS_INFO), "48/2048 16");
	assert_int_equal(dm_remove(v->r, "s"), 0);
	put64(cow, 4096 + 16 * 6 + 8, 0);
	put64(cow, 4096 + 16 * 6, 0);

	/* truncated: area 0 full, the next area beyond the end */
	const char *small = sfile(v, "small", 3 * 4096);
	(void)small;
	fd = open(cow, O_RDWR);
	assert_true(fd >= 0);
	assert_int_equal(ftruncate(fd, 4096), 0);
	close(fd);
	bad_table(v, t, "truncated store");
	fd = open(cow, O_RDWR);
	assert_true(fd >= 0);
	assert_int_equal(ftruncate(fd, 1 * MIB), 0);
	close(fd);
	/* the origin still activates without the snapshot */
	o = create_dev(v->r, "o", "0 8192 snapshot-origin %s", org);
	rgen(v, o, 0, 16 * KIB, 1);
	/* an invalid header: status Invalid, I/O fails, origin fine */
	put32(cow, 4, 0);
	s = create_dev(v->r, "s", "%s", t);
	assert_string_equal(sline(s, DM_STATUS_INFO), "Invalid");
	uint8_t *b = xbuf(4096);
	assert_int_equal(sio(v, s, IO_OP_READ, 0, 4096, b), -EIO);
	free(b);
	wgen(v, o, 0, 4 * KIB, 2);
}

/* A full COW: origin writes invalidate the snapshot (header valid = 0 on disk, I/O EIO,
 * Invalid after reload); the origin and another snapshot carry on. PO: a snapshot write
 * that finds the COW full overflows (reads still work, nothing on disk). */
static void test_cow_full(void **state)
{
	struct senv *v = *state;
	const char *org = sfile(v, "org", 4 * MIB), *cow = sfile(v, "cow", 40 * KIB),
	           *cow2 = sfile(v, "cow2", 2 * MIB), *cow3 = sfile(v, "cow3", 40 * KIB);
	struct dm_dev *s, *s2, *s3, *o;
	uint8_t *b = xbuf(4096);
	char t[1024];

	fill_gen(v, org, 1 * MIB, 1);
	snprintf(t, sizeof(t), "0 8192 snapshot %s %s P 8", org, cow);
	s = create_dev(v->r, "s", "%s", t);
	s2 = create_dev(v->r, "s2", "0 8192 snapshot %s %s P 8", org, cow2);
	s3 = create_dev(v->r, "s3", "0 8192 snapshot %s %s PO 8", org, cow3);
	o = create_dev(v->r, "o", "0 8192 snapshot-origin %s", org);
	/* 10 chunks: header, area, 8 data chunks */
	for (unsigned i = 0; i < 8; i++)
		wgen(v, o, i * 4 * KIB, 4 * KIB, 2);
	assert_string_equal(sline(s, DM_STATUS_INFO), "80/80 16");
	wgen(v, o, 8 * 4 * KIB, 4 * KIB, 2);
	assert_string_equal(sline(s, DM_STATUS_INFO), "Invalid");
	assert_string_equal(sline(s3, DM_STATUS_INFO), "Invalid");
	assert_int_equal(sio(v, s, IO_OP_READ, 0, 4096, b), -EIO);
	rgen(v, o, 0, 9 * 4 * KIB, 2);
	rgen(v, s2, 0, 1 * MIB, 1);
	wgen(v, o, 100 * KIB, 8 * KIB, 3);
	rgen(v, s2, 0, 1 * MIB, 1);
	while (io_engine_inflight(v->e))
		assert_true(io_engine_poll(v->e, 1) >= 0);
	le32 valid;
	read_file(cow, &valid, 4, 4);
	assert_int_equal(le32_to_cpu(valid), 0);
	senv_restart(v);
	s = create_dev(v->r, "s", "%s", t);
	assert_string_equal(sline(s, DM_STATUS_INFO), "Invalid");
	assert_int_equal(dm_remove(v->r, "s"), 0);

	/* PO overflow by snapshot writes */
	cow3 = sfile(v, "cow4", 40 * KIB);
	s3 = create_dev(v->r, "s4", "0 8192 snapshot %s %s PO 8", org, cow3);
	for (unsigned i = 0; i < 8; i++)
		wgen(v, s3, i * 4 * KIB, 4 * KIB, 4);
	assert_int_equal(sio(v, s3, IO_OP_WRITE, 9 * 4 * KIB, 4096, b), -EIO);
	assert_string_equal(sline(s3, DM_STATUS_INFO), "Overflow");
	rgen(v, s3, 0, 8 * 4 * KIB, 4);
	assert_int_equal(dm_remove(v->r, "s4"), 0);
	s3 = create_dev(v->r, "s4", "0 8192 snapshot %s %s PO 8", org, cow3);
	assert_string_equal(sline(s3, DM_STATUS_INFO), "80/80 16");
	free(b);
}

/* The feature arguments discard_zeroes_cow and discard_passdown_origin (dm-snap.c): the
 * table prints them in the kernel's order; a discard of a whole chunk with an exception zeroes
 * the COW chunk (the exception stays), of a chunk without one copies nothing; with passdown
 * the origin's device is discarded too, under the other snapshots as well. */
static void test_discard_features(void **state)
{
	struct senv *v = *state;
	const char *org = sfile(v, "org", 4 * MIB), *cow = sfile(v, "cow", 1 * MIB),
	           *cow2 = sfile(v, "cow2", 1 * MIB), *cow3 = sfile(v, "cow3", 1 * MIB);
	struct dm_dev *s, *sp, *plain, *o;
	uint8_t *b = xbuf(4 * KIB), *zero = xbuf(4 * KIB);
	char *text, want[1024];

	memset(zero, 0, 4 * KIB);
	o = create_dev(v->r, "lin", "0 8192 linear %s 0", org);
	wgen(v, o, 0, 1 * MIB, 1);
	assert_int_equal(dm_remove(v->r, "lin"), 0);
	s = create_dev(v->r, "s", "0 8192 snapshot %s %s P 8 1 Discard_Zeroes_Cow", org, cow);
	sp = create_dev(v->r, "sp",
	                "0 8192 snapshot %s %s P 8 2 discard_passdown_origin discard_zeroes_cow",
	                org, cow2);
	plain = create_dev(v->r, "plain", "0 8192 snapshot %s %s P 8", org, cow3);
	o = create_dev(v->r, "o", "0 8192 snapshot-origin %s", org);
	assert_int_equal(dm_table_text(sp, DM_STATUS_TABLE, &text), 0);
	snprintf(want, sizeof(want),
	         "0 8192 snapshot %s %s P 8 2 discard_zeroes_cow discard_passdown_origin\n", org,
	         cow2);
	assert_string_equal(text, want);
	free(text);
	assert_int_equal(dm_table_text(s, DM_STATUS_TABLE, &text), 0);
	snprintf(want, sizeof(want), "0 8192 snapshot %s %s P 8 1 discard_zeroes_cow\n", org, cow);
	assert_string_equal(text, want);
	free(text);

	/* chunks 0..3 of the origin change: each snapshot gets 4 exceptions */
	wgen(v, o, 0, 16 * KIB, 2);
	assert_string_equal(sline(s, DM_STATUS_INFO), "48/2048 16");
	/* discard_zeroes_cow: chunk 1 (whole, an exception) reads zeros, the exception stays */
	assert_int_equal(sio(v, s, IO_OP_DISCARD, 4 * KIB, 4 * KIB, NULL), 0);
	assert_int_equal(sio(v, s, IO_OP_READ, 4 * KIB, 4 * KIB, b), 0);
	assert_memory_equal(b, zero, 4 * KIB);
	rgen(v, s, 0, 4 * KIB, 1);
	rgen(v, s, 8 * KIB, 8 * KIB, 1);
	assert_string_equal(sline(s, DM_STATUS_INFO), "48/2048 16");
	/* a part of a chunk with an exception goes to its COW chunk; a chunk without one costs
	 * nothing (no copy-out) and the origin keeps its data */
	assert_int_equal(sio(v, s, IO_OP_DISCARD, 8 * KIB, 1 * KIB, NULL), 0);
	assert_int_equal(sio(v, s, IO_OP_DISCARD, 40 * KIB, 8 * KIB, NULL), 0);
	assert_string_equal(sline(s, DM_STATUS_INFO), "48/2048 16");
	rgen(v, s, 40 * KIB, 8 * KIB, 1);
	rgen(v, o, 40 * KIB, 8 * KIB, 1);
	rgen(v, o, 0, 16 * KIB, 2);
	/* passdown: chunk 2 (an exception) is zeroed in sp's COW and discarded in the origin;
	 * the other snapshots keep their own copies */
	assert_int_equal(sio(v, sp, IO_OP_DISCARD, 8 * KIB, 4 * KIB, NULL), 0);
	assert_int_equal(sio(v, sp, IO_OP_READ, 8 * KIB, 4 * KIB, b), 0);
	assert_memory_equal(b, zero, 4 * KIB);
	assert_int_equal(sio(v, o, IO_OP_READ, 8 * KIB, 4 * KIB, b), 0);
	assert_memory_equal(b, zero, 4 * KIB);
	rgen(v, plain, 8 * KIB, 4 * KIB, 1);
	/* chunk 30, no exception anywhere: only the origin's device is discarded, so every
	 * snapshot without a copy of it reads the discarded origin (the kernel's semantics) */
	assert_int_equal(sio(v, sp, IO_OP_DISCARD, 120 * KIB, 4 * KIB, NULL), 0);
	assert_int_equal(sio(v, plain, IO_OP_READ, 120 * KIB, 4 * KIB, b), 0);
	assert_memory_equal(b, zero, 4 * KIB);
	assert_string_equal(sline(sp, DM_STATUS_INFO), "48/2048 16");
	assert_string_equal(sline(plain, DM_STATUS_INFO), "48/2048 16");
	rgen(v, o, 124 * KIB, 4 * KIB, 1);
	free(b);
	free(zero);
}

/* Reload of a snapshot table on the same COW (as lvextend does): the new table takes the
 * exceptions over at resume; the transient store keeps its table in memory across it. */
static void test_handover(void **state)
{
	struct senv *v = *state;
	const char *org = sfile(v, "org", 4 * MIB), *cow = sfile(v, "cow", 1 * MIB);
	struct dm_dev *s, *o;
	char t[1024];

	snprintf(t, sizeof(t), "0 8192 snapshot %s %s N 8", org, cow);
	s = create_dev(v->r, "s", "%s", t);
	o = create_dev(v->r, "o", "0 8192 snapshot-origin %s", org);
	wgen(v, o, 0, 64 * KIB, 1);
	wgen(v, s, 64 * KIB, 8 * KIB, 2);
	assert_int_equal(dm_load(s, t), 0);
	/* the old table is live until resume; I/O works */
	rgen(v, s, 64 * KIB, 8 * KIB, 2);
	assert_int_equal(dm_suspend(o), 0);
	assert_int_equal(dm_resume(s), 0);
	assert_int_equal(dm_resume(o), 0);
	assert_string_equal(sline(s, DM_STATUS_INFO), "144/2048 0");
	rgen(v, s, 64 * KIB, 8 * KIB, 2);
	uint8_t *z = xbuf(64 * KIB);
	memset(z, 0, 64 * KIB);
	uint8_t *b = xbuf(64 * KIB);
	assert_int_equal(sio(v, s, IO_OP_READ, 0, 64 * KIB, b), 0);
	assert_memory_equal(b, z, 64 * KIB);
	free(b);
	free(z);
}

/* snapshot-merge: the origin ends with what the snapshot showed; the store's records are
 * cleared from the end, status falls to allocated == metadata; writes during the merge. */
static void test_merge(void **state)
{
	struct senv *v = *state;
	const char *org = sfile(v, "org", 4 * MIB), *cow = sfile(v, "cow", 2 * MIB);
	struct dm_dev *s, *o;
	char t[1024];

	fill_gen(v, org, 4 * MIB, 1);
	snprintf(t, sizeof(t), "%s %s P 8", org, cow);
	s = create_dev(v->r, "s", "0 8192 snapshot %s", t);
	o = create_dev(v->r, "o", "0 8192 snapshot-origin %s", org);
	wgen(v, o, 0, 1100 * KIB, 2); /* 275 exceptions: area 0 full, area 1 started */
	wgen(v, s, 2 * MIB, 64 * KIB, 3);
	assert_string_equal(sline(s, DM_STATUS_INFO), "2352/4096 24");
	/* as lvconvert --merge: both suspended, snapshot-merge loaded on the origin */
	assert_int_equal(dm_suspend(o), 0);
	assert_int_equal(dm_suspend(s), 0);
	char mt[1200];
	snprintf(mt, sizeof(mt), "0 8192 snapshot-merge %s", t);
	assert_int_equal(dm_load(o, mt), 0);
	assert_int_equal(dm_resume(o), 0);
	assert_int_equal(dm_resume(s), 0); /* handed over: its I/O fails */
	uint8_t *b = xbuf(4096);
	assert_int_equal(sio(v, s, IO_OP_READ, 0, 4096, b), -EIO);
	free(b);
	/* a write during the merge, to a chunk still to be merged and to one without */
	wgen(v, o, 4 * KIB, 4 * KIB, 4);
	wgen(v, o, 3 * MIB, 4 * KIB, 4);
	for (int i = 0; i < 100000 && strcmp(sline(o, DM_STATUS_INFO), "16/4096 16"); i++)
		assert_true(io_engine_poll(v->e, io_engine_inflight(v->e) ? 1 : 0) >= 0);
	assert_string_equal(sline(o, DM_STATUS_INFO), "16/4096 16");
	rgen(v, o, 0, 4 * KIB, 1);
	rgen(v, o, 4 * KIB, 4 * KIB, 4);
	rgen(v, o, 8 * KIB, 2 * MIB - 8 * KIB, 1);
	rgen(v, o, 2 * MIB, 64 * KIB, 3);
	rgen(v, o, 2 * MIB + 64 * KIB, 1 * MIB - 64 * KIB, 1);
	rgen(v, o, 3 * MIB, 4 * KIB, 4);
	/* the COW: every record zero, header valid */
	for (unsigned i = 0; i < 300; i++)
		assert_int_equal(get64(cow, (i < 256 ? 4096 : 258 * 4096 - 256 * 16) + 16 * i + 8),
		                 0);
	le32 valid;
	read_file(cow, &valid, 4, 4);
	assert_int_equal(le32_to_cpu(valid), 1);
}

/* A test target over a file that holds the next read it sees until told to let it go. */
struct gate {
	struct dm_lower *lower;
	bool hold;
	struct io_req *held;
};

static int gate_ctr(struct dm_target *ti, unsigned argc, char **argv)
{
	struct gate *g = calloc(1, sizeof(*g));

	assert_int_equal(argc, 1);
	assert_non_null(g);
	ti->private = g;
	return dm_get_lower(ti, argv[0], &g->lower);
}

static void gate_dtr(struct dm_target *ti)
{
	free(ti->private);
}

static enum dm_map_result gate_map(struct dm_target *ti, struct io_req *req,
                                   struct dm_lower **lower)
{
	struct gate *g = ti->private;

	if (g->hold && req->op == IO_OP_READ) {
		g->hold = false;
		g->held = req;
		return DM_MAPIO_SUBMITTED;
	}
	*lower = g->lower;
	return DM_MAPIO_REMAPPED;
}

static int gate_message(struct dm_target *ti, unsigned argc, char **argv, struct strbuf *out)
{
	struct gate *g = ti->private;

	(void)argc;
	(void)out;
	if (!strcmp(argv[0], "hold"))
		g->hold = true;
	else if (g->held)
		dm_remap_submit(ti, g->held, g->lower);
	return 0;
}

static int gate_iterate(struct dm_target *ti, dm_iterate_devices_fn fn, void *data)
{
	struct gate *g = ti->private;

	return fn(ti, g->lower, 0, ti->len, data);
}

static const struct dm_target_type gate_target = {
    .name = "gate",
    .ctr = gate_ctr,
    .dtr = gate_dtr,
    .map = gate_map,
    .message = gate_message,
    .iterate_devices = gate_iterate,
};

static void run_idle(struct senv *v)
{
	while (io_engine_inflight(v->e) || io_engine_has_queued(v->e))
		assert_true(io_engine_poll(v->e, io_engine_inflight(v->e) ? 1 : 0) >= 0);
}

/* A snapshot read of old data still in flight on the origin holds back the origin write
 * that overwrites it, even after that write's exception is committed; nothing else waits. */
static void test_read_holds_origin_write(void **state)
{
	struct senv *v = *state;
	const char *org = sfile(v, "org", 4 * MIB), *cow = sfile(v, "cow", 1 * MIB);
	struct dm_dev *g, *s, *o;
	uint8_t *rb = xbuf(4096), *wb = xbuf(4096), *old = xbuf(4096), *other = xbuf(4096);
	struct treq rd, wr, w2;
	char *res;

	assert_int_equal(dm_register_target(&gate_target), 0);
	g = create_dev(v->r, "g", "0 8192 gate %s", org);
	wgen(v, g, 0, 64 * KIB, 1);
	s = create_dev(v->r, "s", "0 8192 snapshot g %s P 8", cow);
	o = create_dev(v->r, "o", "0 8192 snapshot-origin g");
	assert_int_equal(dm_message(g, 0, "hold", &res), 0);
	free(res);
	treq_init(&rd, IO_OP_READ, 0, 4096, rb);
	dm_submit(s, &rd.req); /* goes to the origin and is held there */
	fill_random(wb, 4096);
	treq_init(&wr, IO_OP_WRITE, 0, 4096, wb);
	dm_submit(o, &wr.req);
	fill_random(other, 4096);
	treq_init(&w2, IO_OP_WRITE, 32 * KIB, 4096, other);
	dm_submit(o, &w2.req); /* another chunk: does not wait */
	run_idle(v);
	assert_int_equal(w2.calls, 1);
	assert_int_equal(wr.calls, 0);
	assert_string_equal(sline(s, DM_STATUS_INFO), "32/2048 16"); /* both committed */
	assert_int_equal(rd.calls, 0);
	assert_int_equal(dm_message(g, 0, "release", &res), 0);
	free(res);
	spoll_until(v, &wr.calls);
	assert_int_equal(rd.calls, 1);
	assert_int_equal(rd.result, 0);
	assert_int_equal(wr.result, 0);
	fill_pattern(old, 4096, 1, 0);
	assert_memory_equal(rb, old, 4096);
	rgen(v, s, 0, 4096, 1);
	assert_int_equal(sio(v, o, IO_OP_READ, 0, 4096, rb), 0);
	assert_memory_equal(rb, wb, 4096);
	assert_int_equal(dm_remove(v->r, "o"), 0);
	assert_int_equal(dm_remove(v->r, "s"), 0);
	assert_int_equal(dm_remove(v->r, "g"), 0);
	dm_unregister_target(&gate_target);
	free(rb);
	free(wb);
	free(old);
	free(other);
}

/* Sequential origin writes, one at a time: the chunks after them are copied ahead (more
 * allocated than written, within a window of half the run), as ordinary exceptions that
 * reload and read back; a chunk copied ahead takes no new COW chunk when written; off, the
 * kernel's count exactly; a COW sized for the writes is never overflowed by copy-ahead. */
static void test_copy_ahead(void **state)
{
	struct senv *v = *state;
	const char *org = sfile(v, "org", 4 * MIB), *cow = sfile(v, "cow", 2 * MIB);
	const char *cow_off = sfile(v, "cowoff", 2 * MIB), *cow_exact = sfile(v, "cowx", 1 * MIB);
	struct dm_dev *s, *o;
	uint64_t a, total, meta;
	char t[1024];

	fill_gen(v, org, 4 * MIB, 1);
	snprintf(t, sizeof(t), "0 8192 snapshot %s %s P 8", org, cow);
	s = create_dev(v->r, "s", "%s", t);
	o = create_dev(v->r, "o", "0 8192 snapshot-origin %s", org);
	for (unsigned c = 0; c < 64; c++)
		wgen(v, o, c * 4 * KIB, 4 * KIB, 2);
	/* the chunks ahead are allocated (and counted) at once, but copied and committed in
	 * the background: the last write may complete before they are on the COW */
	run_idle(v);
	assert_int_equal(
	    sscanf(sline(s, DM_STATUS_INFO), "%" SCNu64 "/%" SCNu64 " %" SCNu64, &a, &total, &meta),
	    3);
	assert_int_equal(total, 4096);
	assert_int_equal(meta, 16);
	/* header + area + 64 written chunks, and some ahead (at most half the run) */
	assert_true(a > (2 + 64) * 8);
	assert_true(a <= (2 + 64 + 32) * 8);
	uint64_t ahead = a / 8 - 2 - 64;
	/* one record per chunk and one per COW chunk, in any order: the copies of a window
	 * finish (and are committed) in whatever order the engine completes them, as in the
	 * kernel, so neither the origin chunks nor the COW chunks need to be in sequence */
	bool seen[128] = {false}, used[128] = {false};
	for (uint64_t i = 0; i < 64 + ahead; i++) {
		uint64_t old = get64(cow, 4096 + 16 * i), new = get64(cow, 4096 + 16 * i + 8);

		assert_true(old < 64 + ahead && !seen[old]);
		seen[old] = true;
		assert_true(new >= 2 && new < 2 + 64 + ahead && !used[new - 2]);
		used[new - 2] = true;
	}
	assert_int_equal(get64(cow, 4096 + 16 * (64 + ahead) + 8), 0);
	rgen(v, s, 0, 4 * MIB, 1);
	rgen(v, o, 0, 256 * KIB, 2);
	rgen(v, o, 256 * KIB, 4 * MIB - 256 * KIB, 1);

	/* reloaded: the same exceptions; the next chunk was copied already and takes none */
	senv_restart(v);
	s = create_dev(v->r, "s", "%s", t);
	o = create_dev(v->r, "o", "0 8192 snapshot-origin %s", org);
	char want[64];
	snprintf(want, sizeof(want), "%" PRIu64 "/4096 16", a);
	assert_string_equal(sline(s, DM_STATUS_INFO), want);
	wgen(v, o, 64 * 4 * KIB, 4 * KIB, 3);
	assert_string_equal(sline(s, DM_STATUS_INFO), want);
	rgen(v, s, 0, 4 * MIB, 1);
	rgen(v, o, 64 * 4 * KIB, 4 * KIB, 3);
	assert_int_equal(dm_remove(v->r, "o"), 0);
	assert_int_equal(dm_remove(v->r, "s"), 0);

	/* off: exactly the chunks written */
	copy_ahead_off();
	s = create_dev(v->r, "s", "0 8192 snapshot %s %s P 8", org, cow_off);
	unsetenv("ULVM_SNAPSHOT_COPY_AHEAD");
	o = create_dev(v->r, "o", "0 8192 snapshot-origin %s", org);
	for (unsigned c = 100; c < 164; c++)
		wgen(v, o, c * 4 * KIB, 4 * KIB, 4);
	assert_string_equal(sline(s, DM_STATUS_INFO), "528/4096 16");
	assert_int_equal(dm_remove(v->r, "o"), 0);
	assert_int_equal(dm_remove(v->r, "s"), 0);

	/* a COW of 256 chunks holds 254 exceptions: 254 chunks written in sequence fill it
	 * without going invalid (copy-ahead leaves the last eighth alone); one more does */
	s = create_dev(v->r, "s", "0 8192 snapshot %s %s P 8", org, cow_exact);
	o = create_dev(v->r, "o", "0 8192 snapshot-origin %s", org);
	for (unsigned c = 300; c < 300 + 254; c++)
		wgen(v, o, c * 4 * KIB, 4 * KIB, 5);
	assert_string_equal(sline(s, DM_STATUS_INFO), "2048/2048 16");
	rgen(v, s, 300 * 4 * KIB, 254 * 4 * KIB, 1);
	wgen(v, o, 1000 * 4 * KIB, 4 * KIB, 5);
	assert_string_equal(sline(s, DM_STATUS_INFO), "Invalid");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test_setup_teardown(test_layout_and_reload, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_table_lines, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_bad_tables, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_corrupt_stores, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_cow_full, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_discard_features, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_handover, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_merge, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_read_holds_origin_write, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_copy_ahead, setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
