// The MLP of mlp.mlir, sharded over a 2x2 device mesh: the batch is split over `data`
// (data parallelism) and the hidden layer over `model` (tensor parallelism: fc1's columns
// and bias, fc2's rows). XLA's SPMD partitioner inserts the collectives (docs/distributed.md).
//
//   rlx-run examples/mlp_sharded.mlir --backend=xla --device=gpu     # on a machine with 4 GPUs
//   XLA_FLAGS=--xla_force_host_platform_device_count=4 rlx-run examples/mlp_sharded.mlir --backend=xla
//   rlx-run examples/mlp_sharded.mlir                                # the interpreter ignores the mesh
//
// `unit` leaves a dimension whole (JAX's None); arguments without rlx.sharding are replicated.
builtin.module attributes {rlx.mesh = {data = 2, model = 2}} {
  func.func @mlp(%x: tensor<4x16xf32> {rlx.name = "x", rlx.sharding = ["data", unit]},
                 %w1: tensor<16x32xf32> {rlx.name = "fc1.weight", rlx.param, rlx.sharding = [unit, "model"]},
                 %b1: tensor<32xf32> {rlx.name = "fc1.bias", rlx.param, rlx.sharding = ["model"]},
                 %w2: tensor<32x10xf32> {rlx.name = "fc2.weight", rlx.param, rlx.sharding = ["model", unit]},
                 %b2: tensor<10xf32> {rlx.name = "fc2.bias", rlx.param}) -> tensor<4x10xf32> {
    %h = mir.matmul %x, %w1 : (tensor<4x16xf32>, tensor<16x32xf32>) -> tensor<4x32xf32>
    %hb = mir.add %h, %b1 : (tensor<4x32xf32>, tensor<32xf32>) -> tensor<4x32xf32>
    %a = mir.relu %hb : (tensor<4x32xf32>) -> tensor<4x32xf32>
    %o = mir.matmul %a, %w2 : (tensor<4x32xf32>, tensor<32x10xf32>) -> tensor<4x10xf32>
    %logits = mir.add %o, %b2 : (tensor<4x10xf32>, tensor<10xf32>) -> tensor<4x10xf32>
    %probs = mir.softmax %logits axis = -1 : (tensor<4x10xf32>) -> tensor<4x10xf32>
    func.return %probs : tensor<4x10xf32>
  }
}
