/* image.c - ImageDecoder (opset 20).
 *
 * The format is recognised from the stream's first bytes: JPEG (libjpeg,
 * default "fancy" chroma upsampling and integer DCT), PNG (libpng), TIFF
 * (libtiff), WebP (libwebp), JPEG 2000 as JP2 or raw codestream (OpenJPEG),
 * and the two formats decoded here: BMP (1/4/8-bit palettes, 16/24/32-bit
 * with or without bit fields, RLE4/RLE8) and PNM (P1..P6). Each library is
 * optional (ONNXC_HAVE_<NAME> from cmake/deps.cmake); a format whose library
 * is missing is a clear error.
 *
 * A decoder yields 8-bit gray (1 channel) or RGB (3 channels); alpha is
 * dropped and 16-bit samples keep their high byte. The requested
 * pixel_format is then produced: gray replicated to RGB, RGB reversed for
 * BGR, and RGB to gray with the ITU-R 601-2 luma weights in 16.16 fixed
 * point, L = (19595 R + 38470 G + 7471 B + 32768) >> 16, the conversion the
 * reference decodes were made with. A stream that cannot be decoded
 * (unknown format, truncated or corrupt data) is an error naming the node
 * and the reason; no library message goes to stderr. */
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../opcore.h"

#ifdef ONNXC_HAVE_JPEG
#include <jpeglib.h>
#endif
#ifdef ONNXC_HAVE_PNG
#include <png.h>
#endif
#ifdef ONNXC_HAVE_TIFF
#include <tiffio.h>
#endif
#ifdef ONNXC_HAVE_WEBP
#include <webp/decode.h>
#endif
#ifdef ONNXC_HAVE_OPENJP2
#include <openjpeg.h>
#endif

/* Largest image accepted (pixels): keeps buffers well inside size_t. */
#define IMG_MAX_PIXELS ((uint64_t)1 << 28)

typedef struct img {
  uint32_t w, h;
  int c;       /* 1 (gray) or 3 (RGB) */
  uint8_t *px; /* h * w * c, row-major, malloc'd */
  char err[200];
  bool unavailable; /* the format's library is not in this build */
} img;

static int img_fail(img *im, const char *msg) {
  snprintf(im->err, sizeof im->err, "%s", msg);
  return -1;
}

/* Allocates im->px for w x h x c; fails on zero or too large sizes. */
static int img_alloc(img *im, uint64_t w, uint64_t h, int c) {
  if (w == 0 || h == 0) return img_fail(im, "the image has no pixels");
  if (w > IMG_MAX_PIXELS || h > IMG_MAX_PIXELS || w * h > IMG_MAX_PIXELS)
    return img_fail(im, "the image is too large");
  im->w = (uint32_t)w;
  im->h = (uint32_t)h;
  im->c = c;
  im->px = malloc((size_t)(w * h * (uint64_t)c));
  if (!im->px) return img_fail(im, "out of memory");
  return 0;
}

static uint8_t luma(uint32_t r, uint32_t g, uint32_t b) {
  return (uint8_t)((r * 19595u + g * 38470u + b * 7471u + 32768u) >> 16);
}

/* ------------------------------------------------------------------ */
/* BMP                                                                  */

static uint32_t rd16(const uint8_t *p) { return (uint32_t)p[0] | (uint32_t)p[1] << 8; }
static uint32_t rd32(const uint8_t *p) { return rd16(p) | rd16(p + 2) << 16; }

typedef struct bmp_field {
  uint32_t mask;
  int shift, bits;
} bmp_field;

static bmp_field bmp_mask(uint32_t m) {
  bmp_field f = {m, 0, 0};
  if (!m) return f;
  while (!((m >> f.shift) & 1)) f.shift++;
  while (f.shift + f.bits < 32 && ((m >> (f.shift + f.bits)) & 1)) f.bits++;
  return f;
}

/* Field value scaled to 8 bits by bit replication (top 8 bits if wider). */
static uint8_t bmp_get(bmp_field f, uint32_t px) {
  if (!f.bits) return 0;
  uint32_t v = (px & f.mask) >> f.shift;
  if (f.bits >= 8) return (uint8_t)(v >> (f.bits - 8));
  uint32_t out = 0;
  int have = 0;
  while (have < 8) {
    out = (out << f.bits) | v;
    have += f.bits;
  }
  return (uint8_t)(out >> (have - 8));
}

static int dec_bmp(const uint8_t *d, size_t n, img *im) {
  if (n < 26) return img_fail(im, "BMP: truncated header");
  uint32_t off = rd32(d + 10), hs = rd32(d + 14);
  int64_t w, h;
  uint32_t bpp, comp = 0, nclr = 0;
  int pal_entry = 4;
  if (hs == 12) {
    w = (int64_t)rd16(d + 18);
    h = (int64_t)rd16(d + 20);
    bpp = rd16(d + 24);
    pal_entry = 3;
  } else if (hs >= 40 && hs <= n - 14) {
    w = (int32_t)rd32(d + 18);
    h = (int32_t)rd32(d + 22);
    bpp = rd16(d + 28);
    comp = rd32(d + 30);
    nclr = rd32(d + 46);
  } else {
    return img_fail(im, "BMP: unsupported or truncated info header");
  }
  bool top_down = h < 0;
  if (top_down) h = -h;
  if (w <= 0 || h <= 0) return img_fail(im, "BMP: bad dimensions");
  if (comp != 0 && comp != 1 && comp != 2 && comp != 3 && comp != 6)
    return img_fail(im, "BMP: unsupported compression");
  if ((comp == 1 && bpp != 8) || (comp == 2 && bpp != 4) ||
      ((comp == 3 || comp == 6) && bpp != 16 && bpp != 32))
    return img_fail(im, "BMP: compression does not fit the bit depth");
  if (top_down && (comp == 1 || comp == 2)) return img_fail(im, "BMP: top-down RLE image");
  /* bit fields: default masks, or after a 40-byte header, or inside V2+ */
  bmp_field rf, gf, bf;
  if (bpp == 16) {
    rf = bmp_mask(0x7C00), gf = bmp_mask(0x03E0), bf = bmp_mask(0x001F);
  } else {
    rf = bmp_mask(0xFF0000), gf = bmp_mask(0xFF00), bf = bmp_mask(0xFF);
  }
  size_t pal_at = 14 + hs;
  if (comp == 3 || comp == 6) {
    size_t mat = 14 + 40;
    if (mat + 12 > n) return img_fail(im, "BMP: truncated bit fields");
    rf = bmp_mask(rd32(d + mat));
    gf = bmp_mask(rd32(d + mat + 4));
    bf = bmp_mask(rd32(d + mat + 8));
    if (hs == 40) pal_at += comp == 6 ? 16 : 12;
  }
  uint8_t pal[256][3];
  memset(pal, 0, sizeof pal);
  uint32_t npal = 0;
  if (bpp <= 8) {
    if (bpp != 1 && bpp != 2 && bpp != 4 && bpp != 8) return img_fail(im, "BMP: bad bit depth");
    npal = nclr ? nclr : 1u << bpp;
    if (npal > 256) return img_fail(im, "BMP: palette too large");
    if (pal_at + (size_t)npal * (size_t)pal_entry > n)
      return img_fail(im, "BMP: truncated palette");
    for (uint32_t i = 0; i < npal; i++) {
      const uint8_t *p = d + pal_at + (size_t)i * (size_t)pal_entry;
      pal[i][0] = p[2], pal[i][1] = p[1], pal[i][2] = p[0];
    }
  } else if (bpp != 16 && bpp != 24 && bpp != 32) {
    return img_fail(im, "BMP: bad bit depth");
  }
  if (off >= n) return img_fail(im, "BMP: pixel data offset beyond the stream");
  if (img_alloc(im, (uint64_t)w, (uint64_t)h, 3)) return -1;
  const uint8_t *src = d + off;
  size_t avail = n - off;
  size_t W = (size_t)w, H = (size_t)h;
  if (comp == 1 || comp == 2) {
    /* RLE: absent pixels are palette entry 0 */
    uint8_t *idx = calloc(W * H, 1);
    if (!idx) return img_fail(im, "out of memory");
    size_t x = 0, y = 0, i = 0;
    bool done = false;
    while (!done && i + 1 < avail) {
      uint8_t a = src[i], b = src[i + 1];
      i += 2;
      if (a) { /* run of a pixels */
        for (uint32_t k = 0; k < a && x < W && y < H; k++, x++)
          idx[y * W + x] = comp == 1 ? b : (uint8_t)((k & 1) ? (b & 15) : (b >> 4));
      } else if (b == 0) { /* end of line */
        x = 0;
        y++;
      } else if (b == 1) { /* end of bitmap */
        done = true;
      } else if (b == 2) { /* delta */
        if (i + 1 >= avail) break;
        x += src[i];
        y += src[i + 1];
        i += 2;
      } else { /* absolute run of b pixels, padded to 16 bits */
        size_t bytes = comp == 1 ? b : ((size_t)b + 1) / 2;
        if (i + bytes > avail) break;
        for (uint32_t k = 0; k < b; k++, x++) {
          uint8_t v = comp == 1
                          ? src[i + k]
                          : (uint8_t)((k & 1) ? (src[i + k / 2] & 15) : (src[i + k / 2] >> 4));
          if (x < W && y < H) idx[y * W + x] = v;
        }
        i += (bytes + 1) & ~(size_t)1;
      }
    }
    if (!done) {
      free(idx);
      return img_fail(im, "BMP: truncated RLE data");
    }
    for (size_t r = 0; r < H; r++)
      for (size_t c = 0; c < W; c++) {
        const uint8_t *p = pal[idx[r * W + c]];
        memcpy(im->px + ((H - 1 - r) * W + c) * 3, p, 3);
      }
    free(idx);
    return 0;
  }
  size_t stride = ((W * bpp + 31) / 32) * 4;
  if (stride * H > avail) return img_fail(im, "BMP: truncated pixel data");
  for (size_t r = 0; r < H; r++) {
    const uint8_t *row = src + r * stride;
    uint8_t *o = im->px + (top_down ? r : H - 1 - r) * W * 3;
    for (size_t c = 0; c < W; c++, o += 3) {
      if (bpp <= 8) {
        size_t bit = c * bpp;
        uint32_t v = (row[bit / 8] >> (8 - bpp - (bit % 8))) & ((1u << bpp) - 1);
        if (v >= npal) v = 0;
        memcpy(o, pal[v], 3);
      } else if (bpp == 24) {
        o[0] = row[3 * c + 2], o[1] = row[3 * c + 1], o[2] = row[3 * c];
      } else {
        uint32_t px = bpp == 16 ? rd16(row + 2 * c) : rd32(row + 4 * c);
        o[0] = bmp_get(rf, px), o[1] = bmp_get(gf, px), o[2] = bmp_get(bf, px);
      }
    }
  }
  return 0;
}

/* ------------------------------------------------------------------ */
/* PNM                                                                  */

/* Next unsigned decimal token (after whitespace and # comments). */
static int pnm_uint(const uint8_t *d, size_t n, size_t *i, uint32_t *out) {
  for (;;) {
    while (*i < n && (d[*i] == ' ' || d[*i] == '\t' || d[*i] == '\n' || d[*i] == '\r' ||
                      d[*i] == '\v' || d[*i] == '\f'))
      (*i)++;
    if (*i < n && d[*i] == '#') {
      while (*i < n && d[*i] != '\n') (*i)++;
      continue;
    }
    break;
  }
  if (*i >= n || d[*i] < '0' || d[*i] > '9') return -1;
  uint64_t v = 0;
  while (*i < n && d[*i] >= '0' && d[*i] <= '9') {
    v = v * 10 + (uint64_t)(d[*i] - '0');
    if (v > 0xFFFFFFFFu) return -1;
    (*i)++;
  }
  *out = (uint32_t)v;
  return 0;
}

static int dec_pnm(const uint8_t *d, size_t n, img *im) {
  int kind = d[1] - '0';
  size_t i = 2;
  uint32_t w, h, maxv = 1;
  if (pnm_uint(d, n, &i, &w) || pnm_uint(d, n, &i, &h)) return img_fail(im, "PNM: bad header");
  bool bits = kind == 1 || kind == 4;
  if (!bits && pnm_uint(d, n, &i, &maxv)) return img_fail(im, "PNM: bad header");
  if (maxv == 0 || maxv > 65535) return img_fail(im, "PNM: bad maximum value");
  int c = (kind == 3 || kind == 6) ? 3 : 1;
  if (img_alloc(im, w, h, c)) return -1;
  size_t count = (size_t)w * h * (size_t)c;
  if (kind >= 4) {
    if (i >= n) return img_fail(im, "PNM: truncated pixel data");
    i++; /* the single whitespace after the header */
    if (kind == 4) {
      size_t stride = ((size_t)w + 7) / 8;
      if (stride * h > n - i) return img_fail(im, "PNM: truncated pixel data");
      for (size_t y = 0; y < h; y++)
        for (size_t x = 0; x < w; x++)
          im->px[y * w + x] = ((d[i + y * stride + x / 8] >> (7 - x % 8)) & 1) ? 0 : 255;
      return 0;
    }
    size_t bps = maxv > 255 ? 2 : 1;
    if (count > (n - i) / bps) return img_fail(im, "PNM: truncated pixel data");
    for (size_t k = 0; k < count; k++) {
      uint32_t v = bps == 2 ? ((uint32_t)d[i + 2 * k] << 8 | d[i + 2 * k + 1]) : d[i + k];
      if (v > maxv) v = maxv;
      im->px[k] = maxv == 255 ? (uint8_t)v : (uint8_t)((v * 255u + maxv / 2) / maxv);
    }
    return 0;
  }
  for (size_t k = 0; k < count; k++) {
    uint32_t v;
    if (kind == 1) { /* digits may be unseparated */
      while (i < n && d[i] != '0' && d[i] != '1') {
        if (d[i] == '#')
          while (i < n && d[i] != '\n') i++;
        else if (d[i] == ' ' || d[i] == '\t' || d[i] == '\n' || d[i] == '\r')
          i++;
        else
          return img_fail(im, "PNM: bad pixel data");
      }
      if (i >= n) return img_fail(im, "PNM: truncated pixel data");
      im->px[k] = d[i++] == '1' ? 0 : 255;
      continue;
    }
    if (pnm_uint(d, n, &i, &v)) return img_fail(im, "PNM: bad or truncated pixel data");
    if (v > maxv) v = maxv;
    im->px[k] = maxv == 255 ? (uint8_t)v : (uint8_t)((v * 255u + maxv / 2) / maxv);
  }
  return 0;
}

/* ------------------------------------------------------------------ */
/* JPEG                                                                 */

#ifdef ONNXC_HAVE_JPEG
typedef struct jdec {
  struct jpeg_decompress_struct cinfo;
  struct jpeg_error_mgr mgr;
  jmp_buf jb;
  img *im;
  uint8_t *row;
} jdec;

static void jpeg_on_error(j_common_ptr c) {
  jdec *j = (jdec *)c->client_data;
  char msg[JMSG_LENGTH_MAX];
  c->err->format_message(c, msg);
  snprintf(j->im->err, sizeof j->im->err, "JPEG: %.180s", msg);
  longjmp(j->jb, 1);
}
static void jpeg_on_message(j_common_ptr c) { (void)c; }

/* All state lives in *j (the caller's frame), so nothing local to this
 * function is modified between setjmp and longjmp. */
static int jpeg_try(jdec *j, const uint8_t *d, size_t n) {
  if (setjmp(j->jb)) return -1;
  jpeg_create_decompress(&j->cinfo);
  jpeg_mem_src(&j->cinfo, d, (unsigned long)n);
  jpeg_read_header(&j->cinfo, TRUE);
  if ((uint64_t)j->cinfo.image_width * j->cinfo.image_height > IMG_MAX_PIXELS)
    return img_fail(j->im, "JPEG: the image is too large");
  J_COLOR_SPACE cs = j->cinfo.jpeg_color_space;
  int c;
  if (cs == JCS_GRAYSCALE) {
    j->cinfo.out_color_space = JCS_GRAYSCALE, c = 1;
  } else if (cs == JCS_CMYK || cs == JCS_YCCK) {
    j->cinfo.out_color_space = JCS_CMYK, c = 4;
  } else {
    j->cinfo.out_color_space = JCS_RGB, c = 3;
  }
  jpeg_start_decompress(&j->cinfo);
  if (img_alloc(j->im, j->cinfo.output_width, j->cinfo.output_height, c == 1 ? 1 : 3)) return -1;
  if (c == 4) {
    j->row = malloc((size_t)j->cinfo.output_width * 4);
    if (!j->row) return img_fail(j->im, "out of memory");
  }
  size_t W = j->im->w;
  while (j->cinfo.output_scanline < j->cinfo.output_height) {
    size_t y = j->cinfo.output_scanline;
    JSAMPROW rp = c == 4 ? j->row : j->im->px + y * W * (size_t)j->im->c;
    jpeg_read_scanlines(&j->cinfo, &rp, 1);
    if (c == 4) /* Adobe CMYK is stored inverted: R = C' K' / 255 */
      for (size_t x = 0; x < W; x++) {
        const uint8_t *q = j->row + 4 * x;
        uint8_t *o = j->im->px + (y * W + x) * 3;
        for (int k = 0; k < 3; k++) o[k] = (uint8_t)((q[k] * q[3] + 127) / 255);
      }
  }
  jpeg_finish_decompress(&j->cinfo);
  return 0;
}

static int dec_jpeg(const uint8_t *d, size_t n, img *im) {
  jdec *j = calloc(1, sizeof *j);
  if (!j) return img_fail(im, "out of memory");
  j->im = im;
  j->cinfo.err = jpeg_std_error(&j->mgr);
  j->mgr.error_exit = jpeg_on_error;
  j->mgr.output_message = jpeg_on_message;
  j->cinfo.client_data = j;
  int rc = jpeg_try(j, d, n);
  jpeg_destroy_decompress(&j->cinfo);
  free(j->row);
  free(j);
  return rc;
}
#endif

/* ------------------------------------------------------------------ */
/* PNG                                                                  */

#ifdef ONNXC_HAVE_PNG
typedef struct pdec {
  png_structp png;
  png_infop info;
  const uint8_t *d;
  size_t n, at;
  img *im;
  uint8_t *buf;
  png_bytep *rows;
} pdec;

static void png_on_error(png_structp p, png_const_charp msg) {
  pdec *j = png_get_error_ptr(p);
  snprintf(j->im->err, sizeof j->im->err, "PNG: %.180s", msg);
  png_longjmp(p, 1);
}
static void png_on_warning(png_structp p, png_const_charp msg) {
  (void)p;
  (void)msg;
}
static void png_on_read(png_structp p, png_bytep out, size_t len) {
  pdec *j = png_get_io_ptr(p);
  if (len > j->n - j->at) png_error(p, "truncated stream");
  memcpy(out, j->d + j->at, len);
  j->at += len;
}

static int png_try(pdec *j) {
  if (setjmp(png_jmpbuf(j->png))) return -1;
  png_set_read_fn(j->png, j, png_on_read);
  png_read_info(j->png, j->info);
  png_uint_32 w = png_get_image_width(j->png, j->info), h = png_get_image_height(j->png, j->info);
  int ct = png_get_color_type(j->png, j->info);
  png_set_expand(j->png); /* palette -> RGB, gray < 8 bits -> 8, tRNS -> alpha */
  png_set_strip_16(j->png);
  png_set_strip_alpha(j->png);
  png_set_interlace_handling(j->png);
  png_read_update_info(j->png, j->info);
  int ch = png_get_channels(j->png, j->info);
  if (ch != 1 && ch != 3) png_error(j->png, "unexpected channel count");
  (void)ct;
  if (img_alloc(j->im, w, h, ch)) return -1;
  j->rows = malloc((size_t)h * sizeof *j->rows);
  if (!j->rows) return img_fail(j->im, "out of memory");
  for (size_t y = 0; y < h; y++) j->rows[y] = j->im->px + y * (size_t)w * (size_t)ch;
  png_read_image(j->png, j->rows);
  png_read_end(j->png, NULL);
  return 0;
}

static int dec_png(const uint8_t *d, size_t n, img *im) {
  pdec *j = calloc(1, sizeof *j);
  if (!j) return img_fail(im, "out of memory");
  j->d = d, j->n = n, j->im = im;
  j->png = png_create_read_struct(PNG_LIBPNG_VER_STRING, j, png_on_error, png_on_warning);
  j->info = j->png ? png_create_info_struct(j->png) : NULL;
  int rc = j->info ? png_try(j) : img_fail(im, "out of memory");
  png_destroy_read_struct(j->png ? &j->png : NULL, j->info ? &j->info : NULL, NULL);
  free(j->rows);
  free(j);
  return rc;
}
#endif

/* ------------------------------------------------------------------ */
/* TIFF                                                                 */

#ifdef ONNXC_HAVE_TIFF
typedef struct tmem {
  const uint8_t *d;
  uint64_t n, at;
  img *im;
} tmem;

static tmsize_t tif_read(thandle_t h, void *buf, tmsize_t size) {
  tmem *m = (tmem *)h;
  if (size <= 0) return 0;
  uint64_t left = m->at < m->n ? m->n - m->at : 0;
  uint64_t k = (uint64_t)size < left ? (uint64_t)size : left;
  memcpy(buf, m->d + m->at, (size_t)k);
  m->at += k;
  return (tmsize_t)k;
}
static tmsize_t tif_write(thandle_t h, void *buf, tmsize_t size) {
  (void)h;
  (void)buf;
  (void)size;
  return -1;
}
static toff_t tif_seek(thandle_t h, toff_t off, int whence) {
  tmem *m = (tmem *)h;
  uint64_t base = whence == SEEK_CUR ? m->at : whence == SEEK_END ? m->n : 0;
  m->at = base + off;
  return m->at;
}
static int tif_close(thandle_t h) {
  (void)h;
  return 0;
}
static toff_t tif_size(thandle_t h) { return ((tmem *)h)->n; }
static int tif_map(thandle_t h, void **base, toff_t *size) {
  tmem *m = (tmem *)h;
  *base = (void *)(uintptr_t)m->d;
  *size = m->n;
  return 1;
}
static void tif_unmap(thandle_t h, void *base, toff_t size) {
  (void)h;
  (void)base;
  (void)size;
}
static int tif_on_error(TIFF *t, void *user, const char *module, const char *fmt, va_list ap) {
  (void)t;
  (void)module;
  tmem *m = user;
  if (m && !m->im->err[0]) {
    char msg[160];
    vsnprintf(msg, sizeof msg, fmt, ap);
    snprintf(m->im->err, sizeof m->im->err, "TIFF: %.180s", msg);
  }
  return 1;
}
static int tif_on_warning(TIFF *t, void *user, const char *module, const char *fmt, va_list ap) {
  (void)t;
  (void)user;
  (void)module;
  (void)fmt;
  (void)ap;
  return 1;
}

static int dec_tiff(const uint8_t *d, size_t n, img *im) {
  tmem m = {d, n, 0, im};
  TIFFOpenOptions *o = TIFFOpenOptionsAlloc();
  if (!o) return img_fail(im, "out of memory");
  TIFFOpenOptionsSetErrorHandlerExtR(o, tif_on_error, &m);
  TIFFOpenOptionsSetWarningHandlerExtR(o, tif_on_warning, &m);
  TIFFOpenOptionsSetMaxSingleMemAlloc(o, (tmsize_t)IMG_MAX_PIXELS * 4);
  TIFF *t = TIFFClientOpenExt("stream", "rm", (thandle_t)&m, tif_read, tif_write, tif_seek,
                              tif_close, tif_size, tif_map, tif_unmap, o);
  TIFFOpenOptionsFree(o);
  if (!t) return im->err[0] ? -1 : img_fail(im, "TIFF: cannot open the stream");
  uint32_t w = 0, h = 0;
  int rc = -1;
  uint32_t *raster = NULL;
  if (!TIFFGetField(t, TIFFTAG_IMAGEWIDTH, &w) || !TIFFGetField(t, TIFFTAG_IMAGELENGTH, &h)) {
    img_fail(im, "TIFF: missing image size");
  } else if (img_alloc(im, w, h, 3) == 0) {
    raster = malloc((size_t)w * h * sizeof *raster);
    if (!raster) {
      img_fail(im, "out of memory");
    } else if (!TIFFReadRGBAImageOriented(t, w, h, raster, ORIENTATION_TOPLEFT, 0)) {
      if (!im->err[0]) img_fail(im, "TIFF: cannot decode the image");
    } else {
      for (size_t k = 0; k < (size_t)w * h; k++) {
        im->px[3 * k] = (uint8_t)TIFFGetR(raster[k]);
        im->px[3 * k + 1] = (uint8_t)TIFFGetG(raster[k]);
        im->px[3 * k + 2] = (uint8_t)TIFFGetB(raster[k]);
      }
      rc = 0;
    }
  }
  free(raster);
  TIFFClose(t);
  return rc;
}
#endif

/* ------------------------------------------------------------------ */
/* WebP                                                                 */

#ifdef ONNXC_HAVE_WEBP
static int dec_webp(const uint8_t *d, size_t n, img *im) {
  int w, h;
  if (!WebPGetInfo(d, n, &w, &h)) return img_fail(im, "WebP: bad header");
  if (img_alloc(im, (uint64_t)w, (uint64_t)h, 3)) return -1;
  size_t stride = (size_t)w * 3;
  if (!WebPDecodeRGBInto(d, n, im->px, stride * (size_t)h, (int)stride))
    return img_fail(im, "WebP: cannot decode the image");
  return 0;
}
#endif

/* ------------------------------------------------------------------ */
/* JPEG 2000                                                            */

#ifdef ONNXC_HAVE_OPENJP2
typedef struct jmem {
  const uint8_t *d;
  uint64_t n, at;
  img *im;
} jmem;

static OPJ_SIZE_T j2k_read(void *buf, OPJ_SIZE_T size, void *user) {
  jmem *m = user;
  if (m->at >= m->n) return (OPJ_SIZE_T)-1;
  uint64_t k = m->n - m->at < size ? m->n - m->at : size;
  memcpy(buf, m->d + m->at, (size_t)k);
  m->at += k;
  return (OPJ_SIZE_T)k;
}
static OPJ_OFF_T j2k_skip(OPJ_OFF_T off, void *user) {
  jmem *m = user;
  if (off < 0 && (uint64_t)(-off) > m->at) off = -(OPJ_OFF_T)m->at;
  m->at += (uint64_t)off;
  return off;
}
static OPJ_BOOL j2k_seek(OPJ_OFF_T off, void *user) {
  jmem *m = user;
  if (off < 0 || (uint64_t)off > m->n) return OPJ_FALSE;
  m->at = (uint64_t)off;
  return OPJ_TRUE;
}
static void j2k_on_error(const char *msg, void *user) {
  jmem *m = user;
  if (!m->im->err[0]) {
    snprintf(m->im->err, sizeof m->im->err, "JPEG 2000: %.180s", msg);
    size_t l = strlen(m->im->err);
    if (l && m->im->err[l - 1] == '\n') m->im->err[l - 1] = 0;
  }
}
static void j2k_quiet(const char *msg, void *user) {
  (void)msg;
  (void)user;
}

/* Sample of component c at output pixel (x, y), scaled to 8 bits. */
static int j2k_sample(const opj_image_comp_t *c, uint32_t x, uint32_t y, uint32_t x0, uint32_t y0) {
  uint32_t cx = (x + x0 + c->dx - 1) / c->dx - c->x0, cy = (y + y0 + c->dy - 1) / c->dy - c->y0;
  if (cx >= c->w) cx = c->w - 1;
  if (cy >= c->h) cy = c->h - 1;
  int v = c->data[(size_t)cy * c->w + cx];
  if (c->sgnd) v += 1 << (c->prec - 1);
  if (c->prec > 8)
    v >>= (c->prec - 8);
  else if (c->prec < 8)
    v = (v * 255 + ((1 << c->prec) - 1) / 2) / ((1 << c->prec) - 1);
  return v < 0 ? 0 : v > 255 ? 255 : v;
}

static int dec_j2k(const uint8_t *d, size_t n, img *im, bool jp2) {
  jmem m = {d, n, 0, im};
  opj_codec_t *codec = opj_create_decompress(jp2 ? OPJ_CODEC_JP2 : OPJ_CODEC_J2K);
  opj_stream_t *st = opj_stream_create(1 << 16, OPJ_TRUE);
  opj_image_t *image = NULL;
  int rc = -1;
  if (!codec || !st) {
    img_fail(im, "out of memory");
    goto done;
  }
  opj_set_error_handler(codec, j2k_on_error, &m);
  opj_set_warning_handler(codec, j2k_quiet, &m);
  opj_set_info_handler(codec, j2k_quiet, &m);
  opj_stream_set_read_function(st, j2k_read);
  opj_stream_set_skip_function(st, j2k_skip);
  opj_stream_set_seek_function(st, j2k_seek);
  opj_stream_set_user_data(st, &m, NULL);
  opj_stream_set_user_data_length(st, (OPJ_UINT64)n);
  opj_dparameters_t par;
  opj_set_default_decoder_parameters(&par);
  if (!opj_setup_decoder(codec, &par) || !opj_read_header(st, codec, &image)) {
    if (!im->err[0]) img_fail(im, "JPEG 2000: cannot read the header");
    goto done;
  }
  /* refuse oversized images before the decoder allocates for them */
  if (image->x1 <= image->x0 || image->y1 <= image->y0 ||
      (uint64_t)(image->x1 - image->x0) * (image->y1 - image->y0) > IMG_MAX_PIXELS ||
      image->numcomps > 16) {
    img_fail(im, "JPEG 2000: the image is empty or too large");
    goto done;
  }
  if (!opj_decode(codec, st, image) || !opj_end_decompress(codec, st)) {
    if (!im->err[0]) img_fail(im, "JPEG 2000: cannot decode the image");
    goto done;
  }
  uint32_t nc = image->numcomps;
  if (nc < 1) {
    img_fail(im, "JPEG 2000: no components");
    goto done;
  }
  for (uint32_t k = 0; k < nc; k++) {
    const opj_image_comp_t *c = &image->comps[k];
    if (!c->data || c->dx == 0 || c->dy == 0 || c->w == 0 || c->h == 0 || c->prec < 1 ||
        c->prec > 31) {
      img_fail(im, "JPEG 2000: bad component");
      goto done;
    }
  }
  uint32_t x0 = image->x0, y0 = image->y0;
  if (image->x1 <= x0 || image->y1 <= y0) {
    img_fail(im, "JPEG 2000: empty image");
    goto done;
  }
  bool rgb = nc >= 3;
  if (img_alloc(im, image->x1 - x0, image->y1 - y0, rgb ? 3 : 1)) goto done;
  bool sycc = rgb && image->color_space == OPJ_CLRSPC_SYCC;
  for (uint32_t y = 0; y < im->h; y++)
    for (uint32_t x = 0; x < im->w; x++) {
      uint8_t *o = im->px + ((size_t)y * im->w + x) * (size_t)im->c;
      if (!rgb) {
        o[0] = (uint8_t)j2k_sample(&image->comps[0], x, y, x0, y0);
        continue;
      }
      int v[3];
      for (int k = 0; k < 3; k++) v[k] = j2k_sample(&image->comps[k], x, y, x0, y0);
      if (sycc) {
        double yy = v[0], cb = v[1] - 128.0, cr = v[2] - 128.0;
        double r = yy + 1.402 * cr, g = yy - 0.344136 * cb - 0.714136 * cr, b = yy + 1.772 * cb;
        v[0] = (int)(r < 0 ? 0 : r > 255 ? 255 : r + 0.5);
        v[1] = (int)(g < 0 ? 0 : g > 255 ? 255 : g + 0.5);
        v[2] = (int)(b < 0 ? 0 : b > 255 ? 255 : b + 0.5);
      }
      for (int k = 0; k < 3; k++) o[k] = (uint8_t)v[k];
    }
  rc = 0;
done:
  if (image) opj_image_destroy(image);
  if (st) opj_stream_destroy(st);
  if (codec) opj_destroy_codec(codec);
  return rc;
}
#endif

/* ------------------------------------------------------------------ */
/* Kernel                                                               */

enum { PF_RGB, PF_BGR, PF_GRAY };

typedef struct imgdec_state {
  int pf;
} imgdec_state;

static int imgdec_prepare(const ox_kinfo *info, void **state, ox_err *e) {
  imgdec_state *s = ox_arena_calloc(info->arena, 1, sizeof *s);
  if (!s) return ox_err_set(e, OX_ENOMEM, "out of memory");
  const char *pf = ox_node_attr_str(info->node, "pixel_format", "RGB");
  if (!strcmp(pf, "RGB"))
    s->pf = PF_RGB;
  else if (!strcmp(pf, "BGR"))
    s->pf = PF_BGR;
  else if (!strcmp(pf, "Grayscale"))
    s->pf = PF_GRAY;
  else
    return oc_prep_fail(info, e, "pixel_format '%s' must be RGB, BGR or Grayscale", pf);
  *state = s;
  return OX_OK;
}

#if !defined(ONNXC_HAVE_JPEG) || !defined(ONNXC_HAVE_PNG) || !defined(ONNXC_HAVE_TIFF) || \
    !defined(ONNXC_HAVE_WEBP) || !defined(ONNXC_HAVE_OPENJP2)
static int missing(img *im, const char *fmt) {
  snprintf(im->err, sizeof im->err, "%s decoding is not available in this build", fmt);
  im->unavailable = true;
  return -1;
}
#endif

/* Decodes by the stream's signature. */
static int decode_any(const uint8_t *d, size_t n, img *im) {
  static const uint8_t png_sig[8] = {0x89, 'P', 'N', 'G', 0x0D, 0x0A, 0x1A, 0x0A};
  static const uint8_t jp2_sig[12] = {0, 0, 0, 0x0C, 'j', 'P', ' ', ' ', 0x0D, 0x0A, 0x87, 0x0A};
  if (n >= 3 && d[0] == 0xFF && d[1] == 0xD8 && d[2] == 0xFF) {
#ifdef ONNXC_HAVE_JPEG
    return dec_jpeg(d, n, im);
#else
    return missing(im, "JPEG");
#endif
  }
  if (n >= 8 && !memcmp(d, png_sig, 8)) {
#ifdef ONNXC_HAVE_PNG
    return dec_png(d, n, im);
#else
    return missing(im, "PNG");
#endif
  }
  if (n >= 4 && ((d[0] == 'I' && d[1] == 'I' && (d[2] == 42 || d[2] == 43) && d[3] == 0) ||
                 (d[0] == 'M' && d[1] == 'M' && d[2] == 0 && (d[3] == 42 || d[3] == 43)))) {
#ifdef ONNXC_HAVE_TIFF
    return dec_tiff(d, n, im);
#else
    return missing(im, "TIFF");
#endif
  }
  if (n >= 12 && !memcmp(d, "RIFF", 4) && !memcmp(d + 8, "WEBP", 4)) {
#ifdef ONNXC_HAVE_WEBP
    return dec_webp(d, n, im);
#else
    return missing(im, "WebP");
#endif
  }
  bool jp2 = n >= 12 && !memcmp(d, jp2_sig, 12);
  if (jp2 || (n >= 4 && d[0] == 0xFF && d[1] == 0x4F && d[2] == 0xFF && d[3] == 0x51)) {
#ifdef ONNXC_HAVE_OPENJP2
    return dec_j2k(d, n, im, jp2);
#else
    return missing(im, "JPEG 2000");
#endif
  }
  if (n >= 2 && d[0] == 'B' && d[1] == 'M') return dec_bmp(d, n, im);
  if (n >= 3 && d[0] == 'P' && d[1] >= '1' && d[1] <= '6') return dec_pnm(d, n, im);
  return img_fail(im, "unknown image format");
}

static int imgdec_run(ox_kctx *ctx, void *state) {
  const imgdec_state *s = state;
  ox_value *x = ox_kctx_input(ctx, 0);
  if (!x || x->kind != OX_VAL_TENSOR || x->dtype != OX_UINT8 || x->rank != 1)
    return ox_kctx_fail(ctx, OX_ERUNTIME, "encoded_stream must be a 1-D uint8 tensor");
  img im = {0};
  int oc = s->pf == PF_GRAY ? 1 : 3;
  if (decode_any(x->data, (size_t)x->numel, &im)) {
    free(im.px);
    if (im.unavailable || !strcmp(im.err, "out of memory"))
      return ox_kctx_fail(ctx, im.unavailable ? OX_EUNSUPPORTED : OX_ENOMEM,
                          "cannot decode the image: %s", im.err);
    /* Operators.md: a stream that cannot be decoded (corrupt, truncated,
     * unknown format) gives an empty [0, 0, C] tensor, not an error */
    int64_t ed[3] = {0, 0, oc};
    return ox_kctx_output(ctx, 0, OX_UINT8, ed, 3) ? OX_OK : OX_ENOMEM;
  }
  int64_t od[3] = {im.h, im.w, oc};
  ox_value *y = ox_kctx_output(ctx, 0, OX_UINT8, od, 3);
  if (!y) {
    free(im.px);
    return OX_ENOMEM;
  }
  uint8_t *o = y->data;
  size_t np = (size_t)im.w * im.h;
  for (size_t k = 0; k < np; k++) {
    const uint8_t *p = im.px + k * (size_t)im.c;
    if (s->pf == PF_GRAY) {
      o[k] = im.c == 1 ? p[0] : luma(p[0], p[1], p[2]);
    } else if (im.c == 1) {
      o[3 * k] = o[3 * k + 1] = o[3 * k + 2] = p[0];
    } else if (s->pf == PF_RGB) {
      memcpy(o + 3 * k, p, 3);
    } else {
      o[3 * k] = p[2], o[3 * k + 1] = p[1], o[3 * k + 2] = p[0];
    }
  }
  free(im.px);
  return OX_OK;
}

const ox_kernel_def ox_ops_image[] = {
    {"", "ImageDecoder", 20, 1000, imgdec_prepare, imgdec_run, NULL},
    {0},
};
