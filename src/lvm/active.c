/*
 * Active devices: the device-mapper state the kernel would keep between commands, and who
 * owns each device.
 *
 * Records. Per mapped device NAME the runtime directory holds
 *   NAME.table      its live record          NAME.inactive  a loaded (inactive) record
 *   NAME.suspended  the suspended mark       NAME.holder    the owner lock (below)
 *   NAME.reported   why it was last reported stale (so that the warning is given once)
 * A record is text: "uuid UUID" (optional), one "lower IDENT PATH" per backing device its
 * table names, a line "--", then the table as the device prints it. Devices are keyed as
 * LVM2 keys its dm devices: LVs are named VG-LV, with UUID LVM-<vg uuid><lv uuid>. IDENT is
 * what the backing device was when the record was made ("f DEV:INO:BIRTH" of a file, "b MAJ:MIN" of
 * a block device): a record whose backing device is gone or was replaced, or whose UUID is
 * not that of the LV on disk, is stale -- reported once, never used for I/O, cleared by
 * `dmsetup remove`, replaced when the LV is activated. Changes are made under a lock on the
 * whole directory; readers see each file replaced atomically.
 *
 * One owner. A process doing I/O on a device owns it: it holds an OFD write lock on
 * NAME.holder for as long as the device is open and writes "PID COMMAND" into it, so that a
 * second would-be owner is refused with one line naming the holder. ulvmd owns every device
 * it holds; while it runs, changes go to it over its control socket (ulvm_control_call) and
 * the commands do their I/O through its NBD export.
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
#include <sys/sysmacros.h>
#include <sys/un.h>
#include <unistd.h>

#include "../dm/dm.h"
#include "lvm.h"

int active_run_dir(char *out, size_t len)
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
	if ((r = active_run_dir(dir, sizeof(dir))))
		return r;
	snprintf(out, len, "%s/%s%s", dir, name, suffix);
	return 0;
}

/* Exclusive lock on the whole runtime state for a change. */
static int state_lock(void)
{
	char dir[4096], path[4200];
	int fd;

	if (active_run_dir(dir, sizeof(dir)))
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

/* ---- records ---------------------------------------------------------------------------- */

struct rec_lower {
	char ident[64];
	char *path;
};

struct record {
	char uuid[ULVM_DM_UUID_LEN];
	char *table;
	struct rec_lower *lowers;
	size_t nlowers;
};

static void record_free(struct record *rec)
{
	for (size_t i = 0; i < rec->nlowers; i++)
		free(rec->lowers[i].path);
	free(rec->lowers);
	free(rec->table);
	memset(rec, 0, sizeof(*rec));
}

static bool is_majmin(const char *s)
{
	unsigned a, b;
	char end;

	return sscanf(s, "%u:%u%c", &a, &b, &end) == 2;
}

/* What a backing device is now: "" when it is gone. */
static void ident_of(const char *arg, char *out, size_t len)
{
	struct stat st;

	out[0] = '\0';
	if (is_majmin(arg)) {
		char sys[64];
		snprintf(sys, sizeof(sys), "/sys/dev/block/%s", arg);
		if (access(sys, F_OK) == 0)
			snprintf(out, len, "b %s", arg);
	} else if (stat(arg, &st) == 0) {
		/* A file's inode number is reused once it is deleted: its birth time tells a new
		 * file at the same path (where the file system records one). */
		struct statx sx;
		unsigned long long born = 0;
		if (statx(AT_FDCWD, arg, 0, STATX_BTIME, &sx) == 0 && (sx.stx_mask & STATX_BTIME))
			born = (unsigned long long)sx.stx_btime.tv_sec * 1000000000ull +
			       sx.stx_btime.tv_nsec;
		if (S_ISBLK(st.st_mode))
			snprintf(out, len, "b %u:%u", major(st.st_rdev), minor(st.st_rdev));
		else
			snprintf(out, len, "f %llx:%llu:%llu", (unsigned long long)st.st_dev,
			         (unsigned long long)st.st_ino, born);
	}
}

static int add_lower(struct record *rec, const char *ident, const char *path)
{
	struct rec_lower *nl;

	for (size_t i = 0; i < rec->nlowers; i++)
		if (!strcmp(rec->lowers[i].path, path))
			return 0;
	if (!(nl = realloc(rec->lowers, (rec->nlowers + 1) * sizeof(*nl))))
		return ulvm_error(-ENOMEM, "out of memory");
	rec->lowers = nl;
	snprintf(nl[rec->nlowers].ident, sizeof(nl->ident), "%s", ident);
	if (!(nl[rec->nlowers].path = strdup(path)))
		return ulvm_error(-ENOMEM, "out of memory");
	rec->nlowers++;
	return 0;
}

/* The backing devices a table names -- the arguments that are paths or MAJ:MIN (mapped
 * devices it stacks on are records of their own) -- as they are now. */
static int record_set_lowers(struct record *rec)
{
	char *copy = strdup(rec->table), *save = NULL;
	int r = copy ? 0 : ulvm_error(-ENOMEM, "out of memory");

	for (char *line = copy ? strtok_r(copy, "\n", &save) : NULL; line && !r;
	     line = strtok_r(NULL, "\n", &save)) {
		char *s2 = NULL;
		unsigned k = 0;
		for (char *w = strtok_r(line, " \t", &s2); w && !r; w = strtok_r(NULL, " \t", &s2))
			if (k++ >= 3 && (w[0] == '/' || is_majmin(w))) {
				char ident[64];
				ident_of(w, ident, sizeof(ident));
				r = ident[0]
				        ? add_lower(rec, ident, w)
				        : ulvm_error(-ENODEV, "device %s: %s", w, strerror(ENOENT));
			}
	}
	free(copy);
	return r;
}

static char *record_format(const struct record *rec)
{
	struct strbuf sb;

	sb_init(&sb);
	if (rec->uuid[0])
		sb_printf(&sb, "uuid %s\n", rec->uuid);
	for (size_t i = 0; i < rec->nlowers; i++)
		sb_printf(&sb, "lower %s %s\n", rec->lowers[i].ident, rec->lowers[i].path);
	sb_printf(&sb, "--\n%s", rec->table);
	return sb_steal(&sb);
}

/* Parse a record (takes `text`); text from before records had a header is all table. */
static int record_parse(char *text, struct record *rec)
{
	char *p = text, *sep;
	int r = 0;

	memset(rec, 0, sizeof(*rec));
	if (strncmp(text, "uuid ", 5) && strncmp(text, "lower ", 6) && strncmp(text, "--\n", 3)) {
		rec->table = text;
		return 0;
	}
	sep = !strncmp(text, "--\n", 3) ? text : strstr(text, "\n--\n");
	if (!sep) {
		free(text);
		return ulvm_error(-EINVAL, "active device record without its table");
	}
	if (sep != text)
		sep++;
	while (p < sep && !r) {
		char *nl = strchr(p, '\n');
		*nl = '\0';
		if (!strncmp(p, "uuid ", 5)) {
			snprintf(rec->uuid, sizeof(rec->uuid), "%s", p + 5);
		} else if (!strncmp(p, "lower ", 6)) {
			/* "lower f DEV:INO:BIRTH PATH": the path is the rest (it may hold spaces).
			 */
			char *a = p + 6, *b = strchr(a, ' '), *c = b ? strchr(b + 1, ' ') : NULL;
			if (c) {
				*c = '\0';
				r = add_lower(rec, a, c + 1);
			}
		}
		p = nl + 1;
	}
	if (!r && !(rec->table = strdup(sep + 3)))
		r = ulvm_error(-ENOMEM, "out of memory");
	free(text);
	if (r)
		record_free(rec);
	return r;
}

/* Read the record NAME<suffix>: -ENXIO when there is none. */
static int record_read(const char *name, const char *suffix, struct record *rec)
{
	char path[4200], *text;
	int r;

	memset(rec, 0, sizeof(*rec));
	if ((r = path_of(name, suffix, path, sizeof(path))))
		return r;
	if (!(text = sb_read_file(path, NULL)))
		return -ENXIO;
	return record_parse(text, rec);
}

static int record_write(const char *name, const char *suffix, const struct record *rec)
{
	char path[4200], *text;
	int r;

	if ((r = path_of(name, suffix, path, sizeof(path))))
		return r;
	if (!(text = record_format(rec)))
		return ulvm_error(-ENOMEM, "out of memory");
	r = write_atomic(path, text);
	free(text);
	return r;
}

/* Why the record is stale as far as its backing devices tell ("" when it is not). */
static void record_stale_why(const struct record *rec, char *why, size_t len)
{
	why[0] = '\0';
	for (size_t i = 0; i < rec->nlowers && !why[0]; i++) {
		char now[64];
		ident_of(rec->lowers[i].path, now, sizeof(now));
		if (!now[0])
			snprintf(why, len, "its backing device %s is gone", rec->lowers[i].path);
		else if (strcmp(now, rec->lowers[i].ident))
			snprintf(why, len, "its backing device %s was replaced",
			         rec->lowers[i].path);
	}
}

/* Warn about a stale record once: the reason is remembered next to it until the record
 * goes, or is found good again. */
static void report_stale(const char *name, const char *why)
{
	char path[4200], *last;

	if (path_of(name, ".reported", path, sizeof(path)))
		return;
	if (!(last = sb_read_file(path, NULL))) {
		ulvm_warn("Active device %s is stale (%s): it is not used; \"ulvm dmsetup remove "
		          "%s\" clears it.",
		          name, why, name);
		write_atomic(path, why);
	}
	free(last);
}

static void forget_reported(const char *name)
{
	char path[4200];

	if (!path_of(name, ".reported", path, sizeof(path)))
		unlink(path);
}

/* 0 when the record is usable; else -ESTALE (reported once). */
static int record_check(const char *name, const struct record *rec)
{
	char why[600];

	record_stale_why(rec, why, sizeof(why));
	if (!why[0]) {
		forget_reported(name);
		return 0;
	}
	report_stale(name, why);
	return ulvm_error(-ESTALE, "Device %s is stale: %s", name, why);
}

int ulvm_active_check(const char *name)
{
	struct record rec;
	int r = record_read(name, ".table", &rec);

	if (r == -ENXIO)
		return ulvm_error(-ENXIO, "Device %s not found", name);
	if (!r) {
		r = record_check(name, &rec);
		record_free(&rec);
	}
	return r;
}

int ulvm_active_uuid(const char *name, char *out, size_t len)
{
	struct record rec;
	int r = record_read(name, ".table", &rec);

	if (r == -ENXIO)
		return ulvm_error(-ENXIO, "Device %s not found", name);
	if (!r)
		snprintf(out, len, "%s", rec.uuid);
	record_free(&rec);
	return r;
}

bool ulvm_lv_active(const struct ulvm_vg *vg, const struct ulvm_lv *lv)
{
	char name[300], uuid[ULVM_DM_UUID_LEN], why[600];
	struct record rec;
	bool active = false;

	ulvm_lv_state_device(vg, lv, name, sizeof(name), uuid, sizeof(uuid));
	if (record_read(name, ".table", &rec))
		return false;
	if (strcmp(rec.uuid, uuid))
		snprintf(why, sizeof(why), "its UUID %s is not that of LV %s/%s, %s",
		         rec.uuid[0] ? rec.uuid : "(none)", vg->name, lv->name, uuid);
	else
		record_stale_why(&rec, why, sizeof(why));
	if (why[0])
		report_stale(name, why);
	else
		active = true;
	record_free(&rec);
	return active;
}

/* ---- owners ------------------------------------------------------------------------------
 * OFD locks belong to an open file description, so a process may own many devices and
 * closing one descriptor releases only its own lock; F_OFD_GETLK tests without taking. */

/* "ulvm dd": the program's name and its first word that is not an option. */
static void own_command(char *out, size_t len)
{
	char buf[512] = "";
	int fd = open("/proc/self/cmdline", O_RDONLY | O_CLOEXEC);
	ssize_t n = fd >= 0 ? read(fd, buf, sizeof(buf) - 1) : -1;
	const char *argv0 = buf, *base, *arg1;

	if (fd >= 0)
		close(fd);
	if (n <= 0) {
		snprintf(out, len, "?");
		return;
	}
	buf[n] = '\0';
	base = strrchr(argv0, '/') ? strrchr(argv0, '/') + 1 : argv0;
	arg1 = argv0 + strlen(argv0) + 1;
	if (arg1 < buf + n && *arg1 && *arg1 != '-')
		snprintf(out, len, "%.100s %.100s", base, arg1);
	else
		snprintf(out, len, "%.100s", base);
}

/* "Logical volume VG/LV" for LVs (LVM2's words), else "Device NAME". */
static void describe(const char *name, char *out, size_t len)
{
	char vg[256], lv[256], uuid[ULVM_DM_UUID_LEN] = "";
	struct record rec;

	if (!record_read(name, ".table", &rec)) {
		snprintf(uuid, sizeof(uuid), "%s", rec.uuid);
		record_free(&rec);
	} else {
		snprintf(uuid, sizeof(uuid), "LVM-"); /* no record: an LV opened in-process */
	}
	if (!strncmp(uuid, "LVM-", 4) && ulvm_dm_name_split(name, vg, sizeof(vg), lv, sizeof(lv)))
		snprintf(out, len, "Logical volume %.127s/%.127s", vg, lv);
	else
		snprintf(out, len, "Device %.127s", name);
}

static int holder_open(const char *name, bool create)
{
	char path[4200];

	if (path_of(name, ".holder", path, sizeof(path)))
		return -1;
	return open(path, O_RDWR | O_CLOEXEC | (create ? O_CREAT : 0), 0600);
}

/* Who holds the owner lock of `name` ("pid N (COMMAND)"), or false when nobody does. */
static bool owner_held(const char *name, char *who, size_t len)
{
	struct flock fl = {.l_type = F_WRLCK, .l_whence = SEEK_SET};
	int fd = holder_open(name, false);
	bool held;

	if (fd < 0)
		return false;
	held = fcntl(fd, F_OFD_GETLK, &fl) == 0 && fl.l_type != F_UNLCK;
	if (held && who) {
		char buf[300] = "";
		ssize_t n = pread(fd, buf, sizeof(buf) - 1, 0);
		long pid = 0;
		int at = 0;
		buf[n > 0 ? n : 0] = '\0';
		buf[strcspn(buf, "\n")] = '\0';
		if (sscanf(buf, "%ld %n", &pid, &at) >= 1 && at)
			snprintf(who, len, "pid %ld (%s)", pid, buf + at);
		else
			snprintf(who, len, "another process");
	}
	close(fd);
	return held;
}

bool ulvm_active_owner(const char *name, char *who, size_t len)
{
	return name_ok(name) && owner_held(name, who, len);
}

int active_owner_lock(const char *name, int *out)
{
	struct flock fl = {.l_type = F_WRLCK, .l_whence = SEEK_SET};
	char line[400], cmd[256], who[300], what[300];
	int fd = holder_open(name, true);

	*out = -1;
	if (fd < 0)
		return ulvm_error(-errno, "device %s: cannot open its owner lock: %s", name,
		                  strerror(errno));
	if (fcntl(fd, F_OFD_SETLK, &fl) < 0) {
		int e = errno;
		close(fd);
		if (e != EAGAIN && e != EACCES)
			return ulvm_error(-e, "device %s: owner lock: %s", name, strerror(e));
		if (!owner_held(name, who, sizeof(who)))
			snprintf(who, sizeof(who), "another process");
		describe(name, what, sizeof(what));
		return ulvm_error(-EBUSY, "%s is open in %s.", what, who);
	}
	own_command(cmd, sizeof(cmd));
	snprintf(line, sizeof(line), "%ld %s\n", (long)getpid(), cmd);
	if (ftruncate(fd, 0) < 0 || pwrite(fd, line, strlen(line), 0) < 0) {
		/* the lock holds regardless; only the holder's name would be missing */
	}
	*out = fd;
	return 0;
}

/* Refusal while a table stacks on the device: LVM2's words for an LV, the user named else. */
static int used_by_another(const char *what, const char *user)
{
	if (!strncmp(what, "Logical volume ", 15))
		return ulvm_error(-EBUSY, "%s is used by another device.", what);
	return ulvm_error(-EBUSY, "%s is used by device %s.", what, user);
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
	int r = active_run_dir(dir, sizeof(dir));

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

/* Is word i of a table line w[0..n-1] ("START LEN TYPE ARGS...") a lower device? Only the
 * device arguments of the targets that have them count (linear: the first; striped: every
 * other one from the third; mirror: its legs), not any word that happens to be equal. */
static bool dev_arg(char *const *w, unsigned n, unsigned i)
{
	const char *type = n >= 3 ? w[2] : "";

	if (n < 4 || i < 3)
		return false;
	if (!strcmp(type, "linear") || !strcmp(type, "snapshot-origin"))
		return i == 3;
	if (!strcmp(type, "snapshot") || !strcmp(type, "snapshot-merge") ||
	    !strcmp(type, "thin-pool")) /* origin, cow; metadata, data */
		return n >= 5 && i <= 4;
	if (!strcmp(type, "striped"))
		return n >= 5 && i >= 5 && (i - 5) % 2 == 0;
	if (!strcmp(type, "thin")) /* pool [external origin] */
		return i == 3 || (n >= 6 && i == 5);
	if (!strcmp(type, "mirror")) { /* log, #log args, args, #legs, then dev offset pairs */
		unsigned long nlog, legs, first;
		if (n < 6 || (nlog = strtoul(w[4], NULL, 10)) > n || 5 + nlog >= n)
			return false;
		first = 6 + nlog;
		legs = strtoul(w[5 + nlog], NULL, 10);
		return i >= first && i < first + 2 * legs && (i - first) % 2 == 0;
	}
	return false;
}

/* Does `table` name device `dev` as a lower device? With `out`, the table is also written
 * there with that device named `to` instead (one space between words, as a record's table
 * is written), as a rename of the lower device changes what the tables above it print. */
static bool table_uses_as(const char *table, const char *dev, const char *to, struct strbuf *out)
{
	char *copy = strdup(table), *save = NULL;
	bool used = false;

	if (!copy) {
		if (out)
			out->oom = true;
		return false;
	}
	for (char *line = strtok_r(copy, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		char **w, *s2 = NULL;
		unsigned n = 0, cap = 1;
		for (const char *p = line; *p; p++)
			cap += *p == ' ' || *p == '\t';
		if (!(w = calloc(cap, sizeof(*w)))) {
			used = false;
			if (out)
				out->oom = true;
			break;
		}
		for (char *t = strtok_r(line, " \t", &s2); t && n < cap;
		     t = strtok_r(NULL, " \t", &s2))
			w[n++] = t;
		for (unsigned i = 0; i < n; i++) {
			bool hit = dev_arg(w, n, i) && !strcmp(w[i], dev);
			used |= hit;
			if (out)
				sb_printf(out, "%s%s", i ? " " : "", hit ? to : w[i]);
		}
		if (out && n)
			sb_putc(out, '\n');
		free(w);
		if (used && !out)
			break;
	}
	free(copy);
	return used;
}

static bool table_uses(const char *table, const char *dev)
{
	return table_uses_as(table, dev, NULL, NULL);
}

/* How many other devices' tables (live or loaded) stack on `name`; the first in *user. */
static unsigned stacked_on(const char *name, char *user, size_t len)
{
	const char **names;
	unsigned count = 0;
	size_t n;

	if (ulvm_active_list(&names, &n))
		return 0;
	for (size_t i = 0; i < n; i++) {
		struct record rec;
		bool uses = false;
		if (!strcmp(names[i], name))
			continue;
		for (int k = 0; k < 2 && !uses; k++)
			if (!record_read(names[i], k ? ".inactive" : ".table", &rec)) {
				uses = table_uses(rec.table, name);
				record_free(&rec);
			}
		if (uses && !count++ && user)
			snprintf(user, len, "%s", names[i]);
	}
	ulvm_active_list_free(names, n);
	return count;
}

/* Build a device from `table` in ctx, first the active devices it stacks on (owned when
 * `own`); a scratch build for a check owns nothing. */
static int build(struct ulvm_ctx *ctx, const char *name, const char *table, bool own,
                 struct ulvm_dev **out);

static int build_snapshots(struct ulvm_ctx *ctx, const char *name, const char *table);

static int open_record(struct ulvm_ctx *ctx, const char *name, bool own, struct ulvm_dev **out)
{
	struct record rec;
	bool suspended = false;
	int r;

	*out = NULL;
	if ((r = record_read(name, ".table", &rec)))
		return r == -ENXIO ? ulvm_error(-ENXIO, "Device %s not found", name) : r;
	ulvm_active_info(name, NULL, NULL, &suspended);
	if (suspended)
		r = ulvm_error(-EAGAIN, "Device %s is suspended", name);
	else if (!(r = record_check(name, &rec)))
		r = build(ctx, name, rec.table, own, out);
	record_free(&rec);
	return r;
}

/* The device an origin's table stacks on ("snapshot-origin X" or "snapshot-merge X ..."),
 * into out; false for other tables. */
static bool origin_lower(const char *table, char *out, size_t len)
{
	char type[32], dev[256];

	if (sscanf(table, "%*u %*u %31s %255s", type, dev) != 2 ||
	    (strcmp(type, "snapshot-origin") && strcmp(type, "snapshot-merge")))
		return false;
	snprintf(out, len, "%s", dev);
	return true;
}

/* An origin built in a process for I/O brings every active snapshot of it into the same
 * process, as the kernel's origin finds its snapshots: its writes copy into them. The
 * snapshots are owned with it (one owner). */
static int build_snapshots(struct ulvm_ctx *ctx, const char *name, const char *table)
{
	char real[256];
	const char **names;
	size_t n;
	int r = 0;

	if (!origin_lower(table, real, sizeof(real)) || ulvm_active_list(&names, &n))
		return 0;
	for (size_t i = 0; i < n && !r; i++) {
		struct record rec;
		struct ulvm_dev *snap;
		char type[32], o[256];
		if (!strcmp(names[i], name) || ulvm_dev_find(ctx, names[i]) ||
		    record_read(names[i], ".table", &rec))
			continue;
		if (sscanf(rec.table, "%*u %*u %31s %255s", type, o) == 2 &&
		    !strcmp(type, "snapshot") && !strcmp(o, real))
			r = open_record(ctx, names[i], true, &snap);
		record_free(&rec);
	}
	ulvm_active_list_free(names, n);
	return r;
}

static int build(struct ulvm_ctx *ctx, const char *name, const char *table, bool own,
                 struct ulvm_dev **out)
{
	const char **names;
	size_t n;
	int r = 0;

	*out = NULL;
	if (!ulvm_active_list(&names, &n)) {
		for (size_t i = 0; i < n && !r; i++) {
			struct ulvm_dev *lower;
			if (strcmp(names[i], name) && !ulvm_dev_find(ctx, names[i]) &&
			    table_uses(table, names[i]))
				r = open_record(ctx, names[i], own, &lower);
		}
		ulvm_active_list_free(names, n);
	}
	/* An origin's snapshots come before it: a merge it starts must find them in place. */
	if (r || (own && (r = build_snapshots(ctx, name, table))) ||
	    (r = ulvm_dev_open_table(ctx, name, table, out)))
		return r;
	if (own && (r = ulvm_dev_own(*out))) {
		ulvm_dev_close(*out);
		*out = NULL;
	}
	return r;
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
	if (!(r = build(scratch, name, table, false, &dev))) {
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

/* The control request "create" carries the UUID as a first line "uuid U". */
int ulvm_active_create_uuid(struct ulvm_ctx *ctx, const char *name, const char *uuid,
                            const char *table)
{
	struct record rec = {0};
	struct strbuf payload;
	char path[4200];
	int r, fd;

	(void)ctx;
	if ((r = path_of(name, ".table", path, sizeof(path))))
		return r;
	if (uuid && (!*uuid || strlen(uuid) >= sizeof(rec.uuid) || strpbrk(uuid, " \t\n")))
		return ulvm_error(-EINVAL, "invalid UUID \"%s\"", uuid);
	sb_init(&payload);
	if (uuid)
		sb_printf(&payload, "uuid %s\n", uuid);
	sb_puts(&payload, table);
	r = payload.oom ? -ENOMEM : forward("create", name, payload.buf);
	sb_free(&payload);
	if (r != -ENOTCONN)
		return r;
	r = 0;
	fd = state_lock();
	if (access(path, F_OK) == 0) {
		r = ulvm_error(-EEXIST, "Device %s already exists.", name);
		goto out;
	}
	if (uuid) {
		const char **names;
		size_t n;
		snprintf(rec.uuid, sizeof(rec.uuid), "%s", uuid);
		if (!(r = ulvm_active_list(&names, &n))) {
			for (size_t i = 0; i < n && !r; i++) {
				char other[ULVM_DM_UUID_LEN] = "";
				ulvm_active_uuid(names[i], other, sizeof(other));
				if (!strcmp(other, uuid))
					r = ulvm_error(-EBUSY, "Device %s: UUID %s is taken by %s",
					               name, uuid, names[i]);
			}
			ulvm_active_list_free(names, n);
		}
	}
	if (r || (r = normalize_table(name, table, &rec.table)) || (r = record_set_lowers(&rec)))
		goto out;
	if (hooks && (r = hooks->create(hooks->arg, name, rec.table)))
		goto out;
	forget_reported(name);
	if ((r = record_write(name, ".table", &rec)) && hooks)
		hooks->remove(hooks->arg, name);
out:
	record_free(&rec);
	state_unlock(fd);
	return r;
}

int ulvm_active_create(struct ulvm_ctx *ctx, const char *name, const char *table)
{
	return ulvm_active_create_uuid(ctx, name, NULL, table);
}

int ulvm_active_open_count(const char *name, unsigned *count)
{
	char *reply = NULL;
	unsigned n = 0;
	int r;

	*count = 0;
	if (!name_ok(name))
		return ulvm_error(-EINVAL, "invalid device name \"%s\"", name);
	if ((r = ulvm_control_call("opencount", name, NULL, &reply)) != -ENOTCONN) {
		if (!r)
			*count = (unsigned)strtoul(reply, NULL, 10);
		free(reply);
		return r;
	}
	/* Inside the daemon: its own count of a device it holds; else (or without a daemon) a
	 * process that owns it counts one. */
	if (!hooks || !hooks->open_count ||
	    (r = hooks->open_count(hooks->arg, name, &n)) == -ENODEV)
		n = owner_held(name, NULL, 0);
	else if (r)
		return r;
	*count = n + stacked_on(name, NULL, 0);
	return 0;
}

int ulvm_active_busy(const char *name)
{
	char what[300], user[256];
	unsigned n;
	int r;

	if ((r = ulvm_active_open_count(name, &n)) || !n)
		return r;
	describe(name, what, sizeof(what));
	if (stacked_on(name, user, sizeof(user)))
		return used_by_another(what, user);
	return ulvm_error(-EBUSY, "%s in use.", what);
}

int ulvm_active_remove(struct ulvm_ctx *ctx, const char *name)
{
	static const char *const suffixes[] = {".table", ".inactive", ".suspended", ".reported"};
	char path[4200], what[300], user[256];
	int r, fd, owner = -1;

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
	describe(name, what, sizeof(what));
	/* Refuse while another device's table stacks on this one, or anyone has it open: the
	 * daemon knows its own users; any other owner holds the owner lock (taken here, so
	 * that nobody opens the device while it goes). */
	if (stacked_on(name, user, sizeof(user)))
		r = used_by_another(what, user);
	else if (hooks && (r = hooks->remove(hooks->arg, name)) != -ENODEV)
		r = r == -EBUSY ? ulvm_error(-EBUSY, "%s in use.", what) : r;
	else if ((r = active_owner_lock(name, &owner)) == -EBUSY)
		r = ulvm_error(-EBUSY, "%s in use.", what);
	if (!r) {
		for (size_t i = 0; i < ARRAY_SIZE(suffixes); i++)
			if (!path_of(name, suffixes[i], path, sizeof(path)))
				unlink(path);
	}
	if (owner >= 0)
		close(owner);
	state_unlock(fd);
	return r;
}

/* The files of device `from` renamed to `to`'s, the live record last (until then the device
 * is found under its old name only); the first `n` of them, back again when undoing. */
static const char *const rename_suffixes[] = {".holder", ".suspended", ".inactive", ".table"};

static int rename_files(const char *from, const char *to, size_t n, size_t *done)
{
	char a[4200], b[4200];

	for (*done = 0; *done < n; (*done)++) {
		if (path_of(from, rename_suffixes[*done], a, sizeof(a)) ||
		    path_of(to, rename_suffixes[*done], b, sizeof(b)))
			return -EINVAL;
		if (rename(a, b) < 0 && errno != ENOENT)
			return ulvm_error(-errno, "%s: cannot rename to %s: %s", a, b,
			                  strerror(errno));
	}
	return 0;
}

/* The records (live and loaded) of the devices whose tables stack on `from`, rewritten to
 * name it `to`: a renamed lower device stays under the tables above it, as in the kernel
 * (whose tables name it by its number). On an error, those rewritten get their text back. */
struct retarget {
	char name[256];
	const char *suffix;
	struct record old;
};

static int retarget_users(const char *from, const char *to, struct retarget **out, size_t *nout)
{
	static const char *const suffixes[] = {".table", ".inactive"};
	struct retarget *v = NULL;
	const char **names;
	size_t n, nv = 0;
	int r;

	*out = NULL;
	*nout = 0;
	if ((r = ulvm_active_list(&names, &n)))
		return r;
	for (size_t i = 0; i < n && !r; i++)
		for (size_t k = 0; k < ARRAY_SIZE(suffixes) && !r; k++) {
			struct record rec, now;
			struct strbuf sb;
			struct retarget *nvv;
			if (!strcmp(names[i], from) || record_read(names[i], suffixes[k], &rec))
				continue;
			sb_init(&sb);
			if (!table_uses_as(rec.table, from, to, &sb) && !sb.oom) {
				sb_free(&sb);
				record_free(&rec);
				continue;
			}
			now = rec;
			if (sb.oom || !(nvv = realloc(v, (nv + 1) * sizeof(*v)))) {
				sb_free(&sb);
				record_free(&rec);
				r = ulvm_error(-ENOMEM, "out of memory");
				break;
			}
			v = nvv;
			snprintf(v[nv].name, sizeof(v[nv].name), "%s", names[i]);
			v[nv].suffix = suffixes[k];
			v[nv].old = rec;
			now.table = sb_steal(&sb);
			r = now.table ? record_write(names[i], suffixes[k], &now)
			              : ulvm_error(-ENOMEM, "out of memory");
			free(now.table);
			nv++;
		}
	ulvm_active_list_free(names, n);
	if (r) /* back as it was */
		for (size_t i = nv; i-- > 0;)
			record_write(v[i].name, v[i].suffix, &v[i].old);
	*out = v;
	*nout = nv;
	return r;
}

static void retarget_free(struct retarget *v, size_t n, bool undo)
{
	for (size_t i = n; i-- > 0;) {
		if (undo)
			record_write(v[i].name, v[i].suffix, &v[i].old);
		record_free(&v[i].old);
	}
	free(v);
}

int ulvm_active_rename(struct ulvm_ctx *ctx, const char *name, const char *new_name)
{
	char from[4200], to[4200];
	struct retarget *users = NULL;
	size_t done = 0, undone, nusers = 0;
	bool held = false;
	int r, fd;

	if ((r = path_of(name, ".table", from, sizeof(from))) ||
	    (r = path_of(new_name, ".table", to, sizeof(to))))
		return r;
	if ((r = forward("rename", name, new_name)) != -ENOTCONN)
		return r;
	r = 0;
	fd = state_lock();
	/* the kernel's order of checks: the new name first */
	if (access(to, F_OK) == 0) {
		r = ulvm_error(-EEXIST, "Device %s already exists.", new_name);
	} else if (access(from, F_OK) < 0) {
		r = ulvm_error(-ENXIO, "Device %s not found", name);
	} else if (hooks && hooks->rename) {
		/* the daemon's device, and the tables stacked on it there */
		r = hooks->rename(hooks->arg, name, new_name);
		held = !r;
		r = r == -ENODEV ? 0 : r;
	}
	if (!r && !(r = rename_files(name, new_name, ARRAY_SIZE(rename_suffixes), &done)))
		r = retarget_users(name, new_name, &users, &nusers);
	if (r) {
		/* as it was: the files moved so far, and the daemon's device */
		rename_files(new_name, name, done, &undone);
		if (held)
			hooks->rename(hooks->arg, new_name, name);
	}
	retarget_free(users, nusers, false);
	if (!r) {
		/* this process's own copy of the device (it owns it) follows too */
		struct ulvm_dev *mine = ctx && !held ? ulvm_dev_find(ctx, name) : NULL;
		if (mine)
			ulvm_dev_rename(mine, new_name);
		forget_reported(name);
	}
	state_unlock(fd);
	return r;
}

/* The UUID of a device that has none, as `dmsetup rename --setuuid` (the kernel refuses to
 * change one that is set: -EINVAL; one that another device has: -EBUSY). */
int ulvm_active_set_uuid(struct ulvm_ctx *ctx, const char *name, const char *uuid)
{
	struct record rec;
	const char **names;
	size_t n;
	int r, fd;

	(void)ctx;
	if (!name_ok(name))
		return ulvm_error(-EINVAL, "invalid device name \"%s\"", name);
	if (!*uuid || strlen(uuid) >= sizeof(rec.uuid) || strpbrk(uuid, " \t\n"))
		return ulvm_error(-EINVAL, "invalid UUID \"%s\"", uuid);
	if ((r = forward("setuuid", name, uuid)) != -ENOTCONN)
		return r;
	fd = state_lock();
	/* the kernel's order of checks: the UUID taken, the device missing, a UUID set */
	if ((r = ulvm_active_list(&names, &n)))
		goto out;
	for (size_t i = 0; i < n && !r; i++) {
		char other[ULVM_DM_UUID_LEN] = "";
		ulvm_active_uuid(names[i], other, sizeof(other));
		if (!strcmp(other, uuid))
			r = ulvm_error(-EBUSY, "Device %s: UUID %s is taken by %s", name, uuid,
			               names[i]);
	}
	ulvm_active_list_free(names, n);
	if (r)
		goto out;
	if ((r = record_read(name, ".table", &rec))) {
		r = r == -ENXIO ? ulvm_error(-ENXIO, "Device %s not found", name) : r;
		goto out;
	}
	if (rec.uuid[0])
		r = ulvm_error(-EINVAL, "Device %s already has UUID %s", name, rec.uuid);
	if (!r) {
		snprintf(rec.uuid, sizeof(rec.uuid), "%s", uuid);
		r = record_write(name, ".table", &rec);
	}
	record_free(&rec);
out:
	state_unlock(fd);
	return r;
}

int ulvm_active_load(struct ulvm_ctx *ctx, const char *name, const char *table)
{
	struct record live, rec = {0};
	int r, fd;

	(void)ctx;
	if ((r = forward("load", name, table)) != -ENOTCONN)
		return r;
	fd = state_lock();
	if ((r = record_read(name, ".table", &live))) {
		r = r == -ENXIO ? ulvm_error(-ENXIO, "Device %s not found", name) : r;
		goto out;
	}
	/* The loaded table keeps the device's UUID; its backing devices are its own. */
	snprintf(rec.uuid, sizeof(rec.uuid), "%s", live.uuid);
	record_free(&live);
	if (!(r = normalize_table(name, table, &rec.table)) && !(r = record_set_lowers(&rec)) &&
	    !(r = hooks ? hooks->load(hooks->arg, name, rec.table) : 0))
		r = record_write(name, ".inactive", &rec);
out:
	record_free(&rec);
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
	struct record rec;
	char path[4200];
	int r;

	if ((r = path_of(name, ".table", path, sizeof(path))))
		return r;
	if (table) {
		*table = NULL;
		if ((r = record_read(name, ".table", &rec)))
			return r == -ENXIO ? ulvm_error(-ENXIO, "Device %s not found", name) : r;
		*table = rec.table;
		rec.table = NULL;
		record_free(&rec);
	}
	if (inactive) {
		*inactive = NULL;
		if (!record_read(name, ".inactive", &rec)) {
			*inactive = rec.table;
			rec.table = NULL;
			record_free(&rec);
		}
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
	if ((r = active_run_dir(dir, sizeof(dir))))
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

int ulvm_active_open_table(struct ulvm_ctx *ctx, const char *name, const char *table,
                           struct ulvm_dev **out)
{
	struct record rec;
	int r = 0;

	*out = NULL;
	/* The live record's own table is built only while the record is good. */
	if (!record_read(name, ".table", &rec)) {
		if (!strcmp(rec.table, table))
			r = record_check(name, &rec);
		record_free(&rec);
	}
	return r ? r : build(ctx, name, table, false, out);
}

int ulvm_active_open(struct ulvm_ctx *ctx, const char *name, struct ulvm_dev **out)
{
	return open_record(ctx, name, true, out);
}

int ulvm_active_message(struct ulvm_ctx *ctx, const char *name, uint64_t sector, const char *msg,
                        char **reply)
{
	struct ulvm_dev *dev;
	char *payload;
	int r;

	if (reply)
		*reply = NULL;
	if (asprintf(&payload, "%llu %s", (unsigned long long)sector, msg) < 0)
		return ulvm_error(-ENOMEM, "out of memory");
	r = ulvm_control_call("message", name, payload, reply);
	free(payload);
	if (r != -ENOTCONN)
		return r;
	/* No daemon: the device built (and owned) here takes it; closing it commits. */
	if ((r = ulvm_active_open(ctx, name, &dev)))
		return r;
	r = ulvm_dev_message(dev, sector, msg, reply);
	ulvm_dev_close(dev);
	return r;
}

int ulvm_active_status(const char *name, char **status)
{
	struct ulvm_ctx_opts o = {.no_locking = true, .silent_scan = true};
	struct ulvm_ctx *scratch;
	struct ulvm_dev *dev;
	char *table = NULL;
	int r;

	*status = NULL;
	if ((r = ulvm_control_call("status", name, NULL, status)) != -ENOTCONN)
		return r;
	if ((r = ulvm_active_info(name, &table, NULL, NULL)))
		return r;
	if (!(r = ulvm_ctx_new(&o, &scratch))) {
		if (!(r = ulvm_active_open_table(scratch, name, table, &dev))) {
			r = ulvm_dev_table(dev, true, status);
			ulvm_dev_close(dev);
		}
		ulvm_ctx_free(scratch);
	}
	free(table);
	return r;
}
