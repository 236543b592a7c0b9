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

#define HSMP_GET_DIMM_TEMP_RANGE    0x16   /* 1/1: in DIMM address; range [2:0], refresh [3] */
#define HSMP_GET_DIMM_THERMAL       0x18   /* 1/1: in DIMM address; temp [31:21], age [16:8] */

#define HSMP_FREQ_LIMIT_SOURCE_MASK 0xffffu
#define HSMP_DIMM_REFRESH_2X        (1u << 3)   /* 0x16: 0 = 1X, 1 = 2X (MR4, JEDEC) */

/*
 * The DIMM address of §1.5, mode 1: bit 7 set, bit 6 the sensor (TS0/TS1),
 * bit 4 the DIMM of the channel, bits 3:0 the channel (UMC instance).
 */
uint32_t amd_hsmp_dimm_addr(unsigned channel, unsigned slot, unsigned sensor);

/* GET_DIMM_THERMAL's temperature, esmi's decoding: 11-bit two's complement x 0.25 C. */
double amd_hsmp_dimm_celsius(uint32_t reply);

/* The reasons of §1.4 by source bit; NULL for a bit that does not accrue (4, OPN Max) or none. */
const char *amd_hsmp_limit_reason(unsigned bit);

/* The distinct reason names, NULL-terminated, in the order they are exported. */
const char *const *amd_hsmp_reasons(void);

/*
 * Send GET message id with no argument and one reply word to socket
 * through hw: 0 with *ret_value, or hw_hsmp()'s negative errno.
 */
int amd_hsmp_get(struct hw *hw, int socket, uint32_t id, uint32_t *ret_value);

/* The same for a message of one argument, arg. */
int amd_hsmp_get_arg(struct hw *hw, int socket, uint32_t id, uint32_t arg, uint32_t *ret_value);

#endif
