#ifndef SWELL_COPENSSLCRYPTO_SHIM_H
#define SWELL_COPENSSLCRYPTO_SHIM_H
/* OpenSSL's libcrypto, for SHA-256 only (the export files' digests). libcurl links it
   already, so the binary depends on no further library; EVP is its current digest API. */
#include <openssl/evp.h>
#endif
