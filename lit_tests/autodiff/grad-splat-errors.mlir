// The halves of a render have no VJP rule: rlx-grad names the rlx-prepare-ad step that fuses them.
// RUN: rlx-opt %s --split-input-file --verify-diagnostics -p 'rlx-grad{func=f}'
// RUN: rlx-opt %s --split-input-file --verify-diagnostics -p 'rlx-prepare-ad,rlx-grad{func=f}'
// RUN: not rlx-opt %s --split-input-file -p 'rlx-grad{func=f}' 2>&1 | filecheck %s
// CHECK-NOT: Traceback
// CHECK: grad-splat-errors.mlir:[[# @LINE + 3]]:3: error: 'rlx-grad' no VJP rule for 'mir.gaussian_splat_rasterize' (the 'fuse-decomposed-gaussian-splat' step of rlx-prepare-ad rewrites it: run rlx-prepare-ad first)

func.func @f(%rows: tensor<3x12xf32> {rlx.param}, %m: tensor<22xf32>) -> tensor<6x8x3xf32> {
  %img = mir.gaussian_splat_rasterize %rows, %m width = 8 height = 6 tile_size = 4 radius_scale = 3.0 alpha_cutoff = 0.004 max_splat_steps = 0 transmittance_threshold = 0.0001 max_list_entries = 0 : (tensor<3x12xf32>, tensor<22xf32>) -> tensor<6x8x3xf32> // expected-error {{'rlx-grad' no VJP rule for 'mir.gaussian_splat_rasterize' (the 'fuse-decomposed-gaussian-splat' step of rlx-prepare-ad rewrites it: run rlx-prepare-ad first)}}
  func.return %img : tensor<6x8x3xf32>
}

// -----

// Rows used by something else than a rasterize: prepare is not fused, and is named.
func.func @f(%p: tensor<3x3xf32> {rlx.param}, %s: tensor<3x3xf32> {rlx.param}, %q: tensor<3x4xf32> {rlx.param}, %o: tensor<3xf32> {rlx.param}, %c: tensor<3x3xf32> {rlx.param}, %sh: tensor<3x1x3xf32> {rlx.param}, %m: tensor<22xf32>) -> tensor<3x12xf32> {
  %pr = mir.gaussian_splat_prepare %p, %s, %q, %o, %c, %sh, %m width = 8 height = 6 tile_size = 4 radius_scale = 3.0 alpha_cutoff = 0.004 max_splat_steps = 0 transmittance_threshold = 0.0001 max_list_entries = 0 : (tensor<3x3xf32>, tensor<3x3xf32>, tensor<3x4xf32>, tensor<3xf32>, tensor<3x3xf32>, tensor<3x1x3xf32>, tensor<22xf32>) -> tensor<3x12xf32> // expected-error {{'rlx-grad' no VJP rule for 'mir.gaussian_splat_prepare' (the 'fuse-decomposed-gaussian-splat' step of rlx-prepare-ad rewrites it: run rlx-prepare-ad first)}}
  %e = mir.exp %pr : (tensor<3x12xf32>) -> tensor<3x12xf32>
  func.return %e : tensor<3x12xf32>
}
