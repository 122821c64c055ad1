// RUN: rlx-opt %s --split-input-file -p rlx-plan-memory | filecheck %s
// RUN: rlx-opt %s --split-input-file -p 'rlx-plan-memory{strategy=rlx}' | filecheck %s --check-prefix=RLX
// RUN: rlx-opt %s --split-input-file -p 'rlx-plan-memory{allocate-params=false allocate-inputs=false allocate-constants=false alignment=16}' | filecheck %s --check-prefix=EXT
// RUN: rlx-opt %s --split-input-file -p 'rlx-plan-memory,rlx-plan-memory' | filecheck %s
// RUN: rlx-opt %s --split-input-file -p 'rlx-plan-memory{report=-}' 2>&1 >/dev/null | filecheck %s --check-prefix=REPORT

// An elementwise chain after a matmul: RLX gives every link a slot of its own,
// rlx-plan-memory writes each link over the one before it, which dies there.

// CHECK-LABEL: func.func @chain(
// CHECK-SAME: %x: tensor<4x8xf32> {rlx.name = "x", lir.slot = #lir.slot<offset = 256, size = 128>}
// CHECK-SAME: %w: tensor<8x8xf32> {rlx.name = "w", rlx.param, lir.slot = #lir.slot<offset = 0, size = 256>}
// CHECK-SAME: -> (tensor<4x8xf32> {lir.slot = #lir.slot<offset = 384, size = 128, in_place>})
// CHECK-NEXT: lir.plan arena_bytes = 512 naive_bytes = 896 lower_bound_bytes = 512 alignment = 64 strategy = "first-fit"
// CHECK-NEXT: mir.matmul %x, %w {lir.slot = #lir.slot<offset = 384, size = 128>, lir.phase = #lir.phase<steady>}
// CHECK-NEXT: mir.relu %0 {lir.slot = #lir.slot<offset = 384, size = 128, in_place>, lir.phase = #lir.phase<epilogue>}
// CHECK-NEXT: mir.exp %1 {lir.slot = #lir.slot<offset = 384, size = 128, in_place>, lir.phase = #lir.phase<epilogue>}
// CHECK-NEXT: mir.neg %2 {lir.slot = #lir.slot<offset = 384, size = 128, in_place>, lir.phase = #lir.phase<epilogue>}

// RLX-LABEL: func.func @chain(
// RLX: lir.plan arena_bytes = 640 naive_bytes = 896 lower_bound_bytes = 512 alignment = 64 strategy = "rlx"
// RLX-NOT: in_place

// EXT-LABEL: func.func @chain(
// EXT-SAME: %x: tensor<4x8xf32> {rlx.name = "x", lir.slot = #lir.external}
// EXT-SAME: %w: tensor<8x8xf32> {rlx.name = "w", rlx.param, lir.slot = #lir.external}
// EXT-NEXT: lir.plan arena_bytes = 128 naive_bytes = 512 lower_bound_bytes = 128 alignment = 16 strategy = "first-fit"

// REPORT:      @chain: arena 512 bytes, lower bound 512 (arena/bound 1.000), naive 896 (arena/naive 0.571)
// REPORT-NEXT: alignment 64, strategy first-fit; 6 buffers, 3 in place, 0 views, 0 external
// REPORT-NEXT: offset  size  steps  phase     value  what
// REPORT-NEXT:      0   256  0..5   prologue  %w     param "w"
// REPORT-NEXT:    256   128  0..5   prologue  %x     input "x"
// REPORT-NEXT:    384   128  1..2   steady    %0     mir.matmul
// REPORT-NEXT:    384   128  2..3   epilogue  %1     mir.relu, in place over %0
// REPORT-NEXT:    384   128  3..4   epilogue  %2     mir.exp, in place over %1
// REPORT-NEXT:    384   128  4..5   epilogue  %3     mir.neg, in place over %2
func.func @chain(%x: tensor<4x8xf32> {rlx.name = "x"}, %w: tensor<8x8xf32> {rlx.name = "w", rlx.param}) -> tensor<4x8xf32> {
  %0 = mir.matmul %x, %w : (tensor<4x8xf32>, tensor<8x8xf32>) -> tensor<4x8xf32>
  %1 = mir.relu %0 : (tensor<4x8xf32>) -> tensor<4x8xf32>
  %2 = mir.exp %1 : (tensor<4x8xf32>) -> tensor<4x8xf32>
  %3 = mir.neg %2 : (tensor<4x8xf32>) -> tensor<4x8xf32>
  func.return %3 : tensor<4x8xf32>
}

// -----

// Views (reshape, same-dtype cast, contiguous narrow) alias their root; a view of
// an external value is external; a constant is a prologue buffer (or external).

// CHECK-LABEL: func.func @views(
// CHECK-NEXT: lir.plan
// CHECK-NEXT: %c = mir.constant {{.*}} {lir.slot = #lir.slot<offset = [[C:[0-9]+]], size = 64>, lir.phase = #lir.phase<prologue>}
// CHECK-NEXT: %t = mir.add %x, %c {lir.slot = #lir.slot<offset = [[T:[0-9]+]], size = 64>
// CHECK-NEXT: %r = mir.reshape %t new_shape = [4, 4] {lir.slot = #lir.view<offset = [[T]], size = 64, byte_offset = 0>
// CHECK-NEXT: %k = mir.cast %r {lir.slot = #lir.view<offset = [[T]], size = 64, byte_offset = 0>
// CHECK-NEXT: %n = mir.narrow %k axis = 0 start = 2 len = 2 {lir.slot = #lir.view<offset = {{[0-9]+}}, size = 32, byte_offset = 32>
// CHECK-NEXT: %h = mir.cast %n {lir.slot = #lir.slot<offset = {{[0-9]+}}, size = 16>

// EXT-LABEL: func.func @views(
// EXT: %c = mir.constant {{.*}} {lir.slot = #lir.external, lir.phase = #lir.phase<prologue>}
// EXT: %t = mir.add %x, %c {lir.slot = #lir.slot<offset = 0, size = 64>
func.func @views(%x: tensor<16xf32>) -> (tensor<2x4xf32>, tensor<2x4xf16>) {
  %c = mir.constant dense<1.0> : tensor<16xf32>
  %t = mir.add %x, %c : (tensor<16xf32>, tensor<16xf32>) -> tensor<16xf32>
  %r = mir.reshape %t new_shape = [4, 4] : (tensor<16xf32>) -> tensor<4x4xf32>
  %k = mir.cast %r : (tensor<4x4xf32>) -> tensor<4x4xf32>
  %n = mir.narrow %k axis = 0 start = 2 len = 2 : (tensor<4x4xf32>) -> tensor<2x4xf32>
  %h = mir.cast %n : (tensor<2x4xf32>) -> tensor<2x4xf16>
  func.return %n, %h : tensor<2x4xf32>, tensor<2x4xf16>
}
