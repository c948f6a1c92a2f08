/*
 * libFuzzer target for the lvm.conf reader (cli/lvmconf.c): the input, split at its first
 * NUL byte, is lvm.conf's text and --config's; whatever parses is looked up for every
 * setting ulvm knows and printed as lvmconfig prints it, which must neither crash nor leak.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../src/cli/lvmconf.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char *nul = memchr(data, '\0', size);
	size_t len = nul ? (size_t)(nul - (const char *)data) : size;
	char *over = NULL, b[256];
	struct lvmconf cf;
	struct strbuf o;
	struct lvmconf_print p = {.spaces = true, .comments = true, .versions = true};

	if (nul && (over = malloc(size - len))) {
		memcpy(over, nul + 1, size - len - 1);
		over[size - len - 1] = '\0';
	}
	sb_init(&o);
	if (!lvmconf_parse(&cf, "/etc/lvm", (const char *)data, len, over)) {
		const struct cfg_node *top[64];
		size_t n = lvmconf_order(&lvmconf_current(&cf)->top, top, 64);
		for (size_t i = 0; i < n; i++)
			lvmconf_print_node(&o, top[i], 0, &p);
		for (size_t i = 0; i < lvmconf_ndefs; i++) {
			const struct lvmconf_def *s = &lvmconf_defs[i];
			const struct cfg_node *node;
			const char *f, *e;
			if (s->type == LC_SECTION)
				continue;
			(void)lvmconf_int(&cf, s->path);
			(void)lvmconf_str(&cf, s->path, b, sizeof(b));
			if ((node = lvmconf_node(&cf, s->path)) && lvmconf_type_ok(s, node, &f, &e))
				(void)lvmconf_is_default(&cf, s, node);
			lvmconf_print_default(&o, &cf, s, 1, true, &p);
		}
	}
	lvmconf_free(&cf);
	sb_free(&o);
	free(over);
	return 0;
}
