#ifndef BREEZE_CZLIB_SHIM_H
#define BREEZE_CZLIB_SHIM_H
#include <zlib.h>
/// inflateInit2 is a macro; Swift cannot call it.
static inline int breeze_inflate_init_gzip(z_stream *s) { return inflateInit2(s, 15 + 32); }
#endif
