/*
 * Active devices without a daemon. The kernel keeps device-mapper state between commands;
 * ulvm, until ulvmd runs, keeps it in a runtime directory: per mapped device its live table,
 * a loaded (inactive) table and a suspended mark. A command that does I/O on an active device
 * builds it from there in its own process. `lvchange -ay`, `dmsetup create/reload/...` change
 * this state under a lock; readers see each file replaced atomically.
 *
 * Directory: $ULVM_RUN_DIR, else /run/ulvm when writable, else /tmp/ulvm-run-<uid>.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include "../dm/dm.h"
#include "lvm.h"

static int run_dir(char *out, size_t len)
{
	const char *e = getenv("ULVM_RUN_DIR");

	if (e && *e) {
		snprintf(out, len, "%s", e);
	} else if ((mkdir("/run/ulvm", 0700) == 0 || errno == EEXIST) &&
	           access("/run/ulvm", W_OK) == 0) {
		snprintf(out, len, "/run/ulvm");
	} else {
		snprintf(out, len, "/tmp/ulvm-run-%u", (unsigned)getuid());
	}
	if (mkdir(out, 0700) < 0 && errno != EEXIST)
		return ulvm_error(-errno, "runtime directory %s: %s", out, strerror(errno));
	return 0;
}

static bool name_ok(const char *name)
{
	return *name && *name != '.' && !strchr(name, '/') && strlen(name) < 128;
}

static int path_of(const char *name, const char *suffix, char *out, size_t len)
{
	char dir[4096];
	int r;

	if (!name_ok(name))
		return ulvm_error(-EINVAL, "invalid device name \"%s\"", name);
	if ((r = run_dir(dir, sizeof(dir))))
		return r;
	snprintf(out, len, "%s/%s%s", dir, name, suffix);
	return 0;
}

/* Exclusive lock on the whole runtime state for a change. */
static int state_lock(void)
{
	char dir[4096], path[4200];
	int fd;

	if (run_dir(dir, sizeof(dir)))
		return -1;
	snprintf(path, sizeof(path), "%s/.lock", dir);
	fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0600);
	if (fd >= 0)
		flock(fd, LOCK_EX);
	return fd;
}

static void state_unlock(int fd)
{
	if (fd >= 0)
		close(fd);
}

static char *read_all(const char *path)
{
	FILE *f = fopen(path, "re");
	struct strbuf sb;
	char buf[4096];
	size_t n;

	if (!f)
		return NULL;
	sb_init(&sb);
	while ((n = fread(buf, 1, sizeof(buf), f)) > 0)
		sb_put(&sb, buf, n);
	fclose(f);
	return sb_steal(&sb);
}

static int write_atomic(const char *path, const char *text)
{
	char tmp[4300];
	FILE *f;

	snprintf(tmp, sizeof(tmp), "%s.tmp", path);
	if (!(f = fopen(tmp, "we")) || fputs(text, f) < 0 || fflush(f) || fsync(fileno(f)) ||
	    fclose(f)) {
		int e = -errno;
		if (f)
			fclose(f);
		unlink(tmp);
		return ulvm_error(e ? e : -EIO, "%s: cannot write: %s", path,
		                  strerror(e ? -e : EIO));
	}
	if (rename(tmp, path) < 0)
		return ulvm_error(-errno, "%s: cannot write: %s", path, strerror(errno));
	return 0;
}

/* ---- ulvmd ----------------------------------------------------------------------------
 * When the daemon runs, it holds the active devices: changes go to it over its control
 * socket (it updates these files too); without it they are made here. Inside the daemon the
 * hooks act on its devices. */

static const struct ulvm_active_hooks *hooks;

void ulvm_active_set_hooks(const struct ulvm_active_hooks *h)
{
	hooks = h;
}

int ulvm_control_socket_path(char *out, size_t len)
{
	char dir[4096];
	int r = run_dir(dir, sizeof(dir));

	if (!r)
		snprintf(out, len, "%s/ulvmd.sock", dir);
	return r;
}

static int write_all(int fd, const void *buf, size_t len)
{
	const char *p = buf;

	while (len) {
		ssize_t n = send(fd, p, len, MSG_NOSIGNAL);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return -errno;
		p += n;
		len -= (size_t)n;
	}
	return 0;
}

static int read_line(int fd, char *buf, size_t len)
{
	size_t o = 0;

	while (o + 1 < len) {
		ssize_t n = read(fd, buf + o, 1);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return -EPIPE;
		if (buf[o] == '\n')
			break;
		o++;
	}
	buf[o] = '\0';
	return 0;
}

/* One request to the daemon: "VERB NAME LEN\n" and LEN bytes of payload; the answer is
 * "OK LEN\n" or "ERR -ERRNO LEN\n" and LEN bytes (the result, or the error message).
 * -ENOTCONN when no daemon listens. */
int ulvm_control_call(const char *verb, const char *name, const char *payload, char **reply)
{
	struct sockaddr_un sa = {.sun_family = AF_UNIX};
	char line[256], path[4096];
	size_t plen = payload ? strlen(payload) : 0;
	long code, rlen;
	char *body;
	int fd, r;

	if (reply)
		*reply = NULL;
	if (hooks || ulvm_control_socket_path(path, sizeof(path)) ||
	    strlen(path) >= sizeof(sa.sun_path))
		return -ENOTCONN;
	strcpy(sa.sun_path, path);
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -ENOTCONN;
	if (connect(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0) {
		close(fd);
		return -ENOTCONN;
	}
	snprintf(line, sizeof(line), "%s %s %zu\n", verb, name && *name ? name : "-", plen);
	if ((r = write_all(fd, line, strlen(line))) ||
	    (plen && (r = write_all(fd, payload, plen))) ||
	    (r = read_line(fd, line, sizeof(line)))) {
		close(fd);
		return ulvm_error(-EIO, "ulvmd: control connection lost");
	}
	if (!strncmp(line, "OK ", 3)) {
		code = 0;
		rlen = strtol(line + 3, NULL, 10);
	} else if (sscanf(line, "ERR %ld %ld", &code, &rlen) != 2 || code >= 0) {
		close(fd);
		return ulvm_error(-EPROTO, "ulvmd: bad reply \"%s\"", line);
	}
	if (rlen < 0 || rlen > (64 << 20) || !(body = calloc(1, (size_t)rlen + 1))) {
		close(fd);
		return ulvm_error(-EPROTO, "ulvmd: bad reply length");
	}
	for (long got = 0; got < rlen;) {
		ssize_t n = read(fd, body + got, (size_t)(rlen - got));
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			free(body);
			close(fd);
			return ulvm_error(-EIO, "ulvmd: control connection lost");
		}
		got += n;
	}
	close(fd);
	if (code) {
		r = ulvm_error((int)code, "%s", body);
		free(body);
		return r;
	}
	if (reply)
		*reply = body;
	else
		free(body);
	return 0;
}

bool ulvm_active_exists(const char *name)
{
	char path[4200];

	return !path_of(name, ".table", path, sizeof(path)) && access(path, F_OK) == 0;
}

/* Does `table` name device `dev` as a lower device? Only the device arguments of the
 * targets that have them count (linear: the first; striped: every other one from the
 * third), not any word that happens to be equal. */
static bool table_uses(const char *table, const char *dev)
{
	char *copy = strdup(table), *save = NULL;
	bool used = false;

	if (!copy)
		return false;
	for (char *line = strtok_r(copy, "\n", &save); line && !used;
	     line = strtok_r(NULL, "\n", &save)) {
		char *w[64], *s2 = NULL;
		unsigned n = 0;
		for (char *t = strtok_r(line, " \t", &s2); t && n < ARRAY_SIZE(w);
		     t = strtok_r(NULL, " \t", &s2))
			w[n++] = t;
		if (n >= 4 && !strcmp(w[2], "linear"))
			used = !strcmp(w[3], dev);
		else if (n >= 5 && !strcmp(w[2], "striped"))
			for (unsigned i = 5; i < n && !used; i += 2)
				used = !strcmp(w[i], dev);
	}
	free(copy);
	return used;
}

/* Check a table by building it in a scratch context (errors name the line and argument,
 * lower devices must exist, active devices it stacks on are built too), and give it back
 * as the device prints it -- what is recorded is what `dmsetup table` shows. */
static int normalize_table(const char *name, const char *table, char **out)
{
	struct ulvm_ctx_opts o = {.no_locking = true, .silent_scan = true};
	struct ulvm_ctx *scratch;
	struct ulvm_dev *dev;
	int r;

	*out = NULL;
	if ((r = ulvm_ctx_new(&o, &scratch)))
		return r;
	if (!(r = ulvm_active_open_table(scratch, name, table, &dev))) {
		r = ulvm_dev_table(dev, false, out);
		ulvm_dev_close(dev);
	}
	ulvm_ctx_free(scratch);
	return r;
}

/* Forward a change to the daemon; -ENOTCONN means: do it here. */
static int forward(const char *verb, const char *name, const char *payload)
{
	return ulvm_control_call(verb, name, payload, NULL);
}

int ulvm_active_create(struct ulvm_ctx *ctx, const char *name, const char *table)
{
	char path[4200], *norm = NULL;
	int r, fd;

	if ((r = path_of(name, ".table", path, sizeof(path))))
		return r;
	if ((r = forward("create", name, table)) != -ENOTCONN)
		return r;
	(void)ctx;
	fd = state_lock();
	if (access(path, F_OK) == 0)
		r = ulvm_error(-EEXIST, "Device %s already exists.", name);
	else if (!(r = normalize_table(name, table, &norm)) &&
	         !(r = hooks ? hooks->create(hooks->arg, name, norm) : 0) &&
	         (r = write_atomic(path, norm)) && hooks)
		hooks->remove(hooks->arg, name);
	free(norm);
	state_unlock(fd);
	return r;
}

int ulvm_active_remove(struct ulvm_ctx *ctx, const char *name)
{
	char path[4200], other[4200];
	const char **names = NULL;
	size_t n = 0;
	int r, fd;

	(void)ctx;
	if ((r = path_of(name, ".table", path, sizeof(path))))
		return r;
	if ((r = forward("remove", name, NULL)) != -ENOTCONN)
		return r;
	fd = state_lock();
	if (access(path, F_OK) < 0) {
		state_unlock(fd);
		return ulvm_error(-ENXIO, "Device %s not found", name);
	}
	/* Refuse while another device's table stacks on this one. */
	if (!(r = ulvm_active_list(&names, &n))) {
		for (size_t i = 0; i < n && !r; i++) {
			char *t;
			if (!strcmp(names[i], name) ||
			    path_of(names[i], ".table", other, sizeof(other)))
				continue;
			if ((t = read_all(other))) {
				if (table_uses(t, name))
					r = ulvm_error(-EBUSY, "Device %s is in use by %s", name,
					               names[i]);
				free(t);
			}
		}
		ulvm_active_list_free(names, n);
	}
	if (!r && hooks)
		r = hooks->remove(hooks->arg, name);
	if (!r) {
		unlink(path);
		path_of(name, ".inactive", other, sizeof(other));
		unlink(other);
		path_of(name, ".suspended", other, sizeof(other));
		unlink(other);
	}
	state_unlock(fd);
	return r;
}

int ulvm_active_load(struct ulvm_ctx *ctx, const char *name, const char *table)
{
	char path[4200], ipath[4200], *norm = NULL;
	int r, fd;

	if ((r = path_of(name, ".table", path, sizeof(path))) ||
	    (r = path_of(name, ".inactive", ipath, sizeof(ipath))))
		return r;
	if ((r = forward("load", name, table)) != -ENOTCONN)
		return r;
	(void)ctx;
	fd = state_lock();
	if (access(path, F_OK) < 0)
		r = ulvm_error(-ENXIO, "Device %s not found", name);
	else if (!(r = normalize_table(name, table, &norm)) &&
	         !(r = hooks ? hooks->load(hooks->arg, name, norm) : 0))
		r = write_atomic(ipath, norm);
	free(norm);
	state_unlock(fd);
	return r;
}

int ulvm_active_suspend(const char *name, bool suspend)
{
	char path[4200], spath[4200], ipath[4200];
	int r, fd;

	if ((r = path_of(name, ".table", path, sizeof(path))) ||
	    (r = path_of(name, ".suspended", spath, sizeof(spath))) ||
	    (r = path_of(name, ".inactive", ipath, sizeof(ipath))))
		return r;
	if ((r = forward(suspend ? "suspend" : "resume", name, NULL)) != -ENOTCONN)
		return r;
	r = 0;
	fd = state_lock();
	if (access(path, F_OK) < 0) {
		r = ulvm_error(-ENXIO, "Device %s not found", name);
	} else if (hooks && (r = hooks->suspend(hooks->arg, name, suspend))) {
		/* the device refused: the recorded state stays as it was */
	} else if (suspend) {
		r = write_atomic(spath, "suspended\n");
	} else {
		/* Resume: a loaded table becomes live (one rename), then I/O may go on. */
		if (access(ipath, F_OK) == 0 && rename(ipath, path) < 0)
			r = ulvm_error(-errno, "%s: %s", ipath, strerror(errno));
		if (!r)
			unlink(spath);
	}
	state_unlock(fd);
	return r;
}

int ulvm_active_info(const char *name, char **table, char **inactive, bool *suspended)
{
	char path[4200];
	int r;

	if ((r = path_of(name, ".table", path, sizeof(path))))
		return r;
	if (table && !(*table = read_all(path)))
		return ulvm_error(-ENXIO, "Device %s not found", name);
	if (inactive) {
		path_of(name, ".inactive", path, sizeof(path));
		*inactive = read_all(path);
	}
	if (suspended) {
		path_of(name, ".suspended", path, sizeof(path));
		*suspended = access(path, F_OK) == 0;
	}
	return 0;
}

static int cmp_names(const void *a, const void *b)
{
	return strcmp(*(const char *const *)a, *(const char *const *)b);
}

int ulvm_active_list(const char ***names, size_t *n)
{
	char dir[4096];
	struct dirent *de;
	const char **v = NULL;
	size_t cnt = 0;
	DIR *d;
	int r;

	*names = NULL;
	*n = 0;
	if ((r = run_dir(dir, sizeof(dir))))
		return r;
	if (!(d = opendir(dir)))
		return ulvm_error(-errno, "%s: %s", dir, strerror(errno));
	while ((de = readdir(d))) {
		size_t len = strlen(de->d_name);
		const char **nv;
		if (len <= 6 || strcmp(de->d_name + len - 6, ".table") || de->d_name[0] == '.')
			continue;
		if (!(nv = realloc(v, (cnt + 1) * sizeof(*v)))) {
			closedir(d);
			ulvm_active_list_free(v, cnt);
			return ulvm_error(-ENOMEM, "out of memory");
		}
		v = nv;
		v[cnt++] = strndup(de->d_name, len - 6);
	}
	closedir(d);
	if (cnt)
		qsort(v, cnt, sizeof(*v), cmp_names);
	*names = v;
	*n = cnt;
	return 0;
}

void ulvm_active_list_free(const char **names, size_t n)
{
	for (size_t i = 0; i < n; i++)
		free((void *)names[i]);
	free(names);
}

/* Build `name` from `table` in this process, first building any active device the table
 * names as a lower device (stacking). */
int ulvm_active_open_table(struct ulvm_ctx *ctx, const char *name, const char *table,
                           struct ulvm_dev **out)
{
	const char **names;
	size_t n;
	int r = 0;

	/* Build first the active devices this table stacks on. */
	if (!ulvm_active_list(&names, &n)) {
		for (size_t i = 0; i < n && !r; i++) {
			struct ulvm_dev *lower;
			if (strcmp(names[i], name) && !ulvm_dev_find(ctx, names[i]) &&
			    table_uses(table, names[i]))
				r = ulvm_active_open(ctx, names[i], &lower);
		}
		ulvm_active_list_free(names, n);
	}
	return r ? r : ulvm_dev_open_table(ctx, name, table, out);
}

int ulvm_active_open(struct ulvm_ctx *ctx, const char *name, struct ulvm_dev **out)
{
	char *table = NULL;
	bool suspended = false;
	int r = ulvm_active_info(name, &table, NULL, &suspended);

	*out = NULL;
	if (r)
		return r;
	if (suspended)
		r = ulvm_error(-EAGAIN, "Device %s is suspended", name);
	else
		r = ulvm_active_open_table(ctx, name, table, out);
	free(table);
	return r;
}
