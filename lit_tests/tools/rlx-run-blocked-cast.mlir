// A blocked-scaling cast verifies, but the interpreter has no semantics for it
// (RLX gives CastConfig's scaling fields none): rlx-run reports it at the cast.
// RUN: not rlx-run %s 2>&1 | filecheck %s

// CHECK-NOT: Traceback
// CHECK: rlx-run-blocked-cast.mlir:[[# @LINE + 2]]:3: error: interpretation failed: 'mir.cast' with sf_block has no reference kernel: RLX reserves CastConfig's scaling-factor fields for future quantization passes and gives them no semantics
func.func @f(%x: tensor<2x4xf32>) -> tensor<2x4xf16> {
  %0 = mir.cast %x config <sf_block = [1, 2]> : (tensor<2x4xf32>) -> tensor<2x4xf16>
  func.return %0 : tensor<2x4xf16>
}
