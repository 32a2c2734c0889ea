/* cmd_schema.c - `onnxc schema`: print operator schemas in the layout of the
 * spec's Operators.md / Changelog.md (without the prose, which the table does
 * not keep). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../ir/ir.h"
#include "../schema/schema.h"
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

/* The default value in the form the spec's documents print it. */
static void print_default(const ox_attr_schema *a) {
  const char *t = a->default_text;
  if (a->type == OX_ATTR_STRING && t[0] == '"') {
    size_t n = strlen(t);
    printf("%.*s", (int)(n >= 2 ? n - 2 : 0), t + 1);
    return;
  }
  if ((a->type == OX_ATTR_INTS || a->type == OX_ATTR_FLOATS || a->type == OX_ATTR_STRINGS) &&
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

static void print_formals(const char *title, const ox_formal *f, size_t n, int lo, int hi) {
  if (lo != hi) {
    if (hi == OX_SCHEMA_INF)
      printf("#### %s (%d - &#8734;)\n\n<dl>\n", title, lo);
    else
      printf("#### %s (%d - %d)\n\n<dl>\n", title, lo, hi);
  } else {
    printf("#### %s\n\n<dl>\n", title);
  }
  for (size_t i = 0; i < n; i++) {
    char flags[96] = "";
    size_t k = 0;
    if (f[i].option == OX_PARAM_OPTIONAL)
      k += (size_t)snprintf(flags + k, sizeof flags - k, "optional");
    else if (f[i].option == OX_PARAM_VARIADIC)
      k += (size_t)snprintf(flags + k, sizeof flags - k, "variadic%s",
                            f[i].homogeneous ? "" : ", heterogeneous");
    /* the table keeps differentiable yes/no; the docs also say
     * "non-differentiable", which is not stored */
    if (f[i].differentiable)
      k += (size_t)snprintf(flags + k, sizeof flags - k, "%sdifferentiable", k ? ", " : "");
    if (k)
      printf("<dt><tt>%s</tt> (%s) : %s</dt>\n", f[i].name, flags, f[i].type_str);
    else
      printf("<dt><tt>%s</tt> : %s</dt>\n", f[i].name, f[i].type_str);
  }
  printf("</dl>\n\n");
}

static void print_schema(const ox_schema *s) {
  bool dflt = s->domain[0] == '\0';
  printf("### <a name=\"%s%s%s-%d\"></a>**%s%s%s-%d**%s</a>\n\n", s->domain, dflt ? "" : ".",
         s->name, s->since_version, s->domain, dflt ? "" : ".", s->name, s->since_version,
         s->deprecated ? " (deprecated)" : "");
  if (s->doc) printf("%s\n\n", s->doc); /* onnxc's own operators (ai.onnxc) */
  printf("#### Version\n\n");
  if (s->experimental)
    printf("No versioning maintained for experimental ops.\n");
  else if (dflt)
    printf(
        "This version of the operator has been %s since version %d of the default ONNX "
        "operator set.\n",
        s->deprecated ? "deprecated" : "available", s->since_version);
  else
    printf("This version of the operator has been %s since version %d of the '%s' operator set.\n",
           s->deprecated ? "deprecated" : "available", s->since_version, s->domain);
  size_t nv = 0;
  const ox_schema *const *vs = ox_schema_versions(s->domain, s->name, &nv);
  if (nv > 1) {
    printf("\nOther versions of this operator:");
    for (size_t i = 0; i < nv; i++)
      if (vs[i] != s) printf(" %d", vs[i]->since_version);
    printf("\n");
  }
  printf("\n");
  if (s->n_attrs) {
    printf("#### Attributes\n\n<dl>\n");
    for (size_t i = 0; i < s->n_attrs; i++) {
      const ox_attr_schema *a = &s->attrs[i];
      printf("<dt><tt>%s</tt> : %s", a->name, ox_schema_attr_type_doc(a->type));
      if (a->required) {
        printf(" (required)");
      } else if (a->default_text) {
        printf(" (default is ");
        print_default(a);
        printf(")");
      }
      printf("</dt>\n");
    }
    printf("</dl>\n\n");
  }
  /* the spec prints no sections at all for deprecated versions */
  if (s->deprecated && !s->n_inputs && !s->n_outputs) return;
  print_formals("Inputs", s->inputs, s->n_inputs, s->min_inputs, s->max_inputs);
  print_formals("Outputs", s->outputs, s->n_outputs, s->min_outputs, s->max_outputs);
  {
    printf("#### Type Constraints\n\n<dl>\n");
    for (size_t i = 0; i < s->n_constraints; i++) {
      printf("<dt><tt>%s</tt> : ", s->constraints[i].name);
      for (size_t j = 0; j < s->constraints[i].n_allowed; j++)
        printf("%s%s", j ? ", " : "", s->constraints[i].allowed[j]);
      printf("</dt>\n");
    }
    printf("</dl>\n\n");
  }
  for (size_t i = 0; i < s->n_bodies; i++)
    printf("#### Function (opset %d)\n\n```\n%s```\n\n", s->bodies[i].opset, s->bodies[i].text);
}

static int print_ctx_body(const ox_schema *s, int64_t opset) {
  if (!ox_schema_has_ctx_body(s)) {
    fprintf(stderr, "onnxc: schema: %s has no context-dependent function body\n", s->name);
    return 1;
  }
  int32_t dt[32];
  size_t n = s->max_inputs < 32 ? (size_t)s->max_inputs : 32;
  if (n < s->n_inputs) n = s->n_inputs;
  if (n > 32) n = 32;
  for (size_t k = 0; k < n; k++) dt[k] = 1; /* float */
  /* a node with every input and output present */
  char *names[32];
  static const char present[] = "x";
  for (size_t k = 0; k < 32; k++) names[k] = (char *)present;
  ox_node node = {0};
  node.input = names;
  node.n_input = n;
  node.output = names;
  node.n_output = s->n_outputs < 32 ? s->n_outputs : 32;
  ox_buf b = {0};
  ox_err e = {0};
  if (ox_schema_build_body(s, opset, &node, dt, n, &b, &e)) {
    fprintf(stderr, "onnxc: schema: %s\n", e.msg);
    ox_buf_free(&b);
    return 1;
  }
  fwrite(b.data, 1, b.size, stdout);
  ox_buf_free(&b);
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
    for (size_t i = 0; i < ox_schema_count(); i++) {
      const ox_schema *s = ox_schema_at(i);
      if (list)
        printf("%s %s %d%s\n", domain_label(s->domain), s->name, s->since_version,
               s->n_bodies ? " function" : "");
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
  size_t nv = 0;
  const ox_schema *const *vs = ox_schema_versions(domain, op, &nv);
  if (!nv) {
    fprintf(stderr, "onnxc: schema: no operator '%s' in domain '%s'\n", op, domain_label(domain));
    return 1;
  }
  if (all) {
    for (size_t i = nv; i-- > 0;) print_schema(vs[i]);
    return 0;
  }
  const ox_schema *s =
      ox_schema_lookup(domain, op, opset < 0 ? ox_schema_max_opset(domain) : opset);
  if (!s) {
    fprintf(stderr, "onnxc: schema: '%s' does not exist before opset %d of domain '%s'\n", op,
            vs[0]->since_version, domain_label(domain));
    return 1;
  }
  if (ctx_body) return print_ctx_body(s, opset < 0 ? ox_schema_max_opset(domain) : opset);
  print_schema(s);
  if (ox_schema_has_ctx_body(s))
    printf(
        "#### Function\n\nThe function body of %s is context-dependent: it is built per node "
        "from the node's attributes, present inputs and input types (`onnxc schema %s "
        "--ctx-body` prints the one of a default node).\n\n",
        s->name, s->name);
  return 0;
}
