/* SPDX-License-Identifier: BSD-3-Clause */
/* The multicast model (model.h) as a simulation over the whole tree (a model may hold the
 * tree; the runtime never does). Members are visited parents first; each member's CPU and
 * link are simulated packet by packet from when its packets arrive. Credits make a parent
 * depend on its children's progress, so with a window smaller than the message the walk is
 * repeated, each pass using the previous pass's release times, until nothing moves.
 * Members that share fewer cores than they are (job->group, job->cores) share them as the
 * kernel's scheduler does, fairly among those runnable: each pass runs a member's CPU work at
 * cores / runnable of full speed, with how many were runnable when taken from the previous
 * passes (a profile over time per group), so the walk is repeated for that too. Over a net of
 * links (a torus) the walk is repeated once more per round of link shares (net_shares). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "fastmsg.h"
#include "mix.h"
#include "model.h"

/* A split multicast's members wait on two parents: the walk follows one tree's order, the
 * other's needs more passes. */
#define MODEL_SPLIT_PASSES 40
#define MODEL_PASSES       12
#define SHARE_BUCKETS      256  /* of a sharing group's load profile over time */
#define SHARE_SPAN         2.0  /* the profile covers this x the unshared completion (or bound) */
#define NET_ROUNDS         12   /* of link shares, at most */
#define MODEL_FRAME_HEADER 66.0 /* Ethernet, IPv4 and TCP headers (timestamps on) */
#define NET_SETTLED        0.01 /* no share moved by more than this fraction: done */
#define MODEL_CREDIT_FRAME                                                                         \
    64.0 /* a credit packet's payload: fastmsg's and the provider's                                \
          * headers */

/* Processor sharing among a group's members (groups with more members than cores only):
 * prev[slot * B + b] is how many of the group's members were runnable on average in bucket b
 * (the previous passes, damped), cur the same being counted in this pass. */
struct share {
    int *slot;      /* per member: its group's slot, -1 when its group does not share */
    int nslots, on; /* on: prev holds a profile to run by */
    double width;   /* seconds per bucket; 0 until the span is known */
    double *prev, *cur;
};
/* One simulation's state: arrival[v * m + j] when packet j reached member v; rel (and the
 * previous pass's, rel_prev) when v released it: done with it, its copies gone. */
struct sim {
    const struct fm_model_tree *t;
    const struct fm_costs *c;
    const struct fm_model_job *job;
    enum fm_model_mode mode;
    int m;
    int classic; /* unit steps: a member is done when its last packet arrived */
    size_t payload, bytes;
    double *arrival, *rel, *rel_prev, *busy, *sent;
    /* cred[v * m + j] when v's credit for packet j left it (and the previous pass's);
     * taken: per packet of the member being simulated, when it had taken it in; cred_sort:
     * scratch of 2 m for credit_times */
    double *cred, *cred_prev, *taken, *cred_sort;
    double *last_copy; /* per packet of the member being simulated: when its last copy left */
    int *porder;       /* split: the member's packets in the order it takes them */
    /* per packet of the member being simulated: a copy to a child of its host has paid for
     * the bytes, which the later ones share (job->shared) */
    unsigned char *paid;
    unsigned char *local_in; /* per member: its parent is on its host (set by post) */
    /* per child of the member being simulated, of the packet being posted: when its copy was
     * ready for the link and when it left (-1: through memory, not on the link), and the
     * children of one run of copies queued on the link together */
    double *q_ready, *q_left;
    int *q_idx;
    struct share sh;
    uint64_t order_seed; /* 0: copies leave in posting order; else the seed of a random one */
    /* Over a net (job->net), per stream (stream_of: a member's incoming copies, from each of
     * its parents): when it may take its next packet (pipe), the share of its busiest link it
     * waits for (share: 1 alone, 2 with one other under way, ...), and the span it was under
     * way in this pass; per link, the streams that cross it (link_edges[link_first[l] ..]). */
    const struct fm_model_net *net;
    double *pipe, *tokens, *share, *span0, *span1;
    int *link_first, *link_edges;
    /* With c->link_fair (and no net): the copies of the member being simulated that go on
     * its link, as post made them, and per packet its CPU time once it had posted and
     * copied it (the release waits for the later of that and its last copy's arrival). */
    struct fair_copy *fair;
    size_t nfair;
    double *fair_cpu, *fair_key;
    int *fair_heap;
    /* With routes back (net->back_first): when each copy (stream u's k-th: u * m + k) was
     * handed to its stream's first link and when it left, in this pass and the last. */
    double *posted, *gone, *posted_prev, *gone_prev;
};

/* A copy on a fair link: it starts sharing the link once its latency has passed (start),
 * with bytes to move; done once they have. */
struct fair_copy {
    double start, size, done, weight;
    int kid, j;
};

/* Member v's children for packet j (the second tree's for odd j of a split multicast), their
 * count into *d when d is not NULL. */
static const int *kids_for(const struct sim *s, int v, int j, int *d)
{
    const struct fm_model_tree *t = s->t;
    const int *first = t->first2 && j % 2 ? t->first2 : t->first;
    if (d)
        *d = first[v + 1] - first[v];
    return (t->first2 && j % 2 ? t->kids2 : t->kids) + first[v];
}

/* Packet j's place among its tree's packets (a parent and child exchange only those), that
 * tree's packet count, and back from such a place k. */
static int tree_index(const struct sim *s, int j)
{
    return s->t->first2 ? j / 2 : j;
}

static int tree_packets(const struct sim *s, int j)
{
    return s->t->first2 ? (s->m - j % 2 + 1) / 2 : s->m;
}

static int from_tree_index(const struct sim *s, int j, int k)
{
    return s->t->first2 ? 2 * k + j % 2 : k;
}

/* Over a net: the stream packet j reaches kid by (a split multicast's second tree's copies
 * come by a route of their own, stream n + kid), and how many streams there are. */
static int stream_of(const struct sim *s, int kid, int j)
{
    return s->t->first2 && j % 2 ? s->t->n + kid : kid;
}

static int streams(const struct sim *s)
{
    return s->t->first2 ? 2 * s->t->n : s->t->n;
}

/* Children idx[0..len) of v got packet j in posting order; deal their arrival times out in a
 * random order instead (the link's slots stay; which child has which slot changes). */
static void shuffle_run(struct sim *s, int v, int j, const int *idx, int len, uint64_t x)
{
    const int *kid = kids_for(s, v, j, NULL);
    for (int i = len - 1; i > 0; i--) { /* Fisher-Yates */
        x = fm_mix64(x);
        int k = (int)(x % (uint64_t)(i + 1));
        double *a = &s->arrival[(size_t)kid[idx[i]] * s->m + (size_t)j];
        double *b = &s->arrival[(size_t)kid[idx[k]] * s->m + (size_t)j];
        double t = *a;
        *a = *b;
        *b = t;
    }
}

/* The first `now` children of v got packet j: only copies that waited on the link together
 * can leave it in another order than posted. A copy ready once every copy before it had left
 * (the sender's CPU slower than its link: a small packet) found the link idle and left
 * first; so each run of copies that found the link busy, with the one that opened it, is
 * shuffled within itself. Copies through memory (a child on this host) are not on the link. */
static void shuffle_arrivals(struct sim *s, int v, int j, int now)
{
    uint64_t x = fm_mix64(s->order_seed ^ fm_mix64(((uint64_t)(unsigned)v << 32) | (unsigned)j));
    int len = 0;
    double busy = -1; /* when the run's copies have all left */
    for (int i = 0; i <= now; i++) {
        if (i < now && s->q_left[i] < 0)
            continue;
        if (i == now || s->q_ready[i] >= busy) {
            if (len > 1)
                shuffle_run(s, v, j, s->q_idx, len, x ^ (uint64_t)s->q_idx[0]);
            len = 0;
        }
        if (i < now) {
            s->q_idx[len++] = i;
            busy = s->q_left[i] > busy ? s->q_left[i] : busy;
        }
    }
}

static int bucket_of(const struct share *sh, double t)
{
    double b = t / sh->width;
    return b <= 0 ? 0 : b >= SHARE_BUCKETS - 1 ? SHARE_BUCKETS - 1 : (int)b;
}

/* Counts member v runnable from t0 to t1 in this pass's profile. */
static void share_count(struct sim *s, int v, double t0, double t1)
{
    struct share *sh = &s->sh;
    int g = sh->slot ? sh->slot[v] : -1;
    if (g < 0 || !(sh->width > 0) || !(t1 > t0))
        return;
    double *cur = sh->cur + (size_t)g * SHARE_BUCKETS;
    for (int b = bucket_of(sh, t0); t0 < t1; b++) {
        double end = b == SHARE_BUCKETS - 1 ? t1 : (b + 1) * sh->width;
        double to = end < t1 ? end : t1;
        cur[b] += (to - t0) / sh->width;
        t0 = to;
    }
}

/* Member v's CPU work x from t: when it ends, at cores / runnable of full speed where the
 * previous passes found more of its group runnable than cores. */
static double run_cpu(struct sim *s, int v, double t, double x)
{
    struct share *sh = &s->sh;
    if (!sh->slot) /* nothing shared: the common case, kept cheap (auto runs this a lot) */
        return t + x;
    int g = sh->slot[v];
    double now = t, left = x;
    if (g < 0 || !sh->on) {
        now = t + x;
    } else {
        const double *load = sh->prev + (size_t)g * SHARE_BUCKETS;
        for (int b = bucket_of(sh, now); left > 0; b++) {
            double rate = load[b] > s->job->cores ? s->job->cores / load[b] : 1;
            double end = (b + 1) * sh->width;
            if (b == SHARE_BUCKETS - 1 || (end - now) * rate >= left) {
                now += left / rate;
                left = 0;
            } else {
                left -= (end - now) * rate;
                now = end;
            }
        }
    }
    share_count(s, v, t, now);
    return now;
}

/* A member's link: a token bucket of `burst` bytes refilled at 1 / gap_byte (burst 0: copies
 * leave one after another at that rate). */
struct link {
    double t, tokens;
};

static double psize(const struct sim *s, int j)
{
    return j < s->m - 1 ? (double)s->payload : (double)(s->bytes - (size_t)(s->m - 1) * s->payload);
}

/* When a copy of size bytes, ready at ready, has left the link. */
static double link_send(struct link *l, const struct fm_costs *c, double ready, double size)
{
    if (!(c->gap_byte > 0))
        return ready;
    double s = ready > l->t ? ready : l->t;
    double tokens = l->tokens + (s - l->t) / c->gap_byte;
    if (tokens > c->burst)
        tokens = c->burst;
    double wait = size > tokens ? (size - tokens) * c->gap_byte : 0;
    l->tokens = size > tokens ? 0 : tokens - size;
    l->t = s + wait;
    return l->t;
}

static int route_len(const struct fm_model_net *net, int v)
{
    return net->route_first[v + 1] - net->route_first[v];
}

/* Over a net: when a copy of packet j (size bytes) on stream u, ready at ready, is through its
 * route's busiest link, a token bucket at its share of the link's rate and bucket (the
 * stream's pipe and tokens; a copy to a member of the sender's own host leaves at once). */
static double net_send(struct sim *s, int u, int j, double ready, double size)
{
    if (route_len(s->net, u) == 0)
        return ready;
    double gap = s->c->gap_byte * s->share[u], burst = s->c->burst / s->share[u];
    if (tree_index(s, j) == 0) {
        s->tokens[u] = burst;
        s->pipe[u] = ready;
        s->span0[u] = ready;
    }
    double start = ready > s->pipe[u] ? ready : s->pipe[u];
    double tokens = gap > 0 ? s->tokens[u] + (start - s->pipe[u]) / gap : size;
    tokens = tokens > burst ? burst : tokens;
    double wait = size > tokens ? (size - tokens) * gap : 0;
    s->tokens[u] = size > tokens ? 0 : tokens - size;
    s->pipe[u] = start + wait;
    return s->pipe[u];
}

/* Link time the copies queued on link l at time at need to leave it (the last pass's): each
 * stream starting on l (of those crossing it) has until its last copy handed over by then has
 * left, at its share of the link, which at the full rate is that time over its share. */
static double queued(const struct sim *s, int l, double at)
{
    double wait = 0;
    for (int k = s->link_first[l]; k < s->link_first[l + 1]; k++) {
        int u = s->link_edges[k];
        if (s->net->route_links[s->net->route_first[u]] != l)
            continue;
        const double *posted = s->posted_prev + (size_t)u * s->m;
        /* the first copy handed over after at (posted grows with k) */
        int lo = 0, hi = tree_packets(s, u < s->t->n ? 0 : 1);
        while (lo < hi) {
            int mid = (lo + hi) / 2;
            if (posted[mid] <= at)
                lo = mid + 1;
            else
                hi = mid;
        }
        double left = lo > 0 ? s->gone_prev[(size_t)u * s->m + (size_t)lo - 1] : 0;
        wait += left > at ? (left - at) / s->share[u] : 0;
    }
    return wait;
}

/* Ascending, in place: insertion, as a member's arrivals and releases come nearly in order. */
static void sort_nearly(double *x, int n)
{
    for (int i = 1; i < n; i++) {
        double v = x[i];
        int k = i;
        for (; k > 0 && x[k - 1] > v; k--)
            x[k] = x[k - 1];
        x[k] = v;
    }
}

/* When member v's credits for its packets from one parent (tree 0 or 1 of a split multicast,
 * whose packets are the even or odd ones) leave it, into s->cred, as credits.c returns them:
 * once half the window is owed, or at once when the packets it holds and the credits it owes
 * fill the window (starved: the parent can send nothing, not even what would let held
 * messages go on). Both are checked as it takes packets in and as it releases them; the
 * credits are counts, so the i-th credit back is for the parent's i-th packet. Those owed at
 * the message's end go back with its last release. (A split multicast's member with the same
 * parent in both trees has one window there in the runtime, two here.) */
static void credit_times(struct sim *s, int v, int tree)
{
    int w = s->job->window, half = (w + 1) / 2, m = s->m;
    int packets = tree_packets(s, tree); /* (tree: only its parity matters) */
    double *at = s->cred_sort, *rl = s->cred_sort + m;
    for (int k = 0; k < packets; k++) {
        int j = from_tree_index(s, tree, k);
        at[k] = s->taken[j];
        rl[k] = s->rel[(size_t)v * m + (size_t)j];
    }
    sort_nearly(at, packets);
    sort_nearly(rl, packets);
    int a = 0, r = 0, back = 0;
    while (r < packets) {
        double t = a < packets && at[a] < rl[r] ? at[a] : rl[r];
        while (a < packets && at[a] <= t)
            a++;
        while (r < packets && rl[r] <= t)
            r++;
        if (r > back && (r - back >= half || a - back >= w)) {
            for (; back < r; back++)
                s->cred[(size_t)v * m + (size_t)from_tree_index(s, tree, back)] = t;
        }
    }
    for (; back < packets; back++)
        s->cred[(size_t)v * m + (size_t)from_tree_index(s, tree, back)] = rl[packets - 1];
}

/* Credits go back in a packet of their own once half the window is owed: 1 when packet j
 * completes a half-window (its receiver then sends a credit packet: CPU time, off the
 * packet's own path). The extra credit packets of a starved parent (credit_times) are not
 * charged: which packet each follows depends on the releases being computed. */
static int credit_packet_after(const struct sim *s, int j)
{
    int w = s->job ? s->job->window : 0, half = (w + 1) / 2;
    return w > 0 && (tree_index(s, j) + 1) % half == 0;
}

/* When a credit a child sends at rel (credit_times) reaches its parent: `latency`
 * later, and over a net with routes back, after waiting behind what is queued on each link of
 * the way back of its stream u (a credit is a header-sized frame). */
static double credit_back(const struct sim *s, int u, double rel, double times)
{
    const struct fm_model_net *net = s->net;
    double at = rel;
    if (net && net->back_first)
        for (int e = net->back_first[u]; e < net->back_first[u + 1]; e++)
            at += queued(s, net->back_links[e], at) +
                  (MODEL_CREDIT_FRAME + MODEL_FRAME_HEADER) * s->c->gap_byte + net->hop;
    return at + s->c->latency * times;
}

static int fair_link(const struct sim *s)
{
    return s->c->link_fair > 0 && !s->net;
}

/* A copy to kid of packet j, ready at ready, goes on the fair link: it is under way once its
 * latency has passed; when it arrives is known only once every copy it shares the link with
 * is (fair_finish). Its share is in inverse proportion to its latency (lx times the near
 * one's), as SimGrid weighs a flow by its route (two flows from one host, one within its leaf
 * and one across, move at 2:1 where lx is about 2). Returns ready (the copy is handed over). */
static double fair_add(struct sim *s, int kid, int j, double ready, double size, double lx)
{
    s->fair[s->nfair++] =
        (struct fair_copy){.start = ready + lx * (s->c->latency + size * s->c->lat_byte),
                           .size = size,
                           .weight = 1 / lx,
                           .kid = kid,
                           .j = j};
    return ready;
}

static int by_start(const void *a, const void *b)
{
    const struct fair_copy *x = a, *y = b;
    return x->start < y->start ? -1 : x->start > y->start;
}

/* The min-heap of copies under way, by the virtual time at which each is done (key). */
static void heap_push(int *h, int *len, const double *key, int i)
{
    int at = (*len)++;
    while (at > 0 && key[h[(at - 1) / 2]] > key[i]) {
        h[at] = h[(at - 1) / 2];
        at = (at - 1) / 2;
    }
    h[at] = i;
}

static int heap_pop(int *h, int *len, const double *key)
{
    int top = h[0], last = h[--(*len)], at = 0;
    for (;;) {
        int c = 2 * at + 1;
        if (c >= *len)
            break;
        if (c + 1 < *len && key[h[c + 1]] < key[h[c]])
            c++;
        if (key[h[c]] >= key[last])
            break;
        h[at] = h[c];
        at = c;
    }
    if (*len > 0)
        h[at] = last;
    return top;
}

/* Weighted processor sharing of the link among the copies under way: in virtual time V a
 * copy moves weight x dV bytes, so one that starts at V0 is done at V0 + size / weight, and
 * copies finish in the order of those keys; V grows at the link's rate over the weights of
 * those under way. Fills each copy's done. */
static void fair_share(struct sim *s)
{
    struct fair_copy *f = s->fair;
    size_t n = s->nfair, next = 0;
    double gap = s->c->gap_byte, *key = s->fair_key, weights = 0;
    int *heap = s->fair_heap, len = 0;
    qsort(f, n, sizeof *f, by_start);
    double t = n ? f[0].start : 0, V = 0;
    while (next < n || len > 0) {
        double arrive = next < n ? f[next].start : INFINITY;
        if (len > 0) {
            int k = heap[0];
            double end = t + (key[k] - V) * gap * weights;
            if (end <= arrive) {
                heap_pop(heap, &len, key);
                V = key[k];
                t = end;
                f[k].done = t;
                weights = len > 0 ? weights - f[k].weight : 0; /* (no drift left behind) */
                continue;
            }
            V += (arrive - t) / (gap * weights); /* (gap 0: every copy is done at once) */
        }
        t = arrive;
        if (len == 0) /* (an idle link: virtual time starts over) */
            V = 0;
        key[next] = V + f[next].size / f[next].weight;
        weights += f[next].weight;
        heap_push(heap, &len, key, (int)next);
        next++;
    }
}

/* Member v's copies on the fair link: when each arrived, and so when each packet's last copy
 * was gone and when v released it. */
static void fair_finish(struct sim *s, int v, int keep)
{
    int m = s->m;
    fair_share(s);
    for (size_t k = 0; k < s->nfair; k++) {
        const struct fair_copy *f = &s->fair[k];
        s->arrival[(size_t)f->kid * m + (size_t)f->j] = f->done;
        if (f->done > s->last_copy[f->j])
            s->last_copy[f->j] = f->done;
    }
    for (int j = 0; j < m; j++) {
        double cpu = s->fair_cpu[j];
        s->rel[(size_t)v * m + (size_t)j] = s->last_copy[j] > cpu && !keep ? s->last_copy[j] : cpu;
    }
    s->nfair = 0;
}

/* How many times the latency a copy from v to kid takes: far_latency across racks. */
static double latency_times(const struct sim *s, int v, int kid)
{
    const int *rack = s->job ? s->job->rack : NULL;
    double far = s->c->far_latency;
    return rack && far > 1 && rack[v] >= 0 && rack[kid] >= 0 && rack[v] != rack[kid] ? far : 1;
}

/* Member v posts packet j to its i-th child at CPU time cpu; returns the CPU time after. */
static double post(struct sim *s, struct link *l, int v, int i, int j, double cpu)
{
    const struct fm_costs *c = s->c;
    int kid = kids_for(s, v, j, NULL)[i], m = s->m, w = s->job ? s->job->window : 0;
    int k = tree_index(s, j); /* (the pair's own packet count, for its credits) */
    int u = stream_of(s, kid, j);
    double size = psize(s, j);
    const int *host = s->job ? s->job->host : NULL;
    int local = !s->net && host && host[v] >= 0 && host[v] == host[kid];
    double bytes = local && s->job->shared && s->paid[j] ? 0 : size * c->send_byte;
    if (local)
        s->paid[j] = 1;
    s->local_in[kid] = (unsigned char)local;
    double work = c->send_pkt + bytes + (j == 0 ? c->send_msg : 0);
    /* The first copy past a window's worth waits for the child's credit packet, which the
     * sender takes in first: the first copy a credit packet's credits let go. */
    size_t back = w > 0 && k >= w ? (size_t)from_tree_index(s, j, k - w) : 0;
    const double *cred = s->cred_prev + (size_t)kid * m;
    int fresh = w > 0 && k >= w && (k == w || cred[back] != cred[from_tree_index(s, j, k - w - 1)]);
    double lx = latency_times(s, v, kid);
    if (fresh)
        work += c->recv_pkt;
    cpu = run_cpu(s, v, cpu, work);
    s->busy[v] += work;
    double ready = cpu;
    if (w > 0 && k >= w) { /* the child's credit for packet k - w came back */
        double credit = credit_back(s, u, cred[back], lx) + (fresh ? c->recv_pkt : 0);
        ready = credit > ready ? credit : ready;
    }
    double left = s->net         ? net_send(s, u, j, ready, size)
                  : local        ? ready
                  : fair_link(s) ? fair_add(s, kid, j, ready, size, lx)
                                 : link_send(l, c, ready, size);
    double at = left + lx * (c->latency + size * c->lat_byte);
    if (s->net && route_len(s->net, u) > 1) { /* routers pass each frame on whole */
        double frame =
            size + MODEL_FRAME_HEADER < s->net->frame ? size + MODEL_FRAME_HEADER : s->net->frame;
        at += (route_len(s->net, u) - 1) * (frame * c->gap_byte + s->net->hop);
    }
    s->arrival[(size_t)kid * m + (size_t)j] = at;
    s->q_ready[i] = ready;
    s->q_left[i] = local ? -1 : left;
    if (s->posted) {
        s->posted[(size_t)u * m + (size_t)k] = ready;
        s->gone[(size_t)u * m + (size_t)k] = left;
    }
    if (s->net)
        s->span1[u] = left; /* (on its links until then) */
    if (!local)             /* (bytes on the host's link) */
        s->sent[v] += size;
    if (left > s->last_copy[j])
        s->last_copy[j] = left;
    return cpu;
}

/* Whether member v has no children in any of t's trees. */
static int forwards_nothing(const struct fm_model_tree *t, int v)
{
    return t->first[v + 1] == t->first[v] && (!t->first2 || t->first2[v + 1] == t->first2[v]);
}

/* Member v takes packet j in: the root writes it from the caller's piece; others wait for it
 * (a member idle for longer than its wait polls has to wake up first) and receive it. */
static double take(struct sim *s, int v, int j, double cpu)
{
    const struct fm_costs *c = s->c;
    double size = psize(s, j);
    if (v == s->t->root) {
        s->busy[v] += size * c->fill_byte;
        return run_cpu(s, v, cpu, size * c->fill_byte);
    }
    int lent = s->job && s->job->lent && s->local_in[v] && forwards_nothing(s->t, v);
    double at = s->arrival[(size_t)v * s->m + (size_t)j];
    double work = c->recv_pkt + (lent ? 0 : size * c->recv_byte);
    double idle = at - cpu; /* (cpu: when it last finished work; 0 before the first) */
    if (idle > 0) {         /* its wait polled meanwhile, on a core others may want */
        double polled = idle < c->poll ? idle : c->poll;
        s->busy[v] += polled;
        share_count(s, v, cpu, cpu + polled);
    }
    if (idle > c->spin)
        work += c->wake; /* a context switch and cold caches, on the core as well */
    s->busy[v] += work;
    return run_cpu(s, v, at > cpu ? at : cpu, work);
}

/* Most packets inner member v held at once: packet j from its arrival until its last copy
 * left. */
static double held_peak(const struct sim *s, int v)
{
    const double *arrival = s->arrival + (size_t)v * s->m;
    int peak = 0;
    for (int j = 0; j < s->m; j++) {
        int at = 0;
        for (int k = 0; k < s->m; k++)
            at += arrival[k] <= arrival[j] && s->last_copy[k] > arrival[j];
        peak = at > peak ? at : peak;
    }
    return peak;
}

/* A split multicast's member takes its packets as they come from its two parents: its
 * packets in order of arrival (each parent's come in order: the two runs merged). NULL: in
 * order (one tree, or the root). */
static const int *arrival_order(struct sim *s, int v)
{
    if (!s->t->first2 || v == s->t->root)
        return NULL;
    const double *at = s->arrival + (size_t)v * s->m;
    int e = 0, o = 1;
    for (int x = 0; x < s->m; x++) {
        int even = e < s->m && (o >= s->m || at[e] <= at[o]);
        s->porder[x] = even ? e : o;
        if (even)
            e += 2;
        else
            o += 2;
    }
    return s->porder;
}

/* One member's packets, in its mode; returns its completion. */
static double simulate_member(struct sim *s, int v, double *held)
{
    const struct fm_costs *c = s->c;
    int d = s->t->first[v + 1] - s->t->first[v], m = s->m, root = v == s->t->root;
    /* Which children get each packet as it arrives: all (FPFS, and the root always), the
     * first (FCFS), none (store-and-forward). */
    int now = root || s->mode == FM_MODEL_FPFS ? d : s->mode == FM_MODEL_FCFS ? (d > 0) : 0;
    int keep = now < d; /* copies kept for the children served later */
    struct link l = {0, c->burst};
    double cpu = 0, done = 0;
    for (int j = 0; j < m; j++) {
        s->last_copy[j] = 0;
        s->paid[j] = 0;
    }
    s->busy[v] = s->sent[v] = 0;
    const int *order = arrival_order(s, v);
    for (int x = 0; x < m; x++) {
        int j = order ? order[x] : x;
        double size = psize(s, j);
        double got = root ? 0 : s->arrival[(size_t)v * m + (size_t)j];
        int nj = now;
        if (s->t->first2) /* (split: FPFS, each packet to its own tree's children) */
            kids_for(s, v, j, &nj);
        cpu = take(s, v, j, cpu);
        s->taken[j] = cpu;
        for (int i = 0; i < nj; i++)
            cpu = post(s, &l, v, i, j, cpu);
        if (s->order_seed && nj > 1 && c->gap_byte > 0 && !fair_link(s))
            shuffle_arrivals(s, v, j, nj);
        double copies = (keep ? size * c->copy_byte : 0) + (root ? 0 : size * c->copy_byte);
        cpu = run_cpu(s, v, cpu, copies);
        s->busy[v] += copies;
        done = s->classic ? got : cpu;
        double r = s->last_copy[j] > cpu && !keep ? s->last_copy[j] : cpu;
        s->rel[(size_t)v * m + (size_t)j] = r;
        if (s->fair)
            s->fair_cpu[j] = cpu;
        if (!root && credit_packet_after(s, j)) { /* then its credit packet to its parent */
            cpu = run_cpu(s, v, cpu, c->send_pkt);
            s->busy[v] += c->send_pkt;
        }
    }
    for (int i = now; i < d; i++)
        for (int j = 0; j < m; j++)
            cpu = post(s, &l, v, i, j, cpu);
    if (s->fair && s->nfair)
        fair_finish(s, v, keep);
    if (!root && s->job && s->job->window > 0 && s->job->window < m) /* (else none waited on) */
        for (int tree = 0; tree < (s->t->first2 ? 2 : 1); tree++)
            credit_times(s, v, tree);
    s->busy[v] += c->poll; /* its wait polls once more before it sleeps */
    share_count(s, v, cpu, cpu + c->poll);
    if (held)
        *held = d && !root ? held_peak(s, v) : 0;
    return root ? 0 : done;
}

/* The members in visiting order (parents first) into order; 0, or -1 when t is no tree. */
static int visit_order(const struct fm_model_tree *t, int *order)
{
    char *seen = calloc((size_t)t->n, 1);
    if (!seen)
        return -1;
    int head = 0, tail = 0, rc = 0;
    seen[t->root] = 1;
    order[tail++] = t->root;
    while (head < tail && rc == 0) {
        int v = order[head++];
        for (int e = t->first[v]; e < t->first[v + 1] && rc == 0; e++) {
            int k = t->kids[e];
            if (seen[k]++) /* reached twice: a cycle or a shared child */
                rc = -1;
            else
                order[tail++] = k;
        }
    }
    free(seen);
    return rc == 0 && tail == t->n ? 0 : -1;
}

/* Structural checks that make the walk safe: offsets in order, n - 1 edges, kids in range. */
static int tree_shape_ok(const struct fm_model_tree *t)
{
    if (!t || t->n < 1 || t->root < 0 || t->root >= t->n || !t->first || t->first[0] != 0 ||
        t->first[t->n] != t->n - 1 || (t->n > 1 && !t->kids))
        return 0;
    for (int p = 0; p < t->n; p++)
        if (t->first[p + 1] < t->first[p])
            return 0;
    for (int e = 0; e < t->n - 1; e++)
        if (t->kids[e] < 0 || t->kids[e] >= t->n)
            return 0;
    return 1;
}

/* One pass over every member; returns how far any release moved since the last pass. */
static double one_pass(struct sim *s, const int *order, struct fm_model_out *out)
{
    size_t cells = (size_t)s->t->n * (size_t)s->m, copies = (size_t)streams(s) * (size_t)s->m;
    double moved = 0;
    memcpy(s->rel_prev, s->rel, cells * sizeof *s->rel_prev);
    memcpy(s->cred_prev, s->cred, cells * sizeof *s->cred_prev);
    if (s->posted) {
        memcpy(s->posted_prev, s->posted, copies * sizeof *s->posted);
        memcpy(s->gone_prev, s->gone, copies * sizeof *s->gone);
    }
    if (s->net)
        memset(s->pipe, 0, (size_t)streams(s) * sizeof *s->pipe);
    out->T = 0;
    for (int i = 0; i < s->t->n; i++) {
        int v = order[i];
        double *held = out->held ? &out->held[v] : NULL;
        double done = simulate_member(s, v, held);
        if (out->member)
            out->member[v] = done;
        out->T = done > out->T ? done : out->T;
    }
    for (size_t k = 0; k < cells; k++) {
        double dm = fabs(s->rel[k] - s->rel_prev[k]), dc = fabs(s->cred[k] - s->cred_prev[k]);
        dm = dc > dm ? dc : dm; /* (a credit may move while no release does) */
        moved = dm > moved ? dm : moved;
    }
    return moved;
}

/* How many group ids the job's sharing uses (the largest + 1); 0 when nothing is shared. */
static int group_count(const struct sim *s)
{
    const struct fm_model_job *job = s->job;
    int groups = 0;
    if (!job || !job->group || !(job->cores > 0))
        return 0;
    for (int v = 0; v < s->t->n; v++)
        groups = job->group[v] >= groups ? job->group[v] + 1 : groups;
    return groups;
}

/* Completion is at least each sharing group's CPU work over its cores, and (a shared link)
 * its bytes at the link's rate. Sums per group id (members of no group, < 0, share nothing);
 * -1 when out of memory. */
static double sharing_bound(const struct sim *s)
{
    const struct fm_model_job *job = s->job;
    int n = s->t->n, groups = group_count(s);
    if (!groups)
        return 0;
    double *cpu = calloc(2 * (size_t)groups + 1, sizeof *cpu), *bytes = cpu + groups, bound = 0;
    if (!cpu)
        return -1;
    for (int v = 0; v < n; v++)
        if (job->group[v] >= 0) {
            cpu[job->group[v]] += s->busy[v];
            bytes[job->group[v]] += s->sent[v];
        }
    for (int g = 0; g < groups; g++) {
        double b = cpu[g] / job->cores;
        if (job->link_shared && !s->net && bytes[g] * s->c->gap_byte > b)
            b = bytes[g] * s->c->gap_byte;
        bound = b > bound ? b : bound;
    }
    free(cpu);
    return bound;
}

/* Slots for the groups with more members than cores: 1 when there are any, 0 when none, -1
 * when out of memory. */
static int share_init(struct sim *s)
{
    const struct fm_model_job *job = s->job;
    int n = s->t->n, groups = group_count(s);
    if (!groups)
        return 0;
    int *count = calloc((size_t)groups + 1, sizeof *count);
    struct share *sh = &s->sh;
    if (!count)
        return -1;
    for (int v = 0; v < n; v++)
        if (job->group[v] >= 0)
            count[job->group[v]]++;
    for (int g = 0; g < groups; g++) /* count[g] becomes g's slot */
        count[g] = count[g] > job->cores ? sh->nslots++ : -1;
    sh->slot = sh->nslots ? malloc((size_t)n * sizeof *sh->slot) : NULL;
    size_t cells = (size_t)sh->nslots * SHARE_BUCKETS;
    sh->prev = sh->slot ? calloc(2 * cells, sizeof *sh->prev) : NULL;
    sh->cur = sh->prev ? sh->prev + cells : NULL;
    for (int v = 0; sh->prev && v < n; v++)
        sh->slot[v] = job->group[v] >= 0 ? count[job->group[v]] : -1;
    free(count);
    return !sh->nslots ? 0 : sh->prev ? 1 : -1;
}

/* After a pass: the profile to run the next one by (the first one's as it is, later ones
 * averaged with what came before, which damps the back and forth of a fixed point). */
static void share_next(struct share *sh)
{
    size_t cells = (size_t)sh->nslots * SHARE_BUCKETS;
    for (size_t k = 0; k < cells; k++) {
        sh->prev[k] = sh->on ? (sh->prev[k] + sh->cur[k]) / 2 : sh->cur[k];
        sh->cur[k] = 0;
    }
    sh->on = 1;
}

/* Forget the profile and its span, for passes that may end far from the last ones. */
static void share_restart(struct share *sh)
{
    if (sh->prev)
        memset(sh->prev, 0, 2 * (size_t)sh->nslots * SHARE_BUCKETS * sizeof *sh->prev);
    sh->width = 0;
    sh->on = 0;
}

/* The passes: one; or, with a credit window or shared cores, until the releases and the
 * completion stop moving. The first pass with shared cores only sizes their profile, the
 * next counts who is runnable when, and the ones after run by it. FM_OK or FM_ERR_NOMEM. */
static int run_passes(struct sim *s, const int *order, int sharing, struct fm_model_out *out)
{
    int credits = s->job && s->job->window > 0 && s->job->window < s->m;
    int passes = s->t->first2 ? MODEL_SPLIT_PASSES : credits || sharing ? MODEL_PASSES : 1;
    double last = -1;
    for (int pass = 0; pass < passes; pass++) {
        double moved = one_pass(s, order, out), eps = 1e-12 * (out->T > 0 ? out->T : 1);
        int settled = moved <= eps && (!sharing || fabs(out->T - last) <= 1e-3 * out->T);
        if (sharing && !(s->sh.width > 0)) {
            double bound = sharing_bound(s), span = out->T > bound ? out->T : bound;
            if (bound < 0)
                return FM_ERR_NOMEM;
            s->sh.width = span * SHARE_SPAN / SHARE_BUCKETS;
            sharing = span > 0;
            settled = 0;
        } else if (sharing) {
            settled = settled && s->sh.on;
            share_next(&s->sh);
        }
        if (settled && pass > 0)
            break;
        last = out->T;
    }
    return FM_OK;
}

static int args_ok(const struct fm_model_tree *t, int m, size_t payload, size_t bytes,
                   enum fm_model_mode mode, const struct fm_costs *c, struct fm_model_out *out)
{
    return tree_shape_ok(t) && m >= 1 && payload > 0 && c && out &&
           (mode == FM_MODEL_FPFS || mode == FM_MODEL_STORE_FORWARD || mode == FM_MODEL_FCFS) &&
           bytes > (size_t)(m - 1) * payload && bytes <= (size_t)m * payload;
}

/* With routes back: the copies' times. FM_OK, FM_ERR_INVALID (a link id out of range) or
 * FM_ERR_NOMEM. */
static int queues_init(struct sim *s)
{
    const struct fm_model_net *net = s->net;
    int n = streams(s);
    size_t cells = (size_t)n * (size_t)s->m;
    for (int e = net->back_first[0]; e < net->back_first[n]; e++)
        if (net->back_links[e] < 0 || net->back_links[e] >= net->nlinks)
            return FM_ERR_INVALID;
    s->posted = calloc(4 * cells, sizeof *s->posted);
    if (!s->posted)
        return FM_ERR_NOMEM;
    s->gone = s->posted + cells;
    s->posted_prev = s->gone + cells;
    s->gone_prev = s->posted_prev + cells;
    return FM_OK;
}

/* The net's state: every share 1, and which streams cross each link; the link concentration
 * into out. FM_OK, FM_ERR_INVALID (a link id out of range) or FM_ERR_NOMEM. */
static int net_init(struct sim *s, struct fm_model_out *out)
{
    const struct fm_model_net *net = s->net;
    int n = streams(s), nl = net->nlinks, visits = net->route_first[n] - net->route_first[0];
    s->pipe = calloc(5 * (size_t)n, sizeof *s->pipe);
    s->link_first = calloc((size_t)nl + 1 + (size_t)(visits > 0 ? visits : 1), sizeof(int));
    if (!s->pipe || !s->link_first)
        return FM_ERR_NOMEM;
    s->tokens = s->pipe + n;
    s->share = s->tokens + n;
    s->span0 = s->share + n;
    s->span1 = s->span0 + n;
    s->link_edges = s->link_first + nl + 1;
    for (int v = 0; v < n; v++) {
        s->share[v] = 1;
        for (int e = net->route_first[v]; e < net->route_first[v + 1]; e++) {
            int l = net->route_links[e];
            if (l < 0 || l >= nl)
                return FM_ERR_INVALID;
            s->link_first[l + 1]++;
        }
    }
    out->link_visits = visits;
    out->links_used = 0;
    for (int l = 0; l < nl; l++) {
        out->links_used += s->link_first[l + 1] > 0;
        s->link_first[l + 1] += s->link_first[l];
    }
    int *next = calloc((size_t)nl + 1, sizeof *next);
    if (!next)
        return FM_ERR_NOMEM;
    memcpy(next, s->link_first, (size_t)nl * sizeof *next);
    for (int v = 0; v < n; v++)
        for (int e = net->route_first[v]; e < net->route_first[v + 1]; e++)
            s->link_edges[next[net->route_links[e]]++] = v;
    free(next);
    return net->back_first ? queues_init(s) : FM_OK;
}

/* Room for the copies of the member with the most children. FM_OK or FM_ERR_NOMEM. */
static int fair_init(struct sim *s)
{
    int most = 1; /* (a split multicast's member: its children in both trees, every packet) */
    for (int v = 0; v < s->t->n; v++) {
        int d = s->t->first[v + 1] - s->t->first[v];
        d += s->t->first2 ? s->t->first2[v + 1] - s->t->first2[v] : 0;
        most = d > most ? d : most;
    }
    size_t cap = (size_t)most * (size_t)s->m;
    s->fair = malloc(cap * sizeof *s->fair);
    s->fair_cpu = malloc((cap + (size_t)s->m) * sizeof *s->fair_cpu);
    s->fair_heap = malloc(cap * sizeof *s->fair_heap);
    s->fair_key = s->fair_cpu ? s->fair_cpu + s->m : NULL;
    return s->fair && s->fair_cpu && s->fair_heap ? FM_OK : FM_ERR_NOMEM;
}

/* After a pass: each copy's stream's share, the most streams (time-weighted over its own
 * span, itself included) under way on any link of its route, averaged with the last share
 * (which damps the back and forth: a larger share stretches the spans it overlaps). Returns
 * how far any share moved, as a fraction. */
static double net_shares(struct sim *s)
{
    const struct fm_model_net *net = s->net;
    double moved = 0;
    for (int v = 0; v < streams(s); v++) {
        double a = s->span0[v], b = s->span1[v], most = 1;
        if (route_len(net, v) == 0 || !(b > a))
            continue;
        for (int e = net->route_first[v]; e < net->route_first[v + 1]; e++) {
            int l = net->route_links[e];
            double load = 0;
            for (int k = s->link_first[l]; k < s->link_first[l + 1]; k++) {
                int u = s->link_edges[k];
                double lo = a > s->span0[u] ? a : s->span0[u],
                       hi = b < s->span1[u] ? b : s->span1[u];
                load += hi > lo ? (hi - lo) / (b - a) : 0;
            }
            most = load > most ? load : most;
        }
        double next = (s->share[v] + most) / 2, dm = fabs(next - s->share[v]) / s->share[v];
        moved = dm > moved ? dm : moved;
        s->share[v] = next;
    }
    return moved;
}

/* One simulation, the links' order given by seed (0: posting order). */
static int sim_once(const struct fm_model_tree *t, int m, size_t payload, size_t bytes,
                    enum fm_model_mode mode, const struct fm_costs *c,
                    const struct fm_model_job *job, int classic, uint64_t seed,
                    struct fm_model_out *out)
{
    size_t cells = (size_t)t->n * (size_t)m;
    struct sim s = {.t = t,
                    .c = c,
                    .job = job,
                    .mode = mode,
                    .m = m,
                    .classic = classic,
                    .payload = payload,
                    .bytes = bytes,
                    .order_seed = seed,
                    .net = job ? job->net : NULL};
    int *order = malloc((size_t)t->n * sizeof *order);
    s.arrival = calloc(cells, sizeof *s.arrival);
    s.rel = calloc(cells, sizeof *s.rel);
    s.rel_prev = calloc(cells, sizeof *s.rel_prev);
    s.cred = calloc(2 * cells + 3 * (size_t)m, sizeof *s.cred);
    s.cred_prev = s.cred ? s.cred + cells : NULL;
    s.taken = s.cred ? s.cred + 2 * cells : NULL;
    s.cred_sort = s.cred ? s.taken + m : NULL;
    s.busy = calloc((size_t)t->n, sizeof *s.busy);
    s.sent = calloc((size_t)t->n, sizeof *s.sent);
    s.last_copy = calloc((size_t)m, sizeof *s.last_copy);
    s.porder = t->first2 ? malloc((size_t)m * sizeof *s.porder) : NULL;
    s.paid = calloc((size_t)m, 1);
    s.local_in = calloc((size_t)t->n, 1);
    s.q_ready = calloc(2 * (size_t)t->n, sizeof *s.q_ready); /* (a member has < n children) */
    s.q_left = s.q_ready ? s.q_ready + t->n : NULL;
    s.q_idx = malloc((size_t)t->n * sizeof *s.q_idx);
    int rc = order && s.arrival && s.rel && s.rel_prev && s.cred && s.busy && s.sent &&
                     s.last_copy && s.paid && s.local_in && s.q_ready && s.q_idx &&
                     (s.porder || !t->first2)
                 ? FM_OK
                 : FM_ERR_NOMEM;
    if (rc == FM_OK && t->first2) { /* the second tree must be one too (order: scratch) */
        struct fm_model_tree t2 = {t->n, t->root, t->first2, t->kids2, NULL, NULL};
        if (!tree_shape_ok(&t2) || visit_order(&t2, order) || mode != FM_MODEL_FPFS)
            rc = FM_ERR_INVALID;
    }
    if (rc == FM_OK && visit_order(t, order))
        rc = FM_ERR_INVALID;
    /* Pass 1 takes every credit as back at `latency` (cred_prev all 0); each later pass
     * limits by the last pass's credits. */
    int sharing = rc == FM_OK ? share_init(&s) : 0;
    if (sharing < 0)
        rc = FM_ERR_NOMEM;
    if (rc == FM_OK && s.net)
        rc = net_init(&s, out);
    if (rc == FM_OK && fair_link(&s))
        rc = fair_init(&s);
    if (rc == FM_OK)
        rc = run_passes(&s, order, sharing, out);
    for (int round = 0; rc == FM_OK && s.net && round < NET_ROUNDS; round++) {
        if (net_shares(&s) <= NET_SETTLED)
            break;
        share_restart(&s.sh); /* (new shares move the completion: the profile's span too) */
        rc = run_passes(&s, order, sharing, out);
    }
    if (rc == FM_OK) {
        out->cpu_bound = sharing_bound(&s);
        if (out->cpu_bound < 0)
            rc = FM_ERR_NOMEM;
        else if (out->cpu_bound > out->T)
            out->T = out->cpu_bound;
    }
    free(order);
    free(s.arrival);
    free(s.rel);
    free(s.rel_prev);
    free(s.cred);
    free(s.busy);
    free(s.sent);
    free(s.last_copy);
    free(s.porder);
    free(s.paid);
    free(s.local_in);
    free(s.q_ready);
    free(s.q_idx);
    free(s.sh.slot);
    free(s.sh.prev);
    free(s.pipe);
    free(s.link_first);
    free(s.posted);
    free(s.fair);
    free(s.fair_cpu);
    free(s.fair_heap);
    return rc;
}

/* Any member with more than one child? */
static int fans_out(const struct fm_model_tree *t)
{
    for (int v = 0; v < t->n; v++)
        if (t->first[v + 1] - t->first[v] > 1 || (t->first2 && t->first2[v + 1] - t->first2[v] > 1))
            return 1;
    return 0;
}

/* The simulation, or the mean of job->orders of them in random link orders. */
static int sim_run(const struct fm_model_tree *t, int m, size_t payload, size_t bytes,
                   enum fm_model_mode mode, const struct fm_costs *c,
                   const struct fm_model_job *job, int classic, struct fm_model_out *out)
{
    if (!args_ok(t, m, payload, bytes, mode, c, out))
        return FM_ERR_INVALID;
    struct fm_costs sized; /* the link's costs at this packet size, where they were measured */
    fm_costs_at(c, payload, &sized);
    c = &sized;
    /* (over a net every copy has its own stream: no shared link to order) */
    /* (nor on a fair link: its copies share it, none waits for another) */
    int k =
        job && !job->net && job->orders > 1 && c->gap_byte > 0 && !(c->link_fair > 0) && fans_out(t)
            ? job->orders
            : 1;
    if (k == 1)
        return sim_once(t, m, payload, bytes, mode, c, job, classic, 0, out);
    size_t n = (size_t)t->n;
    double *each = calloc(2 * n, sizeof *each), *sum = each + n, T = 0, bound = 0;
    if (!each)
        return FM_ERR_NOMEM;
    struct fm_model_out one = {.member = each, .held = out->held};
    int rc = FM_OK;
    for (int i = 0; i < k && rc == FM_OK; i++) {
        rc = sim_once(t, m, payload, bytes, mode, c, job, classic, (uint64_t)i + 1, &one);
        T += one.T / k;
        bound = one.cpu_bound > bound ? one.cpu_bound : bound;
        for (size_t v = 0; v < n; v++)
            sum[v] += each[v] / k;
    }
    out->T = T;
    out->cpu_bound = bound;
    if (out->member)
        memcpy(out->member, sum, n * sizeof *sum);
    free(each);
    return rc;
}

int fm_model_sim(const struct fm_model_tree *t, int m, size_t payload, size_t bytes,
                 enum fm_model_mode mode, const struct fm_costs *c, const struct fm_model_job *job,
                 struct fm_model_out *out)
{
    return sim_run(t, m, payload, bytes, mode, c, job, 0, out);
}

int fm_model_run(const struct fm_model_tree *t, int m, double lambda, enum fm_model_mode mode,
                 double *T, double *per_member)
{
    if (!T || !(lambda > 0 && isfinite(lambda)))
        return FM_ERR_INVALID;
    /* One step per copy at the sender; the copy can be forwarded lambda after it began. */
    struct fm_costs c = {.send_pkt = 1.0, .latency = lambda - 1.0};
    struct fm_model_out out = {.member = per_member};
    int rc = sim_run(t, m, 1, (size_t)m, mode, &c, NULL, 1, &out);
    if (rc == FM_OK)
        *T = out.T;
    return rc;
}

int fm_model_layout(const struct fm_tree_desc *d, int **first, int **kids)
{
    *first = NULL;
    *kids = NULL;
    if (fm_tree_check(d) != FM_OK)
        return FM_ERR_INVALID;
    *first = malloc(((size_t)d->n + 1) * sizeof **first);
    *kids = malloc((size_t)(d->n > 1 ? d->n - 1 : 1) * sizeof **kids);
    int rc = *first && *kids ? fm_tree_layout(d, *first, *kids) : FM_ERR_NOMEM;
    if (rc != FM_OK) {
        free(*first);
        free(*kids);
        *first = *kids = NULL;
    }
    return rc;
}

int fm_model_splits(const struct fm_tree_desc *d, int m, int mode)
{
    return d->builder == fm_tree_lookup("twotree") && mode == FM_MODEL_FPFS && m >= 2 && d->n >= 3;
}

int fm_model_tree_of(const struct fm_tree_desc *d, int split, struct fm_model_tree *t)
{
    int *first, *kids, *first2 = NULL, *kids2 = NULL;
    *t = (struct fm_model_tree){0};
    int rc = fm_model_layout(d, &first, &kids);
    if (rc == FM_OK && split) {
        struct fm_tree_desc d1 = *d;
        d1.param = 1;
        if ((rc = fm_model_layout(&d1, &first2, &kids2)) != FM_OK) {
            free(first);
            free(kids);
        }
    }
    if (rc == FM_OK)
        *t = (struct fm_model_tree){d->n, d->root, first, kids, first2, kids2};
    return rc;
}

void fm_model_tree_free(struct fm_model_tree *t)
{
    free((void *)t->first);
    free((void *)t->kids);
    free((void *)t->first2);
    free((void *)t->kids2);
    *t = (struct fm_model_tree){0};
}

/* Lays d out whole (both trees of a split multicast) and simulates it with lambda in steps. */
static int run_desc(const struct fm_tree_desc *d, int m, double lambda, enum fm_model_mode mode,
                    double *T, double *per_member)
{
    struct fm_model_tree t;
    int rc = fm_model_tree_of(d, fm_model_splits(d, m, mode), &t);
    if (rc == FM_OK)
        rc = fm_model_run(&t, m, lambda, mode, T, per_member);
    fm_model_tree_free(&t);
    return rc;
}

int fm_model_steps(const struct fm_tree_desc *d, int m, double lambda, enum fm_model_mode mode,
                   double *T, double *per_member)
{
    if (!(lambda >= 1.0 && isfinite(lambda)))
        return FM_ERR_INVALID;
    return run_desc(d, m, lambda, mode, T, per_member);
}

int fm_model_seconds(const struct fm_tree_desc *d, int m, double step_s, double lambda_s,
                     enum fm_model_mode mode, double *T, double *per_member)
{
    if (!(step_s > 0 && isfinite(step_s) && lambda_s > 0 && isfinite(lambda_s)))
        return FM_ERR_INVALID;
    int rc = run_desc(d, m, lambda_s / step_s, mode, T, per_member);
    if (rc != FM_OK)
        return rc;
    *T *= step_s;
    for (int p = 0; per_member && p < d->n; p++)
        per_member[p] *= step_s;
    return FM_OK;
}
