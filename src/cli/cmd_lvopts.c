/*
 * The LV and VG settings of lvcreate, lvchange, vgcreate and vgchange that LVM2 records in
 * the metadata: -p|--permission, -r|--readahead, -M|--persistent with --major/--minor,
 * --setautoactivation (NOAUTOACTIVATE), --metadataprofile/--detachprofile and --alloc, with
 * LVM2's checks and messages; and the LV commands' size and number arguments as LVM2's
 * command-line parser takes them.
 */
#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>

#include "../util/util.h"
#include "cli.h"
#include "lvmconf.h"

/* -r auto|none|N (sectors, or with a unit): LVM2's parsing; 0 none. */
static int parse_readahead(const char *arg, uint32_t *out)
{
	uint64_t s;

	if (!strcmp(arg, "auto")) {
		*out = ULVM_READ_AHEAD_AUTO;
		return 0;
	}
	if (!strcmp(arg, "none")) {
		*out = ULVM_READ_AHEAD_NONE;
		return 0;
	}
	if (arg[0] == '-' || arg[0] == '+' || ulvm_parse_size(arg, 's', &s) ||
	    s >= ULVM_READ_AHEAD_AUTO) {
		if (arg[0] != '-' && arg[0] != '+' && !(arg[0] >= '0' && arg[0] <= '9'))
			fprintf(stderr, "  Size requires number argument.\n");
		fprintf(stderr, "  Invalid argument for --readahead: %s\n", arg);
		cli_parse_error();
		return -EINVAL;
	}
	*out = (uint32_t)s;
	return 0;
}

static int yes_no(const char *opt, const char *arg, int *out)
{
	if (!strcmp(arg, "y") || !strcmp(arg, "n")) {
		*out = arg[0] == 'y';
		return 0;
	}
	fprintf(stderr, "  Invalid argument for --%s: %s\n", opt, arg);
	cli_parse_error();
	return -EINVAL;
}

static int number(const char *opt, const char *arg, int *out)
{
	char *end;
	long v = strtol(arg, &end, 10);

	if (!*arg || *end || v < 0 || v > 0x7fffffff) {
		fprintf(stderr, "  Invalid argument for --%s: %s\n", opt, arg);
		cli_parse_error();
		return -EINVAL;
	}
	*out = (int)v;
	return 0;
}

void cli_settings_init(struct cli_settings *s)
{
	memset(s, 0, sizeof(*s));
	s->persistent = s->major = s->minor = s->autoactivation = s->activation_skip = -1;
}

int cli_settings_opt(struct cli_settings *s, int opt, const char *arg)
{
	switch (opt) {
	case 'p':
		if (strcmp(arg, "r") && strcmp(arg, "rw")) {
			fprintf(stderr, "  Invalid argument for --permission: %s\n", arg);
			cli_parse_error();
			return -1;
		}
		s->perm = arg;
		return 1;
	case 'r':
		if (parse_readahead(arg, &s->readahead))
			return -1;
		s->readahead_set = true;
		return 1;
	case 'M':
		return yes_no("persistent", arg, &s->persistent) ? -1 : 1;
	case 'j':
		return number("major", arg, &s->major) ? -1 : 1;
	case OPT_MINOR:
		return number("minor", arg, &s->minor) ? -1 : 1;
	case OPT_SETAUTOACTIVATION:
		return yes_no("setautoactivation", arg, &s->autoactivation) ? -1 : 1;
	case OPT_METADATAPROFILE:
		s->profile = arg;
		return 1;
	case OPT_DETACHPROFILE:
		s->detach_profile = true;
		return 1;
	case OPT_ALLOC:
		if (strcmp(arg, "contiguous") && strcmp(arg, "cling") &&
		    strcmp(arg, "cling_by_tags") && strcmp(arg, "normal") &&
		    strcmp(arg, "anywhere") && strcmp(arg, "inherit")) {
			fprintf(stderr, "  Unrecognised allocation policy %s\n", arg);
			fprintf(stderr, "  Invalid argument for --alloc: %s\n", arg);
			cli_parse_error();
			return -1;
		}
		/* LVM2 records cling_by_tags as cling (ulvm has no cling_tag_list either) */
		s->alloc = strcmp(arg, "cling_by_tags") ? arg : "cling";
		return 1;
	}
	return 0;
}

int cli_settings_activation_skip(struct cli_settings *s, const char *arg)
{
	return yes_no("setactivationskip", arg, &s->activation_skip) ? -1 : 0;
}

bool cli_settings_any(const struct cli_settings *s)
{
	return s->perm || s->readahead_set || s->persistent >= 0 || s->major >= 0 ||
	       s->minor >= 0 || s->autoactivation >= 0 || s->profile || s->detach_profile ||
	       s->alloc || s->activation_skip >= 0;
}

/* The kernel's device-mapper major (/proc/devices), 0 when it has none: the number LVM2
 * records for a persistent minor instead of the one given. */
static int dm_major(void)
{
	FILE *f = fopen("/proc/devices", "r");
	char line[128], name[64];
	int major = 0, m;
	bool block = false;

	if (!f)
		return 0;
	while (fgets(line, sizeof(line), f)) {
		if (!strncmp(line, "Block devices:", 14))
			block = true;
		else if (block && sscanf(line, "%d %63s", &m, name) == 2 &&
		         !strcmp(name, "device-mapper"))
			major = m;
	}
	fclose(f);
	return major;
}

int cli_settings_check_persistent(struct cli_settings *s)
{
	if (s->persistent == 0) {
		if (s->major >= 0 || s->minor >= 0) {
			fprintf(stderr,
			        "  Options --major and --minor are incompatible with -Mn.\n");
			return ECMD_FAILED;
		}
		return 0;
	}
	if (s->persistent == 1 && s->minor < 0) {
		fprintf(stderr, "  Please specify minor number with --minor when using -My.\n");
		return ECMD_FAILED;
	}
	if (s->major >= 0)
		fprintf(stderr,
		        "  WARNING: Ignoring supplied major number %d - kernel assigns major "
		        "numbers dynamically. Using major number %d instead.\n",
		        s->major, dm_major());
	if (s->minor >= 0) {
		s->major = dm_major();
		if (s->minor > 1048575) {
			fprintf(stderr, "  Minor number %d outside range 0-1048575.\n", s->minor);
			return ECMD_FAILED;
		}
	}
	return 0;
}

int cli_profile_exists(const char *name)
{
	struct lvmconf cf = {0};
	char dir[4096], path[4400];
	struct stat st;

	if (lvmconf_load(&cf, cli_config_override))
		ulvm_clear_error();
	lvmconf_str(&cf, "config/profile_dir", dir, sizeof(dir));
	lvmconf_free(&cf);
	snprintf(path, sizeof(path), "%s/%s.profile", dir, name);
	if (stat(path, &st)) {
		fprintf(stderr, "  %s: stat failed: %s\n", path, strerror(errno));
		fprintf(stderr, "  Failed to apply metadata profile %s.\n", name);
		return ECMD_FAILED;
	}
	return 0;
}

int cli_settings_check_profile(const char *name)
{
	if (cli_profile_exists(name))
		return ECMD_FAILED;
	fprintf(stderr,
	        "  WARNING: ulvm records metadata profile %s but does not apply its settings.\n",
	        name);
	return 0;
}

/* LVM2's "already" errors end a property's change with exit code 5. */
static int already(const char *fmt, const char *a, const char *b)
{
	fputs("  ", stderr);
	fprintf(stderr, fmt, a, b);
	fputc('\n', stderr);
	return -EEXIST;
}

int cli_settings_apply_lv(struct cli *c, struct ulvm_vg *vg, struct ulvm_lv *lv,
                          const struct cli_settings *s, bool create, bool *changed, bool *tell)
{
	char full[600], num[32];
	bool quiet = false;
	int r, fail = 0;

	(void)c;
	snprintf(full, sizeof(full), "%s/%s", vg->name, lv->name);
	if (s->perm) {
		bool want = !strcmp(s->perm, "rw");
		if (want == ulvm_strlist_has(&lv->status, "WRITE") && !create)
			r = want ? already("Logical volume %s%s is already writable.", full, "")
			         : already("Logical volume \"%s%s\" is already read only.", full,
			                   "");
		else if ((r = cli_status_set(&lv->status, "WRITE", want, "READ")))
			return r;
		else
			*changed = true;
	}
	if (s->alloc && !create) {
		if (!strcmp(ulvm_lv_alloc_policy(lv), s->alloc))
			fail = already("Allocation policy of logical volume %s is already %s.",
			               full, s->alloc);
		else if ((r = ulvm_lv_set_alloc_policy(vg, lv, s->alloc)))
			return r;
		else
			*changed = true;
	} else if (s->alloc && (r = ulvm_lv_set_alloc_policy(vg, lv, s->alloc))) {
		return r;
	}
	if (s->readahead_set) {
		uint32_t ra = s->readahead;
		if (ra != ULVM_READ_AHEAD_AUTO && ra != ULVM_READ_AHEAD_NONE && ra % 8) {
			ra = ra < 8 ? 8 : ra / 8 * 8;
			fprintf(stderr,
			        "  WARNING: Overriding readahead to %u sectors, a multiple of 4K "
			        "page size.\n",
			        ra);
		}
		snprintf(num, sizeof(num), "%u", ra);
		if (!create && ulvm_lv_read_ahead(lv) == ra)
			fail = already("Read ahead is already %s for %s.",
			               ra == ULVM_READ_AHEAD_AUTO ? "auto" : num, full);
		else if ((r = ulvm_lv_set_read_ahead(vg, lv, ra)))
			return r;
		else
			*changed = true;
	}
	if (s->persistent == 0 || (s->persistent < 0 && s->minor >= 0 && create) ||
	    s->persistent == 1) {
		int ma, mi;
		bool has = ulvm_lv_persistent(lv, &ma, &mi);
		if (s->persistent == 0 && !create && !has)
			fail =
			    already("Minor number is already not persistent for %s.%s", full, "");
		else if ((r = ulvm_lv_set_persistent(vg, lv, s->major,
		                                     s->persistent == 0 ? -1 : s->minor)))
			return r;
		else
			*changed = true;
		/* LVM2 says "changed" for -Mn, nothing for -My */
		quiet = s->persistent == 1;
	}
	if (s->autoactivation >= 0) {
		/* LVM2 says "changed" even when the flag was already so */
		if ((r = cli_status_set(&lv->flags, "NOAUTOACTIVATE", !s->autoactivation, NULL)))
			return r;
		*changed = true;
	}
	if (s->activation_skip >= 0) {
		/* LVM2 says "changed" even when the flag was already so */
		if ((r = cli_status_set(&lv->flags, "ACTIVATION_SKIP", s->activation_skip, NULL)))
			return r;
		*changed = true;
	}
	if (s->profile || s->detach_profile) {
		if ((r = ulvm_lv_set_profile(vg, lv, s->detach_profile ? NULL : s->profile)))
			return r;
		*changed = true;
	}
	*tell = *changed &&
	        !(quiet && !s->perm && !s->alloc && !s->readahead_set && s->autoactivation < 0 &&
	          s->activation_skip < 0 && !s->profile && !s->detach_profile);
	return fail;
}

int cli_settings_apply_vg(struct cli *c, struct ulvm_vg *vg, const struct cli_settings *s,
                          bool create, bool *changed)
{
	int r, fail = 0;

	(void)c;
	if (s->alloc) {
		if (!create && !strcmp(ulvm_vg_alloc_policy(vg), s->alloc))
			fail =
			    already("Volume group allocation policy is already %s%s", s->alloc, "");
		else if ((r = ulvm_vg_set_alloc_policy(vg, s->alloc)))
			return r;
		else
			*changed = true;
	}
	if (s->autoactivation >= 0) {
		bool off = ulvm_strlist_has(&vg->flags, "NOAUTOACTIVATE");
		if (!create && off == !s->autoactivation)
			fail = already("Volume group autoactivation is already %s.%s",
			               s->autoactivation ? "yes" : "no", "");
		else if ((r = cli_status_set(&vg->flags, "NOAUTOACTIVATE", !s->autoactivation,
		                             NULL)))
			return r;
		else
			*changed = true;
	}
	if (s->profile || s->detach_profile) {
		if ((r = ulvm_vg_set_profile(vg, s->detach_profile ? NULL : s->profile)))
			return r;
		*changed = true;
	}
	return fail;
}

bool cli_lv_autoactivates(const struct ulvm_vg *vg, const struct ulvm_lv *lv)
{
	return !ulvm_strlist_has(&vg->flags, "NOAUTOACTIVATE") &&
	       !ulvm_strlist_has(&lv->flags, "NOAUTOACTIVATE");
}

/* LVM2's refusal of an option's value: its reason (when it gives one), "Invalid argument
 * for --OPT: ARG" and "Error during parsing of command line.". */
static int bad_value(const char *why, const char *opt, const char *arg)
{
	if (why)
		fprintf(stderr, "  %s\n", why);
	fprintf(stderr, "  Invalid argument for --%s: %s\n", opt, arg);
	cli_parse_error();
	return -EINVAL;
}

/* The sign LVM2 refuses for an option that takes `signs`, as its words say it. */
static const char *sign_refused(char sign, const char *signs, const char *what)
{
	static char why[64];

	if (!sign || (signs && strchr(signs, sign)))
		return NULL;
	if (!signs)
		return "Size may not be relative/signed.";
	snprintf(why, sizeof(why), "%s may not be %s.", what,
	         sign == '-' ? "negative" : "positive");
	return why;
}

int cli_size_opt(const char *opt, const char *arg, const char *signs, char def_unit,
                 struct size_arg *s)
{
	const char *v = arg + (*arg == '+' || *arg == '-');
	char *end, why[96];
	double d;

	/* LVM2's _size_arg: a digit after the sign, a number strtod takes, a known unit */
	if (!isdigit((unsigned char)*v) && *v != '.')
		return bad_value("Size requires number argument.", opt, arg);
	if (*v == '.' && !isdigit((unsigned char)v[1]))
		return bad_value("Can't parse size argument at '.'.", opt, arg);
	if (parse_size_arg(arg, false, def_unit, s))
		return bad_value("Can't parse size argument.", opt, arg);
	d = strtod(v, &end);
	if ((*end == 'b' || *end == 'B') && !end[1] && fmod(d, 512.0) != 0) {
		uint64_t lo = (uint64_t)d / 512 * 512;

		snprintf(why, sizeof(why), "Size is not a multiple of 512. Try using %llu or %llu.",
		         (unsigned long long)lo, (unsigned long long)(lo + 512));
		return bad_value(why, opt, arg);
	}
	if (sign_refused(s->sign, signs, "Size"))
		return bad_value(sign_refused(s->sign, signs, "Size"), opt, arg);
	return 0;
}

int cli_sectors_opt(const char *opt, const char *arg, const char *signs, char def_unit,
                    uint64_t *out)
{
	struct size_arg s;

	if (cli_size_opt(opt, arg, signs, def_unit, &s))
		return -EINVAL;
	*out = s.value;
	return 0;
}

int cli_extents_opt(const char *arg, const char *signs, struct size_arg *s)
{
	const char *v = arg + (*arg == '+' || *arg == '-');
	char *end;

	/* LVM2's int_arg_with_sign_and_percent: digits, then nothing or a known %WORD */
	errno = 0;
	if (!isdigit((unsigned char)*v) || (strtoull(v, &end, 10), errno) || (*end && *end != '%'))
		return bad_value(NULL, "extents", arg);
	if (*end == '%' && strcasecmp(end + 1, "FREE") && strcasecmp(end + 1, "VG") &&
	    strcasecmp(end + 1, "PVS") && strcasecmp(end + 1, "LV") &&
	    strcasecmp(end + 1, "ORIGIN")) {
		char why[96];

		snprintf(why, sizeof(why), "Specified %%%.64s is unknown.", end + 1);
		return bad_value(why, "extents", arg);
	}
	if (v != arg && sign_refused(*arg, signs, "Extents"))
		return bad_value(sign_refused(*arg, signs, "Extents"), "extents", arg);
	/* what LVM2 checks later (a percentage over 100), said as ulvm says it */
	if (parse_size_arg(arg, true, 0, s)) {
		cli_fail(-EINVAL);
		return -EINVAL;
	}
	return 0;
}

int cli_number_opt(const char *opt, const char *arg, uint32_t *out)
{
	const char *v = arg + (*arg == '+');
	char *end;
	unsigned long n;

	/* LVM2's uint32_arg: digits (a '+' allowed), nothing after them, 32 bits */
	errno = 0;
	n = isdigit((unsigned char)*v) ? strtoul(v, &end, 10) : 0;
	if (!isdigit((unsigned char)*v) || errno || *end || n > UINT32_MAX)
		return bad_value(NULL, opt, arg);
	*out = (uint32_t)n;
	return 0;
}
