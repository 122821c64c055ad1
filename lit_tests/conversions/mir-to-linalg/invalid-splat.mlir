// The Gaussian-splatting ops have no linalg form: a located error, nothing is printed.
// RUN: rlx-opt %s --split-input-file --verify-diagnostics -p rlx-convert-mir-to-linalg
// RUN: not rlx-opt %s -p rlx-convert-mir-to-linalg 2>&1 | filecheck %s

// CHECK: invalid-splat.mlir:[[# @LINE + 3]]:3: error: cannot lower 'mir.gaussian_splat_render': no lowering to linalg: Gaussian splatting (sorted per-tile lists, early-terminating compositing) runs in the interpreter only
// CHECK-NOT: func.func
func.func @f(%p: tensor<3x3xf32> {rlx.param}, %s: tensor<3x3xf32> {rlx.param}, %q: tensor<3x4xf32> {rlx.param}, %o: tensor<3xf32> {rlx.param}, %c: tensor<3x3xf32> {rlx.param}, %sh: tensor<3x1x3xf32> {rlx.param}, %m: tensor<22xf32>) -> tensor<6x8x3xf32> {
  %img = mir.gaussian_splat_render %p, %s, %q, %o, %c, %sh, %m width = 8 height = 6 tile_size = 4 radius_scale = 3.0 alpha_cutoff = 0.004 max_splat_steps = 0 transmittance_threshold = 0.0001 max_list_entries = 0 : (tensor<3x3xf32>, tensor<3x3xf32>, tensor<3x4xf32>, tensor<3xf32>, tensor<3x3xf32>, tensor<3x1x3xf32>, tensor<22xf32>) -> tensor<6x8x3xf32> // expected-error {{cannot lower 'mir.gaussian_splat_render': no lowering to linalg}}
  func.return %img : tensor<6x8x3xf32>
}

// -----

func.func @g(%rows: tensor<3x12xf32>, %m: tensor<22xf32>) -> tensor<6x8x3xf32> {
  %img = mir.gaussian_splat_rasterize %rows, %m width = 8 height = 6 tile_size = 4 radius_scale = 3.0 alpha_cutoff = 0.004 max_splat_steps = 0 transmittance_threshold = 0.0001 max_list_entries = 0 : (tensor<3x12xf32>, tensor<22xf32>) -> tensor<6x8x3xf32> // expected-error {{cannot lower 'mir.gaussian_splat_rasterize': no lowering to linalg}}
  func.return %img : tensor<6x8x3xf32>
}
