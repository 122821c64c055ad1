// RUN: rlx-opt %s --split-input-file -p rlx-fuse-shared-input-matmul | filecheck %s
// RUN: rlx-opt %s --split-input-file --fusion-report -o %t 2>&1 | filecheck %s --check-prefix=SCAN
// RUN: rlx-opt %s --split-input-file -p rlx-fuse-shared-input-matmul --fusion-report -o %t 2>&1 | filecheck %s --check-prefix=FUSED

// RLX fuse_shared_input_matmul: x, w1, w2, mm, mm -> x, w1, w2, concat, mm, narrow, narrow (7 nodes).
// CHECK-LABEL: func.func @pair
// CHECK-NEXT:    %0 = mir.concat %w1, %w2 axis = 1 : (tensor<64x32xf32>, tensor<64x16xf32>) -> tensor<64x48xf32>
// CHECK-NEXT:    %1 = mir.matmul %x, %0 : (tensor<2x8x64xf32>, tensor<64x48xf32>) -> tensor<2x8x48xf32>
// CHECK-NEXT:    %a = mir.narrow %1 axis = -1 start = 0 len = 32 : (tensor<2x8x48xf32>) -> tensor<2x8x32xf32>
// CHECK-NEXT:    %b = mir.narrow %1 axis = -1 start = 32 len = 16 : (tensor<2x8x48xf32>) -> tensor<2x8x16xf32>
// CHECK-NEXT:    func.return %a, %b
// SCAN: nodes=5→5 matmul=2→2 {{.*}} missed_shared_mm=1
// FUSED: nodes=5→7 matmul=2→1 {{.*}} missed_shared_mm=0
// SCAN: shared_input_matmul @ {{.*}}shared-input-matmul.mlir:[[# @LINE + 2]]:3 — two matmuls of one input are left apart → run rlx-fuse-shared-input-matmul
func.func @pair(%x: tensor<2x8x64xf32>, %w1: tensor<64x32xf32>, %w2: tensor<64x16xf32>) -> (tensor<2x8x32xf32>, tensor<2x8x16xf32>) {
  %a = mir.matmul %x, %w1 : (tensor<2x8x64xf32>, tensor<64x32xf32>) -> tensor<2x8x32xf32>
  %b = mir.matmul %x, %w2 : (tensor<2x8x64xf32>, tensor<64x16xf32>) -> tensor<2x8x16xf32>
  func.return %a, %b : tensor<2x8x32xf32>, tensor<2x8x16xf32>
}

// -----

// RLX fuse_shared_input_matmul_three_way_qkv: the outputs are narrows; weights computed before the
// first matmul (RLX's late-param case: here a parameter is an argument, a transposed one a value).
// CHECK-LABEL: func.func @qkv
// CHECK-NEXT:    %wk = mir.transpose %wk_t
// CHECK-NEXT:    %0 = mir.concat %wq, %wk, %wv axis = 1 : (tensor<8x8xf32>, tensor<8x4xf32>, tensor<8x4xf32>) -> tensor<8x16xf32>
// CHECK-NEXT:    %1 = mir.matmul %h, %0
// CHECK-NEXT:    %q = mir.narrow %1 axis = -1 start = 0 len = 8
// CHECK-NEXT:    %k = mir.narrow %1 axis = -1 start = 8 len = 4
// CHECK-NEXT:    %v = mir.narrow %1 axis = -1 start = 12 len = 4
// SCAN: shared_input_matmul @ {{.*}}:[[# @LINE + 3]]:3 — 3 matmuls share this input → rlx-fuse-shared-input-matmul fuses two matmuls of one input, not more
func.func @qkv(%h: tensor<5x8xf32>, %wq: tensor<8x8xf32>, %wk_t: tensor<4x8xf32>, %wv: tensor<8x4xf32>) -> (tensor<5x8xf32>, tensor<5x4xf32>, tensor<5x4xf32>) {
  %wk = mir.transpose %wk_t perm = [1, 0] : (tensor<4x8xf32>) -> tensor<8x4xf32>
  %q = mir.matmul %h, %wq : (tensor<5x8xf32>, tensor<8x8xf32>) -> tensor<5x8xf32>
  %k = mir.matmul %h, %wk : (tensor<5x8xf32>, tensor<8x4xf32>) -> tensor<5x4xf32>
  %v = mir.matmul %h, %wv : (tensor<5x8xf32>, tensor<8x4xf32>) -> tensor<5x4xf32>
  func.return %q, %k, %v : tensor<5x8xf32>, tensor<5x4xf32>, tensor<5x4xf32>
}

// -----

// RLX ..._moe_ffn_pattern: four expert projections of one token batch.
// CHECK-LABEL: func.func @moe
// CHECK-NEXT:    %0 = mir.concat %e0, %e1, %e2, %e3 axis = 1 : (tensor<8x4xf32>, tensor<8x4xf32>, tensor<8x4xf32>, tensor<8x4xf32>) -> tensor<8x16xf32>
// CHECK-COUNT-4: mir.narrow
func.func @moe(%x: tensor<3x8xf32>, %e0: tensor<8x4xf32>, %e1: tensor<8x4xf32>, %e2: tensor<8x4xf32>, %e3: tensor<8x4xf32>) -> tensor<3x4xf32> {
  %0 = mir.matmul %x, %e0 : (tensor<3x8xf32>, tensor<8x4xf32>) -> tensor<3x4xf32>
  %1 = mir.matmul %x, %e1 : (tensor<3x8xf32>, tensor<8x4xf32>) -> tensor<3x4xf32>
  %2 = mir.matmul %x, %e2 : (tensor<3x8xf32>, tensor<8x4xf32>) -> tensor<3x4xf32>
  %3 = mir.matmul %x, %e3 : (tensor<3x8xf32>, tensor<8x4xf32>) -> tensor<3x4xf32>
  %4 = mir.add %0, %1 : (tensor<3x4xf32>, tensor<3x4xf32>) -> tensor<3x4xf32>
  %5 = mir.add %2, %3 : (tensor<3x4xf32>, tensor<3x4xf32>) -> tensor<3x4xf32>
  %6 = mir.add %4, %5 : (tensor<3x4xf32>, tensor<3x4xf32>) -> tensor<3x4xf32>
  func.return %6 : tensor<3x4xf32>
}

// -----

// Not fused: weights of different dtypes (RLX does not check), a dynamic width, a weight computed
// between the matmuls.
// CHECK-LABEL: func.func @misses
// CHECK-NOT:     mir.concat
// CHECK-NOT:     mir.narrow
func.func @misses(%x: tensor<3x8xf32>, %w1: tensor<8x4xf32>, %w2: tensor<8x4xbf16>, %w3: tensor<8x?xf32>, %y: tensor<3x8xf32>, %p: tensor<8x4xf32>) -> (tensor<3x4xf32>, tensor<3x4xf32>, tensor<3x4xf32>, tensor<3x?xf32>, tensor<3x4xf32>, tensor<3x4xf32>) {
  %0 = mir.matmul %x, %w1 : (tensor<3x8xf32>, tensor<8x4xf32>) -> tensor<3x4xf32>
  %1 = mir.matmul %x, %w2 : (tensor<3x8xf32>, tensor<8x4xbf16>) -> tensor<3x4xf32>
  %2 = mir.matmul %x, %w3 : (tensor<3x8xf32>, tensor<8x?xf32>) -> tensor<3x?xf32>
  %3 = mir.matmul %y, %w1 : (tensor<3x8xf32>, tensor<8x4xf32>) -> tensor<3x4xf32>
  %w4 = mir.neg %p : (tensor<8x4xf32>) -> tensor<8x4xf32>
  %4 = mir.matmul %y, %w4 : (tensor<3x8xf32>, tensor<8x4xf32>) -> tensor<3x4xf32>
  func.return %0, %1, %1, %2, %3, %4 : tensor<3x4xf32>, tensor<3x4xf32>, tensor<3x4xf32>, tensor<3x?xf32>, tensor<3x4xf32>, tensor<3x4xf32>
}
