/* SPDX-License-Identifier: BSD-3-Clause */
/* fastmsg-tree: print a multicast tree, member by member, and the model's completion time.
 *   fastmsg-tree BUILDER[:PARAM] -n N [-m M] [--lambda L] [--root R] [--store-forward]
 * One line per member "R: C1 C2 ..." (its children in send order), then "steps S". */
#include <errno.h>
#include <getopt.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fastmsg.h"
#include "model.h"
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
    "                   kbinomial without K: the optimal k for N and M (told on stderr)\n"
    "  -n N             members (>= 1)\n"
    "  -m M             packets per message (default 1)\n"
    "  --lambda L       steps from the start of a send until the receiver can forward (>= 1);\n"
    "                   used by the model and by postal without LAMBDA. Default: postal's\n"
    "                   LAMBDA when given, else 1\n"
    "  --root R         root member (default 0)\n"
    "  --store-forward  model members that forward only once they hold the whole message\n"
    "  -h, --help       this text\n";

struct args {
    struct fm_tree_desc desc;
    double lambda;
    int lambda_given, store_forward;
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

/* 0 to go on, 2 for bad arguments (after saying why), -1 after --help. */
static int parse_args(int argc, char **argv, struct args *a)
{
    static const struct option opts[] = {{"lambda", required_argument, NULL, 'l'},
                                         {"root", required_argument, NULL, 'r'},
                                         {"store-forward", no_argument, NULL, 's'},
                                         {"help", no_argument, NULL, 'h'},
                                         {NULL, 0, NULL, 0}};
    *a = (struct args){.desc = {.n = 0, .m = 1}, .lambda = 1.0};
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

int main(int argc, char **argv)
{
    struct args a;
    int rc = parse_args(argc, argv, &a);
    if (rc)
        return rc < 0 ? 0 : rc;
    if (!strcmp(fm_tree_name(a.desc.builder), "kbinomial") && !a.desc.param)
        fprintf(stderr, "# k=%d\n", fm_tree_kbin_optimal_k(a.desc.n, a.desc.m));
    double T;
    rc = print_tree(&a.desc);
    if (rc == FM_OK)
        rc = fm_model_steps(&a.desc, a.desc.m, a.lambda,
                            a.store_forward ? FM_MODEL_STORE_FORWARD : FM_MODEL_FPFS, &T, NULL);
    if (rc != FM_OK) {
        fprintf(stderr, "fastmsg-tree: %s\n", fm_strerror(rc));
        return 1;
    }
    printf("steps %.15g\n", T);
    return 0;
}
