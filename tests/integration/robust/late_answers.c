/* SPDX-License-Identifier: BSD-3-Clause */
/* late_answers: answers started while fm_finalize's barrier runs must not hold up the job.
 *
 * Two ranks, run with FM_CREDITS=2. Rank 1 calls fm_finalize at once and waits in its
 * barrier. Rank 0 sleeps a moment (so that rank 1 is surely in it), sends one message and
 * calls fm_finalize. Rank 1's handler for it answers with --answers messages (a handler never
 * waits: two leave with the credits, the rest wait for more). Rank 0 is then past its barrier
 * and returns no credit any more, then waits in the bootstrap's fence; rank 1's barrier ends
 * with rank 0's signal. Its last drain must drop the answers still waiting, not wait for
 * credits until FM_TIMEOUT: both fm_finalize calls return FM_OK and each rank prints
 * "PASS late_answers". */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "fastmsg.h"

static int answers = 16, handler, answered, queued;
static fm_context *ctx;

static int on_message(fm_stream *s, int sender, void *arg)
{
    (void)arg;
    char b[8];
    if (fm_receive(s, b, sizeof b) < 0)
        return FM_DONE;
    if (fm_rank(ctx) == 1 && !answered) { /* the question: answer, from inside the handler */
        answered = 1;
        for (int i = 0; i < answers; i++) {
            fm_stream *a;
            if (fm_begin_message(ctx, sender, sizeof b, handler, &a) != FM_OK)
                break; /* (no send buffer free: a handler gets FM_EAGAIN) */
            if (fm_send_piece(a, b, sizeof b) != FM_OK || fm_end_message(a) != FM_OK)
                break;
            queued++;
        }
    }
    return FM_DONE;
}

static int fail(const char *what, int rc)
{
    fprintf(stderr, "late_answers: rank %d: %s: %s\n", ctx ? fm_rank(ctx) : -1, what,
            fm_strerror(rc));
    return 1;
}

int main(int argc, char **argv)
{
    if (argc > 2 && strcmp(argv[1], "--answers") == 0)
        answers = atoi(argv[2]);
    int rc = fm_init(&ctx);
    if (rc)
        return fail("fm_init", rc);
    if (fm_size(ctx) != 2)
        return fail("needs exactly 2 ranks", FM_ERR_INVALID);
    int me = fm_rank(ctx);
    if ((handler = fm_add_handler(ctx, on_message, NULL)) < 0)
        return fail("fm_add_handler", handler);
    if ((rc = fm_barrier(ctx)))
        return fail("fm_barrier", rc);
    if (me == 0) {
        usleep(300 * 1000); /* rank 1 is in fm_finalize's barrier by now */
        fm_stream *s;
        char q[8] = "question";
        if ((rc = fm_begin_message(ctx, 1, sizeof q, handler, &s)) ||
            (rc = fm_send_piece(s, q, sizeof q)) || (rc = fm_end_message(s)))
            return fail("sending the question", rc);
    }
    rc = fm_finalize(ctx);
    ctx = NULL;
    if (rc) {
        fprintf(stderr, "late_answers: rank %d: fm_finalize: %s\n", me, fm_strerror(rc));
        return 1;
    }
    if (me == 1 && queued <= 2) { /* (the case was not made: nothing waited for credits) */
        fprintf(stderr, "late_answers: rank 1 sent only %d answers\n", queued);
        return 1;
    }
    printf("PASS late_answers rank %d (answers sent from the handler: %d)\n", me, queued);
    return 0;
}
