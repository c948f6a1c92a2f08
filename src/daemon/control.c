/* ulvmd: the active devices of a context, their NBD exports, and the control socket. */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include "../export/nbd.h"
#include "../util/util.h"
#include "control.h"
#include "mounts.h"
#include "../evloop/evloop.h"

#define MAX_REQUEST (16u << 20)

struct ulvmd {
	struct ulvm_ctx *ctx;
	struct evloop *loop;
	struct nbd_server *nbd;
	struct mounts *mounts;
	struct monitor *monitor;
	bool exit_when_idle;
	struct evloop_timer idle_timer;
	int listen_fd;
	struct control_conn *conns;
	char control_path[4096];
	char nbd_path[4096];
	volatile sig_atomic_t *stop;
};

struct control_conn {
	struct ulvmd *d;
	struct control_conn *next; /* the daemon's open control connections */
	int fd;
	struct strbuf in;
	struct strbuf out;
	size_t out_done;
	bool replied;
};

static volatile sig_atomic_t stop_flag;

static void on_signal(int sig)
{
	(void)sig;
	stop_flag = 1;
}

/* ---- what the recorded changes do to the daemon's devices (ulvm_active_hooks) ---- */

/* The daemon's device `name`; a recorded device it does not hold yet (one that could not be
 * restored at start, or was owned by another process then) is taken over now. */
static struct ulvm_dev *find_dev(struct ulvmd *d, const char *name, int *r)
{
	struct ulvm_dev *dev = ulvm_dev_find(d->ctx, name);

	*r = 0;
	if (dev && (*r = ulvm_active_check(name)) == -ESTALE) {
		/* Its backing devices went away under it: never used again; let go if unused. */
		if (!ulvm_dev_open_count(dev) && !(d->nbd && nbd_server_dev_users(d->nbd, dev)))
			ulvm_dev_close(dev);
		return NULL;
	}
	*r = 0;
	if (!dev && ulvm_active_exists(name) && (*r = ulvm_active_open(d->ctx, name, &dev)))
		return NULL;
	if (!dev)
		*r = ulvm_error(-ENXIO, "Device %s not found", name);
	return dev;
}

static int hook_create(void *arg, const char *name, const char *table)
{
	struct ulvmd *d = arg;
	struct ulvm_dev *dev;
	int r = ulvm_active_open_table(d->ctx, name, table, &dev);

	if (!r && (r = ulvm_dev_own(dev)))
		ulvm_dev_close(dev);
	return r;
}

static int hook_load(void *arg, const char *name, const char *table)
{
	int r;
	struct ulvm_dev *dev = find_dev(arg, name, &r);

	return r ? r : ulvm_dev_reload(dev, table);
}

static int hook_suspend(void *arg, const char *name, bool suspend)
{
	int r;
	struct ulvm_dev *dev = find_dev(arg, name, &r);

	/* Nothing to wait for: NBD replies are copies (export/nbd_requests.c, read_from_file). */
	if (r)
		return r;
	return suspend ? ulvm_dev_suspend(dev) : ulvm_dev_resume(dev);
}

/* Users of a device the daemon holds: holds (FUSE files, ...) and NBD connections. */
static unsigned dev_users(struct ulvmd *d, struct ulvm_dev *dev)
{
	return ulvm_dev_open_count(dev) + (d->nbd ? nbd_server_dev_users(d->nbd, dev) : 0);
}

static int hook_open_count(void *arg, const char *name, unsigned *count)
{
	struct ulvmd *d = arg;
	struct ulvm_dev *dev = ulvm_dev_find(d->ctx, name);

	if (!dev)
		return -ENODEV;
	*count = dev_users(d, dev);
	return 0;
}

static int hook_remove(void *arg, const char *name)
{
	struct ulvmd *d = arg;
	struct ulvm_dev *dev = ulvm_dev_find(d->ctx, name);

	if (!dev)
		return -ENODEV;
	if (dev_users(d, dev))
		return -EBUSY;
	ulvm_dev_close(dev);
	return 0;
}

/* lvrename of an open LV, dmsetup rename: the device keeps its users (NBD connections and
 * FUSE files hold it, not its name); new NBD clients and FUSE lookups find the new name. */
static int hook_rename(void *arg, const char *name, const char *new_name)
{
	struct ulvmd *d = arg;
	struct ulvm_dev *dev = ulvm_dev_find(d->ctx, name);
	int r = dev ? ulvm_dev_rename(dev, new_name) : -ENODEV;

	/* a pool's `lvchange --monitor n` follows it to its new name */
	if (!r)
		monitor_renamed(d->monitor, name, new_name);
	return r;
}

/* ---- NBD exports: the daemon's devices, by dm name or as VG/LV ---- */

static int nbd_lookup(void *arg, const char *name, struct nbd_export_info *out)
{
	struct ulvmd *d = arg;
	char dm[600], vg[256], lv[256];
	const char *slash = strchr(name, '/');
	struct ulvm_dev *dev = NULL;
	int r;

	memset(out, 0, sizeof(*out));
	if (slash && (size_t)(slash - name) < sizeof(vg)) {
		snprintf(vg, sizeof(vg), "%.*s", (int)(slash - name), name);
		snprintf(lv, sizeof(lv), "%s", slash + 1);
		ulvm_lv_dm_name(vg, lv, dm, sizeof(dm));
		dev = find_dev(d, dm, &r);
	}
	if (!dev && *name && !strchr(name, '/'))
		dev = find_dev(d, name, &r);
	if (!dev && !*name) {
		/* The default export: the only device, if there is exactly one. */
		const char **names;
		size_t n;
		if (!ulvm_active_list(&names, &n)) {
			if (n == 1)
				dev = ulvm_dev_find(d->ctx, names[0]);
			ulvm_active_list_free(names, n);
		}
	}
	if (!dev)
		return -ENOENT;
	out->dev = dev;
	out->readonly = false;
	return 0;
}

/* Call `fn` for each usable active device (find_dev: stale ones left out, ones not held yet
 * taken over). */
static void each_dev(struct ulvmd *d,
                     void (*fn)(void *cookie, const char *name, struct ulvm_dev *dev), void *cookie)
{
	const char **names;
	size_t n;
	int r;

	if (ulvm_active_list(&names, &n))
		return;
	for (size_t i = 0; i < n; i++) {
		struct ulvm_dev *dev = find_dev(d, names[i], &r);
		if (dev)
			fn(cookie, names[i], dev);
	}
	ulvm_active_list_free(names, n);
}

struct nbd_list_cb {
	void (*add)(void *cookie, const char *name, const char *desc);
	void *cookie;
};

static void nbd_list_one(void *cookie, const char *name, struct ulvm_dev *dev)
{
	struct nbd_list_cb *cb = cookie;
	char vg[256], lv[256], vglv[520];

	(void)dev;
	if (ulvm_dm_name_split(name, vg, sizeof(vg), lv, sizeof(lv)))
		snprintf(vglv, sizeof(vglv), "%s/%s", vg, lv);
	else
		snprintf(vglv, sizeof(vglv), "%s", name);
	cb->add(cb->cookie, vglv, name);
}

static void nbd_list(void *arg, void (*add)(void *cookie, const char *name, const char *desc),
                     void *cookie)
{
	struct nbd_list_cb cb = {add, cookie};

	each_dev(arg, nbd_list_one, &cb);
}

/* ---- FUSE mounts: the daemon's devices of LVs, as VG and LV ---- */

struct fuse_list_cb {
	void (*add)(void *cookie, const char *vg, const char *lv, struct ulvm_dev *dev);
	void *cookie;
};

/* Whether LVM2 would link the device of an LV as /dev/VG/LV: not a hidden LV nor a layer, whose
 * UUIDs carry a suffix ("LVM-<vg uuid><lv uuid>-tdata", -tmeta, -cdata, ...), nor a thin pool
 * in use (-pool); a thin pool without thin LVs is an LV of its own (-tpool, named VG-LV),
 * which LVM2 links. Devices that are not LVs are not listed either way (no VG-LV name). */
static bool lv_linked(const char *name)
{
	char uuid[ULVM_DM_UUID_LEN + 8];
	size_t n = 4 + 2 * 32; /* "LVM-" and the two UUIDs */

	if (ulvm_active_uuid(name, uuid, sizeof(uuid)) || strncmp(uuid, "LVM-", 4) ||
	    strlen(uuid) <= n)
		return true;
	return uuid[n] == '-' && !strcmp(uuid + n + 1, "tpool");
}

static void fuse_list_one(void *cookie, const char *name, struct ulvm_dev *dev)
{
	struct fuse_list_cb *cb = cookie;
	char vg[256], lv[256];

	/* VG-LV (not VG-LV-real), as LVM2 links it in /dev/VG/ */
	if (ulvm_dm_name_split(name, vg, sizeof(vg), lv, sizeof(lv)) && lv_linked(name))
		cb->add(cb->cookie, vg, lv, dev);
}

static void fuse_list(void *arg,
                      void (*add)(void *cookie, const char *vg, const char *lv,
                                  struct ulvm_dev *dev),
                      void *cookie)
{
	struct fuse_list_cb cb = {add, cookie};

	each_dev(arg, fuse_list_one, &cb);
}

/* A daemon that `ulvm mount` started for itself ends once nothing uses it. */
static void check_idle(void *arg)
{
	struct ulvmd *d = arg;

	if (d->exit_when_idle && !mounts_count(d->mounts) &&
	    (!d->nbd || !nbd_server_conn_count(d->nbd)))
		*d->stop = 1;
}

static void idle_tick(void *arg, uint32_t events)
{
	(void)events;
	check_idle(arg);
}

/* ---- control requests ---- */

static int do_request(struct ulvmd *d, const char *verb, const char *name, const char *payload,
                      struct strbuf *reply)
{
	struct ulvm_dev *dev;
	char *text = NULL;
	int r;

	if (!strcmp(verb, "ping"))
		return 0;
	if (!strcmp(verb, "shutdown")) {
		*d->stop = 1;
		return 0;
	}
	if (!strcmp(verb, "list")) {
		const char **names;
		size_t n;
		if ((r = ulvm_active_list(&names, &n)))
			return r;
		for (size_t i = 0; i < n; i++)
			sb_printf(reply, "%s\n", names[i]);
		ulvm_active_list_free(names, n);
		return 0;
	}
	if (mounts_verb(verb))
		return mounts_request(d->mounts, verb, payload, reply);
	if (!strcmp(verb, "create")) {
		/* An optional first line "uuid U", then the table. */
		char uuid[ULVM_DM_UUID_LEN];
		const char *nl = strchr(payload, '\n');
		if (strncmp(payload, "uuid ", 5) || !nl || nl - payload - 5 >= (long)sizeof(uuid))
			return ulvm_active_create(d->ctx, name, payload);
		snprintf(uuid, sizeof(uuid), "%.*s", (int)(nl - payload - 5), payload + 5);
		return ulvm_active_create_uuid(d->ctx, name, uuid, nl + 1);
	}
	if (!strcmp(verb, "opencount")) {
		unsigned n;
		if ((r = ulvm_active_open_count(name, &n)))
			return r;
		sb_printf(reply, "%u\n", n);
		return 0;
	}
	if (!strcmp(verb, "nbd")) {
		/* Where the commands reach the devices: the NBD Unix socket. */
		if (!d->nbd || !d->nbd_path[0])
			return ulvm_error(-ENOTSUP, "ulvmd serves no NBD Unix socket");
		sb_printf(reply, "%s\n", d->nbd_path);
		return 0;
	}
	if (!strcmp(verb, "load"))
		return ulvm_active_load(d->ctx, name, payload);
	if (!strcmp(verb, "suspend") || !strcmp(verb, "resume"))
		return ulvm_active_suspend(name, verb[0] == 's');
	if (!strcmp(verb, "remove")) {
		/* a pool deactivated is watched again when it comes back (LVM2 registers it) */
		if (!(r = ulvm_active_remove(d->ctx, name)))
			monitor_request(d->monitor, name, "y", reply);
		return r;
	}
	if (!strcmp(verb, "rename")) /* payload: the new name */
		return ulvm_active_rename(d->ctx, name, payload);
	if (!strcmp(verb, "setuuid")) /* payload: the UUID */
		return ulvm_active_set_uuid(d->ctx, name, payload);
	if (!strcmp(verb, "monitor")) /* payload: "y", "n", or "" to ask (daemon/monitor.h) */
		return monitor_request(d->monitor, name, payload, reply);
	if (!(dev = find_dev(d, name, &r)))
		return r;
	if (!strcmp(verb, "table") || !strcmp(verb, "status")) {
		if ((r = ulvm_dev_table(dev, verb[0] == 's', &text)))
			return r;
		sb_puts(reply, text);
		free(text);
		return 0;
	}
	if (!strcmp(verb, "info")) {
		bool suspended = false;
		char uuid[ULVM_DM_UUID_LEN] = "";
		unsigned opens = 0;
		ulvm_active_info(name, NULL, NULL, &suspended);
		ulvm_active_uuid(name, uuid, sizeof(uuid));
		ulvm_active_open_count(name, &opens);
		sb_printf(reply,
		          "Name:              %s\nState:             %s\nSize:              %llu "
		          "bytes\nOpen count:        %u\nNBD connections:   %u\nUUID: %s\n",
		          name, suspended ? "SUSPENDED" : "ACTIVE",
		          (unsigned long long)ulvm_dev_size(dev), opens,
		          d->nbd ? nbd_server_dev_users(d->nbd, dev) : 0, uuid);
		return 0;
	}
	if (!strcmp(verb, "message")) { /* payload: "SECTOR MSG..." */
		unsigned long long sector;
		int used = 0;
		if (sscanf(payload, "%llu %n", &sector, &used) != 1 || !used)
			return ulvm_error(-EINVAL, "message: expected SECTOR MSG..., got \"%s\"",
			                  payload);
		if ((r = ulvm_dev_message(dev, sector, payload + used, &text)))
			return r;
		sb_puts(reply, text);
		free(text);
		return 0;
	}
	return ulvm_error(-EINVAL, "unknown request \"%s\"", verb);
}

static void conn_close(struct control_conn *c)
{
	for (struct control_conn **p = &c->d->conns; *p; p = &(*p)->next)
		if (*p == c) {
			*p = c->next;
			break;
		}
	evloop_del(c->d->loop, c->fd);
	close(c->fd);
	sb_free(&c->in);
	sb_free(&c->out);
	free(c);
}

/* A complete request is in c->in: run it and queue the answer. */
static bool conn_try_request(struct control_conn *c)
{
	char verb[32], name[256];
	unsigned long len;
	char *nl = c->in.buf ? memchr(c->in.buf, '\n', c->in.len) : NULL;
	struct strbuf reply;
	size_t hdr;
	int r;

	if (!nl)
		return c->in.len > 512 ? (c->replied = true, false) : false;
	hdr = (size_t)(nl - c->in.buf) + 1;
	*nl = '\0';
	if (sscanf(c->in.buf, "%31s %255s %lu", verb, name, &len) != 3 || len > MAX_REQUEST) {
		c->replied = true; /* garbage: just close */
		return false;
	}
	*nl = '\n';
	if (c->in.len < hdr + len)
		return false;
	sb_init(&reply);
	{
		char *payload = strndup(c->in.buf + hdr, len);
		ulvm_clear_error();
		r = payload ? do_request(c->d, verb, strcmp(name, "-") ? name : "", payload, &reply)
		            : -ENOMEM;
		free(payload);
	}
	if (r) {
		const char *m = ulvm_last_error();
		sb_reset(&reply);
		sb_puts(&reply, m ? m : strerror(-r));
		sb_printf(&c->out, "ERR %d %zu\n", r, reply.len);
	} else {
		sb_printf(&c->out, "OK %zu\n", reply.len);
	}
	sb_put(&c->out, reply.buf ? reply.buf : "", reply.len);
	sb_free(&reply);
	c->replied = true;
	return true;
}

static void conn_event(void *arg, uint32_t events)
{
	struct control_conn *c = arg;
	char buf[4096];

	if (!c->replied && (events & EPOLLIN)) {
		for (;;) {
			ssize_t n = read(c->fd, buf, sizeof(buf));
			if (n > 0) {
				sb_put(&c->in, buf, (size_t)n);
				if (c->in.len > MAX_REQUEST + 512)
					break;
				continue;
			}
			if (n == 0 || (errno != EAGAIN && errno != EINTR)) {
				if (!c->replied) {
					conn_close(c);
					return;
				}
			}
			break;
		}
		if (!conn_try_request(c) && c->replied && !c->out.len) {
			conn_close(c);
			return;
		}
		if (c->out.len)
			evloop_mod(c->d->loop, c->fd, EPOLLOUT);
	}
	if (c->out.len && (events & EPOLLOUT)) {
		while (c->out_done < c->out.len) {
			ssize_t n = send(c->fd, c->out.buf + c->out_done, c->out.len - c->out_done,
			                 MSG_NOSIGNAL);
			if (n < 0 && errno == EAGAIN)
				return;
			if (n <= 0)
				break;
			c->out_done += (size_t)n;
		}
		conn_close(c);
	}
}

static void on_accept(void *arg, uint32_t events)
{
	struct ulvmd *d = arg;

	(void)events;
	for (;;) {
		int fd = accept4(d->listen_fd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
		struct control_conn *c;

		if (fd < 0)
			return;
		if (!(c = calloc(1, sizeof(*c)))) {
			close(fd);
			continue;
		}
		c->d = d;
		c->fd = fd;
		sb_init(&c->in);
		sb_init(&c->out);
		if (evloop_add(d->loop, fd, EPOLLIN, conn_event, c)) {
			close(fd);
			free(c);
			continue;
		}
		c->next = d->conns;
		d->conns = c;
	}
}

static int listen_unix(const char *path, int *out)
{
	struct sockaddr_un sa = {.sun_family = AF_UNIX};
	int fd;

	if (strlen(path) >= sizeof(sa.sun_path))
		return ulvm_error(-ENAMETOOLONG, "%s: socket path too long", path);
	strcpy(sa.sun_path, path);
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return ulvm_error(-errno, "socket: %s", strerror(errno));
	/* A socket file nobody listens on is stale: replace it; refuse a live one. */
	if (connect(fd, (struct sockaddr *)&sa, sizeof(sa)) == 0) {
		close(fd);
		return ulvm_error(-EADDRINUSE, "%s: ulvmd is already running", path);
	}
	unlink(path);
	umask(077);
	if (bind(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0 || chmod(path, 0600) < 0 ||
	    listen(fd, 64) < 0) {
		int e = -errno;
		close(fd);
		return ulvm_error(e, "%s: %s", path, strerror(-e));
	}
	*out = fd;
	return 0;
}

/* Build every device the runtime directory records as active. */
static void restore_active(struct ulvmd *d)
{
	const char **names;
	size_t n;

	if (ulvm_active_list(&names, &n))
		return;
	for (size_t i = 0; i < n; i++) {
		char *table = NULL;
		bool suspended = false;
		struct ulvm_dev *dev;

		int r;

		if (ulvm_dev_find(d->ctx, names[i]))
			continue;
		/* A stale record is reported by the check and left alone. */
		if ((r = ulvm_active_info(names[i], &table, NULL, &suspended)) ||
		    (r = ulvm_active_open_table(d->ctx, names[i], table, &dev)) ||
		    ((r = ulvm_dev_own(dev)) && (ulvm_dev_close(dev), true))) {
			if (r != -ESTALE)
				ulvm_warn("cannot restore active device %s: %s", names[i],
				          ulvm_last_error() ? ulvm_last_error() : "unknown error");
		} else if (suspended) {
			ulvm_dev_suspend(dev);
		}
		free(table);
	}
	ulvm_active_list_free(names, n);
}

int ulvmd_run(struct ulvm_ctx *ctx, const struct ulvmd_opts *o, void (*ready)(void *arg), void *arg)
{
	struct ulvmd d = {.ctx = ctx, .listen_fd = -1, .stop = &stop_flag};
	struct ulvm_active_hooks hooks = {.create = hook_create,
	                                  .load = hook_load,
	                                  .suspend = hook_suspend,
	                                  .remove = hook_remove,
	                                  .open_count = hook_open_count,
	                                  .rename = hook_rename,
	                                  .arg = &d};
	struct nbd_server_opts nopts = {.ops = {.lookup = nbd_lookup, .list = nbd_list, .arg = &d},
	                                .multi_conn = true,
	                                .workers = 2};
	struct sigaction sa = {.sa_handler = on_signal};
	int r;

	stop_flag = 0;
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGINT, &sa, NULL);
	if (o && o->exit_when_idle)
		sigaction(SIGHUP, &sa, NULL);
	signal(SIGPIPE, SIG_IGN);
	if (o && o->control_path)
		snprintf(d.control_path, sizeof(d.control_path), "%s", o->control_path);
	else if ((r = ulvm_control_socket_path(d.control_path, sizeof(d.control_path))))
		return r;
	if ((r = evloop_new(ctx, &d.loop)))
		return r;
	if ((r = listen_unix(d.control_path, &d.listen_fd)))
		goto out;
	ulvm_active_set_hooks(&hooks);
	restore_active(&d);
	if ((r = evloop_add(d.loop, d.listen_fd, EPOLLIN, on_accept, &d)))
		goto out;
	if (!(o && o->no_nbd)) {
		if ((r = nbd_server_new(d.loop, &nopts, &d.nbd)))
			goto out;
		if (o && o->nbd_unix)
			snprintf(d.nbd_path, sizeof(d.nbd_path), "%s", o->nbd_unix);
		else {
			snprintf(d.nbd_path, sizeof(d.nbd_path), "%s", d.control_path);
			char *slash = strrchr(d.nbd_path, '/');
			snprintf(slash ? slash + 1 : d.nbd_path,
			         sizeof(d.nbd_path) - (size_t)(slash ? slash + 1 - d.nbd_path : 0),
			         "nbd.sock");
		}
		if ((r = nbd_server_listen_unix(d.nbd, d.nbd_path, 0600)))
			goto out;
		if (o && o->nbd_tcp) {
			char host[256] = "127.0.0.1";
			const char *colon = strrchr(o->nbd_tcp, ':');
			if (colon && colon != o->nbd_tcp)
				snprintf(host, sizeof(host), "%.*s", (int)(colon - o->nbd_tcp),
				         o->nbd_tcp);
			if ((r = nbd_server_listen_tcp(d.nbd, host,
			                               colon ? colon + 1 : o->nbd_tcp)))
				goto out;
			if (o->nbd_tcp_port && (r = nbd_server_tcp_port(d.nbd)) < 0)
				goto out;
			if (o->nbd_tcp_port)
				*o->nbd_tcp_port = r;
			r = 0;
		}
	}
	{
		struct mounts_env me = {.ctx = ctx,
		                        .loop = d.loop,
		                        .list = fuse_list,
		                        .changed = check_idle,
		                        .arg = &d};
		if ((r = mounts_new(&me, &d.mounts)))
			goto out;
	}
	if (o && o->mount_request) {
		struct strbuf warnings;
		sb_init(&warnings);
		r = mounts_request(d.mounts, "mount", o->mount_request, &warnings);
		if (warnings.len)
			fputs(warnings.buf, stderr);
		sb_free(&warnings);
		if (r)
			goto out;
	}
	if (o && o->monitor && (r = monitor_new(ctx, d.loop, o->monitor, &d.monitor)))
		goto out;
	if (o && o->exit_when_idle) {
		d.exit_when_idle = true;
		evloop_timer_init(&d.idle_timer, idle_tick, &d);
		evloop_timer_arm(d.loop, &d.idle_timer, 1000000000ull, 1000000000ull);
	}
	if (ready)
		ready(arg);
	r = evloop_run(d.loop, &stop_flag);
out:
	/* Clean shutdown: clients first (their I/O completes), then flush every device. */
	monitor_free(d.monitor);
	mounts_free(d.mounts);
	d.mounts = NULL;
	nbd_server_free(d.nbd);
	{
		const char **names;
		size_t n;
		if (!ulvm_active_list(&names, &n)) {
			for (size_t i = 0; i < n; i++) {
				struct ulvm_dev *dev = ulvm_dev_find(ctx, names[i]);
				bool suspended = false;
				ulvm_active_info(names[i], NULL, NULL, &suspended);
				if (dev && !suspended && ulvm_dev_flush(dev))
					ulvm_warn("%s", ulvm_last_error());
			}
			ulvm_active_list_free(names, n);
		}
	}
	ulvm_active_set_hooks(NULL);
	/* Control connections still open (the one that asked for the shutdown among them): their
	 * answers go out, then they close. */
	while (d.conns) {
		struct control_conn *c = d.conns;
		if (c->out.len > c->out_done)
			(void)!send(c->fd, c->out.buf + c->out_done, c->out.len - c->out_done,
			            MSG_NOSIGNAL | MSG_DONTWAIT);
		conn_close(c);
	}
	if (d.listen_fd >= 0) {
		evloop_del(d.loop, d.listen_fd);
		close(d.listen_fd);
		unlink(d.control_path);
	}
	if (d.nbd_path[0])
		unlink(d.nbd_path);
	evloop_free(d.loop);
	return r;
}
