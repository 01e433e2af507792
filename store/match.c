/*
 * store/match.c — the one rule by which --trace picks traces, in every
 * verb and in the library (sweep, report): a trace is picked by a pattern
 * that is its name, or an fnmatch(3) glob ("gpt2.*", "run[12]") that
 * matches its name.  The name comes first, so a trace whose name holds
 * glob characters is still picked by its name.
 */
#include "gmsim/store.h"

#include <fnmatch.h>
#include <string.h>

int gm_trace_match(const char *pattern, const char *name)
{
    if (pattern == NULL)
        return 1;
    if (name == NULL)
        return 0;
    return strcmp(pattern, name) == 0 || fnmatch(pattern, name, 0) == 0;
}
