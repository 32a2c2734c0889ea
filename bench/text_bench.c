/* text_bench.c - speed of the text printer and parser on a real model with
 * its weights printed inline.
 * usage: text_bench MODEL.onnx [REPEAT [MIN_MB_PER_S]]
 * Prints the text size and the best-of-REPEAT MB/s of print and parse (MB of
 * text per second of CPU time: both are single-threaded). With MIN_MB_PER_S,
 * exits 1 if either is slower. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "proto/proto.h"
#include "text/text.h"

/* CPU time of this (single) thread: the machine may be shared */
static double now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

int main(int argc, char **argv) {
  if (argc < 2) {
    fprintf(stderr, "usage: text_bench MODEL.onnx [REPEAT [MIN_MB_PER_S]]\n");
    return 2;
  }
  int repeat = argc > 2 ? atoi(argv[2]) : 3;
  double min_rate = argc > 3 ? atof(argv[3]) : 0;
  if (repeat < 1) repeat = 1;
  ox_err e = {0};
  ox_model *m = NULL;
  if (ox_model_load_file(argv[1], NULL, &m, &e) != OX_OK) {
    fprintf(stderr, "text_bench: %s\n", e.msg);
    return 1;
  }
  double best_print = 1e30, best_parse = 1e30;
  size_t text_size = 0;
  int rc = 0;
  for (int r = 0; r < repeat && !rc; r++) {
    ox_buf b = {0};
    double t0 = now();
    if (ox_text_print_model(m->proto, &b, &e) != OX_OK) {
      fprintf(stderr, "text_bench: print: %s\n", e.msg);
      rc = 1;
    }
    double t1 = now();
    ox_arena *a = ox_arena_new();
    ox_model_proto *p = NULL;
    if (!rc && ox_text_parse_model((const char *)b.data, b.size, argv[1], a, &p, &e) != OX_OK) {
      fprintf(stderr, "text_bench: parse: %s\n", e.msg);
      rc = 1;
    }
    double t2 = now();
    if (t1 - t0 < best_print) best_print = t1 - t0;
    if (t2 - t1 < best_parse) best_parse = t2 - t1;
    text_size = b.size;
    ox_arena_free(a);
    ox_buf_free(&b);
  }
  ox_model_free(m);
  if (rc) return rc;
  double mb = (double)text_size / 1e6;
  printf("text: %.1f MB; print %.3f s (%.0f MB/s); parse %.3f s (%.0f MB/s)\n", mb, best_print,
         mb / best_print, best_parse, mb / best_parse);
  if (min_rate > 0 && (mb / best_print < min_rate || mb / best_parse < min_rate)) {
    fprintf(stderr, "text_bench: slower than %.0f MB/s\n", min_rate);
    return 1;
  }
  return 0;
}
