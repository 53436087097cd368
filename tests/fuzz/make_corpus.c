/* SPDX-License-Identifier: BSD-3-Clause */
/* Writes the seed corpora (tests/fuzz/corpus/<target>/) with the runtime's own encoders, so
 * every seed is valid input: run as `make_corpus tests/fuzz/corpus` from the source root after
 * a format change. Few and small on purpose: the fuzzer finds the rest. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "ipmc/ipmc_wire.h"
#include "mcast_desc.h"
#include "prefix/prefix_route.h"
#include "run_wire.h"
#include "transport.h"
#include "wire.h"

#define JOB_KEY 0x0123456789abcdefULL /* fuzz_wire.c's FUZZ_JOB_KEY */

static const char *root;

static void put(const char *target, const char *name, const void *bytes, size_t len)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/%s", root, target);
    if (mkdir(path, 0755) && errno != EEXIST) {
        perror(path);
        exit(1);
    }
    snprintf(path, sizeof path, "%s/%s/%s", root, target, name);
    FILE *f = fopen(path, "wb");
    if (!f || fwrite(bytes, 1, len, f) != len || fclose(f)) {
        perror(path);
        exit(1);
    }
}

static void packet(const char *name, fm_wire_hdr h, const void *payload)
{
    unsigned char buf[FM_WIRE_HDR_LEN + 256];
    h.version = FM_WIRE_VERSION;
    h.job_key = JOB_KEY;
    fm_wire_encode(&h, buf);
    memcpy(buf + FM_WIRE_HDR_LEN, payload, h.payload_len);
    put("wire", name, buf, FM_WIRE_HDR_LEN + h.payload_len);
}

/* A whole small message behind the compact header. */
static void short_packet(const char *name, fm_wire_hdr h, const void *payload)
{
    unsigned char buf[FM_WIRE_SHORT_LEN + FM_WIRE_SHORT_MAX];
    h.version = FM_WIRE_VERSION;
    h.job_key = JOB_KEY;
    fm_wire_encode_short(&h, buf);
    memcpy(buf + FM_WIRE_SHORT_LEN, payload, h.payload_len);
    put("wire", name, buf, FM_WIRE_SHORT_LEN + h.payload_len);
}

/* A list descriptor of n members (ranks n-1 .. 0) after the 2-byte nranks - 1 prefix. */
static size_t list_desc(unsigned char *out, int nranks, int builder, uint32_t param,
                        uint32_t lambda_milli, int n, int root_pos)
{
    int members[64];
    for (int i = 0; i < n; i++)
        members[i] = n - 1 - i;
    fm_mcast_desc d = {.builder = (uint8_t)builder,
                       .param = param,
                       .lambda_milli = lambda_milli,
                       .n = (uint32_t)n,
                       .root_pos = (uint32_t)root_pos,
                       .root_rank = (uint32_t)members[root_pos]};
    fm_put16(out, (uint16_t)(nranks - 1));
    fm_mcast_desc_encode(&d, members, out + 2);
    return 2 + fm_mcast_desc_size(n);
}

static void wire_corpus(void)
{
    const char text[] = "hello, fastmsg";
    packet("data",
           (fm_wire_hdr){.type = FM_PKT_DATA,
                         .src = 1,
                         .msg_id = 7,
                         .payload_len = 14,
                         .handler = 3,
                         .credits = 2,
                         .msg_len = 100},
           text);
    packet("data-last",
           (fm_wire_hdr){.type = FM_PKT_DATA,
                         .flags = FM_PKT_LAST,
                         .src = 3,
                         .seq = 4,
                         .payload_len = 14,
                         .msg_len = 14},
           text);
    short_packet("short", (fm_wire_hdr){.src = 2, .payload_len = 8, .handler = 1, .credits = 1},
                 text);
    short_packet("short-empty", (fm_wire_hdr){.src = 1, .handler = 263, .credits = 0xffff}, "");
    packet("credit", (fm_wire_hdr){.type = FM_PKT_CREDIT, .src = 2, .credits = 4}, NULL);
    packet("credit-cts",
           (fm_wire_hdr){.type = FM_PKT_CREDIT, .flags = FM_PKT_CTS, .msg_len = 0x10002}, NULL);
    packet("credit-window",
           (fm_wire_hdr){.type = FM_PKT_CREDIT,
                         .flags = FM_PKT_REVOKE | FM_PKT_GIVEBACK | FM_PKT_GRANT | FM_PKT_ASK,
                         .src = 1,
                         .handler = 30,
                         .seq = 9,
                         .msg_len = 7},
           NULL);
    unsigned char rndv[FM_WIRE_RNDV_LEN];
    fm_wire_rndv_encode(1 << 20, 0x10002, rndv);
    packet("rndv",
           (fm_wire_hdr){.type = FM_PKT_RNDV,
                         .src = 1,
                         .seq = 1,
                         .payload_len = FM_WIRE_RNDV_LEN,
                         .msg_len = 1 << 20},
           rndv);
    unsigned char mc[64 + 32];
    size_t n = list_desc(mc, 4, 2, 0, 0, 4, 0) - 2;
    memcpy(mc + 2 + n, "abcd", 4);
    packet("mcast",
           (fm_wire_hdr){.type = FM_PKT_MCAST,
                         .flags = FM_PKT_LAST,
                         .payload_len = (uint32_t)n + 4,
                         .msg_len = n + 4},
           mc + 2);
}

static void mcast_corpus(void)
{
    unsigned char buf[2 + 32 + 4 * 64];
    /* builders as in trees/registry.c: flat, chain, binomial, kbinomial, postal */
    put("mcast_desc", "flat", buf, list_desc(buf, 8, 0, 0, 0, 5, 2));
    put("mcast_desc", "chain", buf, list_desc(buf, 6, 1, 0, 0, 6, 5));
    put("mcast_desc", "binomial", buf, list_desc(buf, 16, 2, 0, 0, 13, 0));
    put("mcast_desc", "kbinomial", buf, list_desc(buf, 40, 3, 2, 0, 40, 7));
    put("mcast_desc", "postal", buf, list_desc(buf, 20, 4, 0, 2500, 17, 3));
    fm_mcast_desc g = {.builder = 4,
                       .flags = FM_DESC_GROUP | FM_DESC_STORE_FORWARD,
                       .param = 2,
                       .n = 300,
                       .root_pos = 299,
                       .root_rank = 12,
                       .group = 0xfeedULL};
    fm_put16(buf, 511);
    fm_mcast_desc_encode(&g, NULL, buf + 2);
    put("mcast_desc", "group-postal", buf, 2 + FM_DESC_FIXED);
}

static void pmi1(const char *name, unsigned char control, const char *stream)
{
    char buf[2048];
    buf[0] = (char)control;
    size_t len = strlen(stream);
    memcpy(buf + 1, stream, len);
    put("pmi1", name, buf, len + 1);
}

static void pmi1_corpus(void)
{
    /* control: reads of 16 bytes, values up to 255 bytes */
    pmi1("hydra-session", 0xff,
         "cmd=response_to_init pmi_version=1 pmi_subversion=1 rc=0\n"
         "cmd=maxes kvsname_max=256 keylen_max=64 vallen_max=1024\n"
         "cmd=my_kvsname kvsname=kvs_4191_0_855949334_vm\n"
         "cmd=put_result rc=0 msg=success\n"
         "cmd=barrier_out\n"
         "cmd=get_result rc=0 msg=success value=8/0a0b%20c\n"
         "cmd=finalize_ack\n");
    pmi1("port-handshake", 0x83, "cmd=initack\ncmd=set size=4\ncmd=set rank=2\ncmd=set debug=0\n");
    pmi1("slurm-errors", 0x40,
         "cmd=get_result rc=-1 msg=key_not_found\n"
         "cmd=maxes rc=0 kvsname_max=256 keylen_max=abc vallen_max=1024\n"
         "cmd=put kvsname=k key=r0.addr value=x=y\n");
}

/* Records of vals into out: their length. */
static size_t run_records(char *out, const struct fm_run_val *vals, int n)
{
    size_t len = 0;
    for (int i = 0; i < n; i++) {
        len += (size_t)fm_run_fmt_record(out + len, &vals[i]);
        if (vals[i].data)
            memcpy(out + len, vals[i].data, vals[i].len);
        len += vals[i].len;
    }
    return len;
}

/* A session as both ends of fastmsg-run's exchange write it, and a payload alone. */
static void run_corpus(void)
{
    char buf[4096], recs[256];
    struct fm_run_get g = {2, 3, "fm.card"};
    struct fm_run_val v[3] = {{"\0abc\n", 5}, {NULL, 0}, {"", 0}};
    size_t nrec = run_records(recs, v, 3), len = 0;
    buf[len++] = (char)0x23; /* a job of 4, payloads of 4 records; vals for rank 2, 3 ranks */
    len += (size_t)fm_run_fmt_put(buf + len, sizeof buf - len, "fm.card", 5);
    memcpy(buf + len, "\0abc\n", 5);
    len += 5;
    len += (size_t)fm_run_fmt_get(buf + len, sizeof buf - len, &g);
    len += (size_t)fm_run_fmt_vals(buf + len, sizeof buf - len, &g, 3, nrec);
    memcpy(buf + len, recs, nrec);
    len += nrec;
    len += (size_t)snprintf(buf + len, sizeof buf - len, "cmd=fence_done\n");
    put("run", "session", buf, len);
    buf[0] = (char)0x02; /* 3 records */
    memcpy(buf + 1, recs, nrec);
    put("run", "records", buf, 1 + nrec);
}

/* A destination set after the 2-byte nranks - 1 prefix, in the encoder's own form. */
static void dests(const char *name, int nranks, const int *ranks, int n)
{
    uint8_t buf[2 + 256];
    buf[0] = (uint8_t)(nranks - 1);
    buf[1] = (uint8_t)((nranks - 1) >> 8);
    int len = fm_prefix_dests_encode(ranks, n, nranks, buf + 2, sizeof buf - 2);
    if (len < 0) {
        fprintf(stderr, "make_corpus: %s: encode failed (%d)\n", name, len);
        exit(1);
    }
    put("prefix_dests", name, buf, 2 + (size_t)len);
}

static void prefix_corpus(void)
{
    const int run[8] = {3, 4, 5, 6, 7, 8, 9, 10}, spread[4] = {0, 200, 1000, 60000};
    const int holes[6] = {16, 18, 19, 23, 30, 31};
    dests("empty", 100, NULL, 0);
    dests("one", 100, run, 1);
    dests("bitmap", 100, run, 8);
    dests("bitmap-holes", 64, holes, 6);
    dests("list", 65536, spread, 4);
}

/* A datagram of the two-stage multicast: chunk index of a len-byte message, extra_len bytes
 * of extra. */
static void datagram(const char *name, uint8_t flags, uint16_t extra_len, uint64_t len,
                     uint32_t chunk, uint32_t index)
{
    unsigned char b[FM_TP_DGRAM_MAX];
    fm_ipmc_hdr h = {.flags = flags,
                     .handler = 3,
                     .extra_len = extra_len,
                     .job_key = JOB_KEY,
                     .root = 1,
                     .mid = 7,
                     .index = index,
                     .chunk = chunk,
                     .len = len,
                     .ack_id = 0,
                     .n = 2};
    fm_ipmc_hdr_encode(&h, b);
    size_t plen = fm_ipmc_chunk_len(len, chunk, index);
    memset(b + FM_IPMC_HDR_LEN, 0x05, extra_len); /* (a set's bytes need not parse here) */
    memset(b + FM_IPMC_HDR_LEN + extra_len, 0x5a, plen);
    put("ipmc_wire", name, b, FM_IPMC_HDR_LEN + extra_len + plen);
}

static void ipmc_corpus(void)
{
    datagram("empty", FM_IPMC_GROUP, 8, 0, 1416, 0);
    datagram("one-chunk", FM_IPMC_GROUP, 8, 1416, 1416, 0);
    datagram("last-chunk", FM_IPMC_SET, 3, 3000, 1421, 2);
    datagram("offer", FM_IPMC_SET, 3, 1u << 20, 1421, 0);
}

int main(int argc, char **argv)
{
    if (argc != 2) {
        fprintf(stderr, "usage: make_corpus DIR (tests/fuzz/corpus)\n");
        return 2;
    }
    root = argv[1];
    if (mkdir(root, 0755) && errno != EEXIST) {
        perror(root);
        return 1;
    }
    wire_corpus();
    mcast_corpus();
    pmi1_corpus();
    run_corpus();
    prefix_corpus();
    ipmc_corpus();
    return 0;
}
