/* SPDX-License-Identifier: BSD-3-Clause */
/* The sm provider: its line in the provider table, open (this rank's segment), addr and
 * connect (the peers' segments), close. */
#include "sm_internal.h"

#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "fastmsg.h"
#include "log.h"

static int sm_addr(fm_tp *tp, void *buf, size_t *len)
{
    fm_sm_tp *t = fm_sm_of(tp);
    fm_sm_addr a = {.magic = FM_SM_MAGIC,
                    .nonce = t->nonce,
                    .pid = (int32_t)getpid(),
                    .memfd = t->memfd,
                    .bell = t->bell[1],
                    .nslots = t->lay.nslots};
    if (!buf || !len || *len < sizeof a)
        return FM_ERR_INVALID;
    memcpy(buf, &a, sizeof a);
    *len = sizeof a;
    return FM_OK;
}

static int sm_connect(fm_tp *tp, const void *addrs, size_t addrlen, int n)
{
    fm_sm_tp *t = fm_sm_of(tp);
    int rc = FM_OK;
    FM_CHECK(addrs && addrlen >= sizeof(fm_sm_addr) && n > 0 && !t->peers, FM_ERR_INVALID,
             "sm: connect: bad arguments");
    FM_CHECK((uint32_t)n == t->lay.nslots, FM_ERR_PROVIDER,
             "sm: the job has %d ranks, %u of them on this host: sm carries jobs on one host "
             "only (FM_PROVIDER=tcp for more)",
             n, t->lay.nslots);
    t->peers = calloc((size_t)n, sizeof *t->peers);
    t->asm_slots = calloc((size_t)n, sizeof *t->asm_slots);
    FM_CHECK(t->peers && t->asm_slots, FM_ERR_NOMEM, "sm: out of memory for %d peers", n);
    t->n = n;
    for (int r = 0; r < n; r++) {
        t->peers[r].bell = -1;
        t->peers[r].seq = t->peers[r].seq_expected = 1;
        t->peers[r].rx_ring = fm_sm_ring(&t->lay, t->seg, r);
    }
    t->rank = -1;
    for (int r = 0; r < n; r++) {
        fm_sm_addr a;
        memcpy(&a, (const unsigned char *)addrs + (size_t)r * addrlen, sizeof a);
        FM_CHECK(a.magic == FM_SM_MAGIC && a.nslots == t->lay.nslots, FM_ERR_PROVIDER,
                 "sm: rank %d's address is not an sm address of this job", r);
        if (a.pid == (int32_t)getpid() && a.nonce == t->nonce)
            t->rank = r;
    }
    FM_CHECK(t->rank >= 0, FM_ERR_PROVIDER, "sm: this rank's address is not among the job's");
    for (int r = 0; r < n; r++) {
        fm_sm_addr a;
        memcpy(&a, (const unsigned char *)addrs + (size_t)r * addrlen, sizeof a);
        rc = fm_sm_segment_attach(t, &a, &t->peers[r], r);
        if (rc)
            goto error;
        t->peers[r].tx_ring = fm_sm_ring(&t->lay, t->peers[r].base, t->rank);
    }
    t->base.info.tagged = fm_sm_cma_probe(t);
    fm_log(1, "sm: rank %d mapped %d segments of %zu bytes (rings of %u bytes, %u chunks of %u)%s",
           t->rank, n, t->lay.bytes, t->lay.ring_bytes, t->lay.nchunks, t->lay.chunk_bytes,
           t->base.info.tagged ? ", single copy for large pieces" : "");
    return FM_OK;
error:
    return rc;
}

static int sm_mem_reg(fm_tp *tp, void *buf, size_t len, fm_tp_mr **mr)
{
    (void)tp;
    (void)buf;
    (void)len;
    if (mr)
        *mr = NULL;
    return FM_OK;
}

static void sm_mem_dereg(fm_tp *tp, fm_tp_mr *mr)
{
    (void)tp;
    (void)mr;
}

static void sm_destroy(fm_sm_tp *t)
{
    if (t->base.shared)
        fm_log(1, "sm: rank %d sent %llu copies from shared payloads (%u chunks still held)",
               t->rank, (unsigned long long)t->base.shared, t->share_chunks);
    fm_sm_ops_free(t);
    fm_sm_recv_free(t);
    fm_sm_tagged_free(t);
    fm_sm_segment_close(t);
    free(t->asm_slots);
    free(t->peers);
    free(t);
}

static void sm_close(fm_tp *tp)
{
    if (tp)
        sm_destroy(fm_sm_of(tp));
}

static const struct fm_tp_ops fm_sm_ops = {
    .name = "sm",
    .addr = sm_addr,
    .connect = sm_connect,
    .mem_reg = sm_mem_reg,
    .mem_dereg = sm_mem_dereg,
    .send = fm_sm_send,
    .sendv = fm_sm_sendv,
    .sendv_shared = fm_sm_sendv_shared,
    .share_release = fm_sm_share_release,
    .lend_release = fm_sm_lend_release,
    .post_recv = fm_sm_post_recv,
    .post_recv_multi = fm_sm_post_recv_multi,
    .tsend = fm_sm_tsend,
    .trecv = fm_sm_trecv,
    .poll = fm_sm_poll,
    .wait_fd = fm_sm_wait_fd,
    .trywait = fm_sm_trywait,
    .close = sm_close,
};

static void describe(fm_sm_tp *t, const fm_tp_config *cfg)
{
    fm_tp_info *in = &t->base.info;
    snprintf(in->provider, sizeof in->provider, "sm");
    snprintf(in->fabric, sizeof in->fabric, "shared memory");
    in->inject_size = FM_SM_MAX_MSG; /* every send completes at once unless a ring is full */
    in->max_msg_size = FM_SM_MAX_MSG;
    in->ordered = 1; /* one ring per sender, read in order */
    in->sendv = 1;
    in->wait_fd = 1;
    in->local_only = 1;
    in->local_peers = 1;
    /* Regions cost nothing here: a packet is copied out of a ring wherever it is told. */
    in->multi_recv = cfg->multi_recv_min > 0;
    /* Measured on 2 cores (bench/README.md, sm): the chunk pipeline beats the rendezvous and
     * process_vm_readv at every size from 32 KiB to 16 MiB, so tagged messages are used only
     * where FM_ZCOPY asks for them. */
    in->zcopy_from = SIZE_MAX;
    t->multi_min = cfg->multi_recv_min;
    t->lend = cfg->lend;
}

int fm_sm_open(const fm_tp_config *cfg, fm_tp **tp, char *err, size_t errlen)
{
    fm_sm_tp *t = NULL;
    int rc = FM_OK;
    FM_TP_CHECK(cfg && tp, FM_ERR_INVALID, "sm: open needs a config and a result pointer");
    *tp = NULL;
    FM_TP_CHECK(cfg->host_ranks > 0, FM_ERR_PROVIDER,
                "sm: the number of ranks on this host is not known");
    t = calloc(1, sizeof *t);
    FM_TP_CHECK(t, FM_ERR_NOMEM, "sm: out of memory");
    t->base.ops = &fm_sm_ops;
    t->memfd = t->bell[0] = t->bell[1] = -1;
    fm_sm_shares_init(t);
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    t->nonce = ((uint64_t)getpid() << 32) ^ (uint64_t)ts.tv_nsec ^ ((uint64_t)ts.tv_sec << 20) ^
               (uint64_t)(uintptr_t)t;
    rc = fm_sm_segment_create(t, (uint32_t)cfg->host_ranks, cfg->name, err, errlen);
    if (rc)
        goto error;
    t->inline_max =
        t->lay.ring_bytes / 8 < FM_SM_INLINE_MAX ? t->lay.ring_bytes / 8 : FM_SM_INLINE_MAX;
    t->inline_max -= 8; /* the record's first word */
    describe(t, cfg);
    *tp = &t->base;
    return FM_OK;
error:
    if (t)
        sm_destroy(t);
    return rc;
}

static int sm_serves(const char *provider)
{
    return !strcmp(provider, "sm");
}

static int sm_fits(const fm_tp_config *cfg, int ranks, char *err, size_t errlen)
{
    (void)ranks;
    if (cfg->all_local)
        return FM_OK;
    snprintf(err, errlen, "sm carries jobs on one host only, and this job spans hosts");
    return FM_ERR_PROVIDER;
}

static void sm_list(char *buf, size_t len)
{
    snprintf(buf, len, "shared memory (memfd segments, pipe wake-ups)");
}

const fm_tp_provider fm_sm_provider = {
    .name = "sm",
    .serves = sm_serves,
    .check = NULL,
    .fits = sm_fits,
    .open = fm_sm_open,
    .list = sm_list,
};
