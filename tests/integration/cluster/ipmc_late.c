/* SPDX-License-Identifier: BSD-3-Clause */
/* ipmc_late: a two-stage multicast on a group that one member creates only after its
 * datagrams went by. Rank 0 multicasts LEN bytes down tree "ipmc" on the group of every rank;
 * rank 1 drives progress for a while before it creates the group (the datagrams reach it then:
 * it cannot tell it is a member, drops and counts them), then creates it: its predecessor's
 * offers must bring the whole message over the ring. Every member checks every byte; rank 1
 * also checks that it did drop datagrams and got the bytes as repairs (so the case happened).
 *   fastmsg-run -n N ipmc_late        (N >= 3, FM_MCAST_DGRAM=on, ranks on several hosts) */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "../stream/common.h"

#define LEN ((size_t)100003)

static int got, bad;

static unsigned char byte_at(size_t i)
{
    return (unsigned char)(i * 7 + 3);
}

static void delivered(void *buf, size_t len, int status, int sender, void *arg)
{
    (void)arg;
    const unsigned char *b = buf;
    int ok = status == FM_OK && len == LEN && sender == 0;
    for (size_t i = 0; ok && i < len; i++)
        ok = b[i] == byte_at(i);
    got += ok;
    bad += !ok;
    free(buf);
}

static int on_msg(fm_stream *s, int sender, void *arg)
{
    (void)sender;
    return fm_stream_deliver(s, malloc(LEN), LEN, delivered, arg) ? FM_DONE : FM_CONTINUE;
}

static double now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

int main(void)
{
    fm_context *ctx = st_init();
    int me = fm_rank(ctx), n = fm_size(ctx), h = fm_add_handler(ctx, on_msg, NULL);
    int *all = malloc(sizeof(int) * (size_t)n);
    for (int r = 0; r < n; r++)
        all[r] = r;
    fm_group *g = NULL;
    if (h < 0 || n < 3)
        st_fail("a handler, and 3 ranks or more");
    if (me != 1 && fm_group_create(ctx, all, n, &g))
        st_fail("fm_group_create");
    if (fm_barrier(ctx))
        st_fail("barrier");
    if (me == 0) {
        unsigned char *b = malloc(LEN);
        for (size_t i = 0; i < LEN; i++)
            b[i] = byte_at(i);
        fm_stream *s;
        int rc = fm_mcast_begin(g, "ipmc", 0, LEN, h, &s);
        if (rc || (rc = fm_send_piece(s, b, LEN)) || (rc = fm_end_message(s)))
            st_fail("the multicast: %s", fm_strerror(rc));
        free(b);
    } else if (me == 1) {
        /* Progress without the group for a while: the datagrams arrive and are dropped. */
        for (double end = now() + 0.3; now() < end;)
            if (fm_extract(ctx, 0) < 0)
                st_fail("fm_extract");
        if (fm_group_create(ctx, all, n, &g))
            st_fail("fm_group_create, late");
    }
    for (double end = now() + 30; me != 0 && got + bad < 1 && now() < end;)
        if (fm_wait(ctx, 100) < 0)
            st_fail("fm_wait");
    if (me != 0 && (got != 1 || bad))
        st_fail("%d whole and %d wrong copies, want 1 whole", got, bad);
    fm_stats st;
    fm_get_stats(ctx, &st);
    if (me == 1 && (st.dgram_dropped == 0 || st.ring_repair_bytes_received == 0))
        st_fail("rank 1 dropped %llu datagrams and got %llu bytes of repairs: the late group's "
                "case did not happen",
                (unsigned long long)st.dgram_dropped,
                (unsigned long long)st.ring_repair_bytes_received);
    if (fm_barrier(ctx))
        st_fail("barrier");
    fm_group_destroy(g);
    free(all);
    return st_finish(ctx, "ipmc_late");
}
