/*
 * Activating an LV's whole stack of devices, as LVM2's activation tree does: every device of
 * ulvm_lv_dm_nodes (a thin LV's pool metadata and data LVs, the pool's real device, then the
 * LV's own), the lowest first. A device already active under its UUID is kept (reloaded when
 * its table changed: a grown pool); a device with that UUID under another name is renamed by
 * removing it first (a pool that gets its first thin LV moves to the "-tpool" name). The real
 * pool device is checked before it is loaded (the pool checker, as LVM2 runs thin_check), and
 * queued pool messages are sent once it is up. Deactivation removes the LV's device, then every
 * lower device of its stack that nothing else uses any more.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "segtype.h"

/* Tables compare with runs of blanks and trailing blanks ignored. */
static bool same_table(const char *a, const char *b)
{
	for (;;) {
		while (*a == ' ' && (a[1] == ' ' || a[1] == '\n' || !a[1]))
			a++;
		while (*b == ' ' && (b[1] == ' ' || b[1] == '\n' || !b[1]))
			b++;
		if (*a == '\n' && !a[1])
			a++;
		if (*b == '\n' && !b[1])
			b++;
		if (*a != *b)
			return false;
		if (!*a)
			return true;
		a++;
		b++;
	}
}

/* The active device that has `uuid` under another name than `name` (*other set), if any. */
static bool uuid_elsewhere(const char *uuid, const char *name, char *other, size_t len)
{
	const char **names;
	size_t n;
	bool found = false;

	if (ulvm_active_list(&names, &n))
		return false;
	for (size_t i = 0; i < n && !found; i++) {
		char u[ULVM_DM_UUID_LEN] = "";
		if (strcmp(names[i], name) && !ulvm_active_uuid(names[i], u, sizeof(u)) &&
		    !strcmp(u, uuid)) {
			snprintf(other, len, "%s", names[i]);
			found = true;
		}
	}
	ulvm_active_list_free(names, n);
	return found;
}

static int refresh(struct ulvm_ctx *ctx, const struct ulvm_dm_node *node, bool always)
{
	char *live = NULL;
	int r;

	if (!always && !ulvm_active_info(node->name, &live, NULL, NULL) &&
	    same_table(live, node->table)) {
		free(live);
		return 0;
	}
	free(live);
	if (!(r = ulvm_active_suspend(node->name, true)) &&
	    !(r = ulvm_active_load(ctx, node->name, node->table)))
		r = ulvm_active_suspend(node->name, false);
	else
		ulvm_active_suspend(node->name, false);
	return r;
}

static int node_up(struct ulvm_vg *vg, const struct ulvm_dm_node *node, bool own, bool *changed)
{
	struct ulvm_ctx *ctx = vg->ctx;
	char other[300], uuid[ULVM_DM_UUID_LEN] = "";
	int r;

	if (uuid_elsewhere(node->uuid, node->name, other, sizeof(other)) &&
	    (r = ulvm_active_remove(ctx, other)))
		return r;
	if (ulvm_active_exists(node->name)) {
		ulvm_active_uuid(node->name, uuid, sizeof(uuid));
		if (!strcmp(uuid, node->uuid) && !ulvm_active_check(node->name))
			return refresh(ctx, node, own);
		if (!uuid[0] && !ulvm_active_check(node->name))
			return ulvm_error(
			    -EEXIST,
			    "Device %s already exists and is not LV %s/%s's: remove it "
			    "first",
			    node->name, vg->name, node->lv->name);
		if ((r = ulvm_active_remove(ctx, node->name)))
			return r;
	}
	if (node->real_pool && (r = ulvm_thin_pool_check(vg, node->lv)))
		return r;
	if ((r = ulvm_active_create_uuid(ctx, node->name, node->uuid, node->table)))
		return r;
	(void)changed;
	return 0;
}

int ulvm_lv_activate(struct ulvm_vg *vg, struct ulvm_lv *lv, bool on, bool *vg_changed)
{
	struct ulvm_dm_node *nodes;
	size_t n;
	int r;

	if (vg_changed)
		*vg_changed = false;
	if ((r = ulvm_lv_dm_nodes(vg, lv, &nodes, &n)))
		return r;
	if (on) {
		bool *made = calloc(n + 1, sizeof(*made));
		if (!made) {
			ulvm_dm_nodes_free(nodes, n);
			return ulvm_error(-ENOMEM, "out of memory");
		}
		for (size_t i = 0; i < n && !r; i++) {
			struct ulvm_lv *owner = (struct ulvm_lv *)nodes[i].lv;
			made[i] = !ulvm_active_exists(nodes[i].name);
			r = node_up(vg, &nodes[i], i == n - 1, vg_changed);
			if (!r && nodes[i].real_pool) {
				struct ulvm_thin_pool_info pi;
				ulvm_thin_pool_get(vg, owner, &pi);
				/* Messages a command queued but did not send (it stopped): the
				 * pool is told now, and the caller commits their removal. */
				if (pi.queued_messages &&
				    !(r = ulvm_thin_pool_send_messages(vg, owner)) && vg_changed)
					*vg_changed = true;
				if (!r)
					r = ulvm_thin_check_transaction(vg, owner);
			}
		}
		/* A failed activation (the pool's check refused it) leaves nothing it made: LVM2
		 * reverts its activation tree. */
		for (size_t i = n; r && i-- > 0;)
			if (made[i] && ulvm_active_exists(nodes[i].name))
				ulvm_active_remove(vg->ctx, nodes[i].name);
		free(made);
	} else {
		for (size_t i = n; i-- > 0 && !r;) {
			char uuid[ULVM_DM_UUID_LEN] = "";
			bool mine = ulvm_active_exists(nodes[i].name) &&
			            !ulvm_active_uuid(nodes[i].name, uuid, sizeof(uuid)) &&
			            !strcmp(uuid, nodes[i].uuid);
			if (i == n - 1) {
				if (mine)
					r = ulvm_active_remove(vg->ctx, nodes[i].name);
			} else if (mine && !ulvm_active_busy(nodes[i].name)) {
				r = ulvm_active_remove(vg->ctx, nodes[i].name);
			}
		}
		/* A pool whose own device was its linear over "-tpool": that goes too. */
		if (!r && ulvm_lv_is_thin_pool(lv)) {
			char name[300], uuid[ULVM_DM_UUID_LEN];
			ulvm_lv_state_device(vg, lv, name, sizeof(name), uuid, sizeof(uuid));
			if (ulvm_active_exists(name) && !ulvm_active_busy(name))
				r = ulvm_active_remove(vg->ctx, name);
		}
	}
	ulvm_dm_nodes_free(nodes, n);
	return r;
}

int ulvm_lv_refresh(struct ulvm_vg *vg, struct ulvm_lv *lv)
{
	struct ulvm_dm_node *nodes;
	size_t n;
	int r;

	if ((r = ulvm_lv_dm_nodes(vg, lv, &nodes, &n)))
		return r;
	/* Once a device below changed (a grown metadata LV), everything above it is reloaded
	 * too: the pool sees its devices' new sizes when it resumes. */
	bool below_changed = false;
	for (size_t i = 0; i < n && !r; i++) {
		char uuid[ULVM_DM_UUID_LEN] = "", *live = NULL;
		if (!ulvm_active_exists(nodes[i].name) ||
		    ulvm_active_uuid(nodes[i].name, uuid, sizeof(uuid)) ||
		    strcmp(uuid, nodes[i].uuid))
			continue;
		if (!ulvm_active_info(nodes[i].name, &live, NULL, NULL) &&
		    !same_table(live, nodes[i].table))
			below_changed = true;
		free(live);
		r = refresh(vg->ctx, &nodes[i], below_changed);
	}
	ulvm_dm_nodes_free(nodes, n);
	return r;
}
