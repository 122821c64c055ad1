// RUN: rlx-opt %s --split-input-file --verify-diagnostics

func.func @gather_bool_indices(%t: tensor<5x4xf32>, %i: tensor<3xi1>) -> tensor<3x4xf32> {
  // expected-error@+1 {{'mir.gather' indices must have an integer or floating-point element type, got i1}}
  %0 = mir.gather %t, %i axis = 0 : (tensor<5x4xf32>, tensor<3xi1>) -> tensor<3x4xf32>
  func.return %0 : tensor<3x4xf32>
}

// -----

func.func @gather_axis(%t: tensor<5x4xf32>, %i: tensor<3xi64>) -> tensor<3x4xf32> {
  // expected-error@+1 {{'mir.gather' axis 2 is out of range for rank 2}}
  %0 = mir.gather %t, %i axis = 2 : (tensor<5x4xf32>, tensor<3xi64>) -> tensor<3x4xf32>
  func.return %0 : tensor<3x4xf32>
}

// -----

func.func @gather_result(%t: tensor<5x4xf32>, %i: tensor<3xf32>) -> tensor<3x5xf32> {
  // expected-error@+1 {{'mir.gather' inferred result type tensor<5x3xf32> does not match declared type tensor<3x5xf32>}}
  %0 = mir.gather %t, %i axis = 1 : (tensor<5x4xf32>, tensor<3xf32>) -> tensor<3x5xf32>
  func.return %0 : tensor<3x5xf32>
}

// -----

func.func @gather_arity(%t: tensor<5x4xf32>) -> tensor<5x4xf32> {
  // expected-error@+1 {{Expected 2 operands, but got 1}}
  %0 = "mir.gather"(%t) <{axis = 0 : i64}> : (tensor<5x4xf32>) -> tensor<5x4xf32>
  func.return %0 : tensor<5x4xf32>
}

// -----

func.func @scatter_add_dim_size(%u: tensor<3x4xf32>, %i: tensor<3xf32>) -> tensor<0x4xf32> {
  // expected-error@+1 {{'mir.scatter_add' dim_size must be >= 0, got -1}}
  %0 = mir.scatter_add %u, %i dim_size = -1 : (tensor<3x4xf32>, tensor<3xf32>) -> tensor<0x4xf32>
  func.return %0 : tensor<0x4xf32>
}

// -----

func.func @scatter_add_complex_indices(%u: tensor<3x4xf32>, %i: tensor<3xcomplex<f32>>) -> tensor<8x4xf32> {
  // expected-error@+1 {{'mir.scatter_add' indices must have an integer or floating-point element type, got complex<f32>}}
  %0 = mir.scatter_add %u, %i dim_size = 8 : (tensor<3x4xf32>, tensor<3xcomplex<f32>>) -> tensor<8x4xf32>
  func.return %0 : tensor<8x4xf32>
}

// -----

func.func @scatter_add_indices_rank(%u: tensor<3x4xf32>, %i: tensor<3x1xi64>) -> tensor<8x4xf32> {
  // expected-error@+1 {{'mir.scatter_add' indices must have rank 1, got [3, 1]}}
  %0 = mir.scatter_add %u, %i dim_size = 8 : (tensor<3x4xf32>, tensor<3x1xi64>) -> tensor<8x4xf32>
  func.return %0 : tensor<8x4xf32>
}

// -----

func.func @scatter_add_scalar_updates(%u: tensor<f32>, %i: tensor<1xi64>) -> tensor<8xf32> {
  // expected-error@+1 {{'mir.scatter_add' updates must have rank >= 1, got []}}
  %0 = mir.scatter_add %u, %i dim_size = 8 : (tensor<f32>, tensor<1xi64>) -> tensor<8xf32>
  func.return %0 : tensor<8xf32>
}

// -----

func.func @scatter_add_rows(%u: tensor<3x4xf32>, %i: tensor<2xi64>) -> tensor<8x4xf32> {
  // expected-error@+1 {{'mir.scatter_add' updates [3, 4] and indices [2] differ in their first dim}}
  %0 = mir.scatter_add %u, %i dim_size = 8 : (tensor<3x4xf32>, tensor<2xi64>) -> tensor<8x4xf32>
  func.return %0 : tensor<8x4xf32>
}

// -----

func.func @scatter_add_result(%u: tensor<3x4xf32>, %i: tensor<3xi64>) -> tensor<3x4xf32> {
  // expected-error@+1 {{'mir.scatter_add' inferred result type tensor<8x4xf32> does not match declared type tensor<3x4xf32>}}
  %0 = mir.scatter_add %u, %i dim_size = 8 : (tensor<3x4xf32>, tensor<3xi64>) -> tensor<3x4xf32>
  func.return %0 : tensor<3x4xf32>
}

// -----

func.func @dynamic_update_slice_dtype(%x: tensor<4x3xf32>, %u: tensor<1x3xbf16>, %i: tensor<i32>) -> tensor<4x3xf32> {
  // expected-error@+1 {{'mir.dynamic_update_slice' update must have element type f32, got bf16}}
  %0 = mir.dynamic_update_slice %x, %u at [%i, %i] : (tensor<4x3xf32>, tensor<1x3xbf16>, tensor<i32>, tensor<i32>) -> tensor<4x3xf32>
  func.return %0 : tensor<4x3xf32>
}

// -----

func.func @dynamic_update_slice_rank(%x: tensor<4x3xf32>, %u: tensor<3xf32>, %i: tensor<i32>) -> tensor<4x3xf32> {
  // expected-error@+1 {{'mir.dynamic_update_slice' update must have rank 2, got [3]}}
  %0 = mir.dynamic_update_slice %x, %u at [%i, %i] : (tensor<4x3xf32>, tensor<3xf32>, tensor<i32>, tensor<i32>) -> tensor<4x3xf32>
  func.return %0 : tensor<4x3xf32>
}

// -----

func.func @dynamic_update_slice_start_count(%x: tensor<4x3xf32>, %u: tensor<1x3xf32>, %i: tensor<i32>) -> tensor<4x3xf32> {
  // expected-error@+1 {{'mir.dynamic_update_slice' takes one start index per dim of the operand (2), got 1}}
  %0 = mir.dynamic_update_slice %x, %u at [%i] : (tensor<4x3xf32>, tensor<1x3xf32>, tensor<i32>) -> tensor<4x3xf32>
  func.return %0 : tensor<4x3xf32>
}

// -----

func.func @dynamic_update_slice_float_start(%x: tensor<4x3xf32>, %u: tensor<1x3xf32>, %i: tensor<i32>, %f: tensor<f32>) -> tensor<4x3xf32> {
  // expected-error@+1 {{'mir.dynamic_update_slice' start index 1 must be a rank-0 integer tensor, got tensor<f32>}}
  %0 = mir.dynamic_update_slice %x, %u at [%i, %f] : (tensor<4x3xf32>, tensor<1x3xf32>, tensor<i32>, tensor<f32>) -> tensor<4x3xf32>
  func.return %0 : tensor<4x3xf32>
}

// -----

func.func @dynamic_update_slice_start_rank(%x: tensor<4x3xf32>, %u: tensor<1x3xf32>, %i: tensor<i32>, %v: tensor<1xi32>) -> tensor<4x3xf32> {
  // expected-error@+1 {{'mir.dynamic_update_slice' start index 0 must be a rank-0 integer tensor, got tensor<1xi32>}}
  %0 = mir.dynamic_update_slice %x, %u at [%v, %i] : (tensor<4x3xf32>, tensor<1x3xf32>, tensor<1xi32>, tensor<i32>) -> tensor<4x3xf32>
  func.return %0 : tensor<4x3xf32>
}

// -----

func.func @dynamic_update_slice_too_big(%x: tensor<4x3xf32>, %u: tensor<5x3xf32>, %i: tensor<i32>) -> tensor<4x3xf32> {
  // expected-error@+1 {{'mir.dynamic_update_slice' update [5, 3] does not fit in operand [4, 3] (dim 0)}}
  %0 = mir.dynamic_update_slice %x, %u at [%i, %i] : (tensor<4x3xf32>, tensor<5x3xf32>, tensor<i32>, tensor<i32>) -> tensor<4x3xf32>
  func.return %0 : tensor<4x3xf32>
}

// -----

func.func @dynamic_update_slice_result(%x: tensor<4x3xf32>, %u: tensor<1x3xf32>, %i: tensor<i32>) -> tensor<1x3xf32> {
  // expected-error@+1 {{'mir.dynamic_update_slice' inferred result type tensor<4x3xf32> does not match declared type tensor<1x3xf32>}}
  %0 = mir.dynamic_update_slice %x, %u at [%i, %i] : (tensor<4x3xf32>, tensor<1x3xf32>, tensor<i32>, tensor<i32>) -> tensor<1x3xf32>
  func.return %0 : tensor<1x3xf32>
}
