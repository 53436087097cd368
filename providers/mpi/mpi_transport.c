/* SPDX-License-Identifier: BSD-3-Clause */
/* The mpi provider: its line in the provider table, open (a communicator of its own), addr
 * and connect (ranks of MPI_COMM_WORLD), close. Packets over MPI point-to-point wherever an
 * MPI runs the job, and the provider fastmsg runs on under SimGrid's SMPI (bench/sim). */
#include "mpi_internal.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fastmsg.h"
#include "fm_build_config.h"
#include "log.h"

static int mpi_addr(fm_tp *tp, void *buf, size_t *len)
{
    fm_mpi_tp *t = fm_mpi_of(tp);
    int32_t me = t->self;
    if (!buf || !len || *len < sizeof me)
        return FM_ERR_INVALID;
    memcpy(buf, &me, sizeof me);
    *len = sizeof me;
    return FM_OK;
}

static int mpi_connect(fm_tp *tp, const void *addrs, size_t addrlen, int n)
{
    fm_mpi_tp *t = fm_mpi_of(tp);
    int size = 0, rc = FM_OK;
    MPI_Comm_size(t->comm, &size);
    FM_CHECK(addrs && addrlen >= sizeof(int32_t) && n > 0 && !t->rank_of, FM_ERR_INVALID,
             "mpi: connect: bad arguments");
    t->rank_of = malloc((size_t)n * sizeof *t->rank_of);
    FM_CHECK(t->rank_of, FM_ERR_NOMEM, "mpi: out of memory for %d peers", n);
    for (int r = 0; r < n; r++) {
        int32_t a;
        memcpy(&a, (const unsigned char *)addrs + (size_t)r * addrlen, sizeof a);
        FM_CHECK(a >= 0 && a < size, FM_ERR_PROVIDER,
                 "mpi: rank %d's address (%d) is not a rank of MPI_COMM_WORLD (%d ranks)", r,
                 (int)a, size);
        t->rank_of[r] = a;
    }
    t->n = n;
error:
    return rc;
}

static int mpi_wait_fd(fm_tp *tp)
{
    (void)tp;
    return -1; /* MPI has none: idle waits block in MPI instead (block) */
}

static int mpi_unused_reg(fm_tp *tp, void *buf, size_t len, fm_tp_mr **mr)
{
    (void)tp;
    (void)buf;
    (void)len;
    *mr = NULL;
    return FM_OK;
}

static void mpi_unused_dereg(fm_tp *tp, fm_tp_mr *mr)
{
    (void)tp;
    (void)mr;
}

static void mpi_close(fm_tp *tp)
{
    fm_mpi_tp *t = fm_mpi_of(tp);
    int fin = 0;
    MPI_Finalized(&fin);
    if (!fin) {
        fm_mpi_cancel_all(t);
        if (t->comm != MPI_COMM_NULL && t->comm != MPI_COMM_WORLD)
            MPI_Comm_free(&t->comm);
    } else {
        fm_mpi_drop_pending(t); /* (what was posted is MPI's, gone with it) */
    }
    fm_mpi_table_free(t);
    free(t->rank_of);
    free(t);
}

static const struct fm_tp_ops fm_mpi_ops = {
    .name = "mpi",
    .addr = mpi_addr,
    .connect = mpi_connect,
    .mem_reg = mpi_unused_reg,
    .mem_dereg = mpi_unused_dereg,
    .send = fm_mpi_send,
    .sendv = fm_mpi_sendv,
    .post_recv = fm_mpi_post_recv,
    .post_recv_multi = fm_mpi_post_recv_multi,
    .tsend = NULL,
    .trecv = NULL,
    .poll = fm_mpi_poll,
    .wait_fd = mpi_wait_fd,
    .trywait = fm_mpi_trywait,
    .block = fm_mpi_block,
    .close = mpi_close,
};

/* "send=S,recv=S": seconds of simulated compute per packet sent and received. */
static int parse_costs(fm_mpi_tp *t, const char *s, char *err, size_t errlen)
{
    int rc = FM_OK;
    while (s && *s) {
        char key[8] = "";
        double v = -1;
        int used = 0;
        FM_TP_CHECK(sscanf(s, "%7[a-z]=%lf%n", key, &v, &used) == 2 && v >= 0 && v < 1,
                    FM_ERR_CONFIG, "FM_MPI_COSTS=\"%.60s\": want send=SECONDS,recv=SECONDS", s);
        if (!strcmp(key, "send"))
            t->cost_send = v;
        else if (!strcmp(key, "recv"))
            t->cost_recv = v;
        else
            FM_TP_CHECK(0, FM_ERR_CONFIG, "FM_MPI_COSTS: unknown cost \"%s\" (send, recv)", key);
        s += used;
        s += *s == ',';
    }
error:
    return rc;
}

static int mpi_open(const fm_tp_config *cfg, fm_tp **tp, char *err, size_t errlen)
{
    fm_mpi_tp *t = NULL;
    int rc = FM_OK, up = 0;
    FM_TP_CHECK(cfg && tp, FM_ERR_INVALID, "mpi: open needs a config and a result pointer");
    *tp = NULL;
    MPI_Initialized(&up);
    FM_TP_CHECK(up, FM_ERR_PROVIDER,
                "mpi: MPI is not initialized (FM_PROVIDER=mpi needs FM_BOOTSTRAP=mpi, or "
                "MPI_Init before fm_init)");
    t = calloc(1, sizeof *t);
    FM_TP_CHECK(t, FM_ERR_NOMEM, "mpi: out of memory");
    t->comm = MPI_COMM_NULL;
    t->base.ops = &fm_mpi_ops;
    rc = parse_costs(t, cfg->costs, err, errlen);
    if (rc)
        goto error;
    /* The table grows as requests come: rx_depth is the larger of two layouts, and only one
     * of them is posted. */
    FM_TP_CHECK(!fm_mpi_table_init(t, 256), FM_ERR_NOMEM, "mpi: out of memory");
#if FM_HAVE_SMPI
    /* SMPI makes a new communicator with an allgather around the ring (ranks^2 simulated
     * messages): MPI_COMM_WORLD itself, where only the simulated program sends anyway. */
    t->comm = MPI_COMM_WORLD;
#else
    /* Collective: every rank opens its transport at the same point of fm_init. */
    FM_TP_CHECK(MPI_Comm_dup(MPI_COMM_WORLD, &t->comm) == MPI_SUCCESS, FM_ERR_PROVIDER,
                "mpi: MPI_Comm_dup failed");
#endif
    MPI_Comm_set_errhandler(t->comm, MPI_ERRORS_RETURN);
    MPI_Comm_rank(t->comm, &t->self);
    fm_tp_info *in = &t->base.info;
    snprintf(in->provider, sizeof in->provider, "mpi");
#if FM_HAVE_SMPI
    snprintf(in->fabric, sizeof in->fabric, "SimGrid SMPI");
    in->simulated = 1;
#else
    snprintf(in->fabric, sizeof in->fabric, "MPI point-to-point");
#endif
    in->max_msg_size = INT32_MAX;
    in->ordered = 1; /* MPI's non-overtaking rule: one sender, one tag, one communicator */
    in->sendv = 0;
    in->multi_recv = cfg->multi_recv_min > 0;
    t->place = cfg->multi_recv_min;
    *tp = &t->base;
    return FM_OK;
error:
    if (t) {
        if (t->comm != MPI_COMM_NULL && t->comm != MPI_COMM_WORLD)
            MPI_Comm_free(&t->comm);
        fm_mpi_table_free(t);
        free(t);
    }
    return rc;
}

static int mpi_serves(const char *provider)
{
    return !strcmp(provider, "mpi");
}

static void mpi_list(char *buf, size_t len)
{
#if FM_HAVE_SMPI
    snprintf(buf, len, "MPI point-to-point (SimGrid SMPI: simulated)");
#else
    snprintf(buf, len, "MPI point-to-point");
#endif
}

const fm_tp_provider fm_mpi_provider = {
    .name = "mpi",
    .serves = mpi_serves,
    .check = NULL,
    .fits = NULL,
    .open = mpi_open,
    .list = mpi_list,
};
