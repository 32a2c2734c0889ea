/* test_version.c - the opset adapters (src/version/), one case per adapter
 * kind: a model in the text syntax before, the target opset, and either the
 * model expected after (written out by hand from the two versions' specs;
 * compared through the printer) or the expected refusal. Every converted
 * model must pass the checker; an error must name the node's op. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check/check.h"
#include "onnxc.h"
#include "text/text.h"
#include "version/version.h"

typedef struct vcase {
  const char *name;
  int ir, from, to;
  const char *before;
  const char *after; /* NULL: refused */
  const char *error; /* substring of the refusal */
} vcase;

static const vcase cases[] = {
    {"broadcast 6->7: legacy axis becomes trailing 1s", 3, 6, 7,
     "g (float[2,3,4,5] a, float[3,4] b) => (float[2,3,4,5] c) {\n"
     "  c = Add <broadcast = 1, axis = 1> (a, b)\n}",
     "g (float[2,3,4,5] a, float[3,4] b) => (float[2,3,4,5] c) {\n"
     "  [b_v7_0] b_v7_0 = Unsqueeze <axes = [2]> (b)\n  c = Add (a, b_v7_0)\n}",
     NULL},
    {"broadcast 6->7: suffix broadcast needs nothing", 3, 6, 7,
     "g (float[2,3] a, float[3] b) => (float[2,3] c) {\n"
     "  c = Sub <broadcast = 1> (a, b)\n}",
     "g (float[2,3] a, float[3] b) => (float[2,3] c) {\n  c = Sub (a, b)\n}", NULL},
    {"broadcast 7->6: suffix", 3, 7, 6,
     "g (float[2,3,4,5] a, float[4,5] b) => (float[2,3,4,5] c) {\n  c = Mul (a, b)\n}",
     "g (float[2,3,4,5] a, float[4,5] b) => (float[2,3,4,5] c) {\n"
     "  c = Mul <broadcast = 1> (a, b)\n}",
     NULL},
    {"broadcast 7->6: not expressible", 3, 7, 6,
     "g (float[2,3,4,5] a, float[3,1,1] b) => (float[2,3,4,5] c) {\n  c = Mul (a, b)\n}", NULL,
     "(Mul) in graph 'g': the broadcasting of 'a' and 'b' cannot be written"},
    {"Gemm 6->7 drops broadcast", 3, 6, 7,
     "g (float[2,3] a, float[3,4] b, float[4] c) => (float[2,4] y) {\n"
     "  y = Gemm <broadcast = 1> (a, b, c)\n}",
     "g (float[2,3] a, float[3,4] b, float[4] c) => (float[2,4] y) {\n"
     "  y = Gemm (a, b, c)\n}",
     NULL},
    {"PRelu 6->7: per-channel slope", 3, 6, 7,
     "g (float[2,3,4] x, float[3] s) => (float[2,3,4] y) {\n  y = PRelu (x, s)\n}",
     "g (float[2,3,4] x, float[3] s) => (float[2,3,4] y) {\n"
     "  [s_v7_0] s_v7_0 = Unsqueeze <axes = [1]> (s)\n  y = PRelu (x, s_v7_0)\n}",
     NULL},
    {"consumed_inputs removed 5->6", 3, 5, 6,
     "g (float[2] x) => (float[2] y) {\n  y = Relu <consumed_inputs = [0]> (x)\n}",
     "g (float[2] x) => (float[2] y) {\n  y = Relu (x)\n}", NULL},
    {"Concat 3->4 writes the old default axis", 3, 3, 4,
     "g (float[2,3] x, float[2,3] z) => (float[2,6] y) {\n  y = Concat (x, z)\n}",
     "g (float[2,3] x, float[2,3] z) => (float[2,6] y) {\n  y = Concat <axis = 1> (x, z)\n}", NULL},
    {"Cast 5->6: type name to number", 3, 5, 6,
     "g (float[2] x) => (double[2] y) {\n  y = Cast <to = \"DOUBLE\"> (x)\n}",
     "g (float[2] x) => (double[2] y) {\n  y = Cast <to = 11> (x)\n}", NULL},
    {"Cast 9->8: string is refused", 4, 9, 8,
     "g (string[3] x) => (float[3] y) {\n  y = Cast <to = 1> (x)\n}", NULL,
     "(Cast) in graph 'g': input 'x' has type tensor(string), which Cast-6 does not accept"},
    {"Reshape 4->5", 3, 4, 5,
     "g (float[2,3] x) => (float[3,2] y) {\n  y = Reshape <shape = [3, 2]> (x)\n}",
     "g (float[2,3] x) => (float[3,2] y) {\n"
     "  [shape_v5_0] shape_v5_0 = Constant <value = int64[2] shape_v5_0 {3, 2}> ()\n"
     "  y = Reshape (x, shape_v5_0)\n}",
     NULL},
    {"Reshape 5->4 from an initializer (then unused, removed)", 4, 5, 4,
     "g (float[2,3] x) => (float[3,2] y) <int64[2] s = {3, 2}> {\n  y = Reshape (x, s)\n}",
     "g (float[2,3] x) => (float[3,2] y) {\n  y = Reshape <shape = [3, 2]> (x)\n}", NULL},
    {"Reshape 5->4: a constant still read elsewhere stays", 4, 5, 4,
     "g (float[2,3] x) => (float[3,2] y, int64[2] t) <int64[2] s = {3, 2}> {\n"
     "  y = Reshape (x, s)\n  t = Identity (s)\n}",
     "g (float[2,3] x) => (float[3,2] y, int64[2] t) <int64[2] s = {3, 2}> {\n"
     "  y = Reshape <shape = [3, 2]> (x)\n  t = Identity (s)\n}",
     NULL},
    {"Reshape 5->4: before IR 4 an initializer listed as input is a constant", 3, 5, 4,
     "g (float[2,3] x, int64[2] s) => (float[3,2] y) <int64[2] s = {3, 2}> {\n"
     "  y = Reshape (x, s)\n}",
     "g (float[2,3] x, int64[2] s) => (float[3,2] y) <int64[2] s = {3, 2}> {\n"
     "  y = Reshape <shape = [3, 2]> (x)\n}",
     NULL},
    {"Reshape 5->4: from IR 4 an initializer listed as input can be overridden", 4, 5, 4,
     "g (float[2,3] x, int64[2] s) => (float[3,2] y) <int64[2] s = {3, 2}> {\n"
     "  y = Reshape (x, s)\n}",
     NULL, "input 's' (shape) must be a constant"},
    {"Reshape 5->4 needs a constant shape", 3, 5, 4,
     "g (float[2,3] x, int64[2] s) => (float[3,2] y) {\n  y = Reshape (x, s)\n}", NULL,
     "(Reshape) in graph 'g': input 's' (shape) must be a constant"},
    {"Upsample 8->11 through Resize", 4, 8, 11,
     "g (float[1,1,2,2] x) => (float[1,1,4,4] y) {\n"
     "  y = Upsample <mode = \"nearest\", scales = [1.0, 1.0, 2.0, 2.0]> (x)\n}",
     "g (float[1,1,2,2] x) => (float[1,1,4,4] y) {\n"
     "  [scales_v9_0] scales_v9_0 = Constant <value = float[4] scales_v9_0 {1, 1, 2, 2}> ()\n"
     "  [roi_v11_1] roi_v11_1 = Constant <value = float[0] roi_v11_1 {}> ()\n"
     "  y = Resize <mode = \"nearest\", coordinate_transformation_mode = \"asymmetric\", "
     "nearest_mode = \"floor\"> (x, roi_v11_1, scales_v9_0)\n}",
     NULL},
    {"Resize 11->10 refuses half_pixel", 6, 11, 10,
     "g (float[1,1,2,2] x, float[0] r, float[4] s) => (float[1,1,4,4] y) {\n"
     "  y = Resize <mode = \"linear\"> (x, r, s)\n}",
     NULL, "coordinate_transformation_mode 'half_pixel' has no equivalent in Resize-10"},
    {"Slice and TopK 9->10", 4, 9, 10,
     "g (float[4,5] x) => (float[2,3] y, float[4,2] v, int64[4,2] i) {\n"
     "  y = Slice <starts = [1, 0], ends = [3, 3], axes = [0, 1]> (x)\n"
     "  v, i = TopK <k = 2> (x)\n}",
     "g (float[4,5] x) => (float[2,3] y, float[4,2] v, int64[4,2] i) {\n"
     "  [starts_v10_0] starts_v10_0 = Constant <value = int64[2] starts_v10_0 {1, 0}> ()\n"
     "  [ends_v10_1] ends_v10_1 = Constant <value = int64[2] ends_v10_1 {3, 3}> ()\n"
     "  [axes_v10_2] axes_v10_2 = Constant <value = int64[2] axes_v10_2 {0, 1}> ()\n"
     "  y = Slice (x, starts_v10_0, ends_v10_1, axes_v10_2)\n"
     "  [k_v10_3] k_v10_3 = Constant <value = int64[1] k_v10_3 {2}> ()\n"
     "  v, i = TopK (x, k_v10_3)\n}",
     NULL},
    {"Clip and Pad 10->11", 5, 10, 11,
     "g (float[4,5] x) => (float[4,5] y, float[6,5] z) {\n"
     "  y = Clip <min = -1.0, max = 1.0> (x)\n"
     "  z = Pad <pads = [1, 0, 1, 0], value = 2.0> (x)\n}",
     "g (float[4,5] x) => (float[4,5] y, float[6,5] z) {\n"
     "  [min_v11_0] min_v11_0 = Constant <value = float min_v11_0 {-1}> ()\n"
     "  [max_v11_1] max_v11_1 = Constant <value = float max_v11_1 {1}> ()\n"
     "  y = Clip (x, min_v11_0, max_v11_1)\n"
     "  [pads_v11_2] pads_v11_2 = Constant <value = int64[4] pads_v11_2 {1, 0, 1, 0}> ()\n"
     "  [value_v11_3] value_v11_3 = Constant <value = float value_v11_3 {2}> ()\n"
     "  z = Pad (x, pads_v11_2, value_v11_3)\n}",
     NULL},
    {"Clip and Pad 11->10 from Constant nodes (then unused, removed)", 5, 11, 10,
     "g (float[4,5] x) => (float[4,5] y, float[6,5] z) {\n"
     "  lo = Constant <value = float {-1}> ()\n  y = Clip (x, lo)\n"
     "  p = Constant <value = int64[4] {1, 0, 1, 0}> ()\n  z = Pad (x, p)\n}",
     "g (float[4,5] x) => (float[4,5] y, float[6,5] z) {\n"
     "  y = Clip <min = -1.0> (x)\n  z = Pad <pads = [1, 0, 1, 0]> (x)\n}",
     NULL},
    {"Scatter 10->11 becomes ScatterElements", 5, 10, 11,
     "g (float[3,3] x, int64[1,2] i, float[1,2] u) => (float[3,3] y) {\n"
     "  y = Scatter <axis = 1> (x, i, u)\n}",
     "g (float[3,3] x, int64[1,2] i, float[1,2] u) => (float[3,3] y) {\n"
     "  y = ScatterElements <axis = 1> (x, i, u)\n}",
     NULL},
    {"Dropout 11->12: ratio becomes an input", 6, 11, 12,
     "g (float[3] x) => (float[3] y) {\n  y = Dropout <ratio = 0.25> (x)\n}",
     "g (float[3] x) => (float[3] y) {\n"
     "  [ratio_v12_0] ratio_v12_0 = Constant <value = float ratio_v12_0 {0.25}> ()\n"
     "  y = Dropout (x, ratio_v12_0)\n}",
     NULL},
    {"Squeeze in a subgraph and Split 12->13", 7, 12, 13,
     "g (bool c, float[2,1,3] x) => (float[2,3] y, float[1,3] s0, float[1,3] s1) {\n"
     "  y = If (c) <then_branch = t () => (float[2,3] a) { a = Squeeze <axes = [1]> (x) }, "
     "else_branch = e () => (float[2,3] b) { b = Squeeze <axes = [-2]> (x) }>\n"
     "  s0, s1 = Split <axis = 0, split = [1, 1]> (y)\n}",
     "g (bool c, float[2,1,3] x) => (float[2,3] y, float[1,3] s0, float[1,3] s1) {\n"
     "  y = If (c) <then_branch = t () => (float[2,3] a) {\n"
     "    [axes_v13_0] axes_v13_0 = Constant <value = int64[1] axes_v13_0 {1}> ()\n"
     "    a = Squeeze (x, axes_v13_0) }, "
     "else_branch = e () => (float[2,3] b) {\n"
     "    [axes_v13_1] axes_v13_1 = Constant <value = int64[1] axes_v13_1 {-2}> ()\n"
     "    b = Squeeze (x, axes_v13_1) }>\n"
     "  [split_v13_2] split_v13_2 = Constant <value = int64[2] split_v13_2 {1, 1}> ()\n"
     "  s0, s1 = Split <axis = 0> (y, split_v13_2)\n}",
     NULL},
    {"Softmax 12->13 on a middle axis: Flatten, Softmax, Reshape", 7, 12, 13,
     "g (float[2,3,4] x) => (float[2,3,4] y) {\n  y = Softmax <axis = 1> (x)\n}",
     "g (float[2,3,4] x) => (float[2,3,4] y) {\n"
     "  [x_v13_0] x_v13_0 = Flatten <axis = 1> (x)\n  [x_v13_1] x_v13_1 = Shape (x)\n"
     "  y_v13_2 = Softmax <axis = -1> (x_v13_0)\n  [y_v13_2] y = Reshape (y_v13_2, x_v13_1)\n}",
     NULL},
    {"Softmax 12->13 on the last axis", 7, 12, 13,
     "g (float[2,3,4] x) => (float[2,3,4] y) {\n  y = Softmax <axis = 2> (x)\n}",
     "g (float[2,3,4] x) => (float[2,3,4] y) {\n  y = Softmax <axis = -1> (x)\n}", NULL},
    {"LogSoftmax 13->12 on a middle axis: Transpose around it", 7, 13, 12,
     "g (float[2,3,4] x) => (float[2,3,4] y) {\n  y = LogSoftmax <axis = 1> (x)\n}",
     "g (float[2,3,4] x) => (float[2,3,4] y) {\n"
     "  [x_v12_0] x_v12_0 = Transpose <perm = [0, 2, 1]> (x)\n"
     "  y_v12_1 = LogSoftmax <axis = 2> (x_v12_0)\n"
     "  [y_v12_1] y = Transpose <perm = [0, 2, 1]> (y_v12_1)\n}",
     NULL},
    {"ReduceSum 13->12 needs constant axes", 7, 13, 12,
     "g (float[2,3] x, int64[1] ax) => (float[1,3] y) {\n  y = ReduceSum (x, ax)\n}", NULL,
     "(ReduceSum) in graph 'g': input 'ax' (axes) must be a constant"},
    {"Constant 12->11: value_ints becomes a tensor", 6, 12, 11,
     "g () => (int64[3] y) {\n  y = Constant <value_ints = [1, 2, 3]> ()\n}",
     "g () => (int64[3] y) {\n  y = Constant <value = int64[3] {1, 2, 3}> ()\n}", NULL},
    {"BatchNormalization 13->14: training outputs", 7, 13, 14,
     "g (float[2,3] x, float[3] s, float[3] b, float[3] m, float[3] v) => (float[2,3] y, "
     "float[3] rm, float[3] rv) {\n  y, rm, rv = BatchNormalization <momentum = 0.5> (x, s, b, "
     "m, v)\n}",
     "g (float[2,3] x, float[3] s, float[3] b, float[3] m, float[3] v) => (float[2,3] y, "
     "float[3] rm, float[3] rv) {\n  y, rm, rv = BatchNormalization <momentum = 0.5, "
     "training_mode = 1> (x, s, b, m, v)\n}",
     NULL},
    {"Split 17->18 num_outputs and ReduceMean axes", 7, 17, 18,
     "g (float[4,3] x) => (float[2,3] a, float[2,3] b, float[1,3] m) {\n"
     "  a, b = Split <axis = 0> (x)\n  m = ReduceMean <axes = [0], keepdims = 1> (a)\n}",
     "g (float[4,3] x) => (float[2,3] a, float[2,3] b, float[1,3] m) {\n"
     "  a, b = Split <axis = 0, num_outputs = 2> (x)\n"
     "  [axes_v18_0] axes_v18_0 = Constant <value = int64[1] axes_v18_0 {0}> ()\n"
     "  m = ReduceMean <keepdims = 1> (a, axes_v18_0)\n}",
     NULL},
    {"Split 18->17 uneven num_outputs", 7, 18, 17,
     "g (float[5,3] x) => (float[3,3] a, float[2,3] b) {\n"
     "  a, b = Split <axis = 0, num_outputs = 2> (x)\n}",
     "g (float[5,3] x) => (float[3,3] a, float[2,3] b) {\n"
     "  [split_v17_0] split_v17_0 = Constant <value = int64[2] split_v17_0 {3, 2}> ()\n"
     "  a, b = Split <axis = 0> (x, split_v17_0)\n}",
     NULL},
    {"DFT 19->20: axis becomes an input", 9, 19, 20,
     "g (float[2,8,1] x) => (float[2,8,2] y) {\n  y = DFT <axis = 1> (x)\n}",
     "g (float[2,8,1] x) => (float[2,8,2] y) {\n"
     "  [axis_v20_0] axis_v20_0 = Constant <value = int64 axis_v20_0 {1}> ()\n"
     "  y = DFT (x, \"\", axis_v20_0)\n}",
     NULL},
    {"GridSample 19->20 renames the modes", 9, 19, 20,
     "g (float[1,1,3,3] x, float[1,2,2,2] grid) => (float[1,1,2,2] y) {\n"
     "  y = GridSample <mode = \"bicubic\"> (x, grid)\n}",
     "g (float[1,1,3,3] x, float[1,2,2,2] grid) => (float[1,1,2,2] y) {\n"
     "  y = GridSample <mode = \"cubic\"> (x, grid)\n}",
     NULL},
    {"GroupNormalization 18->21: scale per channel", 9, 18, 21,
     "g (float[2,4,3] x, float[2] s, float[2] b) => (float[2,4,3] y) {\n"
     "  y = GroupNormalization <num_groups = 2> (x, s, b)\n}",
     "g (float[2,4,3] x, float[2] s, float[2] b) => (float[2,4,3] y) {\n"
     "  [axes_v21_0] axes_v21_0 = Constant <value = int64[1] axes_v21_0 {1}> ()\n"
     "  [expand_shape_v21_1] expand_shape_v21_1 = Constant <value = int64[2] "
     "expand_shape_v21_1 {2, 2}> ()\n"
     "  [channels_v21_2] channels_v21_2 = Constant <value = int64[1] channels_v21_2 {4}> ()\n"
     "  s_v21_3 = Unsqueeze (s, axes_v21_0)\n  s_v21_4 = Expand (s_v21_3, expand_shape_v21_1)\n"
     "  s_v21_5 = Reshape (s_v21_4, channels_v21_2)\n"
     "  b_v21_6 = Unsqueeze (b, axes_v21_0)\n  b_v21_7 = Expand (b_v21_6, expand_shape_v21_1)\n"
     "  b_v21_8 = Reshape (b_v21_7, channels_v21_2)\n"
     "  y = GroupNormalization <num_groups = 2> (x, s_v21_5, b_v21_8)\n}",
     NULL},
    {"Scan 8->9: batch of 1 squeezed", 3, 8, 9,
     "g (float[1,2] initial, float[1,3,2] x) => (float[1,2] y, float[1,3,2] z) {\n"
     "  y, z = Scan (\"\", initial, x) <num_scan_inputs = 1, directions = [1], body = b "
     "(float[2] si, float[2] nx) => (float[2] so, float[2] sc) {\n"
     "    so = Add (si, nx)\n    sc = Identity (so)\n  }>\n}",
     "g (float[1,2] initial, float[1,3,2] x) => (float[1,2] y, float[1,3,2] z) {\n"
     "  initial_v9_0 = Squeeze <axes = [0]> (initial)\n  x_v9_1 = Squeeze <axes = [0]> (x)\n"
     "  y_v9_2, z_v9_3 = Scan (initial_v9_0, x_v9_1) <num_scan_inputs = 1, body = b "
     "(float[2] si, float[2] nx) => (float[2] so, float[2] sc) {\n"
     "    so = Add (si, nx)\n    sc = Identity (so)\n  }, scan_input_directions = [1]>\n"
     "  y = Unsqueeze <axes = [0]> (y_v9_2)\n  z = Unsqueeze <axes = [0]> (z_v9_3)\n}",
     NULL},
    {"Scan 8->9: unknown batch refused", 3, 8, 9,
     "g (float[N,2] initial, float[N,3,2] x) => (float[N,2] y) {\n"
     "  y, z = Scan (\"\", initial, x) <num_scan_inputs = 1, body = b "
     "(float[2] si, float[2] nx) => (float[2] so, float[2] sc) {\n"
     "    so = Add (si, nx)\n    sc = Identity (so)\n  }>\n}",
     NULL, "(Scan) in graph 'g': the batch axis of 'initial' must be known to be 1"},
    {"Dropout 9->10: an unused mask is dropped", 4, 9, 10,
     "g (float[2] x) => (float[2] y) {\n  y, mask = Dropout (x)\n}",
     "g (float[2] x) => (float[2] y) {\n  y = Dropout (x)\n}", NULL},
    {"Dropout 9->10: a used mask is refused", 4, 9, 10,
     "g (float[2] x) => (float[2] y, float[2] m) {\n  y, m = Dropout (x)\n}", NULL,
     "mask 'm' changes type to bool at opset 10 and is used"},
    {"negative axes made positive going below 11", 6, 11, 10,
     "g (float[2,3,4] x) => (float[2,12] y, float[2,3,1,4] z, float[2,3] w) {\n"
     "  y = Flatten <axis = -2> (x)\n  z = Unsqueeze <axes = [-2]> (x)\n"
     "  w = ReduceSum <axes = [-1], keepdims = 0> (x)\n}",
     "g (float[2,3,4] x) => (float[2,12] y, float[2,3,1,4] z, float[2,3] w) {\n"
     "  y = Flatten <axis = 1> (x)\n  z = Unsqueeze <axes = [2]> (x)\n"
     "  w = ReduceSum <axes = [2], keepdims = 0> (x)\n}",
     NULL},
    {"negative axis with an unknown rank is refused", 6, 11, 10,
     "g (float[6] x, int64[N] s) => (float y) {\n  r = Reshape (x, s)\n"
     "  y = Softmax <axis = -1> (r)\n}",
     NULL, "negative axis needs the rank of 'r'"},
    {"Upsample 6->7: bilinear is linear", 3, 6, 7,
     "g (float[1,1,2,2] x) => (float[1,1,4,6] y) {\n"
     "  y = Upsample <mode = \"bilinear\", height_scale = 2.0, width_scale = 3.0> (x)\n}",
     "g (float[1,1,2,2] x) => (float[1,1,4,6] y) {\n"
     "  y = Upsample <mode = \"linear\", scales = [1.0, 1.0, 2.0, 3.0]> (x)\n}",
     NULL},
    {"Pad 19->18: mode wrap is refused", 9, 19, 18,
     "g (float[2,3] x) => (float[2,5] y) <int64[4] p = {0, 1, 0, 1}> {\n"
     "  y = Pad <mode = \"wrap\"> (x, p)\n}",
     NULL, "(Pad) in graph 'g': mode 'wrap' has no equivalent at opset 18"},
    {"a model-local function from its own import", 8, 12, 13,
     "g (float[2,3] x) => (float[2] y) {\n  y = local.SumRows (x)\n}\n"
     "<domain: \"local\", opset_import: [\"\" : 12]>\n"
     "SumRows (a) => (b) {\n  b = ReduceSum <axes = [1], keepdims = 0> (a)\n}",
     "g (float[2,3] x) => (float[2] y) {\n  y = local.SumRows (x)\n}\n"
     "<domain: \"local\", opset_import: [\"\" : 13]>\n"
     "SumRows (a) => (b) {\n"
     "  [axes_v13_0] axes_v13_0 = Constant <value = int64[1] axes_v13_0 {1}> ()\n"
     "  b = ReduceSum <keepdims = 0> (a, axes_v13_0)\n}",
     NULL},
    {"a node that does not match its own schema", 7, 10, 9,
     "g (float[2,3] x) => (float[2,3] y, int64[2,3] i) {\n  y, i = TopK (x)\n}", NULL,
     "(TopK) in graph 'g': the node does not match TopK-10 (1 inputs, 2 outputs)"},
    {"an op newer than the target", 9, 20, 19,
     "g (float[3] x) => (float[3] y) {\n  y = Gelu (x)\n}", NULL,
     "(Gelu) in graph 'g': Gelu does not exist before opset 20"},
    {"Celu 28->27: float16 is refused", 10, 28, 27,
     "g (float16[3] x) => (float16[3] y) {\n  y = Celu (x)\n}", NULL,
     "input 'x' has type tensor(float16), which Celu-12 does not accept"},
    {"Range 27->26 drops the default stash_type", 10, 27, 26,
     "g (int64 a, int64 b, int64 d) => (int64[unk] y) {\n  y = Range <stash_type = 1> (a, b, d)\n}",
     "g (int64 a, int64 b, int64 d) => (int64[unk] y) {\n  y = Range (a, b, d)\n}", NULL},
    {"an attribute added later with a non-default value", 7, 12, 11,
     "g (float[2,3] x) => (int64[1,3] y) {\n  y = ArgMax <axis = 0, select_last_index = 1> (x)\n}",
     NULL, "attribute 'select_last_index' has no equivalent in ArgMax-11"},
};

static ox_model *parse(const char *graph, int ir, int opset, ox_err *e) {
  char text[6000];
  /* a model-local function (domain "local") may follow the graph */
  snprintf(text, sizeof text, "<ir_version: %d, opset_import: [\"\" : %d%s]>\n%s", ir, opset,
           strstr(graph, "local.") ? ", \"local\" : 1" : "", graph);
  ox_model *m = ox_model_new();
  if (!m) return NULL;
  if (ox_text_parse_model(text, strlen(text), "case", m->arena, &m->proto, e) != OX_OK) {
    ox_model_free(m);
    return NULL;
  }
  return m;
}

static int run(const vcase *c) {
  ox_err e = {0};
  ox_model *m = parse(c->before, c->ir, c->from, &e);
  if (!m) {
    fprintf(stderr, "%s: the 'before' model does not parse: %s\n", c->name, e.msg);
    return 1;
  }
  int fails = 0;
  int rc = ox_convert_opset(m, c->to, &e);
  if (!c->after) {
    if (rc == OX_OK) {
      fprintf(stderr, "%s: converted, expected the refusal '%s'\n", c->name, c->error);
      fails++;
    } else if (!strstr(e.msg, c->error)) {
      fprintf(stderr, "%s: refused with\n  %s\nexpected\n  ...%s...\n", c->name, e.msg, c->error);
      fails++;
    }
    ox_model_free(m);
    return fails;
  }
  if (rc != OX_OK) {
    fprintf(stderr, "%s: refused: %s\n", c->name, e.msg);
    ox_model_free(m);
    return 1;
  }
  ox_model *want = parse(c->after, c->ir, c->to, &e);
  if (!want) {
    fprintf(stderr, "%s: the 'after' model does not parse: %s\n", c->name, e.msg);
    ox_model_free(m);
    return 1;
  }
  ox_buf got = {0}, exp = {0};
  ox_text_print_model(m->proto, &got, &e);
  ox_text_print_model(want->proto, &exp, &e);
  if (got.size != exp.size || memcmp(got.data, exp.data, got.size) != 0) {
    fprintf(stderr, "%s: got\n%.*s\nexpected\n%.*s\n", c->name, (int)got.size,
            (const char *)got.data, (int)exp.size, (const char *)exp.data);
    fails++;
  }
  ox_check_opts co = {0};
  ox_buf report = {0};
  if (ox_check_model(m, &co, &report, NULL, &e) != OX_OK) {
    fprintf(stderr, "%s: the converted model fails the checker:\n%.*s\n", c->name, (int)report.size,
            (const char *)report.data);
    fails++;
  }
  ox_buf_free(&report);
  ox_buf_free(&got);
  ox_buf_free(&exp);
  ox_model_free(want);
  ox_model_free(m);
  return fails;
}

/* A model converted to its own opset is unchanged; a model without the
 * default domain needs nothing; targets outside the known range fail. */
static int edges(void) {
  int fails = 0;
  ox_err e = {0};
  ox_model *m = parse("g (float[2] x) => (float[2] y) {\n  y = Relu (x)\n}", 7, 13, &e);
  if (!m || ox_convert_opset(m, 13, &e) != OX_OK) fails++;
  if (m && ox_convert_opset(m, 0, &e) == OX_OK) {
    fprintf(stderr, "target 0 accepted\n");
    fails++;
  }
  if (m && ox_convert_opset(m, 1000, &e) == OX_OK) {
    fprintf(stderr, "target 1000 accepted\n");
    fails++;
  }
  ox_model_free(m);
  return fails;
}

/* The public entry point: a NULL model, a conversion, a refusal. */
static int api(void) {
  int fails = 0;
  onnxc_error err = {0};
  if (onnxc_convert_opset(NULL, 13, &err) != ONNXC_ERR_INVALID_ARG) fails++;
  const char *text =
      "<ir_version: 7, opset_import: [\"\" : 12]>\n"
      "g (float[2,3] x) => (float[2] y) {\n  y = ReduceSum <axes = [1], keepdims = 0> (x)\n}";
  onnxc_model *m = NULL;
  if (onnxc_model_parse_text(text, strlen(text), "api", &m, &err) != ONNXC_OK) return fails + 1;
  if (onnxc_convert_opset(m, 13, &err) != ONNXC_OK) {
    fprintf(stderr, "api: %s\n", err.msg);
    fails++;
  }
  char *out = NULL;
  if (onnxc_model_print(m, &out, &err) == ONNXC_OK) {
    if (!strstr(out, "ReduceSum <keepdims = 0> (x, axes_v13_0)")) {
      fprintf(stderr, "api: unexpected result\n%s\n", out);
      fails++;
    }
    free(out);
  }
  if (onnxc_convert_opset(m, 20, &err) != ONNXC_OK) fails++;
  /* Gelu does not exist before 20; going down from 20 to 19 must name it */
  onnxc_model_free(m);
  const char *gelu =
      "<ir_version: 9, opset_import: [\"\" : 20]>\n"
      "g (float[3] x) => (float[3] y) {\n  y = Gelu (x)\n}";
  if (onnxc_model_parse_text(gelu, strlen(gelu), "api", &m, &err) != ONNXC_OK) return fails + 1;
  if (onnxc_convert_opset(m, 19, &err) != ONNXC_ERR_UNSUPPORTED || !strstr(err.msg, "Gelu")) {
    fprintf(stderr, "api: Gelu 20->19 not refused as expected: %s\n", err.msg);
    fails++;
  }
  onnxc_model_free(m);
  return fails;
}

int main(void) {
  int fails = 0;
  size_t n = sizeof cases / sizeof *cases;
  for (size_t i = 0; i < n; i++) fails += run(&cases[i]);
  fails += edges();
  fails += api();
  printf("test_version: %zu cases, %d failures\n", n, fails);
  return fails ? 1 : 0;
}
