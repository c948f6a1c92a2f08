/* Unit tests for block status (dm_block_status, the block_status hook, dm/dm.h): zero and error
 * targets, linear and striped over sparse files (their holes come through), stacking, the
 * rounding of byte ranges, a full extent array, and a test target "bstest" whose answers are
 * given in its table line, to check what the core does with a hook that stops early, says
 * nothing, says too much or fails.
 *
 * Lower devices are sparse files in a temp directory on /tmp (ext4 here: holes of 4 KiB). */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "dm/dm.h"
#include "io/bdev.h"
#include "io/engine.h"
#include "util/util.h"

#include "test_dm_util.h"

#define KIB  1024ull
#define MIB  (1024 * KIB)
#define UNIT (4 * KIB) /* what one letter of a bstest pattern covers */

#define HZ (DM_EXTENT_HOLE | DM_EXTENT_ZERO)

/* ---- the test target ---------------------------------------------------------------------
 *
 * `bstest <pattern>`: one letter per 4 KiB of the target, the answer of its hook there:
 * d data, h hole+zero, z zero (allocated), H hole (not zero), e error (-EIO), s stop (the
 * answer ends before it), n nothing (return 0 having said nothing), o over (report twice the
 * length asked, as data). Reads and writes fail: only block status is tested. */

struct bstest_c {
	char *pattern;
	size_t n;
	unsigned calls;
};

static int bstest_ctr(struct dm_target *ti, unsigned argc, char **argv)
{
	struct bstest_c *bc;

	if (argc != 1)
		return ulvm_error(-EINVAL, "expected <pattern>, got %u arguments", argc);
	if (strlen(argv[0]) * UNIT != ti->len << SECTOR_SHIFT)
		return ulvm_error(-EINVAL, "pattern %s does not cover %" PRIu64 " sectors", argv[0],
		                  ti->len);
	bc = calloc(1, sizeof(*bc));
	assert_non_null(bc);
	bc->pattern = strdup(argv[0]);
	bc->n = strlen(argv[0]);
	ti->private = bc;
	return 0;
}

static void bstest_dtr(struct dm_target *ti)
{
	struct bstest_c *bc = ti->private;

	free(bc->pattern);
	free(bc);
}

static enum dm_map_result bstest_map(struct dm_target *ti, struct io_req *req,
                                     struct dm_lower **lower)
{
	(void)ti;
	(void)req;
	(void)lower;
	return DM_MAPIO_KILL;
}

static int bstest_block_status(struct dm_target *ti, uint64_t offset, uint64_t len,
                               struct dm_extents *x)
{
	struct bstest_c *bc = ti->private;
	uint64_t end = offset + len;

	bc->calls++;
	assert_true(offset % SECTOR_SIZE == 0 && len % SECTOR_SIZE == 0 && len > 0);
	assert_true(end <= bc->n * UNIT);
	while (offset < end) {
		char c = bc->pattern[offset / UNIT];
		uint64_t n = MIN(end, (offset / UNIT + 1) * UNIT) - offset;
		unsigned flags = 0;

		switch (c) {
		case 'e':
			return ulvm_error(-EIO, "bstest: error at %" PRIu64, offset);
		case 's':
			return 0;
		case 'n':
			return 0;
		case 'o':
			dm_extents_add(x, 2 * len, 0);
			return 0;
		case 'h':
			flags = HZ;
			break;
		case 'z':
			flags = DM_EXTENT_ZERO;
			break;
		case 'H':
			flags = DM_EXTENT_HOLE;
			break;
		default:
			break;
		}
		if (!dm_extents_add(x, n, flags))
			return 0;
		offset += n;
	}
	return 0;
}

static const struct dm_target_type bstest_target = {
    .name = "bstest",
    .ctr = bstest_ctr,
    .dtr = bstest_dtr,
    .map = bstest_map,
    .block_status = bstest_block_status,
};

/* ---- fixtures ---------------------------------------------------------------------------- */

struct env {
	char dir[64];
	struct io_engine *e;
	struct dm_registry *r;
	char path[4][96];
};

static int setup(void **state)
{
	struct env *v = calloc(1, sizeof(*v));

	assert_non_null(v);
	snprintf(v->dir, sizeof(v->dir), "/tmp/ulvm-test-bs-XXXXXX");
	assert_non_null(mkdtemp(v->dir));
	for (unsigned i = 0; i < 4; i++) {
		int fd;

		snprintf(v->path[i], sizeof(v->path[i]), "%s/d%u", v->dir, i);
		fd = open(v->path[i], O_CREAT | O_RDWR | O_TRUNC, 0600);
		assert_true(fd >= 0);
		assert_int_equal(ftruncate(fd, 16 * MIB), 0);
		close(fd);
	}
	assert_int_equal(io_engine_new(NULL, &v->e), 0);
	assert_int_equal(dm_registry_new(v->e, &v->r), 0);
	assert_int_equal(dm_register_target(&bstest_target), 0);
	*state = v;
	return 0;
}

static int teardown(void **state)
{
	struct env *v = *state;

	dm_registry_free(v->r);
	dm_unregister_target(&bstest_target);
	io_engine_free(v->e);
	for (unsigned i = 0; i < 4; i++)
		unlink(v->path[i]);
	rmdir(v->dir);
	free(v);
	return 0;
}

/* Write `len` bytes of 0xab into file i at `off` (allocates it). */
static void put_data(struct env *v, unsigned i, uint64_t off, size_t len)
{
	uint8_t *b = malloc(len);
	int fd = open(v->path[i], O_RDWR);

	assert_non_null(b);
	assert_true(fd >= 0);
	memset(b, 0xab, len);
	assert_int_equal(pwrite(fd, b, len, (off_t)off), (ssize_t)len);
	assert_int_equal(fsync(fd), 0);
	close(fd);
	free(b);
}

#define MAXEXT 64

struct answer {
	struct dm_extent ext[MAXEXT];
	struct dm_extents x;
	int r;
};

static struct answer *ask(struct dm_dev *md, uint64_t off, uint64_t len, unsigned max)
{
	static struct answer a;

	memset(&a, 0, sizeof(a));
	a.x.ext = a.ext;
	a.x.max = max;
	a.r = dm_block_status(md, off, len, &a.x);
	return &a;
}

/* The answer is exactly the extents given as (len, flags) pairs, `n` of them. */
static void expect(const struct answer *a, unsigned n, ...)
{
	uint64_t sum = 0;
	va_list ap;

	if (a->r)
		fail_msg("block status failed: %d %s", a->r, ulvm_last_error());
	assert_int_equal(a->x.n, n);
	va_start(ap, n);
	for (unsigned i = 0; i < n; i++) {
		uint64_t len = va_arg(ap, uint64_t);
		unsigned flags = va_arg(ap, unsigned);

		if (a->ext[i].len != len || a->ext[i].flags != flags)
			fail_msg("extent %u: %" PRIu64 " bytes flags %u, expected %" PRIu64
			         " flags %u",
			         i, a->ext[i].len, a->ext[i].flags, len, flags);
		sum += len;
	}
	va_end(ap);
	assert_int_equal(a->x.covered, sum);
}

#define E(len, flags) (uint64_t)(len), (unsigned)(flags)

/* ---- tests ------------------------------------------------------------------------------- */

/* zero: one hole that reads as zeros, whatever the range; error: -EIO. */
static void test_zero_error(void **state)
{
	struct env *v = *state;
	struct dm_dev *z = create_dev(v->r, "z", "0 2048 zero");
	struct dm_dev *e = create_dev(v->r, "e", "0 2048 error");
	struct answer *a;

	expect(ask(z, 0, MIB, MAXEXT), 1, E(MIB, HZ));
	a = ask(z, 1000, 3, MAXEXT); /* bytes, not sectors */
	expect(a, 1, E(3, HZ));
	assert_int_equal(a->x.offset, 1000);
	a = ask(e, 4096, 4096, MAXEXT);
	assert_int_equal(a->r, -EIO);
	assert_int_equal(a->x.n, 0);
	assert_non_null(strstr(ulvm_last_error(), "error target"));
}

/* Out of the device, empty, or no room: -EINVAL, nothing reported. */
static void test_bad_ranges(void **state)
{
	struct env *v = *state;
	struct dm_dev *z = create_dev(v->r, "z", "0 2048 zero");

	assert_int_equal(ask(z, 0, 0, MAXEXT)->r, -EINVAL);
	assert_int_equal(ask(z, MIB, 1, MAXEXT)->r, -EINVAL);
	assert_int_equal(ask(z, MIB - 512, 1024, MAXEXT)->r, -EINVAL);
	assert_int_equal(ask(z, UINT64_MAX - 10, 100, MAXEXT)->r, -EINVAL);
	assert_int_equal(ask(z, 0, 512, 0)->r, -EINVAL);
	expect(ask(z, MIB - 1, 1, MAXEXT), 1, E(1, HZ));
}

/* linear over a sparse file: the file's holes are holes of the device, at the right
 * offsets (the target starts 1 MiB into the file). */
static void test_linear_sparse_file(void **state)
{
	struct env *v = *state;
	struct dm_dev *md;

	put_data(v, 0, MIB + 64 * KIB, 64 * KIB);
	put_data(v, 0, MIB + 1020 * KIB, 4 * KIB); /* the last 4 KiB of the target */
	md = create_dev(v->r, "lin", "0 2048 linear %s 2048", v->path[0]);
	expect(ask(md, 0, MIB, MAXEXT), 4, E(64 * KIB, HZ), E(64 * KIB, 0), E(892 * KIB, HZ),
	       E(4 * KIB, 0));
	/* a range inside: cut at both ends, unaligned */
	expect(ask(md, 60 * KIB + 7, 8 * KIB, MAXEXT), 2, E(4 * KIB - 7, HZ), E(4 * KIB + 7, 0));
	/* all data when written all over */
	put_data(v, 0, MIB, MIB);
	expect(ask(md, 0, MIB, MAXEXT), 1, E(MIB, 0));
}

/* A table of several targets: answers follow each other, equal neighbours merge. */
static void test_mixed_table(void **state)
{
	struct env *v = *state;
	struct dm_dev *md;

	put_data(v, 1, 0, MIB);
	md = create_dev(v->r, "mix",
	                "0 2048 linear %s 0\n2048 2048 zero\n4096 2048 linear %s 0\n"
	                "6144 2048 linear %s 0",
	                v->path[1], v->path[2], v->path[1]);
	/* data, zero, the unwritten d2 (hole, merged with the zero target), data */
	expect(ask(md, 0, 4 * MIB, MAXEXT), 3, E(MIB, 0), E(2 * MIB, HZ), E(MIB, 0));
	/* from the middle of the zero target */
	expect(ask(md, MIB + 512, MIB, MAXEXT), 1, E(MIB, HZ));
}

/* An error target ends the answer there; a range that starts in it fails. */
static void test_error_in_table(void **state)
{
	struct env *v = *state;
	struct dm_dev *md = create_dev(v->r, "ez", "0 8 zero\n8 8 error\n16 8 zero");
	struct answer *a;

	expect(ask(md, 0, 12 * KIB, MAXEXT), 1, E(4 * KIB, HZ));
	a = ask(md, 4 * KIB, 4 * KIB, MAXEXT);
	assert_int_equal(a->r, -EIO);
	expect(ask(md, 8 * KIB, 4 * KIB, MAXEXT), 1, E(4 * KIB, HZ));
}

/* Stacked: a linear device over a mapped device answers with the lower device's holes. */
static void test_stacked(void **state)
{
	struct env *v = *state;
	struct dm_dev *top;

	put_data(v, 0, 0, 64 * KIB);
	create_dev(v->r, "low", "0 1024 linear %s 0\n1024 1024 zero", v->path[0]);
	top = create_dev(v->r, "top", "0 8 zero\n8 1536 linear low 512");
	/* top: 4 KiB zero, then low from 256 KiB: hole to 512 KiB, zero target to 1 MiB */
	expect(ask(top, 0, 4 * KIB + 768 * KIB, MAXEXT), 1, E(772 * KIB, HZ));
	create_dev(v->r, "top2", "0 2048 linear low 0");
	expect(ask(dm_find(v->r, "top2"), 0, MIB, MAXEXT), 2, E(64 * KIB, 0), E(960 * KIB, HZ));
}

/* striped: each chunk is asked of its stripe's file. */
static void test_striped(void **state)
{
	struct env *v = *state;
	struct dm_dev *md;

	/* 2 stripes, 64 KiB chunks: chunk 0 on d0 at 0, chunk 1 on d1 at 0, chunk 2 on d0 at
	 * 64 KiB, chunk 3 on d1 at 64 KiB. Data in chunk 1 and chunk 2 only. */
	put_data(v, 1, 0, 64 * KIB);
	put_data(v, 0, 64 * KIB, 64 * KIB);
	md = create_dev(v->r, "str", "0 2048 striped 2 128 %s 0 %s 0", v->path[0], v->path[1]);
	expect(ask(md, 0, MIB, MAXEXT), 3, E(64 * KIB, HZ), E(128 * KIB, 0), E(832 * KIB, HZ));
}

/* A full array ends the answer: covered says how far it got, the last extent is whole. */
static void test_full_array(void **state)
{
	struct env *v = *state;
	struct dm_dev *md = create_dev(v->r, "pat", "0 64 bstest dhdhdhdh");
	struct answer *a = ask(md, 0, 32 * KIB, 3);

	expect(a, 3, E(4 * KIB, 0), E(4 * KIB, HZ), E(4 * KIB, 0));
	assert_true(a->x.full);
	a = ask(md, 0, 32 * KIB, 1);
	expect(a, 1, E(4 * KIB, 0));
}

/* What the core makes of hooks that stop early, say nothing, say too much, or fail late. */
static void test_hook_contract(void **state)
{
	struct env *v = *state;
	struct dm_dev *md;

	md = create_dev(v->r, "p1", "0 32 bstest hhsd\n32 8 zero");
	/* stopped early: the answer ends there, the next target is not asked */
	expect(ask(md, 0, 20 * KIB, MAXEXT), 1, E(8 * KIB, HZ));
	md = create_dev(v->r, "p2", "0 8 zero\n8 16 bstest nd\n24 8 zero");
	/* said nothing: data for the whole target */
	expect(ask(md, 0, 16 * KIB, MAXEXT), 3, E(4 * KIB, HZ), E(8 * KIB, 0), E(4 * KIB, HZ));
	md = create_dev(v->r, "p3", "0 8 bstest o\n8 8 zero");
	/* said too much: cut back to the target */
	expect(ask(md, 0, 8 * KIB, MAXEXT), 2, E(4 * KIB, 0), E(4 * KIB, HZ));
	md = create_dev(v->r, "p4", "0 24 bstest zHe");
	/* failed after reporting: what came before is the answer */
	expect(ask(md, 0, 12 * KIB, MAXEXT), 2, E(4 * KIB, DM_EXTENT_ZERO),
	       E(4 * KIB, DM_EXTENT_HOLE));
	assert_int_equal(ask(md, 8 * KIB, 4 * KIB, MAXEXT)->r, -EIO);
}

/* Targets without the hook report data: a type with nothing but ctr and map. */
static int plain_ctr(struct dm_target *ti, unsigned argc, char **argv)
{
	(void)ti;
	(void)argc;
	(void)argv;
	return 0;
}

static const struct dm_target_type plain_target = {
    .name = "bsplain",
    .ctr = plain_ctr,
    .map = bstest_map,
};

static void test_no_hook_is_data(void **state)
{
	struct env *v = *state;
	struct dm_dev *md;

	assert_int_equal(dm_register_target(&plain_target), 0);
	md = create_dev(v->r, "plain", "0 8 zero\n8 8 bsplain\n16 8 zero");
	expect(ask(md, 0, 12 * KIB, MAXEXT), 3, E(4 * KIB, HZ), E(4 * KIB, 0), E(4 * KIB, HZ));
	assert_int_equal(dm_remove(v->r, "plain"), 0);
	dm_unregister_target(&plain_target);
}

/* bdev_extent itself: sector rounding of a hole that starts or ends inside a sector, and
 * data to the end on a file system that cannot tell is not testable here; a whole-file
 * hole and the end of the range are. */
static void test_bdev_extent(void **state)
{
	struct env *v = *state;
	struct bdev *bd;
	uint64_t len;
	bool hole;

	put_data(v, 3, 8 * KIB, 100); /* the 4 KiB block at 8 KiB becomes data */
	assert_int_equal(bdev_open(v->path[3], BDEV_NO_DIRECT, &bd), 0);
	bdev_extent(bd, 0, 16 * MIB, &len, &hole);
	assert_true(hole);
	assert_int_equal(len, 8 * KIB);
	bdev_extent(bd, 8 * KIB, 16 * MIB, &len, &hole);
	assert_false(hole);
	assert_int_equal(len, 4 * KIB);
	bdev_extent(bd, 12 * KIB, 16 * MIB, &len, &hole);
	assert_true(hole);
	assert_int_equal(len, 16 * MIB - 12 * KIB);
	bdev_extent(bd, 12 * KIB, 20 * KIB, &len, &hole);
	assert_true(hole);
	assert_int_equal(len, 8 * KIB);
	bdev_close(bd);
	/* test mode: data, always */
	assert_int_equal(bdev_open(v->path[3], BDEV_DROP_WRITES, &bd), 0);
	bdev_extent(bd, 0, 16 * MIB, &len, &hole);
	assert_false(hole);
	assert_int_equal(len, 16 * MIB);
	bdev_close(bd);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test_setup_teardown(test_zero_error, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_bad_ranges, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_linear_sparse_file, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_mixed_table, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_error_in_table, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_stacked, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_striped, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_full_array, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_hook_contract, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_no_hook_is_data, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_bdev_extent, setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
