/* Unit tests for the thin-pool and thin targets (dm/thin.c): table parsing and refusals,
 * table and status lines as the kernel prints them, pool messages, the basic data path
 * (first writes, zeroes for unmapped blocks, discard, FLUSH), running out of data space in
 * both modes and growing the pool while writes are queued, an all-zero metadata device
 * formatted on first load, needs_check after a metadata error, and thin_check (ulvm's and
 * 0.9.0's) clean on the metadata after.
 * Files live in a temp directory on /tmp. */
#include <errno.h>
#include <inttypes.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cmocka.h>

#include "pdata/btree.h"
#include "pdata/thin_metadata.h"
#include "test_thin_util.h"

#define KIB   1024u
#define MIB   (1024u * KIB)
#define BLOCK (64 * KIB) /* 128 sectors */

static int setup(void **state)
{
	*state = tenv_new("/tmp", 4 * MIB, 16 * MIB);
	return 0;
}

static int teardown(void **state)
{
	tenv_free(*state);
	return 0;
}

static struct dm_dev *make_pool(struct tenv *v, uint64_t sectors, const char *features)
{
	return create_dev(v->r, "pool", "0 %" PRIu64 " thin-pool %s %s 128 16%s%s", sectors,
	                  v->meta, v->data, features ? " " : "", features ? features : "");
}

static void expect_refused(struct tenv *v, const char *table, const char *what)
{
	struct dm_dev *md;
	int r = dm_create(v->r, "bad", table, &md);

	if (!r)
		fail_msg("table accepted: %s", table);
	assert_non_null(strstr(ulvm_last_error(), what));
}

static void test_tables(void **state)
{
	struct tenv *v = *state;
	char t[1024], want[1024];
	struct dm_dev *pool, *thin;

	snprintf(t, sizeof(t), "0 32768 thin-pool %s %s 100 0", v->meta, v->data);
	expect_refused(v, t, "invalid block size");
	snprintf(t, sizeof(t), "0 32768 thin-pool %s %s 4194304 0", v->meta, v->data);
	expect_refused(v, t, "invalid block size");
	snprintf(t, sizeof(t), "0 32768 thin-pool %s %s 128", v->meta, v->data);
	expect_refused(v, t, "expected <metadata dev>");
	snprintf(t, sizeof(t), "0 32768 thin-pool %s %s 128 0 1 bogus", v->meta, v->data);
	expect_refused(v, t, "unrecognised pool feature requested: bogus");
	snprintf(t, sizeof(t), "0 32768 thin-pool %s %s 128 0 2 skip_block_zeroing", v->meta,
	         v->data);
	expect_refused(v, t, "2 pool feature arguments announced, 1 given");
	snprintf(t, sizeof(t), "0 32768 thin-pool %s %s 128 x", v->meta, v->data);
	expect_refused(v, t, "low water mark x is not a number");
	snprintf(t, sizeof(t), "0 65536 thin-pool %s %s 128 0", v->meta, v->data);
	expect_refused(v, t, "is smaller than the target");
	snprintf(t, sizeof(t), "0 2048 thin %s/nosuch 1", v->dir);
	expect_refused(v, t, "nosuch");

	pool = make_pool(v, 32768, "3 skip_block_zeroing no_discard_passdown error_if_no_space");
	snprintf(want, sizeof(want),
	         "0 32768 thin-pool %s %s 128 16 3 skip_block_zeroing no_discard_passdown "
	         "error_if_no_space\n",
	         v->meta, v->data);
	assert_status(pool, DM_STATUS_TABLE, want);
	expect_refused(v, "0 2048 thin pool 1", "couldn't open thin internal device 1");
	expect_refused(v, "0 2048 thin pool 16777216", "invalid device id");
	expect_refused(v, "0 2048 thin pool", "expected <pool dev> <dev id>");
	expect_refused(v, "0 2048 thin zzz 1", "zzz");
	tmsg_ok(pool, "create_thin 1");
	thin = create_dev(v->r, "thin1", "0 2048 thin pool 1");
	assert_status(thin, DM_STATUS_TABLE, "0 2048 thin pool 1\n");
	assert_status(thin, DM_STATUS_INFO, "0 2048 thin 0 -\n");
	/* A thin volume whose table names something that is not a pool. */
	create_dev(v->r, "lin", "0 2048 linear %s 0", v->data);
	expect_refused(v, "0 2048 thin lin 1", "couldn't find pool object for lin");
	/* External origin: printed back. */
	create_dev(v->r, "thin1o", "0 2048 thin pool 1 lin");
	assert_status(dm_find(v->r, "thin1o"), DM_STATUS_TABLE, "0 2048 thin pool 1 lin\n");
	assert_int_equal(dm_remove(v->r, "thin1o"), 0);
	/* The pool cannot go while a thin volume stacks on it. */
	assert_int_equal(dm_remove(v->r, "pool"), -EBUSY);
	tenv_close_registry(v);
	check_metadata(v->meta);
}

/* Fresh metadata: the status the kernel prints for a new pool, then the messages. */
static void test_status_messages(void **state)
{
	struct tenv *v = *state;
	struct dm_dev *pool, *thin;
	unsigned long long used, total, held;
	char buf[256], *s;

	pool = make_pool(v, 32768, NULL);
	s = tstatus(pool, DM_STATUS_INFO);
	/* 1024 metadata blocks: a reserve of 102 counts as used; 256 data blocks; low water
	 * mark of the metadata 256. */
	assert_int_equal(sscanf(s,
	                        "0 32768 thin-pool 0 %llu/%llu 0/256 - rw discard_passdown "
	                        "queue_if_no_space - 256\n",
	                        &used, &total),
	                 2);
	assert_int_equal(total, 1024);
	assert_true(used > 102 && used < 130);
	snprintf(buf, sizeof(buf),
	         "0 32768 thin-pool 0 %llu/1024 0/256 - rw discard_passdown queue_if_no_space - "
	         "256\n",
	         used);
	assert_string_equal(s, buf);
	free(s);

	assert_int_equal(tmsg(pool, "create_thin 16777216"), -EINVAL);
	assert_non_null(strstr(ulvm_last_error(), "invalid device id: 16777216"));
	assert_int_equal(tmsg(pool, "create_thin"), -EINVAL);
	assert_non_null(strstr(ulvm_last_error(), "wrong number of arguments"));
	assert_int_equal(tmsg(pool, "frobnicate 1"), -EINVAL);
	assert_non_null(strstr(ulvm_last_error(), "unrecognised thin pool target message"));
	tmsg_ok(pool, "create_thin 16777215");
	tmsg_ok(pool, "delete 16777215");
	tmsg_ok(pool, "create_thin 1");
	assert_true(tmsg(pool, "create_thin 1") < 0);
	tmsg_ok(pool, "set_transaction_id 0 1");
	assert_int_equal(tmsg(pool, "set_transaction_id 0 2"), -EINVAL);
	assert_int_equal(tmsg(pool, "set_transaction_id x 2"), -EINVAL);
	thin = create_dev(v->r, "thin1", "0 8192 thin pool 1");
	assert_int_equal(tmsg(pool, "delete 1"), -EBUSY);
	tmsg_ok(pool, "create_snap 2 1");
	assert_true(tmsg(pool, "create_snap 3 9") < 0);
	tmsg_ok(pool, "delete 2");
	assert_true(tmsg(pool, "delete 2") < 0);

	/* Writes: the thin's status is mapped sectors and the highest mapped sector. */
	uint8_t *b = xbuf(BLOCK);
	memset(b, 0xab, BLOCK);
	assert_int_equal(tio(v, thin, IO_OP_WRITE, 4096, 4096, b, 0), 0);
	assert_status(thin, DM_STATUS_INFO, "0 8192 thin 128 127\n");
	assert_int_equal(tio(v, thin, IO_OP_WRITE, 13 * BLOCK, BLOCK, b, 0), 0);
	assert_status(thin, DM_STATUS_INFO, "0 8192 thin 256 1791\n");
	/* The first write zeroed the rest of its block. */
	assert_int_equal(tio(v, thin, IO_OP_READ, 0, BLOCK, b, 0), 0);
	for (unsigned i = 0; i < BLOCK; i++)
		assert_int_equal(b[i], i >= 4096 && i < 8192 ? 0xab : 0);
	/* Unmapped blocks read as zeroes. */
	memset(b, 1, BLOCK);
	assert_int_equal(tio(v, thin, IO_OP_READ, 5 * BLOCK, BLOCK, b, 0), 0);
	for (unsigned i = 0; i < BLOCK; i++)
		assert_int_equal(b[i], 0);
	s = tstatus(pool, DM_STATUS_INFO);
	assert_non_null(strstr(s, " 2/256 - rw "));
	free(s);
	/* Discard: whole blocks only. */
	assert_int_equal(tio(v, thin, IO_OP_DISCARD, 4096, BLOCK - 4096, NULL, 0), 0);
	assert_status(thin, DM_STATUS_INFO, "0 8192 thin 256 1791\n");
	assert_int_equal(tio(v, thin, IO_OP_DISCARD, 0, 2 * BLOCK, NULL, 0), 0);
	assert_status(thin, DM_STATUS_INFO, "0 8192 thin 128 1791\n");
	assert_int_equal(tio(v, thin, IO_OP_FLUSH, 0, 0, NULL, 0), 0);
	s = tstatus(pool, DM_STATUS_INFO);
	assert_non_null(strstr(s, " 1/256 - rw "));
	free(s);

	/* The metadata snapshot: its block in the status, one at a time. */
	tmsg_ok(pool, "reserve_metadata_snap");
	s = tstatus(pool, DM_STATUS_INFO);
	assert_int_equal(sscanf(s, "0 32768 thin-pool 1 %llu/1024 1/256 %llu rw", &used, &held), 2);
	assert_true(held > 0);
	free(s);
	assert_int_equal(tmsg(pool, "reserve_metadata_snap"), -EBUSY);
	tmsg_ok(pool, "release_metadata_snap");
	assert_int_equal(tmsg(pool, "release_metadata_snap"), -EINVAL);
	s = tstatus(pool, DM_STATUS_INFO);
	assert_non_null(strstr(s, " 1/256 - rw "));
	free(s);
	free(b);
	tenv_close_registry(v);
	check_metadata(v->meta);

	/* Loaded again: the same metadata, not formatted again. */
	tenv_registry(v);
	pool = make_pool(v, 32768, NULL);
	thin = create_dev(v->r, "thin1", "0 8192 thin pool 1");
	assert_status(thin, DM_STATUS_INFO, "0 8192 thin 128 1791\n");
	s = tstatus(pool, DM_STATUS_INFO);
	assert_non_null(strstr(s, "0 32768 thin-pool 1 "));
	free(s);
	/* Another block size than the metadata's is refused, as the kernel refuses it. */
	tenv_close_registry(v);
	tenv_registry(v);
	char t[512];
	snprintf(t, sizeof(t), "0 32768 thin-pool %s %s 256 0", v->meta, v->data);
	expect_refused(v, t, "changing the data block size (from 128 to 256) is not supported");
}

/* Out of data space, both ways; growing the pool releases queued writes. */
static void test_no_space(void **state)
{
	struct tenv *v = *state;
	struct dm_dev *pool, *thin;
	uint8_t *b = xbuf(BLOCK);
	struct treq t;
	char table[512], *s;

	/* 8 data blocks, error_if_no_space. */
	pool = make_pool(v, 1024, "1 error_if_no_space");
	tmsg_ok(pool, "create_thin 1");
	thin = create_dev(v->r, "thin1", "0 4096 thin pool 1");
	for (unsigned i = 0; i < 8; i++) {
		memset(b, (int)i + 1, BLOCK);
		assert_int_equal(tio(v, thin, IO_OP_WRITE, (uint64_t)i * BLOCK, BLOCK, b, 0), 0);
	}
	assert_int_equal(tio(v, thin, IO_OP_WRITE, 8 * BLOCK, 512, b, 0), -ENOSPC);
	s = tstatus(pool, DM_STATUS_INFO);
	assert_non_null(strstr(s, " 8/8 - out_of_data_space discard_passdown error_if_no_space "));
	free(s);
	/* Mapped blocks are still written and read. */
	assert_int_equal(tio(v, thin, IO_OP_WRITE, 0, 512, b, 0), 0);
	assert_int_equal(tio(v, thin, IO_OP_READ, 7 * BLOCK, BLOCK, b, 0), 0);
	assert_int_equal(b[100], 8);
	/* Queue instead: a reload without error_if_no_space. */
	snprintf(table, sizeof(table), "0 1024 thin-pool %s %s 128 16", v->meta, v->data);
	assert_int_equal(dm_load(pool, table), 0);
	assert_int_equal(dm_resume(pool), 0);
	treq_init(&t, IO_OP_WRITE, 9 * BLOCK, BLOCK, b);
	memset(b, 0x5a, BLOCK);
	dm_submit(thin, &t.req);
	tdrain(v);
	assert_int_equal(t.calls, 0); /* queued */
	s = tstatus(pool, DM_STATUS_INFO);
	assert_non_null(strstr(s, " 8/8 - out_of_data_space discard_passdown queue_if_no_space "));
	free(s);
	/* lvextend: the pool reloaded over a larger data device; the write goes on. */
	snprintf(table, sizeof(table), "0 2048 thin-pool %s %s 128 16", v->meta, v->data);
	assert_int_equal(dm_load(pool, table), 0);
	assert_int_equal(dm_resume(pool), 0);
	while (!t.calls)
		tpoll(v);
	tdrain(v);
	assert_int_equal(t.result, 0);
	s = tstatus(pool, DM_STATUS_INFO);
	assert_non_null(strstr(s, " 9/16 - rw discard_passdown queue_if_no_space "));
	free(s);
	memset(b, 0, BLOCK);
	assert_int_equal(tio(v, thin, IO_OP_READ, 9 * BLOCK, BLOCK, b, 0), 0);
	assert_int_equal(b[0], 0x5a);
	assert_int_equal(b[BLOCK - 1], 0x5a);
	/* A pool table smaller than its metadata says is refused at resume. */
	snprintf(table, sizeof(table), "0 1024 thin-pool %s %s 128 16", v->meta, v->data);
	assert_int_equal(dm_load(pool, table), 0);
	assert_true(dm_resume(pool) < 0);
	assert_non_null(strstr(ulvm_last_error(), "too small"));
	free(b);
	tenv_close_registry(v);
	check_metadata(v->meta);
}

/* The metadata device as LVM2 grows a tmeta: a linear stack of segments out of order on
 * the file, then one more segment (reload, resume): the pool reads and writes it through
 * the stack, its metadata space map grows to the new size, and the metadata put back
 * together from the segments checks clean. */
static void test_metadata_segments(void **state)
{
	struct tenv *v = *state;
	struct dm_dev *tmeta, *pool, *thin;
	uint8_t *b = xbuf(BLOCK), *m = xbuf(3 * MIB);
	char table[1024], flat[256], *s;
	FILE *f;

	/* 1 MiB at 2 MiB of the file, then 1 MiB at 0 */
	snprintf(table, sizeof(table), "0 2048 linear %s 4096\n2048 2048 linear %s 0", v->meta,
	         v->meta);
	tmeta = create_dev(v->r, "tmeta", "%s", table);
	pool = create_dev(v->r, "pool", "0 2048 thin-pool tmeta %s 128 16", v->data);
	s = tstatus(pool, DM_STATUS_INFO);
	assert_non_null(strstr(s, "/512 0/16 "));
	free(s);
	tmsg_ok(pool, "create_thin 1");
	thin = create_dev(v->r, "thin1", "0 4096 thin pool 1");
	memset(b, 0x3c, BLOCK);
	assert_int_equal(tio(v, thin, IO_OP_WRITE, 3 * BLOCK, BLOCK, b, IO_FUA), 0);
	/* a third segment: 1 MiB at 1 MiB of the file */
	snprintf(table, sizeof(table),
	         "0 2048 linear %s 4096\n2048 2048 linear %s 0\n4096 2048 linear %s 2048", v->meta,
	         v->meta, v->meta);
	assert_int_equal(dm_suspend(pool), 0);
	assert_int_equal(dm_load(tmeta, table), 0);
	assert_int_equal(dm_resume(tmeta), 0);
	snprintf(table, sizeof(table), "0 2048 thin-pool tmeta %s 128 16", v->data);
	assert_int_equal(dm_load(pool, table), 0);
	assert_int_equal(dm_resume(pool), 0);
	s = tstatus(pool, DM_STATUS_INFO);
	assert_non_null(strstr(s, "/768 1/16 "));
	free(s);
	memset(b, 0, BLOCK);
	assert_int_equal(tio(v, thin, IO_OP_READ, 3 * BLOCK, BLOCK, b, 0), 0);
	assert_int_equal(b[BLOCK - 1], 0x3c);
	assert_int_equal(tio(v, thin, IO_OP_WRITE, 7 * BLOCK, BLOCK, b, IO_FUA), 0);
	free(b);
	tenv_close_registry(v);
	read_file(v->meta, m, MIB, 2 * MIB);
	read_file(v->meta, m + MIB, MIB, 0);
	read_file(v->meta, m + 2 * MIB, MIB, MIB);
	snprintf(flat, sizeof(flat), "%s/flat", v->dir);
	assert_non_null(f = fopen(flat, "w"));
	assert_int_equal(fwrite(m, 1, 3 * MIB, f), 3 * MIB);
	fclose(f);
	free(m);
	check_metadata(flat);
}

/* A metadata device that is not all zero but no superblock either is refused, never
 * formatted over. */
static void test_not_formatted_over(void **state)
{
	struct tenv *v = *state;
	char table[512];
	uint8_t one = 1;
	int fd = open(v->meta, O_WRONLY);
	struct dm_dev *md;

	assert_true(fd >= 0);
	assert_int_equal(pwrite(fd, &one, 1, 4000), 1);
	close(fd);
	snprintf(table, sizeof(table), "0 32768 thin-pool %s %s 128 0", v->meta, v->data);
	assert_true(dm_create(v->r, "pool", table, &md) < 0);
	assert_non_null(strstr(ulvm_last_error(), "superblock"));
}

/* Block status: unmapped blocks are holes of zeroes, mapped ones data; a stack of linear
 * over the thin volume reports the same; an external origin answers for its range. */
static void test_block_status(void **state)
{
	struct tenv *v = *state;
	struct dm_extent ext[16];
	struct dm_extents x;
	struct dm_dev *pool, *thin, *lin, *ext_thin;
	uint8_t *b = xbuf(BLOCK);
	const unsigned HZ = DM_EXTENT_HOLE | DM_EXTENT_ZERO;

	pool = make_pool(v, 32768, NULL);
	tmsg_ok(pool, "create_thin 1");
	thin = create_dev(v->r, "thin1", "0 1024 thin pool 1"); /* 8 blocks */
	memset(b, 7, BLOCK);
	assert_int_equal(tio(v, thin, IO_OP_WRITE, BLOCK + 512, 512, b, 0), 0);
	assert_int_equal(tio(v, thin, IO_OP_WRITE, 3 * BLOCK, BLOCK, b, 0), 0);
	assert_int_equal(tio(v, thin, IO_OP_WRITE, 4 * BLOCK, BLOCK, b, 0), 0);
	assert_int_equal(tio(v, thin, IO_OP_DISCARD, 4 * BLOCK, BLOCK, NULL, 0), 0);
	memset(&x, 0, sizeof(x));
	x.ext = ext;
	x.max = 16;
	assert_int_equal(dm_block_status(thin, 0, 8 * BLOCK, &x), 0);
	assert_int_equal(x.n, 5);
	assert_int_equal(x.covered, 8 * BLOCK);
	assert_int_equal(ext[0].len, BLOCK);
	assert_int_equal(ext[0].flags, HZ);
	assert_int_equal(ext[1].len, BLOCK);
	assert_int_equal(ext[1].flags, 0);
	assert_int_equal(ext[2].len, BLOCK);
	assert_int_equal(ext[2].flags, HZ);
	assert_int_equal(ext[3].len, BLOCK);
	assert_int_equal(ext[3].flags, 0);
	assert_int_equal(ext[4].len, 4 * BLOCK);
	assert_int_equal(ext[4].flags, HZ);
	/* Unaligned, through a linear table on the thin volume. */
	lin = create_dev(v->r, "lin", "0 512 linear thin1 256");
	memset(&x, 0, sizeof(x));
	x.ext = ext;
	x.max = 16;
	assert_int_equal(dm_block_status(lin, 4096, 2 * BLOCK, &x), 0);
	assert_int_equal(x.n, 3);
	assert_int_equal(ext[0].len, BLOCK - 4096);
	assert_int_equal(ext[0].flags, HZ);
	assert_int_equal(ext[1].len, BLOCK);
	assert_int_equal(ext[1].flags, 0);
	assert_int_equal(ext[2].len, 4096);
	assert_int_equal(ext[2].flags, HZ);
	/* An external origin (a file with a hole after its first 4 KiB) answers for itself. */
	char origin[256];
	snprintf(origin, sizeof(origin), "%s/origin", v->dir);
	int fd = open(origin, O_RDWR | O_CREAT | O_TRUNC, 0600);
	assert_true(fd >= 0);
	assert_int_equal(pwrite(fd, b, 4096, 0), 4096);
	assert_int_equal(ftruncate(fd, 2 * BLOCK), 0);
	close(fd);
	tmsg_ok(pool, "create_thin 2");
	ext_thin = create_dev(v->r, "thin2", "0 512 thin pool 2 %s", origin);
	memset(&x, 0, sizeof(x));
	x.ext = ext;
	x.max = 16;
	assert_int_equal(dm_block_status(ext_thin, 0, 4 * BLOCK, &x), 0);
	assert_int_equal(x.covered, 4 * BLOCK);
	assert_int_equal(ext[0].flags, 0);
	assert_true(ext[0].len >= 4096 && ext[0].len < 2 * BLOCK);
	assert_int_equal(ext[x.n - 1].flags, HZ);
	free(b);
}

/* Fill n blocks from vblock vb with a byte per block (its number and `gen`). */
static void fill_blocks(uint8_t *b, uint64_t vb, unsigned n, unsigned gen)
{
	for (unsigned i = 0; i < n; i++)
		memset(b + (size_t)i * BLOCK, (int)((vb + i) * 7 + gen) & 0xff, BLOCK);
}

static void expect_blocks(struct tenv *v, struct dm_dev *md, uint64_t vb, unsigned n,
                          const uint8_t *want)
{
	uint8_t *got = xbuf((size_t)n * BLOCK);

	assert_int_equal(tio(v, md, IO_OP_READ, vb * BLOCK, (uint64_t)n * BLOCK, got, 0), 0);
	for (unsigned i = 0; i < n; i++)
		if (memcmp(got + (size_t)i * BLOCK, want + (size_t)i * BLOCK, BLOCK))
			fail_msg("%s: block %" PRIu64 " reads wrong bytes (%u)", dm_name(md),
			         vb + i, got[(size_t)i * BLOCK]);
	/* and a 4 KiB read inside every block, as random reads come */
	for (unsigned i = 0; i < n; i++) {
		assert_int_equal(tio(v, md, IO_OP_READ, (vb + i) * BLOCK + 8192, 4096, got, 0), 0);
		assert_memory_equal(got, want + (size_t)i * BLOCK + 8192, 4096);
	}
	free(got);
}

/* The runs the data path keeps, one per slot of 4096 blocks: a request over the border of
 * two slots, 4 KiB reads inside kept runs, and every change that must make a kept run go (a
 * snapshot sharing the blocks, breaking sharing, a discard, provisioning inside the run). */
static void test_runs_across_slots(void **state)
{
	struct tenv *v = *state;
	const uint64_t vb0 = 4090, nvb = 8200; /* slots [0, 4096), [4096, 8192), [8192, ...) */
	uint8_t *want = xbuf(12 * BLOCK), *snap_want = xbuf(12 * BLOCK), *z = xbuf(BLOCK);
	struct dm_dev *pool, *thin, *snap;

	pool = make_pool(v, 32768, NULL);
	tmsg_ok(pool, "create_thin 1");
	thin = create_dev(v->r, "thin1", "0 %" PRIu64 " thin pool 1", nvb * 128);
	fill_blocks(want, vb0, 12, 0);
	/* one write: 12 new data blocks one after the other, across the slot border */
	assert_int_equal(tio(v, thin, IO_OP_WRITE, vb0 * BLOCK, 12 * BLOCK, want, 0), 0);
	assert_int_equal(tio(v, thin, IO_OP_WRITE, 8195 * BLOCK, BLOCK, want, 0), 0);
	expect_blocks(v, thin, vb0, 12, want);
	expect_blocks(v, thin, 8195, 1, want);
	/* A snapshot: the origin's kept runs no longer say "unshared". */
	assert_int_equal(dm_suspend(thin), 0);
	tmsg_ok(pool, "create_snap 2 1");
	assert_int_equal(dm_resume(thin), 0);
	snap = create_dev(v->r, "snap", "0 %" PRIu64 " thin pool 2", nvb * 128);
	memcpy(snap_want, want, 12 * BLOCK);
	fill_blocks(want + 2 * BLOCK, vb0 + 2, 1, 1);
	assert_int_equal(tio(v, thin, IO_OP_WRITE, (vb0 + 2) * BLOCK, BLOCK, want + 2 * BLOCK, 0),
	                 0);
	fill_blocks(want + 7 * BLOCK, vb0 + 7, 2, 1); /* across the border, partly */
	assert_int_equal(tio(v, thin, IO_OP_WRITE, (vb0 + 7) * BLOCK + 4096, 2 * BLOCK - 8192,
	                     want + 7 * BLOCK + 4096, 0),
	                 0);
	memcpy(want + 7 * BLOCK, snap_want + 7 * BLOCK, 4096);
	memcpy(want + 9 * BLOCK - 4096, snap_want + 9 * BLOCK - 4096, 4096);
	expect_blocks(v, thin, vb0, 12, want);
	expect_blocks(v, snap, vb0, 12, snap_want);
	/* A discard inside a kept run: zeroes; then a partial write there: zeroes around it. */
	assert_int_equal(tio(v, thin, IO_OP_DISCARD, (vb0 + 10) * BLOCK, BLOCK, NULL, 0), 0);
	memset(want + 10 * BLOCK, 0, BLOCK);
	expect_blocks(v, thin, vb0, 12, want);
	memset(z, 0x33, 4096);
	assert_int_equal(tio(v, thin, IO_OP_WRITE, (vb0 + 10) * BLOCK, 4096, z, 0), 0);
	memset(want + 10 * BLOCK, 0x33, 4096);
	expect_blocks(v, thin, vb0, 12, want);
	expect_blocks(v, snap, vb0, 12, snap_want);
	/* The snapshot's own writes break sharing too; the origin keeps its bytes. */
	fill_blocks(snap_want, vb0, 12, 2);
	assert_int_equal(tio(v, snap, IO_OP_WRITE, vb0 * BLOCK, 12 * BLOCK, snap_want, 0), 0);
	expect_blocks(v, snap, vb0, 12, snap_want);
	expect_blocks(v, thin, vb0, 12, want);
	assert_int_equal(tio(v, thin, IO_OP_FLUSH, 0, 0, NULL, 0), 0);
	assert_int_equal(dm_remove(v->r, "snap"), 0);
	assert_int_equal(dm_remove(v->r, "thin1"), 0);
	assert_int_equal(dm_remove(v->r, "pool"), 0);
	check_metadata(v->meta);
	free(want);
	free(snap_want);
	free(z);
}

/* Mapped reads and writes skip the pool device on their way to the data device, and still
 * behave as if they went through it: a suspended pool holds them until it resumes, a pool
 * suspend waits for those already sent, and after a reload they reach the new table's. */
static void test_pool_suspend_holds_mapped_io(void **state)
{
	struct tenv *v = *state;
	uint8_t *b = xbuf(BLOCK), *got = xbuf(BLOCK);
	struct dm_dev *pool, *thin;
	struct treq t;
	char table[512];

	pool = make_pool(v, 1024, NULL);
	tmsg_ok(pool, "create_thin 1");
	thin = create_dev(v->r, "thin1", "0 4096 thin pool 1");
	memset(b, 0x42, BLOCK);
	assert_int_equal(tio(v, thin, IO_OP_WRITE, 0, BLOCK, b, 0), 0);  /* provisioned */
	assert_int_equal(tio(v, thin, IO_OP_READ, 0, BLOCK, got, 0), 0); /* mapped */
	assert_memory_equal(got, b, BLOCK);
	/* The pool suspended: a read of the mapped block waits for its resume. */
	assert_int_equal(dm_suspend(pool), 0);
	memset(got, 0, BLOCK);
	treq_init(&t, IO_OP_READ, 4096, 4096, got);
	dm_submit(thin, &t.req);
	tdrain(v);
	assert_int_equal(t.calls, 0);
	assert_int_equal(dm_resume(pool), 0);
	while (!t.calls)
		tpoll(v);
	tdrain(v);
	assert_int_equal(t.result, 0);
	assert_memory_equal(got, b, 4096);
	/* A write of a mapped block sent, then the pool suspended: done when the suspend is. */
	memset(b, 0x43, 4096);
	treq_init(&t, IO_OP_WRITE, 8192, 4096, b);
	dm_submit(thin, &t.req);
	assert_int_equal(t.calls, 0);
	assert_int_equal(dm_suspend(pool), 0);
	assert_int_equal(t.calls, 1);
	assert_int_equal(t.result, 0);
	/* A reload (a bigger data device): the old table goes, mapped I/O reaches the new one. */
	snprintf(table, sizeof(table), "0 2048 thin-pool %s %s 128 16", v->meta, v->data);
	assert_int_equal(dm_load(pool, table), 0);
	assert_int_equal(dm_resume(pool), 0);
	for (unsigned i = 0; i < 2; i++) {
		memset(got, 0, BLOCK);
		assert_int_equal(tio(v, thin, IO_OP_READ, 0, BLOCK, got, 0), 0);
		assert_int_equal(got[0], 0x42);
		assert_int_equal(got[8192], 0x43);
		assert_int_equal(got[12288], 0x42);
	}
	assert_int_equal(tio(v, thin, IO_OP_FLUSH, 0, 0, NULL, 0), 0);
	free(b);
	free(got);
	tenv_close_registry(v);
	check_metadata(v->meta);
}

/* Is vblock 0 of thin 1 mapped in what the metadata device holds (its last commit)? */
static bool committed_mapping(struct tenv *v)
{
	struct thin_md_options o = {.read_only = true};
	struct thin_md *md;
	struct bdev *bd;
	uint64_t b;
	int r;

	assert_int_equal(bdev_open(v->meta, BDEV_RDONLY | BDEV_NO_DIRECT, &bd), 0);
	assert_int_equal(thin_md_open(bd, &o, &md), 0);
	r = thin_md_lookup(md, 1, 0, &b, NULL);
	thin_md_close(md);
	bdev_close(bd);
	assert_true(r == 0 || r == -ENODATA);
	return r == 0;
}

/* Without any flush, the pool commits within about a second of a change (an event loop
 * polls the engine at least that often). */
static double ts_diff_s(const struct timespec *a, const struct timespec *b)
{
	return (double)(b->tv_sec - a->tv_sec) + (double)(b->tv_nsec - a->tv_nsec) / 1e9;
}

static void test_commit_within_a_second(void **state)
{
	struct tenv *v = *state;
	struct dm_dev *pool, *thin;
	uint8_t *b = xbuf(BLOCK);
	struct timespec tc, t0, t;

	pool = make_pool(v, 32768, NULL);
	/* create_thin commits; the periodic commit is due a second after it. */
	clock_gettime(CLOCK_MONOTONIC, &tc);
	tmsg_ok(pool, "create_thin 1");
	thin = create_dev(v->r, "thin1", "0 2048 thin pool 1");
	memset(b, 3, BLOCK);
	assert_int_equal(tio(v, thin, IO_OP_WRITE, 0, BLOCK, b, 0), 0);
	clock_gettime(CLOCK_MONOTONIC, &t0);
	/* Only a write that finished well inside that second can be known uncommitted: on a
	 * loaded machine the timer may rightly have fired already. */
	if (ts_diff_s(&tc, &t0) < 0.9)
		assert_false(committed_mapping(v));
	do {
		usleep(20000);
		assert_true(io_engine_poll(v->e, 0) >= 0);
		clock_gettime(CLOCK_MONOTONIC, &t);
	} while (!committed_mapping(v) && ts_diff_s(&t0, &t) < 5.0);
	assert_true(committed_mapping(v));
	assert_true(ts_diff_s(&t0, &t) < 3.0);
	free(b);
}

/* Out of metadata space: the pool turns read-only as the kernel's does (status ro, messages
 * refused), what was written reads back, and the metadata on the device stays consistent. */
static void test_no_metadata_space(void **state)
{
	struct tenv *v = *state;
	struct dm_dev *pool, *thin;
	uint8_t *b = xbuf(4 * MIB);
	char table[512], *s;
	uint64_t off;
	int r = 0;

	/* 48 metadata blocks for a data device of 32768 blocks. */
	tenv_files(v, 48 * 4096, 2048ull * MIB);
	snprintf(table, sizeof(table), "0 %u thin-pool %s %s 128 0", 2048u * 2048u, v->meta,
	         v->data);
	pool = create_dev(v->r, "pool", "%s", table);
	tmsg_ok(pool, "create_thin 1");
	thin = create_dev(v->r, "thin1", "0 %u thin pool 1", 2048u * 2048u);
	memset(b, 0x6d, 4 * MIB);
	for (off = 0; off < 2048ull * MIB && !r; off += 4 * MIB) {
		r = tio(v, thin, IO_OP_WRITE, off, 4 * MIB, b, 0);
		if (!r && (off / (4 * MIB)) % 16 == 15)
			r = tio(v, thin, IO_OP_FLUSH, 0, 0, NULL, 0);
	}
	assert_int_equal(r, -EIO);
	s = tstatus(pool, DM_STATUS_INFO);
	assert_non_null(strstr(s, " ro "));
	free(s);
	assert_int_equal(tmsg(pool, "create_thin 2"), -EOPNOTSUPP);
	/* The first blocks were committed long before: they read back. */
	memset(b, 0, 4 * MIB);
	assert_int_equal(tio(v, thin, IO_OP_READ, 0, 4 * MIB, b, 0), 0);
	assert_int_equal(b[0], 0x6d);
	assert_int_equal(b[4 * MIB - 1], 0x6d);
	free(b);
	tenv_close_registry(v);
	check_metadata(v->meta);
}

/* The superblock of the metadata file at `path`, decoded. */
static void read_sb(const char *path, struct thin_sb_info *si)
{
	uint8_t blk[4096];
	FILE *f = fopen(path, "rb");

	assert_non_null(f);
	assert_int_equal(fread(blk, 1, sizeof(blk), f), sizeof(blk));
	fclose(f);
	thin_sb_decode(blk, si);
}

/* A metadata error (a mapping leaf that fails its checksum) aborts the open transaction and
 * turns the pool read-only with needs_check, written into the superblock as the kernel's
 * dm-thin-metadata does; the flag makes the next writable open refuse until a check. */
static void test_needs_check(void **state)
{
	struct tenv *v = *state;
	struct dm_dev *pool, *thin;
	uint8_t *b = xbuf(16 * MIB);
	struct thin_md_options ro = {.read_only = true};
	struct thin_sb_info si;
	struct thin_md *md;
	struct bdev *bd;
	struct bm_block *blk;
	uint64_t leaf;
	le64 sub, child;
	char *s;

	/* 256 blocks mapped: two leaves under an internal node in device 1's tree. */
	pool = make_pool(v, 32768, NULL);
	tmsg_ok(pool, "create_thin 1");
	thin = create_dev(v->r, "thin1", "0 32768 thin pool 1");
	memset(b, 0x3c, 16 * MIB);
	assert_int_equal(tio(v, thin, IO_OP_WRITE, 0, 16 * MIB, b, 0), 0);
	assert_int_equal(tio(v, thin, IO_OP_FLUSH, 0, 0, NULL, 0), 0);
	tenv_close_registry(v);
	read_sb(v->meta, &si);
	assert_int_equal(si.flags & THIN_FLAG_NEEDS_CHECK, 0);
	/* Damage the first leaf of device 1's mapping tree on the device. */
	assert_int_equal(bdev_open(v->meta, BDEV_RDONLY | BDEV_NO_DIRECT, &bd), 0);
	assert_int_equal(thin_md_open(bd, &ro, &md), 0);
	assert_int_equal(btree_lookup(thin_md_tm(md), 8, si.mapping_root, 1, &sub), 0);
	assert_int_equal(
	    tm_read_lock(thin_md_tm(md), le64_to_cpu(sub), &btree_node_validator, &blk), 0);
	assert_int_equal(btree_node_flags(bm_block_data(blk)), BTREE_NODE_INTERNAL);
	memcpy(&child, btree_node_value(bm_block_data(blk), 0), 8);
	tm_unlock(thin_md_tm(md), blk);
	thin_md_close(md);
	bdev_close(bd);
	leaf = le64_to_cpu(child);
	FILE *f = fopen(v->meta, "r+b");
	assert_non_null(f);
	assert_int_equal(fseek(f, (long)(leaf * 4096 + 200), SEEK_SET), 0);
	assert_int_equal(fwrite("damage", 1, 6, f), 6);
	fclose(f);
	/* The pool loads; the first read of a block in that leaf fails its lookup. */
	tenv_registry(v);
	pool = make_pool(v, 32768, NULL);
	thin = create_dev(v->r, "thin1", "0 32768 thin pool 1");
	assert_true(tio(v, thin, IO_OP_READ, 0, BLOCK, b, 0) < 0);
	s = tstatus(pool, DM_STATUS_INFO);
	assert_non_null(strstr(s, " ro "));
	assert_non_null(strstr(s, " needs_check "));
	free(s);
	assert_int_equal(tmsg(pool, "create_thin 2"), -EOPNOTSUPP);
	read_sb(v->meta, &si);
	assert_int_equal(si.flags & THIN_FLAG_NEEDS_CHECK, THIN_FLAG_NEEDS_CHECK);
	tenv_close_registry(v);
	/* Writable opens refuse it now (activation checks first); clearing it is the checker's. */
	assert_int_equal(bdev_open(v->meta, BDEV_NO_DIRECT, &bd), 0);
	assert_int_equal(thin_md_open(bd, NULL, &md), -EUCLEAN);
	assert_int_equal(thin_md_set_needs_check_flag(bd, false), 0);
	bdev_close(bd);
	read_sb(v->meta, &si);
	assert_int_equal(si.flags & THIN_FLAG_NEEDS_CHECK, 0);
	free(b);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test_setup_teardown(test_tables, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_status_messages, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_no_space, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_metadata_segments, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_not_formatted_over, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_block_status, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_runs_across_slots, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_pool_suspend_holds_mapped_io, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_commit_within_a_second, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_no_metadata_space, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_needs_check, setup, teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
