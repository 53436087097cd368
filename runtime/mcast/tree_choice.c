/* SPDX-License-Identifier: BSD-3-Clause */
/* Which tree a multicast uses: the one the caller names, or (auto) the one the FPFS model
 * predicts fastest for this member count and message size, from the job's costs. Auto also
 * picks the multicast's packet size: smaller packets pipeline deeper down a tree but each
 * costs a header and a completion, so the model weighs FM_PACKET_SIZE, its half, quarter, ...
 * (down to FM_MCAST_MIN_PACKET bytes and never below the descriptor) against each other.
 *
 * Costs: a packet copy of B bytes keeps its sender busy step = overhead + B x per_byte
 * seconds, and can be forwarded lambda = step + latency after its send began (model.h's
 * units). They come from FM_MCAST_COSTS, else from fm_mcast_calibrate (calibrate.c), else
 * from an estimate for the provider. Decisions are cached per (members, packets, mode). */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "log.h"
#include "model.h"
#include "mcast_state.h"
#include "tree_choice.h"

#define CHOICE_CACHE 64
/* Smallest packet payload auto considers: below it per-packet costs dominate everywhere. */
#define FM_MCAST_MIN_PACKET 1024
/* Packet sizes auto weighs: FM_PACKET_SIZE and this many halvings of it. */
#define FM_MCAST_PACKET_CHOICES 6

struct choice {
    size_t bytes, payload;
    int n, sf, builder, param;
    double lambda;
};

struct fm_mcast_costs {
    double overhead_s, per_byte_s, latency_s;
    struct choice cache[CHOICE_CACHE];
};

/* Parse FM_MCAST_COSTS; 0 or -1. Exposed to config checks through fm_mcast_costs_parse. */
int fm_mcast_costs_parse(const char *text, double *overhead_s, double *per_byte_s,
                         double *latency_s)
{
    double o, k, l;
    char tail;
    if (sscanf(text, "%lf:%lf:%lf%c", &o, &k, &l, &tail) != 3 || o < 0 || k < 0 || l < 0 ||
        o + k <= 0)
        return -1;
    *overhead_s = o * 1e-9;
    *per_byte_s = k * 1e-9 / 1024.0;
    *latency_s = l * 1e-9;
    return 0;
}

static struct fm_mcast_costs *costs(fm_context *ctx)
{
    if (ctx->mcast->costs)
        return ctx->mcast->costs;
    struct fm_mcast_costs *c = calloc(1, sizeof *c);
    if (!c)
        return NULL;
    if (!ctx->cfg.mcast_costs[0] ||
        fm_mcast_costs_parse(ctx->cfg.mcast_costs, &c->overhead_s, &c->per_byte_s, &c->latency_s)) {
        /* Estimates (bench/README.md): shared memory moves ~5 GB/s per copying core with ~1 us
         * per packet; a network stack (tcp) ~1 GB/s with ~8 us latency. fm_mcast_calibrate
         * measures the job. */
        int tcp = !ctx->tp->info.local_only;
        c->overhead_s = tcp ? 4e-6 : 1e-6;
        c->per_byte_s = tcp ? 1e-9 : 0.2e-9;
        c->latency_s = tcp ? 8e-6 : 0.5e-6;
    }
    ctx->mcast->costs = c;
    return c;
}

void fm_mcast_set_costs(fm_context *ctx, double overhead_s, double per_byte_s, double latency_s)
{
    struct fm_mcast_costs *c = costs(ctx);
    if (!c)
        return;
    memset(c->cache, 0, sizeof c->cache);
    c->overhead_s = overhead_s;
    c->per_byte_s = per_byte_s;
    c->latency_s = latency_s;
}

/* step and lambda (seconds) for m packets carrying bytes in all. */
static void step_lambda(fm_context *ctx, size_t bytes, int m, double *step, double *lambda)
{
    struct fm_mcast_costs *c = costs(ctx);
    double per_packet = (double)bytes / m;
    double o = c ? c->overhead_s : 1e-6, k = c ? c->per_byte_s : 0.2e-9;
    double l = c ? c->latency_s : 0.5e-6;
    *step = o + per_packet * k;
    *lambda = *step + l;
}

static int packets(size_t bytes, size_t payload)
{
    size_t m = (bytes + payload - 1) / payload;
    return m < 1 ? 1 : m > INT_MAX ? INT_MAX : (int)m;
}

/* The model's time for m packets. The simulation costs members x packets, too much to run
 * in fm_mcast_begin for a long message; past FM_MODEL_EXACT packets the completion time grows
 * by the same amount per packet (the pipeline's slowest sender sets the pace), so it is
 * simulated at FM_MODEL_EXACT and FM_MODEL_EXACT / 2 packets and extended along that line. */
#define FM_MODEL_EXACT 256

static int model_time(const struct fm_tree_desc *d, int m, double step, double lambda, int sf,
                      double *t)
{
    enum fm_model_mode mode = sf ? FM_MODEL_STORE_FORWARD : FM_MODEL_FPFS;
    if (m <= FM_MODEL_EXACT)
        return fm_model_seconds(d, m, step, lambda, mode, t, NULL);
    double hi, lo;
    int rc = fm_model_seconds(d, FM_MODEL_EXACT, step, lambda, mode, &hi, NULL);
    if (rc == FM_OK)
        rc = fm_model_seconds(d, FM_MODEL_EXACT / 2, step, lambda, mode, &lo, NULL);
    if (rc == FM_OK)
        *t = hi + (double)(m - FM_MODEL_EXACT) * (hi - lo) / (FM_MODEL_EXACT / 2);
    return rc;
}

int fm_mcast_predict(fm_context *ctx, const struct fm_tree_desc *d, size_t bytes, size_t payload,
                     int sf, double *seconds)
{
    int m = packets(bytes, payload);
    double step, lambda;
    step_lambda(ctx, bytes, m, &step, &lambda);
    return model_time(d, m, step, lambda, sf, seconds);
}

/* Resolve d's parameter for this message (kbinomial's k, postal's lambda), builder set. */
static int resolved(int m, double lambda_steps, struct fm_tree_desc *d)
{
    d->m = m;
    d->lambda = lambda_steps < 1 ? 1 : lambda_steps;
    struct fm_tree_desc r;
    if (fm_tree_resolve(d, &r) != FM_OK || fm_tree_check(&r) != FM_OK)
        return FM_ERR_TREE;
    *d = r;
    return FM_OK;
}

/* Fill in a named tree. */
static int named(const char *spec, int m, double lambda_steps, struct fm_tree_desc *d)
{
    char err[160];
    if (fm_tree_parse(spec, &d->builder, &d->param, err, sizeof err)) {
        fm_log(1, "multicast tree \"%s\": %s", spec, err);
        return FM_ERR_TREE;
    }
    return resolved(m, lambda_steps, d);
}

/* The tree with the least predicted time *t for m packets of the given costs, among the
 * registry's builders flagged FM_TREE_AUTO. */
static int best_tree(int m, double step, double lambda, int sf, struct fm_tree_desc *d, double *t)
{
    double best_t = -1;
    struct fm_tree_desc win = *d;
    for (int i = 0; i < fm_tree_count(); i++) {
        unsigned flags;
        struct fm_tree_desc t = *d;
        double T;
        t.builder = fm_tree_id_at(i, &flags);
        t.param = 0;
        if (!(flags & FM_TREE_AUTO) || resolved(m, lambda / step, &t) ||
            model_time(&t, m, step, lambda, sf, &T))
            continue;
        if (best_t < 0 || T < best_t) {
            best_t = T;
            win = t;
        }
    }
    if (best_t < 0)
        return FM_ERR_TREE;
    *d = win;
    *t = best_t;
    return FM_OK;
}

/* Auto: the (tree, packet size) pair with the least predicted time; ties keep the larger
 * packet (fewer completions for the same time). */
static int best(fm_context *ctx, size_t bytes, size_t min_payload, int sf, struct fm_tree_desc *d,
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
        int m = packets(bytes, p);
        double step, lambda, t;
        struct fm_tree_desc cand = *d;
        step_lambda(ctx, bytes, m, &step, &lambda);
        if (best_tree(m, step, lambda, sf, &cand, &t))
            continue;
        if (best_t < 0 || t < best_t * (1 - 1e-9)) {
            best_t = t;
            win = cand;
            win_payload = p;
        }
    }
    if (best_t < 0)
        return FM_ERR_TREE;
    *d = win;
    *payload = win_payload;
    return FM_OK;
}

int fm_mcast_choose(fm_context *ctx, const char *spec, size_t bytes, size_t min_payload, int sf,
                    struct fm_tree_desc *d, size_t *payload)
{
    if (!spec)
        spec = ctx->cfg.tree;
    *payload = ctx->packet_size;
    if (strcmp(spec, "auto")) {
        int m = packets(bytes, ctx->packet_size);
        double step, lambda;
        step_lambda(ctx, bytes, m, &step, &lambda);
        return named(spec, m, lambda / step, d);
    }
    struct fm_mcast_costs *c = costs(ctx);
    unsigned slot = ((unsigned)d->n * 31u + (unsigned)bytes * 7u + (unsigned)sf) % CHOICE_CACHE;
    struct choice *e = c ? &c->cache[slot] : NULL;
    if (e && e->n == d->n && e->bytes == bytes && e->sf == sf && e->payload >= min_payload) {
        d->builder = e->builder;
        d->param = e->param;
        d->lambda = e->lambda;
        d->m = packets(bytes, e->payload);
        *payload = e->payload;
        return FM_OK;
    }
    int rc = best(ctx, bytes, min_payload, sf, d, payload);
    if (rc == FM_OK && e)
        *e = (struct choice){bytes, *payload, d->n, sf, d->builder, d->param, d->lambda};
    return rc;
}

int fm_mcast_predict_time(fm_context *ctx, int n, int root, const char *tree, unsigned flags,
                          size_t len, double *seconds, char *chosen)
{
    if (!fm_ctx_live(ctx))
        return FM_ERR_NOT_INIT;
    if (n < 1 || root < 0 || root >= n || !seconds || (flags & ~(unsigned)FM_MCAST_STORE_FORWARD))
        return FM_ERR_INVALID;
    int sf = (flags & FM_MCAST_STORE_FORWARD) != 0;
    struct fm_tree_desc d = {.n = n, .root = root};
    size_t payload;
    int rc = fm_mcast_choose(ctx, tree, len, 0, sf, &d, &payload);
    if (rc == FM_OK)
        rc = fm_mcast_predict(ctx, &d, len, payload, sf, seconds);
    if (rc == FM_OK && chosen) {
        const char *name = fm_tree_name(d.builder);
        int at = snprintf(chosen, 64, d.param ? "%s:%d" : "%s", name, d.param);
        if (payload != ctx->packet_size && at > 0 && at < 64)
            snprintf(chosen + at, (size_t)(64 - at), "@%zu", payload);
    }
    return rc == FM_ERR_INVALID ? FM_ERR_TREE : rc;
}

int fm_mcast_check_config(const fm_config *cfg, char *err, size_t errlen)
{
    int builder, param;
    double o, k, l;
    char why[150];
    if (strcmp(cfg->tree, "auto") && fm_tree_parse(cfg->tree, &builder, &param, why, sizeof why)) {
        snprintf(err, errlen, "FM_TREE=\"%.60s\": %.150s", cfg->tree, why);
        return FM_ERR_CONFIG;
    }
    if (cfg->mcast_costs[0] && fm_mcast_costs_parse(cfg->mcast_costs, &o, &k, &l)) {
        snprintf(err, errlen,
                 "FM_MCAST_COSTS=\"%.60s\": want OVERHEAD_NS:NS_PER_KIB:LATENCY_NS, e.g. "
                 "1000:200:500",
                 cfg->mcast_costs);
        return FM_ERR_CONFIG;
    }
    return FM_OK;
}
