/*
 * thin_workload: drives pdata/thin_metadata for the e2e tests and the benchmark (not a test
 * by itself).
 *
 *   thin_workload random IMG SEED NOPS [--oracle]
 *       Random operations (create, snapshot, delete, insert, shared insert, remove, range
 *       remove, lookup, resize data and metadata, set_transaction_id, reserve/release the
 *       metadata snapshot, commit) against an in-memory model. After every commit: ulvm's
 *       checker is clean and ulvm's dump equals the model's XML; with --oracle also
 *       thin_check 0.9.0 is clean and thin_dump 0.9.0 (and thin_dump -m while a metadata
 *       snapshot is held) equals the model's XML.
 *   thin_workload powercut IMG SEED NOPS [--oracle] [--stride K] [--lose-unflushed]
 *       The same workload, cut after 0, K, 2K, ... writes (io/bdev's test-only power cut:
 *       nothing after the cut reaches the disk; with --lose-unflushed, neither does any
 *       write that no flush covered before the cut, as on a disk with a volatile cache). Each time
 * the metadata must open at exactly the last committed model (or the one being committed when the
 * cut came), pass ulvm's checker (and thin_check 0.9.0 with --oracle). thin_workload damage IMG
 * SEED NOPS [--oracle] Build a pool, then flip one bit in every block in use, one block at a time:
 * ulvm's checker must report each; the check-then-open sequence must refuse; lists which ones
 *       thin_check 0.9.0 misses. A second pass flips a bit and fixes up the checksum.
 *   thin_workload bench IMG DEVS MAPPINGS
 *       The benchmark's workload (bench/thin_metadata.sh): figures on stdout.
 * Exit status 0 when every check held.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "io/bdev.h"
#include "pdata/btree.h"
#include "pdata/space_map.h"
#include "pdata/thin_metadata.h"
#include "pdata/thin_tools.h"
#include "util/util.h"

#define MAXDEV  24
#define VBLOCKS 1024

struct mdev {
	bool exists;
	uint64_t id;
	uint64_t data[VBLOCKS]; /* 0 unmapped, else data block + 1 */
	uint32_t time[VBLOCKS];
	uint64_t mapped, trans;
	uint32_t ctime, stime;
};

struct model {
	struct mdev dev[MAXDEV];
	uint32_t time;
	uint64_t trans;
	uint64_t nr_data;
	uint64_t nr_meta;
	bool held;
	char *held_xml;
};

static uint64_t rng_state;
static uint64_t rnd(void)
{
	rng_state ^= rng_state << 13;
	rng_state ^= rng_state >> 7;
	rng_state ^= rng_state << 17;
	return rng_state;
}
static uint64_t rnd_below(uint64_t n)
{
	return n ? rnd() % n : 0;
}

static const char *img_path;
static bool oracle;
static int failures;

static void failf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void failf(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	fprintf(stderr, "FAIL: ");
	vfprintf(stderr, fmt, ap);
	fprintf(stderr, "\n");
	va_end(ap);
	failures++;
}

static uint64_t dev_id(int slot)
{
	return (uint64_t)slot * 7 + 1;
}

/* The XML thin_dump prints for the model (nr_data 0 for a metadata snapshot). */
static char *model_xml(const struct model *m, uint64_t nr_data)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	fprintf(f,
	        "<superblock uuid=\"\" time=\"%u\" transaction=\"%" PRIu64
	        "\" flags=\"0\" version=\"2\" "
	        "data_block_size=\"128\" nr_data_blocks=\"%" PRIu64 "\">\n",
	        m->time, m->trans, nr_data);
	for (int s = 0; s < MAXDEV; s++) {
		const struct mdev *d = &m->dev[s];
		if (!d->exists)
			continue;
		fprintf(f,
		        "  <device dev_id=\"%" PRIu64 "\" mapped_blocks=\"%" PRIu64
		        "\" transaction=\"%" PRIu64 "\" creation_time=\"%u\" snap_time=\"%u\">\n",
		        d->id, d->mapped, d->trans, d->ctime, d->stime);
		for (uint64_t v = 0; v < VBLOCKS;) {
			if (!d->data[v]) {
				v++;
				continue;
			}
			uint64_t len2 = 1;
			while (v + len2 < VBLOCKS && d->data[v + len2] == d->data[v] + len2 &&
			       d->time[v + len2] == d->time[v])
				len2++;
			if (len2 == 1)
				fprintf(f,
				        "    <single_mapping origin_block=\"%" PRIu64
				        "\" data_block=\"%" PRIu64 "\" time=\"%u\"/>\n",
				        v, d->data[v] - 1, d->time[v]);
			else
				fprintf(f,
				        "    <range_mapping origin_begin=\"%" PRIu64
				        "\" data_begin=\"%" PRIu64 "\" length=\"%" PRIu64
				        "\" time=\"%u\"/>\n",
				        v, d->data[v] - 1, len2, d->time[v]);
			v += len2;
		}
		fprintf(f, "  </device>\n");
	}
	fprintf(f, "</superblock>\n");
	fclose(f);
	return buf;
}

static char *ulvm_dump(struct bdev *bd, bool snap)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	struct thin_dump_opts o = {0};
	int r;

	o.metadata_snap = snap;
	r = thin_dump_xml(bd, &o, f);
	fclose(f);
	if (r) {
		fprintf(stderr, "dump: %s\n", ulvm_last_error());
		free(buf);
		return NULL;
	}
	return buf;
}

static char *run_capture(const char *cmd, int *status)
{
	char *buf = NULL;
	size_t len = 0, n;
	char chunk[65536];
	FILE *p = popen(cmd, "r"), *f = open_memstream(&buf, &len);

	while (p && (n = fread(chunk, 1, sizeof(chunk), p)) > 0)
		fwrite(chunk, 1, n, f);
	*status = p ? pclose(p) : -1;
	fclose(f);
	return buf;
}

static void report_line(void *arg, bool fatal, const char *line)
{
	if (arg)
		fprintf(stderr, "  ulvm check: %s%s\n", fatal ? "" : "(non-fatal) ", line);
}

/* Findings that fail the check; with warnings, the tolerated discrepancies too (stale
 * allocation hints: reported, but the check passes). */
static unsigned ulvm_check_lines(struct bdev *bd, bool verbose, bool warnings)
{
	struct thin_check_opts o = {0};
	struct thin_check_result res;

	o.quiet = true;
	o.report = report_line;
	o.arg = verbose ? (void *)1 : NULL;
	if (thin_check_metadata(bd, &o, &res))
		return 1000;
	return res.fatal + res.non_fatal + (warnings ? res.warnings : 0);
}

static unsigned ulvm_check(struct bdev *bd, bool verbose)
{
	return ulvm_check_lines(bd, verbose, false);
}

static int oracle_check(void)
{
	char cmd[512];
	int st;
	snprintf(cmd, sizeof(cmd), "thin_check -q '%s' 2>&1", img_path);
	char *out = run_capture(cmd, &st);
	if (st)
		fprintf(stderr, "thin_check 0.9.0: %s", out ? out : "");
	free(out);
	return st;
}

/* Everything the tests check after a commit. */
static void verify_committed(struct bdev *bd, const struct model *m, uint64_t nops)
{
	char *want = model_xml(m, m->nr_data), *got = ulvm_dump(bd, false);

	if (ulvm_check(bd, true))
		failf("after op %" PRIu64 ": ulvm's checker is not clean", nops);
	if (!got || strcmp(got, want))
		failf("after op %" PRIu64 ": ulvm's dump differs from the model", nops);
	free(got);
	if (oracle) {
		char cmd[512];
		int st;
		if (oracle_check())
			failf("after op %" PRIu64 ": thin_check 0.9.0 is not clean", nops);
		snprintf(cmd, sizeof(cmd), "thin_dump '%s'", img_path);
		got = run_capture(cmd, &st);
		if (st || !got || strcmp(got, want)) {
			failf("after op %" PRIu64 ": thin_dump 0.9.0 differs from the model", nops);
			FILE *f = fopen("/tmp/thin_workload.want.xml", "w");
			if (f) {
				fputs(want, f);
				fclose(f);
			}
			f = fopen("/tmp/thin_workload.got.xml", "w");
			if (f) {
				fputs(got ? got : "", f);
				fclose(f);
			}
		}
		free(got);
		if (m->held) {
			snprintf(cmd, sizeof(cmd), "thin_dump -m '%s'", img_path);
			got = run_capture(cmd, &st);
			if (st || !got || strcmp(got, m->held_xml))
				failf("after op %" PRIu64
				      ": thin_dump -m 0.9.0 differs from the held model",
				      nops);
			free(got);
		}
	}
	free(want);
}

/* ---- the random workload ------------------------------------------------------------------ */

struct run {
	struct bdev *bd;
	struct thin_md *md;
	struct model m;
	char *committed_xml, *pending_xml; /* last committed model, model being committed */
	uint64_t ops;
	bool verify;
};

static int pick_dev(struct model *m, bool exists)
{
	int cand[MAXDEV], n = 0;

	for (int s = 0; s < MAXDEV; s++)
		if (m->dev[s].exists == exists)
			cand[n++] = s;
	return n ? cand[rnd_below((uint64_t)n)] : -1;
}

static int do_commit(struct run *rn)
{
	free(rn->pending_xml);
	rn->pending_xml = model_xml(&rn->m, rn->m.nr_data);
	int r = thin_md_commit(rn->md);
	if (r)
		return r;
	free(rn->committed_xml);
	rn->committed_xml = rn->pending_xml;
	rn->pending_xml = NULL;
	if (rn->verify)
		verify_committed(rn->bd, &rn->m, rn->ops);
	return 0;
}

/* One operation; 0, or the error of a call that failed (expected only under a power cut). */
static int one_op(struct run *rn)
{
	struct model *m = &rn->m;
	struct thin_md *md = rn->md;
	uint64_t op = rnd_below(100);
	int s, o, r = 0;

	rn->ops++;
	if (op < 4) { /* create */
		if ((s = pick_dev(m, false)) < 0)
			return 0;
		if ((r = thin_md_create_thin(md, dev_id(s))))
			return r;
		struct mdev *d = &m->dev[s];
		memset(d, 0, sizeof(*d));
		*d = (struct mdev){.exists = true,
		                   .id = dev_id(s),
		                   .trans = m->trans,
		                   .ctime = m->time,
		                   .stime = m->time};
	} else if (op < 7) { /* snapshot */
		if ((s = pick_dev(m, false)) < 0 || (o = pick_dev(m, true)) < 0)
			return 0;
		if ((r = thin_md_create_snap(md, dev_id(s), dev_id(o))))
			return r;
		m->time++;
		m->dev[s] = m->dev[o];
		m->dev[s].id = dev_id(s);
		m->dev[s].trans = m->trans;
		m->dev[s].ctime = m->dev[s].stime = m->time;
		m->dev[o].stime = m->time;
	} else if (op < 9) { /* delete */
		if ((s = pick_dev(m, true)) < 0 || rnd_below(3))
			return 0;
		if ((r = thin_md_delete(md, dev_id(s))))
			return r;
		m->dev[s].exists = false;
	} else if (op < 55) { /* insert a run of new blocks */
		if ((s = pick_dev(m, true)) < 0)
			return 0;
		uint64_t v0 = rnd_below(VBLOCKS), n = 1 + rnd_below(8);
		for (uint64_t v = v0; v < v0 + n && v < VBLOCKS; v++) {
			uint64_t b;
			r = thin_md_alloc_data_block(md, &b);
			if (r == -ENOSPC) {
				if ((r = thin_md_resize_data(md, m->nr_data + 500)))
					return r;
				m->nr_data += 500;
				r = thin_md_alloc_data_block(md, &b);
			}
			if (r || (r = thin_md_insert(md, dev_id(s), v, b)))
				return r;
			struct mdev *d = &m->dev[s];
			d->mapped += !d->data[v];
			d->data[v] = b + 1;
			d->time[v] = m->time;
		}
	} else if (op < 62) { /* map a block another device uses */
		if ((s = pick_dev(m, true)) < 0 || (o = pick_dev(m, true)) < 0)
			return 0;
		uint64_t v = rnd_below(VBLOCKS), w = rnd_below(VBLOCKS);
		if (!m->dev[o].data[w])
			return 0;
		uint64_t b = m->dev[o].data[w] - 1;
		if ((r = thin_md_data_inc(md, b)) || (r = thin_md_insert(md, dev_id(s), v, b)))
			return r;
		struct mdev *d = &m->dev[s];
		d->mapped += !d->data[v];
		d->data[v] = b + 1;
		d->time[v] = m->time;
	} else if (op < 72) { /* remove */
		if ((s = pick_dev(m, true)) < 0)
			return 0;
		uint64_t v = rnd_below(VBLOCKS);
		r = thin_md_remove(md, dev_id(s), v);
		if (r == -ENODATA && !m->dev[s].data[v])
			return 0;
		if (r)
			return r;
		m->dev[s].data[v] = 0;
		m->dev[s].mapped--;
	} else if (op < 76) { /* range remove */
		if ((s = pick_dev(m, true)) < 0)
			return 0;
		uint64_t a = rnd_below(VBLOCKS), len = rnd_below(200), removed, want = 0;
		if ((r = thin_md_remove_range(md, dev_id(s), a, a + len, &removed)))
			return r;
		for (uint64_t v = a; v < a + len && v < VBLOCKS; v++)
			if (m->dev[s].data[v]) {
				m->dev[s].data[v] = 0;
				want++;
			}
		m->dev[s].mapped -= want;
		if (removed != want) {
			failf("op %" PRIu64 ": range remove removed %" PRIu64 ", model %" PRIu64,
			      rn->ops, removed, want);
		}
	} else if (op < 86) { /* lookups */
		if ((s = pick_dev(m, true)) < 0)
			return 0;
		for (int k = 0; k < 8; k++) {
			uint64_t v = rnd_below(VBLOCKS), b;
			uint32_t t;
			r = thin_md_lookup(md, dev_id(s), v, &b, &t);
			if (r == -ENODATA
			        ? m->dev[s].data[v] != 0
			        : r || b + 1 != m->dev[s].data[v] || t != m->dev[s].time[v]) {
				if (r && r != -ENODATA)
					return r;
				failf("op %" PRIu64 ": lookup %" PRIu64 "/%" PRIu64
				      " differs from the model",
				      rn->ops, dev_id(s), v);
			}
		}
		r = 0;
	} else if (op < 87) { /* grow the data device */
		uint64_t add = 1 + rnd_below(20000);
		if ((r = thin_md_resize_data(md, m->nr_data + add)))
			return r;
		m->nr_data += add;
	} else if (op < 88) { /* grow the metadata */
		uint64_t max = rn->bd->size / PDATA_BLOCK_SIZE;
		if (m->nr_meta >= max)
			return 0;
		uint64_t n = m->nr_meta + 1 + rnd_below(max - m->nr_meta);
		if ((r = thin_md_resize_metadata(md, n)))
			return r;
		m->nr_meta = n;
	} else if (op < 90) { /* set_transaction_id, as LVM after every message */
		if ((r = thin_md_set_transaction_id(md, m->trans, m->trans + 1)))
			return r;
		m->trans++;
	} else if (op < 92) { /* metadata snapshot (both commit, as the kernel's messages) */
		if (!m->held) {
			free(rn->pending_xml);
			rn->pending_xml = model_xml(m, m->nr_data);
			char *hx = model_xml(m, 0);
			if ((r = thin_md_reserve_metadata_snap(md))) {
				free(hx);
				return r;
			}
			m->held = true;
			m->held_xml = hx;
		} else {
			free(rn->pending_xml);
			rn->pending_xml = model_xml(m, m->nr_data);
			if ((r = thin_md_release_metadata_snap(md)))
				return r;
			m->held = false;
			free(m->held_xml);
			m->held_xml = NULL;
		}
		free(rn->committed_xml);
		rn->committed_xml = rn->pending_xml;
		rn->pending_xml = NULL;
		if (rn->verify)
			verify_committed(rn->bd, m, rn->ops);
	} else { /* commit */
		return do_commit(rn);
	}
	return 0;
}

static int run_start(struct run *rn, uint64_t seed, size_t cache)
{
	struct thin_md_options o = {0};
	int r;

	memset(rn, 0, sizeof(*rn));
	rng_state = seed * 0x9e3779b97f4a7c15ull + 1;
	if ((r = bdev_open(img_path, BDEV_NO_DIRECT, &rn->bd)))
		return r;
	rn->m.nr_data = 4000;
	rn->m.nr_meta = 2048;
	o.metadata_blocks = rn->m.nr_meta;
	o.cache_bytes = cache;
	rn->committed_xml = NULL;
	rn->pending_xml = model_xml(&rn->m, rn->m.nr_data);
	if ((r = thin_md_format(rn->bd, 128, rn->m.nr_data, &o, &rn->md)))
		return r;
	rn->committed_xml = rn->pending_xml;
	rn->pending_xml = NULL;
	return 0;
}

static void run_end(struct run *rn)
{
	thin_md_close(rn->md);
	rn->md = NULL;
	if (rn->bd)
		bdev_close(rn->bd);
	rn->bd = NULL;
	free(rn->m.held_xml);
	rn->m.held_xml = NULL;
}

static void make_image(uint64_t bytes)
{
	int fd = open(img_path, O_RDWR | O_CREAT | O_TRUNC, 0600);

	if (fd < 0 || ftruncate(fd, (off_t)bytes)) {
		perror(img_path);
		exit(2);
	}
	close(fd);
}

/* A formatted 16 MiB image and a run on it. */
static int fresh_run(struct run *rn, uint64_t seed)
{
	make_image(16 << 20);
	if (run_start(rn, seed, 0)) {
		fprintf(stderr, "format: %s\n", ulvm_last_error());
		return 1;
	}
	return 0;
}

static int cmd_random(uint64_t seed, uint64_t nops)
{
	struct run rn;
	int r;

	if (fresh_run(&rn, seed))
		return 1;
	rn.verify = true;
	uint64_t commits = 0;
	while (rn.ops < nops && !failures) {
		uint64_t before = rn.ops;
		if ((r = one_op(&rn))) {
			failf("op %" PRIu64 ": %s", rn.ops, ulvm_last_error());
			break;
		}
		(void)before;
	}
	if (!failures && (r = do_commit(&rn)))
		failf("final commit: %s", ulvm_last_error());
	commits = 0;
	int ndev = 0;
	for (int s = 0; s < MAXDEV; s++)
		ndev += rn.m.dev[s].exists;
	printf("random: %" PRIu64 " ops, %d devices at the end, time %u, %" PRIu64
	       " data blocks%s\n",
	       rn.ops, ndev, rn.m.time, rn.m.nr_data,
	       oracle ? ", thin_check/thin_dump 0.9.0 after every commit" : "");
	(void)commits;
	free(rn.committed_xml);
	free(rn.pending_xml);
	run_end(&rn);
	return failures ? 1 : 0;
}

/* ---- power cut ------------------------------------------------------------------------------ */

static bool lose_unflushed;

static int cmd_powercut(uint64_t seed, uint64_t nops, long stride)
{
	long cut;
	uint64_t tried = 0;

	for (cut = 0;; cut += stride) {
		struct run rn;
		int r;

		make_image(16 << 20);
		bdev_fault_inject_after(cut);
		r = run_start(&rn, seed, 64 * PDATA_BLOCK_SIZE);
		while (!r && rn.ops < nops)
			r = one_op(&rn);
		if (!r)
			r = do_commit(&rn);
		long refused = bdev_fault_inject_after(-1);
		char *committed = rn.committed_xml ? strdup(rn.committed_xml) : NULL;
		char *pending = rn.pending_xml ? strdup(rn.pending_xml) : NULL;
		free(rn.committed_xml);
		free(rn.pending_xml);
		run_end(&rn);
		tried++;
		/* Reopen: exactly the last committed state (or the one being committed). */
		struct bdev *bd;
		struct thin_md *md;
		if (bdev_open(img_path, BDEV_NO_DIRECT, &bd)) {
			failf("cut %ld: cannot open the image", cut);
			break;
		}
		r = thin_md_open(bd, NULL, &md);
		if (r) {
			if (committed) /* formatted: must open */
				failf("cut %ld: metadata does not open: %s", cut,
				      ulvm_last_error());
		} else {
			thin_md_close(md);
			char *got = ulvm_dump(bd, false);
			if (!got || ((!committed || strcmp(got, committed)) &&
			             (!pending || strcmp(got, pending))))
				failf("cut %ld: the metadata is neither the last committed state "
				      "nor the one being committed",
				      cut);
			if (ulvm_check(bd, true))
				failf("cut %ld: ulvm's checker is not clean", cut);
			if (oracle && oracle_check())
				failf("cut %ld: thin_check 0.9.0 is not clean", cut);
			free(got);
		}
		bdev_close(bd);
		free(committed);
		free(pending);
		if (failures || refused == 0)
			break;
	}
	printf("powercut: %" PRIu64 " cut points (every %ld writes, up to %ld%s), each opened at "
	       "the last committed transaction%s\n",
	       tried, stride, cut, lose_unflushed ? ", unflushed writes lost" : "",
	       oracle ? " and passed thin_check 0.9.0" : "");
	return failures ? 1 : 0;
}

/* ---- damage --------------------------------------------------------------------------------- */

static const char *block_kind(const uint8_t *b, uint64_t loc)
{
	static char buf[64];
	le32 c;

	memcpy(&c, b, 4);
	uint32_t cs = le32_to_cpu(c);
	if (cs == pdata_block_csum(b, THIN_SUPERBLOCK_SALT))
		return loc ? "metadata snapshot superblock" : "superblock";
	if (cs == pdata_block_csum(b, SM_BITMAP_SALT))
		return "space map bitmap";
	if (cs == pdata_block_csum(b, SM_INDEX_SALT))
		return "metadata space map index";
	if (cs == pdata_block_csum(b, 121107)) {
		uint32_t fl = btree_node_flags(b);
		uint32_t vs = le32_to_cpu(((const struct btree_node_header *)b)->value_size);
		snprintf(buf, sizeof(buf), "btree %s (value size %u)",
		         fl == 1 ? "internal node" : "leaf", vs);
		return buf;
	}
	return "unknown";
}

/* A byte of the block that holds live data (an entry in use, a superblock field), for the
 * damage that keeps the checksum right. */
static uint32_t live_offset(const uint8_t *b, const char *kind, uint64_t loc, uint64_t h)
{
	uint64_t r = h >> 20;

	if (!strncmp(kind, "btree", 5)) {
		uint32_t nr = btree_node_nr(b),
		         max = le32_to_cpu(((const struct btree_node_header *)b)->max_entries);
		uint32_t vs = le32_to_cpu(((const struct btree_node_header *)b)->value_size);
		if (!nr)
			return 16 + (uint32_t)(r % 16); /* the header's counts */
		uint32_t i = (uint32_t)(r % nr);
		if ((r >> 32) & 1)
			return 32 + 8 * i + (uint32_t)((r >> 33) % 8);
		return 32 + 8 * max + vs * i + (uint32_t)((r >> 33) % vs);
	}
	if (!strcmp(kind, "space map bitmap"))
		return 16 + (uint32_t)(r % 4080);
	if (!strcmp(kind, "metadata space map index"))
		return 16 + (uint32_t)(r % 16);
	(void)loc;
	return 16 + (uint32_t)(r % (364 - 16)); /* superblock fields after blocknr */
}

/* The check-then-open sequence an activation runs: refuses when the check finds anything. */
static bool open_refuses(struct bdev *bd)
{
	struct thin_md *md;

	if (ulvm_check(bd, false))
		return true;
	if (thin_md_open(bd, NULL, &md))
		return true;
	thin_md_close(md);
	return false;
}

static int cmd_damage(uint64_t seed, uint64_t nops)
{
	struct run rn;
	int r;

	if (fresh_run(&rn, seed))
		return 1;
	while (rn.ops < nops && !(r = one_op(&rn)))
		;
	if (r || (r = do_commit(&rn)) ||
	    (!rn.m.held && (r = thin_md_reserve_metadata_snap(rn.md)))) {
		fprintf(stderr, "workload: %s\n", ulvm_last_error());
		return 1;
	}
	/* A few more changes after the metadata snapshot, so that trees are shared with it. */
	for (int i = 0; i < 50 && !r; i++)
		r = one_op(&rn);
	if (r || (r = thin_md_commit(rn.md))) {
		fprintf(stderr, "workload: %s\n", ulvm_last_error());
		return 1;
	}
	uint64_t nblocks = rn.bd->size / PDATA_BLOCK_SIZE;
	uint8_t *used = calloc(nblocks, 1);
	for (uint64_t b = 0; b < nblocks; b++) {
		uint32_t c = 0;
		if (b < rn.m.nr_meta && !tm_ref(thin_md_tm(rn.md), b, &c) && c)
			used[b] = 1;
	}
	free(rn.committed_xml);
	free(rn.pending_xml);
	run_end(&rn);

	struct bdev *bd;
	if (bdev_open(img_path, BDEV_NO_DIRECT, &bd))
		return 1;
	if (ulvm_check(bd, true))
		failf("the undamaged pool is not clean");
	uint8_t *orig = bdev_alloc_buffer(PDATA_BLOCK_SIZE),
	        *dmg = bdev_alloc_buffer(PDATA_BLOCK_SIZE);
	for (int pass = 0; pass < 2; pass++) {
		uint64_t n = 0, ulvm_found = 0, refused = 0, oracle_missed = 0;
		char missed[4096] = "", kinds[16][64];
		unsigned kind_missed[16] = {0}, kind_both[16] = {0};
		int nkinds = 0;
		size_t ml = 0;
		for (uint64_t b = 0; b < nblocks; b++) {
			if (!used[b])
				continue;
			n++;
			if (bdev_read(bd, orig, PDATA_BLOCK_SIZE, b * PDATA_BLOCK_SIZE))
				return 1;
			memcpy(dmg, orig, PDATA_BLOCK_SIZE);
			uint64_t h = (b + 1) * 0x9e3779b97f4a7c15ull;
			uint32_t off = (uint32_t)(h >> 40) % PDATA_BLOCK_SIZE;
			const char *kind = block_kind(orig, b);
			if (pass == 1)
				off = live_offset(orig, kind, b, h);
			dmg[off] ^= (uint8_t)(1u << (h >> 61));
			if (pass == 1) {
				/* Semantic damage: the checksum still matches. */
				uint32_t salt = !strncmp(kind, "btree", 5)          ? 121107
				                : !strcmp(kind, "space map bitmap") ? SM_BITMAP_SALT
				                : !strcmp(kind, "metadata space map index")
				                    ? SM_INDEX_SALT
				                    : THIN_SUPERBLOCK_SALT;
				le32 c = cpu_to_le32(pdata_block_csum(dmg, salt));
				memcpy(dmg, &c, 4);
			}
			if (bdev_write(bd, dmg, PDATA_BLOCK_SIZE, b * PDATA_BLOCK_SIZE) ||
			    bdev_flush(bd))
				return 1;
			bool found = ulvm_check_lines(bd, false, true) > 0;
			ulvm_found += found;
			if (pass == 0 && !found)
				failf("bit flip in block %" PRIu64
				      " (%s, byte %u) not reported by ulvm's checker",
				      b, kind, off);
			bool ref = open_refuses(bd);
			refused += ref;
			if (pass == 0 && !ref)
				failf("bit flip in block %" PRIu64 " (%s): opening did not refuse",
				      b, kind);
			if (oracle) {
				char cmd[512];
				int st;
				snprintf(cmd, sizeof(cmd), "thin_check -q '%s' >/dev/null 2>&1",
				         img_path);
				st = system(cmd);
				if (st == 0) {
					oracle_missed++;
					int k;
					for (k = 0; k < nkinds && strcmp(kinds[k], kind); k++)
						;
					if (k == nkinds && nkinds < 16)
						snprintf(kinds[nkinds++], sizeof(kinds[0]), "%s",
						         kind);
					if (k < 16) {
						kind_missed[k]++;
						kind_both[k] += !found;
					}
				}
			}
			if (bdev_write(bd, orig, PDATA_BLOCK_SIZE, b * PDATA_BLOCK_SIZE))
				return 1;
		}
		for (int k = 0; k < nkinds; k++)
			ml += (size_t)snprintf(missed + ml, sizeof(missed) - ml, "%s%u %s%s",
			                       k ? ", " : "", kind_missed[k], kinds[k],
			                       kind_both[k] ? " (ulvm also missed some)" : "");
		printf("damage (%s): %" PRIu64 " blocks in use; ulvm's checker reported %" PRIu64
		       ", check-then-open refused %" PRIu64,
		       pass == 0 ? "one bit flipped per block"
		                 : "one bit flipped, checksum fixed up",
		       n, ulvm_found, refused);
		if (oracle)
			printf("; thin_check 0.9.0 missed %" PRIu64 "%s%s", oracle_missed,
			       oracle_missed ? ": " : "", missed);
		printf("\n");
	}
	free(orig);
	free(dmg);
	free(used);
	bdev_close(bd);
	return failures ? 1 : 0;
}

/* ---- fuzz seeds ------------------------------------------------------------------------------ */

/* Blocks of each kind from a ulvm-written pool, as seed corpora for tests/fuzz/fuzz_thin_*. */
static int cmd_seeds(const char *outdir)
{
	struct run rn;
	int r;
	char p[512];

	if (fresh_run(&rn, 3))
		return 1;
	while (rn.ops < 800 && !(r = one_op(&rn)))
		;
	if (r || (r = do_commit(&rn)) ||
	    (!rn.m.held && (r = thin_md_reserve_metadata_snap(rn.md)))) {
		fprintf(stderr, "workload: %s\n", ulvm_last_error());
		return 1;
	}
	free(rn.committed_xml);
	free(rn.pending_xml);
	run_end(&rn);
	struct bdev *bd;
	uint8_t *blk = bdev_alloc_buffer(PDATA_BLOCK_SIZE);
	unsigned n[4] = {0};
	static const char *dirs[4] = {"thin_node", "thin_superblock", "thin_bitmap", "thin_index"};
	if (bdev_open(img_path, BDEV_NO_DIRECT, &bd))
		return 1;
	for (uint64_t b = 0; b < bd->size / PDATA_BLOCK_SIZE; b++) {
		if (bdev_read(bd, blk, PDATA_BLOCK_SIZE, b * PDATA_BLOCK_SIZE))
			return 1;
		const char *kind = block_kind(blk, b);
		int k = !strncmp(kind, "btree", 5)                  ? 0
		        : strstr(kind, "superblock")                ? 1
		        : !strcmp(kind, "space map bitmap")         ? 2
		        : !strcmp(kind, "metadata space map index") ? 3
		                                                    : -1;
		if (k < 0 || n[k] >= 8)
			continue;
		/* Nodes: one of each shape (leaf value sizes, internal). */
		snprintf(p, sizeof(p), "%s/%s/ulvm-%s-%u", outdir, dirs[k],
		         k == 0 ? kind + 6 : "block", n[k]);
		for (char *c = p + strlen(outdir); *c; c++)
			if (*c == ' ' || *c == '(' || *c == ')')
				*c = '_';
		FILE *f = fopen(p, "w");
		if (!f || fwrite(blk, 1, PDATA_BLOCK_SIZE, f) != PDATA_BLOCK_SIZE || fclose(f)) {
			perror(p);
			return 1;
		}
		n[k]++;
	}
	bdev_close(bd);
	free(blk);
	printf("seeds: %u nodes, %u superblocks, %u bitmaps, %u index blocks\n", n[0], n[1], n[2],
	       n[3]);
	return 0;
}

/* ---- benchmark ------------------------------------------------------------------------------ */

static double now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static int cmd_bench(uint64_t ndevs, uint64_t nmap)
{
	struct bdev *bd;
	struct thin_md *md;
	struct thin_md_options o = {0};
	uint64_t origins = ndevs / 10 ? ndevs / 10 : 1, per = nmap / origins, inserted = 0;
	double t0, tc = 0, tcmax = 0;
	uint64_t ncommits = 0;
	struct rusage ru0;
	int r;

	getrusage(RUSAGE_SELF, &ru0);
	if ((r = bdev_open(img_path, BDEV_NO_DIRECT, &bd)) ||
	    (r = thin_md_format(bd, 128, nmap * 2, &o, &md))) {
		fprintf(stderr, "%s\n", ulvm_last_error());
		return 1;
	}
#define COMMIT_EVERY(n)                                                                            \
	do {                                                                                       \
		if (++inserted % (n) == 0) {                                                       \
			double c0 = now();                                                         \
			if ((r = thin_md_commit(md)))                                              \
				goto err;                                                          \
			double dt = now() - c0;                                                    \
			tc += dt;                                                                  \
			tcmax = MAX(tcmax, dt);                                                    \
			ncommits++;                                                                \
		}                                                                                  \
	} while (0)
	t0 = now();
	for (uint64_t d = 0; d < origins; d++) {
		if ((r = thin_md_create_thin(md, d)))
			goto err;
		for (uint64_t v = 0; v < per; v++) {
			uint64_t b;
			if ((r = thin_md_alloc_data_block(md, &b)) ||
			    (r = thin_md_insert(md, d, v, b)))
				goto err;
			COMMIT_EVERY(10000);
		}
	}
	double t_ins = now() - t0;
	uint64_t ins1 = inserted;
	struct rusage ru1;
	getrusage(RUSAGE_SELF, &ru1);
	/* Snapshots of the origins, then writes to them that unshare a little of each. */
	t0 = now();
	for (uint64_t d = origins; d < ndevs; d++)
		if ((r = thin_md_create_snap(md, d, d % origins)))
			goto err;
	if ((r = thin_md_commit(md)))
		goto err;
	double t_snap = now() - t0;
	t0 = now();
	rng_state = 12345;
	for (uint64_t d = origins; d < ndevs; d++)
		for (int k = 0; k < 20; k++) {
			uint64_t b;
			if ((r = thin_md_alloc_data_block(md, &b)) ||
			    (r = thin_md_insert(md, d, rnd_below(per), b)))
				goto err;
			COMMIT_EVERY(10000);
		}
	if ((r = thin_md_commit(md)))
		goto err;
	double t_unshare = now() - t0;
	uint64_t ins2 = inserted - ins1;
	/* Random lookups: all devices (through the bounded cache), then a cache-resident set. */
	uint64_t nl = 1000000, found = 0;
	t0 = now();
	for (uint64_t i = 0; i < nl; i++) {
		uint64_t b;
		uint32_t t;
		found += !thin_md_lookup(md, rnd_below(ndevs), rnd_below(per), &b, &t);
	}
	double t_look = now() - t0;
	uint64_t hot = 2000; /* virtual blocks of one device: a few leaves */
	for (uint64_t i = 0; i < hot; i++) {
		uint64_t b;
		uint32_t t;
		thin_md_lookup(md, 0, i, &b, &t);
	}
	t0 = now();
	for (uint64_t i = 0; i < nl; i++) {
		uint64_t b;
		uint32_t t;
		found += !thin_md_lookup(md, rnd_below(8), rnd_below(hot), &b, &t);
	}
	double t_hot = now() - t0;
	struct rusage ru;
	getrusage(RUSAGE_SELF, &ru);
	struct bm_stats st;
	bm_get_stats(thin_md_bm(md), &st);
	thin_md_close(md);
	bdev_close(bd);
	printf("devices %" PRIu64 " (%" PRIu64 " origins, the rest snapshots), mappings %" PRIu64
	       "\n",
	       ndevs, origins, origins * per);
	printf("insert_per_s %.0f (%" PRIu64 " inserts into origins, commit every 10000)\n",
	       (double)ins1 / t_ins, ins1);
	printf("unshare_insert_per_s %.0f (%" PRIu64 " writes to snapshots breaking sharing)\n",
	       (double)ins2 / t_unshare, ins2);
	printf("snapshot_s %.3f (%" PRIu64 " snapshots, one commit)\n", t_snap, ndevs - origins);
	printf("commit_ms_avg %.2f commit_ms_max %.2f (%" PRIu64 " commits)\n",
	       ncommits ? tc / (double)ncommits * 1e3 : 0, tcmax * 1e3, ncommits);
	printf("lookup_per_s_all %.0f (random over every device, %" PRIu64 " found)\n",
	       (double)nl / t_look, found);
	printf("lookup_per_s_cached %.0f (random over a cache-resident set)\n", (double)nl / t_hot);
	printf("max_rss_mib_before_open %.1f max_rss_mib_after_origins %.1f max_rss_mib %.1f "
	       "cache_budget_mib %.1f (peak minus before-open: the cache, its bookkeeping and the "
	       "space maps' indexes)\n",
	       (double)ru0.ru_maxrss / 1024, (double)ru1.ru_maxrss / 1024,
	       (double)ru.ru_maxrss / 1024, (double)PDATA_DEFAULT_CACHE_BYTES / (1 << 20));
	printf("cache reads %" PRIu64 " writes %" PRIu64 " hits %" PRIu64 " evictions %" PRIu64
	       "\n",
	       st.reads, st.writes, st.hits, st.evictions);
	return 0;
err:
	fprintf(stderr, "bench: %s\n", ulvm_last_error());
	return 1;
}

int main(int argc, char **argv)
{
	if (argc < 3) {
		fprintf(stderr, "usage: thin_workload random|powercut|damage|bench IMG ...\n");
		return 2;
	}
	img_path = argv[2];
	long stride = 1;
	for (int i = 3; i < argc; i++) {
		if (!strcmp(argv[i], "--oracle"))
			oracle = true;
		if (!strcmp(argv[i], "--lose-unflushed"))
			bdev_fault_lose_unflushed(lose_unflushed = true);
		if (!strcmp(argv[i], "--stride") && i + 1 < argc)
			stride = atol(argv[i + 1]);
	}
	if (!strcmp(argv[1], "seeds") && argc >= 4)
		return cmd_seeds(argv[3]);
	if (!strcmp(argv[1], "bench") && argc >= 5)
		return cmd_bench(strtoull(argv[3], NULL, 10), strtoull(argv[4], NULL, 10));
	if (argc < 5) {
		fprintf(stderr, "usage: thin_workload %s IMG SEED NOPS\n", argv[1]);
		return 2;
	}
	uint64_t seed = strtoull(argv[3], NULL, 10), nops = strtoull(argv[4], NULL, 10);
	if (!strcmp(argv[1], "random"))
		return cmd_random(seed, nops);
	if (!strcmp(argv[1], "powercut"))
		return cmd_powercut(seed, nops, stride > 0 ? stride : 1);
	if (!strcmp(argv[1], "damage"))
		return cmd_damage(seed, nops);
	fprintf(stderr, "unknown mode %s\n", argv[1]);
	return 2;
}
