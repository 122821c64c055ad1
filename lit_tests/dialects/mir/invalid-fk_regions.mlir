// RUN: rlx-opt %s --split-input-file --verify-diagnostics

func.func @prologue_arg_type(%x: tensor<1x2x2x2xf32>) -> tensor<1x2x2x2xf32> {
  // expected-error@+1 {{'mir.elementwise_region' body region argument types (tensor<1x2x2x2xf32>) do not match the input types (tensor<1x2x4x4xf32>)}}
  %0 = mir.elementwise_region (%x) prologue = resize_nearest_2x on 0 : (tensor<1x2x2x2xf32>) -> tensor<1x2x2x2xf32> {
  ^bb0(%a: tensor<1x2x2x2xf32>):
    %1 = mir.relu %a : (tensor<1x2x2x2xf32>) -> tensor<1x2x2x2xf32>
    mir.yield %1 : tensor<1x2x2x2xf32>
  }
  func.return %0 : tensor<1x2x2x2xf32>
}

// -----

func.func @prologue_input_range(%x: tensor<1x2x2x2xf32>) -> tensor<1x2x4x4xf32> {
  // expected-error@+1 {{'mir.elementwise_region' prologue input 3 is not one of the 1 inputs}}
  %0 = mir.elementwise_region (%x) prologue = resize_nearest_2x on 3 : (tensor<1x2x2x2xf32>) -> tensor<1x2x4x4xf32> {
  ^bb0(%a: tensor<1x2x4x4xf32>):
    %1 = mir.relu %a : (tensor<1x2x4x4xf32>) -> tensor<1x2x4x4xf32>
    mir.yield %1 : tensor<1x2x4x4xf32>
  }
  func.return %0 : tensor<1x2x4x4xf32>
}

// -----

func.func @prologue_rank(%x: tensor<2x2xf32>) -> tensor<4x4xf32> {
  // expected-error@+1 {{'mir.elementwise_region' prologue input must have rank 4}}
  %0 = mir.elementwise_region (%x) prologue = resize_nearest_2x on 0 : (tensor<2x2xf32>) -> tensor<4x4xf32> {
  ^bb0(%a: tensor<4x4xf32>):
    %1 = mir.relu %a : (tensor<4x4xf32>) -> tensor<4x4xf32>
    mir.yield %1 : tensor<4x4xf32>
  }
  func.return %0 : tensor<4x4xf32>
}

// -----

func.func @transform_unknown_step(%x: tensor<1x2x2x2xf32>) -> tensor<1x2x4x4xf32> {
  // expected-error@+1 {{'mir.transform_region' unknown transform step 'flip' (expected one of: resize_nearest_2x)}}
  %0 = mir.transform_region %x steps = ["flip"] : (tensor<1x2x2x2xf32>) -> tensor<1x2x4x4xf32>
  func.return %0 : tensor<1x2x4x4xf32>
}

// -----

func.func @transform_no_step(%x: tensor<1x2x2x2xf32>) -> tensor<1x2x2x2xf32> {
  // expected-error@+1 {{'mir.transform_region' a transform region needs at least one step}}
  %0 = mir.transform_region %x steps = [] : (tensor<1x2x2x2xf32>) -> tensor<1x2x2x2xf32>
  func.return %0 : tensor<1x2x2x2xf32>
}

// -----

func.func @batch_slices_differ(%a: tensor<2x3xf32>, %b: tensor<1x3xf32>) -> tensor<3x3xf32> {
  // expected-error@+1 {{'mir.batch_elementwise_region' slices (tensor<2x3xf32>, tensor<1x3xf32>) must share one type}}
  %0 = mir.batch_elementwise_region (%a, %b) shared() : (tensor<2x3xf32>, tensor<1x3xf32>) -> tensor<3x3xf32> {
  ^bb0(%s: tensor<2x3xf32>):
    %1 = mir.relu %s : (tensor<2x3xf32>) -> tensor<2x3xf32>
    mir.yield %1 : tensor<2x3xf32>
  }
  func.return %0 : tensor<3x3xf32>
}

// -----

func.func @batch_shared_broadcast(%a: tensor<2x3xf32>, %m: tensor<4xf32>) -> tensor<4x3xf32> {
  // expected-error@+1 {{'mir.batch_elementwise_region' shared input #0 shape [4] does not broadcast to the region's shape [2, 3]}}
  %0 = mir.batch_elementwise_region (%a, %a) shared(%m) : (tensor<2x3xf32>, tensor<2x3xf32>, tensor<4xf32>) -> tensor<4x3xf32> {
  ^bb0(%s: tensor<2x3xf32>, %t: tensor<4xf32>):
    mir.yield %s : tensor<2x3xf32>
  }
  func.return %0 : tensor<4x3xf32>
}

// -----

func.func @batch_prologue_arg_type(%a: tensor<1x2x2x2xf32>) -> tensor<2x2x2x2xf32> {
  // expected-error@+1 {{'mir.batch_elementwise_region' body argument types (tensor<1x2x2x2xf32>) do not match a slice and the shared inputs (tensor<1x2x4x4xf32>)}}
  %0 = mir.batch_elementwise_region (%a, %a) shared() prologue = resize_nearest_2x on 0 : (tensor<1x2x2x2xf32>, tensor<1x2x2x2xf32>) -> tensor<2x2x2x2xf32> {
  ^bb0(%s: tensor<1x2x2x2xf32>):
    mir.yield %s : tensor<1x2x2x2xf32>
  }
  func.return %0 : tensor<2x2x2x2xf32>
}

// -----

func.func @batch_prologue_input_range(%a: tensor<1x2x2x2xf32>) -> tensor<2x2x2x2xf32> {
  // expected-error@+1 {{'mir.batch_elementwise_region' prologue input 1 is not one of the 1 inputs}}
  %0 = mir.batch_elementwise_region (%a, %a) shared() prologue = resize_nearest_2x on 1 : (tensor<1x2x2x2xf32>, tensor<1x2x2x2xf32>) -> tensor<2x2x2x2xf32> {
  ^bb0(%s: tensor<1x2x2x2xf32>):
    mir.yield %s : tensor<1x2x2x2xf32>
  }
  func.return %0 : tensor<2x2x2x2xf32>
}

// -----

func.func @batch_prologue_rank(%a: tensor<2x3xf32>) -> tensor<4x3xf32> {
  // expected-error@+1 {{'mir.batch_elementwise_region' prologue input must have rank 4}}
  %0 = mir.batch_elementwise_region (%a, %a) shared() prologue = resize_nearest_2x on 0 : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<4x3xf32> {
  ^bb0(%s: tensor<2x3xf32>):
    mir.yield %s : tensor<2x3xf32>
  }
  func.return %0 : tensor<4x3xf32>
}
