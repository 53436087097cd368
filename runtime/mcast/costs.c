/* SPDX-License-Identifier: BSD-3-Clause */
/* The model's costs as text: one table of fields drives parsing, writing and the cost file.
 * Text units are the ones people read: ns, ns per KiB, bytes. */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "costs.h"

#define NS     1e-9
#define NS_KIB (1e-9 / 1024.0)

/* X(key, field, scale) */
#define FM_COSTS_TABLE(X)                                                                          \
    X("send_msg_ns", send_msg, NS)                                                                 \
    X("send_pkt_ns", send_pkt, NS)                                                                 \
    X("send_ns_per_kib", send_byte, NS_KIB)                                                        \
    X("fill_ns_per_kib", fill_byte, NS_KIB)                                                        \
    X("gap_ns_per_kib", gap_byte, NS_KIB)                                                          \
    X("recv_pkt_ns", recv_pkt, NS)                                                                 \
    X("recv_ns_per_kib", recv_byte, NS_KIB)                                                        \
    X("copy_ns_per_kib", copy_byte, NS_KIB)                                                        \
    X("latency_ns", latency, NS)                                                                   \
    X("latency_ns_per_kib", lat_byte, NS_KIB)                                                      \
    X("wake_ns", wake, NS)                                                                         \
    X("spin_ns", spin, NS)                                                                         \
    X("poll_ns", poll, NS)                                                                         \
    X("burst_bytes", burst, 1.0)                                                                   \
    X("link_fair", link_fair, 1.0)                                                                 \
    X("far_latency_x", far_latency, 1.0)

struct field {
    const char *key;
    size_t off;
    double scale;
};

#define FIELD(k, f, s) {k, offsetof(struct fm_costs, f), s},
static const struct field fields[FM_COSTS_NFIELDS] = {FM_COSTS_TABLE(FIELD)};

const char *fm_costs_key(int i)
{
    return i >= 0 && i < FM_COSTS_NFIELDS ? fields[i].key : NULL;
}

double *fm_costs_field(struct fm_costs *c, int i)
{
    return (double *)((char *)c + fields[i].off);
}

#define GAP_FIELD 4 /* the table's index of gap_ns_per_kib, and of latency_ns_per_kib */
#define LAT_FIELD 9

void fm_costs_merge(struct fm_costs *dst, const struct fm_costs *src, unsigned set)
{
    for (int i = 0; i < FM_COSTS_NFIELDS; i++)
        if (set & (1u << i))
            *fm_costs_field(dst, i) = *fm_costs_field((struct fm_costs *)src, i);
    if (set & FM_COSTS_SIZES_BIT) {
        memcpy(dst->at_bytes, src->at_bytes, sizeof dst->at_bytes);
        memcpy(dst->at_gap, src->at_gap, sizeof dst->at_gap);
        memcpy(dst->at_lat, src->at_lat, sizeof dst->at_lat);
    } else if (set & (1u << GAP_FIELD | 1u << LAT_FIELD)) {
        memset(dst->at_bytes, 0, sizeof dst->at_bytes);
    }
}

int fm_costs_set_at(struct fm_costs *c, double bytes, double gap_byte, double lat_byte)
{
    int at = -1;
    for (int i = 0; i < FM_COSTS_SIZES && at < 0; i++)
        if (c->at_bytes[i] == bytes || !(c->at_bytes[i] > 0))
            at = i;
    if (at < 0 || !(bytes > 0))
        return -1;
    c->at_bytes[at] = bytes;
    c->at_gap[at] = gap_byte;
    c->at_lat[at] = lat_byte;
    return 0;
}

double fm_costs_lambda(const struct fm_costs *all, double B)
{
    struct fm_costs sized, *c = &sized;
    fm_costs_at(all, (size_t)B, &sized);
    double cpu = c->send_pkt + B * c->send_byte, wire = B * c->gap_byte;
    double step = cpu > wire ? cpu : wire;
    double lambda = cpu + wire + c->latency + B * c->lat_byte + c->recv_pkt + B * c->recv_byte;
    return step > 0 && lambda / step > 1 ? lambda / step : 1;
}

void fm_costs_at(const struct fm_costs *c, size_t payload, struct fm_costs *out)
{
    *out = *c;
    int best = -1;
    double best_d = 0, p = payload > 0 ? (double)payload : 1;
    for (int i = 0; i < FM_COSTS_SIZES; i++) {
        if (!(c->at_bytes[i] > 0))
            continue;
        double d = c->at_bytes[i] > p ? c->at_bytes[i] / p : p / c->at_bytes[i];
        if (best < 0 || d < best_d) {
            best = i;
            best_d = d;
        }
    }
    if (best >= 0) {
        out->gap_byte = c->at_gap[best];
        out->lat_byte = c->at_lat[best];
    }
}

static int fail(char *err, size_t errlen, const char *fmt, const char *what)
{
    if (err && errlen)
        snprintf(err, errlen, fmt, what);
    return -1;
}

/* A value as text units: finite and >= 0. */
static int number(const char *s, double *v)
{
    char *end;
    errno = 0;
    *v = strtod(s, &end);
    return end != s && !*end && !errno && isfinite(*v) && *v >= 0 ? 0 : -1;
}

/* The older form: three numbers, the sender's per-packet and per-KiB costs and the latency. */
static int parse_colons(const char *text, struct fm_costs *c, unsigned *set)
{
    double o, k, l;
    char tail;
    if (sscanf(text, "%lf:%lf:%lf%c", &o, &k, &l, &tail) != 3 || !(o >= 0) || !(k >= 0) ||
        !(l >= 0) || !isfinite(o + k + l) || o + k <= 0)
        return -1;
    c->send_pkt = o * NS;
    c->send_byte = k * NS_KIB;
    c->latency = l * NS;
    if (set)
        *set |= 1u << 1 | 1u << 2 | 1u << 8;
    return 0;
}

/* "gap_ns_per_kib@BYTES" or "latency_ns_per_kib@BYTES" (at: the '@') = value. */
static int parse_sized(char *item, char *at, const char *value, struct fm_costs *c, unsigned *set,
                       char *err, size_t errlen)
{
    double bytes, v;
    *at = '\0';
    int gap = !strcmp(item, fields[GAP_FIELD].key), lat = !strcmp(item, fields[LAT_FIELD].key);
    if (!gap && !lat)
        return fail(err, errlen, "%.40s: only gap_ns_per_kib and latency_ns_per_kib take @BYTES",
                    item);
    if (number(at + 1, &bytes) || !(bytes >= 1) || number(value, &v))
        return fail(err, errlen, "%.40s@: want @BYTES (>= 1)=a number >= 0", item);
    int i = 0;
    while (i < FM_COSTS_SIZES && c->at_bytes[i] != bytes)
        i++;
    if (i < FM_COSTS_SIZES) /* an entry of this size: one column */
        *(gap ? &c->at_gap[i] : &c->at_lat[i]) = v * NS_KIB;
    else if (fm_costs_set_at(c, bytes, gap ? v * NS_KIB : c->gap_byte,
                             lat ? v * NS_KIB : c->lat_byte)) /* (the other as the size's own) */
        return fail(err, errlen, "%.40s@: more packet sizes than the table holds", item);
    if (set)
        *set |= FM_COSTS_SIZES_BIT;
    return 0;
}

static int parse_item(char *item, struct fm_costs *c, unsigned *set, char *err, size_t errlen)
{
    char *eq = strchr(item, '=');
    if (!eq)
        return fail(err, errlen, "\"%.60s\": want key=value", item);
    *eq = '\0';
    char *at = strchr(item, '@');
    if (at)
        return parse_sized(item, at, eq + 1, c, set, err, errlen);
    for (int i = 0; i < FM_COSTS_NFIELDS; i++) {
        if (strcmp(item, fields[i].key))
            continue;
        double v;
        if (number(eq + 1, &v))
            return fail(err, errlen, "%.40s: want a number >= 0", item);
        *fm_costs_field(c, i) = v * fields[i].scale;
        if (set)
            *set |= 1u << i;
        return 0;
    }
    return fail(err, errlen, "unknown key \"%.40s\" (fastmsg-info lists them)", item);
}

int fm_costs_parse(const char *text, struct fm_costs *c, unsigned *set, char *err, size_t errlen)
{
    if (!text || !c)
        return fail(err, errlen, "%s", "no text");
    if (set)
        *set = 0;
    if (!strchr(text, '='))
        return parse_colons(text, c, set) ? fail(err, errlen, "%s",
                                                 "want key=value items or "
                                                 "SEND_PKT_NS:NS_PER_KIB:LATENCY_NS")
                                          : 0;
    char *copy = strdup(text);
    if (!copy)
        return fail(err, errlen, "%s", "out of memory");
    struct fm_costs out = *c;
    int rc = 0;
    for (char *line = copy, *next; rc == 0 && line; line = next) {
        next = strchr(line, '\n');
        if (next)
            *next++ = '\0';
        char *hash = strchr(line, '#');
        if (hash)
            *hash = '\0';
        char *save = NULL;
        for (char *item = strtok_r(line, ", \t\r", &save); rc == 0 && item;
             item = strtok_r(NULL, ", \t\r", &save))
            rc = parse_item(item, &out, set, err, errlen);
    }
    free(copy);
    if (rc == 0)
        *c = out;
    return rc;
}

int fm_costs_write(FILE *f, const struct fm_costs *c, const char *note)
{
    if (fprintf(f, "# fastmsg multicast model costs (FM_MCAST_COSTS_FILE)\n") < 0 ||
        (note && fprintf(f, "# %s\n", note) < 0))
        return -1;
    for (int i = 0; i < FM_COSTS_NFIELDS; i++)
        if (fprintf(f, "%s=%.6g\n", fields[i].key,
                    *fm_costs_field((struct fm_costs *)c, i) / fields[i].scale) < 0)
            return -1;
    for (int i = 0; i < FM_COSTS_SIZES; i++)
        if (c->at_bytes[i] > 0 &&
            fprintf(f, "%s@%.0f=%.6g\n%s@%.0f=%.6g\n", fields[GAP_FIELD].key, c->at_bytes[i],
                    c->at_gap[i] / NS_KIB, fields[LAT_FIELD].key, c->at_bytes[i],
                    c->at_lat[i] / NS_KIB) < 0)
            return -1;
    return 0;
}

int fm_costs_load(const char *path, struct fm_costs *c, char *err, size_t errlen)
{
    FILE *f = fopen(path, "r");
    if (!f)
        return fail(err, errlen, "%s", strerror(errno));
    char text[4096];
    size_t n = fread(text, 1, sizeof text - 1, f);
    int rc = ferror(f) || !feof(f) ? -1 : 0;
    fclose(f);
    if (rc)
        return fail(err, errlen, "%s", "unreadable or longer than 4 KiB");
    text[n] = '\0';
    return fm_costs_parse(text, c, NULL, err, errlen);
}

int fm_costs_save(const char *path, const struct fm_costs *c, const char *note, char *err,
                  size_t errlen)
{
    char tmp[4200];
    if (snprintf(tmp, sizeof tmp, "%s.%ld.tmp", path, (long)getpid()) >= (int)sizeof tmp)
        return fail(err, errlen, "%s", "path too long");
    FILE *f = fopen(tmp, "w");
    if (!f)
        return fail(err, errlen, "%s", strerror(errno));
    int rc = fm_costs_write(f, c, note);
    if (fclose(f) || rc || rename(tmp, path)) {
        int e = errno;
        unlink(tmp);
        return fail(err, errlen, "%s", strerror(e));
    }
    return 0;
}

void fm_costs_estimate(struct fm_costs *c, int local_only, int sender_writes)
{
    /* bench/README.md's figures on this class of machine: shared memory copies ~8 GB/s per
     * core, the receiver pulling large packets (CMA); a network stack ~1 GB/s with tens of
     * microseconds of latency. A sleeping member wakes from fm_wait's 20 us naps. */
    if (local_only)
        *c = (struct fm_costs){.send_msg = 0.3e-6,
                               .send_pkt = 0.5e-6,
                               .send_byte = 0.02e-9,
                               .fill_byte = 0.12e-9,
                               .gap_byte = 0.0,
                               .recv_pkt = 0.5e-6,
                               .recv_byte = 0.12e-9,
                               .copy_byte = 0.12e-9,
                               .latency = 0.3e-6,
                               .wake = 20e-6,
                               .spin = 300e-6,
                               .poll = 2e-6};
    else
        *c = (struct fm_costs){.send_msg = 1e-6,
                               .send_pkt = 3e-6,
                               .send_byte = 0.3e-9,
                               .fill_byte = 0.12e-9,
                               .gap_byte = 1e-9,
                               .recv_pkt = 3e-6,
                               .recv_byte = 0.3e-9,
                               .copy_byte = 0.12e-9,
                               .latency = 10e-6,
                               .wake = 20e-6,
                               .spin = 300e-6,
                               .poll = 10e-6};
    if (local_only && sender_writes) /* sm: the sender copies each packet into its chunks */
        c->send_byte = c->copy_byte;
}
