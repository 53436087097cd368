/* SPDX-License-Identifier: BSD-3-Clause */
/* The DAG benchmarks' command line (dag_opts.h). */
#include "dag_opts.h"

#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "opt_parse.h"

typedef struct parse {
    dag_opts *o;
    const dag_cli *cli;
} parse;

static void usage(FILE *f, const char *prog, void *st)
{
    const parse *p = st;
    const dag_params d = DAG_DEFAULT_PARAMS;
    fprintf(f, "usage: %s %s [options]\n%s\n", p->cli->launch, prog, p->cli->what);
    fprintf(f,
            "The DAG (bench/README.md): layers of --width tasks; each task after the first\n"
            "layer has 1..--degree inputs, one in the layer before, the others in any earlier\n"
            "layer; task i runs on rank i %% ranks.\n"
            "  --tasks T           tasks (default %u)\n"
            "  --width W           tasks per layer, the last may have fewer (default %u)\n"
            "  --degree D          most inputs of a task (default %u)\n"
            "  --bytes MIN[-MAX]   output size per task, uniform in the range; K, M suffixes\n"
            "                      (default %u-%u)\n"
            "  --compute-us MIN[-MAX]  CPU time per task in us, uniform (default %u-%u)\n"
            "  --seed N            the generator's seed (default %llu)\n"
            "  -r, --repeats N     timed runs, the median is reported (default 5)\n"
            "      --warmup N      untimed runs first (default 1)\n"
            "      --corrupt TASK  flip one byte of TASK's output after its own check: every\n"
            "                      task downstream must then fail the check (for tests)\n"
            "      --timeout S     fail when one run lasts this long (default 60)\n"
            "      --csv           comma-separated output for machines\n"
            "  -h, --help          this text\n",
            d.tasks, d.width, d.degree, d.bytes_min, d.bytes_max, d.compute_min_us,
            d.compute_max_us, (unsigned long long)d.seed);
    if (p->cli->fastmsg)
        fprintf(f, "      --tree T        the multicast tree of an output that goes to several\n"
                   "                      ranks (fm_imcast_dests; default prefix)\n"
                   "      --die-at TASK   the rank that runs TASK kills itself (SIGKILL) just\n"
                   "                      before it (for tests)\n");
}

enum {
    OPT_TASKS = 256,
    OPT_WIDTH,
    OPT_DEGREE,
    OPT_BYTES,
    OPT_COMPUTE,
    OPT_SEED,
    OPT_WARMUP,
    OPT_CORRUPT,
    OPT_TO,
    OPT_CSV,
    OPT_TREE,
    OPT_DIE_AT
};

static const struct option long_opts[] = {
    {"tasks", required_argument, NULL, OPT_TASKS},
    {"width", required_argument, NULL, OPT_WIDTH},
    {"degree", required_argument, NULL, OPT_DEGREE},
    {"bytes", required_argument, NULL, OPT_BYTES},
    {"compute-us", required_argument, NULL, OPT_COMPUTE},
    {"seed", required_argument, NULL, OPT_SEED},
    {"repeats", required_argument, NULL, 'r'},
    {"warmup", required_argument, NULL, OPT_WARMUP},
    {"corrupt", required_argument, NULL, OPT_CORRUPT},
    {"timeout", required_argument, NULL, OPT_TO},
    {"csv", no_argument, NULL, OPT_CSV},
    {"tree", required_argument, NULL, OPT_TREE},
    {"die-at", required_argument, NULL, OPT_DIE_AT},
    {"help", no_argument, NULL, 'h'},
    {NULL, 0, NULL, 0},
};

/* One number of a range: a size (K, M, G suffixes) or plain decimal, in [0, hi]. */
static int parse_num(const char *s, char **end, size_t hi, int sizes, size_t *v)
{
    if (sizes)
        return bench_parse_size(s, end, 0, hi, v);
    errno = 0;
    unsigned long x = strtoul(s, end, 10);
    if (errno || *end == s || *s == '-' || x > hi)
        return -1;
    *v = x;
    return 0;
}

/* "MIN" or "MIN-MAX" (MIN alone is both). */
static int parse_range(const char *s, size_t hi, int sizes, uint32_t *lo_out, uint32_t *hi_out)
{
    size_t lo, up;
    char *end;
    if (parse_num(s, &end, hi, sizes, &lo))
        return -1;
    up = lo;
    if (*end == '-' && parse_num(end + 1, &end, hi, sizes, &up))
        return -1;
    if (*end)
        return -1;
    *lo_out = (uint32_t)lo;
    *hi_out = (uint32_t)up;
    return 0;
}

static int set_u32(const char *arg, long lo, long hi, uint32_t *out)
{
    long v;
    if (bench_parse_long(arg, lo, hi, &v))
        return -1;
    *out = (uint32_t)v;
    return 0;
}

static int set_int(const char *arg, long lo, long hi, int *out)
{
    long v;
    if (bench_parse_long(arg, lo, hi, &v))
        return -1;
    *out = (int)v;
    return 0;
}

static int apply(void *st, int c, const char *arg, const char *prog)
{
    dag_opts *o = ((parse *)st)->o;
    dag_params *p = &o->p;
    if ((c == OPT_TREE || c == OPT_DIE_AT) && !((parse *)st)->cli->fastmsg) {
        fprintf(stderr, "%s: --tree and --die-at are the fastmsg version's options\n", prog);
        return -2;
    }
    switch (c) {
    case OPT_TASKS:
        return set_u32(arg, 1, DAG_MAX_TASKS, &p->tasks);
    case OPT_WIDTH:
        return set_u32(arg, 1, DAG_MAX_TASKS, &p->width);
    case OPT_DEGREE:
        return set_u32(arg, 1, DAG_MAX_DEGREE, &p->degree);
    case OPT_BYTES:
        return parse_range(arg, DAG_MAX_BYTES, 1, &p->bytes_min, &p->bytes_max);
    case OPT_COMPUTE:
        return parse_range(arg, 10000000, 0, &p->compute_min_us, &p->compute_max_us);
    case OPT_SEED: {
        char *end;
        errno = 0;
        unsigned long long v = strtoull(arg, &end, 0);
        if (errno || end == arg || *end || *arg == '-')
            return -1;
        p->seed = v;
        return 0;
    }
    case 'r':
        return set_int(arg, 1, DAG_MAX_REPEAT, &o->repeats);
    case OPT_WARMUP:
        return set_int(arg, 0, DAG_MAX_REPEAT, &o->warmup);
    case OPT_CORRUPT:
        return bench_parse_long(arg, 0, DAG_MAX_TASKS - 1, &o->corrupt);
    case OPT_TO: {
        int v;
        if (set_int(arg, 1, 1000000, &v))
            return -1;
        o->timeout_s = v;
        return 0;
    }
    case OPT_CSV:
        o->csv = 1;
        return 0;
    case OPT_TREE:
        o->tree = arg;
        return 0;
    case OPT_DIE_AT:
        return bench_parse_long(arg, 0, DAG_MAX_TASKS - 1, &o->die_at);
    }
    return -1;
}

static const char *check(void *st)
{
    const dag_opts *o = ((parse *)st)->o;
    const char *why = dag_check_params(&o->p);
    if (!why && o->corrupt >= (long)o->p.tasks)
        why = "--corrupt names a task beyond --tasks";
    if (!why && o->die_at >= (long)o->p.tasks)
        why = "--die-at names a task beyond --tasks";
    return why;
}

int dag_parse_cli(int argc, char **argv, const dag_cli *cli, dag_opts *o)
{
    *o = (dag_opts){.p = DAG_DEFAULT_PARAMS,
                    .repeats = 5,
                    .warmup = 1,
                    .timeout_s = 60,
                    .corrupt = -1,
                    .tree = "prefix",
                    .die_at = -1};
    static const bench_cmdline cl = {"hr:", long_opts, usage, apply, check};
    parse st = {.o = o, .cli = cli};
    return bench_getopt(argc, argv, &cl, &st);
}
