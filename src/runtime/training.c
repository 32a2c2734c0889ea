/* training.c - TrainingInfoProto semantics (IR.md "Training Related
 * Information"); see training.h.
 *
 * Each step runs an ordinary session on a derived model: for a training step
 * the inference graph concatenated with the algorithm graph, for an
 * initialization step the initialization graph alone. In the derived graph
 * the state variables are graph inputs without an initializer, so every run
 * is fed the current state; the update values are graph outputs. */
#include "training.h"

#include <stdlib.h>
#include <string.h>
#include <sys/types.h>

typedef struct tr_step {
  ox_model *m; /* derived model (its proto borrows from the training model) */
  ox_session *s;
  const char **outs; /* graph outputs of the derived graph */
  size_t n_outs;
} tr_step;

struct ox_training {
  const ox_model *m;
  ox_session_opts opts;
  size_t n_state;
  const char **names;
  ox_value **vals;
  tr_step *algo, *init; /* one per TrainingInfoProto, built on first use */
  size_t n_info;
};

static const ox_tensor *find_init(const ox_graph *g, const char *name) {
  if (!g) return NULL;
  for (size_t i = 0; i < g->n_initializer; i++)
    if (g->initializer[i].name && !strcmp(g->initializer[i].name, name)) return &g->initializer[i];
  return NULL;
}

static bool graph_has_output(const ox_graph *g, const char *name) {
  if (!g) return false;
  for (size_t i = 0; i < g->n_output; i++)
    if (g->output[i].name && !strcmp(g->output[i].name, name)) return true;
  return false;
}

static int check_bindings(const ox_model_proto *mp, size_t k, bool init, ox_err *e) {
  const ox_training_info *ti = &mp->training_info[k];
  const ox_str_pair *b = init ? ti->initialization_binding : ti->update_binding;
  size_t n = init ? ti->n_initialization_binding : ti->n_update_binding;
  const ox_graph *g = init ? ti->initialization : ti->algorithm;
  const char *what = init ? "initialization_binding" : "update_binding";
  const char *gname = init ? "initialization" : "algorithm";
  for (size_t i = 0; i < n; i++) {
    const char *key = b[i].key ? b[i].key : "", *val = b[i].value ? b[i].value : "";
    if (!find_init(mp->graph, key) && !find_init(ti->algorithm, key))
      return ox_err_set(e, OX_EMODEL,
                        "training_info[%zu].%s[%zu]: key '%s' is not an initializer of the "
                        "inference graph or of the algorithm graph",
                        k, what, i, key);
    if (!graph_has_output(g, val))
      return ox_err_set(e, OX_EMODEL,
                        "training_info[%zu].%s[%zu]: value '%s' is not an output of the %s graph",
                        k, what, i, val, gname);
    for (size_t j = 0; j < i; j++)
      if (b[j].key && !strcmp(b[j].key, key))
        return ox_err_set(e, OX_EMODEL, "training_info[%zu].%s[%zu]: key '%s' repeats entry %zu", k,
                          what, i, key, j);
  }
  return OX_OK;
}

int ox_training_check(const ox_model *m, ox_err *e) {
  if (!m || !m->proto || !m->proto->graph)
    return ox_err_set(e, OX_EINVAL, "the model has no graph");
  const ox_model_proto *mp = m->proto;
  for (size_t k = 0; k < mp->n_training_info; k++) {
    const ox_training_info *ti = &mp->training_info[k];
    if (ti->initialization && ti->initialization->n_input)
      return ox_err_set(e, OX_EMODEL,
                        "training_info[%zu].initialization: the graph must have no "
                        "inputs (it has %zu)",
                        k, ti->initialization->n_input);
    if (!ti->initialization && ti->n_initialization_binding)
      return ox_err_set(
          e, OX_EMODEL,
          "training_info[%zu]: initialization_binding without an initialization graph", k);
    if (check_bindings(mp, k, true, e) || check_bindings(mp, k, false, e)) return e->code;
  }
  return OX_OK;
}

static ssize_t state_index(const ox_training *t, const char *name) {
  for (size_t i = 0; i < t->n_state; i++)
    if (!strcmp(t->names[i], name)) return (ssize_t)i;
  return -1;
}

static int add_state(ox_training *t, const ox_training_info *ti, const char *name, ox_err *e) {
  if (state_index(t, name) >= 0) return OX_OK;
  const ox_tensor *tp = find_init(t->m->proto->graph, name);
  if (!tp) tp = find_init(ti->algorithm, name);
  if (!tp) return ox_err_set(e, OX_EMODEL, "state variable '%s' is not an initializer", name);
  ox_value *v = ox_value_from_tensor_proto(tp, false, e);
  if (!v) return e->code ? e->code : OX_ENOMEM;
  const char **nn = realloc(t->names, (t->n_state + 1) * sizeof *nn);
  if (nn) t->names = nn;
  ox_value **nv = nn ? realloc(t->vals, (t->n_state + 1) * sizeof *nv) : NULL;
  if (!nv) {
    ox_value_unref(v);
    return ox_err_set(e, OX_ENOMEM, "out of memory");
  }
  t->vals = nv;
  t->names[t->n_state] = name;
  t->vals[t->n_state++] = v;
  return OX_OK;
}

int ox_training_new(const ox_model *m, const ox_session_opts *opts, ox_training **out, ox_err *e) {
  *out = NULL;
  if (ox_training_check(m, e)) return e->code;
  ox_training *t = calloc(1, sizeof *t);
  if (!t) return ox_err_set(e, OX_ENOMEM, "out of memory");
  t->m = m;
  if (opts) t->opts = *opts;
  const ox_model_proto *mp = m->proto;
  t->n_info = mp->n_training_info;
  t->algo = calloc(t->n_info + 1, sizeof *t->algo);
  t->init = calloc(t->n_info + 1, sizeof *t->init);
  if (!t->algo || !t->init) {
    ox_training_free(t);
    return ox_err_set(e, OX_ENOMEM, "out of memory");
  }
  for (size_t k = 0; k < t->n_info; k++) {
    const ox_training_info *ti = &mp->training_info[k];
    for (size_t i = 0; i < ti->n_initialization_binding; i++)
      if (add_state(t, ti, ti->initialization_binding[i].key, e)) goto fail;
    for (size_t i = 0; i < ti->n_update_binding; i++)
      if (add_state(t, ti, ti->update_binding[i].key, e)) goto fail;
  }
  *out = t;
  return OX_OK;
fail:
  ox_training_free(t);
  return e->code;
}

static void step_free(tr_step *st) {
  ox_session_free(st->s);
  free(st->outs);
  if (st->m) {
    st->m->proto = NULL;
    ox_model_free(st->m);
  }
  memset(st, 0, sizeof *st);
}

void ox_training_free(ox_training *t) {
  if (!t) return;
  for (size_t k = 0; k < t->n_info; k++) {
    if (t->algo) step_free(&t->algo[k]);
    if (t->init) step_free(&t->init[k]);
  }
  for (size_t i = 0; i < t->n_state; i++) ox_value_unref(t->vals[i]);
  free(t->names);
  free(t->vals);
  free(t->algo);
  free(t->init);
  free(t);
}

static bool in_list(const char **l, size_t n, const char *s) {
  for (size_t i = 0; i < n; i++)
    if (!strcmp(l[i], s)) return true;
  return false;
}

static int add_out(tr_step *st, const ox_graph *src, ox_graph *g, ox_arena *a, const char *name) {
  if (in_list(st->outs, st->n_outs, name)) return OX_OK;
  const char **o = realloc(st->outs, (st->n_outs + 1) * sizeof *o);
  if (!o) return OX_ENOMEM;
  st->outs = o;
  st->outs[st->n_outs++] = name;
  ox_value_info *vi = ox_value_info_push(a, &g->output, &g->n_output, name);
  if (!vi) return OX_ENOMEM;
  for (size_t i = 0; src && i < src->n_output; i++)
    if (!strcmp(src->output[i].name, name)) vi->type = src->output[i].type;
  return OX_OK;
}

/* Appends the parts of src to g: nodes, inputs, initializers (state
 * variables become inputs), value_info, sparse initializers. */
static int append_graph(const ox_training *t, ox_arena *a, ox_graph *g, const ox_graph *src) {
  for (size_t i = 0; i < src->n_node; i++) {
    ox_node *n = OX_VEC_PUSH(a, g->node, g->n_node);
    if (!n) return OX_ENOMEM;
    *n = src->node[i];
  }
  for (size_t i = 0; i < src->n_input; i++) {
    bool dup = false;
    for (size_t j = 0; j < g->n_input; j++) dup |= !strcmp(g->input[j].name, src->input[i].name);
    if (dup) continue; /* declared by the inference graph too */
    ox_value_info *v = OX_VEC_PUSH(a, g->input, g->n_input);
    if (!v) return OX_ENOMEM;
    *v = src->input[i];
  }
  for (size_t i = 0; i < src->n_initializer; i++) {
    const ox_tensor *tp = &src->initializer[i];
    if (tp->name && state_index(t, tp->name) >= 0) {
      bool listed = false;
      for (size_t j = 0; j < g->n_input; j++) listed |= !strcmp(g->input[j].name, tp->name);
      if (listed) continue;
      ox_value_info *v = ox_value_info_push(a, &g->input, &g->n_input, tp->name);
      if (!v || !(v->type = ox_type_new_tensor(a, tp->data_type, tp->dims, tp->n_dims)))
        return OX_ENOMEM;
      continue;
    }
    ox_tensor *c = OX_VEC_PUSH(a, g->initializer, g->n_initializer);
    if (!c) return OX_ENOMEM;
    *c = *tp;
  }
  for (size_t i = 0; i < src->n_sparse_initializer; i++) {
    ox_sparse_tensor *c = OX_VEC_PUSH(a, g->sparse_initializer, g->n_sparse_initializer);
    if (!c) return OX_ENOMEM;
    *c = src->sparse_initializer[i];
  }
  for (size_t i = 0; i < src->n_value_info; i++) {
    ox_value_info *v = OX_VEC_PUSH(a, g->value_info, g->n_value_info);
    if (!v) return OX_ENOMEM;
    *v = src->value_info[i];
  }
  return OX_OK;
}

/* Builds (once) the derived model of step k (init: initialization graph). */
static int step_get(ox_training *t, size_t k, bool init, tr_step **out, ox_err *e) {
  tr_step *st = init ? &t->init[k] : &t->algo[k];
  *out = st;
  if (st->s) return OX_OK;
  const ox_model_proto *mp = t->m->proto;
  const ox_training_info *ti = &mp->training_info[k];
  st->m = ox_model_new();
  if (!st->m) return ox_err_set(e, OX_ENOMEM, "out of memory");
  ox_arena *a = st->m->arena;
  ox_model_proto *p = ox_arena_calloc(a, 1, sizeof *p);
  ox_graph *g = p ? ox_arena_calloc(a, 1, sizeof *g) : NULL;
  if (!g) return ox_err_set(e, OX_ENOMEM, "out of memory");
  *p = *mp;
  p->graph = g;
  p->training_info = NULL;
  p->n_training_info = 0;
  st->m->dir = t->m->dir;
  const char *what = init ? "initialization" : "algorithm";
  g->name = ox_arena_printf(a, "training_info[%zu].%s", k, what);
  int rc = OX_OK;
  const ox_str_pair *b = init ? ti->initialization_binding : ti->update_binding;
  size_t nb = init ? ti->n_initialization_binding : ti->n_update_binding;
  const ox_graph *src = init ? ti->initialization : ti->algorithm;
  if (!init) rc = append_graph(t, a, g, mp->graph);
  if (!rc && src) rc = append_graph(t, a, g, src);
  for (size_t i = 0; !rc && i < nb; i++) rc = add_out(st, src, g, a, b[i].value);
  for (size_t i = 0; !rc && src && i < src->n_output; i++)
    rc = add_out(st, src, g, a, src->output[i].name);
  for (size_t i = 0; !rc && !init && i < mp->graph->n_output; i++)
    rc = add_out(st, mp->graph, g, a, mp->graph->output[i].name);
  if (rc) return ox_err_set(e, OX_ENOMEM, "out of memory");
  st->m->proto = p;
  if (ox_session_create(st->m, &t->opts, &st->s, e)) {
    char msg[sizeof e->msg];
    memcpy(msg, e->msg, sizeof msg);
    int code = e->code;
    step_free(st);
    return ox_err_set(e, code, "training_info[%zu].%s: %s", k, what, msg);
  }
  return OX_OK;
}

/* Runs step st: user inputs plus the state variables that are inputs of the
 * derived graph; assigns by the binding; hands out requested outputs. */
static int step_run(ox_training *t, tr_step *st, const ox_str_pair *b, size_t nb,
                    const char *const *in_names, ox_value *const *inputs, size_t n_in,
                    const char *const *out_names, ox_value **outputs, size_t n_out, ox_err *e) {
  size_t ni = ox_session_n_inputs(st->s), cap = n_in + ni + 1;
  const char **names = calloc(cap, sizeof *names);
  ox_value **vals = calloc(cap, sizeof *vals);
  ox_value **res = calloc(st->n_outs + 1, sizeof *res);
  int rc = OX_OK;
  if (!names || !vals || !res) {
    rc = ox_err_set(e, OX_ENOMEM, "out of memory");
    goto done;
  }
  size_t n = 0;
  for (size_t i = 0; i < n_in; i++) {
    names[n] = in_names[i];
    vals[n++] = inputs[i];
  }
  for (size_t i = 0; i < ni; i++) {
    const char *nm = ox_session_input_name(st->s, i);
    ssize_t si = state_index(t, nm);
    if (si < 0 || in_list(names, n, nm)) continue;
    names[n] = nm;
    vals[n++] = t->vals[si];
  }
  rc = ox_session_run(st->s, names, vals, n, st->outs, res, st->n_outs, e);
  if (rc) goto done;
  for (size_t k = 0; k < n_out; k++) {
    size_t j = 0;
    while (j < st->n_outs && strcmp(st->outs[j], out_names[k])) j++;
    if (j == st->n_outs) {
      rc = ox_err_set(e, OX_EINVAL, "'%s' is not an output of the training step", out_names[k]);
      goto done;
    }
  }
  for (size_t i = 0; i < nb; i++) {
    ssize_t si = state_index(t, b[i].key);
    size_t j = 0;
    while (j < st->n_outs && strcmp(st->outs[j], b[i].value)) j++;
    if (si < 0 || j == st->n_outs || !res[j]) {
      rc = ox_err_set(e, OX_ERUNTIME, "binding '%s' <- '%s' has no value", b[i].key, b[i].value);
      goto done;
    }
    ox_value_unref(t->vals[si]);
    t->vals[si] = ox_value_ref(res[j]);
  }
  for (size_t k = 0; k < n_out; k++)
    for (size_t j = 0; j < st->n_outs; j++)
      if (!strcmp(st->outs[j], out_names[k])) {
        outputs[k] = res[j] ? ox_value_ref(res[j]) : NULL;
        break;
      }
done:
  for (size_t j = 0; res && j < st->n_outs; j++) ox_value_unref(res[j]);
  free(names);
  free(vals);
  free(res);
  return rc;
}

int ox_training_init(ox_training *t, ox_err *e) {
  for (size_t k = 0; k < t->n_info; k++) {
    const ox_training_info *ti = &t->m->proto->training_info[k];
    if (!ti->initialization) continue;
    tr_step *st;
    if (step_get(t, k, true, &st, e)) return e->code;
    if (step_run(t, st, ti->initialization_binding, ti->n_initialization_binding, NULL, NULL, 0,
                 NULL, NULL, 0, e))
      return e->code;
  }
  return OX_OK;
}

int ox_training_step(ox_training *t, size_t index, const char *const *in_names,
                     ox_value *const *inputs, size_t n_in, const char *const *out_names,
                     ox_value **outputs, size_t n_out, ox_err *e) {
  if (index >= t->n_info)
    return ox_err_set(e, OX_EINVAL, "the model has %zu training_info entries, no entry %zu",
                      t->n_info, index);
  for (size_t k = 0; k < n_out; k++) outputs[k] = NULL;
  const ox_training_info *ti = &t->m->proto->training_info[index];
  tr_step *st;
  if (step_get(t, index, false, &st, e)) return e->code;
  return step_run(t, st, ti->update_binding, ti->n_update_binding, in_names, inputs, n_in,
                  out_names, outputs, n_out, e);
}

size_t ox_training_n_state(const ox_training *t) { return t->n_state; }
const char *ox_training_state_name(const ox_training *t, size_t i) {
  return i < t->n_state ? t->names[i] : NULL;
}
const ox_value *ox_training_state_value(const ox_training *t, size_t i) {
  return i < t->n_state ? t->vals[i] : NULL;
}

static int write_graph(const ox_training *t, ox_arena *a, ox_graph *g, ox_err *e) {
  for (size_t i = 0; g && i < g->n_initializer; i++) {
    ox_tensor *tp = &g->initializer[i];
    ssize_t si = tp->name ? state_index(t, tp->name) : -1;
    if (si < 0) continue;
    ox_tensor nt;
    memset(&nt, 0, sizeof nt);
    if (ox_value_to_tensor_proto(t->vals[si], a, &nt, e)) return e->code;
    nt.name = tp->name;
    nt.doc_string = tp->doc_string;
    nt.metadata_props = tp->metadata_props;
    nt.n_metadata_props = tp->n_metadata_props;
    *tp = nt;
  }
  return OX_OK;
}

int ox_training_write_back(const ox_training *t, ox_model *dst, ox_err *e) {
  if (!dst || !dst->proto || !dst->proto->graph)
    return ox_err_set(e, OX_EINVAL, "the destination model has no graph");
  if (write_graph(t, dst->arena, dst->proto->graph, e)) return e->code;
  for (size_t k = 0; k < dst->proto->n_training_info; k++)
    if (write_graph(t, dst->arena, dst->proto->training_info[k].algorithm, e)) return e->code;
  return OX_OK;
}
