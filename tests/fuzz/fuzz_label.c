/* libFuzzer target for lvm/label: the input is the first 2048 bytes of a device. A label
 * that decodes must encode, and decode again to the same fields (the extension version is
 * normalised to 2 by the encoder, as LVM2 does). Each input is tried as is, then with the
 * checksum of every LABELONE sector fixed up, so that mutations get past the CRC. */
#include <stdlib.h>
#include <string.h>

#include "lvm/label.h"

static void check_lists(const struct disk_locn *a, unsigned na, const struct disk_locn *b,
                        unsigned nb)
{
	if (na != nb)
		abort();
	for (unsigned i = 0; i < na; i++)
		if (a[i].offset != b[i].offset || a[i].size != b[i].size)
			abort();
}

static void check(const uint8_t *buf, size_t len)
{
	uint8_t win[LABEL_SCAN_SIZE];
	struct pv_label l, again;

	if (label_decode(buf, len, "fuzz", &l) != 0)
		return;
	if (l.sector >= LABEL_SCAN_SECTORS || strlen(l.pv_uuid) != UUID_LEN)
		abort();

	memset(win, 0, sizeof(win));
	if (label_encode(&l, win + (size_t)l.sector * SECTOR_SIZE) != 0)
		abort();
	if (label_decode(win, sizeof(win), "fuzz", &again) != 0)
		abort();
	if (again.sector != l.sector || strcmp(again.pv_uuid, l.pv_uuid) != 0 ||
	    again.device_size != l.device_size || again.ext_version != 2 ||
	    again.ext_flags != l.ext_flags)
		abort();
	check_lists(l.data_areas, l.n_data_areas, again.data_areas, again.n_data_areas);
	check_lists(l.mdas, l.n_mdas, again.mdas, again.n_mdas);
	check_lists(l.bootloader_areas, l.n_bootloader_areas, again.bootloader_areas,
	            again.n_bootloader_areas);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	uint8_t win[LABEL_SCAN_SIZE];
	size_t len = size < sizeof(win) ? size : sizeof(win);

	memcpy(win, data, len);
	check(win, len);
	for (size_t s = 0; s + SECTOR_SIZE <= len; s += SECTOR_SIZE) {
		uint8_t *sec = win + s;
		uint32_t crc;

		if (memcmp(sec, "LABELONE", 8) != 0)
			continue;
		crc = lvm_crc(LVM_INITIAL_CRC, sec + 20, SECTOR_SIZE - 20);
		for (int i = 0; i < 4; i++)
			sec[16 + i] = (uint8_t)(crc >> (8 * i));
	}
	check(win, len);
	return 0;
}
