/* SPDX-License-Identifier: BSD-3-Clause */
/* mcast_stress: round after round of multicasts from every root at once, every byte checked
 * on every member.
 *
 *   fastmsg-run -n N mcast_stress [--rounds R] [--per-root K] [--batch B] [--seed S]
 *       [--trees T1,T2,...] [--sizes S1,S2,...] [--how group|list|multi|mix]
 *       [--random] [--sets] [--fpfs] [--max-size BYTES] [--round-secs SECS]
 *
 * In each round every rank is the root of K multicasts, all sent at once after one barrier:
 * a root opens B of its streams at a time and writes them in turn, in odd pieces. Fixed mode
 * (the default) sends each to every rank, in a shuffled member order, taking trees and sizes
 * from the lists in turn. --random draws every multicast's size (0, 1, P-1, P, P+1 or up to
 * --max-size), member subset (2 to N ranks, shuffled, the root among them), tree, and how it
 * is sent (group, list, or fm_begin_message_multi; a list that does not fit in packet 0 goes
 * as a group) and, now and then, store-and-forward. Every draw comes from the seed (the job
 * key when not given: the seed is printed at the start, and with every failure, to replay
 * with --seed). STRESS_ROUNDS and STRESS_SEED in the environment override --rounds and --seed.
 *
 * Members take even-length messages with fm_stream_deliver and odd ones in odd fm_receive
 * chunks, check every byte, and check that each multicast arrives once, from its root, at its
 * members only. A round that is not complete after --round-secs ends the job (fm_abort) with
 * the cases still missing. Sizes may name P (FM_PACKET_SIZE). --sets: member lists in
 * ascending rank order, sent as lists (fastmsg carries them as compact sets of ranks, so any
 * member count fits packet 0), for destination sets with prefix routing. --fpfs: never
 * store-and-forward (which FM_MCAST_BUFFER=0 refuses). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "../stream/common.h"

#define MAX_TREES 16
#define MAX_SIZES 16
#define ALL       255 /* the "receiver" in the byte pattern: every member gets the same bytes */
#define H_ROUND   0   /* handler ids H_ROUND + round parity */

enum { HOW_GROUP, HOW_LIST, HOW_MULTI, HOW_MIX };
static const char *const how_names[] = {"group", "list", "multi", "mix"};

typedef struct sx_case {
    int root, tree, how, sf, n;
    size_t len;
    int *members;    /* the root among them, in member order */
    fm_group *group; /* HOW_GROUP, on its members */
    int mine;        /* this rank is a member other than the root */
    int got;
} sx_case;

/* One round's schedule: case c = root * K + k; byte 0 of its message is c. Two slots, by
 * round parity: messages of round r + 1 may arrive here before round r is over. */
typedef struct sx_round {
    int r, received, expected;
    sx_case *cases;
} sx_round;

static struct {
    int rounds, per_root, batch, random, sets, fpfs, how, round_secs;
    size_t max_size;
    unsigned seed;
    const char *trees[MAX_TREES];
    int ntrees;
    size_t sizes[MAX_SIZES];
    int nsizes;
} opt = {.rounds = 10, .per_root = 2, .batch = 2, .how = HOW_MIX, .round_secs = 60};

static fm_context *ctx;
static int me, nranks;
static size_t packet;
static sx_round slot[2];

/* ---- the schedule ---- */

static uint64_t mix64(uint64_t x)
{
    x += 0x9E3779B97F4A7C15ull;
    x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
    x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
    return x ^ (x >> 31);
}

/* Draws for round r, root, k: the same on every rank. */
static uint64_t draw(uint64_t *state)
{
    *state += 0x632BE59BD9B4E019ull;
    return mix64(*state);
}

static size_t random_size(uint64_t *g)
{
    switch (draw(g) % 8) {
    case 0:
        return 0;
    case 1:
        return 1;
    case 2:
        return packet - 1;
    case 3:
        return packet;
    case 4:
        return packet + 1;
    case 5:
        return draw(g) % (opt.max_size + 1);
    default: { /* small ones more often: log-uniform */
        unsigned bits = 1;
        while (bits < 40 && ((size_t)1 << bits) < opt.max_size)
            bits++;
        size_t v = (size_t)(draw(g) % ((uint64_t)1 << (draw(g) % (bits + 1))));
        return v > opt.max_size ? opt.max_size : v;
    }
    }
}

static int cmp_int(const void *a, const void *b)
{
    return *(const int *)a - *(const int *)b;
}

/* Members of c: all ranks or (random) 2..N of them, shuffled (--sets: ascending), the root
 * among them. */
static void draw_members(sx_case *c, uint64_t *g)
{
    int *all = malloc(sizeof(int) * (size_t)nranks);
    for (int i = 0; i < nranks; i++)
        all[i] = i;
    for (int i = nranks - 1; i > 0; i--) {
        int j = (int)(draw(g) % (uint64_t)(i + 1)), t = all[i];
        all[i] = all[j];
        all[j] = t;
    }
    int n = opt.random && nranks > 2 ? 2 + (int)(draw(g) % (uint64_t)(nranks - 1)) : nranks;
    int have_root = 0;
    for (int i = 0; i < n; i++)
        have_root |= all[i] == c->root;
    if (!have_root)
        all[draw(g) % (uint64_t)n] = c->root;
    if (opt.sets) /* ascending: the list travels as a set of ranks (gaps or a bitmap) */
        qsort(all, (size_t)n, sizeof *all, cmp_int);
    c->members = all;
    c->n = n;
}

static int list_fits(int n)
{
    /* fastmsg.h: 32 + 4 x n bytes in packet 0; an ascending list as a set of ranks: at most a
     * bitmap of the job's ranks behind 11 bytes */
    if (opt.sets)
        return 32 + 11 + ((size_t)nranks + 7) / 8 <= packet;
    return 32 + 4 * (size_t)n <= packet;
}

static void draw_case(sx_case *c, int r, int root, int k)
{
    uint64_t g = mix64(opt.seed ^ mix64(((uint64_t)r << 32) ^ ((uint64_t)root << 16) ^ k));
    c->root = root;
    int turn = r + root + k;
    c->tree = opt.random ? (int)(draw(&g) % (uint64_t)opt.ntrees) : turn % opt.ntrees;
    c->len = opt.random ? random_size(&g) : opt.sizes[(r + k) % opt.nsizes];
    draw_members(c, &g);
    c->how = opt.how == HOW_MIX ? (int)(draw(&g) % 3) : opt.how;
    if (c->how == HOW_LIST && !list_fits(c->n))
        c->how = HOW_GROUP;
    c->sf = opt.random && c->how != HOW_MULTI && draw(&g) % 6 == 0 && !opt.fpfs;
    c->mine = 0;
    for (int i = 0; i < c->n; i++)
        c->mine |= c->members[i] == me && me != root;
    c->got = 0;
}

static void describe(const sx_round *x, int c, char *buf, size_t len)
{
    const sx_case *k = &x->cases[c];
    snprintf(buf, len, "round %d case %d (root %d, %s%s, tree %s, %zu bytes, %d members)", x->r, c,
             k->root, how_names[k->how], k->sf ? " sf" : "",
             k->how == HOW_MULTI ? "-" : opt.trees[k->tree], k->len, k->n);
}

/* Round r's schedule into its slot, and its groups on this rank. */
static void prepare(int r)
{
    sx_round *x = &slot[r & 1];
    int n = nranks * opt.per_root;
    x->r = r;
    x->received = x->expected = 0;
    x->cases = calloc((size_t)n, sizeof *x->cases);
    for (int c = 0; c < n; c++) {
        sx_case *k = &x->cases[c];
        draw_case(k, r, c / opt.per_root, c % opt.per_root);
        x->expected += k->mine;
        int member = k->mine || k->root == me;
        if (k->how == HOW_GROUP && member && fm_group_create(ctx, k->members, k->n, &k->group)) {
            char what[160];
            describe(x, c, what, sizeof what);
            st_fail("%s: fm_group_create (seed %u)", what, opt.seed);
            fm_abort(ctx, 1, "mcast_stress: fm_group_create failed");
        }
    }
}

static void release(int r)
{
    sx_round *x = &slot[r & 1];
    for (int c = 0; c < nranks * opt.per_root; c++) {
        if (x->cases[c].group)
            fm_group_destroy(x->cases[c].group);
        free(x->cases[c].members);
    }
    free(x->cases);
    x->cases = NULL;
}

/* ---- receiving ---- */

static void arrived(sx_round *x, int root, const unsigned char *buf, size_t len)
{
    int n = nranks * opt.per_root, c = -1;
    if (!x->cases) { /* its round failed and was released: a late copy */
        st_fail("round %d: a %zu-byte message from rank %d after its round ended (seed %u)", x->r,
                len, root, opt.seed);
        return;
    }
    if (len > 0 && buf[0] < n && x->cases[buf[0]].root == root)
        c = buf[0];
    for (int i = 0; len == 0 && i < n && c < 0; i++) /* empty: any empty one of that root's */
        if (x->cases[i].root == root && x->cases[i].len == 0 && x->cases[i].mine &&
            !x->cases[i].got)
            c = i;
    if (c < 0) {
        st_fail("round %d: a %zu-byte message from rank %d that matches no case (seed %u)", x->r,
                len, root, opt.seed);
        return;
    }
    sx_case *k = &x->cases[c];
    char what[160];
    describe(x, c, what, sizeof what);
    size_t bad = st_mismatch(buf, len, root, ALL, x->r * 256 + c, 0);
    if (!k->mine)
        st_fail("%s: arrived at a non-member (seed %u)", what, opt.seed);
    else if (k->got)
        st_fail("%s: arrived twice (seed %u)", what, opt.seed);
    else if (k->len != len)
        st_fail("%s: arrived with %zu bytes (seed %u)", what, len, opt.seed);
    else if (bad != (size_t)-1)
        st_fail("%s: wrong byte at offset %zu (seed %u)", what, bad, opt.seed);
    k->got++;
    x->received++;
}

static void delivered(void *buf, size_t len, int status, int sender, void *arg)
{
    if (status)
        st_fail("a delivered message from rank %d: %s", sender, fm_strerror(status));
    arrived(arg, sender, buf, len);
    free(buf);
}

/* Odd chunks into a buffer of the declared length, checked once complete. */
static int on_chunks(fm_stream *s, int sender, sx_round *x)
{
    unsigned char *buf = fm_stream_user(s);
    if (!buf) {
        buf = calloc(1, fm_stream_length(s) + 1 + sizeof(size_t));
        fm_stream_set_user(s, buf);
    }
    size_t *off = (size_t *)buf;
    unsigned char *data = buf + sizeof(size_t);
    for (;;) {
        size_t want = st_odd_size((unsigned)*off);
        if (want > fm_stream_length(s) - *off)
            want = fm_stream_length(s) - *off;
        ssize_t got = want ? fm_receive(s, data + *off, want) : 0;
        if (got < 0)
            st_fail("round %d: fm_receive: %s", x->r, fm_strerror((int)got));
        if (got <= 0)
            break;
        *off += (size_t)got;
    }
    if (!fm_stream_complete(s) || fm_stream_available(s))
        return FM_CONTINUE;
    arrived(x, sender, data, *off);
    free(buf);
    fm_stream_set_user(s, NULL);
    return FM_DONE;
}

static int on_message(fm_stream *s, int sender, void *arg)
{
    if (fm_stream_length(s) % 2 == 0) {
        size_t cap = fm_stream_length(s);
        if (fm_stream_deliver(s, malloc(cap + 1), cap, delivered, arg))
            st_fail("fm_stream_deliver");
        return FM_CONTINUE;
    }
    return on_chunks(s, sender, arg);
}

/* ---- sending ---- */

typedef struct open_case {
    int c;
    fm_stream *s;
    size_t off;
    unsigned piece;
} open_case;

static int open_case_stream(const sx_round *x, int c, fm_stream **s)
{
    const sx_case *k = &x->cases[c];
    unsigned flags = k->sf ? FM_MCAST_STORE_FORWARD : 0;
    int h = H_ROUND + (x->r & 1);
    if (k->how == HOW_GROUP)
        return fm_mcast_begin(k->group, opt.trees[k->tree], flags, k->len, h, s);
    if (k->how == HOW_LIST)
        return fm_mcast_begin_list(ctx, k->members, k->n, opt.trees[k->tree], flags, k->len, h, s);
    int *dests = malloc(sizeof(int) * (size_t)k->n), d = 0;
    for (int i = 0; i < k->n; i++)
        if (k->members[i] != me)
            dests[d++] = k->members[i];
    int rc = fm_begin_message_multi(ctx, dests, d, k->len, h, s);
    free(dests);
    return rc;
}

static void case_failed(const sx_round *x, int c, const char *call, int rc)
{
    char what[160];
    describe(x, c, what, sizeof what);
    st_fail("%s: %s: %s (seed %u)", what, call, fm_strerror(rc), opt.seed);
}

/* This rank's multicasts of round x: batch streams open at once, written in turn. */
static void send_round(const sx_round *x)
{
    unsigned char buf[16411];
    open_case open[16];
    int first = me * opt.per_root, last = first + opt.per_root;
    for (int c0 = first; c0 < last; c0 += opt.batch) {
        int nopen = 0;
        for (int c = c0; c < last && c < c0 + opt.batch; c++) {
            open_case *o = &open[nopen];
            int rc = open_case_stream(x, c, &o->s);
            if (rc) {
                case_failed(x, c, "opening", rc);
                continue;
            }
            o->c = c;
            o->off = 0;
            o->piece = (unsigned)c;
            nopen++;
        }
        for (int busy = nopen; busy > 0;) {
            busy = 0;
            for (int i = 0; i < nopen; i++) {
                open_case *o = &open[i];
                size_t len = x->cases[o->c].len, n = st_odd_size(o->piece++);
                if (!o->s || o->off >= len)
                    continue;
                if (n > len - o->off)
                    n = len - o->off;
                st_fill(buf, n, me, ALL, x->r * 256 + o->c, o->off);
                int rc = fm_send_piece(o->s, buf, n);
                o->off += n;
                if (rc) {
                    case_failed(x, o->c, "fm_send_piece", rc);
                    o->off = len;
                }
                busy += o->off < len;
            }
        }
        for (int i = 0; i < nopen; i++) {
            int rc = fm_end_message(open[i].s);
            if (rc)
                case_failed(x, open[i].c, "fm_end_message", rc);
        }
    }
}

/* Progress until every multicast of round x for this rank is here; on a deadline, name what is
 * missing and end the job. */
static void await_round(sx_round *x)
{
    time_t end = time(NULL) + opt.round_secs;
    while (x->received < x->expected) {
        long rc = fm_wait(ctx, 100);
        if (rc < 0) {
            st_fail("round %d: fm_wait: %s (seed %u)", x->r, fm_strerror((int)rc), opt.seed);
            break;
        }
        if (time(NULL) > end)
            break;
    }
    if (x->received == x->expected)
        return;
    int shown = 0;
    for (int c = 0; c < nranks * opt.per_root && shown < 8; c++)
        if (x->cases[c].mine && !x->cases[c].got) {
            char what[160];
            describe(x, c, what, sizeof what);
            st_fail("%s: not here after %d s (seed %u: replay with --seed %u)", what,
                    opt.round_secs, opt.seed, opt.seed);
            shown++;
        }
    fm_abort(ctx, 1, "mcast_stress: a round did not complete");
}

/* ---- options ---- */

static int parse_args(int argc, char **argv)
{
    static char tree_arg[512] = "flat,chain,binomial,kbinomial,kbinomial:2,postal,postal:3,auto";
    static char size_arg[512] = "0,1,P-1,P,P+1,7P+3";
    const char *max_size = "20P";
    int seed_given = 0;
    for (int i = 1; i < argc; i++) {
        const char *o = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (!strcmp(o, "--random"))
            opt.random = 1;
        else if (!strcmp(o, "--sets"))
            opt.sets = 1;
        else if (!strcmp(o, "--fpfs"))
            opt.fpfs = 1;
        else if (!v)
            return -1;
        else if (!strcmp(o, "--rounds"))
            opt.rounds = atoi(v), i++;
        else if (!strcmp(o, "--per-root"))
            opt.per_root = atoi(v), i++;
        else if (!strcmp(o, "--batch"))
            opt.batch = atoi(v), i++;
        else if (!strcmp(o, "--seed"))
            opt.seed = (unsigned)strtoul(v, NULL, 10), seed_given = 1, i++;
        else if (!strcmp(o, "--trees"))
            snprintf(tree_arg, sizeof tree_arg, "%s", v), i++;
        else if (!strcmp(o, "--sizes"))
            snprintf(size_arg, sizeof size_arg, "%s", v), i++;
        else if (!strcmp(o, "--max-size"))
            max_size = v, i++;
        else if (!strcmp(o, "--round-secs"))
            opt.round_secs = atoi(v), i++;
        else if (!strcmp(o, "--how")) {
            for (opt.how = 0; opt.how < 4 && strcmp(v, how_names[opt.how]); opt.how++)
                ;
            if (opt.how == 4)
                return -1;
            i++;
        } else
            return -1;
    }
    const char *e = getenv("STRESS_ROUNDS");
    if (e && *e)
        opt.rounds = atoi(e);
    if ((e = getenv("STRESS_SEED")) && *e)
        opt.seed = (unsigned)strtoul(e, NULL, 10), seed_given = 1;
    for (char *t = strtok(tree_arg, ","); t && opt.ntrees < MAX_TREES; t = strtok(NULL, ","))
        opt.trees[opt.ntrees++] = t;
    int ok = 1;
    for (char *t = strtok(size_arg, ","); t && ok && opt.nsizes < MAX_SIZES; t = strtok(NULL, ","))
        opt.sizes[opt.nsizes++] = st_parse_size(t, &ok);
    opt.max_size = ok ? st_parse_size(max_size, &ok) : 0;
    if (!ok || opt.rounds < 1 || opt.per_root < 1 || opt.batch < 1 || opt.batch > 16 ||
        opt.ntrees < 1 || opt.nsizes < 1 || opt.round_secs < 1)
        return -1;
    return seed_given ? 1 : 0;
}

int main(int argc, char **argv)
{
    int seed_given = parse_args(argc, argv);
    if (seed_given < 0) {
        fprintf(stderr, "usage: mcast_stress [--rounds R] [--per-root K] [--batch B] [--seed S] "
                        "[--trees T,...] [--sizes S,...] [--how group|list|multi|mix] [--random] "
                        "[--sets] [--fpfs] [--max-size BYTES] [--round-secs SECS]\n");
        return 2;
    }
    ctx = st_init();
    me = fm_rank(ctx);
    nranks = fm_size(ctx);
    packet = st_packet_size();
    if (!seed_given) /* the same on every rank, new every job */
        opt.seed = (unsigned)fm_job_key(ctx);
    if (nranks < 2 || nranks * opt.per_root > 256)
        fm_abort(ctx, 2, "mcast_stress: needs 2 or more ranks and ranks x --per-root <= 256");
    if (me == 0)
        printf("mcast_stress: %d ranks, %d rounds of %d multicasts per root (%d open at once), "
               "%s, how %s, FM_PACKET_SIZE %zu, seed %u (replay: --seed %u)\n",
               nranks, opt.rounds, opt.per_root, opt.batch, opt.random ? "random" : "fixed",
               how_names[opt.how], packet, opt.seed, opt.seed);
    fflush(stdout);
    for (int p = 0; p < 2; p++)
        if (fm_register_handler(ctx, H_ROUND + p, on_message, &slot[p]))
            fm_abort(ctx, 1, "mcast_stress: fm_register_handler");
    prepare(0);
    if (fm_barrier(ctx))
        fm_abort(ctx, 1, "mcast_stress: fm_barrier");
    long messages = 0;
    for (int r = 0; r < opt.rounds; r++) { /* (on after a failure: every rank stays in step) */
        sx_round *x = &slot[r & 1];
        send_round(x);
        await_round(x);
        messages += x->received;
        if (r + 1 < opt.rounds)
            prepare(r + 1); /* groups of the next round exist here before anyone sends it */
        int rc = fm_barrier(ctx);
        if (rc)
            st_fail("round %d: fm_barrier: %s (seed %u)", r, fm_strerror(rc), opt.seed);
        release(r);
    }
    char what[160];
    snprintf(what, sizeof what, "mcast_stress: %d rounds, %ld multicasts received here, seed %u",
             opt.rounds, messages, opt.seed);
    return st_finish(ctx, what);
}
