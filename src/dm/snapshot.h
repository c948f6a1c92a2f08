/*
 * dm/snapshot: the kernel's dm-snapshot targets (docs/formats/dm-snapshot.md), with its
 * table syntax, status lines and semantics. Uses dm and dm/exception_store.
 *
 *   snapshot-origin <origin>
 *   snapshot <origin> <cow> P|PO|N <chunk sectors>
 *   snapshot-merge <origin> <cow> P|PO <chunk sectors>
 *
 * Snapshots register with their origin by the lower device they name (the kernel's origin
 * hash), so a snapshot-origin (or snapshot-merge) over the same device copies each chunk into
 * every valid snapshot before its first write there. Status: `<allocated>/<total>
 * <metadata>` (sectors), or `Invalid`, `Merge failed`, `Overflow`; snapshot-origin's is empty.
 * A merge starts when a snapshot-merge table becomes live (resume, or dm_create) and shows its
 * progress in the status (merged when allocated == metadata); suspending stops it between
 * two runs. A snapshot table reloaded on the same COW (or a snapshot-merge loaded over the
 * snapshot's COW) takes the exceptions over from the old table at resume, which needs the
 * old one suspended, as in the kernel.
 *
 * Sequential origin writes make a snapshot copy the chunks after them ahead (docs/
 * ARCHITECTURE.md, "dm-snapshot as built"): ordinary exceptions, committed in batches;
 * $ULVM_SNAPSHOT_COPY_AHEAD ("off", or the largest window: 4M by default) is read by each
 * snapshot table as it is loaded.
 *
 * The origin knows its snapshots only through the registry: a registry that holds an origin
 * device must hold every snapshot of it before the origin is written (a process that loads
 * the origin alone writes it unchecked, as a kernel would without the snapshot tables).
 *
 * ulvm's dm_create runs no resume hooks: a snapshot made with dm_create is active at once
 * (the kernel's create + resume); one loaded into an inactive slot with a predecessor on the
 * same COW becomes active when it takes over at resume.
 */
#ifndef ULVM_DM_SNAPSHOT_H
#define ULVM_DM_SNAPSHOT_H

#include "dm.h"

extern const struct dm_target_type dm_snapshot_origin_target, dm_snapshot_target,
    dm_snapshot_merge_target;

#endif
