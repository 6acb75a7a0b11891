#ifndef SWELL_CLIBDEFLATE_SHIM_H
#define SWELL_CLIBDEFLATE_SHIM_H
/* libdeflate: whole-buffer DEFLATE compression and CRC-32 (Debian's libdeflate-dev).
   Its API is plain functions on an opaque compressor, so Swift calls it directly. */
#include <libdeflate.h>

#endif
