/* LVM2-style identifiers: 32 characters from [0-9a-zA-Z] drawn from the kernel's CSPRNG. */
#include <errno.h>
#include <string.h>
#include <sys/random.h>

#include "util.h"

static const char uuid_chars[] = "0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ";

int uuid_generate(char out[UUID_LEN + 1])
{
	uint8_t rnd[UUID_LEN];
	size_t got = 0;

	while (got < sizeof(rnd)) {
		ssize_t n = getrandom(rnd + got, sizeof(rnd) - got, 0);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			return ulvm_error(-errno, "cannot read random bytes for a UUID: %s",
			                  strerror(errno));
		}
		got += (size_t)n;
	}
	/* 62 symbols: reject-free modulo bias is negligible for identifiers (LVM2 does the same).
	 */
	for (int i = 0; i < UUID_LEN; i++)
		out[i] = uuid_chars[rnd[i] % 62];
	out[UUID_LEN] = '\0';
	return 0;
}

void uuid_format(const char raw[UUID_LEN], char out[UUID_STR_LEN + 1])
{
	static const int groups[] = {6, 4, 4, 4, 4, 4, 6};
	int in = 0, o = 0;

	for (size_t g = 0; g < ARRAY_SIZE(groups); g++) {
		if (g)
			out[o++] = '-';
		for (int k = 0; k < groups[g]; k++)
			out[o++] = raw[in++];
	}
	out[o] = '\0';
}

static bool uuid_char_valid(char c)
{
	return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
	       c == '!' || c == '#';
}

int uuid_parse(const char *text, char out[UUID_LEN + 1])
{
	int n = 0;

	for (const char *p = text; *p; p++) {
		if (*p == '-')
			continue;
		if (!uuid_char_valid(*p) || n == UUID_LEN)
			return ulvm_error(-EINVAL, "invalid UUID \"%s\"", text);
		out[n++] = *p;
	}
	if (n != UUID_LEN)
		return ulvm_error(-EINVAL, "invalid UUID \"%s\": %d characters, expected 32", text,
		                  n);
	out[n] = '\0';
	return 0;
}
