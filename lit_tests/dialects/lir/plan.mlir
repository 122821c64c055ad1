// RUN: RLX_ROUNDTRIP
// RUN: rlx-opt %s --split-input-file --print-op-generic | filecheck %s --check-prefix=GENERIC

// Every placement (a slot, a slot written in place, a view, an external value,
// one placement per result of a multi-result op) and every phase.

// CHECK-LABEL: func.func @plan(
// CHECK-SAME: %x: tensor<2x8xf32> {rlx.name = "x", lir.slot = #lir.slot<offset = 0, size = 64>}
// CHECK-SAME: %w: tensor<8x8xf32> {rlx.name = "w", rlx.param, lir.slot = #lir.external}
// CHECK-SAME: -> (tensor<16xf32> {lir.slot = #lir.slot<offset = 128, size = 64, in_place>}, tensor<2x2xi64> {lir.slot = #lir.slot<offset = 192, size = 32>})
// GENERIC: "func.func"() <{sym_name = "plan", {{.*}} arg_attrs = [{rlx.name = "x", lir.slot = #lir.slot<offset = 0, size = 64>}, {rlx.name = "w", rlx.param, lir.slot = #lir.external}]
func.func @plan(%x: tensor<2x8xf32> {rlx.name = "x", lir.slot = #lir.slot<offset = 0, size = 64>}, %w: tensor<8x8xf32> {rlx.name = "w", rlx.param, lir.slot = #lir.external}) -> (tensor<16xf32> {lir.slot = #lir.slot<offset = 128, size = 64, in_place>}, tensor<2x2xi64> {lir.slot = #lir.slot<offset = 192, size = 32>}) {
  // CHECK-NEXT: lir.plan arena_bytes = 320 naive_bytes = 448 lower_bound_bytes = 320 alignment = 64 strategy = "first-fit"
  // GENERIC: "lir.plan"() <{arena_bytes = 320 : i64, naive_bytes = 448 : i64, lower_bound_bytes = 320 : i64, alignment = 64 : i64, strategy = "first-fit"}> : () -> ()
  lir.plan arena_bytes = 320 naive_bytes = 448 lower_bound_bytes = 320 alignment = 64 strategy = "first-fit"
  // CHECK-NEXT: %c = mir.constant dense<5.000000e-01> : tensor<2x8xf32> {lir.slot = #lir.slot<offset = 64, size = 64>, lir.phase = #lir.phase<prologue>}
  %c = mir.constant dense<5.000000e-01> : tensor<2x8xf32> {lir.slot = #lir.slot<offset = 64, size = 64>, lir.phase = #lir.phase<prologue>}
  // CHECK-NEXT: %0 = mir.matmul %x, %w {lir.slot = #lir.slot<offset = 128, size = 64>, lir.phase = #lir.phase<steady>}
  %0 = mir.matmul %x, %w {lir.slot = #lir.slot<offset = 128, size = 64>, lir.phase = #lir.phase<steady>} : (tensor<2x8xf32>, tensor<8x8xf32>) -> tensor<2x8xf32>
  // CHECK-NEXT: %1 = mir.add %0, %c {lir.slot = #lir.slot<offset = 128, size = 64, in_place>, lir.phase = #lir.phase<epilogue>}
  // GENERIC: "mir.add"(%0, %c) {lir.slot = #lir.slot<offset = 128, size = 64, in_place>, lir.phase = #lir.phase<epilogue>}
  %1 = mir.add %0, %c {lir.slot = #lir.slot<offset = 128, size = 64, in_place>, lir.phase = #lir.phase<epilogue>} : (tensor<2x8xf32>, tensor<2x8xf32>) -> tensor<2x8xf32>
  // CHECK-NEXT: %2 = mir.reshape %1 new_shape = [16] {lir.slot = #lir.view<offset = 128, size = 64, byte_offset = 0>, lir.phase = #lir.phase<epilogue>}
  %2 = mir.reshape %1 new_shape = [16] {lir.slot = #lir.view<offset = 128, size = 64, byte_offset = 0>, lir.phase = #lir.phase<epilogue>} : (tensor<2x8xf32>) -> tensor<16xf32>
  // CHECK-NEXT: %v, %i = mir.topk %1 k = 2 {lir.slot = [#lir.slot<offset = 256, size = 16>, #lir.slot<offset = 192, size = 32>], lir.phase = #lir.phase<epilogue>}
  %v, %i = mir.topk %1 k = 2 {lir.slot = [#lir.slot<offset = 256, size = 16>, #lir.slot<offset = 192, size = 32>], lir.phase = #lir.phase<epilogue>} : (tensor<2x8xf32>) -> (tensor<2x2xf32>, tensor<2x2xi64>)
  // CHECK-NEXT: %3 = mir.narrow %2 axis = 0 start = 8 len = 8 {lir.slot = #lir.view<offset = 160, size = 32, byte_offset = 32>, lir.phase = #lir.phase<epilogue>}
  %3 = mir.narrow %2 axis = 0 start = 8 len = 8 {lir.slot = #lir.view<offset = 160, size = 32, byte_offset = 32>, lir.phase = #lir.phase<epilogue>} : (tensor<16xf32>) -> tensor<8xf32>
  // CHECK-NEXT: %4 = mir.neg %2 {lir.slot = #lir.slot<offset = 128, size = 64, in_place>, lir.phase = #lir.phase<epilogue>}
  %4 = mir.neg %2 {lir.slot = #lir.slot<offset = 128, size = 64, in_place>, lir.phase = #lir.phase<epilogue>} : (tensor<16xf32>) -> tensor<16xf32>
  // CHECK-NEXT: func.return %4, %i
  func.return %4, %i : tensor<16xf32>, tensor<2x2xi64>
}

// -----

// A hand-written plan without a strategy; a view of an external parameter is
// external too; two buffers whose live ranges do not overlap share their slot.

// CHECK-LABEL: func.func @minimal(
// CHECK-SAME: %w: tensor<4x4xf16> {rlx.param, lir.slot = #lir.external}
func.func @minimal(%w: tensor<4x4xf16> {rlx.param, lir.slot = #lir.external}) -> (tensor<16xf16> {lir.slot = #lir.view<offset = 0, size = 32, byte_offset = 0>}) {
  // CHECK-NEXT: lir.plan arena_bytes = 32 naive_bytes = 64 lower_bound_bytes = 32 alignment = 16{{$}}
  lir.plan arena_bytes = 32 naive_bytes = 64 lower_bound_bytes = 32 alignment = 16
  // CHECK-NEXT: %0 = mir.reshape %w new_shape = [16] {lir.slot = #lir.external, lir.phase = #lir.phase<steady>}
  %0 = mir.reshape %w new_shape = [16] {lir.slot = #lir.external, lir.phase = #lir.phase<steady>} : (tensor<4x4xf16>) -> tensor<16xf16>
  // CHECK-NEXT: %1 = mir.exp %0 {lir.slot = #lir.slot<offset = 0, size = 32>, lir.phase = #lir.phase<steady>}
  %1 = mir.exp %0 {lir.slot = #lir.slot<offset = 0, size = 32>, lir.phase = #lir.phase<steady>} : (tensor<16xf16>) -> tensor<16xf16>
  // CHECK-NEXT: %2 = mir.matmul %w, %w {lir.slot = #lir.slot<offset = 0, size = 32>, lir.phase = #lir.phase<steady>}
  %2 = mir.matmul %w, %w {lir.slot = #lir.slot<offset = 0, size = 32>, lir.phase = #lir.phase<steady>} : (tensor<4x4xf16>, tensor<4x4xf16>) -> tensor<4x4xf16>
  // CHECK-NEXT: %3 = mir.reshape %2 new_shape = [16] {lir.slot = #lir.view<offset = 0, size = 32, byte_offset = 0>, lir.phase = #lir.phase<epilogue>}
  %3 = mir.reshape %2 new_shape = [16] {lir.slot = #lir.view<offset = 0, size = 32, byte_offset = 0>, lir.phase = #lir.phase<epilogue>} : (tensor<4x4xf16>) -> tensor<16xf16>
  func.return %3 : tensor<16xf16>
}
