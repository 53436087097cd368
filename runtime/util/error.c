/* SPDX-License-Identifier: BSD-3-Clause */
#include "fastmsg.h"

const char *fm_strerror(int status)
{
    switch (status) {
    case FM_OK:
        return "success";
    case FM_EAGAIN:
        return "resource temporarily unavailable; retry after progress";
    case FM_ERR_INVALID:
        return "invalid argument";
    case FM_ERR_RANK:
        return "rank out of range";
    case FM_ERR_NOMEM:
        return "out of memory";
    case FM_ERR_NOT_INIT:
        return "fastmsg is not initialised (call fm_init first)";
    case FM_ERR_ALREADY_INIT:
        return "fastmsg is already initialised in this process";
    case FM_ERR_CONFIG:
        return "invalid FM_* configuration value";
    case FM_ERR_BOOTSTRAP:
        return "bootstrap (launcher/PMI) exchange failed";
    case FM_ERR_PROVIDER:
        return "libfabric provider error (fastmsg's message on stderr says which and why)";
    case FM_ERR_TIMEOUT:
        return "timed out (FM_TIMEOUT)";
    case FM_ERR_PEER:
        return "peer process died or is unreachable";
    case FM_ERR_TOO_LONG:
        return "value too long";
    case FM_ERR_HANDLER:
        return "handler id out of range (0..FM_MAX_HANDLERS-1), or no handler id free";
    case FM_ERR_OVERFLOW:
        return "more bytes sent than the message declared";
    case FM_ERR_UNDERFLOW:
        return "more bytes requested than the message holds";
    case FM_ERR_INTERNAL:
        return "internal error";
    case FM_ERR_IN_HANDLER:
        return "not allowed inside a handler";
    case FM_ERR_STATE:
        return "stream used in the wrong state";
    case FM_ERR_EMPTY:
        return "empty destination or member list";
    case FM_ERR_SELF:
        return "the calling rank cannot be one of its message's destinations";
    case FM_ERR_DUPLICATE:
        return "a rank appears twice in a destination or member list";
    case FM_ERR_TREE:
        return "unknown multicast tree or bad tree parameter";
    case FM_ERR_NOT_MEMBER:
        return "the calling rank is not a member of the multicast";
    case FM_ERR_REGISTERED:
        return "a handler is already registered under this id";
    case FM_ERR_TRUNCATED:
        return "the message was cut short: its sender or a forwarding member failed";
    }
    return "unknown status code";
}
