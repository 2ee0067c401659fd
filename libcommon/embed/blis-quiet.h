/*
 * blis-quiet.h: <blis.h> without its warnings.  blis.h defines its inline
 * helpers as plain static functions and compares unsigned values with zero:
 * not our warnings, and -Werror builds must not stop on them.
 */
#ifndef CI_BLIS_QUIET_H
#define CI_BLIS_QUIET_H

#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wunused-function"
#pragma GCC diagnostic ignored "-Wunused-parameter"
#pragma GCC diagnostic ignored "-Wtype-limits"
#pragma GCC diagnostic ignored "-Wshadow"
#pragma GCC diagnostic ignored "-Wstrict-prototypes"
#pragma GCC diagnostic ignored "-Wmissing-prototypes"
#pragma GCC diagnostic ignored "-Wsign-compare"
#include <blis.h>
#pragma GCC diagnostic pop

#endif
