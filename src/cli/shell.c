/*
 * The lvm shell, as LVM2's `lvm` runs it: one command a line (`lvm> ` prompt on a terminal),
 * words split at blanks, a word that starts with a quote running to the matching quote, a
 * line starting with `#` a comment, a leading "lvm" word ignored; `help [CMD]`, `version`,
 * `exit` and `quit`. A command's exit status is not the shell's: as in LVM2 a failed command
 * that said nothing gets "Command failed with status code N.", and the shell exits 0.
 * `ulvm lvm CMD ...` runs one command as `lvm CMD ...` does.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"

#define SHELL_MAX_ARGS 64 /* LVM2's limit of words on a line */

/* Bytes written to stderr through stdio: whether a failed command said why. */
static size_t stderr_bytes;
static FILE *real_stderr;

static ssize_t counting_write(void *cookie, const char *buf, size_t len)
{
	(void)cookie;
	stderr_bytes += len;
	return (ssize_t)fwrite(buf, 1, len, real_stderr);
}

static void count_stderr(void)
{
	cookie_io_functions_t io = {.write = counting_write};
	FILE *f;

	if (real_stderr)
		return;
	real_stderr = stderr;
	if ((f = fopencookie(NULL, "w", io))) {
		setvbuf(f, NULL, _IONBF, 0); /* in order with what goes straight to fd 2 */
		stderr = f;
	} else {
		real_stderr = NULL;
	}
}

/* Split `line` in place into at most `max` words; the count, or -1 for too many. */
static int split_words(char *line, char **argv, int max)
{
	int n = 0;
	char *p = line;

	for (;;) {
		while (*p == ' ' || *p == '\t' || *p == '\n' || *p == '\r')
			p++;
		if (!*p)
			return n;
		if (n == max)
			return -1;
		if (*p == '"' || *p == '\'') {
			char q = *p++;
			argv[n++] = p;
			while (*p && *p != q)
				p++;
		} else {
			argv[n++] = p;
			while (*p && *p != ' ' && *p != '\t' && *p != '\n' && *p != '\r')
				p++;
		}
		if (*p)
			*p++ = '\0';
	}
}

/* One command of the shell (or of `ulvm lvm CMD ...`): its exit code. */
static int shell_command(int argc, char **argv, bool in_shell)
{
	int rc;

	if (!strcmp(argv[0], "help")) {
		if (argc < 2) {
			help_list(stderr);
			return ECMD_PROCESSED;
		}
		rc = ECMD_PROCESSED;
		for (int i = 1; i < argc; i++)
			if (help_command(argv[i], stdout) != ECMD_PROCESSED)
				rc = EINVALID_CMD_LINE;
		return rc;
	}
	rc = cli_run(argv[0], argc, argv);
	if (rc == CLI_NO_SUCH_COMMAND) {
		fprintf(stderr,
		        in_shell ? "  No such command '%s'.  Try 'help'.\n"
		                 : "  No such command '%s'.  Try 'ulvm help'.\n",
		        argv[0]);
		rc = EINVALID_CMD_LINE;
	}
	return rc;
}

int cli_shell(int argc, char **argv)
{
	bool tty = isatty(STDIN_FILENO);
	char *line = NULL, *words[SHELL_MAX_ARGS + 1];
	size_t cap = 0;

	/* `ulvm lvm CMD ...`, `ulvm shell CMD ...`: that one command */
	if (argc > 1 && !strcmp(argv[0], "shell") && help_wanted(argc, argv))
		return help_command("shell", stdout);
	if (argc > 1)
		return shell_command(argc - 1, argv + 1, false);
	count_stderr();
	for (;;) {
		int n, rc;
		size_t before;

		if (tty) {
			fputs("lvm> ", stdout);
			fflush(stdout);
		}
		if (getline(&line, &cap, stdin) < 0) {
			putchar('\n'); /* as LVM2 at the end of its input */
			break;
		}
		n = split_words(line, words, SHELL_MAX_ARGS);
		if (n < 0) {
			fprintf(stderr, "  Too many arguments, sorry.\n");
			continue;
		}
		if (n && !strcmp(words[0], "lvm")) {
			memmove(words, words + 1, (size_t)(n - 1) * sizeof(*words));
			n--;
		}
		if (!n || words[0][0] == '#')
			continue;
		if (!strcmp(words[0], "quit") || !strcmp(words[0], "exit")) {
			fprintf(stderr, "  Exiting.\n");
			break;
		}
		words[n] = NULL;
		before = stderr_bytes;
		rc = shell_command(n, words, true);
		fflush(stdout);
		if (rc != ECMD_PROCESSED && stderr_bytes == before)
			fprintf(stderr, "  Command failed with status code %d.\n", rc);
	}
	free(line);
	fflush(stdout);
	return ECMD_PROCESSED;
}
