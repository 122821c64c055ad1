// RUN: rlx-opt %s -p rlx-fuse-lora --fusion-report 2>&1 >/dev/null | filecheck %s
// RUN: rlx-opt %s --fusion-report 2>&1 >/dev/null | filecheck %s --check-prefix=NOPASS

// Near misses of rlx-fuse-lora, explained by the fusion report: an f32 scale that would promote
// the bf16 adapter, and x @ a also returned.
// CHECK: lora @ {{.*}}lora-report.mlir:15:3 — the adapter's scale is not a foldable scalar → rlx-fuse-lora folds a scalar constant
// CHECK: lora @ {{.*}}lora-report.mlir:19:3 — an intermediate of the LoRA chain has other users → rlx-fuse-lora needs x @ w, x @ a and the scaled adapter used only in the chain
// NOPASS: lora @ {{.*}}lora-report.mlir:23:3 — a LoRA chain x @ w + s * ((x @ a) @ b) is left unfused → run rlx-fuse-lora
func.func @f(%x: tensor<3x4xbf16>, %w: tensor<4x5xbf16>, %a: tensor<4x1xbf16>, %b: tensor<1x5xbf16>) -> (tensor<3x5xf32>, tensor<3x5xbf16>, tensor<3x1xbf16>, tensor<3x5xbf16>) {
  %s = mir.constant dense<5.000000e-01> : tensor<f32>
  %0 = mir.matmul %x, %w : (tensor<3x4xbf16>, tensor<4x5xbf16>) -> tensor<3x5xbf16>
  %1 = mir.matmul %x, %a : (tensor<3x4xbf16>, tensor<4x1xbf16>) -> tensor<3x1xbf16>
  %2 = mir.matmul %1, %b : (tensor<3x1xbf16>, tensor<1x5xbf16>) -> tensor<3x5xbf16>
  %3 = mir.mul %2, %s : (tensor<3x5xbf16>, tensor<f32>) -> tensor<3x5xf32>
  %4 = mir.add %0, %3 : (tensor<3x5xbf16>, tensor<3x5xf32>) -> tensor<3x5xf32>
  %5 = mir.matmul %x, %w : (tensor<3x4xbf16>, tensor<4x5xbf16>) -> tensor<3x5xbf16>
  %6 = mir.matmul %x, %a : (tensor<3x4xbf16>, tensor<4x1xbf16>) -> tensor<3x1xbf16>
  %7 = mir.matmul %6, %b : (tensor<3x1xbf16>, tensor<1x5xbf16>) -> tensor<3x5xbf16>
  %8 = mir.add %7, %5 : (tensor<3x5xbf16>, tensor<3x5xbf16>) -> tensor<3x5xbf16>
  %9 = mir.matmul %x, %w : (tensor<3x4xbf16>, tensor<4x5xbf16>) -> tensor<3x5xbf16>
  %10 = mir.matmul %x, %a : (tensor<3x4xbf16>, tensor<4x1xbf16>) -> tensor<3x1xbf16>
  %11 = mir.matmul %10, %b : (tensor<3x1xbf16>, tensor<1x5xbf16>) -> tensor<3x5xbf16>
  %12 = mir.add %9, %11 : (tensor<3x5xbf16>, tensor<3x5xbf16>) -> tensor<3x5xbf16>
  func.return %4, %8, %6, %12 : tensor<3x5xf32>, tensor<3x5xbf16>, tensor<3x1xbf16>, tensor<3x5xbf16>
}
