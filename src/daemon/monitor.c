/* Thin pool monitoring and autoextension in ulvmd (dmeventd's thin plugin): see monitor.h. */
#include <errno.h>
#include <fcntl.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/wait.h>
#include <unistd.h>

#include "../util/util.h"
#include "monitor.h"

extern char **environ;

#define PERCENT_1     1000000ll /* LVM2's dm_percent_t */
#define WARNING_START (80 * PERCENT_1)
#define WARNING_STEP  (5 * PERCENT_1)

struct pool_watch {
	struct pool_watch *next;
	struct monitor *m;
	char dev[300];                      /* the thin-pool device, VG-POOL-tpool */
	char vg_lv[600];                    /* VG/POOL */
	long long data_warned, meta_warned; /* the last warning's step (0: none) */
	pid_t child;                        /* lvextend --use-policies running, or 0 */
	int out_fd;                         /* its stdout and stderr */
	struct strbuf out;
	bool seen; /* in this round's list */
};

struct monitor {
	struct ulvm_ctx *ctx;
	struct evloop *loop;
	struct monitor_opts o;
	char *command, *devices;
	struct evloop_timer timer;
	struct pool_watch *pools;
	/* Pools `lvchange --monitor n` took off the watch, until their device goes (LVM2
	 * registers a pool with dmeventd again when it is activated next). */
	char **off;
	size_t noff;
};

static size_t off_find(const struct monitor *m, const char *dev)
{
	size_t i = 0;

	while (i < m->noff && strcmp(m->off[i], dev))
		i++;
	return i;
}

static void off_drop(struct monitor *m, size_t i)
{
	free(m->off[i]);
	m->off[i] = m->off[--m->noff];
}

static long long make_percent(uint64_t used, uint64_t total)
{
	long long r;

	if (!total || !used)
		return 0;
	if (used >= total)
		return 100 * PERCENT_1;
	r = (long long)((long double)used * 100 * PERCENT_1 / total);
	return r ? r : 1;
}

/* dmeventd's warnings: from 80 % on, once per 5 % step reached; again after a fall. */
static void warn_usage(struct pool_watch *w, const char *what, long long pct, long long *warned)
{
	long long step = pct >= WARNING_START ? pct / WARNING_STEP * WARNING_STEP : 0;

	if (step > *warned)
		ulvm_warn("Thin pool %s %s is now %.2f%% full.", w->dev, what,
		          (double)pct / PERCENT_1);
	*warned = step;
}

static void child_output(void *arg, uint32_t events);

/* The child's end: its exit status and what it said go to the daemon's log. */
static void child_done(struct pool_watch *w)
{
	int status = 0;
	pid_t r;

	evloop_del(w->m->loop, w->out_fd);
	close(w->out_fd);
	w->out_fd = -1;
	do
		r = waitpid(w->child, &status, 0);
	while (r < 0 && errno == EINTR);
	w->child = 0;
	sb_putc(&w->out, '\0');
	if (r > 0 && WIFEXITED(status) && WEXITSTATUS(status) == 0)
		fprintf(stderr, "ulvmd: thin pool %s: lvextend --use-policies %s done\n%s", w->dev,
		        w->vg_lv, w->out.buf);
	else
		fprintf(stderr,
		        "ulvmd: thin pool %s: Failed to extend %s (lvextend --use-policies exited "
		        "%d)\n%s",
		        w->dev, w->vg_lv, r > 0 && WIFEXITED(status) ? WEXITSTATUS(status) : -1,
		        w->out.buf);
	fflush(stderr);
	sb_reset(&w->out);
}

static void child_output(void *arg, uint32_t events)
{
	struct pool_watch *w = arg;
	char buf[4096];
	ssize_t n;

	(void)events;
	n = read(w->out_fd, buf, sizeof(buf));
	if (n > 0) {
		sb_put(&w->out, buf, (size_t)n);
		return;
	}
	if (n < 0 && (errno == EINTR || errno == EAGAIN))
		return;
	child_done(w);
}

/* Run `ulvm lvextend --use-policies VG/POOL` (dmeventd's thin_command) in the background. */
static void extend(struct pool_watch *w)
{
	struct monitor *m = w->m;
	posix_spawn_file_actions_t fa;
	const char *argv[8];
	int p[2], n = 0, r;
	pid_t pid;

	argv[n++] = m->command;
	argv[n++] = "lvextend";
	argv[n++] = "--use-policies";
	if (m->devices) {
		argv[n++] = "--devices";
		argv[n++] = m->devices;
	}
	argv[n++] = w->vg_lv;
	argv[n] = NULL;
	if (pipe2(p, O_CLOEXEC) < 0) {
		ulvm_warn("ulvmd: thin pool %s: cannot run lvextend: %s", w->dev, strerror(errno));
		return;
	}
	posix_spawn_file_actions_init(&fa);
	posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
	posix_spawn_file_actions_adddup2(&fa, p[1], 1);
	posix_spawn_file_actions_adddup2(&fa, p[1], 2);
	r = posix_spawn(&pid, m->command, &fa, NULL, (char *const *)argv, environ);
	posix_spawn_file_actions_destroy(&fa);
	close(p[1]);
	if (r) {
		close(p[0]);
		ulvm_warn("ulvmd: thin pool %s: cannot run %s: %s", w->dev, m->command,
		          strerror(r));
		return;
	}
	fprintf(stderr, "ulvmd: thin pool %s is above the threshold of %d%%: extending %s\n",
	        w->dev, m->o.threshold, w->vg_lv);
	fflush(stderr);
	w->child = pid;
	w->out_fd = p[0];
	if (evloop_add(m->loop, p[0], EPOLLIN, child_output, w)) {
		/* Its output is lost; it runs on, and the next round tries again. */
		ulvm_warn("ulvmd: thin pool %s: %s", w->dev, ulvm_last_error());
		close(p[0]);
		w->out_fd = -1;
		w->child = 0;
	}
}

/* The pool's VG/LV from its device's name `dev` (VG-POOL-tpool): false when it is not
 * VG-LV. */
static bool pool_vg_lv(const char *dev, char *out, size_t len)
{
	char vg[256], lv[256], base[300];
	size_t n;

	/* LVM2's layer suffix: the pool LV's own device name without it. */
	snprintf(base, sizeof(base), "%s", dev);
	n = strlen(base);
	if (n > 6 && !strcmp(base + n - 6, "-tpool"))
		base[n - 6] = '\0';
	if (!ulvm_dm_name_split(base, vg, sizeof(vg), lv, sizeof(lv)))
		return false;
	snprintf(out, len, "%s/%s", vg, lv);
	return true;
}

/* The watch of pool device `dev`, made on first sight: NULL when `dev` is not VG-LV. */
static struct pool_watch *watch_of(struct monitor *m, const char *dev)
{
	struct pool_watch *w;
	char vg_lv[600];

	for (w = m->pools; w; w = w->next)
		if (!strcmp(w->dev, dev))
			return w;
	if (!pool_vg_lv(dev, vg_lv, sizeof(vg_lv)))
		return NULL;
	if (!(w = calloc(1, sizeof(*w))))
		return NULL;
	w->m = m;
	w->out_fd = -1;
	sb_init(&w->out);
	snprintf(w->dev, sizeof(w->dev), "%s", dev);
	snprintf(w->vg_lv, sizeof(w->vg_lv), "%s", vg_lv);
	w->next = m->pools;
	m->pools = w;
	return w;
}

static void check_pool(struct monitor *m, const char *name)
{
	struct ulvm_dev *dev = ulvm_dev_find(m->ctx, name);
	struct ulvm_thin_pool_status st;
	struct pool_watch *w;
	bool suspended = false;
	char *text = NULL;
	long long data, meta, limit = (long long)m->o.threshold * PERCENT_1;

	if (!dev || off_find(m, name) < m->noff || ulvm_active_info(name, NULL, NULL, &suspended) ||
	    suspended)
		return;
	if (ulvm_dev_table(dev, true, &text) || !strstr(text, " thin-pool ") ||
	    ulvm_thin_pool_status(text, &st) || st.failed || !(w = watch_of(m, name))) {
		free(text);
		return;
	}
	free(text);
	w->seen = true;
	data = make_percent(st.used_data, st.total_data);
	meta = make_percent(st.used_metadata, st.total_metadata);
	warn_usage(w, "data", data, &w->data_warned);
	warn_usage(w, "metadata", meta, &w->meta_warned);
	if (m->o.threshold < 100 && !w->child && (data > limit || meta > limit))
		extend(w);
}

static void tick(void *arg, uint32_t events)
{
	struct monitor *m = arg;
	const char **names;
	size_t n;

	(void)events;
	for (struct pool_watch *w = m->pools; w; w = w->next)
		w->seen = false;
	if (!ulvm_active_list(&names, &n)) {
		for (size_t i = 0; i < n; i++)
			check_pool(m, names[i]);
		ulvm_active_list_free(names, n);
	}
	for (size_t i = 0; i < m->noff;)
		if (!ulvm_dev_find(m->ctx, m->off[i]))
			off_drop(m, i);
		else
			i++;
	/* Pools gone (deactivated, removed) are forgotten once their child is done. */
	for (struct pool_watch **pp = &m->pools; *pp;) {
		struct pool_watch *w = *pp;
		if (w->seen || w->child) {
			pp = &w->next;
			continue;
		}
		*pp = w->next;
		sb_free(&w->out);
		free(w);
	}
}

int monitor_new(struct ulvm_ctx *ctx, struct evloop *loop, const struct monitor_opts *o,
                struct monitor **out)
{
	struct monitor *m;

	*out = NULL;
	if (!o->enabled)
		return 0;
	if (!(m = calloc(1, sizeof(*m))) || !(m->command = strdup(o->command)) ||
	    (o->devices && !(m->devices = strdup(o->devices)))) {
		if (m)
			free(m->command);
		free(m);
		return ulvm_error(-ENOMEM, "out of memory");
	}
	m->ctx = ctx;
	m->loop = loop;
	m->o = *o;
	if (!m->o.interval_ns)
		m->o.interval_ns = 10000000000ull;
	evloop_timer_init(&m->timer, tick, m);
	evloop_timer_arm(loop, &m->timer, m->o.interval_ns, m->o.interval_ns);
	*out = m;
	return 0;
}

void monitor_free(struct monitor *m)
{
	if (!m)
		return;
	evloop_timer_disarm(m->loop, &m->timer);
	while (m->pools) {
		struct pool_watch *w = m->pools;
		m->pools = w->next;
		/* A command still running finishes on its own (it may be waiting for this
		 * daemon: not waited for). */
		if (w->out_fd >= 0) {
			evloop_del(m->loop, w->out_fd);
			close(w->out_fd);
		}
		sb_free(&w->out);
		free(w);
	}
	while (m->noff)
		off_drop(m, m->noff - 1);
	free(m->off);
	free(m->command);
	free(m->devices);
	free(m);
}

/* Whether `dev` is a thin pool the daemon holds (its own table, not a layer above it). */
static bool is_pool(struct monitor *m, const char *dev)
{
	struct ulvm_dev *d = ulvm_dev_find(m->ctx, dev);
	char *text = NULL;
	bool r = d && !ulvm_dev_table(d, false, &text) && strstr(text, " thin-pool ");

	free(text);
	return r;
}

int monitor_request(struct monitor *m, const char *dev, const char *arg, struct strbuf *reply)
{
	size_t i;

	if (!dev || !*dev)
		return ulvm_error(-EINVAL, "monitor: no device named");
	if (!m) {
		if (arg && *arg == 'y')
			return ulvm_error(-ENOTSUP,
			                  "ulvmd monitors no thin pools (activation/monitoring = 0 "
			                  "or serve --ignoremonitoring): %s is not monitored",
			                  dev);
		if (!arg || *arg != 'n') /* "n": already off */
			sb_puts(reply, "not monitored\n");
		return 0;
	}
	i = off_find(m, dev);
	if (arg && *arg == 'n') {
		char **nv, *copy;
		if (i < m->noff || !is_pool(m, dev))
			return 0;
		if (!(copy = strdup(dev)) || !(nv = realloc(m->off, (m->noff + 1) * sizeof(*nv)))) {
			free(copy);
			return ulvm_error(-ENOMEM, "out of memory");
		}
		m->off = nv;
		m->off[m->noff++] = copy;
		return 0;
	}
	if (arg && *arg == 'y') {
		if (i < m->noff)
			off_drop(m, i);
		return 0;
	}
	sb_puts(reply, i == m->noff && is_pool(m, dev) ? "monitored\n" : "not monitored\n");
	return 0;
}

void monitor_renamed(struct monitor *m, const char *dev, const char *new_name)
{
	size_t i;

	if (!m)
		return;
	/* Keyed by name as the requests are (LVM2's dmeventd keys them by UUID, which a
	 * rename keeps): without this the old name's entry would be dropped at the next tick
	 * and the renamed pool watched again. */
	if ((i = off_find(m, dev)) < m->noff) {
		char *copy = strdup(new_name);
		if (!copy) {
			ulvm_warn("ulvmd: out of memory: %s, renamed %s, is monitored again", dev,
			          new_name);
			off_drop(m, i);
		} else {
			free(m->off[i]);
			m->off[i] = copy;
		}
	}
	/* The watch too: the warnings already given stay given; a running lvextend keeps the
	 * name it was started with. */
	for (struct pool_watch *w = m->pools; w; w = w->next)
		if (!strcmp(w->dev, dev)) {
			char vg_lv[600];
			snprintf(w->dev, sizeof(w->dev), "%s", new_name);
			if (pool_vg_lv(new_name, vg_lv, sizeof(vg_lv)))
				snprintf(w->vg_lv, sizeof(w->vg_lv), "%s", vg_lv);
		}
}
