/* SPDX-License-Identifier: BSD-3-Clause */
/* The FPFS model as a discrete simulation over the whole tree (a model may hold the tree; the
 * runtime never does). A depth-first walk carries, for each member still to visit, when each of
 * its m packets became available; leaves need only their last packet's time, so the arrays
 * alive at once number at most (depth x degree), not n. */
#include <math.h>
#include <stdlib.h>

#include "fastmsg.h"
#include "model.h"

/* A member to visit and when each packet became available to it (NULL: the root, all at 0). */
struct visit {
    int node;
    double *avail;
};

static double avail_at(const double *avail, int j)
{
    return avail ? avail[j] : 0.0;
}

/* One member's sends. For child i, arrival of packet j is start + lambda, where start is when
 * the sender is free and holds packet j (FPFS), or holds all m packets (store-and-forward). */
static void send_packets(const struct fm_model_tree *t, int v, const double *avail, int m,
                         double lambda, enum fm_model_mode mode, double **child_avail, double *last)
{
    int d = t->first[v + 1] - t->first[v];
    double free_at = 0.0;
    for (int outer = 0; outer < (mode == FM_MODEL_FPFS ? m : d); outer++) {
        for (int inner = 0; inner < (mode == FM_MODEL_FPFS ? d : m); inner++) {
            int j = mode == FM_MODEL_FPFS ? outer : inner;
            int i = mode == FM_MODEL_FPFS ? inner : outer;
            double held = avail_at(avail, mode == FM_MODEL_FPFS ? j : m - 1);
            double start = held > free_at ? held : free_at;
            if (child_avail[i])
                child_avail[i][j] = start + lambda;
            if (j == m - 1)
                last[i] = start + lambda;
            free_at = start + 1.0;
        }
    }
}

/* Structural checks that make the walk safe: offsets in order, n - 1 edges, kids in range. */
static int tree_shape_ok(const struct fm_model_tree *t)
{
    if (t->n < 1 || t->root < 0 || t->root >= t->n || !t->first || t->first[0] != 0 ||
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

/* Visits v: simulates its sends, records its children's completion, queues the inner ones. */
static int visit_one(const struct fm_model_tree *t, struct visit v, int m, double lambda,
                     enum fm_model_mode mode, struct visit *stack, int *depth, char *seen,
                     double *T, double *per_member)
{
    int d = t->first[v.node + 1] - t->first[v.node];
    const int *kids = t->kids + t->first[v.node];
    double **child_avail = calloc(d ? d : 1, sizeof *child_avail);
    double *last = calloc(d ? d : 1, sizeof *last);
    int rc = child_avail && last ? FM_OK : FM_ERR_NOMEM;
    for (int i = 0; i < d && rc == FM_OK; i++) {
        if (seen[kids[i]]++) { /* reached twice: a cycle or a shared child */
            rc = FM_ERR_INVALID;
        } else if (t->first[kids[i] + 1] > t->first[kids[i]]) {
            child_avail[i] = malloc((size_t)m * sizeof(double));
            rc = child_avail[i] ? FM_OK : FM_ERR_NOMEM;
        }
    }
    if (rc == FM_OK) {
        send_packets(t, v.node, v.avail, m, lambda, mode, child_avail, last);
        for (int i = 0; i < d; i++) {
            *T = last[i] > *T ? last[i] : *T;
            if (per_member)
                per_member[kids[i]] = last[i];
            if (child_avail[i]) /* ownership moves to the stack */
                stack[(*depth)++] = (struct visit){kids[i], child_avail[i]};
        }
    } else {
        for (int i = 0; child_avail && i < d; i++)
            free(child_avail[i]);
    }
    free(child_avail);
    free(last);
    return rc;
}

int fm_model_run(const struct fm_model_tree *t, int m, double lambda, enum fm_model_mode mode,
                 double *T, double *per_member)
{
    if (!t || !T || m < 1 || !(lambda > 0 && isfinite(lambda)) || !tree_shape_ok(t) ||
        (mode != FM_MODEL_FPFS && mode != FM_MODEL_STORE_FORWARD))
        return FM_ERR_INVALID;
    struct visit *stack = malloc((size_t)t->n * sizeof *stack);
    char *seen = calloc((size_t)t->n, 1);
    int rc = stack && seen ? FM_OK : FM_ERR_NOMEM, depth = 0;
    *T = 0.0;
    if (rc == FM_OK) {
        seen[t->root] = 1;
        if (per_member)
            per_member[t->root] = 0.0;
        stack[depth++] = (struct visit){t->root, NULL};
    }
    while (rc == FM_OK && depth > 0) {
        struct visit v = stack[--depth];
        rc = visit_one(t, v, m, lambda, mode, stack, &depth, seen, T, per_member);
        free(v.avail);
    }
    while (depth > 0)
        free(stack[--depth].avail);
    for (int p = 0; rc == FM_OK && p < t->n; p++)
        if (!seen[p]) /* n - 1 edges without repeats reach everyone, but say so if not */
            rc = FM_ERR_INVALID;
    free(stack);
    free(seen);
    return rc;
}

/* Lays d out whole and simulates it with lambda in steps. */
static int run_desc(const struct fm_tree_desc *d, int m, double lambda, enum fm_model_mode mode,
                    double *T, double *per_member)
{
    if (fm_tree_check(d) != FM_OK)
        return FM_ERR_INVALID;
    int *first = malloc(((size_t)d->n + 1) * sizeof *first);
    int *kids = malloc((size_t)(d->n > 1 ? d->n - 1 : 1) * sizeof *kids);
    int rc = first && kids ? fm_tree_layout(d, first, kids) : FM_ERR_NOMEM;
    if (rc == FM_OK) {
        struct fm_model_tree t = {d->n, d->root, first, kids};
        rc = fm_model_run(&t, m, lambda, mode, T, per_member);
    }
    free(first);
    free(kids);
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
