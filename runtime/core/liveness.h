/* SPDX-License-Identifier: BSD-3-Clause */
/* Dead peers: a rank that dies without a word must not leave the others waiting until
 * FM_TIMEOUT, or forever in a loop of fm_wait calls, and someone must say which rank it was.
 * Launchers usually end the job first, but not all do, and not all name the rank: MPICH's
 * hydra kills the whole job within milliseconds and names some pid, often a rank it killed
 * itself. So the peers whose processes this one can see (same kernel, same pid namespace)
 * are watched by a helper thread sleeping on their pidfds, which logs a death the moment it
 * happens (before hydra's cleanup), naming the rank; where pidfds are not available, idle
 * waits look at those peers in /proc about twice a second instead. Peers elsewhere show up as
 * transport errors. From the first death on, every wait fails with FM_ERR_PEER.
 * The thread never touches the context, the network or the caller's data: it logs and sets
 * a flag. One context per process, so the state is the process's. */
#ifndef FM_LIVENESS_H
#define FM_LIVENESS_H

#include <stdint.h>

#include "fastmsg.h"

/* What a rank publishes with its host card so that its peers can watch its process: a pid
 * means the same process to another rank only under the same boot id and pid namespace. */
typedef struct fm_liveness_id {
    char boot_id[40]; /* /proc/sys/kernel/random/boot_id, "" if unreadable */
    uint64_t pidns;   /* inode of /proc/self/ns/pid */
    int32_t pid;
} fm_liveness_id;

void fm_liveness_self(fm_liveness_id *id);
/* After the card exchange (this process is rank self of size): watch rank's process if it is
 * visible from here; then start. */
void fm_liveness_watch(int self, int size, int rank, const fm_liveness_id *theirs,
                       const fm_liveness_id *mine);
void fm_liveness_start(void);
/* Stop watching (fm_finalize, failed fm_init). */
void fm_liveness_fini(void);

/* FM_OK, or FM_ERR_PEER once a watched peer has died. Cheap: a flag, and where peers are
 * looked at in /proc, a clock read. */
int fm_liveness_check(void);
/* A transport operation failed with status: FM_ERR_PEER if a watched peer has died (looked
 * at now), else status. */
int fm_liveness_blame(int status);

/* For idle loops: fm_liveness_check every 64th call, so a spinning caller reads no clock. */
extern unsigned fm_liveness_ticks;
static inline int fm_liveness_idle(void)
{
    return ++fm_liveness_ticks & 63 ? FM_OK : fm_liveness_check();
}

#endif
