/*
 * base/event.c — names of the event ops.
 */
#include "gmsim/trace.h"

#include <string.h>

static const char *const event_op_names[GM_OP_COUNT] = {
#define GM__OP_NAME(e, s) s,
    GM_OPS(GM__OP_NAME)
#undef GM__OP_NAME
};

const char *gm_op_name(unsigned op)
{
    return op < GM_OP_COUNT ? event_op_names[op] : NULL;
}

int gm_op_parse(const char *name)
{
    for (unsigned i = 0; i < GM_OP_COUNT; i++)
        if (strcmp(name, event_op_names[i]) == 0)
            return (int)i;
    return -1;
}
