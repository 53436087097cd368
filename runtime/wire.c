#include "wire.h"

#include <string.h>

void fm_wire_encode(const fm_wire_hdr *h, void *buf)
{
    unsigned char *p = buf;
    p[0] = h->version;
    p[1] = h->type;
    fm_put16(p + 2, h->flags);
    fm_put32(p + 4, h->src);
    fm_put64(p + 8, h->job_key);
    fm_put32(p + 16, h->msg_id);
    fm_put32(p + 20, h->seq);
    fm_put32(p + 24, h->payload_len);
    fm_put16(p + 28, h->handler);
    fm_put16(p + 30, h->credits);
    fm_put64(p + 32, h->msg_len);
}

fm_wire_status fm_wire_decode(const void *buf, size_t len, uint64_t job_key, int nranks,
                              size_t max_payload, fm_wire_hdr *h)
{
    const unsigned char *p = buf;
    if (len < FM_WIRE_HDR_LEN)
        return FM_WIRE_SHORT;
    h->version = p[0];
    h->type = p[1];
    h->flags = fm_get16(p + 2);
    h->src = fm_get32(p + 4);
    h->job_key = fm_get64(p + 8);
    h->msg_id = fm_get32(p + 16);
    h->seq = fm_get32(p + 20);
    h->payload_len = fm_get32(p + 24);
    h->handler = fm_get16(p + 28);
    h->credits = fm_get16(p + 30);
    h->msg_len = fm_get64(p + 32);
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
    fm_put64(payload, piece_len);
    fm_put64((unsigned char *)payload + 8, tag);
}

void fm_wire_rndv_decode(const void *payload, uint64_t *piece_len, uint64_t *tag)
{
    *piece_len = fm_get64(payload);
    *tag = fm_get64((const unsigned char *)payload + 8);
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
