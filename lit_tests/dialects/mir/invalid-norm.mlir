// RUN: rlx-opt %s --split-input-file --verify-diagnostics

func.func @layer_norm_eps_zero(%x: tensor<2x4xf32>, %g: tensor<4xf32>) -> tensor<2x4xf32> {
  // expected-error@+1 {{'mir.layer_norm' eps must be positive, got 0.0}}
  %0 = mir.layer_norm %x, %g, %g axis = -1 eps = 0.000000e+00 : (tensor<2x4xf32>, tensor<4xf32>, tensor<4xf32>) -> tensor<2x4xf32>
  func.return %0 : tensor<2x4xf32>
}

// -----

func.func @layer_norm_integer(%x: tensor<2x4xi32>, %g: tensor<4xi32>) -> tensor<2x4xi32> {
  // expected-error@+1 {{'mir.layer_norm' operand must have a floating-point element type, got i32}}
  %0 = mir.layer_norm %x, %g, %g axis = -1 eps = 1.000000e-05 : (tensor<2x4xi32>, tensor<4xi32>, tensor<4xi32>) -> tensor<2x4xi32>
  func.return %0 : tensor<2x4xi32>
}

// -----

func.func @layer_norm_gamma_dtype(%x: tensor<2x4xf32>, %g: tensor<4xf16>, %b: tensor<4xf32>) -> tensor<2x4xf32> {
  // expected-error@+1 {{'mir.layer_norm' gamma element type f16 differs from the operand's f32}}
  %0 = mir.layer_norm %x, %g, %b axis = -1 eps = 1.000000e-05 : (tensor<2x4xf32>, tensor<4xf16>, tensor<4xf32>) -> tensor<2x4xf32>
  func.return %0 : tensor<2x4xf32>
}

// -----

func.func @layer_norm_beta_shape(%x: tensor<2x4xf32>, %g: tensor<4xf32>, %b: tensor<3xf32>) -> tensor<2x4xf32> {
  // expected-error@+1 {{'mir.layer_norm' beta shape [3] does not broadcast to the normalised shape [4]}}
  %0 = mir.layer_norm %x, %g, %b axis = -1 eps = 1.000000e-05 : (tensor<2x4xf32>, tensor<4xf32>, tensor<3xf32>) -> tensor<2x4xf32>
  func.return %0 : tensor<2x4xf32>
}

// -----

func.func @layer_norm_axis_out_of_range(%x: tensor<2x4xf32>, %g: tensor<4xf32>) -> tensor<2x4xf32> {
  // expected-error@+1 {{'mir.layer_norm' axis 2 is out of range for rank 2}}
  %0 = mir.layer_norm %x, %g, %g axis = 2 eps = 1.000000e-05 : (tensor<2x4xf32>, tensor<4xf32>, tensor<4xf32>) -> tensor<2x4xf32>
  func.return %0 : tensor<2x4xf32>
}

// -----

func.func @layer_norm_result_mismatch(%x: tensor<2x4xf32>, %g: tensor<4xf32>) -> tensor<2x5xf32> {
  // expected-error@+1 {{'mir.layer_norm' inferred result type tensor<2x4xf32> does not match declared type tensor<2x5xf32>}}
  %0 = mir.layer_norm %x, %g, %g axis = -1 eps = 1.000000e-05 : (tensor<2x4xf32>, tensor<4xf32>, tensor<4xf32>) -> tensor<2x5xf32>
  func.return %0 : tensor<2x5xf32>
}

// -----

func.func @rms_norm_eps_negative(%x: tensor<2x4xf32>, %g: tensor<4xf32>) -> tensor<2x4xf32> {
  // expected-error@+1 {{'mir.rms_norm' eps must be positive, got -1.0}}
  %0 = mir.rms_norm %x, %g, %g axis = -1 eps = -1.000000e+00 : (tensor<2x4xf32>, tensor<4xf32>, tensor<4xf32>) -> tensor<2x4xf32>
  func.return %0 : tensor<2x4xf32>
}

// -----

func.func @rms_norm_gamma_rank(%x: tensor<2x4xf32>, %g: tensor<2x4xf32>, %b: tensor<4xf32>) -> tensor<2x4xf32> {
  // expected-error@+1 {{'mir.rms_norm' gamma shape [2, 4] does not broadcast to the normalised shape [4]}}
  %0 = mir.rms_norm %x, %g, %b axis = -1 eps = 1.000000e-06 : (tensor<2x4xf32>, tensor<2x4xf32>, tensor<4xf32>) -> tensor<2x4xf32>
  func.return %0 : tensor<2x4xf32>
}

// -----

func.func @rms_norm_beta_dtype(%x: tensor<2x4xbf16>, %g: tensor<4xbf16>, %b: tensor<4xf32>) -> tensor<2x4xbf16> {
  // expected-error@+1 {{'mir.rms_norm' beta element type f32 differs from the operand's bf16}}
  %0 = mir.rms_norm %x, %g, %b axis = -1 eps = 1.000000e-06 : (tensor<2x4xbf16>, tensor<4xbf16>, tensor<4xf32>) -> tensor<2x4xbf16>
  func.return %0 : tensor<2x4xbf16>
}

// -----

func.func @group_norm_no_groups(%x: tensor<2x6x5xf32>, %g: tensor<6xf32>) -> tensor<2x6x5xf32> {
  // expected-error@+1 {{'mir.group_norm' num_groups must be at least 1, got 0}}
  %0 = mir.group_norm %x, %g, %g num_groups = 0 eps = 1.000000e-05 : (tensor<2x6x5xf32>, tensor<6xf32>, tensor<6xf32>) -> tensor<2x6x5xf32>
  func.return %0 : tensor<2x6x5xf32>
}

// -----

func.func @group_norm_eps_zero(%x: tensor<2x6x5xf32>, %g: tensor<6xf32>) -> tensor<2x6x5xf32> {
  // expected-error@+1 {{'mir.group_norm' eps must be positive, got 0.0}}
  %0 = mir.group_norm %x, %g, %g num_groups = 3 eps = 0.000000e+00 : (tensor<2x6x5xf32>, tensor<6xf32>, tensor<6xf32>) -> tensor<2x6x5xf32>
  func.return %0 : tensor<2x6x5xf32>
}

// -----

func.func @group_norm_rank(%x: tensor<2x6xf32>, %g: tensor<6xf32>) -> tensor<2x6xf32> {
  // expected-error@+1 {{'mir.group_norm' operand must have rank at least 3 ([N, C, spatial...]), got [2, 6]}}
  %0 = mir.group_norm %x, %g, %g num_groups = 3 eps = 1.000000e-05 : (tensor<2x6xf32>, tensor<6xf32>, tensor<6xf32>) -> tensor<2x6xf32>
  func.return %0 : tensor<2x6xf32>
}

// -----

func.func @group_norm_indivisible(%x: tensor<2x6x5xf32>, %g: tensor<6xf32>) -> tensor<2x6x5xf32> {
  // expected-error@+1 {{'mir.group_norm' 6 channels do not split into 4 groups}}
  %0 = mir.group_norm %x, %g, %g num_groups = 4 eps = 1.000000e-05 : (tensor<2x6x5xf32>, tensor<6xf32>, tensor<6xf32>) -> tensor<2x6x5xf32>
  func.return %0 : tensor<2x6x5xf32>
}

// -----

func.func @group_norm_gamma_shape(%x: tensor<2x6x5xf32>, %g: tensor<3xf32>, %b: tensor<6xf32>) -> tensor<2x6x5xf32> {
  // expected-error@+1 {{'mir.group_norm' gamma must have shape [C] = [6], got [3]}}
  %0 = mir.group_norm %x, %g, %b num_groups = 3 eps = 1.000000e-05 : (tensor<2x6x5xf32>, tensor<3xf32>, tensor<6xf32>) -> tensor<2x6x5xf32>
  func.return %0 : tensor<2x6x5xf32>
}

// -----

func.func @group_norm_integer(%x: tensor<2x6x5xi8>, %g: tensor<6xi8>) -> tensor<2x6x5xi8> {
  // expected-error@+1 {{'mir.group_norm' operand must have a floating-point element type, got i8}}
  %0 = mir.group_norm %x, %g, %g num_groups = 3 eps = 1.000000e-05 : (tensor<2x6x5xi8>, tensor<6xi8>, tensor<6xi8>) -> tensor<2x6x5xi8>
  func.return %0 : tensor<2x6x5xi8>
}

// -----

func.func @batch_norm_rank1(%x: tensor<4xf32>, %p: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error@+1 {{'mir.batch_norm_inference' operand must have rank at least 2 ([N, C, spatial...]), got [4]}}
  %0 = mir.batch_norm_inference %x, %p, %p, %p, %p eps = 1.000000e-05 : (tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  func.return %0 : tensor<4xf32>
}

// -----

func.func @batch_norm_var_shape(%x: tensor<2x3xf32>, %p: tensor<3xf32>, %v: tensor<2xf32>) -> tensor<2x3xf32> {
  // expected-error@+1 {{'mir.batch_norm_inference' var must have shape [C] = [3], got [2]}}
  %0 = mir.batch_norm_inference %x, %p, %p, %p, %v eps = 1.000000e-05 : (tensor<2x3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<2xf32>) -> tensor<2x3xf32>
  func.return %0 : tensor<2x3xf32>
}

// -----

func.func @batch_norm_mean_dtype(%x: tensor<2x3xf32>, %p: tensor<3xf32>, %m: tensor<3xf16>) -> tensor<2x3xf32> {
  // expected-error@+1 {{'mir.batch_norm_inference' mean element type f16 differs from the operand's f32}}
  %0 = mir.batch_norm_inference %x, %p, %p, %m, %p eps = 1.000000e-05 : (tensor<2x3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf16>, tensor<3xf32>) -> tensor<2x3xf32>
  func.return %0 : tensor<2x3xf32>
}

// -----

func.func @batch_norm_eps(%x: tensor<2x3xf32>, %p: tensor<3xf32>) -> tensor<2x3xf32> {
  // expected-error@+1 {{'mir.batch_norm_inference' eps must be positive, got -1.0}}
  %0 = mir.batch_norm_inference %x, %p, %p, %p, %p eps = -1.000000e+00 : (tensor<2x3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>) -> tensor<2x3xf32>
  func.return %0 : tensor<2x3xf32>
}
