#ifndef SWELL_CLIBPQ_SHIM_H
#define SWELL_CLIBPQ_SHIM_H
#include <libpq-fe.h>
#endif
