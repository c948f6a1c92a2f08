/*
 * cli/nbd_client: a small synchronous NBD client (fixed newstyle handshake, NBD_OPT_GO,
 * simple replies), so that a command reaches a device ulvmd holds through the daemon's own
 * NBD export instead of building a second copy of it: `ulvm dd` on an active LV while ulvmd
 * runs. One request at a time; reads and writes longer than the server's limit are split.
 */
#ifndef ULVM_CLI_NBD_CLIENT_H
#define ULVM_CLI_NBD_CLIENT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct nbd_client {
	int fd;
	uint64_t size; /* bytes, as the server announced it */
	uint16_t flags;
	uint64_t next_handle;
	char *export_name;
};

/* Connect to the Unix socket `path` and open export `name`; errors name both. */
int nbd_client_open(const char *path, const char *name, struct nbd_client *c);
int nbd_client_pread(struct nbd_client *c, void *buf, size_t len, uint64_t offset);
int nbd_client_pwrite(struct nbd_client *c, const void *buf, size_t len, uint64_t offset);
int nbd_client_flush(struct nbd_client *c);
/* Sends NBD_CMD_DISC and closes. */
void nbd_client_close(struct nbd_client *c);

#endif
