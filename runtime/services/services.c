/* SPDX-License-Identifier: BSD-3-Clause */
/* The services' state and handler registration. */
#include <stdlib.h>

#include "barrier.h"
#include "handlers.h"
#include "services.h"
#include "services_state.h"
#include "wireup.h"

int fm_services_init(fm_context *ctx)
{
    struct fm_services *sv = calloc(1, sizeof *sv);
    if (!sv)
        return FM_ERR_NOMEM;
    ctx->services = sv;
    sv->barrier_handler = fm_handlers_add_internal(ctx, fm_barrier_handler, sv);
    sv->wireup_handler = fm_handlers_add_internal(ctx, fm_wireup_handler, sv);
    return sv->barrier_handler < 0  ? sv->barrier_handler
           : sv->wireup_handler < 0 ? sv->wireup_handler
                                    : FM_OK;
}

void fm_services_fini(fm_context *ctx)
{
    free(ctx->services);
    ctx->services = NULL;
}
