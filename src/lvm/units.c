/*
 * Sizes as LVM2 prints and parses them. Printing follows libdm's rules: 'h'/'r' pick the
 * largest unit that keeps the value >= 1, two decimals (none for bytes and sectors), and 'r'
 * marks a value that rounding shows larger than it is with '<'. Lower-case units are
 * powers of 1024, upper-case powers of 1000.
 */
#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lvm.h"

static const char unit_letters[] = "eptgmk"; /* index = 6 - power */

static uint64_t unit_factor(char u)
{
	uint64_t base = isupper((unsigned char)u) ? 1000 : 1024, f = 1;
	const char *p;

	switch (tolower((unsigned char)u)) {
	case 'b':
		return 1;
	case 's':
		return 512;
	}
	p = strchr(unit_letters, tolower((unsigned char)u));
	if (!p)
		return 0;
	for (long i = 0; i < 6 - (p - unit_letters); i++)
		f *= base;
	return f;
}

void format_size(uint64_t sectors, char unit, bool suffix, bool long_form, char *buf, size_t len)
{
	static const char *const long_1024[] = {"EiB", "PiB", "TiB", "GiB", "MiB", "KiB"};
	static const char *const long_1000[] = {"EB", "PB", "TB", "GB", "MB", "kB"};
	uint64_t bytes = sectors * SECTOR_SIZE, f;
	const char *prefix = "";
	char sfx[8];
	int prec = 2;

	if (unit == 'h' || unit == 'H' || unit == 'r' || unit == 'R') {
		uint64_t base = (unit == 'H' || unit == 'R') ? 1000 : 1024;
		int i;

		if (!sectors) {
			/* libdm prints zero with the blank "unknown unit" suffix. */
			snprintf(buf, len, suffix ? "0 " : "0");
			return;
		}
		f = base * base * base * base * base * base;
		for (i = 0; i < 6 && bytes < f; i++)
			f /= base;
		if (i == 6) {
			snprintf(sfx, sizeof(sfx), long_form ? " B" : "B");
			prec = 0;
		} else if (long_form) {
			snprintf(sfx, sizeof(sfx), " %s",
			         base == 1024 ? long_1024[i] : long_1000[i]);
		} else {
			snprintf(sfx, sizeof(sfx), "%c",
			         base == 1024 ? unit_letters[i] : toupper(unit_letters[i]));
		}
		if (i < 6 && (unit == 'r' || unit == 'R')) {
			double d = 100.0 * (double)bytes / (double)f;
			if (fabs(floor(d) - nearbyint(d)) >= 1e-9)
				prefix = "<";
		}
		snprintf(buf, len, "%s%.*f%s", prefix, prec, (double)bytes / (double)f, sfx);
		return;
	}
	f = unit_factor(unit);
	if (!f)
		f = 1024 * 1024, unit = 'm';
	if (tolower((unsigned char)unit) == 'b' || tolower((unsigned char)unit) == 's')
		prec = 0;
	if (tolower((unsigned char)unit) == 'b')
		snprintf(sfx, sizeof(sfx), "B");
	else if (tolower((unsigned char)unit) == 's')
		snprintf(sfx, sizeof(sfx), "S");
	else
		snprintf(sfx, sizeof(sfx), "%c", unit);
	if (!sectors)
		snprintf(buf, len, "0%s", suffix ? sfx : "");
	else
		snprintf(buf, len, "%.*f%s", prec, (double)bytes / (double)f, suffix ? sfx : "");
}

int ulvm_parse_size(const char *s, char def_unit, uint64_t *sectors)
{
	char *end;
	double v;
	uint64_t f, bytes;

	errno = 0;
	/* Like LVM2, a size starts with a digit: no sign, and no "nan" or "inf" for strtod. */
	if (!s || !(isdigit((unsigned char)s[0]) || (s[0] == '.' && isdigit((unsigned char)s[1]))))
		return ulvm_error(-EINVAL, "Invalid size \"%s\"", s ? s : "");
	v = strtod(s, &end);
	if (errno || end == s || v < 0)
		return ulvm_error(-EINVAL, "Invalid size \"%s\"", s);
	if (!*end) {
		f = unit_factor(def_unit);
	} else if (end[1] == '\0' || (end[1] && !strcasecmp(end + 1, "iB")) ||
	           (end[1] && !strcasecmp(end + 1, "B"))) {
		/* LVM2's size arguments treat both cases as powers of 1024 except with 'B'
		 * forms; keep it simple and as lvcreate documents: k/m/g/t/p/e = 1024-based. */
		char u = *end;
		f = (u == 'b' || u == 'B')   ? 1
		    : (u == 's' || u == 'S') ? 512
		                             : unit_factor((char)tolower((unsigned char)u));
	} else {
		f = 0;
	}
	if (!f)
		return ulvm_error(-EINVAL, "Invalid size \"%s\": unknown unit", s);
	if (v * (double)f > 9.2e18)
		return ulvm_error(-ERANGE, "Size \"%s\" is too large", s);
	bytes = (uint64_t)ceil(v * (double)f);
	*sectors = (bytes + SECTOR_SIZE - 1) / SECTOR_SIZE;
	return 0;
}

void ulvm_format_size(uint64_t sectors, char unit, bool suffix, bool long_form, char *buf,
                      size_t len)
{
	format_size(sectors, unit, suffix, long_form, buf, len);
}
