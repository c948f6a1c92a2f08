/*
 * `ulvm dd`: GNU dd's operands where they apply, with if=/of= naming a file, an LV as VG/LV
 * (the active device if it is active, else activated in this process), or an active mapped
 * device by name. Ends with dd's closing lines (records in/out, bytes, seconds, rate).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "../util/util.h"
#include "cli.h"

struct endpoint {
	const char *name;
	int fd; /* a file, or -1 */
	struct ulvm_dev *dev;
	uint64_t size; /* devices: bytes */
};

struct dd_opts {
	const char *in, *out;
	uint64_t bs;
	uint64_t count, skip, seek;
	bool count_set, iflag_direct, oflag_direct, conv_fsync, conv_fdatasync, conv_notrunc;
	int status; /* 0 default, 1 none, 2 progress, 3 noxfer */
};

/* dd's number syntax: N with an optional multiplier c w b kB K MB M xM GB G TB T (and iB). */
static int dd_number(const char *s, uint64_t *out)
{
	static const struct {
		const char *suffix;
		uint64_t mult;
	} mults[] = {{"", 1},
	             {"c", 1},
	             {"w", 2},
	             {"b", 512},
	             {"kB", 1000},
	             {"K", 1024},
	             {"KiB", 1024},
	             {"k", 1024},
	             {"MB", 1000 * 1000},
	             {"M", 1 << 20},
	             {"MiB", 1 << 20},
	             {"GB", 1000ull * 1000 * 1000},
	             {"G", 1ull << 30},
	             {"GiB", 1ull << 30},
	             {"TB", 1000ull * 1000 * 1000 * 1000},
	             {"T", 1ull << 40},
	             {"TiB", 1ull << 40}};
	char *end;
	uint64_t v;

	errno = 0;
	if (!*s || *s == '-')
		return -EINVAL;
	v = strtoull(s, &end, 10);
	if (errno || end == s)
		return -EINVAL;
	for (size_t i = 0; i < ARRAY_SIZE(mults); i++)
		if (!strcmp(end, mults[i].suffix)) {
			if (mul_overflows_u64(v, mults[i].mult, out))
				return -ERANGE;
			return 0;
		}
	return -EINVAL;
}

static int parse_operand(const char *arg, struct dd_opts *o)
{
	const char *eq = strchr(arg, '=');
	char key[16];
	const char *val;
	int r = 0;

	if (!eq || eq - arg >= (long)sizeof(key))
		return ulvm_error(-EINVAL, "dd: unrecognized operand '%s'", arg);
	snprintf(key, sizeof(key), "%.*s", (int)(eq - arg), arg);
	val = eq + 1;
	if (!strcmp(key, "if"))
		o->in = val;
	else if (!strcmp(key, "of"))
		o->out = val;
	else if (!strcmp(key, "bs"))
		r = dd_number(val, &o->bs);
	else if (!strcmp(key, "count"))
		r = dd_number(val, &o->count), o->count_set = true;
	else if (!strcmp(key, "skip"))
		r = dd_number(val, &o->skip);
	else if (!strcmp(key, "seek"))
		r = dd_number(val, &o->seek);
	else if (!strcmp(key, "iflag") || !strcmp(key, "oflag") || !strcmp(key, "conv")) {
		char *copy = strdup(val), *save = NULL;
		for (char *f = strtok_r(copy, ",", &save); f && !r;
		     f = strtok_r(NULL, ",", &save)) {
			if (!strcmp(f, "direct") && key[0] != 'c')
				*(key[0] == 'i' ? &o->iflag_direct : &o->oflag_direct) = true;
			else if (key[0] == 'c' && !strcmp(f, "fsync"))
				o->conv_fsync = true;
			else if (key[0] == 'c' && !strcmp(f, "fdatasync"))
				o->conv_fdatasync = true;
			else if (key[0] == 'c' && !strcmp(f, "notrunc"))
				o->conv_notrunc = true;
			else if (!strcmp(f, "sync") || !strcmp(f, "dsync") ||
			         !strcmp(f, "fullblock"))
				continue;
			else
				r = ulvm_error(-EINVAL, "dd: invalid %s flag '%s'", key, f);
		}
		free(copy);
		return r;
	} else if (!strcmp(key, "status")) {
		if (!strcmp(val, "none"))
			o->status = 1;
		else if (!strcmp(val, "progress"))
			o->status = 2;
		else if (!strcmp(val, "noxfer"))
			o->status = 3;
		else
			return ulvm_error(-EINVAL, "dd: invalid status level '%s'", val);
	} else {
		return ulvm_error(-EINVAL, "dd: unrecognized operand '%s'", arg);
	}
	if (r)
		return ulvm_error(-EINVAL, "dd: invalid number '%s'", val);
	return 0;
}

/* A path that exists, or a new output file in an existing directory, is a file; anything else
 * names an active device or VG/LV. */
static bool is_file_name(const char *name, bool output)
{
	char dir[4096], *slash;
	struct stat st;

	if (stat(name, &st) == 0)
		return true;
	if (!output || ulvm_active_exists(name))
		return false;
	snprintf(dir, sizeof(dir), "%s", name);
	if (!(slash = strrchr(dir, '/')))
		return true;
	*slash = '\0';
	return !dir[0] || (stat(dir, &st) == 0 && S_ISDIR(st.st_mode));
}

static int open_endpoint(struct cli *c, const char *name, bool output, const struct dd_opts *o,
                         struct endpoint *ep)
{
	char vg[256], lv[256];
	struct stat st;
	int r;

	memset(ep, 0, sizeof(*ep));
	ep->fd = -1;
	ep->name = name ? name : (output ? "standard output" : "standard input");
	if (!name || !strcmp(name, "-")) {
		ep->fd = output ? STDOUT_FILENO : STDIN_FILENO;
		return 0;
	}
	if (is_file_name(name, output)) {
		int fl = output ? O_WRONLY | O_CREAT : O_RDONLY;
		if ((output ? o->oflag_direct : o->iflag_direct))
			fl |= O_DIRECT;
		if ((ep->fd = open(name, fl | O_CLOEXEC, 0644)) < 0)
			return ulvm_error(-errno, "dd: failed to open '%s': %s", name,
			                  strerror(errno));
		/* Like dd: an output file is cut at the seek point unless conv=notrunc. */
		if (output && !o->conv_notrunc && fstat(ep->fd, &st) == 0 && S_ISREG(st.st_mode) &&
		    ftruncate(ep->fd, (off_t)(o->seek * o->bs)) < 0)
			return ulvm_error(-errno, "dd: '%s': cannot truncate: %s", name,
			                  strerror(errno));
		return 0;
	}
	if ((r = cli_open_ctx(c)))
		return r;
	/* ...else an active mapped device, else an LV. */
	if (ulvm_active_exists(name))
		r = ulvm_active_open(c->ctx, name, &ep->dev);
	else if (!cli_split_lv(name, vg, sizeof(vg), lv, sizeof(lv))) {
		char dmname[600];
		ulvm_lv_dm_name(vg, lv, dmname, sizeof(dmname));
		r = ulvm_active_exists(dmname) ? ulvm_active_open(c->ctx, dmname, &ep->dev)
		                               : ulvm_dev_open_lv(c->ctx, vg, lv, &ep->dev);
	} else
		r = ulvm_error(-ENOENT, "dd: '%s': no such file, LV or mapped device", name);
	if (!r)
		ep->size = ulvm_dev_size(ep->dev);
	return r;
}

static void close_endpoint(struct endpoint *ep)
{
	if (ep->fd > STDERR_FILENO)
		close(ep->fd);
	ulvm_dev_close(ep->dev);
}

/* Read up to `len` bytes at `off`; returns bytes read (0 at the end), or -errno. */
static int64_t ep_read(struct endpoint *ep, void *buf, uint64_t len, uint64_t off)
{
	uint64_t done = 0;

	if (ep->dev) {
		if (off >= ep->size)
			return 0;
		len = MIN(len, ep->size - off);
		int r = ulvm_dev_pread(ep->dev, buf, len, off);
		return r ? r : (int64_t)len;
	}
	while (done < len) {
		ssize_t n = ep->fd == STDIN_FILENO ? read(ep->fd, (char *)buf + done, len - done)
		                                   : pread(ep->fd, (char *)buf + done, len - done,
		                                           (off_t)(off + done));
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return ulvm_error(-errno, "dd: error reading '%s': %s", ep->name,
			                  strerror(errno));
		if (n == 0)
			break;
		done += (uint64_t)n;
	}
	return (int64_t)done;
}

static int ep_write(struct endpoint *ep, const void *buf, uint64_t len, uint64_t off)
{
	uint64_t done = 0;

	if (ep->dev) {
		if (off + len > ep->size)
			return ulvm_error(
			    -ENOSPC, "dd: error writing '%s': No space left on device", ep->name);
		return ulvm_dev_pwrite(ep->dev, buf, len, off, false);
	}
	while (done < len) {
		ssize_t n =
		    ep->fd == STDOUT_FILENO
		        ? write(ep->fd, (const char *)buf + done, len - done)
		        : pwrite(ep->fd, (const char *)buf + done, len - done, (off_t)(off + done));
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return ulvm_error(n < 0 ? -errno : -ENOSPC, "dd: error writing '%s': %s",
			                  ep->name, n < 0 ? strerror(errno) : "No space left");
		done += (uint64_t)n;
	}
	return 0;
}

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* dd's "N bytes (X MB, Y MiB) copied, T s, R MB/s". */
static void print_transfer(uint64_t bytes, double secs, const char *end)
{
	static const char *const si[] = {"B", "kB", "MB", "GB", "TB", "PB"};
	static const char *const iec[] = {"B", "KiB", "MiB", "GiB", "TiB", "PiB"};
	double a = (double)bytes, b = (double)bytes, rate = secs > 0 ? (double)bytes / secs : 0;
	unsigned i = 0, k = 0, m = 0;

	while (a >= 1000 && i < 5)
		a /= 1000, i++;
	while (b >= 1024 && k < 5)
		b /= 1024, k++;
	while (rate >= 1000 && m < 5)
		rate /= 1000, m++;
	if (bytes < 1000)
		fprintf(stderr, "%llu bytes copied, %.3g s, %.3g %s/s%s", (unsigned long long)bytes,
		        secs, rate, si[m], end);
	else
		fprintf(stderr, "%llu bytes (%.2g %s, %.2g %s) copied, %.3g s, %.3g %s/s%s",
		        (unsigned long long)bytes, a, si[i], b, iec[k], secs, rate, si[m], end);
}

int cmd_dd(struct cli *c, int argc, char **argv)
{
	struct dd_opts o = {.bs = 512};
	struct endpoint in, out;
	uint64_t full_in = 0, part_in = 0, full_out = 0, part_out = 0, bytes = 0;
	double t0, last;
	uint8_t *buf = NULL;
	int r, rc = ECMD_PROCESSED;

	for (int i = 1; i < argc; i++) {
		if (!strncmp(argv[i], "--devices=", 10)) {
			c->devices = argv[i] + 10;
			continue;
		}
		if (!strcmp(argv[i], "--devices") && i + 1 < argc) {
			c->devices = argv[++i];
			continue;
		}
		if ((r = parse_operand(argv[i], &o))) {
			cli_fail(r);
			return EINVALID_CMD_LINE;
		}
	}
	if (!o.bs)
		return cli_fail(ulvm_error(-EINVAL, "dd: invalid number '0' for bs"));
	if ((r = open_endpoint(c, o.in, false, &o, &in)))
		return cli_fail(r);
	if ((r = open_endpoint(c, o.out, true, &o, &out))) {
		close_endpoint(&in);
		return cli_fail(r);
	}
	if (((in.dev || out.dev) && o.bs % 512)) {
		rc = cli_fail(ulvm_error(-EINVAL, "dd: bs must be a multiple of 512 for a volume"));
		goto out;
	}
	if (!(buf = aligned_alloc(4096, round_up_u64(o.bs, 4096)))) {
		rc = cli_fail(ulvm_error(-ENOMEM,
		                         "dd: memory exhausted by input buffer of size %llu",
		                         (unsigned long long)o.bs));
		goto out;
	}
	t0 = last = now_s();
	for (uint64_t blk = 0; !o.count_set || blk < o.count; blk++) {
		int64_t n = ep_read(&in, buf, o.bs, (o.skip + blk) * o.bs);
		if (n < 0) {
			rc = cli_fail((int)n);
			break;
		}
		if (n == 0)
			break;
		if ((uint64_t)n == o.bs)
			full_in++;
		else
			part_in++;
		if (out.dev && n % 512) {
			/* The device end is sector-aligned; only a short file input gets here. */
			memset(buf + n, 0, (size_t)(round_up_u64((uint64_t)n, 512) - (uint64_t)n));
			n = (int64_t)round_up_u64((uint64_t)n, 512);
		}
		if ((r = ep_write(&out, buf, (uint64_t)n, (o.seek + blk) * o.bs))) {
			rc = cli_fail(r);
			break;
		}
		if ((uint64_t)n == o.bs)
			full_out++;
		else
			part_out++;
		bytes += (uint64_t)n;
		if (o.status == 2 && now_s() - last >= 1.0) {
			last = now_s();
			print_transfer(bytes, last - t0, "\r");
		}
		if ((uint64_t)n < o.bs)
			break;
	}
	if (rc == ECMD_PROCESSED && (o.conv_fsync || o.conv_fdatasync)) {
		r = out.dev ? ulvm_dev_flush(out.dev)
		            : (out.fd >= 0 && fdatasync(out.fd) < 0
		                   ? ulvm_error(-errno, "dd: fsync failed for '%s': %s", out.name,
		                                strerror(errno))
		                   : 0);
		if (r)
			rc = cli_fail(r);
	}
	if (o.status != 1) {
		if (o.status == 2)
			fputc('\n', stderr);
		fprintf(stderr, "%llu+%llu records in\n%llu+%llu records out\n",
		        (unsigned long long)full_in, (unsigned long long)part_in,
		        (unsigned long long)full_out, (unsigned long long)part_out);
		if (o.status != 3)
			print_transfer(bytes, now_s() - t0, "\n");
	}
out:
	free(buf);
	close_endpoint(&out);
	close_endpoint(&in);
	return rc;
}
