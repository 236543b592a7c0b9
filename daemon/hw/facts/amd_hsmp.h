/*
 * HSMP messages uncored sends and how their replies decode
 * (hardware-amd.md §1.3, §1.4).  Every one is a GET, usable on a
 * read-only /dev/hsmp.
 */
#ifndef UNCORED_AMD_HSMP_H
#define UNCORED_AMD_HSMP_H

#include <stdint.h>

#include "hw.h"

#define HSMP_GET_PROTO_VER          0x03   /* 0/1: protocol version (2 ... 7) */
#define HSMP_GET_PROC_HOT           0x0B   /* 0/1: 1 PROCHOT active, 0 inactive */
#define HSMP_GET_SOCKET_FREQ_LIMIT  0x19   /* 0/1: MHz [31:16], source bitmap [15:0] */

#define HSMP_FREQ_LIMIT_SOURCE_MASK 0xffffu

/* The reasons of §1.4 by source bit; NULL for a bit that does not accrue (4, OPN Max) or none. */
const char *amd_hsmp_limit_reason(unsigned bit);

/* The distinct reason names, NULL-terminated, in the order they are exported. */
const char *const *amd_hsmp_reasons(void);

/*
 * Send GET message id with no argument and one reply word to socket
 * through hw: 0 with *ret_value, or hw_hsmp()'s negative errno.
 */
int amd_hsmp_get(struct hw *hw, int socket, uint32_t id, uint32_t *ret_value);

#endif
