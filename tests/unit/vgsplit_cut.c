/* The power-cut driver of tests/e2e/188 (not a test itself): `ulvm vgsplit` (or vgmerge)
 * through the library with io/bdev's test-only fault injection cutting the power after N writes.
 *
 * usage: vgsplit_cut N [-l] DEVICES SRC DST PV...
 *        vgsplit_cut N [-l] DEVICES --merge DST SRC      (vgmerge)
 *   N        writes that reach the disks (-1: no cut)
 *   -l       the disks lose what was not flushed when the power goes (volatile caches)
 *   DEVICES  the devices to consider, comma separated (as --devices)
 * Prints "cut" when the power went before the split ended, else "done" (and the split's
 * error, if any, on stderr). Exit 0 unless the arguments or the context are wrong.
 * Locks go where $ULVM_LOCK_DIR says, as for the command. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "io/bdev.h"
#include "ulvm.h"

int main(int argc, char **argv)
{
	struct ulvm_ctx_opts opts = {0};
	struct ulvm_vgsplit_opts o = {0};
	struct ulvm_ctx *ctx;
	bool existing, lose = false;
	long cut;
	int a = 1, r;

	if (argc < 6) {
		fprintf(stderr, "usage: vgsplit_cut N [-l] DEVICES SRC DST PV...\n");
		return 2;
	}
	cut = strtol(argv[a++], NULL, 10);
	if (argv[a][0] == '-' && argv[a][1] == 'l') {
		lose = true;
		a++;
	}
	if (argc - a < 4) {
		fprintf(stderr, "usage: vgsplit_cut N [-l] DEVICES SRC DST PV...\n");
		return 2;
	}
	opts.devices = argv[a++];
	if (ulvm_ctx_new(&opts, &ctx)) {
		fprintf(stderr, "vgsplit_cut: %s\n", ulvm_last_error());
		return 1;
	}
	o.pvs = (const char *const *)argv + a + 2;
	o.npvs = (size_t)(argc - a - 2);
	if (cut >= 0) {
		bdev_fault_lose_unflushed(lose);
		bdev_fault_inject_after(cut);
	}
	if (!strcmp(argv[a], "--merge"))
		r = ulvm_vg_merge(ctx, argv[a + 1], argv[a + 2]);
	else
		r = ulvm_vg_split(ctx, argv[a], argv[a + 1], &o, &existing);
	if (cut >= 0 && bdev_fault_inject_after(-1) > 0) {
		puts("cut");
	} else {
		puts("done");
		if (r)
			fprintf(stderr, "%s\n", ulvm_last_error());
	}
	bdev_fault_lose_unflushed(false);
	ulvm_ctx_free(ctx);
	return 0;
}
