/* startup.h - what startup.c offers the program: the two semihosting calls and
 * the stack's high-water mark. */
#ifndef CORTEXM_STARTUP_H
#define CORTEXM_STARTUP_H

#include <stdint.h>

/* prints a NUL-terminated string on the host's console */
void semihost_write0(const char *s);
/* ends the emulation: QEMU exits with 0 when status is 0, else with 1 */
void semihost_exit(int status) __attribute__((noreturn));
/* the most stack used since reset, in bytes (the reset handler fills the free
 * RAM below the stack with a pattern; this finds the lowest word overwritten) */
uint32_t stack_peak_bytes(void);

#endif
