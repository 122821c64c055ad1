// RUN: rlx-opt %s --split-input-file --verify-diagnostics

func.func @kernel_rank(%x: tensor<1x2x5x5xf32>, %w: tensor<3x2x3x3xf32>) -> tensor<1x3x3x3xf32> {
  // expected-error@+1 {{'mir.conv' kernel_size must have 2 values (H, W), got 3}}
  %0 = mir.conv %x, %w kernel_size = [3, 3, 3] stride = [1, 1] padding = [0, 0] dilation = [1, 1] groups = 1 : (tensor<1x2x5x5xf32>, tensor<3x2x3x3xf32>) -> tensor<1x3x3x3xf32>
  func.return %0 : tensor<1x3x3x3xf32>
}

// -----

func.func @zero_kernel(%x: tensor<1x2x5x5xf32>, %w: tensor<3x2x3x3xf32>) -> tensor<1x3x3x3xf32> {
  // expected-error@+1 {{'mir.conv' kernel_size values must be >= 1, got [0, 3]}}
  %0 = mir.conv %x, %w kernel_size = [0, 3] stride = [1, 1] padding = [0, 0] dilation = [1, 1] groups = 1 : (tensor<1x2x5x5xf32>, tensor<3x2x3x3xf32>) -> tensor<1x3x3x3xf32>
  func.return %0 : tensor<1x3x3x3xf32>
}

// -----

func.func @zero_stride(%x: tensor<1x2x5x5xf32>, %w: tensor<3x2x3x3xf32>) -> tensor<1x3x3x3xf32> {
  // expected-error@+1 {{'mir.conv' stride values must be >= 1, got [1, 0]}}
  %0 = mir.conv %x, %w kernel_size = [3, 3] stride = [1, 0] padding = [0, 0] dilation = [1, 1] groups = 1 : (tensor<1x2x5x5xf32>, tensor<3x2x3x3xf32>) -> tensor<1x3x3x3xf32>
  func.return %0 : tensor<1x3x3x3xf32>
}

// -----

func.func @stride_length(%x: tensor<1x2x5x5xf32>, %w: tensor<3x2x3x3xf32>) -> tensor<1x3x3x3xf32> {
  // expected-error@+1 {{'mir.conv' stride must have 2 values (H, W), got 1}}
  %0 = mir.conv %x, %w kernel_size = [3, 3] stride = [1] padding = [0, 0] dilation = [1, 1] groups = 1 : (tensor<1x2x5x5xf32>, tensor<3x2x3x3xf32>) -> tensor<1x3x3x3xf32>
  func.return %0 : tensor<1x3x3x3xf32>
}

// -----

func.func @negative_padding(%x: tensor<1x2x5x5xf32>, %w: tensor<3x2x3x3xf32>) -> tensor<1x3x3x3xf32> {
  // expected-error@+1 {{'mir.conv' padding values must be >= 0, got [-1, 0]}}
  %0 = mir.conv %x, %w kernel_size = [3, 3] stride = [1, 1] padding = [-1, 0] dilation = [1, 1] groups = 1 : (tensor<1x2x5x5xf32>, tensor<3x2x3x3xf32>) -> tensor<1x3x3x3xf32>
  func.return %0 : tensor<1x3x3x3xf32>
}

// -----

func.func @padding_length(%x: tensor<1x2x5x5xf32>, %w: tensor<3x2x3x3xf32>) -> tensor<1x3x3x3xf32> {
  // expected-error@+1 {{'mir.conv' padding must have 2 values (H, W), got 4}}
  %0 = mir.conv %x, %w kernel_size = [3, 3] stride = [1, 1] padding = [0, 0, 0, 0] dilation = [1, 1] groups = 1 : (tensor<1x2x5x5xf32>, tensor<3x2x3x3xf32>) -> tensor<1x3x3x3xf32>
  func.return %0 : tensor<1x3x3x3xf32>
}

// -----

func.func @zero_dilation(%x: tensor<1x2x5x5xf32>, %w: tensor<3x2x3x3xf32>) -> tensor<1x3x3x3xf32> {
  // expected-error@+1 {{'mir.conv' dilation values must be >= 1, got [0, 1]}}
  %0 = mir.conv %x, %w kernel_size = [3, 3] stride = [1, 1] padding = [0, 0] dilation = [0, 1] groups = 1 : (tensor<1x2x5x5xf32>, tensor<3x2x3x3xf32>) -> tensor<1x3x3x3xf32>
  func.return %0 : tensor<1x3x3x3xf32>
}

// -----

func.func @dilation_length(%x: tensor<1x2x5x5xf32>, %w: tensor<3x2x3x3xf32>) -> tensor<1x3x3x3xf32> {
  // expected-error@+1 {{'mir.conv' dilation must have 2 values (H, W), got 0}}
  %0 = mir.conv %x, %w kernel_size = [3, 3] stride = [1, 1] padding = [0, 0] dilation = [] groups = 1 : (tensor<1x2x5x5xf32>, tensor<3x2x3x3xf32>) -> tensor<1x3x3x3xf32>
  func.return %0 : tensor<1x3x3x3xf32>
}

// -----

func.func @zero_groups(%x: tensor<1x2x5x5xf32>, %w: tensor<3x2x3x3xf32>) -> tensor<1x3x3x3xf32> {
  // expected-error@+1 {{'mir.conv' groups must be >= 1, got 0}}
  %0 = mir.conv %x, %w kernel_size = [3, 3] stride = [1, 1] padding = [0, 0] dilation = [1, 1] groups = 0 : (tensor<1x2x5x5xf32>, tensor<3x2x3x3xf32>) -> tensor<1x3x3x3xf32>
  func.return %0 : tensor<1x3x3x3xf32>
}

// -----

func.func @x_rank(%x: tensor<2x5x5xf32>, %w: tensor<3x2x3x3xf32>) -> tensor<3x3x3xf32> {
  // expected-error@+1 {{'mir.conv' x must have rank 4, got [2, 5, 5]}}
  %0 = mir.conv %x, %w kernel_size = [3, 3] stride = [1, 1] padding = [0, 0] dilation = [1, 1] groups = 1 : (tensor<2x5x5xf32>, tensor<3x2x3x3xf32>) -> tensor<3x3x3xf32>
  func.return %0 : tensor<3x3x3xf32>
}

// -----

func.func @w_rank(%x: tensor<1x2x5x5xf32>, %w: tensor<3x2x3xf32>) -> tensor<1x3x3x3xf32> {
  // expected-error@+1 {{'mir.conv' w must have rank 4, got [3, 2, 3]}}
  %0 = mir.conv %x, %w kernel_size = [3, 3] stride = [1, 1] padding = [0, 0] dilation = [1, 1] groups = 1 : (tensor<1x2x5x5xf32>, tensor<3x2x3xf32>) -> tensor<1x3x3x3xf32>
  func.return %0 : tensor<1x3x3x3xf32>
}

// -----

func.func @integer_conv(%x: tensor<1x2x5x5xi32>, %w: tensor<3x2x3x3xi32>) -> tensor<1x3x3x3xi32> {
  // expected-error@+1 {{'mir.conv' x must have a floating-point element type, got i32}}
  %0 = mir.conv %x, %w kernel_size = [3, 3] stride = [1, 1] padding = [0, 0] dilation = [1, 1] groups = 1 : (tensor<1x2x5x5xi32>, tensor<3x2x3x3xi32>) -> tensor<1x3x3x3xi32>
  func.return %0 : tensor<1x3x3x3xi32>
}

// -----

func.func @mixed_dtypes(%x: tensor<1x2x5x5xf32>, %w: tensor<3x2x3x3xbf16>) -> tensor<1x3x3x3xf32> {
  // expected-error@+1 {{'mir.conv' w must have element type f32, got bf16}}
  %0 = mir.conv %x, %w kernel_size = [3, 3] stride = [1, 1] padding = [0, 0] dilation = [1, 1] groups = 1 : (tensor<1x2x5x5xf32>, tensor<3x2x3x3xbf16>) -> tensor<1x3x3x3xf32>
  func.return %0 : tensor<1x3x3x3xf32>
}

// -----

func.func @input_groups(%x: tensor<1x3x5x5xf32>, %w: tensor<4x1x3x3xf32>) -> tensor<1x4x3x3xf32> {
  // expected-error@+1 {{'mir.conv' input channels 3 are not divisible by groups 2}}
  %0 = mir.conv %x, %w kernel_size = [3, 3] stride = [1, 1] padding = [0, 0] dilation = [1, 1] groups = 2 : (tensor<1x3x5x5xf32>, tensor<4x1x3x3xf32>) -> tensor<1x4x3x3xf32>
  func.return %0 : tensor<1x4x3x3xf32>
}

// -----

func.func @output_groups(%x: tensor<1x4x5x5xf32>, %w: tensor<3x2x3x3xf32>) -> tensor<1x3x3x3xf32> {
  // expected-error@+1 {{'mir.conv' output channels 3 are not divisible by groups 2}}
  %0 = mir.conv %x, %w kernel_size = [3, 3] stride = [1, 1] padding = [0, 0] dilation = [1, 1] groups = 2 : (tensor<1x4x5x5xf32>, tensor<3x2x3x3xf32>) -> tensor<1x3x3x3xf32>
  func.return %0 : tensor<1x3x3x3xf32>
}

// -----

func.func @weight_channels(%x: tensor<1x4x5x5xf32>, %w: tensor<4x4x3x3xf32>) -> tensor<1x4x3x3xf32> {
  // expected-error@+1 {{'mir.conv' w has 4 input channels per group, expected 4 / 2 = 2}}
  %0 = mir.conv %x, %w kernel_size = [3, 3] stride = [1, 1] padding = [0, 0] dilation = [1, 1] groups = 2 : (tensor<1x4x5x5xf32>, tensor<4x4x3x3xf32>) -> tensor<1x4x3x3xf32>
  func.return %0 : tensor<1x4x3x3xf32>
}

// -----

func.func @weight_kernel(%x: tensor<1x2x5x5xf32>, %w: tensor<3x2x3x2xf32>) -> tensor<1x3x3x3xf32> {
  // expected-error@+1 {{'mir.conv' w spatial dims [3, 2] differ from kernel_size [3, 3]}}
  %0 = mir.conv %x, %w kernel_size = [3, 3] stride = [1, 1] padding = [0, 0] dilation = [1, 1] groups = 1 : (tensor<1x2x5x5xf32>, tensor<3x2x3x2xf32>) -> tensor<1x3x3x3xf32>
  func.return %0 : tensor<1x3x3x3xf32>
}

// -----

func.func @empty_output(%x: tensor<1x2x5x5xf32>, %w: tensor<3x2x3x3xf32>) -> tensor<1x3x1x1xf32> {
  // expected-error@+1 {{'mir.conv' input height 5 with padding 0 is smaller than the kernel extent 7}}
  %0 = mir.conv %x, %w kernel_size = [3, 3] stride = [1, 1] padding = [0, 0] dilation = [3, 1] groups = 1 : (tensor<1x2x5x5xf32>, tensor<3x2x3x3xf32>) -> tensor<1x3x1x1xf32>
  func.return %0 : tensor<1x3x1x1xf32>
}

// -----

func.func @conv_result(%x: tensor<1x2x5x5xf32>, %w: tensor<3x2x3x3xf32>) -> tensor<1x3x5x5xf32> {
  // expected-error@+1 {{'mir.conv' inferred result type tensor<1x3x3x3xf32> does not match declared type tensor<1x3x5x5xf32>}}
  %0 = mir.conv %x, %w kernel_size = [3, 3] stride = [1, 1] padding = [0, 0] dilation = [1, 1] groups = 1 : (tensor<1x2x5x5xf32>, tensor<3x2x3x3xf32>) -> tensor<1x3x5x5xf32>
  func.return %0 : tensor<1x3x5x5xf32>
}

// -----

func.func @pool_kind(%x: tensor<1x2x4x4xf32>) -> tensor<1x2x2x2xf32> {
  // expected-error@+1 {{'mir.pool' kind must be max or mean, got sum}}
  %0 = mir.pool %x kind = sum kernel_size = [2, 2] stride = [2, 2] padding = [0, 0] : (tensor<1x2x4x4xf32>) -> tensor<1x2x2x2xf32>
  func.return %0 : tensor<1x2x2x2xf32>
}

// -----

func.func @pool_kernel_length(%x: tensor<1x2x4x4xf32>) -> tensor<1x2x2x2xf32> {
  // expected-error@+1 {{'mir.pool' kernel_size must have 2 values (H, W), got 1}}
  %0 = mir.pool %x kind = max kernel_size = [2] stride = [2, 2] padding = [0, 0] : (tensor<1x2x4x4xf32>) -> tensor<1x2x2x2xf32>
  func.return %0 : tensor<1x2x2x2xf32>
}

// -----

func.func @pool_zero_kernel(%x: tensor<1x2x4x4xf32>) -> tensor<1x2x2x2xf32> {
  // expected-error@+1 {{'mir.pool' kernel_size values must be >= 1, got [2, 0]}}
  %0 = mir.pool %x kind = max kernel_size = [2, 0] stride = [2, 2] padding = [0, 0] : (tensor<1x2x4x4xf32>) -> tensor<1x2x2x2xf32>
  func.return %0 : tensor<1x2x2x2xf32>
}

// -----

func.func @pool_zero_stride(%x: tensor<1x2x4x4xf32>) -> tensor<1x2x2x2xf32> {
  // expected-error@+1 {{'mir.pool' stride values must be >= 1, got [0, 2]}}
  %0 = mir.pool %x kind = max kernel_size = [2, 2] stride = [0, 2] padding = [0, 0] : (tensor<1x2x4x4xf32>) -> tensor<1x2x2x2xf32>
  func.return %0 : tensor<1x2x2x2xf32>
}

// -----

func.func @pool_negative_padding(%x: tensor<1x2x4x4xf32>) -> tensor<1x2x2x2xf32> {
  // expected-error@+1 {{'mir.pool' padding values must be >= 0, got [0, -1]}}
  %0 = mir.pool %x kind = max kernel_size = [2, 2] stride = [2, 2] padding = [0, -1] : (tensor<1x2x4x4xf32>) -> tensor<1x2x2x2xf32>
  func.return %0 : tensor<1x2x2x2xf32>
}

// -----

func.func @pool_padding_covers_window(%x: tensor<1x2x4x4xf32>) -> tensor<1x2x4x4xf32> {
  // expected-error@+1 {{'mir.pool' padding 2 must be smaller than the kernel size 2 so that every window covers an input cell}}
  %0 = mir.pool %x kind = max kernel_size = [2, 2] stride = [2, 2] padding = [2, 0] : (tensor<1x2x4x4xf32>) -> tensor<1x2x4x4xf32>
  func.return %0 : tensor<1x2x4x4xf32>
}

// -----

func.func @pool_rank(%x: tensor<2x4x4xf32>) -> tensor<2x2x2xf32> {
  // expected-error@+1 {{'mir.pool' x must have rank 4, got [2, 4, 4]}}
  %0 = mir.pool %x kind = max kernel_size = [2, 2] stride = [2, 2] padding = [0, 0] : (tensor<2x4x4xf32>) -> tensor<2x2x2xf32>
  func.return %0 : tensor<2x2x2xf32>
}

// -----

func.func @integer_mean_pool(%x: tensor<1x2x4x4xi32>) -> tensor<1x2x2x2xi32> {
  // expected-error@+1 {{'mir.pool' x of mean pooling must have a floating-point element type, got i32}}
  %0 = mir.pool %x kind = mean kernel_size = [2, 2] stride = [2, 2] padding = [0, 0] : (tensor<1x2x4x4xi32>) -> tensor<1x2x2x2xi32>
  func.return %0 : tensor<1x2x2x2xi32>
}

// -----

func.func @pool_empty_output(%x: tensor<1x2x4x4xf32>) -> tensor<1x2x1x1xf32> {
  // expected-error@+1 {{'mir.pool' input width 4 with padding 0 is smaller than the kernel extent 5}}
  %0 = mir.pool %x kind = max kernel_size = [2, 5] stride = [1, 1] padding = [0, 0] : (tensor<1x2x4x4xf32>) -> tensor<1x2x1x1xf32>
  func.return %0 : tensor<1x2x1x1xf32>
}

// -----

func.func @pool_result(%x: tensor<1x2x4x4xf32>) -> tensor<1x2x4x4xf32> {
  // expected-error@+1 {{'mir.pool' inferred result type tensor<1x2x2x2xf32> does not match declared type tensor<1x2x4x4xf32>}}
  %0 = mir.pool %x kind = max kernel_size = [2, 2] stride = [2, 2] padding = [0, 0] : (tensor<1x2x4x4xf32>) -> tensor<1x2x4x4xf32>
  func.return %0 : tensor<1x2x4x4xf32>
}
