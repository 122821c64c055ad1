// RUN: rlx-opt %s | filecheck %s
// `null` (the spelling of a replicated dimension in JAX/JSON terms) is read as `unit`
// and printed as `unit`, which upstream MLIR parsers accept.

// CHECK: func.func @f(%x: tensor<4x6xf32> {rlx.sharding = ["data", unit]}, %w: tensor<6x8xf32> {rlx.sharding = [unit, "model"]})
builtin.module attributes {rlx.mesh = {data = 2, model = 2}} {
  func.func @f(%x: tensor<4x6xf32> {rlx.sharding = ["data", null]},
               %w: tensor<6x8xf32> {rlx.sharding = [null, "model"]}) -> tensor<4x8xf32> {
    %y = mir.matmul %x, %w : (tensor<4x6xf32>, tensor<6x8xf32>) -> tensor<4x8xf32>
    func.return %y : tensor<4x8xf32>
  }
}
