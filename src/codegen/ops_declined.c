/* ops_declined.c - the operators `onnxc compile` refuses on purpose, with
 * the reason its error gives instead of "no C generator": what the
 * generated code's contract (fixed-size buffers, no strings, no I/O, the
 * same output for the same input) cannot express. */
#include <string.h>

#include "cg_impl.h"

typedef struct cg_declined {
  const char *op, *why;
} cg_declined;

/* The length of these outputs is a count of input values (kept boxes,
 * distinct values, non-zero elements, true conditions), known only at run
 * time. A model's declared shape may give one length, but the generated API
 * has fixed output sizes (the header's COUNT) and no way to return another
 * count, so a run whose count differs would be silently wrong. */
#define DATA_DEP                                                                    \
  "the length of its output depends on the input values (a data-dependent shape); " \
  "the compiled API has fixed output sizes, so it is not compiled"

static const cg_declined declined[] = {
    {"NonMaxSuppression", DATA_DEP},
    {"Unique", DATA_DEP},
    {"NonZero", DATA_DEP},
    {"Compress", DATA_DEP},
    {"StringNormalizer", "strings are not compiled"},
    {"StringConcat", "strings are not compiled"},
    {"StringSplit", "strings are not compiled"},
    {"RegexFullMatch", "strings are not compiled"},
    {"ImageDecoder", "decoding image files is not compiled"},
};

/* ai.onnx.ml: the operators whose inputs or outputs are maps, sequences or
 * strings by definition (their numeric relatives have generators in
 * ops_ml.c; a LabelEncoder with string keys or values is refused there). */
static const cg_declined declined_ml[] = {
    {"CastMap", "maps are not compiled (tensors only)"},
    {"DictVectorizer", "maps are not compiled (tensors only)"},
    {"ZipMap", "sequences of maps are not compiled (tensors only)"},
    {"CategoryMapper", "strings are not compiled"},
};

const char *cg_declined_reason(const char *domain, const char *op) {
  if (!op) return NULL;
  if (domain && strcmp(domain, CG_DOMAIN_ML) == 0) {
    for (size_t i = 0; i < sizeof declined_ml / sizeof declined_ml[0]; i++)
      if (strcmp(declined_ml[i].op, op) == 0) return declined_ml[i].why;
    return NULL;
  }
  if (!ox_is_default_domain(domain)) return NULL;
  for (size_t i = 0; i < sizeof declined / sizeof declined[0]; i++)
    if (strcmp(declined[i].op, op) == 0) return declined[i].why;
  if (strncmp(op, "Sequence", 8) == 0 || strncmp(op, "Optional", 8) == 0 ||
      strcmp(op, "SplitToSequence") == 0 || strcmp(op, "ConcatFromSequence") == 0)
    return "sequences and optionals are not compiled (tensors only)";
  return NULL;
}
