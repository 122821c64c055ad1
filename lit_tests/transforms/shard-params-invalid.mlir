// RUN: not rlx-opt %s --split-input-file -p 'rlx-shard-params{axis=pipe}' 2>&1 | filecheck %s

// CHECK: shard-params-invalid.mlir:{{[0-9]+}}:1: error: 'rlx-shard-params' needs a device mesh: the module has no 'rlx.mesh'
func.func @nomesh(%w: tensor<8xf32> {rlx.name = "w", rlx.param}) -> tensor<8xf32> {
  func.return %w : tensor<8xf32>
}

// -----

// CHECK: shard-params-invalid.mlir:{{[0-9]+}}:1: error: 'rlx-shard-params' axis=pipe is not an axis of the module's 'rlx.mesh' (axes: 'data')
builtin.module attributes {rlx.mesh = {data = 2}} {
  func.func @f(%w: tensor<8xf32> {rlx.name = "w", rlx.param}) -> tensor<8xf32> {
    func.return %w : tensor<8xf32>
  }
}
