/*
 * The online records of event activation (pvscan --cache), in LVM2's formats, under ulvm's
 * runtime directory instead of /run/lvm:
 *   pvs_online/<PVID>  "MAJOR:MINOR\nvg:NAME\ndev:PATH\n" (a PV seen; 0:0 for an image file)
 *   vgs_online/<VG>    empty (the VG's autoactivation has been run, or --vgonline said so)
 * A VG is complete when every PV its metadata lists has a pvs_online file.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "lvm.h"

static int online_path(const char *sub, const char *name, char *out, size_t len)
{
	char dir[4096];
	int r;

	if ((r = active_run_dir(dir, sizeof(dir))))
		return r;
	snprintf(out, len, "%s/%s", dir, sub);
	if (mkdir(out, 0700) < 0 && errno != EEXIST)
		return ulvm_error(-errno, "%s: %s", out, strerror(errno));
	if (name) {
		if (!*name || *name == '.' || strchr(name, '/'))
			return ulvm_error(-EINVAL, "invalid name \"%s\"", name);
		snprintf(out + strlen(out), len - strlen(out), "/%s", name);
	}
	return 0;
}

int ulvm_pv_online_set(const char *pvid, const char *vg, const char *dev)
{
	char path[4400], text[4400];
	unsigned maj = 0, min = 0;
	struct stat st;
	ssize_t len;
	int fd, r;

	if ((r = online_path("pvs_online", pvid, path, sizeof(path))))
		return r;
	if (!stat(dev, &st) && S_ISBLK(st.st_mode)) {
		maj = major(st.st_rdev);
		min = minor(st.st_rdev);
	}
	len = snprintf(text, sizeof(text), "%u:%u\nvg:%s\ndev:%s\n", maj, min, vg ? vg : "", dev);
	if ((fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600)) < 0)
		return ulvm_error(-errno, "%s: %s", path, strerror(errno));
	r = write(fd, text, (size_t)len) == len ? 0 : ulvm_error(-EIO, "%s: short write", path);
	close(fd);
	return r;
}

bool ulvm_pv_online(const char *pvid)
{
	char path[4400];

	return !online_path("pvs_online", pvid, path, sizeof(path)) && !access(path, F_OK);
}

int ulvm_vg_online_create(const char *vg)
{
	char path[4400];
	int fd, r;

	if ((r = online_path("vgs_online", vg, path, sizeof(path))))
		return r;
	if ((fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600)) < 0)
		return errno == EEXIST ? -EEXIST
		                       : ulvm_error(-errno, "%s: %s", path, strerror(errno));
	close(fd);
	return 0;
}

bool ulvm_vg_online(const char *vg)
{
	char path[4400];

	return !online_path("vgs_online", vg, path, sizeof(path)) && !access(path, F_OK);
}

int ulvm_online_clear(void)
{
	static const char *const subs[] = {"pvs_online", "vgs_online"};

	for (size_t i = 0; i < 2; i++) {
		char dir[4400], path[4700];
		struct dirent *de;
		DIR *d;
		int r;
		if ((r = online_path(subs[i], NULL, dir, sizeof(dir))))
			return r;
		if (!(d = opendir(dir)))
			return ulvm_error(-errno, "%s: %s", dir, strerror(errno));
		while ((de = readdir(d))) {
			if (de->d_name[0] == '.')
				continue;
			snprintf(path, sizeof(path), "%s/%s", dir, de->d_name);
			unlink(path);
		}
		closedir(d);
	}
	return 0;
}

size_t ulvm_vg_pvs_offline(const struct ulvm_vg *vg)
{
	size_t n = 0;

	for (size_t i = 0; i < vg->npvs; i++)
		n += !ulvm_pv_online(vg->pvs[i]->uuid);
	return n;
}

/* Does `lv` have an extent on `pv`, directly or through the LVs it stacks on? */
static bool uses_pv(const struct ulvm_vg *vg, const struct ulvm_lv *lv, const struct ulvm_pv *pv,
                    bool (*want)(const struct ulvm_pv *), int depth)
{
	for (size_t s = 0; s < lv->nsegs; s++)
		for (uint32_t a = 0; a < lv->segs[s].area_count; a++) {
			const struct ulvm_area *ar = &lv->segs[s].areas[a];
			const struct ulvm_lv *sub;
			if (ar->type == ULVM_AREA_PV && ar->pv &&
			    (pv ? ar->pv == pv : !want(ar->pv)))
				return true;
			if (ar->type == ULVM_AREA_LV && depth < 8 &&
			    (sub = ulvm_lv_find((struct ulvm_vg *)vg, ar->lv_name)) &&
			    uses_pv(vg, sub, pv, want, depth + 1))
				return true;
		}
	return false;
}

static bool pv_is_online(const struct ulvm_pv *pv)
{
	return ulvm_pv_online(pv->uuid);
}

bool ulvm_lv_uses_pv(const struct ulvm_vg *vg, const struct ulvm_lv *lv, const struct ulvm_pv *pv)
{
	return uses_pv(vg, lv, pv, NULL, 0);
}

bool ulvm_lv_online(const struct ulvm_vg *vg, const struct ulvm_lv *lv)
{
	return !uses_pv(vg, lv, NULL, pv_is_online, 0);
}
