/*
 * libFuzzer target for dm tables: the input is parsed as a table for a registry whose lower
 * devices are a few 1 MiB files in a temp directory (the current directory, so the corpus
 * names them "a", "b", "c", "with\\ space" or "./a") and a mapped device "base". Whatever parses
 * must print, the printed table must load back and print identically, and a few reads and a flush
 * through the device must complete exactly once. Failures must leave the registry as it was.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "dm/dm.h"
#include "io/bdev.h"
#include "io/engine.h"

#define FILE_SIZE (1u << 20)
#define READ_LEN  (64u << 10)

static struct io_engine *engine;
static struct dm_registry *reg;
static struct dm_dev *base;
static void *buf;
static char dir[] = "/tmp/ulvm-fuzz-table-XXXXXX";

static void die(const char *why)
{
	fprintf(stderr, "fuzz_table: %s (%s)\n", why, ulvm_last_error() ? ulvm_last_error() : "");
	abort();
}

static void make_file(const char *name)
{
	int fd = open(name, O_RDWR | O_CREAT | O_TRUNC, 0600);

	if (fd < 0 || ftruncate(fd, FILE_SIZE) < 0)
		die("cannot create a lower file");
	close(fd);
}

static void quiet(enum ulvm_log_level level, const char *msg, void *arg)
{
	(void)level;
	(void)msg;
	(void)arg;
}

static void cleanup(void)
{
	static const char *const names[] = {"a", "b", "c", "with space"};
	char p[64];

	for (unsigned i = 0; i < 4; i++) {
		snprintf(p, sizeof(p), "%s/%s", dir, names[i]);
		unlink(p);
	}
	rmdir(dir);
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	struct io_engine_opts opts = {.method = IO_METHOD_SYNC};

	(void)argc;
	(void)argv;
	ulvm_set_log(quiet, NULL, ULVM_LOG_ERROR);
	if (!mkdtemp(dir) || chdir(dir) < 0)
		die("cannot make a temp dir");
	atexit(cleanup);
	make_file("a");
	make_file("b");
	make_file("c");
	make_file("with space");
	if (io_engine_new(&opts, &engine) || dm_registry_new(engine, &reg))
		die("cannot set up");
	if (dm_create(reg, "base", "0 1024 linear a 0\n1024 1024 striped 2 8 b 0 c 0", &base))
		die("cannot create base");
	buf = bdev_alloc_buffer(READ_LEN);
	if (!buf)
		die("out of memory");
	return 0;
}

struct done {
	int calls, result;
};

static void on_done(struct io_req *req, int result)
{
	struct done *d = req->private;

	d->calls++;
	d->result = result;
}

static void do_io(struct dm_dev *md, enum io_op op, uint64_t off, uint64_t len)
{
	struct done d = {0};
	struct io_req req = {
	    .op = op, .offset = off, .len = len, .buf = buf, .done = on_done, .private = &d};

	dm_submit(md, &req);
	while (io_engine_inflight(engine))
		if (io_engine_poll(engine, 1) < 0)
			die("poll failed");
	if (d.calls != 1)
		die("a request did not complete exactly once");
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *text = malloc(size + 1), *printed = NULL, *again = NULL, *status = NULL;
	struct dm_dev *md;
	uint64_t dev_size;

	if (!text)
		return 0;
	memcpy(text, data, size);
	text[size] = '\0';
	if (dm_create(reg, "fz", text, &md)) {
		if (dm_find(reg, "fz"))
			die("a failed create left a device");
		/* A failed load leaves base as it was. */
		if (dm_load(base, text) == 0 && dm_load(base, "0 1024 linear a 0\n1024 1024 "
		                                              "striped 2 8 b 0 c 0"))
			die("cannot load base back");
		if (dm_resume(base))
			die("cannot resume base");
		free(text);
		return 0;
	}
	free(text);
	if (dm_table_text(md, DM_STATUS_TABLE, &printed) ||
	    dm_table_text(md, DM_STATUS_INFO, &status))
		die("cannot print a table that parsed");
	if (dm_load(md, printed) || dm_resume(md))
		die("the printed table does not load");
	if (dm_table_text(md, DM_STATUS_TABLE, &again))
		die("cannot print the reloaded table");
	if (strcmp(printed, again))
		die("the reloaded table prints differently");
	dev_size = dm_size(md);
	do_io(md, IO_OP_READ, 0, dev_size < READ_LEN ? dev_size : READ_LEN);
	if (dev_size >= READ_LEN)
		do_io(md, IO_OP_READ, dev_size - READ_LEN, READ_LEN);
	do_io(md, IO_OP_READ, dev_size / 2 / 512 * 512, dev_size >= 1024 ? 1024 : 0);
	do_io(md, IO_OP_FLUSH, 0, 0);
	if (dm_remove(reg, "fz"))
		die("cannot remove");
	free(printed);
	free(again);
	free(status);
	return 0;
}
