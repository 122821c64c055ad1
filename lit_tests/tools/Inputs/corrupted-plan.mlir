// The plan rlx-plan-memory writes for exp(x) + neg(x), hand-corrupted: %u is moved
// onto %t's slot [64, 128) although %t is still live (the add reads it).
func.func @chain(%x: tensor<4x4xf32> {rlx.name = "x", lir.slot = #lir.slot<offset = 0, size = 64>}) -> (tensor<4x4xf32> {lir.slot = #lir.slot<offset = 64, size = 64, in_place>}) {
  lir.plan arena_bytes = 192 naive_bytes = 256 lower_bound_bytes = 192 alignment = 64 strategy = "first-fit"
  %t = mir.exp %x {lir.slot = #lir.slot<offset = 64, size = 64>, lir.phase = #lir.phase<steady>} : (tensor<4x4xf32>) -> tensor<4x4xf32>
  %u = mir.neg %x {lir.slot = #lir.slot<offset = 64, size = 64>, lir.phase = #lir.phase<steady>} : (tensor<4x4xf32>) -> tensor<4x4xf32>
  %s = mir.add %t, %u {lir.slot = #lir.slot<offset = 64, size = 64, in_place>, lir.phase = #lir.phase<steady>} : (tensor<4x4xf32>, tensor<4x4xf32>) -> tensor<4x4xf32>
  func.return %s : tensor<4x4xf32>
}
