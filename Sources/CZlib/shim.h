#ifndef SWELL_CZLIB_SHIM_H
#define SWELL_CZLIB_SHIM_H
#include <zlib.h>

/* deflateInit2 is a macro that passes ZLIB_VERSION and sizeof(z_stream): wrapped for Swift. */
static inline int swell_deflate_init2(z_streamp strm, int level, int method, int windowBits, int memLevel, int strategy) {
    return deflateInit2(strm, level, method, windowBits, memLevel, strategy);
}
static inline int swell_inflate_init2(z_streamp strm, int windowBits) {
    return inflateInit2(strm, windowBits);
}

#endif
