/* SPDX-License-Identifier: BSD-3-Clause */
/* fastmsg-run's command line. */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fastmsg.h"
#include "log.h"
#include "run.h"

static const char fm_run_usage_text[] =
    "usage: fastmsg-run -n N [--agent CMD] [--hosts H1,H2,...] [--addr ADDR] [-l|--label] [-v]\n"
    "                   [--] prog [args...]\n"
    "Start N copies of prog as ranks 0..N-1 of one fastmsg job.\n"
    "  -n N           number of ranks, 1..4096\n"
    "  --agent CMD    start rank r as: CMD HOST env FASTMSG_RUN_...=... prog args, with HOST\n"
    "                 taken round-robin from --hosts (e.g. --agent ssh, --agent 'ip netns exec')\n"
    "  --hosts LIST   comma-separated hosts for --agent\n"
    "  --addr ADDR    listen on and advertise ADDR (default 127.0.0.1)\n"
    "  -l, --label    prefix every line of a rank's output with \"[rank] \"\n"
    "  -v, --verbose  say what is started where\n"
    "  -h, --help     print this and exit\n";

static void fm_run_usage(FILE *f)
{
    fputs(fm_run_usage_text, f);
}

/* Split s on any of sep into a NULL-ended array of copies; *count gets the number. */
static char **fm_run_split(const char *s, const char *sep, int *count)
{
    char *copy = strdup(s);
    size_t cap = strlen(s) / 2 + 2;
    char **v = calloc(cap, sizeof *v);
    int n = 0;
    if (!copy || !v) {
        free(copy);
        free(v);
        return NULL;
    }
    char *save = NULL;
    for (char *t = strtok_r(copy, sep, &save); t; t = strtok_r(NULL, sep, &save))
        v[n++] = t; /* the words point into copy, which v[0] owns */
    if (n == 0)
        free(copy);
    *count = n;
    return v;
}

static int fm_run_parse_n(const char *s, int *n)
{
    char *end;
    long v = strtol(s, &end, 10);
    if (*s < '0' || *s > '9' || *end || v < 1 || v > FM_RUN_MAX_RANKS)
        return -1;
    *n = (int)v;
    return 0;
}

/* Everything getopt cannot check. */
static int fm_run_args_check(const struct fm_run_opts *o, const char *agent, const char *hosts)
{
    int rc;
    FM_CHECK_QUIET(o->n > 0, fm_run_fail(2, "-n N is required"));
    FM_CHECK_QUIET(o->prog && o->prog[0], fm_run_fail(2, "no program to run"));
    FM_CHECK_QUIET(!agent || (o->agent && o->agent[0]),
                   fm_run_fail(2, "--agent needs a command, e.g. --agent ssh"));
    FM_CHECK_QUIET(!agent || hosts, fm_run_fail(2, "--agent needs --hosts"));
    FM_CHECK_QUIET(agent || !hosts, fm_run_fail(2, "--hosts needs --agent"));
    FM_CHECK_QUIET(!hosts || o->nhosts > 0, fm_run_fail(2, "--hosts names no host"));
    FM_CHECK_QUIET(!o->addr || *o->addr, fm_run_fail(2, "--addr needs an address"));
    return -1;
error:
    return rc;
}

int fm_run_args_parse(int argc, char **argv, struct fm_run_opts *o)
{
    static const struct option longopts[] = {{"agent", required_argument, NULL, 'A'},
                                             {"hosts", required_argument, NULL, 'H'},
                                             {"addr", required_argument, NULL, 'a'},
                                             {"label", no_argument, NULL, 'l'},
                                             {"verbose", no_argument, NULL, 'v'},
                                             {"help", no_argument, NULL, 'h'},
                                             {NULL, 0, NULL, 0}};
    const char *agent = NULL, *hosts = NULL;
    int c, nagent = 0, rc = -1;
    memset(o, 0, sizeof *o);
    opterr = 0;
    /* '+': stop at the program, whose own options are not ours. */
    while (rc < 0 && (c = getopt_long(argc, argv, "+:n:lvh", longopts, NULL)) != -1) {
        if (c == 'n' && fm_run_parse_n(optarg, &o->n))
            rc = fm_run_fail(2, "-n wants a number of ranks in 1..%d, not '%s'", FM_RUN_MAX_RANKS,
                             optarg);
        else if (c == 'A')
            o->agent = fm_run_split(agent = optarg, " ", &nagent);
        else if (c == 'H')
            o->hosts = fm_run_split(hosts = optarg, ",", &o->nhosts);
        else if (c == 'a')
            o->addr = optarg;
        else if (c == 'l')
            o->label = 1;
        else if (c == 'v')
            o->verbose = 1;
        else if (c == 'h')
            rc = 0;
        else if (c == ':' && optopt)
            rc = fm_run_fail(2, "option '-%c' needs a value", optopt);
        else if (c == ':')
            rc = fm_run_fail(2, "option '%s' needs a value", argv[optind - 1]);
        else if (c == '?' && optopt)
            rc = fm_run_fail(2, "unknown option '-%c'", optopt);
        else if (c == '?')
            rc = fm_run_fail(2, "unknown option '%s'", argv[optind - 1]);
    }
    if (rc < 0) {
        o->prog = argv + optind;
        rc = fm_run_args_check(o, agent, hosts);
    }
    if (rc >= 0)
        fm_run_usage(rc ? stderr : stdout);
    return rc;
}
