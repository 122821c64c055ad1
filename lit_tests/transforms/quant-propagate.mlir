// RUN: rlx-opt %s --split-input-file -p rlx-quant-propagate | filecheck %s

// The downstream fake-quantize is dropped and its consumers read its input: the relu
// stays (RLX rewires them to the upstream fake-quantize, losing the relu).
// CHECK-LABEL: func.func @exact
// CHECK-NEXT:    %[[U:.*]] = mir.fake_quantize %x, %s bits = 4 ste = hard_tanh scale_mode = fixed
// CHECK-NEXT:    %[[R:.*]] = mir.relu %[[U]]
// CHECK-NEXT:    %[[T:.*]] = mir.transpose %[[R]]
// CHECK-NEXT:    func.return %[[T]]
func.func @exact(%x: tensor<2x3xf32>, %s: tensor<1xf32>) -> tensor<3x2xf32> {
  %0 = mir.fake_quantize %x, %s bits = 4 ste = hard_tanh scale_mode = fixed : (tensor<2x3xf32>, tensor<1xf32>) -> tensor<2x3xf32>
  %1 = mir.relu %0 : (tensor<2x3xf32>) -> tensor<2x3xf32>
  %2 = mir.transpose %1 perm = [1, 0] : (tensor<2x3xf32>) -> tensor<3x2xf32>
  %3 = mir.fake_quantize %2, %s bits = 4 ste = clipped_identity scale_mode = fixed : (tensor<3x2xf32>, tensor<1xf32>) -> tensor<3x2xf32>
  func.return %3 : tensor<3x2xf32>
}

// -----

// Kept: a per-batch range (the max of fq(x) is not that of x), another state value,
// other bits, a tanh STE (its gradient is not 1), a per-channel grid moved by a transpose,
// an op that leaves the grid (exp).
// CHECK-LABEL: func.func @kept
// CHECK-COUNT-9: mir.fake_quantize
// CHECK-NOT:     mir.fake_quantize
func.func @kept(%x: tensor<3x3xf32>, %s: tensor<1xf32>, %t: tensor<1xf32>, %c: tensor<3xf32>) -> (tensor<3x3xf32>, tensor<3x3xf32>, tensor<3x3xf32>, tensor<3x3xf32>, tensor<3x3xf32>) {
  %0 = mir.fake_quantize %x bits = 4 ste = identity scale_mode = per_batch : (tensor<3x3xf32>) -> tensor<3x3xf32>
  %1 = mir.fake_quantize %0 bits = 4 ste = identity scale_mode = per_batch : (tensor<3x3xf32>) -> tensor<3x3xf32>
  %2 = mir.fake_quantize %x, %s bits = 4 ste = identity scale_mode = fixed : (tensor<3x3xf32>, tensor<1xf32>) -> tensor<3x3xf32>
  %3 = mir.fake_quantize %2, %t bits = 4 ste = identity scale_mode = fixed : (tensor<3x3xf32>, tensor<1xf32>) -> tensor<3x3xf32>
  %4 = mir.fake_quantize %2, %s bits = 3 ste = identity scale_mode = fixed : (tensor<3x3xf32>, tensor<1xf32>) -> tensor<3x3xf32>
  %5 = mir.fake_quantize %2, %s bits = 4 ste = tanh scale_mode = fixed : (tensor<3x3xf32>, tensor<1xf32>) -> tensor<3x3xf32>
  %6 = mir.fake_quantize %x, %c bits = 4 axis = 1 ste = identity scale_mode = fixed : (tensor<3x3xf32>, tensor<3xf32>) -> tensor<3x3xf32>
  %7 = mir.transpose %6 perm = [1, 0] : (tensor<3x3xf32>) -> tensor<3x3xf32>
  %8 = mir.fake_quantize %7, %c bits = 4 axis = 1 ste = identity scale_mode = fixed : (tensor<3x3xf32>, tensor<3xf32>) -> tensor<3x3xf32>
  %9 = mir.exp %2 : (tensor<3x3xf32>) -> tensor<3x3xf32>
  %10 = mir.fake_quantize %9, %s bits = 4 ste = identity scale_mode = fixed : (tensor<3x3xf32>, tensor<1xf32>) -> tensor<3x3xf32>
  func.return %1, %3, %4, %5, %8 : tensor<3x3xf32>, tensor<3x3xf32>, tensor<3x3xf32>, tensor<3x3xf32>, tensor<3x3xf32>
}
