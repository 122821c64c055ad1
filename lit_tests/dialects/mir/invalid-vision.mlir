// RUN: rlx-opt %s --split-input-file --verify-diagnostics

func.func @ln2d_rank(%x: tensor<2x4x3xf32>, %g: tensor<4xf32>) -> tensor<2x4x3xf32> {
  // expected-error@+1 {{'mir.layer_norm_2d' x must have rank 4, got [2, 4, 3]}}
  %0 = mir.layer_norm_2d %x, %g, %g eps = 1.0e-06 : (tensor<2x4x3xf32>, tensor<4xf32>, tensor<4xf32>) -> tensor<2x4x3xf32>
  func.return %0 : tensor<2x4x3xf32>
}

// -----

func.func @ln2d_gamma(%x: tensor<2x4x3x3xf32>, %g: tensor<3xf32>) -> tensor<2x4x3x3xf32> {
  // expected-error@+1 {{'mir.layer_norm_2d' gamma must have shape [C] = [4], got [3]}}
  %0 = mir.layer_norm_2d %x, %g, %g eps = 1.0e-06 : (tensor<2x4x3x3xf32>, tensor<3xf32>, tensor<3xf32>) -> tensor<2x4x3x3xf32>
  func.return %0 : tensor<2x4x3x3xf32>
}

// -----

func.func @ln2d_eps(%x: tensor<2x4x3x3xf32>, %g: tensor<4xf32>) -> tensor<2x4x3x3xf32> {
  // expected-error@+1 {{'mir.layer_norm_2d' eps must be positive, got 0.0}}
  %0 = mir.layer_norm_2d %x, %g, %g eps = 0.0 : (tensor<2x4x3x3xf32>, tensor<4xf32>, tensor<4xf32>) -> tensor<2x4x3x3xf32>
  func.return %0 : tensor<2x4x3x3xf32>
}

// -----

func.func @resize_rank(%x: tensor<4x3x3xf32>) -> tensor<4x6x6xf32> {
  // expected-error@+1 {{'mir.resize_nearest_2x' operand must have rank 4, got [4, 3, 3]}}
  %0 = mir.resize_nearest_2x %x : (tensor<4x3x3xf32>) -> tensor<4x6x6xf32>
  func.return %0 : tensor<4x6x6xf32>
}

// -----

func.func @resize_result(%x: tensor<2x4x3x3xf32>) -> tensor<2x4x6x5xf32> {
  // expected-error@+1 {{'mir.resize_nearest_2x' inferred result type tensor<2x4x6x6xf32> does not match declared type tensor<2x4x6x5xf32>}}
  %0 = mir.resize_nearest_2x %x : (tensor<2x4x3x3xf32>) -> tensor<2x4x6x5xf32>
  func.return %0 : tensor<2x4x6x5xf32>
}

// -----

func.func @rope_head_dim(%q: tensor<1x1x4x6xf32>) -> tensor<1x1x4x6xf32> {
  // expected-error@+1 {{'mir.axial_rope_2d' head_dim must be a positive multiple of 4 (x and y halves of pairs), got 6}}
  %0 = mir.axial_rope_2d %q end_x = 2 end_y = 2 head_dim = 6 num_heads = 1 theta = 10000.0 repeat_factor = 1 : (tensor<1x1x4x6xf32>) -> tensor<1x1x4x6xf32>
  func.return %0 : tensor<1x1x4x6xf32>
}

// -----

func.func @rope_length(%q: tensor<1x1x5x8xf32>) -> tensor<1x1x5x8xf32> {
  // expected-error@+1 {{'mir.axial_rope_2d' operand must have shape [B, num_heads, end_x * end_y * repeat_factor, head_dim] = [?, 1, 4, 8], got [1, 1, 5, 8]}}
  %0 = mir.axial_rope_2d %q end_x = 2 end_y = 2 head_dim = 8 num_heads = 1 theta = 10000.0 repeat_factor = 1 : (tensor<1x1x5x8xf32>) -> tensor<1x1x5x8xf32>
  func.return %0 : tensor<1x1x5x8xf32>
}

// -----

func.func @rope_theta(%q: tensor<1x1x4x8xf32>) -> tensor<1x1x4x8xf32> {
  // expected-error@+1 {{'mir.axial_rope_2d' theta must be positive, got -1.0}}
  %0 = mir.axial_rope_2d %q end_x = 2 end_y = 2 head_dim = 8 num_heads = 1 theta = -1.0 repeat_factor = 1 : (tensor<1x1x4x8xf32>) -> tensor<1x1x4x8xf32>
  func.return %0 : tensor<1x1x4x8xf32>
}

// -----

func.func @rope_integer(%q: tensor<1x1x4x8xi32>) -> tensor<1x1x4x8xi32> {
  // expected-error@+1 {{'mir.axial_rope_2d' operand must have a floating-point element type, got i32}}
  %0 = mir.axial_rope_2d %q end_x = 2 end_y = 2 head_dim = 8 num_heads = 1 theta = 10.0 repeat_factor = 1 : (tensor<1x1x4x8xi32>) -> tensor<1x1x4x8xi32>
  func.return %0 : tensor<1x1x4x8xi32>
}

// -----

func.func @convt_output_padding(%x: tensor<2x4x3x3xf32>, %w: tensor<4x3x3x3xf32>) -> tensor<2x3x9x7xf32> {
  // expected-error@+1 {{'mir.conv_transpose_2d' output_padding [2, 0] must be less than the stride [2, 2]}}
  %0 = mir.conv_transpose_2d %x, %w kernel_size = [3, 3] stride = [2, 2] padding = [0, 0] output_padding = [2, 0] dilation = [1, 1] groups = 1 : (tensor<2x4x3x3xf32>, tensor<4x3x3x3xf32>) -> tensor<2x3x9x7xf32>
  func.return %0 : tensor<2x3x9x7xf32>
}

// -----

func.func @convt_channels(%x: tensor<2x4x3x3xf32>, %w: tensor<3x3x3x3xf32>) -> tensor<2x3x5x5xf32> {
  // expected-error@+1 {{'mir.conv_transpose_2d' w has 3 input channels (dim 0), x has 4}}
  %0 = mir.conv_transpose_2d %x, %w kernel_size = [3, 3] stride = [1, 1] padding = [0, 0] output_padding = [0, 0] dilation = [1, 1] groups = 1 : (tensor<2x4x3x3xf32>, tensor<3x3x3x3xf32>) -> tensor<2x3x5x5xf32>
  func.return %0 : tensor<2x3x5x5xf32>
}

// -----

func.func @convt_groups(%x: tensor<2x4x3x3xf32>, %w: tensor<4x3x3x3xf32>) -> tensor<2x9x5x5xf32> {
  // expected-error@+1 {{'mir.conv_transpose_2d' input channels 4 are not divisible by groups 3}}
  %0 = mir.conv_transpose_2d %x, %w kernel_size = [3, 3] stride = [1, 1] padding = [0, 0] output_padding = [0, 0] dilation = [1, 1] groups = 3 : (tensor<2x4x3x3xf32>, tensor<4x3x3x3xf32>) -> tensor<2x9x5x5xf32>
  func.return %0 : tensor<2x9x5x5xf32>
}

// -----

func.func @convt_kernel(%x: tensor<2x4x3x3xf32>, %w: tensor<4x3x2x3xf32>) -> tensor<2x3x5x5xf32> {
  // expected-error@+1 {{'mir.conv_transpose_2d' w spatial dims [2, 3] differ from kernel_size [3, 3]}}
  %0 = mir.conv_transpose_2d %x, %w kernel_size = [3, 3] stride = [1, 1] padding = [0, 0] output_padding = [0, 0] dilation = [1, 1] groups = 1 : (tensor<2x4x3x3xf32>, tensor<4x3x2x3xf32>) -> tensor<2x3x5x5xf32>
  func.return %0 : tensor<2x3x5x5xf32>
}

// -----

func.func @convt_padding(%x: tensor<1x1x1x1xf32>, %w: tensor<1x1x1x1xf32>) -> tensor<1x1x1x1xf32> {
  // expected-error@+1 {{'mir.conv_transpose_2d' output height would be -1: padding 1 is too large for input height 1}}
  %0 = mir.conv_transpose_2d %x, %w kernel_size = [1, 1] stride = [1, 1] padding = [1, 0] output_padding = [0, 0] dilation = [1, 1] groups = 1 : (tensor<1x1x1x1xf32>, tensor<1x1x1x1xf32>) -> tensor<1x1x1x1xf32>
  func.return %0 : tensor<1x1x1x1xf32>
}
