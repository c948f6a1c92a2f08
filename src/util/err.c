/* Error values with one descriptive line each, and the warning sink. */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "util.h"

static _Thread_local char last_error[1024];

int ulvm_error(int err, const char *fmt, ...)
{
	char msg[sizeof(last_error)];
	va_list ap;

	/* Formatted aside first: an argument may be ulvm_last_error() itself (a message that
	 * wraps the one before), and vsnprintf must not write where it reads. */
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	memcpy(last_error, msg, sizeof(msg));
	return err;
}

const char *ulvm_last_error(void)
{
	return last_error[0] ? last_error : NULL;
}

void ulvm_clear_error(void)
{
	last_error[0] = '\0';
}

static void log_to_stderr(enum ulvm_log_level level, const char *msg, void *arg)
{
	(void)arg;
	fprintf(stderr, "  %s%s\n", level == ULVM_LOG_WARN ? "WARNING: " : "", msg);
}

static ulvm_log_fn log_fn = log_to_stderr;
static void *log_arg;
static enum ulvm_log_level log_max = ULVM_LOG_WARN;

void ulvm_set_log(ulvm_log_fn fn, void *arg, enum ulvm_log_level max_level)
{
	log_fn = fn ? fn : log_to_stderr;
	log_arg = arg;
	log_max = max_level;
}

void ulvm_log(enum ulvm_log_level level, const char *fmt, ...)
{
	char msg[1024];
	va_list ap;

	if (level > log_max)
		return;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	log_fn(level, msg, log_arg);
}
