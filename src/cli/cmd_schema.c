/* cmd_schema.c - `onnxc schema`: print operator schemas in the layout of the
 * spec's Operators.md / Changelog.md (without the prose, which the table does
 * not keep). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"

static void usage(FILE *f) {
  fprintf(f,
          "usage: onnxc schema OP [--opset N] [--domain D] [--all-versions] [--ctx-body]\n"
          "       onnxc schema --list        one line per schema: domain op since_version\n"
          "       onnxc schema --dump        every schema, as in Changelog.md\n"
          "\n"
          "Prints the schema of OP that a model importing opset N of domain D binds\n"
          "to (default: the latest version; D defaults to ai.onnx).\n"
          "  --ctx-body   for an op whose function body is context-dependent, print the\n"
          "               body built for a node with no attributes, every input present\n"
          "               and of element type float\n");
}

static const char *domain_label(const char *d) { return d[0] ? d : "ai.onnx"; }

/* Attribute i's default value in the form the spec's documents print it. */
static void print_default(const onnxc_schema *s, size_t i) {
  const char *t = onnxc_schema_attr_default(s, i);
  onnxc_attr_type type = onnxc_schema_attr_type(s, i);
  if (type == ONNXC_ATTR_STRING && t[0] == '"') {
    size_t n = strlen(t);
    printf("%.*s", (int)(n >= 2 ? n - 2 : 0), t + 1);
    return;
  }
  if ((type == ONNXC_ATTR_INTS || type == ONNXC_ATTR_FLOATS || type == ONNXC_ATTR_STRINGS) &&
      t[0] == '[') {
    /* [1, 2] / ["a", "b"] -> ['1', '2'] / ['a', 'b'] */
    putchar('[');
    const char *p = t + 1;
    bool first = true;
    while (*p && *p != ']') {
      while (*p == ' ' || *p == ',') p++;
      if (*p == ']' || !*p) break;
      const char *q = p;
      if (*p == '"') {
        q = strchr(p + 1, '"');
        if (!q) break;
        printf("%s'%.*s'", first ? "" : ", ", (int)(q - p - 1), p + 1);
        p = q + 1;
      } else {
        while (*q && *q != ',' && *q != ']') q++;
        printf("%s'%.*s'", first ? "" : ", ", (int)(q - p), p);
        p = q;
      }
      first = false;
    }
    putchar(']');
    return;
  }
  fputs(t, stdout);
}

static void print_formals(const char *title, const onnxc_schema *s, onnxc_schema_formals which) {
  int lo = onnxc_schema_min_arity(s, which), hi = onnxc_schema_max_arity(s, which);
  if (lo != hi) {
    if (hi == ONNXC_SCHEMA_UNBOUNDED)
      printf("#### %s (%d - &#8734;)\n\n<dl>\n", title, lo);
    else
      printf("#### %s (%d - %d)\n\n<dl>\n", title, lo, hi);
  } else {
    printf("#### %s\n\n<dl>\n", title);
  }
  for (size_t i = 0; i < onnxc_schema_formal_count(s, which); i++) {
    char flags[96] = "";
    size_t k = 0;
    onnxc_formal_option option = onnxc_schema_formal_option(s, which, i);
    if (option == ONNXC_FORMAL_OPTIONAL)
      k += (size_t)snprintf(flags + k, sizeof flags - k, "optional");
    else if (option == ONNXC_FORMAL_VARIADIC)
      k += (size_t)snprintf(flags + k, sizeof flags - k, "variadic%s",
                            onnxc_schema_formal_homogeneous(s, which, i) ? "" : ", heterogeneous");
    /* the table keeps differentiable yes/no; the docs also say
     * "non-differentiable", which is not stored */
    if (onnxc_schema_formal_differentiable(s, which, i))
      k += (size_t)snprintf(flags + k, sizeof flags - k, "%sdifferentiable", k ? ", " : "");
    const char *name = onnxc_schema_formal_name(s, which, i);
    const char *type = onnxc_schema_formal_type(s, which, i);
    if (k)
      printf("<dt><tt>%s</tt> (%s) : %s</dt>\n", name, flags, type);
    else
      printf("<dt><tt>%s</tt> : %s</dt>\n", name, type);
  }
  printf("</dl>\n\n");
}

static void print_schema(const onnxc_schema *s) {
  const char *dom = onnxc_schema_domain(s), *name = onnxc_schema_name(s);
  int since = onnxc_schema_since_version(s);
  bool dflt = dom[0] == '\0', deprecated = onnxc_schema_deprecated(s);
  printf("### <a name=\"%s%s%s-%d\"></a>**%s%s%s-%d**%s</a>\n\n", dom, dflt ? "" : ".", name,
         since, dom, dflt ? "" : ".", name, since, deprecated ? " (deprecated)" : "");
  const char *doc = onnxc_schema_doc(s);
  if (doc) printf("%s\n\n", doc); /* onnxc's own operators (ai.onnxc) */
  printf("#### Version\n\n");
  if (onnxc_schema_experimental(s))
    printf("No versioning maintained for experimental ops.\n");
  else if (dflt)
    printf(
        "This version of the operator has been %s since version %d of the default ONNX "
        "operator set.\n",
        deprecated ? "deprecated" : "available", since);
  else
    printf("This version of the operator has been %s since version %d of the '%s' operator set.\n",
           deprecated ? "deprecated" : "available", since, dom);
  size_t nv = onnxc_schema_version_count(dom, name);
  if (nv > 1) {
    printf("\nOther versions of this operator:");
    for (size_t i = 0; i < nv; i++) {
      const onnxc_schema *v = onnxc_schema_version(dom, name, i);
      if (v != s) printf(" %d", onnxc_schema_since_version(v));
    }
    printf("\n");
  }
  printf("\n");
  size_t n_attrs = onnxc_schema_attr_count(s);
  if (n_attrs) {
    printf("#### Attributes\n\n<dl>\n");
    for (size_t i = 0; i < n_attrs; i++) {
      printf("<dt><tt>%s</tt> : %s", onnxc_schema_attr_name(s, i),
             onnxc_attr_type_description(onnxc_schema_attr_type(s, i)));
      if (onnxc_schema_attr_required(s, i)) {
        printf(" (required)");
      } else if (onnxc_schema_attr_default(s, i)) {
        printf(" (default is ");
        print_default(s, i);
        printf(")");
      }
      printf("</dt>\n");
    }
    printf("</dl>\n\n");
  }
  /* the spec prints no sections at all for deprecated versions */
  if (deprecated && !onnxc_schema_formal_count(s, ONNXC_SCHEMA_INPUTS) &&
      !onnxc_schema_formal_count(s, ONNXC_SCHEMA_OUTPUTS))
    return;
  print_formals("Inputs", s, ONNXC_SCHEMA_INPUTS);
  print_formals("Outputs", s, ONNXC_SCHEMA_OUTPUTS);
  printf("#### Type Constraints\n\n<dl>\n");
  for (size_t i = 0; i < onnxc_schema_constraint_count(s); i++) {
    printf("<dt><tt>%s</tt> : ", onnxc_schema_constraint_name(s, i));
    for (size_t j = 0; j < onnxc_schema_constraint_type_count(s, i); j++)
      printf("%s%s", j ? ", " : "", onnxc_schema_constraint_type(s, i, j));
    printf("</dt>\n");
  }
  printf("</dl>\n\n");
  for (size_t i = 0; i < onnxc_schema_function_count(s); i++)
    printf("#### Function (opset %lld)\n\n```\n%s```\n\n",
           (long long)onnxc_schema_function_opset(s, i), onnxc_schema_function_text(s, i));
}

/* The body built for a node with no attributes, every input present (as
 * many as the schema allows, up to 32) and of element type float. */
static int print_ctx_body(const onnxc_schema *s, int64_t opset) {
  if (!onnxc_schema_has_context_body(s)) {
    fprintf(stderr, "onnxc: schema: %s has no context-dependent function body\n",
            onnxc_schema_name(s));
    return 1;
  }
  int max_in = onnxc_schema_max_arity(s, ONNXC_SCHEMA_INPUTS);
  size_t n_formal = onnxc_schema_formal_count(s, ONNXC_SCHEMA_INPUTS);
  size_t n = max_in < 32 ? (size_t)max_in : 32;
  if (n < n_formal) n = n_formal;
  if (n > 32) n = 32;
  int32_t dt[32];
  for (size_t k = 0; k < n; k++) dt[k] = 1; /* float */
  char *text = NULL;
  onnxc_error e = {0};
  if (onnxc_schema_context_body(s, opset, NULL, dt, n, &text, &e) != ONNXC_OK) {
    fprintf(stderr, "onnxc: schema: %s\n", e.msg);
    return 1;
  }
  fputs(text, stdout);
  free(text);
  return 0;
}

int ox_cmd_schema(int argc, char **argv) {
  const char *op = NULL, *domain = "";
  int64_t opset = -1;
  bool list = false, dump = false, all = false, ctx_body = false;
  for (int i = 1; i < argc; i++) {
    if (ox_cli_is_help(argv[i])) {
      usage(stdout);
      return 0;
    } else if (strcmp(argv[i], "--opset") == 0 && i + 1 < argc) {
      char *end;
      errno = 0;
      long long v = strtoll(argv[++i], &end, 10);
      if (*end || errno || v < 0) {
        fprintf(stderr, "onnxc: schema: bad opset '%s'\n", argv[i]);
        return 2;
      }
      opset = v;
    } else if (strcmp(argv[i], "--domain") == 0 && i + 1 < argc) {
      domain = argv[++i];
    } else if (strcmp(argv[i], "--list") == 0) {
      list = true;
    } else if (strcmp(argv[i], "--dump") == 0) {
      dump = true;
    } else if (strcmp(argv[i], "--ctx-body") == 0) {
      ctx_body = true;
    } else if (strcmp(argv[i], "--all-versions") == 0) {
      all = true;
    } else if (argv[i][0] == '-') {
      fprintf(stderr, "onnxc: schema: unknown option '%s'\n", argv[i]);
      return 2;
    } else if (!op) {
      op = argv[i];
    } else {
      fprintf(stderr, "onnxc: schema: more than one operator given\n");
      return 2;
    }
  }
  if (list || dump) {
    for (size_t i = 0; i < onnxc_schema_count(); i++) {
      const onnxc_schema *s = onnxc_schema_at(i);
      if (list)
        printf("%s %s %d%s\n", domain_label(onnxc_schema_domain(s)), onnxc_schema_name(s),
               onnxc_schema_since_version(s), onnxc_schema_function_count(s) ? " function" : "");
      else
        print_schema(s);
    }
    return 0;
  }
  if (!op) {
    usage(stderr);
    return 2;
  }
  if (strcmp(domain, "ai.onnx") == 0) domain = "";
  /* "ai.onnx.ml.LabelEncoder" names the domain too (as the changelogs do) */
  static const char *const prefixes[] = {"ai.onnx.preview.training.", "ai.onnx.preview.",
                                         "ai.onnx.ml.", "ai.onnx."};
  char dom_buf[64];
  for (size_t i = 0; i < sizeof prefixes / sizeof prefixes[0] && !domain[0]; i++) {
    size_t k = strlen(prefixes[i]);
    if (strncmp(op, prefixes[i], k) == 0 && op[k]) {
      snprintf(dom_buf, sizeof dom_buf, "%.*s", (int)(k - 1), prefixes[i]);
      domain = strcmp(dom_buf, "ai.onnx") == 0 ? "" : dom_buf;
      op += k;
    }
  }
  size_t nv = onnxc_schema_version_count(domain, op);
  if (!nv) {
    fprintf(stderr, "onnxc: schema: no operator '%s' in domain '%s'\n", op, domain_label(domain));
    return 1;
  }
  if (all) {
    for (size_t i = nv; i-- > 0;) print_schema(onnxc_schema_version(domain, op, i));
    return 0;
  }
  if (opset < 0) opset = onnxc_schema_latest_opset(domain);
  const onnxc_schema *s = onnxc_schema_lookup(domain, op, opset);
  if (!s) {
    fprintf(stderr, "onnxc: schema: '%s' does not exist before opset %d of domain '%s'\n", op,
            onnxc_schema_since_version(onnxc_schema_version(domain, op, 0)), domain_label(domain));
    return 1;
  }
  if (ctx_body) return print_ctx_body(s, opset);
  print_schema(s);
  if (onnxc_schema_has_context_body(s))
    printf(
        "#### Function\n\nThe function body of %s is context-dependent: it is built per node "
        "from the node's attributes, present inputs and input types (`onnxc schema %s "
        "--ctx-body` prints the one of a default node).\n\n",
        onnxc_schema_name(s), onnxc_schema_name(s));
  return 0;
}
