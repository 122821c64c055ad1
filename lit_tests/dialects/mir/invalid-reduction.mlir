// RUN: rlx-opt %s --split-input-file --verify-diagnostics

func.func @reduce_no_axes(%x: tensor<2x3xf32>) -> tensor<2x3xf32> {
  // expected-error@+1 {{'mir.reduce' axes must not be empty}}
  %0 = mir.reduce sum %x axes = [] : (tensor<2x3xf32>) -> tensor<2x3xf32>
  func.return %0 : tensor<2x3xf32>
}

// -----

func.func @reduce_axis_out_of_range(%x: tensor<2x3xf32>) -> tensor<2xf32> {
  // expected-error@+1 {{'mir.reduce' axis 2 is out of range for rank 2}}
  %0 = mir.reduce sum %x axes = [2] : (tensor<2x3xf32>) -> tensor<2xf32>
  func.return %0 : tensor<2xf32>
}

// -----

func.func @reduce_repeated_axis(%x: tensor<2x3xf32>) -> tensor<2xf32> {
  // expected-error@+1 {{'mir.reduce' axes [1, -1] name the same axis more than once}}
  %0 = mir.reduce sum %x axes = [1, -1] : (tensor<2x3xf32>) -> tensor<2xf32>
  func.return %0 : tensor<2xf32>
}

// -----

func.func @reduce_bool(%x: tensor<2x3xi1>) -> tensor<2xi1> {
  // expected-error@+1 {{'mir.reduce' operand of type i1 must be cast to a numeric type first}}
  %0 = mir.reduce sum %x axes = [1] : (tensor<2x3xi1>) -> tensor<2xi1>
  func.return %0 : tensor<2xi1>
}

// -----

func.func @reduce_max_complex(%x: tensor<2x3xcomplex<f32>>) -> tensor<2xcomplex<f32>> {
  // expected-error@+1 {{'mir.reduce' cannot order elements of type complex<f32>}}
  %0 = mir.reduce max %x axes = [1] : (tensor<2x3xcomplex<f32>>) -> tensor<2xcomplex<f32>>
  func.return %0 : tensor<2xcomplex<f32>>
}

// -----

func.func @reduce_keep_dim_mismatch(%x: tensor<2x3xf32>) -> tensor<2xf32> {
  // expected-error@+1 {{'mir.reduce' inferred result type tensor<2x1xf32> does not match declared type tensor<2xf32>}}
  %0 = mir.reduce sum %x axes = [1] keep_dim : (tensor<2x3xf32>) -> tensor<2xf32>
  func.return %0 : tensor<2xf32>
}

// -----

func.func @softmax_integer(%x: tensor<2x3xi32>) -> tensor<2x3xi32> {
  // expected-error@+1 {{'mir.softmax' operand must have a floating-point element type, got i32}}
  %0 = mir.softmax %x axis = -1 : (tensor<2x3xi32>) -> tensor<2x3xi32>
  func.return %0 : tensor<2x3xi32>
}

// -----

func.func @softmax_axis_out_of_range(%x: tensor<2x3xf32>) -> tensor<2x3xf32> {
  // expected-error@+1 {{'mir.softmax' axis -3 is out of range for rank 2}}
  %0 = mir.softmax %x axis = -3 : (tensor<2x3xf32>) -> tensor<2x3xf32>
  func.return %0 : tensor<2x3xf32>
}

// -----

func.func @softmax_result_mismatch(%x: tensor<2x3xf32>) -> tensor<2x3xf16> {
  // expected-error@+1 {{'mir.softmax' inferred result type tensor<2x3xf32> does not match declared type tensor<2x3xf16>}}
  %0 = mir.softmax %x axis = -1 : (tensor<2x3xf32>) -> tensor<2x3xf16>
  func.return %0 : tensor<2x3xf16>
}

// -----

func.func @cumsum_axis_out_of_range(%x: tensor<2x3xf32>) -> tensor<2x3xf32> {
  // expected-error@+1 {{'mir.cumsum' axis 2 is out of range for rank 2}}
  %0 = mir.cumsum %x axis = 2 : (tensor<2x3xf32>) -> tensor<2x3xf32>
  func.return %0 : tensor<2x3xf32>
}

// -----

func.func @cumsum_bool(%x: tensor<4xi1>) -> tensor<4xi1> {
  // expected-error@+1 {{'mir.cumsum' operand of type i1 must be cast to a numeric type first}}
  %0 = mir.cumsum %x axis = 0 exclusive : (tensor<4xi1>) -> tensor<4xi1>
  func.return %0 : tensor<4xi1>
}

// -----

func.func @topk_zero(%x: tensor<2x8xf32>) -> tensor<2x0xf32> {
  // expected-error@+1 {{'mir.topk' k must be at least 1, got 0}}
  %0, %1 = mir.topk %x k = 0 : (tensor<2x8xf32>) -> (tensor<2x0xf32>, tensor<2x0xi64>)
  func.return %0 : tensor<2x0xf32>
}

// -----

func.func @topk_too_large(%x: tensor<2x8xf32>) -> tensor<2x9xf32> {
  // expected-error@+1 {{'mir.topk' k = 9 exceeds the last dim 8}}
  %0, %1 = mir.topk %x k = 9 : (tensor<2x8xf32>) -> (tensor<2x9xf32>, tensor<2x9xi64>)
  func.return %0 : tensor<2x9xf32>
}

// -----

func.func @topk_scalar(%x: tensor<f32>) -> tensor<1xf32> {
  // expected-error@+1 {{'mir.topk' operand must have rank at least 1, got a scalar}}
  %0, %1 = mir.topk %x k = 1 : (tensor<f32>) -> (tensor<1xf32>, tensor<1xi64>)
  func.return %0 : tensor<1xf32>
}

// -----

func.func @topk_complex(%x: tensor<8xcomplex<f32>>) -> tensor<2xcomplex<f32>> {
  // expected-error@+1 {{'mir.topk' cannot order elements of type complex<f32>}}
  %0, %1 = mir.topk %x k = 2 : (tensor<8xcomplex<f32>>) -> (tensor<2xcomplex<f32>>, tensor<2xi64>)
  func.return %0 : tensor<2xcomplex<f32>>
}

// -----

func.func @topk_f32_indices(%x: tensor<2x8xf32>) -> tensor<2x3xf32> {
  // expected-error@+1 {{'mir.topk' inferred result #1 type tensor<2x3xi64> does not match declared type tensor<2x3xf32>}}
  %0, %1 = mir.topk %x k = 3 : (tensor<2x8xf32>) -> (tensor<2x3xf32>, tensor<2x3xf32>)
  func.return %0 : tensor<2x3xf32>
}
