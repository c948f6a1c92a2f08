/*
 * nbd_testserver: export raw tables, backing files or LVs over NBD with export/nbd and
 * evloop, until SIGTERM or SIGINT. For the NBD e2e tests and benchmarks (`ulvm serve`
 * exports the daemon's active devices; this one takes its exports on the command line).
 *
 *   nbd_testserver [--devices LIST] [--unix PATH] [--tcp HOST:PORT] [--mode OCTAL]
 *                  [--multi-conn] [--max-inflight N] [--workers N] [--message 'NAME MSG']...
 * EXPORT...
 *
 *   EXPORT   [ro:]SPEC[#DESCRIPTION]; the first one is also the default export ("")
 *   SPEC     VG/LV          an LV of the devices (--devices, as for ulvm)
 *            NAME=TABLE     a mapped device from a table ("d=0 2048 zero")
 *            NAME=@PATH     a backing file or block device itself, no mapping
 *
 * --message sends `dmsetup message NAME 0 MSG` to export NAME right after it is opened
 * (before the next export: "create_thin 1" on a pool, then a thin table on it).
 * Prints "ready" on stdout once listening, after "port N" with --tcp (PORT 0: the kernel
 * picks a free one, and this says which).
 */
#include <errno.h>
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "evloop/evloop.h"
#include "export/nbd.h"
#include "ulvm.h"

struct export
{
	char *name;
	char *desc;
	bool readonly, owned;
	struct ulvm_dev *dev;
};

static struct export *exports;
static int nexports;
static volatile sig_atomic_t stop;

static void on_signal(int sig)
{
	(void)sig;
	stop = 1;
}

static int lookup(void *arg, const char *name, struct nbd_export_info *out)
{
	(void)arg;
	for (int i = 0; i < nexports; i++)
		if (!strcmp(exports[i].name, name) || (!*name && i == 0)) {
			out->dev = exports[i].dev;
			out->readonly = exports[i].readonly;
			out->description = exports[i].desc;
			return 0;
		}
	return -ENOENT;
}

static void list(void *arg, void (*add)(void *cookie, const char *name, const char *desc),
                 void *cookie)
{
	(void)arg;
	for (int i = 0; i < nexports; i++)
		add(cookie, exports[i].name, exports[i].desc);
}

static int open_export(struct ulvm_ctx *ctx, char *arg, struct export *e)
{
	char *hash = strchr(arg, '#'), *eq, *slash;

	if (!strncmp(arg, "ro:", 3)) {
		e->readonly = true;
		arg += 3;
	}
	if (hash) {
		*hash = '\0';
		e->desc = hash + 1;
	}
	eq = strchr(arg, '=');
	slash = strchr(arg, '/');
	if (eq) {
		*eq = '\0';
		e->name = arg;
		if (eq[1] == '@')
			return ulvm_dev_open_raw(ctx, eq + 2, &e->dev);
		return ulvm_dev_open_table(ctx, arg, eq + 1, &e->dev);
	}
	if (slash) {
		int r;
		e->name = strdup(arg); /* kept whole: the export name is VG/LV */
		e->owned = true;
		*slash = '\0';
		r = ulvm_dev_open_lv(ctx, arg, slash + 1, &e->dev);
		*slash = '/';
		return r;
	}
	fprintf(stderr, "nbd_testserver: %s: want VG/LV, NAME=TABLE or NAME=@PATH\n", arg);
	return -EINVAL;
}

int main(int argc, char **argv)
{
	static const struct option lo[] = {{"devices", required_argument, NULL, 'd'},
	                                   {"unix", required_argument, NULL, 'u'},
	                                   {"tcp", required_argument, NULL, 't'},
	                                   {"mode", required_argument, NULL, 'm'},
	                                   {"multi-conn", no_argument, NULL, 'M'},
	                                   {"max-inflight", required_argument, NULL, 'q'},
	                                   {"message", required_argument, NULL, 'g'},
	                                   {"workers", required_argument, NULL, 'w'},
	                                   {0}};
	const char *msgs[16];
	int nmsgs = 0;
	struct ulvm_ctx_opts co = {0};
	/* Worker threads per connection as ulvmd has them, unless --workers says otherwise. */
	struct nbd_server_opts no = {.ops = {.lookup = lookup, .list = list}, .workers = 2};
	const char *unix_path = NULL, *tcp = NULL;
	unsigned mode = 0600;
	struct ulvm_ctx *ctx = NULL;
	struct evloop *loop = NULL;
	struct nbd_server *s = NULL;
	struct sigaction sa = {.sa_handler = on_signal};
	int opt, r = 1;

	while ((opt = getopt_long(argc, argv, "", lo, NULL)) != -1) {
		switch (opt) {
		case 'd':
			co.devices = optarg;
			break;
		case 'u':
			unix_path = optarg;
			break;
		case 't':
			tcp = optarg;
			break;
		case 'm':
			mode = (unsigned)strtoul(optarg, NULL, 8);
			break;
		case 'M':
			no.multi_conn = true;
			break;
		case 'q':
			no.max_inflight = (unsigned)strtoul(optarg, NULL, 10);
			break;
		case 'w':
			no.workers = (unsigned)strtoul(optarg, NULL, 10);
			break;
		case 'g':
			if (nmsgs == (int)(sizeof(msgs) / sizeof(msgs[0])) ||
			    !strchr(optarg, ' ')) {
				fprintf(stderr,
				        "nbd_testserver: --message 'NAME MSG', at most 16\n");
				return 2;
			}
			msgs[nmsgs++] = optarg;
			break;
		default:
			return 2;
		}
	}
	if (optind >= argc || (!unix_path && !tcp)) {
		fprintf(stderr,
		        "usage: nbd_testserver [--devices LIST] --unix PATH | --tcp "
		        "HOST:PORT [--mode OCTAL] [--multi-conn] [--max-inflight N] [--workers N] "
		        "EXPORT...\n");
		return 2;
	}
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGINT, &sa, NULL);
	signal(SIGPIPE, SIG_IGN);
	if (ulvm_ctx_new(&co, &ctx))
		goto out;
	nexports = argc - optind;
	exports = calloc((size_t)nexports, sizeof(*exports));
	if (!exports)
		goto out;
	for (int i = 0; i < nexports; i++) {
		if (open_export(ctx, argv[optind + i], &exports[i]))
			goto out;
		for (int k = 0; k < nmsgs; k++) {
			size_t nl = strlen(exports[i].name);
			char *reply = NULL;
			if (strncmp(msgs[k], exports[i].name, nl) || msgs[k][nl] != ' ')
				continue;
			if (ulvm_dev_message(exports[i].dev, 0, msgs[k] + nl + 1, &reply))
				goto out;
			free(reply);
		}
	}
	if (evloop_new(ctx, &loop) || nbd_server_new(loop, &no, &s))
		goto out;
	if (unix_path && nbd_server_listen_unix(s, unix_path, mode))
		goto out;
	if (tcp) {
		char host[256] = "";
		const char *colon = strrchr(tcp, ':');
		if (colon && colon != tcp)
			snprintf(host, sizeof(host), "%.*s", (int)(colon - tcp), tcp);
		if (nbd_server_listen_tcp(s, host, colon ? colon + 1 : tcp))
			goto out;
		printf("port %d\n", nbd_server_tcp_port(s)); /* PORT 0: the one the kernel chose */
	}
	printf("ready\n");
	fflush(stdout);
	r = evloop_run(loop, &stop) ? 1 : 0;
out:
	if (r && ulvm_last_error())
		fprintf(stderr, "nbd_testserver: %s\n", ulvm_last_error());
	nbd_server_free(s);
	evloop_free(loop);
	for (int i = 0; exports && i < nexports; i++) {
		if (exports[i].dev)
			ulvm_dev_close(exports[i].dev);
		if (exports[i].owned)
			free(exports[i].name);
	}
	free(exports);
	ulvm_ctx_free(ctx);
	return r;
}
