/* file.c - mapping and reading whole files (POSIX). */
#define _POSIX_C_SOURCE 200809L
#define _DEFAULT_SOURCE /* madvise */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base.h"

int ox_file_map_open(ox_file_map *m, const char *path, ox_err *e) {
  memset(m, 0, sizeof *m);
  int fd = open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) return ox_err_set(e, OX_EIO, "%s: %s", path, strerror(errno));
  struct stat st;
  if (fstat(fd, &st) != 0) {
    int en = errno;
    close(fd);
    return ox_err_set(e, OX_EIO, "%s: %s", path, strerror(en));
  }
  if (!S_ISREG(st.st_mode)) {
    close(fd);
    return ox_err_set(e, OX_EIO, "%s: not a regular file", path);
  }
  if (st.st_size == 0) {
    close(fd);
    static const uint8_t empty[1] = {0};
    m->data = empty;
    return OX_OK;
  }
  if ((uint64_t)st.st_size > SIZE_MAX) {
    close(fd);
    return ox_err_set(e, OX_EIO, "%s: file too large to map", path);
  }
  void *p = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
  int en = errno;
  close(fd);
  if (p == MAP_FAILED) return ox_err_set(e, OX_EIO, "%s: mmap failed: %s", path, strerror(en));
  m->data = p;
  m->size = m->map_size = (size_t)st.st_size;
  return OX_OK;
}

void ox_file_map_close(ox_file_map *m) {
  if (m->map_size) munmap((void *)m->data, m->map_size);
  memset(m, 0, sizeof *m);
}

int ox_file_read_all(const char *path, uint8_t **data, size_t *size, ox_err *e) {
  *data = NULL;
  *size = 0;
  FILE *f = strcmp(path, "-") == 0 ? stdin : fopen(path, "rb");
  if (!f) return ox_err_set(e, OX_EIO, "%s: %s", path, strerror(errno));
  ox_buf b = {0};
  char tmp[65536];
  size_t n;
  while ((n = fread(tmp, 1, sizeof tmp, f)) > 0) ox_buf_append(&b, tmp, n);
  int bad = ferror(f);
  if (f != stdin) fclose(f);
  if (bad) {
    ox_buf_free(&b);
    return ox_err_set(e, OX_EIO, "%s: read error", path);
  }
  if (b.failed) {
    ox_buf_free(&b);
    return ox_err_set(e, OX_ENOMEM, "%s: out of memory", path);
  }
  if (!b.data) b.data = malloc(1);
  if (!b.data) return ox_err_set(e, OX_ENOMEM, "%s: out of memory", path);
  *data = b.data;
  *size = b.size;
  return OX_OK;
}

int ox_file_write_all(const char *path, const void *data, size_t size, ox_err *e) {
  FILE *f = strcmp(path, "-") == 0 ? stdout : fopen(path, "wb");
  if (!f) return ox_err_set(e, OX_EIO, "%s: %s", path, strerror(errno));
  size_t w = size ? fwrite(data, 1, size, f) : 0;
  int bad = w != size || fflush(f) != 0;
  if (f != stdout && fclose(f) != 0) bad = 1;
  if (bad) return ox_err_set(e, OX_EIO, "%s: write error", path);
  return OX_OK;
}

bool ox_path_is_dir(const char *path) {
  struct stat st;
  return path && stat(path, &st) == 0 && S_ISDIR(st.st_mode);
}

bool ox_path_is_file(const char *path) {
  struct stat st;
  return path && stat(path, &st) == 0 && S_ISREG(st.st_mode);
}

void ox_pages_unneeded(const void *p, size_t n) {
#if defined(MADV_PAGEOUT)
  long ps = sysconf(_SC_PAGESIZE);
  if (ps <= 0 || !p) return;
  uintptr_t a = ((uintptr_t)p + (uintptr_t)ps - 1) / (uintptr_t)ps * (uintptr_t)ps;
  uintptr_t b = ((uintptr_t)p + n) / (uintptr_t)ps * (uintptr_t)ps;
  if (b > a) (void)madvise((void *)a, b - a, MADV_PAGEOUT);
#else
  (void)p;
  (void)n;
#endif
}
