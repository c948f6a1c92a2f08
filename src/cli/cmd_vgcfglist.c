/* `vgcfgrestore --list VG` (and `-f FILE --list`): the VG's metadata archives, oldest
 * first, then its backup, in LVM2's layout. */
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "cli.h"

static void list_one(const struct ulvm_backup_file *f)
{
	char date[64] = "";
	time_t t = (time_t)f->time;
	struct tm tm;

	if (localtime_r(&t, &tm))
		strftime(date, sizeof(date), "%a %b %e %T %Y", &tm);
	/* LVM2 2.03.16 prints the path with its own base name appended again
	 * ("DIR/F/F"); ulvm prints the file's path. */
	printf("   \n  File:\t\t%s\n  VG name:    \t%s\n  Description:\t%s\n  Backup Time:\t%s\n\n",
	       f->path, f->vg_name, f->description ? f->description : "", date);
}

int cli_vgcfgrestore_list(struct cli *c, const char *vg, const char *file)
{
	struct ulvm_backup_file *files;
	char archive_dir[4096], backup_dir[4096];
	size_t n, narchives = 0;
	int r;

	(void)c;
	if (file) { /* only the file named */
		if ((r = ulvm_backup_file_read(file, &files)))
			return cli_fail(r);
		list_one(files);
		ulvm_vg_backups_free(files, 1);
		return ECMD_PROCESSED;
	}
	if ((r = ulvm_vg_backups(vg, &files, &n)))
		return cli_fail(r);
	ulvm_backup_dirs(archive_dir, backup_dir, sizeof(archive_dir));
	for (size_t i = 0; i < n; i++)
		narchives += !strncmp(files[i].path, archive_dir, strlen(archive_dir));
	if (!narchives)
		printf("  No archives found in %s.\n", archive_dir);
	for (size_t i = 0; i < n; i++)
		list_one(&files[i]);
	ulvm_vg_backups_free(files, n);
	return ECMD_PROCESSED;
}
