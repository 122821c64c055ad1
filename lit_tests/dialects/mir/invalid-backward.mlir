// RUN: rlx-opt %s --split-input-file --verify-diagnostics

func.func @relu_x_int(%x: tensor<4xi32>, %dy: tensor<4xi32>) -> tensor<4xi32> {
  // expected-error@+1 {{'mir.relu_backward' x must have a floating-point element type, got i32}}
  %0 = mir.relu_backward %x, %dy : (tensor<4xi32>, tensor<4xi32>) -> tensor<4xi32>
  func.return %0 : tensor<4xi32>
}

// -----

func.func @relu_dy_shape(%x: tensor<2x3xf32>, %dy: tensor<3x2xf32>) -> tensor<2x3xf32> {
  // expected-error@+1 {{'mir.relu_backward' dy shape [3, 2] differs from the forward result shape [2, 3]}}
  %0 = mir.relu_backward %x, %dy : (tensor<2x3xf32>, tensor<3x2xf32>) -> tensor<2x3xf32>
  func.return %0 : tensor<2x3xf32>
}

// -----

func.func @relu_dy_dtype(%x: tensor<4xf32>, %dy: tensor<4xf16>) -> tensor<4xf32> {
  // expected-error@+1 {{'mir.relu_backward' dy element type f16 differs from the forward result's f32}}
  %0 = mir.relu_backward %x, %dy : (tensor<4xf32>, tensor<4xf16>) -> tensor<4xf32>
  func.return %0 : tensor<4xf32>
}

// -----

func.func @activation_result(%x: tensor<4xf32>, %dy: tensor<4xf32>) -> tensor<4xf16> {
  // expected-error@+1 {{'mir.activation_backward' inferred result type tensor<4xf32> does not match declared type tensor<4xf16>}}
  %0 = mir.activation_backward exp %x, %dy : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf16>
  func.return %0 : tensor<4xf16>
}

// -----

func.func @activation_kind(%x: tensor<4xf32>, %dy: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error@+1 {{Expected `gelu`, `gelu_approx`, `silu`, `relu`, `sigmoid`, `tanh`, `exp`, `log`, `sqrt`, `rsqrt`, `neg`, `abs`, `sin`, `cos`, `tan`, `atan`, `round`, `log1p`, `expm1`, or `erf`}}
  %0 = mir.activation_backward softplus %x, %dy : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  func.return %0 : tensor<4xf32>
}

// -----

func.func @layer_norm_eps(%x: tensor<2x4xf32>, %g: tensor<4xf32>, %dy: tensor<2x4xf32>) -> tensor<2x4xf32> {
  // expected-error@+1 {{'mir.layer_norm_backward_input' eps must be positive, got 0.0}}
  %0 = mir.layer_norm_backward_input %x, %g, %dy axis = -1 eps = 0.0 : (tensor<2x4xf32>, tensor<4xf32>, tensor<2x4xf32>) -> tensor<2x4xf32>
  func.return %0 : tensor<2x4xf32>
}

// -----

func.func @layer_norm_gamma_shape(%x: tensor<2x4xf32>, %g: tensor<3xf32>, %dy: tensor<2x4xf32>) -> tensor<2x4xf32> {
  // expected-error@+1 {{'mir.layer_norm_backward_input' gamma shape [3] does not broadcast to the normalised shape [4]}}
  %0 = mir.layer_norm_backward_input %x, %g, %dy axis = -1 eps = 1.0e-05 : (tensor<2x4xf32>, tensor<3xf32>, tensor<2x4xf32>) -> tensor<2x4xf32>
  func.return %0 : tensor<2x4xf32>
}

// -----

func.func @layer_norm_gamma_dtype(%x: tensor<2x4xf32>, %g: tensor<4xbf16>, %dy: tensor<2x4xf32>) -> tensor<2x4xf32> {
  // expected-error@+1 {{'mir.layer_norm_backward_input' gamma element type bf16 differs from the operand's f32}}
  %0 = mir.layer_norm_backward_input %x, %g, %dy axis = -1 eps = 1.0e-05 : (tensor<2x4xf32>, tensor<4xbf16>, tensor<2x4xf32>) -> tensor<2x4xf32>
  func.return %0 : tensor<2x4xf32>
}

// -----

func.func @layer_norm_axis(%x: tensor<2x4xf32>, %dy: tensor<2x4xf32>) -> tensor<4xf32> {
  // expected-error@+1 {{'mir.layer_norm_backward_gamma' axis 2 is out of range for rank 2}}
  %0 = mir.layer_norm_backward_gamma %x, %dy axis = 2 eps = 1.0e-05 : (tensor<2x4xf32>, tensor<2x4xf32>) -> tensor<4xf32>
  func.return %0 : tensor<4xf32>
}

// -----

func.func @layer_norm_gamma_result(%x: tensor<2x3x4xf32>, %dy: tensor<2x3x4xf32>) -> tensor<4xf32> {
  // expected-error@+1 {{'mir.layer_norm_backward_gamma' inferred result type tensor<3x4xf32> does not match declared type tensor<4xf32>}}
  %0 = mir.layer_norm_backward_gamma %x, %dy axis = 1 eps = 1.0e-05 : (tensor<2x3x4xf32>, tensor<2x3x4xf32>) -> tensor<4xf32>
  func.return %0 : tensor<4xf32>
}

// -----

func.func @rms_norm_dy(%x: tensor<2x4xf32>, %g: tensor<4xf32>, %dy: tensor<2x5xf32>) -> tensor<2x4xf32> {
  // expected-error@+1 {{'mir.rms_norm_backward_input' dy shape [2, 5] differs from the forward result shape [2, 4]}}
  %0 = mir.rms_norm_backward_input %x, %g, %dy axis = -1 eps = 1.0e-06 : (tensor<2x4xf32>, tensor<4xf32>, tensor<2x5xf32>) -> tensor<2x4xf32>
  func.return %0 : tensor<2x4xf32>
}

// -----

func.func @rms_norm_beta_int(%dy: tensor<2x4xi32>) -> tensor<4xi32> {
  // expected-error@+1 {{'mir.rms_norm_backward_beta' dy must have a floating-point element type, got i32}}
  %0 = mir.rms_norm_backward_beta %dy axis = -1 : (tensor<2x4xi32>) -> tensor<4xi32>
  func.return %0 : tensor<4xi32>
}

// -----

func.func @group_norm_rank(%x: tensor<2x4xf32>, %g: tensor<4xf32>, %dy: tensor<2x4xf32>) -> tensor<2x4xf32> {
  // expected-error@+1 {{'mir.group_norm_backward_input' operand must have rank at least 3 ([N, C, spatial...]), got [2, 4]}}
  %0 = mir.group_norm_backward_input %x, %g, %dy num_groups = 2 eps = 1.0e-05 : (tensor<2x4xf32>, tensor<4xf32>, tensor<2x4xf32>) -> tensor<2x4xf32>
  func.return %0 : tensor<2x4xf32>
}

// -----

func.func @group_norm_groups(%x: tensor<2x6x3xf32>, %dy: tensor<2x6x3xf32>) -> tensor<6xf32> {
  // expected-error@+1 {{'mir.group_norm_backward_gamma' 6 channels do not split into 4 groups}}
  %0 = mir.group_norm_backward_gamma %x, %dy num_groups = 4 eps = 1.0e-05 : (tensor<2x6x3xf32>, tensor<2x6x3xf32>) -> tensor<6xf32>
  func.return %0 : tensor<6xf32>
}

// -----

func.func @group_norm_zero_groups(%x: tensor<2x6x3xf32>, %dy: tensor<2x6x3xf32>) -> tensor<6xf32> {
  // expected-error@+1 {{'mir.group_norm_backward_gamma' num_groups must be at least 1, got 0}}
  %0 = mir.group_norm_backward_gamma %x, %dy num_groups = 0 eps = 1.0e-05 : (tensor<2x6x3xf32>, tensor<2x6x3xf32>) -> tensor<6xf32>
  func.return %0 : tensor<6xf32>
}

// -----

func.func @group_norm_gamma(%x: tensor<2x6x3xf32>, %g: tensor<3xf32>, %dy: tensor<2x6x3xf32>) -> tensor<2x6x3xf32> {
  // expected-error@+1 {{'mir.group_norm_backward_input' gamma must have shape [C] = [6], got [3]}}
  %0 = mir.group_norm_backward_input %x, %g, %dy num_groups = 2 eps = 1.0e-05 : (tensor<2x6x3xf32>, tensor<3xf32>, tensor<2x6x3xf32>) -> tensor<2x6x3xf32>
  func.return %0 : tensor<2x6x3xf32>
}

// -----

func.func @group_norm_beta_result(%dy: tensor<2x6x3xf32>) -> tensor<3xf32> {
  // expected-error@+1 {{'mir.group_norm_backward_beta' inferred result type tensor<6xf32> does not match declared type tensor<3xf32>}}
  %0 = mir.group_norm_backward_beta %dy : (tensor<2x6x3xf32>) -> tensor<3xf32>
  func.return %0 : tensor<3xf32>
}

// -----

func.func @rope_n_rot(%dy: tensor<2x3x4xf32>, %c: tensor<3x2xf32>) -> tensor<2x3x4xf32> {
  // expected-error@+1 {{'mir.rope_backward' n_rot must be even and in (0, head_dim = 4], got 3}}
  %0 = mir.rope_backward %dy, %c, %c head_dim = 4 n_rot = 3 : (tensor<2x3x4xf32>, tensor<3x2xf32>, tensor<3x2xf32>) -> tensor<2x3x4xf32>
  func.return %0 : tensor<2x3x4xf32>
}

// -----

func.func @rope_head_dim(%dy: tensor<2x3x6xf32>, %c: tensor<3x2xf32>) -> tensor<2x3x6xf32> {
  // expected-error@+1 {{'mir.rope_backward' dy last dim 6 differs from head_dim 4}}
  %0 = mir.rope_backward %dy, %c, %c head_dim = 4 n_rot = 4 : (tensor<2x3x6xf32>, tensor<3x2xf32>, tensor<3x2xf32>) -> tensor<2x3x6xf32>
  func.return %0 : tensor<2x3x6xf32>
}

// -----

func.func @rope_table(%dy: tensor<2x3x4xf32>, %c: tensor<3x4xf32>) -> tensor<2x3x4xf32> {
  // expected-error@+1 {{'mir.rope_backward' cos shape [3, 4] does not broadcast to [2, 3, 2]}}
  %0 = mir.rope_backward %dy, %c, %c head_dim = 4 n_rot = 4 : (tensor<2x3x4xf32>, tensor<3x4xf32>, tensor<3x4xf32>) -> tensor<2x3x4xf32>
  func.return %0 : tensor<2x3x4xf32>
}

// -----

func.func @attention_heads(%q: tensor<1x3x2x4xf32>, %k: tensor<1x2x5x4xf32>, %dy: tensor<1x3x2x4xf32>) -> tensor<1x3x2x4xf32> {
  // expected-error@+1 {{'mir.attention_backward' num_heads 3 is not a multiple of the 2 k/v heads}}
  %0 = mir.attention_backward query %q, %k, %k, %dy num_heads = 3 head_dim = 4 mask_kind = none : (tensor<1x3x2x4xf32>, tensor<1x2x5x4xf32>, tensor<1x2x5x4xf32>, tensor<1x3x2x4xf32>) -> tensor<1x3x2x4xf32>
  func.return %0 : tensor<1x3x2x4xf32>
}

// -----

func.func @attention_mask(%q: tensor<1x2x2x4xf32>, %dy: tensor<1x2x2x4xf32>) -> tensor<1x2x2x4xf32> {
  // expected-error@+1 {{'mir.attention_backward' mask_kind custom requires a mask operand}}
  %0 = mir.attention_backward query %q, %q, %q, %dy num_heads = 2 head_dim = 4 mask_kind = custom : (tensor<1x2x2x4xf32>, tensor<1x2x2x4xf32>, tensor<1x2x2x4xf32>, tensor<1x2x2x4xf32>) -> tensor<1x2x2x4xf32>
  func.return %0 : tensor<1x2x2x4xf32>
}

// -----

func.func @attention_window(%q: tensor<1x2x2x4xf32>, %dy: tensor<1x2x2x4xf32>) -> tensor<1x2x2x4xf32> {
  // expected-error@+1 {{'mir.attention_backward' window must be set exactly when mask_kind is sliding_window}}
  %0 = mir.attention_backward value %q, %q, %q, %dy num_heads = 2 head_dim = 4 mask_kind = causal window = 2 : (tensor<1x2x2x4xf32>, tensor<1x2x2x4xf32>, tensor<1x2x2x4xf32>, tensor<1x2x2x4xf32>) -> tensor<1x2x2x4xf32>
  func.return %0 : tensor<1x2x2x4xf32>
}

// -----

func.func @attention_dy(%q: tensor<1x2x2x4xf32>, %k: tensor<1x2x5x4xf32>) -> tensor<1x2x5x4xf32> {
  // expected-error@+1 {{'mir.attention_backward' dy shape [1, 2, 5, 4] differs from the forward result shape [1, 2, 2, 4]}}
  %0 = mir.attention_backward key %q, %k, %k, %k num_heads = 2 head_dim = 4 mask_kind = none : (tensor<1x2x2x4xf32>, tensor<1x2x5x4xf32>, tensor<1x2x5x4xf32>, tensor<1x2x5x4xf32>) -> tensor<1x2x5x4xf32>
  func.return %0 : tensor<1x2x5x4xf32>
}

// -----

func.func @attention_key_result(%q: tensor<1x2x2x4xf32>, %k: tensor<1x1x5x4xf32>, %dy: tensor<1x2x2x4xf32>) -> tensor<1x2x2x4xf32> {
  // expected-error@+1 {{'mir.attention_backward' inferred result type tensor<1x1x5x4xf32> does not match declared type tensor<1x2x2x4xf32>}}
  %0 = mir.attention_backward key %q, %k, %k, %dy num_heads = 2 head_dim = 4 mask_kind = none : (tensor<1x2x2x4xf32>, tensor<1x1x5x4xf32>, tensor<1x1x5x4xf32>, tensor<1x2x2x4xf32>) -> tensor<1x2x2x4xf32>
  func.return %0 : tensor<1x2x2x4xf32>
}

// -----

func.func @attention_wrt(%q: tensor<1x2x2x4xf32>) -> tensor<1x2x2x4xf32> {
  // expected-error@+1 {{Expected `query`, `key`, or `value`}}
  %0 = mir.attention_backward mask %q, %q, %q, %q num_heads = 2 head_dim = 4 mask_kind = none : (tensor<1x2x2x4xf32>, tensor<1x2x2x4xf32>, tensor<1x2x2x4xf32>, tensor<1x2x2x4xf32>) -> tensor<1x2x2x4xf32>
  func.return %0 : tensor<1x2x2x4xf32>
}

// -----

func.func @conv_input_size_len(%dy: tensor<1x2x3x3xf32>, %w: tensor<2x1x3x3xf32>) -> tensor<1x1x5x5xf32> {
  // expected-error@+1 {{'mir.conv_backward_input' input_size must have 2 values (H, W), got 1}}
  %0 = mir.conv_backward_input %dy, %w input_size = [5] kernel_size = [3, 3] stride = [1, 1] padding = [0, 0] dilation = [1, 1] groups = 1 : (tensor<1x2x3x3xf32>, tensor<2x1x3x3xf32>) -> tensor<1x1x5x5xf32>
  func.return %0 : tensor<1x1x5x5xf32>
}

// -----

func.func @conv_input_size_zero(%dy: tensor<1x2x3x3xf32>, %w: tensor<2x1x3x3xf32>) -> tensor<1x1x0x5xf32> {
  // expected-error@+1 {{'mir.conv_backward_input' input_size values must be >= 1, got [0, 5]}}
  %0 = mir.conv_backward_input %dy, %w input_size = [0, 5] kernel_size = [3, 3] stride = [1, 1] padding = [0, 0] dilation = [1, 1] groups = 1 : (tensor<1x2x3x3xf32>, tensor<2x1x3x3xf32>) -> tensor<1x1x0x5xf32>
  func.return %0 : tensor<1x1x0x5xf32>
}

// -----

func.func @conv_input_dy_spatial(%dy: tensor<1x2x4x3xf32>, %w: tensor<2x1x3x3xf32>) -> tensor<1x1x5x5xf32> {
  // expected-error@+1 {{'mir.conv_backward_input' dy shape [1, 2, 4, 3] differs from the forward result shape [1, 2, 3, 3]}}
  %0 = mir.conv_backward_input %dy, %w input_size = [5, 5] kernel_size = [3, 3] stride = [1, 1] padding = [0, 0] dilation = [1, 1] groups = 1 : (tensor<1x2x4x3xf32>, tensor<2x1x3x3xf32>) -> tensor<1x1x5x5xf32>
  func.return %0 : tensor<1x1x5x5xf32>
}

// -----

func.func @conv_input_too_small(%dy: tensor<1x2x1x1xf32>, %w: tensor<2x1x3x3xf32>) -> tensor<1x1x2x5xf32> {
  // expected-error@+1 {{'mir.conv_backward_input' input height 2 with padding 0 is smaller than the kernel extent 3}}
  %0 = mir.conv_backward_input %dy, %w input_size = [2, 5] kernel_size = [3, 3] stride = [1, 1] padding = [0, 0] dilation = [1, 1] groups = 1 : (tensor<1x2x1x1xf32>, tensor<2x1x3x3xf32>) -> tensor<1x1x2x5xf32>
  func.return %0 : tensor<1x1x2x5xf32>
}

// -----

func.func @conv_input_groups(%dy: tensor<1x3x3x3xf32>, %w: tensor<3x1x3x3xf32>) -> tensor<1x2x5x5xf32> {
  // expected-error@+1 {{'mir.conv_backward_input' output channels 3 are not divisible by groups 2}}
  %0 = mir.conv_backward_input %dy, %w input_size = [5, 5] kernel_size = [3, 3] stride = [1, 1] padding = [0, 0] dilation = [1, 1] groups = 2 : (tensor<1x3x3x3xf32>, tensor<3x1x3x3xf32>) -> tensor<1x2x5x5xf32>
  func.return %0 : tensor<1x2x5x5xf32>
}

// -----

func.func @conv_input_kernel(%dy: tensor<1x2x3x3xf32>, %w: tensor<2x1x2x2xf32>) -> tensor<1x1x5x5xf32> {
  // expected-error@+1 {{'mir.conv_backward_input' w spatial dims [2, 2] differ from kernel_size [3, 3]}}
  %0 = mir.conv_backward_input %dy, %w input_size = [5, 5] kernel_size = [3, 3] stride = [1, 1] padding = [0, 0] dilation = [1, 1] groups = 1 : (tensor<1x2x3x3xf32>, tensor<2x1x2x2xf32>) -> tensor<1x1x5x5xf32>
  func.return %0 : tensor<1x1x5x5xf32>
}

// -----

func.func @conv_input_dtype(%dy: tensor<1x2x3x3xf32>, %w: tensor<2x1x3x3xf16>) -> tensor<1x1x5x5xf32> {
  // expected-error@+1 {{'mir.conv_backward_input' w must have element type f32, got f16}}
  %0 = mir.conv_backward_input %dy, %w input_size = [5, 5] kernel_size = [3, 3] stride = [1, 1] padding = [0, 0] dilation = [1, 1] groups = 1 : (tensor<1x2x3x3xf32>, tensor<2x1x3x3xf16>) -> tensor<1x1x5x5xf32>
  func.return %0 : tensor<1x1x5x5xf32>
}

// -----

func.func @conv_weight_rank(%x: tensor<1x1x5xf32>, %dy: tensor<1x2x3x3xf32>) -> tensor<2x1x3x3xf32> {
  // expected-error@+1 {{'mir.conv_backward_weight' x must have rank 4, got [1, 1, 5]}}
  %0 = mir.conv_backward_weight %x, %dy kernel_size = [3, 3] stride = [1, 1] padding = [0, 0] dilation = [1, 1] groups = 1 : (tensor<1x1x5xf32>, tensor<1x2x3x3xf32>) -> tensor<2x1x3x3xf32>
  func.return %0 : tensor<2x1x3x3xf32>
}

// -----

func.func @conv_weight_dy(%x: tensor<1x1x5x5xf32>, %dy: tensor<1x2x2x3xf32>) -> tensor<2x1x3x3xf32> {
  // expected-error@+1 {{'mir.conv_backward_weight' dy shape [1, 2, 2, 3] differs from the forward result shape [1, 2, 3, 3]}}
  %0 = mir.conv_backward_weight %x, %dy kernel_size = [3, 3] stride = [1, 1] padding = [0, 0] dilation = [1, 1] groups = 1 : (tensor<1x1x5x5xf32>, tensor<1x2x2x3xf32>) -> tensor<2x1x3x3xf32>
  func.return %0 : tensor<2x1x3x3xf32>
}

// -----

func.func @conv_weight_dilation(%x: tensor<1x1x5x5xf32>, %dy: tensor<1x2x3x3xf32>) -> tensor<2x1x3x3xf32> {
  // expected-error@+1 {{'mir.conv_backward_weight' dilation values must be >= 1, got [0, 1]}}
  %0 = mir.conv_backward_weight %x, %dy kernel_size = [3, 3] stride = [1, 1] padding = [0, 0] dilation = [0, 1] groups = 1 : (tensor<1x1x5x5xf32>, tensor<1x2x3x3xf32>) -> tensor<2x1x3x3xf32>
  func.return %0 : tensor<2x1x3x3xf32>
}

// -----

func.func @conv_weight_result(%x: tensor<1x4x5x5xf32>, %dy: tensor<1x2x3x3xf32>) -> tensor<2x4x3x3xf32> {
  // expected-error@+1 {{'mir.conv_backward_weight' inferred result type tensor<2x2x3x3xf32> does not match declared type tensor<2x4x3x3xf32>}}
  %0 = mir.conv_backward_weight %x, %dy kernel_size = [3, 3] stride = [1, 1] padding = [0, 0] dilation = [1, 1] groups = 2 : (tensor<1x4x5x5xf32>, tensor<1x2x3x3xf32>) -> tensor<2x4x3x3xf32>
  func.return %0 : tensor<2x4x3x3xf32>
}

// -----

func.func @pool_kind(%x: tensor<1x1x4x4xf32>, %dy: tensor<1x1x2x2xf32>) -> tensor<1x1x4x4xf32> {
  // expected-error@+1 {{'mir.pool_backward' kind must be max or mean, got sum}}
  %0 = mir.pool_backward %x, %dy kind = sum kernel_size = [2, 2] stride = [2, 2] padding = [0, 0] : (tensor<1x1x4x4xf32>, tensor<1x1x2x2xf32>) -> tensor<1x1x4x4xf32>
  func.return %0 : tensor<1x1x4x4xf32>
}

// -----

func.func @pool_padding(%x: tensor<1x1x4x4xf32>, %dy: tensor<1x1x4x4xf32>) -> tensor<1x1x4x4xf32> {
  // expected-error@+1 {{'mir.pool_backward' padding 2 must be smaller than the kernel size 2 so that every window covers an input cell}}
  %0 = mir.pool_backward %x, %dy kind = max kernel_size = [2, 2] stride = [2, 2] padding = [2, 0] : (tensor<1x1x4x4xf32>, tensor<1x1x4x4xf32>) -> tensor<1x1x4x4xf32>
  func.return %0 : tensor<1x1x4x4xf32>
}

// -----

func.func @pool_int(%x: tensor<1x1x4x4xi32>, %dy: tensor<1x1x2x2xi32>) -> tensor<1x1x4x4xi32> {
  // expected-error@+1 {{'mir.pool_backward' x must have a floating-point element type, got i32}}
  %0 = mir.pool_backward %x, %dy kind = max kernel_size = [2, 2] stride = [2, 2] padding = [0, 0] : (tensor<1x1x4x4xi32>, tensor<1x1x2x2xi32>) -> tensor<1x1x4x4xi32>
  func.return %0 : tensor<1x1x4x4xi32>
}

// -----

func.func @pool_dy(%x: tensor<1x1x4x4xf32>, %dy: tensor<1x1x3x3xf32>) -> tensor<1x1x4x4xf32> {
  // expected-error@+1 {{'mir.pool_backward' dy shape [1, 1, 3, 3] differs from the forward result shape [1, 1, 2, 2]}}
  %0 = mir.pool_backward %x, %dy kind = mean kernel_size = [2, 2] stride = [2, 2] padding = [0, 0] : (tensor<1x1x4x4xf32>, tensor<1x1x3x3xf32>) -> tensor<1x1x4x4xf32>
  func.return %0 : tensor<1x1x4x4xf32>
}

// -----

func.func @cumsum_axis(%dy: tensor<2x3xf32>) -> tensor<2x3xf32> {
  // expected-error@+1 {{'mir.cumsum_backward' axis -3 is out of range for rank 2}}
  %0 = mir.cumsum_backward %dy axis = -3 : (tensor<2x3xf32>) -> tensor<2x3xf32>
  func.return %0 : tensor<2x3xf32>
}

// -----

func.func @cumsum_int(%dy: tensor<2x3xi64>) -> tensor<2x3xi64> {
  // expected-error@+1 {{'mir.cumsum_backward' dy must have a floating-point element type, got i64}}
  %0 = mir.cumsum_backward %dy axis = 0 : (tensor<2x3xi64>) -> tensor<2x3xi64>
  func.return %0 : tensor<2x3xi64>
}

// -----

func.func @gather_indices_bool(%dy: tensor<3x2xf32>, %i: tensor<3xi1>) -> tensor<5x2xf32> {
  // expected-error@+1 {{'mir.gather_backward' indices must have an integer or floating-point element type, got i1}}
  %0 = mir.gather_backward %dy, %i axis = 0 dim_size = 5 : (tensor<3x2xf32>, tensor<3xi1>) -> tensor<5x2xf32>
  func.return %0 : tensor<5x2xf32>
}

// -----

func.func @gather_rank(%dy: tensor<3xf32>, %i: tensor<3x2xi64>) -> tensor<5xf32> {
  // expected-error@+1 {{'mir.gather_backward' dy [3] has fewer dims than indices [3, 2]}}
  %0 = mir.gather_backward %dy, %i axis = 0 dim_size = 5 : (tensor<3xf32>, tensor<3x2xi64>) -> tensor<5xf32>
  func.return %0 : tensor<5xf32>
}

// -----

func.func @gather_dims(%dy: tensor<4x2xf32>, %i: tensor<3xi64>) -> tensor<5x2xf32> {
  // expected-error@+1 {{'mir.gather_backward' dy dims [4] at axis 0 differ from the indices shape [3]}}
  %0 = mir.gather_backward %dy, %i axis = 0 dim_size = 5 : (tensor<4x2xf32>, tensor<3xi64>) -> tensor<5x2xf32>
  func.return %0 : tensor<5x2xf32>
}

// -----

func.func @gather_dim_size(%dy: tensor<3x2xf32>, %i: tensor<3xi64>) -> tensor<0x2xf32> {
  // expected-error@+1 {{'mir.gather_backward' dim_size must be >= 0, got -1}}
  %0 = mir.gather_backward %dy, %i axis = 0 dim_size = -1 : (tensor<3x2xf32>, tensor<3xi64>) -> tensor<0x2xf32>
  func.return %0 : tensor<0x2xf32>
}

// -----

func.func @gather_axis(%dy: tensor<3x2xf32>, %i: tensor<3xi64>) -> tensor<3x5xf32> {
  // expected-error@+1 {{'mir.gather_backward' axis 2 is out of range for rank 2}}
  %0 = mir.gather_backward %dy, %i axis = 2 dim_size = 5 : (tensor<3x2xf32>, tensor<3xi64>) -> tensor<3x5xf32>
  func.return %0 : tensor<3x5xf32>
}

// -----

func.func @stop_gradient_result(%x: tensor<3xf32>) -> tensor<3xf16> {
  // expected-error@+1 {{'mir.stop_gradient' inferred result type tensor<3xf32> does not match declared type tensor<3xf16>}}
  %0 = mir.stop_gradient %x : (tensor<3xf32>) -> tensor<3xf16>
  func.return %0 : tensor<3xf16>
}
