// RUN: rlx-opt %s --split-input-file -p rlx-fuse-swiglu-dual-matmul | filecheck %s --check-prefix=DUAL
// RUN: rlx-opt %s --split-input-file -p rlx-fuse-swiglu-dual-matmul --fusion-report -o %t 2>&1 | filecheck %s --check-prefix=DUAL-REPORT
// RUN: rlx-opt %s --split-input-file -p rlx-fuse-swiglu | filecheck %s --check-prefix=SPLIT
// RUN: rlx-opt %s --split-input-file -p 'rlx-fusion-pipeline{target=cpu}' | filecheck %s --check-prefix=CPU

// RLX swiglu_ffn_builder_fuses_end_to_end: up declared before gate.
// DUAL-LABEL: func.func @swiglu_ffn
// DUAL-NEXT:    %0 = mir.concat %w_up, %w_gate axis = 1 : (tensor<64x128xf32>, tensor<64x128xf32>) -> tensor<64x256xf32>
// DUAL-NEXT:    %1 = mir.matmul %x, %0 : (tensor<4x64xf32>, tensor<64x256xf32>) -> tensor<4x256xf32>
// DUAL-NEXT:    %h = mir.fused_swiglu %1 : (tensor<4x256xf32>) -> tensor<4x128xf32>
// DUAL-NEXT:    %y = mir.matmul %h, %w_down
// DUAL-REPORT: nodes=9→8 matmul=3→2 fused_mm_act=0 fused_swiglu=1
// CPU-LABEL: func.func @swiglu_ffn
// CPU:         mir.fused_swiglu %{{.*}} : (tensor<4x256xf32>) -> tensor<4x128xf32>
func.func @swiglu_ffn(%x: tensor<4x64xf32>, %w_up: tensor<64x128xf32>, %w_gate: tensor<64x128xf32>, %w_down: tensor<128x64xf32>) -> tensor<4x64xf32> {
  %up = mir.matmul %x, %w_up : (tensor<4x64xf32>, tensor<64x128xf32>) -> tensor<4x128xf32>
  %gate = mir.matmul %x, %w_gate : (tensor<4x64xf32>, tensor<64x128xf32>) -> tensor<4x128xf32>
  %s = mir.silu %gate : (tensor<4x128xf32>) -> tensor<4x128xf32>
  %h = mir.mul %up, %s : (tensor<4x128xf32>, tensor<4x128xf32>) -> tensor<4x128xf32>
  %y = mir.matmul %h, %w_down : (tensor<4x128xf32>, tensor<128x64xf32>) -> tensor<4x64xf32>
  func.return %y : tensor<4x64xf32>
}

// -----

// RLX fuse_swiglu_dual_matmul_gate_first / report_flags_gate_before_up: with the gate matmul declared
// first the dual-matmul fusion leaves the chain and the report says why; the CPU pipeline still fuses
// it (shared-input matmul, then fuse-swiglu with gate_first).
// DUAL-LABEL: func.func @gate_first
// DUAL-NEXT:    %gate = mir.matmul
// DUAL-NEXT:    %up = mir.matmul
// DUAL-REPORT: missed_swiglu=1
// DUAL-REPORT: swiglu @ {{.*}}swiglu.mlir:[[# @LINE + 9]]:3 — the gate matmul comes before the up matmul → rlx-fuse-swiglu-dual-matmul wants the up matmul first
// CPU-LABEL: func.func @gate_first
// CPU-NEXT:    %0 = mir.concat %w_gate, %w_up axis = 1
// CPU-NEXT:    %1 = mir.matmul %x, %0
// CPU-NEXT:    %h = mir.fused_swiglu %1 gate_first : (tensor<4x16xf32>) -> tensor<4x8xf32>
func.func @gate_first(%x: tensor<4x8xf32>, %w_gate: tensor<8x8xf32>, %w_up: tensor<8x8xf32>) -> tensor<4x8xf32> {
  %gate = mir.matmul %x, %w_gate : (tensor<4x8xf32>, tensor<8x8xf32>) -> tensor<4x8xf32>
  %up = mir.matmul %x, %w_up : (tensor<4x8xf32>, tensor<8x8xf32>) -> tensor<4x8xf32>
  %s = mir.silu %gate : (tensor<4x8xf32>) -> tensor<4x8xf32>
  %h = mir.mul %s, %up : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  func.return %h : tensor<4x8xf32>
}

// -----

// The up matmul has a second consumer: RLX deletes it anyway; here nothing fuses.
// DUAL-LABEL: func.func @matmul_used_twice
// DUAL-NEXT:    %up = mir.matmul
// DUAL-NEXT:    %gate = mir.matmul
// DUAL-NOT:     fused_swiglu
func.func @matmul_used_twice(%x: tensor<4x8xf32>, %w_up: tensor<8x8xf32>, %w_gate: tensor<8x8xf32>) -> (tensor<4x8xf32>, tensor<4x8xf32>) {
  %up = mir.matmul %x, %w_up : (tensor<4x8xf32>, tensor<8x8xf32>) -> tensor<4x8xf32>
  %gate = mir.matmul %x, %w_gate : (tensor<4x8xf32>, tensor<8x8xf32>) -> tensor<4x8xf32>
  %s = mir.silu %gate : (tensor<4x8xf32>) -> tensor<4x8xf32>
  %h = mir.mul %up, %s : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  func.return %h, %up : tensor<4x8xf32>, tensor<4x8xf32>
}

// -----

// Gate and up read different inputs: the report says so.
// DUAL-REPORT: swiglu @ {{.*}}swiglu.mlir:[[# @LINE + 5]]:3 — gate and up read different inputs → the gate and up matmuls must read the same input
func.func @not_shared(%x: tensor<4x8xf32>, %y: tensor<4x8xf32>, %w_up: tensor<8x8xf32>, %w_gate: tensor<8x8xf32>) -> tensor<4x8xf32> {
  %up = mir.matmul %x, %w_up : (tensor<4x8xf32>, tensor<8x8xf32>) -> tensor<4x8xf32>
  %gate = mir.matmul %y, %w_gate : (tensor<4x8xf32>, tensor<8x8xf32>) -> tensor<4x8xf32>
  %s = mir.silu %gate : (tensor<4x8xf32>) -> tensor<4x8xf32>
  %h = mir.mul %up, %s : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  func.return %h : tensor<4x8xf32>
}

// -----

// RLX fuse_swiglu_canonical: narrows (0, N) and (N, N) of one value; silu on the high half.
// SPLIT-LABEL: func.func @canonical
// SPLIT-NEXT:    %h = mir.fused_swiglu %cat : (tensor<4x16xf32>) -> tensor<4x8xf32>
// SPLIT-NEXT:    %h2 = mir.fused_swiglu %cat gate_first : (tensor<4x16xf32>) -> tensor<4x8xf32>
// SPLIT-NEXT:    func.return %h, %h2
func.func @canonical(%cat: tensor<4x16xf32>) -> (tensor<4x8xf32>, tensor<4x8xf32>) {
  %up = mir.narrow %cat axis = 1 start = 0 len = 8 : (tensor<4x16xf32>) -> tensor<4x8xf32>
  %gate = mir.narrow %cat axis = -1 start = 8 len = 8 : (tensor<4x16xf32>) -> tensor<4x8xf32>
  %s = mir.silu %gate : (tensor<4x8xf32>) -> tensor<4x8xf32>
  %h = mir.mul %up, %s : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  %gate2 = mir.narrow %cat axis = 1 start = 0 len = 8 : (tensor<4x16xf32>) -> tensor<4x8xf32>
  %up2 = mir.narrow %cat axis = 1 start = 8 len = 8 : (tensor<4x16xf32>) -> tensor<4x8xf32>
  %s2 = mir.silu %gate2 : (tensor<4x8xf32>) -> tensor<4x8xf32>
  %h2 = mir.mul %s2, %up2 : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  func.return %h, %h2 : tensor<4x8xf32>, tensor<4x8xf32>
}

// -----

// RLX fuse_swiglu_skips_when_narrow_has_extra_user, and the checks RLX lacks: the narrows must split
// the last axis of a 2N-wide value exactly in halves.
// SPLIT-LABEL: func.func @misses
// SPLIT-NOT:     fused_swiglu
func.func @misses(%cat: tensor<4x16xf32>, %wide: tensor<4x20xf32>, %t: tensor<16x4xf32>) -> (tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>, tensor<8x4xf32>) {
  %up = mir.narrow %cat axis = 1 start = 0 len = 8 : (tensor<4x16xf32>) -> tensor<4x8xf32>
  %gate = mir.narrow %cat axis = 1 start = 8 len = 8 : (tensor<4x16xf32>) -> tensor<4x8xf32>
  %s = mir.silu %gate : (tensor<4x8xf32>) -> tensor<4x8xf32>
  %h = mir.mul %up, %s : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  %up2 = mir.narrow %wide axis = 1 start = 0 len = 8 : (tensor<4x20xf32>) -> tensor<4x8xf32>
  %gate2 = mir.narrow %wide axis = 1 start = 8 len = 8 : (tensor<4x20xf32>) -> tensor<4x8xf32>
  %s2 = mir.silu %gate2 : (tensor<4x8xf32>) -> tensor<4x8xf32>
  %h2 = mir.mul %up2, %s2 : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  %up3 = mir.narrow %t axis = 0 start = 0 len = 8 : (tensor<16x4xf32>) -> tensor<8x4xf32>
  %gate3 = mir.narrow %t axis = 0 start = 8 len = 8 : (tensor<16x4xf32>) -> tensor<8x4xf32>
  %s3 = mir.silu %gate3 : (tensor<8x4xf32>) -> tensor<8x4xf32>
  %h3 = mir.mul %up3, %s3 : (tensor<8x4xf32>, tensor<8x4xf32>) -> tensor<8x4xf32>
  func.return %h, %up, %h2, %h3 : tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>, tensor<8x4xf32>
}
