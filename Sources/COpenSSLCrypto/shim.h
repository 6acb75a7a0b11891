#ifndef SWELL_COPENSSLCRYPTO_SHIM_H
#define SWELL_COPENSSLCRYPTO_SHIM_H
/* OpenSSL's libcrypto: SHA-256 for the export files' digests (EVP, its current digest API),
   and its process-wide initialisation (SwellLibcrypto). libcurl and libpq link it already,
   so the binary depends on no further library. */
#include <openssl/crypto.h>
#include <openssl/evp.h>
#endif
