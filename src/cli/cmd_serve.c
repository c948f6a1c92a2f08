/* `ulvm serve` (also `ulvmd`): run the daemon -- the active devices, their NBD exports and
 * the control socket the other commands talk to. */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "../daemon/control.h"
#include "../util/util.h"
#include "cli.h"

struct serve_ready {
	int fd; /* the pipe to the parent that waits, or -1 (--foreground) */
	int tcp_port;
};

static void signal_ready(void *arg)
{
	struct serve_ready *sr = arg;

	/* Where NBD over TCP listens, so that a client need not guess a free port first:
	 * with PORT 0 the kernel picked it. Printed before the parent returns. */
	if (sr->tcp_port > 0) {
		printf("NBD over TCP on port %d\n", sr->tcp_port);
		fflush(stdout);
	}
	if (sr->fd >= 0) {
		/* Tell the parent the sockets are listening, then let go of the terminal. */
		(void)!write(sr->fd, "R", 1);
		close(sr->fd);
		sr->fd = -1;
	}
}

/* `ulvm serve --stop`: ask the running ulvmd to shut down (its devices are flushed, its
 * mounts and sockets go) and wait until it has. */
static int stop_daemon(void)
{
	char path[4096];
	int r = ulvm_control_call("shutdown", NULL, NULL, NULL);

	if (r == -ENOTCONN)
		return cli_fail(ulvm_error(-ENOTCONN, "ulvmd is not running"));
	if (r || (r = ulvm_control_socket_path(path, sizeof(path))))
		return cli_fail(r);
	for (int i = 0; i < 200 && access(path, F_OK) == 0; i++)
		usleep(50000);
	if (access(path, F_OK) == 0)
		return cli_fail(ulvm_error(-ETIMEDOUT, "ulvmd did not stop within 10 s"));
	return ECMD_PROCESSED;
}

int cmd_serve(struct cli *c, int argc, char **argv)
{
	static const struct option lo[] = {COMMON_LONGOPTS,
	                                   {"foreground", no_argument, NULL, 'F'},
	                                   {"socket", required_argument, NULL, 'S'},
	                                   {"nbd-unix", required_argument, NULL, 'U'},
	                                   {"nbd-tcp", required_argument, NULL, 'T'},
	                                   {"no-nbd", no_argument, NULL, 'N'},
	                                   {"stop", no_argument, NULL, 'X'},
	                                   {"monitor-interval", required_argument, NULL, 'M'},
	                                   {"ignoremonitoring", no_argument, NULL, 'I'},
	                                   {0}};
	struct ulvmd_opts o = {0};
	struct monitor_opts mo = {.interval_ns = 10000000000ull}; /* dmeventd's 10 s */
	char exe[4096];
	bool ignore_monitoring = false;
	ssize_t n;
	unsigned long secs;
	char *end;
	bool foreground = false;
	int opt, r, pipefd[2] = {-1, -1};
	struct serve_ready sr = {.fd = -1};

	while ((opt = getopt_long(argc, argv, COMMON_SHORTOPTS, lo, NULL)) != -1) {
		if (cli_common_opt(c, opt, optarg) == 1)
			continue;
		switch (opt) {
		case 'F':
			foreground = true;
			break;
		case 'S':
			o.control_path = optarg;
			break;
		case 'U':
			o.nbd_unix = optarg;
			break;
		case 'T':
			o.nbd_tcp = optarg;
			break;
		case 'N':
			o.no_nbd = true;
			break;
		case 'X':
			return stop_daemon();
		case 'M': /* seconds between two checks of the thin pools */
			secs = strtoul(optarg, &end, 10);
			if (!*optarg || *end || !secs || secs > 86400)
				return cli_fail(ulvm_error(-EINVAL,
				                           "--monitor-interval takes seconds (1 to "
				                           "86400), not %s",
				                           optarg));
			mo.interval_ns = secs * 1000000000ull;
			break;
		case 'I':
			ignore_monitoring = true;
			break;
		default:
			return EINVALID_CMD_LINE;
		}
	}
	if (!foreground) {
		pid_t pid;
		char byte;

		if (pipe(pipefd) < 0 || (pid = fork()) < 0)
			return cli_fail(
			    ulvm_error(-errno, "cannot start ulvmd: %s", strerror(errno)));
		if (pid > 0) {
			/* The parent returns once the daemon listens (or failed). */
			close(pipefd[1]);
			if (read(pipefd[0], &byte, 1) == 1)
				return ECMD_PROCESSED;
			waitpid(pid, &r, 0);
			return WIFEXITED(r) && WEXITSTATUS(r) ? WEXITSTATUS(r) : ECMD_FAILED;
		}
		close(pipefd[0]);
		sr.fd = pipefd[1];
		setsid();
	}
	if ((r = cli_open_ctx(c)))
		return cli_fail(r);
	/* dmeventd's thin plugin, in the daemon: lvm.conf's settings as they are now. */
	mo.enabled = !ignore_monitoring && cli_thin_monitoring();
	cli_thin_policy(&mo.threshold, &(int){0});
	if ((n = readlink("/proc/self/exe", exe, sizeof(exe) - 1)) > 0) {
		exe[n] = '\0';
		mo.command = exe;
	} else {
		mo.enabled = false;
	}
	mo.devices = c->devices;
	o.monitor = &mo;
	o.nbd_tcp_port = &sr.tcp_port;
	r = ulvmd_run(c->ctx, &o, signal_ready, &sr);
	if (sr.fd >= 0)
		close(sr.fd);
	return r ? cli_fail(r) : ECMD_PROCESSED;
}
