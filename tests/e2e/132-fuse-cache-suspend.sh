#!/bin/bash
# Test 76 on a page-cache mount (`ulvm mount -o cache`): I/O is held during a suspend there
# too, and across an lvextend (its resume invalidates the cache) a buffered reader and writer
# see no stale byte and lose no write.
E2E_FUSE_MOUNT_OPTS="-o cache"
. "$(dirname "$0")/76-fuse-suspend-holds-io.sh"
