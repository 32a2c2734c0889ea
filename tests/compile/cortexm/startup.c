/* startup.c - the smallest bare-metal start for a Cortex-M under QEMU: the
 * vector table, a reset handler that sets up .data and .bss (and the FPU on a
 * core that has one) and calls main(), and the two semihosting calls the test
 * needs to talk to the host (SYS_WRITE0 to print, SYS_EXIT to end QEMU with a
 * status), and a measure of the stack's peak use. No libc is needed for any of it. */
#include <stdint.h>

#include "startup.h"

extern uint32_t __data_start[], __data_end[], __data_load[], __bss_start[], __bss_end[];
extern uint32_t __stack_top[];
int main(void);
#define STACK_PAINT 0x5AC5A5C3u
void Reset_Handler(void);
static void Fault_Handler(void);

/* ARM semihosting: "bkpt 0xAB" with the operation in r0 and its argument in r1
 * (the M-profile form; QEMU answers it with -semihosting). */
static uint32_t semihost_call(uint32_t op, const void *arg) {
  register uint32_t r0 __asm__("r0") = op;
  register const void *r1 __asm__("r1") = arg;
  __asm__ volatile("bkpt 0xAB" : "+r"(r0) : "r"(r1) : "memory");
  return r0;
}

void semihost_write0(const char *s) { semihost_call(0x04u /* SYS_WRITE0 */, s); }

void semihost_exit(int status) {
  /* SYS_EXIT's reason: ADP_Stopped_ApplicationExit ends QEMU with status 0, any
   * other reason (here RunTimeErrorUnknown) with status 1. */
  uint32_t reason = status == 0 ? 0x20026u : 0x20023u;
  semihost_call(0x18u /* SYS_EXIT */, (const void *)reason);
  for (;;) {
  }
}

/* Reset, NMI, HardFault, MemManage, BusFault, UsageFault: enough for a program
 * that takes no interrupts; any fault reports itself and stops QEMU. */
__attribute__((section(".vectors"), used)) static void (*const vectors[7])(void) = {
    (void (*)(void))(uintptr_t)__stack_top, Reset_Handler, Fault_Handler, Fault_Handler,
    Fault_Handler, Fault_Handler, Fault_Handler,
};

static void Fault_Handler(void) {
  semihost_write0("cortexm: fault\n");
  semihost_exit(1);
}

uint32_t stack_peak_bytes(void) {
  const volatile uint32_t *p = __bss_end;
  while (p < __stack_top && *p == STACK_PAINT) p++;
  return (uint32_t)((uintptr_t)__stack_top - (uintptr_t)p);
}

void Reset_Handler(void) {
#if defined(__ARM_FP)
  /* full access to coprocessors 10 and 11 (the FPU) before any float instruction;
   * the loops below are integer-only */
  *(volatile uint32_t *)0xE000ED88u |= 0xFu << 20;
  __asm__ volatile("dsb\n\tisb" ::: "memory");
#endif
  for (uint32_t *s = __data_load, *d = __data_start; d < __data_end;) *d++ = *s++;
  for (uint32_t *d = __bss_start; d < __bss_end;) *d++ = 0;
  /* paint the free RAM between .bss and this frame (less a margin for the frame
   * itself) so that stack_peak_bytes() can find how deep main() went */
  uint32_t *sp;
  __asm__ volatile("mov %0, sp" : "=r"(sp));
  for (volatile uint32_t *d = __bss_end; d < sp - 16;) *d++ = STACK_PAINT;
  semihost_exit(main());
}
