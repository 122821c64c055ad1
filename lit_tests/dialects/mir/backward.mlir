// RUN: RLX_ROUNDTRIP
// RUN: rlx-opt %s --split-input-file --print-op-generic | filecheck %s --check-prefix=GENERIC

// CHECK-LABEL: func.func @activations
// GENERIC-LABEL: "func.func"() <{sym_name = "activations"
func.func @activations(%x: tensor<2x3xf32>, %dy: tensor<2x3xf32>, %h: tensor<?x3xbf16>, %dh: tensor<4x3xbf16>) -> tensor<2x3xf32> {
  // CHECK-NEXT: %0 = mir.relu_backward %x, %dy : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x3xf32>
  // GENERIC: "mir.relu_backward"(%x, %dy) : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x3xf32>
  %0 = mir.relu_backward %x, %dy : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x3xf32>
  // CHECK-NEXT: %1 = mir.activation_backward gelu_approx %x, %0 : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x3xf32>
  // GENERIC: "mir.activation_backward"(%x, %0) <{kind = #mir<activation gelu_approx>}> : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x3xf32>
  %1 = mir.activation_backward gelu_approx %x, %0 : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x3xf32>
  // A dynamic dim of x is refined by the cotangent.
  // CHECK-NEXT: %2 = mir.activation_backward tan %h, %dh : (tensor<?x3xbf16>, tensor<4x3xbf16>) -> tensor<4x3xbf16>
  %2 = mir.activation_backward tan %h, %dh : (tensor<?x3xbf16>, tensor<4x3xbf16>) -> tensor<4x3xbf16>
  // CHECK-NEXT: %3 = mir.stop_gradient %1 : (tensor<2x3xf32>) -> tensor<2x3xf32>
  %3 = mir.stop_gradient %1 : (tensor<2x3xf32>) -> tensor<2x3xf32>
  func.return %3 : tensor<2x3xf32>
}

// -----

// CHECK-LABEL: func.func @norms
func.func @norms(%x: tensor<2x3x4xf32>, %g: tensor<4xf32>, %gc: tensor<3xf32>, %dy: tensor<2x3x4xf32>) -> tensor<2x3x4xf32> {
  // CHECK-NEXT: %0 = mir.layer_norm_backward_input %x, %g, %dy axis = -1 eps = 1.000000e-05 : (tensor<2x3x4xf32>, tensor<4xf32>, tensor<2x3x4xf32>) -> tensor<2x3x4xf32>
  // GENERIC: "mir.layer_norm_backward_input"(%x, %g, %dy) <{axis = -1 : i64, eps = 1.000000e-05 : f32}>
  %0 = mir.layer_norm_backward_input %x, %g, %dy axis = -1 eps = 1.0e-05 : (tensor<2x3x4xf32>, tensor<4xf32>, tensor<2x3x4xf32>) -> tensor<2x3x4xf32>
  // CHECK-NEXT: %1 = mir.layer_norm_backward_gamma %x, %dy axis = 1 eps = 1.000000e-05 : (tensor<2x3x4xf32>, tensor<2x3x4xf32>) -> tensor<3x4xf32>
  %1 = mir.layer_norm_backward_gamma %x, %dy axis = 1 eps = 1.0e-05 : (tensor<2x3x4xf32>, tensor<2x3x4xf32>) -> tensor<3x4xf32>
  // CHECK-NEXT: %2 = mir.rms_norm_backward_input %x, %g, %dy axis = -1 eps = 1.000000e-06 : (tensor<2x3x4xf32>, tensor<4xf32>, tensor<2x3x4xf32>) -> tensor<2x3x4xf32>
  %2 = mir.rms_norm_backward_input %x, %g, %dy axis = -1 eps = 1.0e-06 : (tensor<2x3x4xf32>, tensor<4xf32>, tensor<2x3x4xf32>) -> tensor<2x3x4xf32>
  // CHECK-NEXT: %3 = mir.rms_norm_backward_gamma %x, %dy axis = -1 eps = 1.000000e-06 : (tensor<2x3x4xf32>, tensor<2x3x4xf32>) -> tensor<4xf32>
  %3 = mir.rms_norm_backward_gamma %x, %dy axis = -1 eps = 1.0e-06 : (tensor<2x3x4xf32>, tensor<2x3x4xf32>) -> tensor<4xf32>
  // CHECK-NEXT: %4 = mir.rms_norm_backward_beta %dy axis = -2 : (tensor<2x3x4xf32>) -> tensor<3x4xf32>
  // GENERIC: "mir.rms_norm_backward_beta"(%dy) <{axis = -2 : i64}>
  %4 = mir.rms_norm_backward_beta %dy axis = -2 : (tensor<2x3x4xf32>) -> tensor<3x4xf32>
  // CHECK-NEXT: %5 = mir.group_norm_backward_input %x, %gc, %dy num_groups = 3 eps = 1.000000e-05 : (tensor<2x3x4xf32>, tensor<3xf32>, tensor<2x3x4xf32>) -> tensor<2x3x4xf32>
  %5 = mir.group_norm_backward_input %x, %gc, %dy num_groups = 3 eps = 1.0e-05 : (tensor<2x3x4xf32>, tensor<3xf32>, tensor<2x3x4xf32>) -> tensor<2x3x4xf32>
  // CHECK-NEXT: %6 = mir.group_norm_backward_gamma %x, %dy num_groups = 1 eps = 1.000000e-05 : (tensor<2x3x4xf32>, tensor<2x3x4xf32>) -> tensor<3xf32>
  %6 = mir.group_norm_backward_gamma %x, %dy num_groups = 1 eps = 1.0e-05 : (tensor<2x3x4xf32>, tensor<2x3x4xf32>) -> tensor<3xf32>
  // CHECK-NEXT: %7 = mir.group_norm_backward_beta %dy : (tensor<2x3x4xf32>) -> tensor<3xf32>
  %7 = mir.group_norm_backward_beta %dy : (tensor<2x3x4xf32>) -> tensor<3xf32>
  func.return %0 : tensor<2x3x4xf32>
}

// -----

// CHECK-LABEL: func.func @heads
func.func @heads(%q: tensor<2x4x3x8xf32>, %k: tensor<2x2x5x8xf32>, %v: tensor<2x2x5x8xf32>, %dy: tensor<2x4x3x8xf32>, %m: tensor<2x5xf32>, %cos: tensor<3x2xf32>, %sin: tensor<3x2xf32>) -> tensor<2x2x5x8xf32> {
  // CHECK-NEXT: %0 = mir.rope_backward %dy, %cos, %sin head_dim = 8 n_rot = 4 : (tensor<2x4x3x8xf32>, tensor<3x2xf32>, tensor<3x2xf32>) -> tensor<2x4x3x8xf32>
  %0 = mir.rope_backward %dy, %cos, %sin head_dim = 8 n_rot = 4 : (tensor<2x4x3x8xf32>, tensor<3x2xf32>, tensor<3x2xf32>) -> tensor<2x4x3x8xf32>
  // CHECK-NEXT: %dq = mir.attention_backward query %q, %k, %v, %0 num_heads = 4 head_dim = 8 mask_kind = causal : (tensor<2x4x3x8xf32>, tensor<2x2x5x8xf32>, tensor<2x2x5x8xf32>, tensor<2x4x3x8xf32>) -> tensor<2x4x3x8xf32>
  // GENERIC: "mir.attention_backward"(%q, %k, %v, %0) <{wrt = #mir<attention_wrt query>, num_heads = 4 : i64, head_dim = 8 : i64, mask_kind = #mir<mask_kind causal>}>
  %dq = mir.attention_backward query %q, %k, %v, %0 num_heads = 4 head_dim = 8 mask_kind = causal : (tensor<2x4x3x8xf32>, tensor<2x2x5x8xf32>, tensor<2x2x5x8xf32>, tensor<2x4x3x8xf32>) -> tensor<2x4x3x8xf32>
  // CHECK-NEXT: %dk = mir.attention_backward key %q, %k, %v, %dy, %m num_heads = 4 head_dim = 8 mask_kind = custom score_scale = 5.000000e-01 attn_logit_softcap = 3.000000e+01 : (tensor<2x4x3x8xf32>, tensor<2x2x5x8xf32>, tensor<2x2x5x8xf32>, tensor<2x4x3x8xf32>, tensor<2x5xf32>) -> tensor<2x2x5x8xf32>
  %dk = mir.attention_backward key %q, %k, %v, %dy, %m num_heads = 4 head_dim = 8 mask_kind = custom score_scale = 0.5 attn_logit_softcap = 30.0 : (tensor<2x4x3x8xf32>, tensor<2x2x5x8xf32>, tensor<2x2x5x8xf32>, tensor<2x4x3x8xf32>, tensor<2x5xf32>) -> tensor<2x2x5x8xf32>
  // CHECK-NEXT: %dv = mir.attention_backward value %q, %k, %v, %dy num_heads = 4 head_dim = 8 mask_kind = sliding_window window = 2 : (tensor<2x4x3x8xf32>, tensor<2x2x5x8xf32>, tensor<2x2x5x8xf32>, tensor<2x4x3x8xf32>) -> tensor<2x2x5x8xf32>
  %dv = mir.attention_backward value %q, %k, %v, %dy num_heads = 4 head_dim = 8 mask_kind = sliding_window window = 2 : (tensor<2x4x3x8xf32>, tensor<2x2x5x8xf32>, tensor<2x2x5x8xf32>, tensor<2x4x3x8xf32>) -> tensor<2x2x5x8xf32>
  func.return %dv : tensor<2x2x5x8xf32>
}

// -----

// CHECK-LABEL: func.func @windows
func.func @windows(%x: tensor<?x4x7x7xf32>, %w: tensor<6x2x3x3xf32>, %dy: tensor<?x6x3x3xf32>, %dp: tensor<?x4x4x4xf32>, %x1: tensor<2x3x1x9xf64>, %w1: tensor<2x3x1x3xf64>, %dy1: tensor<2x2x1x4xf64>) -> tensor<?x4x7x7xf32> {
  // CHECK-NEXT: %0 = mir.conv_backward_input %dy, %w input_size = [7, 7] kernel_size = [3, 3] stride = [2, 2] padding = [0, 0] dilation = [1, 1] groups = 2 : (tensor<?x6x3x3xf32>, tensor<6x2x3x3xf32>) -> tensor<?x4x7x7xf32>
  // GENERIC: "mir.conv_backward_input"(%dy, %w) <{input_size = array<i64: 7, 7>, kernel_size = array<i64: 3, 3>, stride = array<i64: 2, 2>, padding = array<i64: 0, 0>, dilation = array<i64: 1, 1>, groups = 2 : i64}>
  %0 = mir.conv_backward_input %dy, %w input_size = [7, 7] kernel_size = [3, 3] stride = [2, 2] padding = [0, 0] dilation = [1, 1] groups = 2 : (tensor<?x6x3x3xf32>, tensor<6x2x3x3xf32>) -> tensor<?x4x7x7xf32>
  // CHECK-NEXT: %1 = mir.conv_backward_weight %x, %dy kernel_size = [3, 3] stride = [2, 2] padding = [0, 0] dilation = [1, 1] groups = 2 : (tensor<?x4x7x7xf32>, tensor<?x6x3x3xf32>) -> tensor<6x2x3x3xf32>
  %1 = mir.conv_backward_weight %x, %dy kernel_size = [3, 3] stride = [2, 2] padding = [0, 0] dilation = [1, 1] groups = 2 : (tensor<?x4x7x7xf32>, tensor<?x6x3x3xf32>) -> tensor<6x2x3x3xf32>
  // A 1-D convolution is the H = 1 case.
  // CHECK-NEXT: %2 = mir.conv_backward_input %dy1, %w1 input_size = [1, 9] kernel_size = [1, 3] stride = [1, 2] padding = [0, 0] dilation = [1, 1] groups = 1 : (tensor<2x2x1x4xf64>, tensor<2x3x1x3xf64>) -> tensor<2x3x1x9xf64>
  %2 = mir.conv_backward_input %dy1, %w1 input_size = [1, 9] kernel_size = [1, 3] stride = [1, 2] padding = [0, 0] dilation = [1, 1] groups = 1 : (tensor<2x2x1x4xf64>, tensor<2x3x1x3xf64>) -> tensor<2x3x1x9xf64>
  // CHECK-NEXT: %3 = mir.conv_backward_weight %x1, %dy1 kernel_size = [1, 3] stride = [1, 2] padding = [0, 0] dilation = [1, 1] groups = 1 : (tensor<2x3x1x9xf64>, tensor<2x2x1x4xf64>) -> tensor<2x3x1x3xf64>
  %3 = mir.conv_backward_weight %x1, %dy1 kernel_size = [1, 3] stride = [1, 2] padding = [0, 0] dilation = [1, 1] groups = 1 : (tensor<2x3x1x9xf64>, tensor<2x2x1x4xf64>) -> tensor<2x3x1x3xf64>
  // CHECK-NEXT: %4 = mir.pool_backward %x, %dp kind = max kernel_size = [2, 2] stride = [2, 2] padding = [1, 1] : (tensor<?x4x7x7xf32>, tensor<?x4x4x4xf32>) -> tensor<?x4x7x7xf32>
  // GENERIC: "mir.pool_backward"(%x, %dp) <{kind = #mir<reduce_kind max>, kernel_size = array<i64: 2, 2>, stride = array<i64: 2, 2>, padding = array<i64: 1, 1>}>
  %4 = mir.pool_backward %x, %dp kind = max kernel_size = [2, 2] stride = [2, 2] padding = [1, 1] : (tensor<?x4x7x7xf32>, tensor<?x4x4x4xf32>) -> tensor<?x4x7x7xf32>
  func.return %0 : tensor<?x4x7x7xf32>
}

// -----

// CHECK-LABEL: func.func @indexing
func.func @indexing(%dy: tensor<2x3x5xf32>, %ids: tensor<3xi64>, %fids: tensor<2x3xf32>) -> tensor<2x7x5xf32> {
  // CHECK-NEXT: %0 = mir.cumsum_backward %dy axis = -1 exclusive : (tensor<2x3x5xf32>) -> tensor<2x3x5xf32>
  // GENERIC: "mir.cumsum_backward"(%dy) <{axis = -1 : i64, exclusive}>
  %0 = mir.cumsum_backward %dy axis = -1 exclusive : (tensor<2x3x5xf32>) -> tensor<2x3x5xf32>
  // CHECK-NEXT: %1 = mir.cumsum_backward %0 axis = 0 : (tensor<2x3x5xf32>) -> tensor<2x3x5xf32>
  %1 = mir.cumsum_backward %0 axis = 0 : (tensor<2x3x5xf32>) -> tensor<2x3x5xf32>
  // CHECK-NEXT: %2 = mir.gather_backward %1, %ids axis = 1 dim_size = 7 : (tensor<2x3x5xf32>, tensor<3xi64>) -> tensor<2x7x5xf32>
  // GENERIC: "mir.gather_backward"(%1, %ids) <{axis = 1 : i64, dim_size = 7 : i64}>
  %2 = mir.gather_backward %1, %ids axis = 1 dim_size = 7 : (tensor<2x3x5xf32>, tensor<3xi64>) -> tensor<2x7x5xf32>
  // Rank-2 f32-encoded indices replace one table axis by two.
  // CHECK-NEXT: %3 = mir.gather_backward %1, %fids axis = 0 dim_size = 4 : (tensor<2x3x5xf32>, tensor<2x3xf32>) -> tensor<4x5xf32>
  %3 = mir.gather_backward %1, %fids axis = 0 dim_size = 4 : (tensor<2x3x5xf32>, tensor<2x3xf32>) -> tensor<4x5xf32>
  func.return %2 : tensor<2x7x5xf32>
}
