/* SPDX-License-Identifier: BSD-3-Clause */
/* Packets as MPI messages: every send an MPI_Isend, every posted receive an MPI_Irecv from
 * any source, all of them in one request table that poll hands to MPI_Testsome (under
 * SimGrid, to MPI_Waitany, one completion at a time: collect says why). MPI moves
 * the bytes (and queues what the peer has not yet asked for), so nothing here retries.
 * Idle waits block in MPI (block): under SimGrid that is what lets simulated time pass. */
#include "mpi_internal.h"

#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "fastmsg.h"
#include "fm_build_config.h"
#include "log.h"

#if FM_HAVE_SMPI
#include <simgrid/host.h>
#include <smpi/smpi.h>
/* A packet's host cost, charged as simulated compute on this rank's simulated host, in its
 * own speed (smpi_execute would scale by smpi/host-speed and skip anything under
 * smpi/cpu-threshold). With smpi/simulate-computation off these are the only costs. */
static void charge(double s)
{
    if (s > 0)
        smpi_execute_flops(s * sg_host_get_speed(sg_host_self()));
}
#else
static void charge(double s)
{
    (void)s;
}
#endif

int fm_mpi_table_init(fm_mpi_tp *t, int cap)
{
    t->reqs = malloc((size_t)cap * sizeof *t->reqs);
    t->slots = calloc((size_t)cap, sizeof *t->slots);
    t->free_list = malloc((size_t)cap * sizeof *t->free_list);
    t->idx = malloc((size_t)cap * sizeof *t->idx);
    t->wreqs = malloc(((size_t)cap + 1) * sizeof *t->wreqs);
    t->tick[0] = t->tick[1] = MPI_REQUEST_NULL;
    t->st = malloc((size_t)cap * sizeof *t->st);
    t->ready = malloc(2 * (size_t)cap * sizeof *t->ready); /* a region's release too */
    if (!t->reqs || !t->slots || !t->free_list || !t->idx || !t->wreqs || !t->st || !t->ready)
        return FM_ERR_NOMEM;
    for (int i = 0; i < cap; i++)
        t->reqs[i] = MPI_REQUEST_NULL;
    t->cap = cap;
    return FM_OK;
}

void fm_mpi_table_free(fm_mpi_tp *t)
{
    for (int i = 0; i < t->hi; i++)
        free(t->slots[i].stage);
    free(t->reqs);
    free(t->slots);
    free(t->free_list);
    free(t->idx);
    free(t->wreqs);
    free(t->st);
    free(t->ready);
}

/* *p (an array) to n elements of elem bytes; it stays as it was when memory runs out. */
static int resize(void *p, size_t elem, int n)
{
    void *q = realloc(*(void **)p, elem * (size_t)n);
    if (!q)
        return -1;
    *(void **)p = q;
    return 0;
}

/* Twice the room: requests, slots and the arrays sized like them (the capacity grows only
 * once all of them have). */
static int grow(fm_mpi_tp *t)
{
    int cap = t->cap * 2;
    if (resize(&t->reqs, sizeof *t->reqs, cap) || resize(&t->slots, sizeof *t->slots, cap) ||
        resize(&t->free_list, sizeof *t->free_list, cap) || resize(&t->idx, sizeof *t->idx, cap) ||
        resize(&t->wreqs, sizeof *t->wreqs, cap + 1) || resize(&t->st, sizeof *t->st, cap) ||
        resize(&t->ready, sizeof *t->ready, 2 * cap))
        return FM_ERR_NOMEM;
    for (int i = t->cap; i < cap; i++)
        t->reqs[i] = MPI_REQUEST_NULL;
    memset(t->slots + t->cap, 0, (size_t)(cap - t->cap) * sizeof *t->slots);
    t->cap = cap;
    return FM_OK;
}

/* A free slot's number, or -1 when out of memory. */
static int slot_take(fm_mpi_tp *t)
{
    if (t->nfree)
        return t->free_list[--t->nfree];
    if (t->hi == t->cap && grow(t))
        return -1;
    return t->hi++;
}

static void slot_put(fm_mpi_tp *t, int i)
{
    free(t->slots[i].stage);
    t->slots[i] = (fm_mpi_slot){0};
    t->reqs[i] = MPI_REQUEST_NULL;
    t->free_list[t->nfree++] = i;
}

/* Requests outstanding: every slot below hi that is not on the free list. */
static int outstanding(const fm_mpi_tp *t)
{
    return t->hi - t->nfree;
}

static int start_send(fm_mpi_tp *t, int dest, const void *buf, size_t len, void *stage, void *ctx)
{
    if (dest < 0 || dest >= t->n || len > (size_t)INT32_MAX) {
        free(stage);
        return FM_ERR_INVALID;
    }
    int i = slot_take(t);
    if (i < 0) {
        free(stage);
        return FM_ERR_NOMEM;
    }
    charge(t->cost_send);
    const void *from = stage ? stage : buf;
    if (MPI_Isend(from, (int)len, MPI_BYTE, t->rank_of[dest], FM_MPI_TAG_PKT, t->comm,
                  &t->reqs[i]) != MPI_SUCCESS) {
        t->slots[i].stage = stage;
        slot_put(t, i);
        fm_log(0, "mpi: MPI_Isend of %zu bytes to rank %d failed", len, dest);
        return FM_ERR_PROVIDER;
    }
    t->slots[i] = (fm_mpi_slot){
        .ctx = ctx, .buf = (void *)buf, .stage = stage, .len = len, .kind = FM_TP_SEND_DONE};
    return FM_OK;
}

int fm_mpi_send(fm_tp *tp, int dest, const void *buf, size_t len, fm_tp_mr *mr, void *ctx)
{
    (void)mr;
    return start_send(fm_mpi_of(tp), dest, buf, len, NULL, ctx);
}

/* MPI sends one contiguous buffer here (a derived datatype would make MPI copy anyway): the
 * two parts are joined into a buffer of the send's own. */
int fm_mpi_sendv(fm_tp *tp, int dest, const void *hdr, size_t hlen, fm_tp_mr *hmr,
                 const void *payload, size_t plen, fm_tp_mr *pmr, void *ctx)
{
    (void)hmr;
    (void)pmr;
    unsigned char *stage = malloc(hlen + plen ? hlen + plen : 1);
    if (!stage)
        return FM_ERR_NOMEM;
    if (hlen)
        memcpy(stage, hdr, hlen);
    if (plen)
        memcpy(stage + hlen, payload, plen);
    return start_send(fm_mpi_of(tp), dest, hlen ? hdr : payload, hlen + plen, stage, ctx);
}

/* One MPI_Irecv from any sender into buf (len bytes): a posted receive, or a region's place
 * (region set). */
static int start_recv(fm_mpi_tp *t, void *buf, size_t len, void *ctx, fm_mpi_region *region)
{
    int i = slot_take(t);
    if (i < 0)
        return FM_ERR_NOMEM;
    if (MPI_Irecv(buf, (int)len, MPI_BYTE, MPI_ANY_SOURCE, FM_MPI_TAG_PKT, t->comm, &t->reqs[i]) !=
        MPI_SUCCESS) {
        slot_put(t, i);
        fm_log(0, "mpi: MPI_Irecv failed");
        return FM_ERR_PROVIDER;
    }
    t->slots[i] = (fm_mpi_slot){.ctx = ctx,
                                .buf = buf,
                                .len = len,
                                .kind = region ? FM_TP_RECV_MULTI : FM_TP_RECV_DONE,
                                .region = region};
    return FM_OK;
}

int fm_mpi_post_recv(fm_tp *tp, void *buf, size_t len, fm_tp_mr *mr, void *ctx)
{
    (void)mr;
    if (!buf || len > (size_t)INT32_MAX)
        return FM_ERR_INVALID;
    return start_recv(fm_mpi_of(tp), buf, len, ctx, NULL);
}

/* Post the pending regions' places, oldest first, while fewer than FM_MPI_MAX_POSTED are. A
 * place that cannot be posted stays pending: tried again at the next completion or poll. */
static int post_pending(fm_mpi_tp *t)
{
    while (t->pend && t->places_posted < FM_MPI_MAX_POSTED) {
        fm_mpi_region *g = t->pend;
        int rc = start_recv(t, (unsigned char *)g->buf + (size_t)g->posted * g->each, g->each,
                            g->ctx, g);
        if (rc) {
            fm_log(1, "mpi: posting a receive failed; retried as requests complete");
            return rc;
        }
        t->places_posted++;
        if (++g->posted == g->places && !(t->pend = g->next))
            t->pend_last = NULL;
    }
    return FM_OK;
}

/* Before a collect: the pending places again; an error only when nothing else is outstanding
 * (nothing to wait for, and the receives cannot be posted). */
static int repost(fm_mpi_tp *t)
{
    return t->pend && post_pending(t) != FM_OK && !outstanding(t) ? FM_ERR_PROVIDER : FM_OK;
}

int fm_mpi_post_recv_multi(fm_tp *tp, void *buf, size_t len, fm_tp_mr *mr, void *ctx)
{
    fm_mpi_tp *t = fm_mpi_of(tp);
    (void)mr;
    if (!buf || !t->place || len < t->place || t->place > (size_t)INT32_MAX)
        return FM_ERR_INVALID;
    fm_mpi_region *g = calloc(1, sizeof *g);
    if (!g)
        return FM_ERR_NOMEM;
    size_t places = len / t->place;
    if (places > FM_MPI_MAX_PLACES)
        places = FM_MPI_MAX_PLACES;
    size_t each = len / places; /* >= t->place; at most INT32_MAX, as MPI counts take */
    if (each > (size_t)INT32_MAX)
        each = (size_t)INT32_MAX;
    *g = (fm_mpi_region){.ctx = ctx, .buf = buf, .each = each, .places = (int)places};
    if (t->pend_last)
        t->pend_last->next = g;
    else
        t->pend = g;
    t->pend_last = g;
    int rc = post_pending(t);
    if (rc && t->pend == g && g->posted == 0) { /* nothing of it posted: not taken (it was */
        t->pend = t->pend_last = NULL;          /* then the only region pending) */
        free(g);
        return rc;
    }
    return FM_OK; /* (what is left of it, or of older regions, waits for a completion) */
}

/* One completed request as an event, its slot freed. */
static fm_tp_event finish(fm_mpi_tp *t, int i, const MPI_Status *st)
{
    fm_mpi_slot *s = &t->slots[i];
    fm_tp_event e = {.kind = s->kind, .status = FM_OK, .ctx = s->ctx, .buf = s->buf, .len = s->len};
    if (s->kind == FM_TP_RECV_DONE || s->kind == FM_TP_RECV_MULTI) {
        int count = 0;
        if (st->MPI_ERROR == MPI_ERR_TRUNCATE) {
            e.status = FM_ERR_TOO_LONG; /* longer than any packet of this job: not ours */
        } else if (st->MPI_ERROR != MPI_SUCCESS) {
            e.status = FM_ERR_PROVIDER;
        } else {
            MPI_Get_count(st, MPI_BYTE, &count);
            e.len = (size_t)count;
            charge(t->cost_recv);
        }
    } else if (st->MPI_ERROR != MPI_SUCCESS) {
        e.status = FM_ERR_PEER;
    }
    slot_put(t, i);
    return e;
}

/* Queue what MPI_Testsome or MPI_Waitsome reported (out of t->idx and t->st); a region's
 * last message is followed by its release, and a place that took one lets another be posted.
 * (ready is empty here and has room for two events per request: a message and its region's
 * release.) */
static void take(fm_mpi_tp *t, int out)
{
    if (t->ready_at == t->nready)
        t->ready_at = t->nready = 0;
    for (int k = 0; k < out; k++) {
        fm_mpi_region *g = t->slots[t->idx[k]].region;
        t->ready[t->nready++] = finish(t, t->idx[k], &t->st[k]);
        t->places_posted -= g != NULL;
        if (g && ++g->landed == g->places) {
            t->ready[t->nready++] = (fm_tp_event){
                .kind = FM_TP_RECV_REGION_DONE, .status = FM_OK, .ctx = g->ctx, .buf = g->buf};
            free(g);
        }
    }
    post_pending(t); /* (a failure is retried at the next completion or poll) */
}

/* Room in t->ready for what a collect may report: those not yet returned moved to the front. */
static void compact_ready(fm_mpi_tp *t)
{
    if (t->ready_at > 0 && t->ready_at < t->nready) {
        memmove(t->ready, t->ready + t->ready_at,
                (size_t)(t->nready - t->ready_at) * sizeof *t->ready);
        t->nready -= t->ready_at;
        t->ready_at = 0;
    }
}

#if FM_HAVE_SMPI
/* Under SimGrid (3.32) no request is completed by a test: a request that MPI_Test*, or
 * MPI_Waitsome past its first, finds complete stays on its simulated process's list of
 * activities for good, and the simulator walks that list at every later completion (a
 * 1024-rank run spent a quarter of its time there, growing with every packet). A wait
 * removes it. So completions are taken one at a time by MPI_Waitany, which returns the first
 * complete request of the array: over the table alone when blocking, and when polling over
 * the table followed by the tick, a zero-byte synchronous send to this rank itself that
 * completes at once in simulated time. The tick coming back means nothing before it was
 * complete; it is then posted again. */
static int tick_post(fm_mpi_tp *t)
{
    static char none;
    if (MPI_Irecv(&none, 0, MPI_BYTE, t->self, FM_MPI_TAG_TICK, t->comm, &t->tick[0]) !=
            MPI_SUCCESS ||
        MPI_Issend(&none, 0, MPI_BYTE, t->self, FM_MPI_TAG_TICK, t->comm, &t->tick[1]) !=
            MPI_SUCCESS) {
        fm_log(0, "mpi: posting the tick failed");
        return FM_ERR_PROVIDER;
    }
    return FM_OK;
}

/* One MPI_Waitany over the table (and the tick at its end when tick); 1 when a request of the
 * table completed (queued), 0 when the tick did (posted again). */
static int wait_one(fm_mpi_tp *t, int tick)
{
    int n = t->hi, at = MPI_UNDEFINED;
    memcpy(t->wreqs, t->reqs, (size_t)n * sizeof *t->reqs);
    if (tick)
        t->wreqs[n++] = t->tick[0];
    int rc = MPI_Waitany(n, t->wreqs, &at, &t->st[0]);
    if (at == MPI_UNDEFINED) {
        if (rc == MPI_SUCCESS)
            return 0;
        fm_log(0, "mpi: MPI_Waitany failed (%d)", rc);
        return FM_ERR_PROVIDER;
    }
    if (tick && at == t->hi) { /* the send half is complete with it: its wait returns at once */
        t->tick[0] = MPI_REQUEST_NULL;
        if (MPI_Wait(&t->tick[1], MPI_STATUS_IGNORE) != MPI_SUCCESS)
            return FM_ERR_PROVIDER;
        return tick_post(t);
    }
    t->reqs[at] = t->wreqs[at];
    t->st[0].MPI_ERROR = rc; /* (a truncated message's error comes back as the call's) */
    t->idx[0] = at;
    take(t, 1);
    return 1;
}

/* Completions into t->ready; wait: block until there is one. A poll takes one completion
 * at most: a packet's receive cost is charged as it is taken, and a real rank pays it while
 * handling that packet, between forwarding the one before and the one after; taking a whole
 * window at once charged every receive before the runtime could forward the first. */
static int collect(fm_mpi_tp *t, int wait)
{
    int rc = FM_OK;
    if (repost(t) != FM_OK)
        return FM_ERR_PROVIDER;
    if (!outstanding(t))
        return FM_OK;
    compact_ready(t);
    if (wait)
        rc = wait_one(t, 0);
    else if (t->tick[0] != MPI_REQUEST_NULL || (rc = tick_post(t)) == FM_OK)
        rc = wait_one(t, 1);
    return rc < 0 ? rc : FM_OK;
}
#else
/* Completions into t->ready; wait: block until there is one. */
static int collect(fm_mpi_tp *t, int wait)
{
    int out = 0;
    if (repost(t) != FM_OK)
        return FM_ERR_PROVIDER;
    if (!outstanding(t))
        return FM_OK;
    compact_ready(t); /* reported completions must fit beside those not yet returned */
    int rc = wait ? MPI_Waitsome(t->hi, t->reqs, &out, t->idx, t->st)
                  : MPI_Testsome(t->hi, t->reqs, &out, t->idx, t->st);
    if (rc != MPI_SUCCESS && rc != MPI_ERR_IN_STATUS) {
        fm_log(0, "mpi: %s failed (%d)", wait ? "MPI_Waitsome" : "MPI_Testsome", rc);
        return FM_ERR_PROVIDER;
    }
    if (rc == MPI_SUCCESS)
        for (int k = 0; k < out && out != MPI_UNDEFINED; k++)
            t->st[k].MPI_ERROR = MPI_SUCCESS; /* only set by MPI_ERR_IN_STATUS */
    if (out != MPI_UNDEFINED)
        take(t, out);
    return FM_OK;
}
#endif

int fm_mpi_poll(fm_tp *tp, fm_tp_event *ev, int max)
{
    fm_mpi_tp *t = fm_mpi_of(tp);
    if (max <= 0)
        return 0;
    if (t->ready_at == t->nready) {
        int rc = collect(t, 0);
        if (rc)
            return rc;
    }
    int n = 0;
    while (n < max && t->ready_at < t->nready)
        ev[n++] = t->ready[t->ready_at++];
    return n;
}

/* Until something completes, at most timeout_s. Under SimGrid MPI_Waitany: simulated time
 * passes only while every process is blocked in the simulator, so a polling loop would
 * stand still (and a deadlock is the simulator's to report). Elsewhere MPI_Testsome with the
 * core given away between tries, bounded by the timeout, since MPI_Waitsome spins in most
 * MPIs and cannot be interrupted. */
int fm_mpi_block(fm_tp *tp, double timeout_s)
{
    fm_mpi_tp *t = fm_mpi_of(tp);
    if (t->ready_at < t->nready || !outstanding(t))
        return FM_OK;
#if FM_HAVE_SMPI
    (void)timeout_s;
    return collect(t, 1);
#else
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    double end = (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec + timeout_s;
    for (unsigned i = 0;; i++) {
        int rc = collect(t, 0);
        clock_gettime(CLOCK_MONOTONIC, &ts);
        if (rc || t->ready_at < t->nready || (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec >= end)
            return rc;
        if (i < 64) {
            sched_yield();
        } else {
            struct timespec nap = {0, 20000};
            nanosleep(&nap, NULL);
        }
    }
#endif
}

int fm_mpi_trywait(fm_tp *tp)
{
    fm_mpi_tp *t = fm_mpi_of(tp);
    return t->ready_at < t->nready ? FM_EAGAIN : FM_OK;
}

/* Regions with places never posted: those never land, so the region is released by its posted
 * ones (cancelled at close), or now when it has none outstanding. */
void fm_mpi_drop_pending(fm_mpi_tp *t)
{
    while (t->pend) {
        fm_mpi_region *g = t->pend;
        t->pend = g->next;
        g->places = g->posted;
        if (g->places == g->landed)
            free(g);
    }
    t->pend_last = NULL;
}

/* Close: posted receives are cancelled; sends still in flight are left to MPI; the tick, a
 * message to this rank itself, completes. */
void fm_mpi_cancel_all(fm_mpi_tp *t)
{
    MPI_Waitall(2, t->tick, MPI_STATUSES_IGNORE);
    fm_mpi_drop_pending(t);
    for (int i = 0; i < t->hi; i++) {
        if (t->reqs[i] == MPI_REQUEST_NULL)
            continue;
        if (t->slots[i].kind != FM_TP_SEND_DONE) {
            fm_mpi_region *g = t->slots[i].region;
            MPI_Cancel(&t->reqs[i]);
            MPI_Wait(&t->reqs[i], MPI_STATUS_IGNORE);
            if (g && ++g->landed == g->places)
                free(g);
        } else {
            MPI_Request_free(&t->reqs[i]);
            t->slots[i].stage = NULL; /* MPI may still read it: left, not freed */
        }
    }
}
