#include "wire.h"

#include <string.h>

/* Explicit little-endian stores, so the format does not depend on the host. */
static void put16(unsigned char *p, uint16_t v)
{
    p[0] = (unsigned char)v;
    p[1] = (unsigned char)(v >> 8);
}

static void put32(unsigned char *p, uint32_t v)
{
    put16(p, (uint16_t)v);
    put16(p + 2, (uint16_t)(v >> 16));
}

static void put64(unsigned char *p, uint64_t v)
{
    put32(p, (uint32_t)v);
    put32(p + 4, (uint32_t)(v >> 32));
}

static uint16_t get16(const unsigned char *p)
{
    return (uint16_t)(p[0] | p[1] << 8);
}

static uint32_t get32(const unsigned char *p)
{
    return get16(p) | (uint32_t)get16(p + 2) << 16;
}

static uint64_t get64(const unsigned char *p)
{
    return get32(p) | (uint64_t)get32(p + 4) << 32;
}

void fm_wire_encode(const fm_wire_hdr *h, void *buf)
{
    unsigned char *p = buf;
    p[0] = h->version;
    p[1] = h->type;
    put16(p + 2, h->flags);
    put32(p + 4, h->src);
    put64(p + 8, h->job_key);
    put32(p + 16, h->msg_id);
    put32(p + 20, h->seq);
    put32(p + 24, h->payload_len);
    put16(p + 28, h->handler);
    put16(p + 30, h->credits);
    put64(p + 32, h->msg_len);
}

fm_wire_status fm_wire_decode(const void *buf, size_t len, uint64_t job_key, int nranks,
                              size_t max_payload, fm_wire_hdr *h)
{
    const unsigned char *p = buf;
    if (len < FM_WIRE_HDR_LEN)
        return FM_WIRE_SHORT;
    h->version = p[0];
    h->type = p[1];
    h->flags = get16(p + 2);
    h->src = get32(p + 4);
    h->job_key = get64(p + 8);
    h->msg_id = get32(p + 16);
    h->seq = get32(p + 20);
    h->payload_len = get32(p + 24);
    h->handler = get16(p + 28);
    h->credits = get16(p + 30);
    h->msg_len = get64(p + 32);
    if (h->version != FM_WIRE_VERSION)
        return FM_WIRE_VERSION_BAD;
    if (h->job_key != job_key)
        return FM_WIRE_KEY_BAD;
    if (h->type < FM_PKT_DATA || h->type > FM_PKT_MCAST ||
        (h->flags & ~(h->type == FM_PKT_CREDIT ? FM_PKT_CTS : FM_PKT_LAST)))
        return FM_WIRE_TYPE_BAD;
    if (h->src >= (uint32_t)nranks)
        return FM_WIRE_SRC_BAD;
    if (h->payload_len != len - FM_WIRE_HDR_LEN || h->payload_len > max_payload)
        return FM_WIRE_LEN_BAD;
    if (h->type == FM_PKT_CREDIT && h->payload_len != 0)
        return FM_WIRE_LEN_BAD;
    if (h->type == FM_PKT_DATA && h->payload_len > h->msg_len)
        return FM_WIRE_LEN_BAD;
    if (h->type == FM_PKT_RNDV && h->payload_len != FM_WIRE_RNDV_LEN)
        return FM_WIRE_LEN_BAD;
    return FM_WIRE_OK;
}

void fm_wire_rndv_encode(uint64_t piece_len, uint64_t tag, void *payload)
{
    put64(payload, piece_len);
    put64((unsigned char *)payload + 8, tag);
}

void fm_wire_rndv_decode(const void *payload, uint64_t *piece_len, uint64_t *tag)
{
    *piece_len = get64(payload);
    *tag = get64((const unsigned char *)payload + 8);
}

const char *fm_wire_status_str(fm_wire_status s)
{
    static const char *names[FM_WIRE_NREASONS] = {"ok",
                                                  "short packet",
                                                  "bad version",
                                                  "foreign job key",
                                                  "bad type or flags",
                                                  "bad source rank",
                                                  "bad length",
                                                  "bad multicast descriptor"};
    return s < FM_WIRE_NREASONS ? names[s] : "?";
}
