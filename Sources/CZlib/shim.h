#ifndef SWELL_CZLIB_SHIM_H
#define SWELL_CZLIB_SHIM_H
#include <zlib.h>

/* inflateInit2 is a macro that passes ZLIB_VERSION and sizeof(z_stream): wrapped for Swift.
   (Compression is libdeflate's, Sources/CLibDeflate; zlib reads gzip back, finds block
   boundaries for the parallel writer and combines CRCs.) */
static inline int swell_inflate_init2(z_streamp strm, int windowBits) {
    return inflateInit2(strm, windowBits);
}

#endif
