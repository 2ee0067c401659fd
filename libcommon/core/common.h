/*
 * common.h: what every ci source file includes first.
 */
#ifndef CI_COMMON_H
#define CI_COMMON_H

#include "config.h"

#include <assert.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/buf.h"
#include "core/util.h"
#include "core/nd.h"

#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))

#endif
