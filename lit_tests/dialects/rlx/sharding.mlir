// RUN: RLX_ROUNDTRIP
// The device mesh on the module and the per-argument shardings round-trip and verify:
// an axis name, unit (a dimension left whole) or a list of axes per dimension.

// CHECK:      builtin.module attributes {rlx.mesh = {data = 2 : i64, model = 2 : i64}} {
// CHECK-NEXT:   func.func @f(%x: tensor<4x2x6xf32> {rlx.sharding = ["data", unit, "model"]}, %w: tensor<8x6xf32> {rlx.sharding = {{\[\[}}"data", "model"], []]}, %b: tensor<6xf32>) -> tensor<4x2x6xf32> {
builtin.module attributes {rlx.mesh = {data = 2, model = 2}} {
  func.func @f(%x: tensor<4x2x6xf32> {rlx.sharding = ["data", unit, "model"]},
               %w: tensor<8x6xf32> {rlx.sharding = [["data", "model"], []]},
               %b: tensor<6xf32>) -> tensor<4x2x6xf32> {
    %y = mir.relu %x : (tensor<4x2x6xf32>) -> tensor<4x2x6xf32>
    func.return %y : tensor<4x2x6xf32>
  }
}
