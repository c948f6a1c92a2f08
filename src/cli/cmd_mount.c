/*
 * `ulvm mount DIR [-f] [-o OPT[,OPT...]] [VG...]`: the active LVs as files DIR/VG/LV, served
 * by ulvmd (export/fuse_export.h says what the files are and do). The command asks a
 * running ulvmd to mount DIR (the control verb "mount"); with none running it starts one
 * for the mount, which ends by itself once it has no mount and no NBD connection left.
 *
 * Without -f the command returns once DIR is mounted. With -f it stays until DIR is
 * unmounted (fusermount3 -u DIR, umount DIR), and SIGTERM, SIGINT or SIGHUP unmount it;
 * it exits 0 either way. When -f had to start ulvmd, this process is that ulvmd.
 *
 * Options: -o ro (reads only; the files are 0400), -o allow_other (others may list the
 * directories; the volumes stay 0600), -o cache (buffered I/O through the kernel's page cache,
 * kept coherent with the other exports; fuse_export.h), any other -o option goes to libfuse
 * and the kernel.
 * VG arguments show only those VGs, each with its directory.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <syslog.h>
#include <time.h>
#include <unistd.h>

#include "../daemon/control.h"
#include "../util/util.h"
#include "cli.h"

#ifndef HAVE_FUSE3

int cmd_mount(struct cli *c, int argc, char **argv)
{
	(void)c;
	(void)argc;
	(void)argv;
	fprintf(stderr, "  ulvm mount: this ulvm was built without FUSE support (libfuse3 was not "
	                "found at build time; install libfuse3-dev and rebuild).\n");
	return ECMD_FAILED;
}

#else

static int mount_usage(void)
{
	fprintf(stderr,
	        "  Usage: ulvm mount DIR [--foreground|-f] [-o allow_other|ro|cache|OPT,...] "
	        "[VG...]\n");
	return EINVALID_CMD_LINE;
}

static volatile sig_atomic_t got_signal;

static void on_signal(int sig)
{
	(void)sig;
	got_signal = 1;
}

/* Whether the daemon still serves `dir`; false also when the daemon is gone. */
static bool still_mounted(const char *dir)
{
	char *list = NULL;
	bool found = false;

	if (ulvm_control_call("mounts", NULL, NULL, &list))
		return false;
	for (char *p = list; p && *p;) {
		char *nl = strchr(p, '\n');
		size_t n = nl ? (size_t)(nl - p) : strlen(p);
		if (n == strlen(dir) && !strncmp(p, dir, n))
			found = true;
		p = nl ? nl + 1 : p + n;
	}
	free(list);
	return found;
}

/* -f with a ulvmd already running: stay until DIR is unmounted, or unmount it on a signal. */
static int wait_unmounted(const char *dir)
{
	struct sigaction sa = {.sa_handler = on_signal};

	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGHUP, &sa, NULL);
	while (!got_signal && still_mounted(dir)) {
		struct timespec ts = {0, 100 * 1000 * 1000};
		nanosleep(&ts, NULL);
	}
	if (got_signal) {
		int r = ulvm_control_call("umount", NULL, dir, NULL);
		if (r && r != -EINVAL)
			return cli_fail(r);
	}
	return ECMD_PROCESSED;
}

/* The background daemon's messages, once it has let go of the terminal. */
static void log_syslog(enum ulvm_log_level level, const char *msg, void *arg)
{
	(void)arg;
	syslog(level == ULVM_LOG_ERROR  ? LOG_ERR
	       : level == ULVM_LOG_WARN ? LOG_WARNING
	                                : LOG_INFO,
	       "%s", msg);
}

struct ready_pipe {
	int fd;
};

/* Called by ulvmd_run once it listens and DIR is mounted: tell the parent, detach. */
static void detach_ready(void *arg)
{
	struct ready_pipe *p = arg;
	int null = open("/dev/null", O_RDWR);

	openlog("ulvmd", LOG_PID, LOG_DAEMON);
	ulvm_set_log(log_syslog, NULL, ULVM_LOG_WARN);
	if (chdir("/") < 0) {
		/* stay where we are: nothing depends on the directory */
	}
	if (null >= 0) {
		dup2(null, 0);
		dup2(null, 1);
		dup2(null, 2);
		if (null > 2)
			close(null);
	}
	if (write(p->fd, "R", 1) != 1) {
		/* the parent is gone: nobody to tell */
	}
	close(p->fd);
	p->fd = -1;
}

/* No ulvmd runs: start one that mounts DIR (in this process with -f). */
static int start_daemon(struct cli *c, const char *payload, bool foreground)
{
	struct ulvmd_opts o = {.mount_request = payload, .exit_when_idle = true};
	struct ready_pipe rp = {-1};
	int p[2], r, st;
	pid_t pid;
	char byte;

	if (foreground) {
		if ((r = cli_open_ctx(c)) || (r = ulvmd_run(c->ctx, &o, NULL, NULL)))
			return cli_fail(r);
		return ECMD_PROCESSED;
	}
	/* Fork before anything is opened: the daemon's context, rings and devices are its own.
	 * The parent returns when the mount is up (or the daemon failed, having said why). */
	fflush(stdout);
	fflush(stderr);
	if (pipe2(p, O_CLOEXEC) < 0 || (pid = fork()) < 0)
		return cli_fail(ulvm_error(-errno, "cannot start ulvmd: %s", strerror(errno)));
	if (pid > 0) {
		ssize_t n;
		close(p[1]);
		do
			n = read(p[0], &byte, 1);
		while (n < 0 && errno == EINTR);
		close(p[0]);
		if (n == 1)
			return ECMD_PROCESSED;
		if (waitpid(pid, &st, 0) < 0 || !WIFEXITED(st) || !WEXITSTATUS(st))
			return ECMD_FAILED;
		return WEXITSTATUS(st);
	}
	close(p[0]);
	rp.fd = p[1];
	setsid();
	if ((r = cli_open_ctx(c)) || (r = ulvmd_run(c->ctx, &o, detach_ready, &rp)))
		return rp.fd >= 0 ? cli_fail(r) : ECMD_FAILED;
	return ECMD_PROCESSED;
}

int cmd_mount(struct cli *c, int argc, char **argv)
{
	static const struct option lo[] = {COMMON_LONGOPTS,
	                                   {"foreground", no_argument, NULL, 9100},
	                                   {"options", required_argument, NULL, 'o'},
	                                   {0}};
	char dir[PATH_MAX], *reply = NULL;
	struct strbuf opts, payload;
	bool foreground = false;
	struct stat st;
	int opt, r, rc;

	sb_init(&opts);
	sb_init(&payload);
	while ((opt = getopt_long(argc, argv, COMMON_SHORTOPTS "o:", lo, NULL)) != -1) {
		if (opt == 'f' || opt == 9100) /* -f is --foreground here, as for FUSE servers */
			foreground = true;
		else if (opt == 'o')
			sb_printf(&opts, "%s%s", opts.len ? "," : "", optarg);
		else if (cli_common_opt(c, opt, optarg) != 1) {
			sb_free(&opts);
			return mount_usage();
		}
	}
	if (optind >= argc || opts.oom) {
		sb_free(&opts);
		return mount_usage();
	}
	errno = 0;
	if (!realpath(argv[optind], dir) || stat(dir, &st) || !S_ISDIR(st.st_mode)) {
		fprintf(stderr, "  %s: %s\n", argv[optind],
		        errno ? strerror(errno) : "not a directory");
		sb_free(&opts);
		return ECMD_FAILED;
	}
	sb_printf(&payload, "dir=%s\nuid=%u\ngid=%u\n", dir, (unsigned)getuid(),
	          (unsigned)getgid());
	if (opts.len)
		sb_printf(&payload, "opts=%s\n", opts.buf);
	for (int i = optind + 1; i < argc; i++)
		sb_printf(&payload, "vg=%s\n", argv[i]);
	sb_free(&opts);
	if (payload.oom) {
		sb_free(&payload);
		return cli_fail(ulvm_error(-ENOMEM, "out of memory"));
	}
	r = ulvm_control_call("mount", NULL, payload.buf, &reply);
	if (r == -ENOTCONN) {
		rc = start_daemon(c, payload.buf, foreground);
	} else if (r) {
		rc = cli_fail(r);
	} else {
		if (reply && *reply)
			fputs(reply, stderr); /* warnings */
		rc = foreground ? wait_unmounted(dir) : ECMD_PROCESSED;
	}
	free(reply);
	sb_free(&payload);
	return rc;
}

#endif /* HAVE_FUSE3 */
