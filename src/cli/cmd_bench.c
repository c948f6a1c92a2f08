/*
 * `ulvm bench io`: an LV against the raw backing file it lives on, through the library with
 * the same engine, queue depth and buffers, in one run: sequential 1 MiB reads and writes,
 * random 4 KiB reads and writes at queue depth 1 and 32, and the seed-003 sweep of sequential
 * reads from 512 B to 128 KiB (the thread where LVM1 was 6x slower than the raw disk at
 * 512 B). Raw and LV runs alternate and repeat; each figure is the median, and the ratio
 * LV/raw is what matters (the machines are noisy). A striped LV over two files is measured
 * too, against the same raw file.
 *
 *   ulvm bench io [--dir DIR]... [--size SIZE] [--seconds S] [--repeat N] [--json FILE]
 */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "../util/util.h"
#include "cli.h"

struct workload {
	const char *name;
	bool write, random;
	uint32_t bs;
	unsigned qd;
};

static const struct workload workloads[] = {
    {"seq-read", false, false, 1 << 20, 1}, {"seq-write", true, false, 1 << 20, 1},
    {"rand-read", false, true, 4096, 1},    {"rand-read", false, true, 4096, 32},
    {"rand-write", true, true, 4096, 1},    {"rand-write", true, true, 4096, 32},
    {"seq-read", false, false, 512, 1},     {"seq-read", false, false, 1024, 1},
    {"seq-read", false, false, 2048, 1},    {"seq-read", false, false, 4096, 1},
    {"seq-read", false, false, 8192, 1},    {"seq-read", false, false, 16384, 1},
    {"seq-read", false, false, 32768, 1},   {"seq-read", false, false, 65536, 1},
    {"seq-read", false, false, 131072, 1},
};

struct runner {
	struct ulvm_dev *dev;
	uint64_t base, span; /* bytes: where the workload runs on dev */
	const struct workload *w;
	uint64_t next_seq, ops, bytes;
	uint64_t rng;
	bool stop;
	uint8_t **bufs;
	struct ulvm_io *ios;
	int error;
};

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static uint64_t next_offset(struct runner *r)
{
	uint64_t blocks = r->span / r->w->bs, off;

	if (r->w->random) {
		r->rng ^= r->rng << 13; /* xorshift64 */
		r->rng ^= r->rng >> 7;
		r->rng ^= r->rng << 17;
		off = (r->rng % blocks) * r->w->bs;
	} else {
		off = r->next_seq;
		r->next_seq += r->w->bs;
		if (r->next_seq + r->w->bs > r->span)
			r->next_seq = 0;
	}
	return r->base + off;
}

static void issue(struct runner *r, struct ulvm_io *io);

static void io_done(struct ulvm_io *io, int result)
{
	struct runner *r = io->private;

	if (result && !r->error)
		r->error = result;
	r->ops++;
	r->bytes += io->length;
	if (!r->stop && !r->error)
		issue(r, io);
}

static void issue(struct runner *r, struct ulvm_io *io)
{
	int e;

	io->op = r->w->write ? ULVM_IO_WRITE : ULVM_IO_READ;
	io->flags = 0;
	io->offset = next_offset(r);
	io->length = r->w->bs;
	io->done = io_done;
	io->private = r;
	if ((e = ulvm_dev_submit(r->dev, io)) && !r->error)
		r->error = e;
}

/* Run one workload for `secs`; returns operations per second, or a negative errno. */
static double run_cell(struct ulvm_dev *dev, uint64_t base, uint64_t span, const struct workload *w,
                       double secs, uint8_t **bufs, struct ulvm_io *ios)
{
	struct runner r = {.dev = dev,
	                   .base = base,
	                   .span = span,
	                   .w = w,
	                   .rng = 0x9e3779b97f4a7c15ull,
	                   .bufs = bufs,
	                   .ios = ios};
	double t0 = now_s(), t1;

	for (unsigned i = 0; i < w->qd; i++) {
		memset(&ios[i], 0, sizeof(ios[i]));
		ios[i].buf = bufs[i];
		issue(&r, &ios[i]);
	}
	while (!r.error) {
		if (ulvm_dev_poll(dev, 1) < 0)
			break;
		if (now_s() - t0 >= secs)
			break;
	}
	r.stop = true;
	t1 = now_s();
	while (ulvm_dev_inflight(dev) && ulvm_dev_poll(dev, 1) >= 0)
		;
	if (r.error)
		return r.error;
	return (double)r.ops / (t1 - t0);
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

static double median(double *v, unsigned n)
{
	qsort(v, n, sizeof(*v), cmp_double);
	return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

/* Run a shell-free ulvm command through the library: build the VG the benchmark needs. */
static int make_vg(struct cli *c, const char *dir, uint64_t size, char paths[3][4096],
                   char vgname[64])
{
	const char *pvs[3];
	struct ulvm_vg *vg;
	struct ulvm_lv *lv;
	struct ulvm_lv_params lin = {.name = "lin"}, str = {.name = "str", .stripes = 2};
	int r;

	static unsigned serial; /* one VG per directory benchmarked */

	snprintf(vgname, 64, "ulvmbench%d_%u", (int)getpid(), serial++);
	for (int i = 0; i < 3; i++) {
		FILE *f;
		snprintf(paths[i], 4096, "%s/%s-pv%d.img", dir, vgname, i);
		if (!(f = fopen(paths[i], "we")) || ftruncate(fileno(f), (off_t)size) < 0) {
			if (f)
				fclose(f);
			return ulvm_error(-errno, "%s: %s", paths[i], strerror(errno));
		}
		fclose(f);
		pvs[i] = paths[i];
		if ((r = ulvm_ctx_add_device(c->ctx, paths[i])))
			return r;
	}
	if ((r = ulvm_vgcreate(c->ctx, vgname, pvs, 3, NULL)) ||
	    (r = ulvm_vg_open(c->ctx, vgname, ULVM_LOCK_WRITE, &vg)))
		return r;
	/* lin fills pv0; str takes pv1 and pv2. */
	lin.extents = vg->pvs[0]->pe_count;
	lin.pvs = &pvs[0];
	lin.npvs = 1;
	str.extents = 2 * (uint64_t)MIN(vg->pvs[1]->pe_count, vg->pvs[2]->pe_count);
	str.pvs = &pvs[1];
	str.npvs = 2;
	if (!(r = ulvm_lv_create(vg, &lin, &lv)) && !(r = ulvm_lv_create(vg, &str, &lv)))
		r = ulvm_vg_commit(vg, "ulvm bench");
	ulvm_vg_close(vg);
	return r;
}

static void fill(struct ulvm_dev *dev, uint64_t base, uint64_t len, uint8_t *buf)
{
	for (uint64_t off = 0; off + (1 << 20) <= len; off += 1 << 20)
		ulvm_dev_pwrite(dev, buf, 1 << 20, base + off, false);
	ulvm_dev_flush(dev);
}

static const char *only; /* --only: run the workloads whose name contains this */

static int bench_dir(struct cli *c, const char *dir, uint64_t size, double secs, unsigned repeat,
                     FILE *json, bool *first_json)
{
	char paths[3][4096], vgname[64], *table = NULL;
	struct ulvm_dev *raw = NULL, *lin = NULL, *str = NULL;
	uint8_t *bufs[32];
	struct ulvm_io ios[32];
	uint64_t data_off, span;
	int r;

	memset(bufs, 0, sizeof(bufs));
	if ((r = make_vg(c, dir, size, paths, vgname)))
		goto out;
	if ((r = ulvm_dev_open_lv(c->ctx, vgname, "lin", &lin)) ||
	    (r = ulvm_dev_open_lv(c->ctx, vgname, "str", &str)) ||
	    (r = ulvm_dev_open_raw(c->ctx, paths[0], &raw)) ||
	    (r = ulvm_dev_table(lin, false, &table)))
		goto out;
	/* "0 LEN linear PATH OFFSET": the raw runs use the same bytes of the same file. */
	{
		unsigned long long a, b, off;
		char path[4096];
		if (sscanf(table, "%llu %llu linear %4095s %llu", &a, &b, path, &off) != 4) {
			r = ulvm_error(-EINVAL, "unexpected table for lin: %s", table);
			goto out;
		}
		data_off = off * 512;
	}
	span = MIN(ulvm_dev_size(lin), ulvm_dev_size(str));
	for (int i = 0; i < 32; i++)
		if (!(bufs[i] = aligned_alloc(4096, 1 << 20))) {
			r = ulvm_error(-ENOMEM, "out of memory");
			goto out;
		}
	for (int i = 0; i < 32; i++)
		memset(bufs[i], 0x5a + i, 1 << 20);
	fill(lin, 0, span, bufs[0]);
	fill(str, 0, span, bufs[1]);
	printf("\n%s: LV 'lin' on %s (data at byte %llu), 'str' 2 x 64 KiB stripes; %.1f s x %u "
	       "per cell\n",
	       dir, paths[0], (unsigned long long)data_off, secs, repeat);
	printf("%-10s %6s %3s %12s %12s %7s %12s %7s\n", "workload", "bs", "qd", "raw IOPS",
	       "linear IOPS", "lin/raw", "striped IOPS", "str/raw");
	for (size_t w = 0; w < ARRAY_SIZE(workloads); w++) {
		const struct workload *wl = &workloads[w];
		double vr[16], vl[16], vs[16];

		if (only && !strstr(wl->name, only))
			continue;
		unsigned n = MIN(repeat, 16u);
		double mr, ml, ms;

		for (unsigned k = 0; k < n; k++) {
			vr[k] = run_cell(raw, data_off, span, wl, secs, bufs, ios);
			vl[k] = run_cell(lin, 0, span, wl, secs, bufs, ios);
			vs[k] = run_cell(str, 0, span, wl, secs, bufs, ios);
			if (vr[k] < 0 || vl[k] < 0 || vs[k] < 0) {
				r = ulvm_error(-EIO, "I/O error during %s", wl->name);
				goto out;
			}
		}
		mr = median(vr, n);
		ml = median(vl, n);
		ms = median(vs, n);
		char bs[16];
		if (wl->bs >= 1 << 20)
			snprintf(bs, sizeof(bs), "%uM", wl->bs >> 20);
		else if (wl->bs >= 1024)
			snprintf(bs, sizeof(bs), "%uK", wl->bs >> 10);
		else
			snprintf(bs, sizeof(bs), "%uB", wl->bs);
		printf("%-10s %6s %3u %12.0f %12.0f %7.3f %12.0f %7.3f\n", wl->name, bs, wl->qd, mr,
		       ml, ml / mr, ms, ms / mr);
		fflush(stdout);
		if (json) {
			fprintf(
			    json,
			    "%s    {\"dir\": \"%s\", \"workload\": \"%s\", \"bs\": %u, \"qd\": %u, "
			    "\"raw_iops\": %.0f, \"linear_iops\": %.0f, \"striped_iops\": %.0f, "
			    "\"linear_ratio\": %.4f, \"striped_ratio\": %.4f}",
			    *first_json ? "" : ",\n", dir, wl->name, wl->bs, wl->qd, mr, ml, ms,
			    ml / mr, ms / mr);
			*first_json = false;
		}
	}
out:
	for (int i = 0; i < 32; i++)
		free(bufs[i]);
	free(table);
	ulvm_dev_close(str);
	ulvm_dev_close(lin);
	ulvm_dev_close(raw);
	for (int i = 0; i < 3; i++)
		unlink(paths[i]);
	return r;
}

int cmd_bench(struct cli *c, int argc, char **argv)
{
	static const struct option lo[] = {COMMON_LONGOPTS,
	                                   {"dir", required_argument, NULL, 'D'},
	                                   {"size", required_argument, NULL, 'S'},
	                                   {"seconds", required_argument, NULL, 's'},
	                                   {"repeat", required_argument, NULL, 'n'},
	                                   {"json", required_argument, NULL, 'j'},
	                                   {"only", required_argument, NULL, 'o'},
	                                   {0}};
	const char *dirs[8], *json_path = NULL;
	unsigned ndirs = 0, repeat = 3;
	uint64_t size = 512ull << 20, s;
	double secs = 0.5;
	bool first = true;
	FILE *json = NULL;
	int opt, r = 0;

	if (argc < 2 || strcmp(argv[1], "io")) {
		fprintf(stderr, "  Usage: ulvm bench io [--dir DIR]... [--size SIZE] [--seconds S] "
		                "[--repeat N] [--json FILE]\n"
		                "  (the metadata benchmark is bench/metadata.sh)\n");
		return EINVALID_CMD_LINE;
	}
	argv++;
	argc--;
	while ((opt = getopt_long(argc, argv, COMMON_SHORTOPTS "D:S:s:n:j:o:", lo, NULL)) != -1) {
		if (cli_common_opt(c, opt, optarg) == 1)
			continue;
		switch (opt) {
		case 'D':
			if (ndirs < ARRAY_SIZE(dirs))
				dirs[ndirs++] = optarg;
			break;
		case 'S':
			if (ulvm_parse_size(optarg, 'm', &s))
				return cli_fail(-EINVAL);
			size = s * 512;
			break;
		case 's':
			secs = atof(optarg);
			break;
		case 'n':
			repeat = (unsigned)atoi(optarg);
			break;
		case 'j':
			json_path = optarg;
			break;
		case 'o':
			only = optarg;
			break;
		default:
			return EINVALID_CMD_LINE;
		}
	}
	if (!ndirs) {
		dirs[ndirs++] = "/dev/shm";
		dirs[ndirs++] = "/var/tmp";
	}
	if (secs <= 0 || !repeat)
		return cli_fail(ulvm_error(-EINVAL, "--seconds and --repeat must be positive"));
	if (json_path && !(json = fopen(json_path, "we")))
		return cli_fail(ulvm_error(-errno, "%s: %s", json_path, strerror(errno)));
	if (json)
		fprintf(json, "{\"cells\": [\n");
	if ((r = cli_open_ctx(c)))
		return cli_fail(r);
	for (unsigned i = 0; i < ndirs && !r; i++)
		r = bench_dir(c, dirs[i], size, secs, repeat, json, &first);
	if (json) {
		fprintf(json, "\n]}\n");
		fclose(json);
	}
	return r ? cli_fail(r) : ECMD_PROCESSED;
}
