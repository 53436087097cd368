/* SPDX-License-Identifier: BSD-3-Clause */
/* fastmsg-bench-mcast's command line (bench/mpi's fastmsg-bench-mpi-bcast and -concurrent share
 * it): trees, sizes, repeats, iterations. */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mc.h"
#include "opt_parse.h"

#define MC_DEFAULT_TREES "flat,chain,binomial,kbinomial,postal,auto"
#define MC_ITERS_FULL    (64UL << 10) /* sizes up to this get all -i iterations */
#define MC_ITERS_MIN     3

/* fastmsg-bench-mcast's; bench/mpi's fastmsg-bench-mpi-bcast brings its own. */
static const mc_cli fastmsg_cli = {
    .launch = "fastmsg-run -n N",
    .what = "Multicast completion time from one root to every rank, per tree and size.",
    .noun = "multicast",
    .timeout = "fail when a wait stalls this long",
    .trees = 1,
};

/* bench_getopt's state: the options, and --min, --max and whether --sizes came, which
 * decide the sizes once every option is read. */
typedef struct parse {
    mc_opts *o;
    const mc_cli *cli;
    size_t lo, hi;
    int listed;
} parse;

static void usage(FILE *f, const char *prog, void *st)
{
    const mc_cli *cli = ((parse *)st)->cli;
    fprintf(f, "usage: %s %s [options]\n%s\n", cli->launch, prog, cli->what);
    if (cli->trees)
        fputs("  --trees LIST        trees to run, comma-separated (default\n"
              "                      " MC_DEFAULT_TREES ");\n"
              "                      any name fm_mcast_begin takes, e.g. kbinomial:3, postal:2\n",
              f);
    fputs("  --sizes LIST        message sizes, comma-separated (K, M, G suffixes)\n"
          "  --min SIZE          smallest size (default 8); sizes are min, 2*min, ... max\n"
          "  --max SIZE          largest size (default 16M)\n",
          f);
    if (cli->trees)
        fputs("      --modes LIST    forwarding modes to run every tree in, comma-separated:\n"
              "                      fpfs (packet by packet), sf (store-and-forward,\n"
              "                      FM_MCAST_STORE_FORWARD), fcfs (First-Child-First-Served,\n"
              "                      FM_MCAST_FCFS); default fpfs\n"
              "      --sf-too        the same as --modes fpfs,sf\n",
              f);
    fprintf(f,
            "  -r, --repeats N     timed runs per row, medians are reported (default 5)\n"
            "  -i, --iterations N  %ss per run up to 64 KiB (default 20; fewer for\n"
            "                      larger sizes, at least 3)\n",
            cli->noun);
    if (cli->trees)
        fputs("      --calibrate     measure the model's costs first (fm_mcast_calibrate)\n"
              "      --project N     after the rows, the model's time for every tree and size\n"
              "                      with N members (hosts of their own), from this job's costs\n"
              "      --each          after each row, a comment line with every member's median\n"
              "                      time (\"# each TREE MODE SIZE: RANK=US ...\"; compare\n"
              "                      fastmsg-tree --each)\n"
              "      --concurrent K  every rank a root at once, each to K others drawn at random\n"
              "                      (fm_mcast_begin_list; needs --common-clock): per tree and\n"
              "                      size, each multicast's completion and the aggregate rate\n",
              f);
    else if (cli->concurrent)
        fputs("      --concurrent K  every rank a root at once, each to K others drawn at random\n"
              "                      as fastmsg-bench-mcast --concurrent K draws them (required,\n"
              "                      with --common-clock)\n",
              f);
    if (cli->trees || cli->concurrent)
        fputs(
            "      --roots R       with --concurrent: only R ranks multicast each round, drawn\n"
            "                      at random per round (the same draw in fastmsg-bench-mcast and\n"
            "                      bench/mpi), R at most the job's ranks (default: every rank);\n"
            "                      --concurrent 8 --roots 1 is one multicast from a random root\n"
            "                      to a random set of 8\n",
            f);
    if (cli->methods)
        fprintf(f,
                "      --methods LIST  methods to run, comma-separated, of %s (default\n"
                "                      all, in that order)\n",
                cli->methods);
    fprintf(f,
            "      --root R        the %sing rank (default 0)\n"
            "      --settle US     the root waits this long after each barrier, so that every\n"
            "                      rank has left it before the %s starts (default 20)\n"
            "      --settle-sleep  the root sleeps through the settle time instead of driving\n"
            "                      progress or spinning (a simulated clock, bench/sim, moves\n"
            "                      only while processes sleep or wait)\n"
            "      --warmup BYTES  before the first row, untimed %ss of the largest size\n"
            "                      until every member received BYTES (K, M suffixes; at\n"
            "                      most 256, and no more than that size's row times;\n"
            "                      default 16M, 0: none): the first rows do not pay the\n"
            "                      job's first pass through its receive memory\n"
            "      --quiet F       members send nothing after their copy (no report, no\n"
            "                      barrier) until F x the previous %s's completion +\n"
            "                      100 us has passed, so that reports do not slow the members\n"
            "                      still receiving; 0: report at once (default 0)\n"
            "      --shared-payload  under SimGrid (bench/sim): one payload buffer shared by\n"
            "                      every simulated rank (SMPI_SHARED_MALLOC), for thousands of\n"
            "                      ranks; copies are then not checked\n"
            "      --common-clock  every rank runs on one kernel (one machine, or hosts that\n"
            "                      are network namespaces): time each member from the root's\n"
            "                      start instead of its own barrier exit\n"
            "      --timeout S     %s (default 60)\n"
            "      --csv           comma-separated output for machines\n"
            "  -h, --help          this text\n",
            cli->noun, cli->noun, cli->noun, cli->noun, cli->timeout);
}

static int cmp_size(const void *a, const void *b)
{
    size_t x = *(const size_t *)a, y = *(const size_t *)b;
    return (x > y) - (x < y);
}

static int parse_size_list(const char *s, mc_opts *o)
{
    o->nsizes = 0;
    for (;;) {
        char *end;
        if (o->nsizes == MC_MAX_SIZES ||
            bench_parse_size(s, &end, 1, (size_t)1 << 34, &o->sizes[o->nsizes++]))
            return -1;
        if (*end == '\0')
            break;
        if (*end != ',')
            return -1;
        s = end + 1;
    }
    qsort(o->sizes, (size_t)o->nsizes, sizeof o->sizes[0], cmp_size);
    return 0;
}

static const char *const mode_names[MC_MAX_MODES] = {"fpfs", "sf", "fcfs"};

const char *mc_mode_name(int mode)
{
    return mode >= 0 && mode < MC_MAX_MODES ? mode_names[mode] : "?";
}

/* A comma list of mode names, each at most once. */
static int parse_mode_list(const char *s, mc_opts *o)
{
    o->nmodes = 0;
    while (*s) {
        size_t n = strcspn(s, ",");
        int m = 0;
        while (m < MC_MAX_MODES && (strlen(mode_names[m]) != n || strncmp(s, mode_names[m], n)))
            m++;
        if (m == MC_MAX_MODES || o->nmodes == MC_MAX_MODES)
            return -1;
        for (int i = 0; i < o->nmodes; i++)
            if (o->modes[i] == m)
                return -1;
        o->modes[o->nmodes++] = m;
        s += n + (s[n] == ',');
    }
    return o->nmodes ? 0 : -1;
}

static int parse_tree_list(const char *s, mc_opts *o)
{
    o->ntrees = 0;
    while (*s) {
        size_t n = strcspn(s, ",");
        if (n == 0 || n >= MC_TREE_LEN || o->ntrees == MC_MAX_TREES)
            return -1;
        memcpy(o->trees[o->ntrees], s, n);
        o->trees[o->ntrees++][n] = '\0';
        s += n + (s[n] == ',');
    }
    return o->ntrees ? 0 : -1;
}

/* --methods: a comma list of names from `allowed` (a comma list), each at most once, into
 * o->trees. */
static int parse_method_list(const char *s, const char *allowed, mc_opts *o)
{
    if (parse_tree_list(s, o))
        return -1;
    for (int i = 0; i < o->ntrees; i++) {
        size_t n = strlen(o->trees[i]);
        const char *a = allowed;
        while (*a && (strcspn(a, ",") != n || strncmp(a, o->trees[i], n)))
            a += strcspn(a, ",") + (a[strcspn(a, ",")] == ',');
        if (!*a)
            return -1;
        for (int j = 0; j < i; j++)
            if (!strcmp(o->trees[i], o->trees[j]))
                return -1;
    }
    return 0;
}

enum {
    OPT_TREES = 256,
    OPT_SIZES,
    OPT_MIN,
    OPT_MAX,
    OPT_SF,
    OPT_MODES,
    OPT_CAL,
    OPT_ROOT,
    OPT_TO,
    OPT_CSV,
    OPT_SETTLE,
    OPT_QUIET,
    OPT_CONC,
    OPT_CLOCK,
    OPT_EACH,
    OPT_METHODS,
    OPT_ROOTS,
    OPT_PROJECT,
    OPT_SETTLE_SLEEP,
    OPT_SHARED,
    OPT_WARMUP
};

static const struct option long_opts[] = {
    {"trees", required_argument, NULL, OPT_TREES},
    {"sizes", required_argument, NULL, OPT_SIZES},
    {"min", required_argument, NULL, OPT_MIN},
    {"max", required_argument, NULL, OPT_MAX},
    {"sf-too", no_argument, NULL, OPT_SF},
    {"modes", required_argument, NULL, OPT_MODES},
    {"repeats", required_argument, NULL, 'r'},
    {"iterations", required_argument, NULL, 'i'},
    {"calibrate", no_argument, NULL, OPT_CAL},
    {"root", required_argument, NULL, OPT_ROOT},
    {"settle", required_argument, NULL, OPT_SETTLE},
    {"settle-sleep", no_argument, NULL, OPT_SETTLE_SLEEP},
    {"shared-payload", no_argument, NULL, OPT_SHARED},
    {"quiet", required_argument, NULL, OPT_QUIET},
    {"warmup", required_argument, NULL, OPT_WARMUP},
    {"concurrent", required_argument, NULL, OPT_CONC},
    {"roots", required_argument, NULL, OPT_ROOTS},
    {"project", required_argument, NULL, OPT_PROJECT},
    {"common-clock", no_argument, NULL, OPT_CLOCK},
    {"each", no_argument, NULL, OPT_EACH},
    {"methods", required_argument, NULL, OPT_METHODS},
    {"timeout", required_argument, NULL, OPT_TO},
    {"csv", no_argument, NULL, OPT_CSV},
    {"help", no_argument, NULL, 'h'},
    {NULL, 0, NULL, 0},
};

/* One option into the parse state; 0, -1 for a bad value, -2 for one this program refuses. */
static int apply(void *st, int c, const char *arg, const char *prog)
{
    parse *p = st;
    mc_opts *o = p->o;
    long v = 0;
    if (c == OPT_METHODS && !p->cli->methods) {
        fprintf(stderr,
                "%s: --methods is fastmsg-bench-mpi-concurrent's option; this program has none\n",
                prog);
        return -2;
    }
    if (!p->cli->trees &&
        (c == OPT_TREES || c == OPT_SF || c == OPT_MODES || c == OPT_CAL || c == OPT_EACH ||
         ((c == OPT_CONC || c == OPT_ROOTS) && !p->cli->concurrent))) {
        fprintf(stderr,
                "%s: %s is fastmsg-bench-mcast's option (fastmsg's trees); this program has none\n",
                prog,
                c == OPT_TREES   ? "--trees"
                : c == OPT_SF    ? "--sf-too"
                : c == OPT_MODES ? "--modes"
                : c == OPT_CAL   ? "--calibrate"
                : c == OPT_EACH  ? "--each"
                : c == OPT_CONC  ? "--concurrent"
                                 : "--roots");
        return -2;
    }
    switch (c) {
    case OPT_TREES:
        return parse_tree_list(arg, o);
    case OPT_SIZES:
        p->listed = 1;
        return parse_size_list(arg, o);
    case OPT_MIN:
        return bench_parse_one_size(arg, 1, (size_t)1 << 34, &p->lo);
    case OPT_MAX:
        return bench_parse_one_size(arg, 1, (size_t)1 << 34, &p->hi);
    case OPT_SF:
        return parse_mode_list("fpfs,sf", o);
    case OPT_MODES:
        return parse_mode_list(arg, o);
    case 'r':
        if (bench_parse_long(arg, 1, MC_MAX_REPEAT, &v))
            return -1;
        o->repeats = (int)v;
        return 0;
    case 'i':
        return bench_parse_long(arg, 1, 1000000, &o->iters);
    case OPT_CAL:
        o->calibrate = 1;
        return 0;
    case OPT_ROOT:
        if (bench_parse_long(arg, 0, 1 << 30, &v))
            return -1;
        o->root = (int)v;
        return 0;
    case OPT_TO:
        if (bench_parse_long(arg, 1, 1000000, &v))
            return -1;
        o->timeout_s = (double)v;
        return 0;
    case OPT_SETTLE:
        if (bench_parse_long(arg, 0, 1000000, &v))
            return -1;
        o->settle_us = (double)v;
        return 0;
    case OPT_SETTLE_SLEEP:
        o->settle_sleep = 1;
        return 0;
    case OPT_SHARED:
        o->shared = 1;
        return 0;
    case OPT_WARMUP:
        return bench_parse_one_size(arg, 0, (size_t)1 << 34, &o->warmup);
    case OPT_PROJECT:
        if (bench_parse_long(arg, 2, 1 << 20, &v))
            return -1;
        o->project = (int)v;
        return 0;
    case OPT_QUIET: {
        char *end;
        double f = strtod(arg, &end);
        if (end == arg || *end || !(f >= 0 && f <= 100))
            return -1;
        o->quiet = f;
        return 0;
    }
    case OPT_CONC:
        if (bench_parse_long(arg, 1, 4095, &v))
            return -1;
        o->concurrent = (int)v;
        return 0;
    case OPT_ROOTS:
        if (bench_parse_long(arg, 1, 4096, &v)) {
            fprintf(stderr, "%s: --roots takes a number of roots from 1 to 4096, not '%s'\n", prog,
                    arg);
            return -2;
        }
        o->roots = (int)v;
        return 0;
    case OPT_CSV:
        o->csv = 1;
        return 0;
    case OPT_CLOCK:
        o->common_clock = 1;
        return 0;
    case OPT_EACH:
        o->each = 1;
        return 0;
    case OPT_METHODS:
        return parse_method_list(arg, p->cli->methods, o);
    }
    return -1;
}

static const char *check(void *st)
{
    const parse *p = st;
    if (p->o->roots && !p->o->concurrent)
        return "--roots needs --concurrent K";
    if (p->o->each && p->o->concurrent)
        return "--each is for one root's rows, not --concurrent";
    if (p->o->shared && !MC_HAVE_SHARED)
        return "--shared-payload needs the SimGrid build (bench/sim/build.sh)";
    return p->lo > p->hi ? "--min is larger than --max" : NULL;
}

int mc_parse_cli(int argc, char **argv, const mc_cli *cli, mc_opts *o)
{
    *o = (mc_opts){.repeats = 5,
                   .iters = 20,
                   .timeout_s = 60,
                   .settle_us = 20,
                   .quiet = 0,
                   .warmup = (size_t)16 << 20};
    parse_tree_list(cli->methods ? cli->methods : MC_DEFAULT_TREES, o);
    parse_mode_list("fpfs", o);
    static const bench_cmdline cl = {"hr:i:", long_opts, usage, apply, check};
    parse st = {.o = o, .cli = cli, .lo = 8, .hi = 16UL << 20};
    int rc = bench_getopt(argc, argv, &cl, &st);
    if (rc == 0 && !st.listed) {
        o->nsizes = 0;
        for (size_t s = st.lo; s <= st.hi && o->nsizes < MC_MAX_SIZES; s *= 2)
            o->sizes[o->nsizes++] = s;
    }
    return rc;
}

int mc_parse(int argc, char **argv, mc_opts *o)
{
    return mc_parse_cli(argc, argv, &fastmsg_cli, o);
}

long mc_iters(const mc_opts *o, size_t size)
{
    if (size <= MC_ITERS_FULL)
        return o->iters;
    long v = (long)((double)o->iters * (double)MC_ITERS_FULL / (double)size);
    return v > MC_ITERS_MIN ? v : (o->iters < MC_ITERS_MIN ? o->iters : MC_ITERS_MIN);
}
