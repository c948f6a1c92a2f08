/*
 * The workload driver of bench/ulvmbench/seed000.py (not a test): seed 000's
 * `dd if=/dev/zero of=<origin> bs=4k count=25000`, one write at a time, through the library
 * (dm tables over files, the io_uring engine: O_DIRECT on disk files), with one persistent
 * snapshot of a given chunk size or none; optionally with a sequential reader of the snapshot
 * running at the same time (a backup while the origin is written: the seed's "other half"),
 * or the reader alone.
 *
 *   snapshot_workload ORIGIN COW CHUNK_SECTORS COUNT [write|write+read|read]
 *
 * CHUNK_SECTORS 0: no snapshot (the origin is a linear table). The COW's first 4 KiB are
 * zeroed first, as lvm2 does for a new snapshot. Prints one JSON line: seconds, MiB/s of the
 * writer and of the reader, the process's peak RSS, and the snapshot's status line.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>

#include "dm/dm.h"
#include "io/bdev.h"
#include "io/engine.h"
#include "util/util.h"

#define BS      4096u
#define READ_BS (64u * 1024u)

struct stream {
	struct io_req req;
	bool busy;
	uint64_t done, bytes;
};

static void stream_done(struct io_req *req, int result)
{
	struct stream *s = req->private;

	if (result) {
		fprintf(stderr, "snapshot_workload: I/O error %d\n", result);
		exit(1);
	}
	s->busy = false;
	s->done++;
	s->bytes += req->len;
}

static void submit(struct dm_dev *md, struct stream *s, enum io_op op, uint64_t off, uint64_t len,
                   void *buf)
{
	s->req = (struct io_req){
	    .op = op, .offset = off, .len = len, .buf = buf, .done = stream_done, .private = s};
	s->busy = true;
	dm_submit(md, &s->req);
}

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

static int die(const char *what)
{
	fprintf(stderr, "snapshot_workload: %s: %s\n", what, ulvm_last_error());
	return 1;
}

int main(int argc, char **argv)
{
	struct io_engine *e;
	struct dm_registry *r;
	struct dm_dev *o, *s = NULL;
	struct bdev *bd;
	char table[2048], *status = NULL;
	uint64_t chunk, count, size;
	bool writer, reader;
	const char *mode = argc > 5 ? argv[5] : "write";

	if (argc < 5) {
		fprintf(stderr, "usage: snapshot_workload ORIGIN COW CHUNK_SECTORS COUNT "
		                "[write|write+read|read]\n");
		return 2;
	}
	chunk = strtoull(argv[3], NULL, 10);
	count = strtoull(argv[4], NULL, 10);
	writer = strstr(mode, "write") != NULL;
	reader = strstr(mode, "read") != NULL;
	if (bdev_open(argv[1], 0, &bd))
		return die("origin");
	size = bd->size;
	bdev_close(bd);
	if (chunk) {
		void *z = bdev_alloc_buffer(BS);

		if (!z || bdev_open(argv[2], 0, &bd))
			return die("cow");
		memset(z, 0, BS);
		if (bdev_write(bd, z, BS, 0) || bdev_flush(bd))
			return die("zeroing the COW header");
		bdev_close(bd);
		free(z);
	}
	if (io_engine_new(NULL, &e) || dm_registry_new(e, &r))
		return die("engine");
	if (chunk) {
		snprintf(table, sizeof(table), "0 %" PRIu64 " snapshot %s %s %s %" PRIu64,
		         size >> SECTOR_SHIFT, argv[1], argv[2],
		         getenv("SNAP_STORE") ? getenv("SNAP_STORE") : "P", chunk);
		if (dm_create(r, "snap", table, &s))
			return die("snapshot");
		snprintf(table, sizeof(table), "0 %" PRIu64 " snapshot-origin %s",
		         size >> SECTOR_SHIFT, argv[1]);
	} else {
		snprintf(table, sizeof(table), "0 %" PRIu64 " linear %s 0", size >> SECTOR_SHIFT,
		         argv[1]);
	}
	if (dm_create(r, "origin", table, &o))
		return die("origin table");
	if (reader && !s)
		s = o; /* no snapshot: read the origin itself */

	void *wbuf = bdev_alloc_buffer(BS), *rbuf = bdev_alloc_buffer(READ_BS);
	struct stream w = {0}, rd = {0};
	uint64_t roff = 0, woff = 0;
	double t0 = now(), tw = 0;

	memset(wbuf, 0, BS);
	for (;;) {
		if (writer && !w.busy && w.done < count) {
			submit(o, &w, IO_OP_WRITE, woff, BS, wbuf);
			woff += BS;
		}
		if (writer && w.done == count && !tw)
			tw = now() - t0;
		bool more_reading = reader && (writer ? w.done < count : rd.bytes < count * BS);
		if (more_reading && !rd.busy) {
			if (roff + READ_BS > size)
				roff = 0;
			submit(s, &rd, IO_OP_READ, roff, READ_BS, rbuf);
			roff += READ_BS;
		}
		if (!w.busy && !rd.busy && !more_reading && (!writer || w.done == count))
			break;
		if (io_engine_poll(e, 1) < 0)
			return die("poll");
	}
	double t = now() - t0;
	if (!tw)
		tw = t;
	if (chunk && dm_table_text(s, DM_STATUS_INFO, &status))
		return die("status");
	struct rusage ru;
	getrusage(RUSAGE_SELF, &ru);
	if (status)
		status[strcspn(status, "\n")] = 0;
	printf("{\"seconds\": %.4f, \"write_mib_s\": %.3f, \"read_mib_s\": %.3f, "
	       "\"writes\": %" PRIu64 ", \"read_bytes\": %" PRIu64 ", \"maxrss_kib\": %ld, "
	       "\"status\": \"%s\"}\n",
	       writer ? tw : t, writer ? w.bytes / tw / 1048576.0 : 0.0,
	       reader ? rd.bytes / t / 1048576.0 : 0.0, w.done, rd.bytes, ru.ru_maxrss,
	       status ? status : "");
	free(status);
	free(wbuf);
	free(rbuf);
	dm_registry_free(r);
	io_engine_free(e);
	return 0;
}
