/* SPDX-License-Identifier: BSD-3-Clause */
/* Fuzz target: what a ring of fastmsg's shared-memory transport can hold (providers/sm). A
 * peer writes its ring in this rank's segment directly, so every byte of it is untrusted. Two
 * endpoints live in this process; the input becomes rank 0's ring at rank 1 and rank 0's chunk
 * pool, then rank 1 polls. Whatever the bytes, the reader must neither crash nor read outside
 * its segment, its peer's or a posted buffer (ASan), and must hand out only packets that fit
 * the buffers posted, and loans (fm_tp_config.lend) only of bytes inside the peer's chunk
 * pool.
 *
 * Input: 2 bytes (little-endian) choose the line the reader starts at (so records meet the
 * ring's end and its wrap), the next 4096 bytes are the ring from there on, the rest is the
 * start of rank 0's chunk pool. */
#include <string.h>

#include "fuzz.h"
#include "sm/sm_internal.h"

#include "fastmsg.h"

#define NRECV     8
#define RBUF      4096
#define RING_PART 4096

static fm_tp *tp[2];
static unsigned char rbuf[NRECV][RBUF];

static void setup(void)
{
    char err[256];
    unsigned char table[2 * 64];
    fm_tp_config cfg = {
        .provider = "sm", .all_local = 1, .host_ranks = 2, .name = "fuzz", .lend = 1};
    for (int i = 0; i < 2; i++) {
        size_t len = 64;
        FUZZ_CHECK(fm_sm_open(&cfg, &tp[i], err, sizeof err) == FM_OK);
        FUZZ_CHECK(tp[i]->ops->addr(tp[i], table + 64 * i, &len) == FM_OK);
    }
    for (int i = 0; i < 2; i++)
        FUZZ_CHECK(tp[i]->ops->connect(tp[i], table, 64, 2) == FM_OK);
}

/* Rank 1 forgets everything about rank 0's ring: a fresh ring, a fresh sender. */
static void reset(fm_sm_tp *r, uint64_t start)
{
    fm_sm_peer *p = &r->peers[0];
    p->head = p->head_published = start;
    p->seq_expected = 1;
    p->broken = 0;
    p->asm_rx = NULL;
    p->lent = NULL;
    r->rx_first = r->rx_count = 0;
    fm_sm_tagged_free(r);
    for (int i = 0; i < NRECV; i++)
        FUZZ_CHECK(r->base.ops->post_recv(&r->base, rbuf[i], RBUF, NULL, rbuf[i]) == FM_OK);
    memset(fm_sm_ring(&r->lay, r->seg, 0), 0, r->lay.ring_bytes);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (!tp[0])
        setup();
    fm_sm_tp *r = fm_sm_of(tp[1]), *s = fm_sm_of(tp[0]);
    const uint32_t ring_bytes = r->lay.ring_bytes;
    uint64_t start = 0;
    if (size >= 2) {
        start = ((uint64_t)data[0] | (uint64_t)data[1] << 8) * FM_SM_LINE % ring_bytes;
        data += 2;
        size -= 2;
    }
    reset(r, start);
    unsigned char *ring = fm_sm_ring(&r->lay, r->seg, 0);
    size_t n = size < RING_PART ? size : RING_PART;
    for (size_t k = 0; k < n; k++)
        ring[(start + k) % ring_bytes] = data[k];
    size_t rest = size - n, pool = (size_t)s->lay.nchunks * s->lay.chunk_bytes;
    memcpy(fm_sm_chunk(&s->lay, s->seg, 0), data + n, rest < pool ? rest : pool);
    /* Every chunk held, as a sender's shared payloads hold them: chunk records get read, and
     * reads past the count are refused, never wrapped. */
    for (uint32_t c = 0; c < s->lay.nchunks; c++)
        atomic_store(&fm_sm_flag(&s->lay, s->seg, c)->busy, 4);

    fm_tp_event ev[4];
    for (int round = 0; round < 64; round++) {
        int got = tp[1]->ops->poll(tp[1], ev, 4);
        FUZZ_CHECK(got >= 0 && got <= 4);
        if (!got)
            break;
        for (int e = 0; e < got; e++) {
            /* No tagged receive is posted, and rank 1 sent nothing: only packets come. */
            FUZZ_CHECK(ev[e].kind == FM_TP_RECV_DONE);
            unsigned char *b = ev[e].ctx;
            FUZZ_CHECK(b >= rbuf[0] && b <= rbuf[NRECV - 1] && (size_t)(b - rbuf[0]) % RBUF == 0);
            FUZZ_CHECK(ev[e].status != FM_OK || ev[e].len <= RBUF);
            if (ev[e].lent) { /* within rank 0's pool as rank 1 maps it, then given back */
                const unsigned char *pool = fm_sm_chunk(&r->lay, r->peers[0].base, 0);
                size_t pool_bytes = (size_t)r->lay.nchunks * r->lay.chunk_bytes;
                FUZZ_CHECK(ev[e].status == FM_OK && ev[e].lent_at <= ev[e].len);
                FUZZ_CHECK(ev[e].lent >= pool &&
                           ev[e].len - ev[e].lent_at <= pool_bytes - (size_t)(ev[e].lent - pool));
                tp[1]->ops->lend_release(tp[1], ev[e].lend);
            }
            FUZZ_CHECK(tp[1]->ops->post_recv(tp[1], b, RBUF, NULL, b) == FM_OK);
        }
    }
    return 0;
}
