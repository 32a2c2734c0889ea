/* cmd_batch.c - `onnxc batch LIST OUTDIR`: many onnxc commands, one start.
 *
 * Each line of LIST is one onnxc command line without the leading `onnxc`,
 * its arguments separated by tabs (so that paths may hold spaces). Each runs
 * in a child forked from this process, with its standard output and error
 * sent to OUTDIR/N.out and OUTDIR/N.err (N counts the non-empty lines from
 * 0), and the parent prints `N STATUS` for it: the exit status, or `sigS`
 * when the child was killed by signal S. A child is the same code as a
 * separate `onnxc` process (its own copy of memory, its own files and exit
 * status), less the start-up: onnxc links about 78 shared libraries (the
 * server's gRPC, TLS and HTTP, the image codecs) and loading them costs more
 * CPU than converting or running a small model (0.07 s against a few ms),
 * which made test scripts that call onnxc thousands of times (the version
 * converter's oracle) mostly start-up. The children run one after another,
 * or --jobs N at a time. Exit 0 when every command exited 0, 1 otherwise,
 * 2 on a usage or I/O error. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cli.h"

static void usage(FILE *f) {
  fprintf(f,
          "usage: onnxc batch LIST OUTDIR [--jobs N]\n\n"
          "Runs each line of LIST as an onnxc command (arguments separated by tabs, no\n"
          "leading `onnxc`) in a child of this one process, its output and errors in\n"
          "OUTDIR/N.out and OUTDIR/N.err (N: the line's number among the non-empty ones\n"
          "from 0), and prints 'N STATUS' for each: its exit status, or sigS when signal\n"
          "S ended it. A test script's many calls then cost one start of onnxc.\n\n"
          "options:\n"
          "  --jobs N    run up to N commands at a time (default 1; then no line may\n"
          "              need another's output)\n"
          "  -h, --help  show this help\n");
}

/* Same as a child that ends: the sanitizers' exit handlers (leak check)
 * run as in a separate process; otherwise _exit() after flushing, as
 * `onnxc test`'s case children do (exit() would run every linked library's
 * destructors in each child for nothing). */
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define OX_BATCH_CLEAN_EXIT 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer) || \
    __has_feature(leak_sanitizer)
#define OX_BATCH_CLEAN_EXIT 1
#endif
#endif

static _Noreturn void child(char *line, size_t n, const char *outdir) {
  char path[4200];
  int ok = 1;
  for (int fd = 1; fd <= 2 && ok; fd++) {
    snprintf(path, sizeof path, "%s/%zu.%s", outdir, n, fd == 1 ? "out" : "err");
    int f = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (f < 0 || dup2(f, fd) < 0) ok = 0;
    if (f > 2) close(f);
  }
  if (!ok) _exit(2); /* the parent reports status 2: it cannot write there */
  /* split on tabs into an argv, argv[0] = "onnxc" as main() gives it */
  size_t cap = 2;
  for (char *c = line; *c; c++) cap += *c == '\t';
  char **argv = malloc((cap + 1) * sizeof *argv);
  if (!argv) _exit(2);
  int argc = 0;
  argv[argc++] = "onnxc";
  for (char *tok = line;;) {
    char *tab = strchr(tok, '\t');
    if (tab) *tab = 0;
    argv[argc++] = tok;
    if (!tab) break;
    tok = tab + 1;
  }
  argv[argc] = NULL;
  int rc = ox_cli_dispatch(argc, argv);
  fflush(stdout);
  fflush(stderr);
#ifdef OX_BATCH_CLEAN_EXIT
  free(argv);
  free(line);
  exit(rc);
#else
  _exit(rc);
#endif
}

typedef struct running {
  pid_t pid;
  size_t n;
} running;

/* waits for one child and prints its line; returns 1 when it failed */
static int reap(running *kids, int jobs, size_t *active) {
  int ws;
  pid_t pid;
  while ((pid = wait(&ws)) < 0 && errno == EINTR) {
  }
  if (pid < 0) { /* no child left to wait for: none is running */
    *active = 0;
    return 1;
  }
  for (int j = 0; j < jobs; j++)
    if (kids[j].pid == pid) {
      kids[j].pid = 0;
      (*active)--;
      if (WIFSIGNALED(ws)) {
        printf("%zu sig%d\n", kids[j].n, WTERMSIG(ws));
        fflush(stdout);
        return 1;
      }
      int st = WIFEXITED(ws) ? WEXITSTATUS(ws) : 2;
      printf("%zu %d\n", kids[j].n, st);
      fflush(stdout); /* a caller reading as it goes, or a crash later */
      return st != 0;
    }
  return 0;
}

int ox_cmd_batch(int argc, char **argv) {
  const char *list = NULL, *outdir = NULL;
  long jobs = 1;
  for (int i = 1; i < argc; i++) {
    const char *a = argv[i];
    if (ox_cli_is_help(a)) {
      usage(stdout);
      return 0;
    } else if (strcmp(a, "--jobs") == 0 && i + 1 < argc) {
      char *end;
      jobs = strtol(argv[++i], &end, 10);
      if (*end || jobs < 1 || jobs > 256) {
        fprintf(stderr, "onnxc batch: --jobs takes 1 to 256, not '%s'\n", argv[i]);
        return 2;
      }
    } else if (a[0] == '-' && a[1]) {
      fprintf(stderr, "onnxc batch: unknown option '%s' (see onnxc batch --help)\n", a);
      return 2;
    } else if (!list) {
      list = a;
    } else if (!outdir) {
      outdir = a;
    } else {
      usage(stderr);
      return 2;
    }
  }
  if (!list || !outdir) {
    usage(stderr);
    return 2;
  }
  FILE *f = strcmp(list, "-") == 0 ? stdin : fopen(list, "r");
  if (!f) {
    fprintf(stderr, "onnxc batch: cannot open %s: %s\n", list, strerror(errno));
    return 2;
  }
  running *kids = calloc((size_t)jobs, sizeof *kids);
  if (!kids) {
    fprintf(stderr, "onnxc batch: out of memory\n");
    if (f != stdin) fclose(f);
    return 2;
  }
  char *line = NULL;
  size_t cap = 0, n = 0, active = 0;
  int failed = 0, err = 0;
  ssize_t len;
  while ((len = getline(&line, &cap, f)) >= 0) {
    line[strcspn(line, "\r\n")] = 0;
    if (!*line) continue;
    if (active == (size_t)jobs) failed |= reap(kids, (int)jobs, &active);
    fflush(stdout); /* nothing buffered for the child to print again */
    fflush(stderr);
    pid_t pid = fork();
    if (pid < 0) {
      fprintf(stderr, "onnxc batch: fork: %s\n", strerror(errno));
      err = 1;
      break;
    }
    if (pid == 0) {
      if (f != stdin) fclose(f);
      free(kids);
      child(line, n, outdir);
    }
    for (long j = 0; j < jobs; j++)
      if (kids[j].pid == 0) {
        kids[j].pid = pid;
        kids[j].n = n;
        break;
      }
    active++;
    n++;
  }
  while (active > 0) failed |= reap(kids, (int)jobs, &active);
  free(line);
  free(kids);
  if (f != stdin) fclose(f);
  return err ? 2 : failed ? 1 : 0;
}
