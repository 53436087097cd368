/* SPDX-License-Identifier: BSD-3-Clause */
/* Encoding and validation of the multicast descriptor (mcast_desc.h). The decoder sees bytes
 * from the network: it checks every field before anything is used. */
#include "mcast_desc.h"
#include "prefix/prefix_route.h"
#include "trees/tree.h"

#include <string.h>

#include "wire.h"

size_t fm_mcast_desc_size(int list_members)
{
    return FM_DESC_FIXED + 4 * (size_t)(list_members > 0 ? list_members : 0);
}

/* Bytes after the members: FM_DESC_ACK's fields, then FM_DESC_SPLIT's. */
static size_t trailer_len(unsigned flags)
{
    return (flags & FM_DESC_ACK ? FM_DESC_ACK_LEN : 0) +
           (flags & FM_DESC_SPLIT ? FM_DESC_SPLIT_LEN : 0);
}

size_t fm_mcast_desc_len(const fm_mcast_desc *d)
{
    size_t body = d->flags & FM_DESC_SET
                      ? FM_DESC_FIXED + d->set_len
                      : fm_mcast_desc_size(d->flags & FM_DESC_GROUP ? 0 : (int)d->n);
    return body + trailer_len(d->flags);
}

void fm_mcast_desc_encode(const fm_mcast_desc *d, const int *members, void *buf)
{
    unsigned char *p = buf;
    int list = !(d->flags & FM_DESC_GROUP);
    size_t len = fm_mcast_desc_len(d);
    fm_put16(p, (uint16_t)len);
    p[2] = d->builder;
    p[3] = d->flags;
    fm_put32(p + 4, d->param);
    fm_put32(p + 8, d->lambda_milli);
    fm_put32(p + 12, d->n);
    fm_put32(p + 16, d->root_pos);
    fm_put32(p + 20, d->root_rank);
    fm_put64(p + 24, d->group);
    if (d->flags & FM_DESC_SET)
        memcpy(p + FM_DESC_FIXED, d->set_bytes, d->set_len);
    else
        for (uint32_t i = 0; list && i < d->n; i++)
            fm_put32(p + FM_DESC_FIXED + 4 * i, (uint32_t)members[i]);
    unsigned char *t = p + len - trailer_len(d->flags);
    if (d->flags & FM_DESC_ACK) {
        fm_put32(t, d->ack_id);
        fm_put32(t + 4, 0);
        t += FM_DESC_ACK_LEN;
    }
    if (d->flags & FM_DESC_SPLIT) {
        fm_put32(t, d->split_id);
        fm_put32(t + 4, 0);
    }
}

int fm_mcast_desc_member(const fm_mcast_desc *d, uint32_t i)
{
    return d->set ? d->set[i] : (int)fm_get32(d->members + 4 * (size_t)i);
}

/* A set (FM_DESC_SET) into set_out: exactly n ascending ranks, the root's at root_pos. */
static int set_ok(fm_mcast_desc *d, const unsigned char *p, int nranks, int *set_out)
{
    size_t ack = trailer_len(d->flags);
    if (!set_out || d->flags & FM_DESC_GROUP || d->group != 0 ||
        d->desc_len < FM_DESC_FIXED + ack + 1 || d->n > (uint32_t)nranks)
        return -1;
    d->set_len = (uint32_t)(d->desc_len - FM_DESC_FIXED - ack);
    int got = fm_prefix_dests_decode(p + FM_DESC_FIXED, d->set_len, nranks, set_out, nranks);
    if (got < 0 || (uint32_t)got != d->n || set_out[d->root_pos] != (int)d->root_rank)
        return -1;
    d->set = set_out;
    d->set_bytes = p + FM_DESC_FIXED;
    return 0;
}

/* Every listed rank in range and listed once. */
static int list_ok(const fm_mcast_desc *d, int nranks, unsigned char *seen)
{
    int ok = 1;
    uint32_t i;
    for (i = 0; i < d->n && ok; i++) {
        uint32_t r = fm_get32(d->members + 4 * (size_t)i);
        ok = r < (uint32_t)nranks && !seen[r];
        if (ok)
            seen[r] = 1;
    }
    for (uint32_t j = 0; j < i; j++) { /* leave the scratch clean for the next call */
        uint32_t r = fm_get32(d->members + 4 * (size_t)j);
        if (r < (uint32_t)nranks)
            seen[r] = 0;
    }
    return ok;
}

int fm_mcast_desc_decode(const void *buf, size_t len, int nranks, unsigned char *seen, int *set_out,
                         fm_mcast_desc *d)
{
    const unsigned char *p = buf;
    if (len < FM_DESC_FIXED || nranks < 1)
        return -1;
    memset(d, 0, sizeof *d);
    d->desc_len = fm_get16(p);
    d->builder = p[2];
    d->flags = p[3];
    d->param = fm_get32(p + 4);
    d->lambda_milli = fm_get32(p + 8);
    d->n = fm_get32(p + 12);
    d->root_pos = fm_get32(p + 16);
    d->root_rank = fm_get32(p + 20);
    d->group = fm_get64(p + 24);
    int list = !(d->flags & FM_DESC_GROUP);
    unsigned both = FM_DESC_STORE_FORWARD | FM_DESC_FCFS;
    if ((d->flags & ~(both | FM_DESC_GROUP | FM_DESC_ACK | FM_DESC_SET | FM_DESC_SPLIT)) ||
        (d->flags & both) == both || !fm_tree_builder_get(d->builder) || d->n < 1 ||
        d->root_pos >= d->n || d->root_rank >= (uint32_t)nranks || d->desc_len > len)
        return -1;
    if (d->flags & FM_DESC_SET) {
        if (set_ok(d, p, nranks, set_out))
            return -1;
    } else {
        if (list && (d->n > FM_DESC_MAX_LIST || d->n > (uint32_t)nranks))
            return -1; /* (before fm_mcast_desc_len multiplies it) */
        if (d->desc_len != fm_mcast_desc_len(d) || (list ? d->group != 0 : d->group == 0))
            return -1;
    }
    const unsigned char *t = p + d->desc_len - trailer_len(d->flags);
    if (d->flags & FM_DESC_ACK) {
        d->ack_id = fm_get32(t);
        if (fm_get32(t + 4) != 0)
            return -1;
        t += FM_DESC_ACK_LEN;
    }
    if (d->flags & FM_DESC_SPLIT) {
        d->split_id = fm_get32(t);
        if (fm_get32(t + 4) != 0)
            return -1;
    }
    if (!list || d->set)
        return 0;
    d->members = p + FM_DESC_FIXED;
    if (!seen || !list_ok(d, nranks, seen))
        return -1;
    return fm_mcast_desc_member(d, d->root_pos) == (int)d->root_rank ? 0 : -1;
}
