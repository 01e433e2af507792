/*
 * gmsim/api.h — what libgmsim exports.  The library is compiled with hidden
 * symbol visibility; every public header puts its declarations between
 * GM_API_BEGIN and GM_API_END, so the shared library exports exactly what
 * include/gmsim/ declares and nothing internal (gm__ names, statics' kin).
 */
#ifndef GMSIM_API_H
#define GMSIM_API_H

#if defined(__GNUC__)
#define GM_API_BEGIN _Pragma("GCC visibility push(default)")
#define GM_API_END _Pragma("GCC visibility pop")
#else
#define GM_API_BEGIN
#define GM_API_END
#endif

#endif
