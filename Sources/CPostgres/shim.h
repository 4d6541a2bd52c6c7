#ifndef LK_CPOSTGRES_H
#define LK_CPOSTGRES_H

// libpq, PostgreSQL's client library (Debian libpq-dev); pkg-config libpq gives its include path.
#include <libpq-fe.h>

#endif
