/* SPDX-License-Identifier: BSD-3-Clause */
/* Which tree a multicast uses: the one the caller names, or (auto) the one the model
 * (model.h) predicts fastest for this member count, message size and mode, from the job's
 * costs. Auto weighs every builder the registry flags FM_TREE_AUTO with every parameter the
 * builder offers (kbinomial's k, postal's lambda), the torus builders (FM_TREE_TORUS) when the
 * members have coordinates, and the packet size: smaller packets
 * pipeline deeper down a tree but each costs a header and a completion, so FM_PACKET_SIZE,
 * its half, quarter, ... (down to FM_MCAST_MIN_PACKET bytes and never below the descriptor)
 * are weighed too.
 *
 * Costs (costs.h) come from, field by field: FM_MCAST_COSTS, else fm_mcast_calibrate or
 * FM_MCAST_COSTS_FILE, else an estimate for the provider. Decisions are cached per (members,
 * bytes, mode). */
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "log.h"
#include "model.h"
#include "pool.h"
#include "mcast_desc.h"
#include "mcast_state.h"
#include "topo_view.h"
#include "torus_net.h"
#include "tree_choice.h"
#include "prefix_router.h"
#include "ipmc/ipmc.h"
#include "ipmc/ipmc_model.h"

#define CHOICE_CACHE 64
/* Parameters auto weighs per builder, at most. */
#define FM_MCAST_PARAMS 16

struct choice {
    size_t bytes, payload;
    int n, mode, builder, param;
    double lambda;
};

struct fm_mcast_costs {
    struct fm_costs c, env; /* in use; FM_MCAST_COSTS's fields (env_set) */
    unsigned env_set;
    const char *source; /* where the fields FM_MCAST_COSTS leaves come from */
    struct choice cache[CHOICE_CACHE];
};

/* FM_MCAST_COSTS's fields over c. */
static void apply_env(struct fm_mcast_costs *mc)
{
    fm_costs_merge(&mc->c, &mc->env, mc->env_set);
}

static struct fm_mcast_costs *costs_state(fm_context *ctx)
{
    if (ctx->mcast->costs)
        return ctx->mcast->costs;
    struct fm_mcast_costs *mc = calloc(1, sizeof *mc);
    if (!mc)
        return NULL;
    fm_costs_estimate(&mc->c, ctx->tp ? ctx->tp->info.local_only : 1,
                      ctx->tp && ctx->tp->ops->sendv_shared);
    mc->source = "estimated";
    char err[160];
    const char *file = ctx->cfg.mcast_costs_file;
    if (file[0] && access(file, F_OK) == 0) {
        if (fm_costs_load(file, &mc->c, err, sizeof err) == 0)
            mc->source = "FM_MCAST_COSTS_FILE";
        else
            fm_log(0, "FM_MCAST_COSTS_FILE %s: %s; using estimates", file, err);
    }
    if (ctx->cfg.mcast_costs[0] &&
        fm_costs_parse(ctx->cfg.mcast_costs, &mc->env, &mc->env_set, NULL, 0))
        mc->env_set = 0; /* (fm_mcast_check_config refused it at fm_init) */
    apply_env(mc);
    ctx->mcast->costs = mc;
    return mc;
}

const struct fm_costs *fm_mcast_costs(fm_context *ctx, const char **source)
{
    struct fm_mcast_costs *mc = costs_state(ctx);
    if (source)
        *source = !mc                                           ? "none"
                  : mc->env_set == (1u << FM_COSTS_NFIELDS) - 1 ? "FM_MCAST_COSTS"
                                                                : mc->source;
    return mc ? &mc->c : NULL;
}

void fm_mcast_set_costs(fm_context *ctx, const struct fm_costs *c, const char *source)
{
    struct fm_mcast_costs *mc = costs_state(ctx);
    if (!mc)
        return;
    memset(mc->cache, 0, sizeof mc->cache);
    mc->c = *c;
    mc->source = source;
    apply_env(mc);
}

static int packets(size_t bytes, size_t payload)
{
    size_t m = (bytes + payload - 1) / payload;
    return m < 1 ? 1 : m > INT_MAX ? INT_MAX : (int)m;
}

/* The model's view of the job around a tree of n members: credits, and who shares cores. */
/* Random link orders the model averages over where a link has a gap (model.h). */
#define FM_MODEL_ORDERS 3

struct job_view {
    struct fm_model_job job;
    int *group;
};

static void job_view(fm_context *ctx, const struct fm_tree_desc *d, struct job_view *v)
{
    *v = (struct job_view){.job.window = (int)ctx->cfg.credits,
                           .job.orders = FM_MODEL_ORDERS,
                           .job.shared = ctx->share_copies,
                           .job.lent = ctx->lend_packets};
    long cores = ctx->cfg.mcast_cores;
    const struct fm_tree_topo *topo = d->topo;
    if (cores == 0 && !topo)
        return; /* where the members are is unknown: no sharing */
    /* (the members' hosts and racks after the groups, in the same allocation) */
    v->group = calloc(3 * (size_t)d->n, sizeof *v->group);
    if (!v->group)
        return;
    if (topo && topo->ndims >= 2 && ctx->topo && fm_topo_kind(ctx->topo) == FM_TOPO_FILE) {
        int *rack = v->group + 2 * (size_t)d->n, xyz[3];
        for (int p = 0; p < d->n; p++) /* (a rack layout's file: "HOST RACK POSITION") */
            rack[p] = topo->coord(topo->arg, p, xyz) == FM_OK ? xyz[0] : -1;
        v->job.rack = rack;
    }
    for (int p = 0; cores == 0 && p < d->n; p++)
        v->group[p] = topo->host(topo->arg, p);
    if (topo) {
        int *host = v->group + d->n;
        for (int p = 0; p < d->n; p++)
            host[p] = topo->host(topo->arg, p);
        v->job.host = host;
    }
    if (cores == 0) {
        long online = sysconf(_SC_NPROCESSORS_ONLN);
        cores = online > 0 ? online : 1;
    }
    v->job.group = v->group;
    v->job.cores = (double)cores;
    v->job.link_shared = ctx->cfg.mcast_cores == 0;
}

/* The model's time for a laid-out tree. The simulation costs members x packets, for each of
 * auto's ~140 candidates, too much to run in fm_mcast_begin for a long message; past `exact`
 * packets the completion time grows by the same amount per packet (the pipeline's slowest
 * stage sets the pace), so it is simulated at exact and exact / 2 packets and extended along
 * that line. */
#define FM_MODEL_EXACT 256

/* One simulation: completion into *T and, when held is not NULL, the most packets any member
 * held at once (held_each: NULL, or t->n doubles of scratch). */
static int model_once(const struct fm_model_tree *t, const struct fm_costs *c,
                      const struct fm_model_job *job, int m, size_t payload, size_t bytes, int mode,
                      double *held_each, double *T, double *held)
{
    struct fm_model_out out = {.held = held_each};
    int rc = fm_model_sim(t, m, payload, bytes, (enum fm_model_mode)mode, c, job, &out);
    *T = out.T;
    for (int v = 0; held && v < t->n; v++)
        *held = v == 0 || held_each[v] > *held ? held_each[v] : *held;
    return rc;
}

static int model_time(const struct fm_model_tree *t, const struct fm_costs *c,
                      const struct fm_model_job *job, size_t bytes, size_t payload, int mode,
                      double *T, double *held)
{
    int m = packets(bytes, payload);
    /* members x packets simulated, at most about 2^17 over all the link orders; where even 4
     * packets of every member would exceed that, one order (the posting order) */
    struct fm_model_job one_order = *job;
    int orders = c->gap_byte > 0 && job->orders > 1 ? job->orders : 1;
    if ((long)t->n * 4 * orders > (1L << 17))
        one_order.orders = orders = 1;
    job = &one_order;
    int exact = (1 << 17) / t->n / orders;
    exact = exact > FM_MODEL_EXACT ? FM_MODEL_EXACT : exact < 4 ? 4 : exact;
    double *each = held ? malloc((size_t)t->n * sizeof *each) : NULL;
    if (held && !each)
        return FM_ERR_NOMEM;
    int rc;
    if (m <= exact) {
        rc = model_once(t, c, job, m, payload, bytes, mode, each, T, held);
    } else { /* along the line through exact and exact / 2 packets */
        double hi = 0, lo = 0, held_hi = 0, held_lo = 0;
        rc = model_once(t, c, job, exact, payload, (size_t)exact * payload, mode, each, &hi,
                        held ? &held_hi : NULL);
        if (rc == FM_OK)
            rc = model_once(t, c, job, exact / 2, payload, (size_t)(exact / 2) * payload, mode,
                            each, &lo, held ? &held_lo : NULL);
        double per_pkt = (double)(m - exact) / (exact / 2);
        *T = hi + per_pkt * (hi - lo);
        if (held) { /* FCFS and store-and-forward hold more with more packets, never over m */
            double h = held_hi + per_pkt * (held_hi - held_lo);
            *held = h < m ? h : m;
        }
    }
    free(each);
    return rc;
}

/* How many members at most share one core during a two-stage multicast (all of them receive
 * at once): the most in one of job_view's groups (a host, or the whole job with
 * FM_MCAST_CORES) over its cores. */
static int by_value(const void *a, const void *b)
{
    int x = *(const int *)a, y = *(const int *)b;
    return (x > y) - (x < y);
}

static double ipmc_share(fm_context *ctx, const struct fm_tree_desc *d)
{
    struct job_view v;
    job_view(ctx, d, &v);
    int most = 0;
    if (v.group) { /* (sorted in place: the view is this call's) */
        qsort(v.group, (size_t)d->n, sizeof *v.group, by_value);
        for (int p = 0, run = 0; p < d->n; p++) {
            run = p && v.group[p] == v.group[p - 1] ? run + 1 : 1;
            most = run > most ? run : most;
        }
    }
    free(v.group);
    return v.job.cores > 0 && most > v.job.cores ? most / v.job.cores : 1;
}

/* The largest frame an Ethernet router passes on whole before it sends it on (the model adds
 * a frame's time per router). */
#define FM_TORUS_FRAME 1514

/* The torus of hosts under the members, for the model: each member's route from its parent
 * (model.h's fm_model_net), when the job's topology is a torus of hosts (FM_TOPOLOGY=torus:..
 * with one position per host) and every member has coordinates. 1 with *net filled (free
 * net->route_first), 0 when there is none, -1 when out of memory. */
static int torus_view(fm_context *ctx, const struct fm_tree_desc *d, const struct fm_model_tree *t,
                      struct fm_model_net *net)
{
    const struct fm_tree_topo *topo = d->topo;
    if (!topo || fm_topo_kind(ctx->topo) != FM_TOPO_TORUS_HOSTS || topo->ndims < 1 ||
        topo->ndims > 3)
        return 0;
    struct fm_torus_net tn = {.ndims = topo->ndims,
                              .dims = {1, 1, 1},
                              .unidirectional = fm_topo_unidirectional(ctx->topo) == 1};
    for (int a = 0; a < topo->ndims; a++)
        tn.dims[a] = topo->dims[a];
    return fm_torus_model_net(&tn, t, topo->coord, topo->arg, FM_TORUS_FRAME, net) == FM_OK ? 1
                                                                                            : -1;
}

/* The links d's copies of a message of m packets cross on a torus of hosts (both trees' when
 * it is split), summed and distinct (0 and 0 elsewhere). */
static void torus_links(fm_context *ctx, const struct fm_tree_desc *d, int m, int mode,
                        fm_mcast_prediction *out)
{
    struct fm_model_tree t;
    if (d->builder == fm_tree_lookup("ipmc") ||
        fm_model_tree_of(d, fm_model_splits(d, m, mode), &t) != FM_OK)
        return;
    struct fm_model_net net;
    if (torus_view(ctx, d, &t, &net) == 1) {
        char *used = calloc((size_t)net.nlinks, 1);
        int visits = net.route_first[t.first2 ? 2 * d->n : d->n];
        for (int e = 0; used && e < visits; e++)
            out->links_used += !used[net.route_links[e]]++;
        out->link_visits = used ? (uint32_t)visits : 0;
        free(used);
        free((void *)net.route_first);
    }
    fm_model_tree_free(&t);
}

static double seconds_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

/* Tree creation at the root: one run of the builder for its children, median of 5. */
static double tree_seconds(const struct fm_tree_desc *d)
{
    size_t bytes = fm_tree_scratch_size(d);
    void *scratch = bytes ? malloc(bytes) : NULL;
    int *kids = malloc((size_t)d->n * sizeof *kids);
    double runs[5] = {0};
    for (int i = 0; kids && (scratch || !bytes) && i < 5; i++) {
        double t0 = seconds_now();
        fm_tree_children(d, d->root, kids, d->n, scratch);
        runs[i] = seconds_now() - t0;
        for (int k = i; k > 0 && runs[k] < runs[k - 1]; k--) { /* kept sorted */
            double x = runs[k];
            runs[k] = runs[k - 1];
            runs[k - 1] = x;
        }
    }
    free(scratch);
    free(kids);
    return runs[2];
}

int fm_mcast_model_predict(fm_context *ctx, const struct fm_tree_desc *d, size_t bytes,
                           size_t payload, int mode, double *T, double *held)
{
    const struct fm_costs *c = fm_mcast_costs(ctx, NULL);
    if (!c)
        return FM_ERR_NOMEM;
    if (d->builder == fm_tree_lookup("ipmc")) { /* no tree to simulate */
        *T = fm_ipmc_model(c, d->n, ipmc_share(ctx, d), bytes, fm_ipmc_loss(ctx));
        if (held)
            *held = (double)packets(bytes, payload); /* (every member keeps it all) */
        return FM_OK;
    }
    struct fm_model_tree t;
    int split = fm_model_splits(d, packets(bytes ? bytes : 1, payload), mode);
    int rc = fm_model_tree_of(d, split, &t);
    if (rc == FM_OK) {
        struct job_view v;
        job_view(ctx, d, &v);
        struct fm_model_net net;
        int on_torus = torus_view(ctx, d, &t, &net);
        v.job.net = on_torus == 1 ? &net : NULL;
        rc = on_torus < 0 ? FM_ERR_NOMEM
                          : model_time(&t, c, &v.job, bytes ? bytes : 1, payload, mode, T, held);
        if (on_torus == 1)
            free((void *)net.route_first);
        free(v.group);
    }
    fm_model_tree_free(&t);
    return rc;
}

/* Resolve d's parameter for this message (kbinomial's k, postal's lambda), builder set. */
static int resolved(fm_context *ctx, size_t bytes, size_t payload, struct fm_tree_desc *d)
{
    const struct fm_costs *c = fm_mcast_costs(ctx, NULL);
    d->m = packets(bytes, payload);
    d->lambda = c ? fm_costs_lambda(c, (double)(bytes < payload ? bytes : payload)) : 1.0;
    if (d->param == 0 && d->builder == fm_tree_lookup("prefix"))
        d->param = (int)ctx->cfg.prefix_base; /* the root's choice travels in the descriptor */
    struct fm_tree_desc r;
    if (fm_tree_resolve(d, &r) != FM_OK || fm_tree_check(&r) != FM_OK)
        return FM_ERR_TREE;
    *d = r;
    return FM_OK;
}

/* Fill in a named tree. */
static int named(fm_context *ctx, const char *spec, size_t bytes, struct fm_tree_desc *d)
{
    char err[160];
    if (fm_tree_parse(spec, &d->builder, &d->param, err, sizeof err)) {
        fm_log(1, "multicast tree \"%s\": %s", spec, err);
        return FM_ERR_TREE;
    }
    return resolved(ctx, bytes, ctx->packet_size, d);
}

/* The candidate (builder, parameter) with the least predicted time *t for bytes in packets of
 * payload, among the registry's builders flagged FM_TREE_AUTO and their parameters. */
static int best_tree(fm_context *ctx, size_t bytes, size_t payload, int mode,
                     struct fm_tree_desc *d, double *t)
{
    double best_t = -1;
    struct fm_tree_desc win = *d;
    for (int i = 0; i < fm_tree_count(); i++) {
        unsigned flags;
        int builder = fm_tree_id_at(i, &flags), params[FM_MCAST_PARAMS];
        int torus = d->topo && d->topo->ndims > 0;
        if (!(flags & FM_TREE_AUTO) && !(torus && (flags & FM_TREE_TORUS)))
            continue;
        int np = fm_tree_candidates(builder, d->n, params, FM_MCAST_PARAMS);
        for (int k = 0; k < np && k < FM_MCAST_PARAMS; k++) {
            struct fm_tree_desc cand = *d;
            double T;
            cand.builder = builder;
            cand.param = params[k];
            if (resolved(ctx, bytes, payload, &cand) ||
                fm_mcast_model_predict(ctx, &cand, bytes, payload, mode, &T, NULL))
                continue;
            if (best_t < 0 || T < best_t * (1 - 1e-9)) {
                best_t = T;
                win = cand;
            }
        }
    }
    if (best_t < 0)
        return FM_ERR_TREE;
    *d = win;
    *t = best_t;
    return FM_OK;
}

/* A named "ipmc": it has one mode (FPFS: FM_ERR_INVALID for the others) and needs this rank's
 * datagram multicast (FM_ERR_TREE without). */
static int ipmc_usable(fm_context *ctx, int mode)
{
    if (mode != FM_MODEL_FPFS)
        return FM_ERR_INVALID;
    if (fm_ipmc_available(ctx))
        return FM_OK;
    fm_log(1, "tree ipmc needs datagram multicast, which is off here (FM_MCAST_DGRAM)");
    return FM_ERR_TREE;
}

/* Auto weighs the two-stage multicast where this rank has datagram multicast, the members
 * span more than one host (on one host there is no network to copy for them) and the mode is
 * FPFS (it has no other). */
static int ipmc_candidate(fm_context *ctx, const struct fm_tree_desc *d, int mode)
{
    if (mode != FM_MODEL_FPFS || !fm_ipmc_available(ctx) || !d->topo || d->n < 2)
        return 0;
    int h0 = d->topo->host(d->topo->arg, 0);
    for (int p = 1; p < d->n; p++)
        if (d->topo->host(d->topo->arg, p) != h0)
            return 1;
    return 0;
}

static int resolved_ipmc(fm_context *ctx, size_t bytes, struct fm_tree_desc *d)
{
    d->builder = fm_tree_lookup("ipmc");
    d->param = 0;
    return resolved(ctx, bytes, ctx->packet_size, d);
}

/* Auto: the (tree, packet size) pair with the least predicted time; ties keep the larger
 * packet (fewer completions for the same time); and the two-stage multicast where it may. */
static int best(fm_context *ctx, size_t bytes, size_t min_payload, int mode, struct fm_tree_desc *d,
                size_t *payload)
{
    size_t floor = min_payload > FM_MCAST_MIN_PACKET ? min_payload : FM_MCAST_MIN_PACKET;
    double best_t = -1;
    struct fm_tree_desc win = *d;
    size_t win_payload = ctx->packet_size;
    for (int i = 0; i <= FM_MCAST_PACKET_CHOICES; i++) {
        size_t p = ctx->packet_size >> i;
        if (i > 0 && (p < floor || p >= bytes)) /* no halving below the floor or of one packet */
            break;
        /* store-and-forward and FCFS members hold the whole message: no packet size that
         * makes more packets than they may hold (mcast.c refuses those, FM_ERR_TOO_LONG) */
        if (mode != FM_MODEL_FPFS && i > 0 && bytes / p + 2 > ctx->pool.held_max)
            break;
        double t;
        struct fm_tree_desc cand = *d;
        if (best_tree(ctx, bytes, p, mode, &cand, &t))
            continue;
        if (best_t < 0 || t < best_t * (1 - 1e-9)) {
            best_t = t;
            win = cand;
            win_payload = p;
        }
    }
    struct fm_tree_desc two = *d;
    double t;
    if (ipmc_candidate(ctx, d, mode) && !resolved_ipmc(ctx, bytes, &two) &&
        !fm_mcast_model_predict(ctx, &two, bytes, ctx->packet_size, mode, &t, NULL) &&
        (best_t < 0 || t < best_t * (1 - 1e-9))) {
        best_t = t;
        win = two;
        win_payload = ctx->packet_size;
    }
    if (best_t < 0)
        return FM_ERR_TREE;
    *d = win;
    *payload = win_payload;
    return FM_OK;
}

int fm_mcast_choose(fm_context *ctx, const char *spec, size_t bytes, size_t min_payload, int mode,
                    struct fm_tree_desc *d, size_t *payload)
{
    if (!spec)
        spec = ctx->cfg.tree;
    *payload = ctx->packet_size;
    if (strcmp(spec, "auto")) {
        int rc = named(ctx, spec, bytes, d);
        if (rc == FM_OK && d->builder == fm_tree_lookup("ipmc"))
            return ipmc_usable(ctx, mode);
        size_t seg = ctx->cfg.prefix_segment;
        if (rc == FM_OK && d->builder == fm_tree_lookup("prefix") && seg && seg < *payload) {
            *payload = seg > min_payload ? seg : min_payload; /* (the descriptor fits packet 0) */
            d->m = packets(bytes, *payload);
        }
        return rc;
    }
    struct fm_mcast_costs *mc = costs_state(ctx);
    unsigned slot = ((unsigned)d->n * 31u + (unsigned)bytes * 7u + (unsigned)mode) % CHOICE_CACHE;
    struct choice *e = mc ? &mc->cache[slot] : NULL;
    if (e && e->n == d->n && e->bytes == bytes && e->mode == mode && e->payload >= min_payload) {
        d->builder = e->builder;
        d->param = e->param;
        d->lambda = e->lambda;
        d->m = packets(bytes, e->payload);
        *payload = e->payload;
        return FM_OK;
    }
    int rc = best(ctx, bytes, min_payload, mode, d, payload);
    if (rc == FM_OK && e)
        *e = (struct choice){bytes, *payload, d->n, mode, d->builder, d->param, d->lambda};
    return rc;
}

int fm_mcast_mode(unsigned flags)
{
    if ((flags & FM_MCAST_STORE_FORWARD) && (flags & FM_MCAST_FCFS))
        return -1;
    if (flags & ~(unsigned)(FM_MCAST_STORE_FORWARD | FM_MCAST_FCFS | FM_MCAST_ACK))
        return -1; /* (acknowledgements cost the model nothing: they follow completion) */
    return flags & FM_MCAST_STORE_FORWARD ? FM_MODEL_STORE_FORWARD
           : flags & FM_MCAST_FCFS        ? FM_MODEL_FCFS
                                          : FM_MODEL_FPFS;
}

int fm_mcast_predict(fm_context *ctx, int n, int root, const char *tree, unsigned flags, size_t len,
                     fm_mcast_prediction *out)
{
    if (!fm_ctx_live(ctx))
        return FM_ERR_NOT_INIT;
    int mode = fm_mcast_mode(flags);
    if (n < 1 || root < 0 || root >= n || !out || mode < 0)
        return FM_ERR_INVALID;
    *out = (fm_mcast_prediction){0};
    /* Members are ranks 0..n-1 when the job has them (where they are then counts). */
    int *ranks = n <= ctx->size ? malloc((size_t)n * sizeof *ranks) : NULL;
    for (int r = 0; ranks && r < n; r++)
        ranks[r] = r;
    struct fm_mcast_topo_view view;
    struct fm_tree_desc d = {.n = n,
                             .root = root,
                             .topo = ranks ? fm_mcast_topo_view(&view, ctx->topo, ranks, NULL, n)
                                           : NULL};
    /* As a group's multicast sends it: the descriptor in packet 0, before the bytes. */
    size_t payload, desc = fm_mcast_desc_size(0), bytes = len + desc;
    int rc = fm_mcast_choose(ctx, tree, bytes, desc, mode, &d, &payload);
    if (rc == FM_OK) { /* (a tree the model cannot lay out is a bad tree here) */
        rc = fm_mcast_model_predict(ctx, &d, bytes, payload, mode, &out->seconds,
                                    &out->held_packets);
        rc = rc == FM_ERR_INVALID ? FM_ERR_TREE : rc;
    }
    if (rc == FM_OK) {
        torus_links(ctx, &d, packets(bytes, payload), mode, out);
        out->tree_seconds = tree_seconds(&d);
    }
    free(ranks);
    if (rc == FM_OK) {
        char *name = out->resolved;
        int at = snprintf(name, sizeof out->resolved, d.param ? "%s:%d" : "%s",
                          fm_tree_name(d.builder), d.param);
        if (payload != ctx->packet_size && at > 0 && (size_t)at < sizeof out->resolved)
            snprintf(name + at, sizeof out->resolved - (size_t)at, "@%zu", payload);
        out->packet_size = payload;
        out->packets = (uint64_t)packets(bytes, payload);
        out->buffer_bytes = fm_pool_pkt_bytes(ctx);
    }
    return rc; /* (FM_ERR_INVALID from the choice: a mode the tree has not) */
}

int fm_mcast_predict_time(fm_context *ctx, int n, int root, const char *tree, unsigned flags,
                          size_t len, double *seconds, char *chosen)
{
    fm_mcast_prediction p;
    if (!seconds)
        return fm_ctx_live(ctx) ? FM_ERR_INVALID : FM_ERR_NOT_INIT;
    int rc = fm_mcast_predict(ctx, n, root, tree, flags, len, &p);
    if (rc == FM_OK) {
        *seconds = p.seconds;
        if (chosen)
            memcpy(chosen, p.resolved, sizeof p.resolved);
    }
    return rc;
}

int fm_mcast_check_config(const fm_config *cfg, char *err, size_t errlen)
{
    int builder, param;
    char why[150];
    if (strcmp(cfg->tree, "auto") && fm_tree_parse(cfg->tree, &builder, &param, why, sizeof why)) {
        snprintf(err, errlen, "FM_TREE=\"%.60s\": %.150s", cfg->tree, why);
        return FM_ERR_CONFIG;
    }
    if (fm_ipmc_check_config(cfg, err, errlen))
        return FM_ERR_CONFIG;
    if (fm_prefix_choice_parse(cfg->prefix_choice) < 0) {
        snprintf(err, errlen, "FM_PREFIX_CHOICE=\"%.60s\": want random or nearest",
                 cfg->prefix_choice);
        return FM_ERR_CONFIG;
    }
    struct fm_costs c;
    unsigned set;
    if (cfg->mcast_costs[0] && fm_costs_parse(cfg->mcast_costs, &c, &set, why, sizeof why)) {
        snprintf(err, errlen,
                 "FM_MCAST_COSTS=\"%.60s\": %.100s; want key=value items such as "
                 "send_pkt_ns=1000,latency_ns=500, or SEND_PKT_NS:NS_PER_KIB:LATENCY_NS",
                 cfg->mcast_costs, why);
        return FM_ERR_CONFIG;
    }
    const char *file = cfg->mcast_costs_file;
    if (file[0] && access(file, F_OK) == 0 && fm_costs_load(file, &c, why, sizeof why)) {
        snprintf(err, errlen, "FM_MCAST_COSTS_FILE=\"%.60s\": %.100s", file, why);
        return FM_ERR_CONFIG;
    }
    return FM_OK;
}
