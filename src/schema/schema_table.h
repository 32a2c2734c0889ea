/* schema_table.h - the generated tables behind schema.c (internal). */
#ifndef OX_SCHEMA_TABLE_H
#define OX_SCHEMA_TABLE_H

#include "schema.h"

/* One operator (all versions): ox_schema_table[first .. first+count). */
typedef struct ox_schema_op {
  const char *domain, *name;
  int first, count;
} ox_schema_op;

typedef struct ox_schema_domain {
  const char *domain;
  int max_opset;
} ox_schema_domain;

/* Sorted by (domain, name, since_version), byte-wise strcmp order. */
extern const ox_schema ox_schema_table[];
extern const size_t ox_schema_table_n;
extern const ox_schema *const ox_schema_ptrs[];
extern const ox_schema_op ox_schema_ops[];
extern const size_t ox_schema_ops_n;
extern const ox_schema_domain ox_schema_domains[];
extern const size_t ox_schema_domains_n;

/* onnxc's own domain, ai.onnxc (schema_onnxc.c, written by hand): one
 * version of each operator, sorted by name, ptrs[i] == &table[i]. */
extern const ox_schema ox_schema_onnxc_table[];
extern const size_t ox_schema_onnxc_table_n;
extern const ox_schema *const ox_schema_onnxc_ptrs[];

#endif
