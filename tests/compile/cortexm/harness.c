/* harness.c - runs a compiled model once on the input that the test embedded in
 * model_io.h and prints each output element's bits as hexadecimal through
 * semihosting ("y[3] = 0x3e1a2b3c"), for the host to compare with `onnxc run`.
 * It runs the model a second time and checks that the bits repeat (the static
 * arena must leave nothing behind that changes a later run). No printf: the
 * numbers are formatted here, so nothing of stdio is linked. */
#include <stdint.h>
#include <string.h>

#include "model_io.h" /* MODEL_RUN, IN_COUNT, OUT_COUNT, input_bits[] */
#include "startup.h"

static float in[IN_COUNT], out[OUT_COUNT], again[OUT_COUNT];

/* appends v in decimal (unsigned) or as 8 hex digits; returns the new end */
static char *put_dec(char *p, uint32_t v) {
  char tmp[10];
  int n = 0;
  do tmp[n++] = (char)('0' + v % 10u); while ((v /= 10u) != 0);
  while (n) *p++ = tmp[--n];
  return p;
}

static char *put_hex(char *p, uint32_t v) {
  static const char digits[] = "0123456789abcdef";
  *p++ = '0';
  *p++ = 'x';
  for (int s = 28; s >= 0; s -= 4) *p++ = digits[(v >> s) & 0xFu];
  return p;
}

int main(void) {
  memcpy(in, input_bits, sizeof in); /* the input in RAM, as a sensor buffer would be */
  if (MODEL_RUN(in, out) != 0) {
    semihost_write0("cortexm: the model returned an error\n");
    return 1;
  }
  if (MODEL_RUN(in, again) != 0 || memcmp(out, again, sizeof out) != 0) {
    semihost_write0("cortexm: a second run gave other bits\n");
    return 1;
  }
  for (uint32_t i = 0; i < OUT_COUNT; i++) {
    char line[40], *p = line;
    uint32_t bits;
    memcpy(&bits, &out[i], sizeof bits);
    *p++ = 'y';
    *p++ = '[';
    p = put_dec(p, i);
    memcpy(p, "] = ", 4);
    p = put_hex(p + 4, bits);
    *p++ = '\n';
    *p = 0;
    semihost_write0(line);
  }
  {
    char line[40], *p = line;
    memcpy(p, "stack peak: ", 12);
    p = put_dec(p + 12, stack_peak_bytes());
    memcpy(p, " bytes\n", 8);
    semihost_write0(line);
  }
  semihost_write0("cortexm: done\n");
  return 0;
}
