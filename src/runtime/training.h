/* training.h - TrainingInfoProto semantics (training.c) and the Gradient
 * rewrite (gradient.c).
 *
 * State variables are the initializers named as keys in the bindings of the
 * model's TrainingInfoProto entries. A training context keeps their current
 * values; an initialization step evaluates each `initialization` graph and
 * assigns its outputs by `initialization_binding`; a training step evaluates
 * the inference graph combined with one `algorithm` graph (nodes, inputs,
 * initializers concatenated, in that order) and assigns by `update_binding`.
 * The updated values are written back into a model with
 * ox_training_write_back. */
#ifndef OX_TRAINING_H
#define OX_TRAINING_H

#include "session.h"

#define OX_TRAINING_DOMAIN "ai.onnx.preview.training"

typedef struct ox_training ox_training;

/* Checks the binding rules of every TrainingInfoProto of m: keys are
 * initializers of the inference graph or of that algorithm graph, values are
 * outputs of the corresponding graph (initialization / algorithm), keys are
 * unique, the initialization graph has no inputs. Errors name the entry. */
int ox_training_check(const ox_model *m, ox_err *e);

/* Creates a training context for m (checked with ox_training_check). The
 * state starts at the initializer values. m must outlive the context. */
int ox_training_new(const ox_model *m, const ox_session_opts *opts, ox_training **out, ox_err *e);
void ox_training_free(ox_training *t);

/* Runs the initialization step of every TrainingInfoProto, in order. */
int ox_training_init(ox_training *t, ox_err *e);

/* Runs one training step with algorithm graph `index`: feeds bind inputs by
 * name (inputs of the inference or algorithm graph without an initializer),
 * assigns the state. If out_names is non-NULL, outputs[k] receives a new
 * reference to the value named out_names[k] computed by the step (any graph
 * output or update-binding value of the combined graph). */
int ox_training_step(ox_training *t, size_t index, const char *const *in_names,
                     ox_value *const *inputs, size_t n_in, const char *const *out_names,
                     ox_value **outputs, size_t n_out, ox_err *e);

/* Number of state variables, their names and current values (borrowed). */
size_t ox_training_n_state(const ox_training *t);
const char *ox_training_state_name(const ox_training *t, size_t i);
const ox_value *ox_training_state_value(const ox_training *t, size_t i);

/* Replaces, in model dst (same structure as the training model), the
 * initializers named by state variables with their current values (data in
 * dst's arena). */
int ox_training_write_back(const ox_training *t, ox_model *dst, ox_err *e);

#endif
