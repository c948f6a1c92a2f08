/*
 * libFuzzer target for the NBD server (export/nbd): the input is everything one client
 * sends, handshake and requests, as one transcript. It is written into a socketpair whose
 * other end the server serves on its own event loop; the client end then shuts down its
 * writing side, and the loop runs until the server has closed the connection, while an
 * after-hook feeds the rest of the input and reads (and drops) the replies.
 *
 * Exports: "disk" (also the default ""), a linear table over a 1 MiB file on /dev/shm;
 * "zero", a read-only zero table; "err", an error table. Seeds (tests/fuzz/corpus/nbd) are
 * transcripts captured from nbdinfo, nbdcopy, qemu-img and fio, and hand-built ones.
 *
 * Checked: no crash or sanitizer report, no leak, and every connection ends (the server
 * never waits for a client that has nothing more to say).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "evloop/evloop.h"
#include "export/nbd.h"
#include "util/util.h"

#define FILE_SIZE (1u << 20)
#define MAX_TURNS 200000

static struct ulvm_ctx *ctx;
static struct evloop *loop;
static struct nbd_server *srv;
static struct ulvm_dev *disk, *zero, *err;
static char dir[] = "/dev/shm/ulvm-fuzz-nbd-XXXXXX";
static char file[64];

/* the transcript being fed */
static const uint8_t *feed;
static size_t feed_len, feed_off;
static int client = -1;
static bool shut;
static unsigned turns;
static volatile sig_atomic_t stop;

static void die(const char *why)
{
	fprintf(stderr, "fuzz_nbd: %s (%s)\n", why, ulvm_last_error() ? ulvm_last_error() : "");
	abort();
}

static void quiet(enum ulvm_log_level level, const char *msg, void *arg)
{
	(void)level;
	(void)msg;
	(void)arg;
}

static int lookup(void *arg, const char *name, struct nbd_export_info *out)
{
	(void)arg;
	if (!*name || !strcmp(name, "disk")) {
		out->dev = disk;
		out->description = "fuzz disk";
	} else if (!strcmp(name, "zero")) {
		out->dev = zero;
		out->readonly = true;
	} else if (!strcmp(name, "err")) {
		out->dev = err;
	} else {
		return -ENOENT;
	}
	return 0;
}

static void list(void *arg, void (*add)(void *cookie, const char *name, const char *desc),
                 void *cookie)
{
	(void)arg;
	add(cookie, "disk", "fuzz disk");
	add(cookie, "zero", NULL);
	add(cookie, "err", "always fails");
}

static void pump(void)
{
	uint8_t sink[65536];

	while (feed_off < feed_len) {
		ssize_t w =
		    send(client, feed + feed_off, feed_len - feed_off, MSG_DONTWAIT | MSG_NOSIGNAL);
		if (w <= 0)
			break;
		feed_off += (size_t)w;
	}
	if (feed_off == feed_len && !shut) {
		shutdown(client, SHUT_WR);
		shut = true;
	}
	while (recv(client, sink, sizeof(sink), MSG_DONTWAIT) > 0)
		;
}

static void hook(void *arg, uint32_t events)
{
	(void)arg;
	(void)events;
	pump();
	if (!nbd_server_conn_count(srv))
		stop = 1;
	else if (++turns > MAX_TURNS)
		die("the server does not finish the connection");
}

static void cleanup(void)
{
	nbd_server_free(srv);
	evloop_free(loop);
	ulvm_dev_close(err);
	ulvm_dev_close(zero);
	ulvm_dev_close(disk);
	ulvm_ctx_free(ctx);
	unlink(file);
	rmdir(dir);
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	struct ulvm_ctx_opts co = {0};
	struct nbd_server_opts no = {.ops = {.lookup = lookup, .list = list}, .max_inflight = 8};
	char table[128];
	int fd;

	(void)argc;
	(void)argv;
	ulvm_set_log(quiet, NULL, ULVM_LOG_ERROR);
	if (!mkdtemp(dir))
		die("cannot make a temp dir");
	snprintf(file, sizeof(file), "%s/disk", dir);
	fd = open(file, O_RDWR | O_CREAT | O_TRUNC, 0600);
	if (fd < 0 || ftruncate(fd, FILE_SIZE) < 0)
		die("cannot create the disk file");
	close(fd);
	snprintf(table, sizeof(table), "0 %u linear %s 0", FILE_SIZE / 512, file);
	if (ulvm_ctx_new(&co, &ctx) || ulvm_dev_open_table(ctx, "disk", table, &disk) ||
	    ulvm_dev_open_table(ctx, "zero", "0 2048 zero", &zero) ||
	    ulvm_dev_open_table(ctx, "err", "0 2048 error", &err))
		die("cannot set up the exports");
	if (evloop_new(ctx, &loop) || nbd_server_new(loop, &no, &srv) ||
	    evloop_after_add(loop, hook, NULL))
		die("cannot set up the server");
	atexit(cleanup);
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	int sv[2];

	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) < 0)
		die("socketpair");
	if (nbd_server_add_conn(srv, sv[0])) {
		close(sv[0]);
		close(sv[1]);
		return 0;
	}
	client = sv[1];
	feed = data;
	feed_len = size;
	feed_off = 0;
	shut = false;
	turns = 0;
	stop = 0;
	pump();
	if (evloop_run(loop, &stop))
		die("evloop_run failed");
	close(client);
	client = -1;
	return 0;
}
