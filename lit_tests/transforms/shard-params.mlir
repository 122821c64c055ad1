// RUN: rlx-opt %s -p 'rlx-shard-params{axis=data min-size=8},rlx-train-step{func=loss}' | filecheck %s

// ZeRO-3 / FSDP: each parameter of at least min-size elements is split over `data` along
// its largest dimension the axis size (4) divides; w2, split over `model` already (Megatron),
// gains `data` on its other dimension; b (3 elements) stays replicated. rlx-train-step gives
// each parameter's AdamW state and its updated value among the results the same sharding.
// CHECK-LABEL: func.func @loss(
// CHECK-SAME: %w1: tensor<6x16xf32> {rlx.name = "w1", rlx.param, rlx.sharding = [unit, "data"]}
// CHECK-SAME: %w2: tensor<16x8xf32> {rlx.name = "w2", rlx.param, rlx.sharding = ["model", "data"]}
// CHECK-SAME: %w3: tensor<8x8xf32> {rlx.name = "w3", rlx.param, rlx.sharding = ["data", unit]}
// CHECK-SAME: %b: tensor<3xf32> {rlx.name = "b", rlx.param}
// CHECK-LABEL: func.func @loss_train_step(
// CHECK-SAME: %m_w1: tensor<6x16xf32> {rlx.name = "m_w1", rlx.sharding = [unit, "data"]}
// CHECK-SAME: %v_w1: tensor<6x16xf32> {rlx.name = "v_w1", rlx.sharding = [unit, "data"]}
// CHECK-SAME: %m_w2: tensor<16x8xf32> {rlx.name = "m_w2", rlx.sharding = ["model", "data"]}
// CHECK-SAME: %m_b: tensor<3xf32> {rlx.name = "m_b"},
// CHECK-SAME: -> (tensor<f32>, tensor<6x16xf32> {rlx.sharding = [unit, "data"]}, tensor<16x8xf32> {rlx.sharding = ["model", "data"]}, tensor<8x8xf32> {rlx.sharding = ["data", unit]}, tensor<3xf32>, tensor<6x16xf32> {rlx.sharding = [unit, "data"]}, tensor<6x16xf32> {rlx.sharding = [unit, "data"]},
builtin.module attributes {rlx.mesh = {data = 4, model = 2}} {
  func.func @loss(%x: tensor<8x6xf32> {rlx.name = "x", rlx.sharding = ["data", unit]},
                  %w1: tensor<6x16xf32> {rlx.name = "w1", rlx.param},
                  %w2: tensor<16x8xf32> {rlx.name = "w2", rlx.param, rlx.sharding = ["model", unit]},
                  %w3: tensor<8x8xf32> {rlx.name = "w3", rlx.param},
                  %b: tensor<3xf32> {rlx.name = "b", rlx.param}) -> tensor<f32> {
    %h = mir.matmul %x, %w1 : (tensor<8x6xf32>, tensor<6x16xf32>) -> tensor<8x16xf32>
    %o = mir.matmul %h, %w2 : (tensor<8x16xf32>, tensor<16x8xf32>) -> tensor<8x8xf32>
    %p = mir.matmul %o, %w3 : (tensor<8x8xf32>, tensor<8x8xf32>) -> tensor<8x8xf32>
    %l = mir.reduce mean %p axes = [0, 1] : (tensor<8x8xf32>) -> tensor<f32>
    func.return %l : tensor<f32>
  }
}
