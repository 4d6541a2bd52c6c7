#ifndef LK_CPOSTGRES_H
#define LK_CPOSTGRES_H

// libpq's header (Debian libpq-dev puts it under postgresql/), for its types and constants:
// the functions are found at run time (Sources/Storage/Postgres/LibPQ.swift).
#include <postgresql/libpq-fe.h>

#endif
