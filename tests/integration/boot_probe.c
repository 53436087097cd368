/* SPDX-License-Identifier: BSD-3-Clause */
/* boot_probe: checks the bootstrap under whatever launcher started it. Every rank publishes a
 * 1000-byte value (several back-end chunks where values travel as text) and a short one,
 * fences, and checks every rank's values byte for byte; then the ranks compare their views of
 * the job key after a second fence. Prints one "ok" line per rank and exits 0, or says what
 * differs and exits 1.
 *
 *   --die-rank R    rank R kills itself with SIGKILL after the first fence
 *   --abort-rank R  rank R calls fm_boot_abort(5, ...) after the first fence
 *   --no-fini       exit 0 without fm_boot_fini
 *   --big BYTES     the big value's size (up to 65536) instead of 1000
 *   --only-next     after the first fence, get only the next rank's short value
 *   --get-missing   also get a key nobody put: it must fail with FM_ERR_BOOTSTRAP
 *   --bytes         print the bytes this process received over TCP (from the launcher):
 *                   "boot_probe: rank R received B bytes" */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bootstrap.h"
#include "tcp_bytes.h"
#include "fastmsg.h"

#define PROBE_BIG_MAX 65536

struct probe_opts {
    int die_rank, abort_rank, no_fini, big, only_next, get_missing, bytes;
};

static void probe_usage(void)
{
    fprintf(stderr, "usage: boot_probe [--die-rank R] [--abort-rank R] [--no-fini] [--big BYTES] "
                    "[--only-next] [--get-missing] [--bytes]\n");
    exit(2);
}

static void probe_args(int argc, char **argv, struct probe_opts *o)
{
    memset(o, 0, sizeof *o);
    o->die_rank = o->abort_rank = -1;
    o->big = 1000;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--no-fini"))
            o->no_fini = 1;
        else if (!strcmp(argv[i], "--only-next"))
            o->only_next = 1;
        else if (!strcmp(argv[i], "--get-missing"))
            o->get_missing = 1;
        else if (!strcmp(argv[i], "--bytes"))
            o->bytes = 1;
        else if (!strcmp(argv[i], "--die-rank") && i + 1 < argc)
            o->die_rank = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--abort-rank") && i + 1 < argc)
            o->abort_rank = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--big") && i + 1 < argc && atoi(argv[i + 1]) > 0 &&
                 atoi(argv[i + 1]) <= PROBE_BIG_MAX)
            o->big = atoi(argv[++i]);
        else
            probe_usage();
    }
}

static int probe_big_len = 1000;

/* Rank r's big value: every byte value occurs, NULs included. */
static void probe_big(int r, unsigned char *v)
{
    for (int i = 0; i < probe_big_len; i++)
        v[i] = (unsigned char)(r * 131 + i * 7 + 13);
}

static int probe_fail(fm_boot *b, const char *what, int rc)
{
    fprintf(stderr, "boot_probe: rank %d: %s: %s (%s)\n", b->rank, what, fm_strerror(rc), b->err);
    return 1;
}

static int probe_publish(fm_boot *b)
{
    static unsigned char big[PROBE_BIG_MAX];
    char small[32];
    int rc;
    probe_big(b->rank, big);
    snprintf(small, sizeof small, "small-%d", b->rank);
    if ((rc = fm_boot_put(b, "probe.big", big, (size_t)probe_big_len)))
        return probe_fail(b, "put probe.big", rc);
    if ((rc = fm_boot_put(b, "probe.small", small, strlen(small))))
        return probe_fail(b, "put probe.small", rc);
    if ((rc = fm_boot_fence(b)))
        return probe_fail(b, "first fence", rc);
    return 0;
}

static int probe_check_big(fm_boot *b, int r)
{
    static unsigned char want[PROBE_BIG_MAX], got[PROBE_BIG_MAX + 1];
    size_t len = sizeof got;
    int rc = fm_boot_get(b, r, "probe.big", got, &len);
    if (rc)
        return probe_fail(b, "get probe.big", rc);
    probe_big(r, want);
    if (len != (size_t)probe_big_len) {
        fprintf(stderr, "boot_probe: rank %d: probe.big of rank %d has %zu bytes, not %d\n",
                b->rank, r, len, probe_big_len);
        return 1;
    }
    for (int i = 0; i < probe_big_len; i++)
        if (got[i] != want[i]) {
            fprintf(stderr,
                    "boot_probe: rank %d: byte %d of rank %d's probe.big is %02x, not %02x\n",
                    b->rank, i, r, got[i], want[i]);
            return 1;
        }
    return 0;
}

static int probe_check_small(fm_boot *b, int r)
{
    char want[32], got[64];
    size_t len = sizeof got - 1;
    int rc = fm_boot_get(b, r, "probe.small", got, &len);
    if (rc)
        return probe_fail(b, "get probe.small", rc);
    got[len] = '\0';
    snprintf(want, sizeof want, "small-%d", r);
    if (strcmp(got, want)) {
        fprintf(stderr, "boot_probe: rank %d: probe.small of rank %d is '%s', not '%s'\n", b->rank,
                r, got, want);
        return 1;
    }
    return 0;
}

/* Everyone publishes its view of the job key; all views must match ours. */
static int probe_check_key(fm_boot *b)
{
    int rc;
    if ((rc = fm_boot_put(b, "probe.key", &b->job_key, sizeof b->job_key)))
        return probe_fail(b, "put probe.key", rc);
    if ((rc = fm_boot_fence(b)))
        return probe_fail(b, "second fence", rc);
    for (int r = 0; r < b->size; r++) {
        uint64_t key = 0;
        size_t len = sizeof key;
        if ((rc = fm_boot_get(b, r, "probe.key", &key, &len)))
            return probe_fail(b, "get probe.key", rc);
        if (len != sizeof key || key != b->job_key) {
            fprintf(stderr, "boot_probe: rank %d: rank %d sees job key %016llx, we see %016llx\n",
                    b->rank, r, (unsigned long long)key, (unsigned long long)b->job_key);
            return 1;
        }
    }
    return 0;
}

/* A key nobody put: the get fails, clearly and at once (not at FM_TIMEOUT). */
static int probe_get_missing(fm_boot *b)
{
    char v[64];
    size_t len = sizeof v;
    int rc = fm_boot_get(b, (b->rank + 1) % b->size, "probe.none", v, &len);
    if (rc != FM_ERR_BOOTSTRAP) {
        fprintf(stderr, "boot_probe: rank %d: get of a key nobody put returned %s\n", b->rank,
                fm_strerror(rc));
        return 1;
    }
    printf("boot_probe: rank %d: get of a key nobody put: %s\n", b->rank, b->err);
    return 0;
}

int main(int argc, char **argv)
{
    struct probe_opts o;
    static fm_boot b; /* static: with --no-fini its state stays reachable, not "leaked" */
    int bad = 0;
    probe_args(argc, argv, &o);
    probe_big_len = o.big;
    int rc = fm_boot_init(&b, "auto", 30);
    if (rc) {
        fprintf(stderr, "boot_probe: fm_boot_init: %s (%s)\n", fm_strerror(rc), b.err);
        return 1;
    }
    if (probe_publish(&b))
        return 1;
    if (b.rank == o.die_rank)
        kill(getpid(), SIGKILL);
    if (b.rank == o.abort_rank)
        fm_boot_abort(&b, 5, "boot_probe: abort as asked");
    if (o.only_next)
        bad = probe_check_small(&b, (b.rank + 1) % b.size);
    for (int r = 0; r < b.size && !bad && !o.only_next; r++)
        bad = probe_check_big(&b, r) || probe_check_small(&b, r);
    if (!bad && o.get_missing)
        bad = probe_get_missing(&b);
    if (!bad && !o.only_next)
        bad = probe_check_key(&b);
    if (!bad && o.bytes)
        printf("boot_probe: rank %d received %lld bytes\n", b.rank, tcp_bytes_received());
    if (!bad)
        printf("boot_probe: rank %d of %d ok (backend %s, key %016llx)\n", b.rank, b.size,
               b.ops->name, (unsigned long long)b.job_key);
    fflush(stdout);
    if (!o.no_fini)
        fm_boot_fini(&b);
    return bad;
}
