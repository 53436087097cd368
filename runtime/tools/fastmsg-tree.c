/* SPDX-License-Identifier: BSD-3-Clause */
/* fastmsg-tree: print a multicast tree, member by member, and the model's completion time.
 *   fastmsg-tree BUILDER[:PARAM] -n N [-m M] [--lambda L] [--root R] [--store-forward]
 *                [--torus AxB[xC][:uni] [--seed S | --place P0,P1,..]] [--costs FILE
 *                --bytes B [--packet P] [--credits W] [--each]]
 * One line per member "R: C1 C2 ..." (its children in send order), then "steps S"; with
 * --costs also the model in seconds (over the torus's links with --torus): "seconds T", with
 * --each "member I T" for each member, and on a torus "links V U" (link visits, links used).
 * The model averages over 3 random link orders where a member's copies queue on its link, as
 * the runtime's does for small trees; it always simulates every member (the runtime's
 * choice for large trees and long messages extends shorter simulations). */
#include <errno.h>
#include <getopt.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "costs.h"
#include "fastmsg.h"
#include "model.h"
#include "topo_spec.h"
#include "torus_net.h"
#include "trees/builder.h"
#include "trees/kbinomial.h"
#include "trees/tree.h"

static const char usage[] =
    "usage: fastmsg-tree BUILDER[:PARAM] -n N [-m M] [--lambda L] [--root R] [--store-forward]\n"
    "Prints each member's children in send order (\"R: C1 C2 ...\", members 0..N-1), then\n"
    "\"steps S\": the FPFS model's completion time in steps (one step = one packet copy sent).\n"
    "  BUILDER          flat, chain, binomial, kbinomial[:K], postal[:LAMBDA], prefix[:B],\n"
    "                   sepaddr, utorus, storus, mdtorus, mutorus[:R] (torus trees: here\n"
    "                   without coordinates, their documented list-order fallbacks)\n"
    "                   kbinomial without K: the optimal k for N and M (told on stderr);\n"
    "                   node[:K]; twotree[:T] (children in tree T; with M >= 2 and N >= 3\n"
    "                   the model runs the split multicast down both trees)\n"
    "  -n N             members (>= 1)\n"
    "  -m M             packets per message (default 1)\n"
    "  --lambda L       steps from the start of a send until the receiver can forward (>= 1);\n"
    "                   used by the model and by postal without LAMBDA. Default: postal's\n"
    "                   LAMBDA when given, else with --costs postal's as a job with those\n"
    "                   costs builds it (fm_costs_lambda), else 1\n"
    "  --root R         root member (default 0)\n"
    "  --store-forward  model members that forward only once they hold the whole message\n"
    "  --torus SPEC     members on a torus of hosts, AxB[xC] (':uni': unidirectional), one\n"
    "                   member per position: all of them (no -n; member i at position i,\n"
    "                   or with --seed S in an order drawn with S), else -n positions drawn\n"
    "                   at random (--seed S, default 1); member 0 at position 0 always\n"
    "  --place P0,P1,.. with --torus: member i at position Pi (positions r = x + A*y ...,\n"
    "                   as FM_TOPOLOGY=torus numbers hosts), -n of them, all distinct\n"
    "  --costs FILE     also the model in seconds, from a costs file (FM_MCAST_COSTS_FILE's\n"
    "                   format; fm_mcast_calibrate writes one), over the torus's links with\n"
    "                   --torus: \"seconds T\" (and \"links VISITS USED\" on a torus)\n"
    "  --each           with --costs: also \"member I T\", each member's modelled completion\n"
    "  --bytes B        with --costs: the message's bytes (required)\n"
    "  --packet P       with --costs: payload bytes per packet (default 65536)\n"
    "  --credits W      with --costs: each sender's credit window at each child, in packets\n"
    "                   (FM_CREDITS; default 0: none); on a torus credits come back along\n"
    "                   the routes back, behind the copies queued there\n"
    "  -h, --help       this text\n";

struct args {
    struct fm_tree_desc desc;
    double lambda;
    int lambda_given, store_forward, seed, seed_given;
    const char *torus, *costs, *place;
    int each;
    long bytes, packet;
    int credits;
    struct fm_torus_net net;
    int *pos; /* --torus: member i's position */
};

/* One line saying what is wrong, then where the usage is; exit status 2. */
static int bad(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fputs("fastmsg-tree: ", stderr);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fputs("\n(fastmsg-tree --help shows the usage)\n", stderr);
    return 2;
}

static int parse_int(const char *s, int min, int *out)
{
    errno = 0;
    char *end;
    long v = strtol(s, &end, 10);
    if (end == s || *end || errno == ERANGE || v < min || v > 100000000L)
        return -1;
    *out = (int)v;
    return 0;
}

/* --place: the members' positions as listed, -n of them (all without -n), each once. */
static int parse_place(struct args *a, int spots)
{
    const char *s = a->place;
    int n = 0;
    char *used = calloc((size_t)spots, 1);
    if (!used)
        return bad("out of memory");
    for (;;) {
        char *end;
        errno = 0;
        long v = strtol(s, &end, 10);
        const char *why = end == s || errno || (*end && *end != ',') ? "is not a position"
                          : v < 0 || v >= spots                      ? "is not on the torus"
                          : used[v]                                  ? "is there twice"
                          : n == spots                               ? "is one too many"
                                                                     : NULL;
        if (why) {
            free(used);
            return bad("--place %s: entry %d %s (%d positions, 0 to %d)", a->place, n + 1, why,
                       spots, spots - 1);
        }
        used[v] = 1;
        a->pos[n++] = (int)v;
        if (!*end)
            break;
        s = end + 1;
    }
    free(used);
    if (a->desc.n && n != a->desc.n)
        return bad("--place %s: %d positions for -n %d members", a->place, n, a->desc.n);
    a->desc.n = n;
    return 0;
}

/* --torus: the net, and -n positions of it (all without -n) drawn with --seed, position 0
 * first. 0, or 2 after saying why. */
static int parse_torus(struct args *a)
{
    char spec[96], err[256];
    struct fm_topo_spec s;
    snprintf(spec, sizeof spec, "torus:%s", a->torus);
    if (fm_topo_spec_parse(spec, &s, err, sizeof err))
        return bad("--torus %s: %s", a->torus, err);
    a->net = (struct fm_torus_net){.ndims = s.ndims, .unidirectional = s.unidirectional};
    for (int i = 0; i < 3; i++)
        a->net.dims[i] = s.dims[i];
    fm_topo_spec_clear(&s);
    int spots = a->net.dims[0] * a->net.dims[1] * a->net.dims[2];
    if (a->desc.n == 0 && !a->place)
        a->desc.n = spots;
    if (a->desc.n > spots)
        return bad("-n %d: the torus has only %d positions", a->desc.n, spots);
    a->pos = malloc((size_t)spots * sizeof *a->pos);
    if (!a->pos)
        return bad("out of memory");
    unsigned long long x = 0x9e3779b97f4a7c15ULL * (unsigned long long)(a->seed + 1);
    for (int i = 0; i < spots; i++)
        a->pos[i] = i;
    if (a->place)
        return parse_place(a, spots);
    int shuffle = a->desc.n < spots || a->seed_given;
    for (int i = 1; i < a->desc.n && shuffle; i++) { /* Fisher-Yates past position 0 */
        x ^= x << 13, x ^= x >> 7, x ^= x << 17;
        int j = i + (int)(x % (unsigned long long)(spots - i)), t = a->pos[i];
        a->pos[i] = a->pos[j];
        a->pos[j] = t;
    }
    return 0;
}

/* The members' coordinates on the torus, for the builders (fm_tree_topo). */
static int torus_coord(const void *arg, int p, int *c)
{
    const struct args *a = arg;
    int at = a->pos[p];
    c[0] = at % a->net.dims[0];
    c[1] = at / a->net.dims[0] % a->net.dims[1];
    c[2] = at / (a->net.dims[0] * a->net.dims[1]);
    return FM_OK;
}

static int torus_host(const void *arg, int p)
{
    const struct args *a = arg;
    return a->pos[p];
}

/* The costs file into *c (the estimates for what it leaves out). */
static int load_costs(const struct args *a, struct fm_costs *c)
{
    char err[256];
    *c = (struct fm_costs){0};
    fm_costs_estimate(c, 0, 0);
    if (fm_costs_load(a->costs, c, err, sizeof err)) {
        fprintf(stderr, "fastmsg-tree: --costs %s: %s\n", a->costs, err);
        return FM_ERR_CONFIG;
    }
    return FM_OK;
}

/* The model in seconds from the costs c: over the torus's links with --torus. */
static int model_seconds(const struct args *a, const struct fm_tree_desc *d,
                         const struct fm_costs *c)
{
    int m = (int)((a->bytes + a->packet - 1) / a->packet);
    int mode = a->store_forward ? FM_MODEL_STORE_FORWARD : FM_MODEL_FPFS;
    struct fm_model_tree t;
    int rc = fm_model_tree_of(d, fm_model_splits(d, m, mode), &t);
    if (rc != FM_OK)
        return rc;
    struct fm_model_job job = {.window = a->credits, .orders = 3};
    struct fm_model_net net = {0};
    if (a->torus) {
        rc = fm_torus_model_net(&a->net, &t, torus_coord, a, 1514, &net);
        job.net = &net;
    }
    struct fm_model_out out = {0};
    if (a->each && !(out.member = calloc((size_t)t.n, sizeof *out.member)))
        rc = FM_ERR_NOMEM;
    if (rc == FM_OK)
        rc = fm_model_sim(&t, m, (size_t)a->packet, (size_t)a->bytes, (enum fm_model_mode)mode, c,
                          &job, &out);
    if (rc == FM_OK) {
        printf("seconds %.9g\n", out.T);
        for (int i = 0; a->each && i < t.n; i++)
            printf("member %d %.9g\n", i, out.member[i]);
        if (a->torus)
            printf("links %d %d\n", out.link_visits, out.links_used);
    }
    free((void *)net.route_first);
    free(out.member);
    fm_model_tree_free(&t);
    return rc;
}

/* 0 to go on, 2 for bad arguments (after saying why), -1 after --help. */
static int parse_args(int argc, char **argv, struct args *a)
{
    static const struct option opts[] = {{"lambda", required_argument, NULL, 'l'},
                                         {"root", required_argument, NULL, 'r'},
                                         {"store-forward", no_argument, NULL, 's'},
                                         {"torus", required_argument, NULL, 't'},
                                         {"seed", required_argument, NULL, 'S'},
                                         {"costs", required_argument, NULL, 'c'},
                                         {"bytes", required_argument, NULL, 'b'},
                                         {"packet", required_argument, NULL, 'p'},
                                         {"credits", required_argument, NULL, 'C'},
                                         {"place", required_argument, NULL, 'P'},
                                         {"each", no_argument, NULL, 'e'},
                                         {"help", no_argument, NULL, 'h'},
                                         {NULL, 0, NULL, 0}};
    *a = (struct args){.desc = {.n = 0, .m = 1}, .lambda = 1.0, .seed = 1, .packet = 65536};
    int c, root = 0;
    const char *root_arg = "0";
    char *end;
    opterr = 0;
    while ((c = getopt_long(argc, argv, ":n:m:h", opts, NULL)) != -1) {
        switch (c) {
        case 'n':
            if (parse_int(optarg, 1, &a->desc.n))
                return bad("-n needs a member count from 1 to 100000000, not '%s'", optarg);
            break;
        case 'm':
            if (parse_int(optarg, 1, &a->desc.m))
                return bad("-m needs a packet count from 1 to 100000000, not '%s'", optarg);
            break;
        case 'l':
            a->lambda = strtod(optarg, &end);
            if (end == optarg || *end || !(a->lambda >= 1.0 && a->lambda <= 1e9))
                return bad("--lambda needs a number from 1 to 1e9, not '%s'", optarg);
            a->lambda_given = 1;
            break;
        case 'r':
            if (parse_int(optarg, 0, &root))
                return bad("--root needs a member number, not '%s'", optarg);
            root_arg = optarg;
            break;
        case 's':
            a->store_forward = 1;
            break;
        case 't':
            a->torus = optarg;
            break;
        case 'c':
            a->costs = optarg;
            break;
        case 'P':
            a->place = optarg;
            break;
        case 'e':
            a->each = 1;
            break;
        case 'C':
            if (parse_int(optarg, 0, &a->credits))
                return bad("--credits needs a packet count, not '%s'", optarg);
            break;
        case 'S':
            if (parse_int(optarg, 0, &a->seed))
                return bad("--seed needs a whole number, not '%s'", optarg);
            a->seed_given = 1;
            break;
        case 'b':
        case 'p': {
            int v;
            if (parse_int(optarg, 1, &v))
                return bad("%s needs a byte count, not '%s'", c == 'b' ? "--bytes" : "--packet",
                           optarg);
            *(c == 'b' ? &a->bytes : &a->packet) = v;
            break;
        }
        case 'h':
            fputs(usage, stdout);
            return -1;
        case ':':
            return bad("%s needs a value", argv[optind - 1]);
        default:
            return bad("unknown option '%s'", argv[optind - 1]);
        }
    }
    if (optind == argc)
        return bad("no tree given (BUILDER[:PARAM])");
    if (optind < argc - 1)
        return bad("one tree only: what is '%s'?", argv[optind + 1]);
    char err[256];
    if (fm_tree_parse(argv[optind], &a->desc.builder, &a->desc.param, err, sizeof err))
        return bad("%s", err);
    if (a->torus && parse_torus(a))
        return 2;
    if (a->place && !a->torus)
        return bad("--place needs --torus");
    if (a->place && a->seed_given)
        return bad("--place and --seed both say where the members are: one of them");
    if (a->each && !a->costs)
        return bad("--each needs --costs");
    if (a->costs && a->bytes < 1)
        return bad("--costs needs --bytes B");
    if (a->desc.n < 1)
        return bad("-n N is required");
    if (root >= a->desc.n)
        return bad("--root must be below -n (%d), not %s", a->desc.n, root_arg);
    a->desc.root = root;
    a->desc.lambda = a->lambda;
    if (!a->lambda_given && !strcmp(fm_tree_name(a->desc.builder), "postal") && a->desc.param)
        a->lambda = a->desc.param; /* postal:L models the network it was built for */
    return 0;
}

/* "R: C1 C2 ..." for every member, in member order. */
static int print_tree(const struct fm_tree_desc *d)
{
    int *first = malloc(((size_t)d->n + 1) * sizeof *first);
    int *kids = malloc((size_t)(d->n > 1 ? d->n - 1 : 1) * sizeof *kids);
    int rc = first && kids ? fm_tree_layout(d, first, kids) : FM_ERR_NOMEM;
    for (int p = 0; rc == FM_OK && p < d->n; p++) {
        printf("%d:", p);
        for (int e = first[p]; e < first[p + 1]; e++)
            printf(" %d", kids[e]);
        putchar('\n');
    }
    free(first);
    free(kids);
    return rc;
}

/* Everything after the arguments; the exit status. */
static int run(struct args *a)
{
    if (!strcmp(fm_tree_name(a->desc.builder), "kbinomial") && !a->desc.param)
        fprintf(stderr, "# k=%d\n", fm_tree_kbin_optimal_k(a->desc.n, a->desc.m));
    struct fm_costs costs;
    if (a->costs && load_costs(a, &costs) != FM_OK)
        return 1;
    /* postal without LAMBDA and --lambda: the lambda a job with these costs builds it for */
    if (a->costs && !a->lambda_given && !a->desc.param &&
        !strcmp(fm_tree_name(a->desc.builder), "postal")) {
        a->lambda = fm_costs_lambda(&costs, (double)(a->bytes < a->packet ? a->bytes : a->packet));
        a->desc.lambda = a->lambda;
    }
    double T;
    struct fm_tree_topo topo = {.arg = a, .host = torus_host, .coord = torus_coord};
    if (a->torus) {
        topo.ndims = a->net.ndims;
        memcpy(topo.dims, a->net.dims, sizeof topo.dims);
        a->desc.topo = &topo;
    }
    int rc = print_tree(&a->desc);
    if (rc == FM_OK)
        rc = fm_model_steps(&a->desc, a->desc.m, a->lambda,
                            a->store_forward ? FM_MODEL_STORE_FORWARD : FM_MODEL_FPFS, &T, NULL);
    if (rc == FM_OK) {
        printf("steps %.15g\n", T);
        if (a->costs)
            rc = model_seconds(a, &a->desc, &costs);
    }
    if (rc != FM_OK) {
        fprintf(stderr, "fastmsg-tree: %s\n", fm_strerror(rc));
        return 1;
    }
    return 0;
}

int main(int argc, char **argv)
{
    struct args a;
    int rc = parse_args(argc, argv, &a);
    if (rc == 0)
        rc = run(&a);
    free(a.pos);
    return rc < 0 ? 0 : rc;
}
