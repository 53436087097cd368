/* SPDX-License-Identifier: BSD-3-Clause */
/* mcast_check: multicasts (trees, groups, lists, multi-destination sends) with every byte
 * checked on every member.
 *
 *   fastmsg-run -n N mcast_check [--trees T1,T2,...] [--sizes S1,S2,...] [--roots all|R]
 *       [--subset all|some] [--how group|list|multi] [--sf|--fcfs] [--sync]
 *       [--calibrate] [--shared yes|no] [--lent yes|no] [--seed S]
 *
 * The schedule is the cross product roots x trees x sizes (case index m); every rank builds
 * the same one. Case m's members: all ranks, or (some) a subset of at least 2 that contains
 * the root, drawn from (seed, m); either way in an order drawn from (seed, m), so trees see
 * members in shuffled positions. Roots send their cases in order without waiting (so
 * multicasts from different roots overlap), unless --sync puts a barrier after every case.
 * --how: group (fm_group_create for every case's list, then fm_mcast_begin), list
 * (fm_mcast_begin_list), multi (fm_begin_message_multi to the other members). --sf: store-and-
 * forward; --fcfs: First-Child-First-Served. Members receive case m with fm_stream_deliver (m even)
 * or in odd fm_receive chunks (m odd) and check every byte and that each case arrives exactly once,
 * from its root, at its members only. Sizes may name P (FM_PACKET_SIZE). --shared yes|no: a root
 * of a case of at least 100000 bytes to two or more others also checks that its copies went
 * (yes) or did not go (no) from shared payloads (fm_stats.shared_copies; sm, FM_SM_SHARE).
 * --lent yes|no: a member that received a case of at least 100000 bytes checks that some of its
 * packets were (yes) or none was (no) read where their sender wrote them (fm_stats.lent_packets;
 * sm, FM_SM_LEND). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "../stream/common.h"

#define MAX_TREES 16
#define MAX_SIZES 16
#define ALL       255 /* the "receiver" in the byte pattern: every member gets the same bytes */

typedef struct mc_case {
    int root, n, tree;
    size_t len;
    int *members;
    fm_group *group;
    int got; /* received here */
} mc_case;

static fm_context *ctx;
static int me, nranks, ncases, how_group, how_multi, store_forward, fcfs, sync_each, calibrate;
static int expect_shared = -1; /* --shared yes|no: 1, 0; -1: not checked */
static int expect_lent = -1;   /* --lent yes|no: the same */
static const char *trees[MAX_TREES];
static int ntrees;
static mc_case *cases;
static int received, expected;

static unsigned rnd(unsigned *x)
{
    *x = *x * 1103515245u + 12345u;
    return *x >> 8;
}

/* Members of case m, root included, in a shuffled order. */
static void draw_members(mc_case *c, unsigned seed, int m, int some)
{
    unsigned x = seed * 2654435761u + (unsigned)m * 40503u + 1;
    int *all = malloc(sizeof(int) * (size_t)nranks);
    for (int r = 0; r < nranks; r++)
        all[r] = r;
    for (int r = nranks - 1; r > 0; r--) {
        int k = (int)(rnd(&x) % (unsigned)(r + 1)), t = all[r];
        all[r] = all[k];
        all[k] = t;
    }
    int n = some && nranks > 2 ? 2 + (int)(rnd(&x) % (unsigned)(nranks - 1)) : nranks;
    c->members = malloc(sizeof(int) * (size_t)n);
    int have_root = 0;
    for (int i = 0; i < n; i++) {
        c->members[i] = all[i];
        have_root |= all[i] == c->root;
    }
    if (!have_root)
        c->members[rnd(&x) % (unsigned)n] = c->root;
    c->n = n;
    free(all);
}

static int is_member(const mc_case *c, int r)
{
    for (int i = 0; i < c->n; i++)
        if (c->members[i] == r)
            return 1;
    return 0;
}

/* ---- receiving ---- */

typedef struct rx {
    int m;
    size_t off;
} rx;

/* The case a message is: first case from root with this length and byte 0, not yet seen. */
static mc_case *match(int root, size_t len, int byte0)
{
    for (int m = 0; m < ncases; m++) {
        mc_case *c = &cases[m];
        if (c->root == root && c->len == len && !c->got && (len == 0 || byte0 == (m & 255)) &&
            is_member(c, me))
            return c;
    }
    return NULL;
}

static void arrived(int root, const unsigned char *buf, size_t len)
{
    mc_case *c = match(root, len, len ? buf[0] : -1);
    if (!c) {
        st_fail("a %zu-byte message from rank %d that matches no case of mine", len, root);
        return;
    }
    int m = (int)(c - cases);
    size_t bad = st_mismatch(buf, len, root, ALL, m, 0);
    if (bad != (size_t)-1)
        st_fail("case %d (root %d, %s, %zu bytes): wrong byte at offset %zu", m, root,
                trees[c->tree], len, bad);
    c->got++;
    received++;
}

static void delivered(void *buf, size_t len, int status, int sender, void *arg)
{
    if (status)
        st_fail("a delivered message from rank %d: %s", sender, fm_strerror(status));
    (void)arg;
    arrived(sender, buf, len);
    free(buf);
}

/* Odd chunks into a buffer of the declared length; checked once complete. */
static int on_chunks(fm_stream *s, int sender, void *arg)
{
    (void)arg;
    unsigned char *buf = fm_stream_user(s);
    if (!buf) {
        buf = malloc(fm_stream_length(s) + 1 + sizeof(size_t));
        memset(buf, 0, sizeof(size_t));
        fm_stream_set_user(s, buf);
    }
    size_t *off = (size_t *)buf;
    unsigned char *data = buf + sizeof(size_t);
    for (;;) {
        size_t want = st_odd_size((unsigned)*off);
        if (want > fm_stream_length(s) - *off)
            want = fm_stream_length(s) - *off;
        ssize_t got = want ? fm_receive(s, data + *off, want) : 0;
        if (got < 0) {
            st_fail("fm_receive: %s", fm_strerror((int)got));
            break;
        }
        if (got == 0)
            break;
        *off += (size_t)got;
    }
    if (!fm_stream_complete(s) || fm_stream_available(s))
        return FM_CONTINUE;
    arrived(sender, data, *off);
    free(buf);
    fm_stream_set_user(s, NULL);
    return FM_DONE;
}

static int on_message(fm_stream *s, int sender, void *arg)
{
    /* Which case is not known before byte 0: even-length messages go deliver, odd chunks. */
    if (fm_stream_length(s) % 2 == 0) {
        size_t cap = fm_stream_length(s);
        if (fm_stream_deliver(s, malloc(cap + 1), cap, delivered, arg))
            st_fail("fm_stream_deliver");
        return FM_CONTINUE;
    }
    return on_chunks(s, sender, arg);
}

/* ---- sending ---- */

static int open_case(mc_case *c, int m, fm_stream **s)
{
    unsigned flags = store_forward ? FM_MCAST_STORE_FORWARD : fcfs ? FM_MCAST_FCFS : 0;
    if (how_multi) {
        int *dests = malloc(sizeof(int) * (size_t)c->n), k = 0;
        for (int i = 0; i < c->n; i++)
            if (c->members[i] != me)
                dests[k++] = c->members[i];
        int rc = fm_begin_message_multi(ctx, dests, k, c->len, 0, s);
        free(dests);
        return rc;
    }
    (void)m;
    if (how_group)
        return fm_mcast_begin(c->group, trees[c->tree], flags, c->len, 0, s);
    return fm_mcast_begin_list(ctx, c->members, c->n, trees[c->tree], flags, c->len, 0, s);
}

static void send_case(int m)
{
    mc_case *c = &cases[m];
    fm_stream *s;
    int rc = open_case(c, m, &s);
    if (rc == FM_OK)
        rc = st_send_body(s, me, ALL, m, c->len, m % 3 == 1);
    if (rc == FM_OK)
        rc = fm_end_message(s);
    if (rc)
        st_fail("case %d (%s, %zu bytes, %d members): %s", m, trees[c->tree], c->len, c->n,
                fm_strerror(rc));
}

static int parse_args(int argc, char **argv, size_t *sizes, int *nsizes, int *root, int *some,
                      unsigned *seed)
{
    static char tree_arg[512] = "flat,chain,binomial,kbinomial,kbinomial:2,postal,postal:3,auto";
    static char size_arg[512] = "0,1,P-1,P,P+1,3P+7";
    *root = -1;
    for (int i = 1; i < argc; i++) {
        const char *o = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (!strcmp(o, "--sf"))
            store_forward = 1;
        else if (!strcmp(o, "--fcfs"))
            fcfs = 1;
        else if (!strcmp(o, "--sync"))
            sync_each = 1;
        else if (!strcmp(o, "--calibrate"))
            calibrate = 1;
        else if (!v)
            return -1;
        else if (!strcmp(o, "--trees"))
            snprintf(tree_arg, sizeof tree_arg, "%s", v), i++;
        else if (!strcmp(o, "--sizes"))
            snprintf(size_arg, sizeof size_arg, "%s", v), i++;
        else if (!strcmp(o, "--roots"))
            *root = strcmp(v, "all") ? atoi(v) : -1, i++;
        else if (!strcmp(o, "--subset"))
            *some = !strcmp(v, "some"), i++;
        else if (!strcmp(o, "--shared"))
            expect_shared = !strcmp(v, "yes"), i++;
        else if (!strcmp(o, "--lent"))
            expect_lent = !strcmp(v, "yes"), i++;
        else if (!strcmp(o, "--seed"))
            *seed = (unsigned)atoi(v), i++;
        else if (!strcmp(o, "--how")) {
            how_group = !strcmp(v, "group");
            how_multi = !strcmp(v, "multi");
            if (!how_group && !how_multi && strcmp(v, "list"))
                return -1;
            i++;
        } else
            return -1;
    }
    for (char *t = strtok(tree_arg, ","); t && ntrees < MAX_TREES; t = strtok(NULL, ","))
        trees[ntrees++] = t;
    for (char *t = strtok(size_arg, ","); t && *nsizes < MAX_SIZES; t = strtok(NULL, ",")) {
        int ok;
        sizes[(*nsizes)++] = st_parse_size(t, &ok);
        if (!ok)
            return -1;
    }
    return 0;
}

static void build_schedule(const size_t *sizes, int nsizes, int root, int some, unsigned seed)
{
    int nroots = root < 0 ? nranks : 1;
    ncases = nroots * ntrees * nsizes;
    cases = calloc((size_t)ncases, sizeof *cases);
    int m = 0;
    for (int r = 0; r < nroots; r++)
        for (int t = 0; t < ntrees; t++)
            for (int z = 0; z < nsizes; z++, m++) {
                mc_case *c = &cases[m];
                c->root = root < 0 ? r : root;
                c->tree = t;
                c->len = sizes[z];
                draw_members(c, seed, m, some);
                if (c->root != me && is_member(c, me))
                    expected++;
            }
}

/* A counter some (expect 1) or none (0) of: expect < 0, or applies 0, checks nothing. */
static void check_count(int expect, int applies, uint64_t count, const char *what)
{
    if (expect < 0 || !applies)
        return;
    if (expect ? count == 0 : count != 0)
        st_fail("%llu %s, expected %s", (unsigned long long)count, what, expect ? "some" : "none");
}

/* --shared: a root that sent a case of several packets to at least two others counts copies
 * from shared payloads (fm_stats.shared_copies) when sharing is expected, none otherwise.
 * --lent: a member that received a case of at least 100000 bytes counts lent packets
 * (fm_stats.lent_packets) when loans are expected, none otherwise. */
static void check_counters(void)
{
    int rooted = 0, got_large = 0;
    for (int m = 0; m < ncases; m++) {
        rooted |= cases[m].root == me && cases[m].n >= 3 && cases[m].len >= 100000;
        got_large |= cases[m].got && cases[m].len >= 100000;
    }
    fm_stats st;
    if (fm_get_stats(ctx, &st) != FM_OK) {
        st_fail("fm_get_stats");
        return;
    }
    check_count(expect_shared, rooted, st.shared_copies, "copies from shared payloads");
    check_count(expect_lent, got_large, st.lent_packets,
                "packets read where their sender wrote them");
}

int main(int argc, char **argv)
{
    size_t sizes[MAX_SIZES];
    int nsizes = 0, root, some = 0;
    unsigned seed = 1;
    if (parse_args(argc, argv, sizes, &nsizes, &root, &some, &seed)) {
        fprintf(stderr,
                "usage: mcast_check [--trees T,...] [--sizes S,...] [--roots all|R] "
                "[--subset all|some] [--how group|list|multi] [--sf|--fcfs] [--sync] [--calibrate] "
                "[--shared yes|no] [--lent yes|no] [--seed S]\n");
        return 2;
    }
    ctx = st_init();
    me = fm_rank(ctx);
    nranks = fm_size(ctx);
    if (root >= nranks)
        root = nranks - 1;
    build_schedule(sizes, nsizes, root, some, seed);
    if (ncases / (root < 0 ? nranks : 1) > 256)
        fm_abort(ctx, 2, "mcast_check: at most 256 cases per root");
    for (int m = 0; how_group && m < ncases; m++)
        if (fm_group_create(ctx, cases[m].members, cases[m].n, &cases[m].group))
            fm_abort(ctx, 1, "FAIL: fm_group_create");
    if (fm_register_handler(ctx, 0, on_message, NULL) || fm_barrier(ctx))
        fm_abort(ctx, 1, "FAIL: setup");
    if (calibrate && fm_mcast_calibrate(ctx))
        fm_abort(ctx, 1, "FAIL: fm_mcast_calibrate");
    for (int m = 0; m < ncases; m++) {
        if (cases[m].root == me)
            send_case(m);
        if (sync_each && fm_barrier(ctx))
            st_fail("fm_barrier after case %d", m);
    }
    /* Until every copy is in, or 60 s pass with no byte delivered: a loaded machine (under
     * a sanitizer, lost datagrams repaired) may take longer in all, but not stall; the job's
     * own timeout bounds the whole. */
    time_t quiet_since = time(NULL);
    while (received < expected && time(NULL) - quiet_since < 60) {
        long r = fm_wait(ctx, 100);
        if (r < 0) {
            st_fail("waiting: %s", fm_strerror((int)r));
            break;
        }
        if (r > 0)
            quiet_since = time(NULL);
    }
    for (int m = 0; m < ncases; m++) {
        mc_case *c = &cases[m];
        int want = c->root != me && is_member(c, me);
        if (c->got != want)
            st_fail("case %d (root %d, %s, %zu bytes, %d members): received %d times, want %d", m,
                    c->root, trees[c->tree], c->len, c->n, c->got, want);
    }
    check_counters();
    char what[160];
    snprintf(what, sizeof what, "mcast_check: %d cases, %d received here (%s%s)", ncases, received,
             how_multi   ? "multi"
             : how_group ? "group"
                         : "list",
             store_forward ? ", sf"
             : fcfs        ? ", fcfs"
                           : "");
    for (int m = 0; m < ncases; m++)
        if (cases[m].group)
            fm_group_destroy(cases[m].group);
    /* The cases outlive fm_finalize: its barrier may still run on_message for a late message
     * (one the wait above gave up on), which looks them up. */
    int rc = st_finish(ctx, what);
    for (int m = 0; m < ncases; m++)
        free(cases[m].members);
    free(cases);
    return rc;
}
