// rlx-prepare-ad's fuse-decomposed-gaussian-splat step: prepare then rasterize becomes one
// render (prepare's radius_scale, rasterize's other properties).
// RUN: rlx-opt %s --split-input-file -p 'rlx-prepare-ad' | filecheck %s

func.func @f(%p: tensor<3x3xf32> {rlx.param}, %s: tensor<3x3xf32> {rlx.param}, %q: tensor<3x4xf32> {rlx.param}, %o: tensor<3xf32> {rlx.param}, %c: tensor<3x3xf32> {rlx.param}, %sh: tensor<3x1x3xf32> {rlx.param}, %m: tensor<22xf32>) -> tensor<6x8x3xf32> {
  %pr = mir.gaussian_splat_prepare %p, %s, %q, %o, %c, %sh, %m width = 8 height = 6 tile_size = 4 radius_scale = 2.5 alpha_cutoff = 0.5 max_splat_steps = 0 transmittance_threshold = 0.0001 max_list_entries = 0 : (tensor<3x3xf32>, tensor<3x3xf32>, tensor<3x4xf32>, tensor<3xf32>, tensor<3x3xf32>, tensor<3x1x3xf32>, tensor<22xf32>) -> tensor<3x12xf32>
  %img = mir.gaussian_splat_rasterize %pr, %m width = 8 height = 6 tile_size = 2 radius_scale = 3.0 alpha_cutoff = 0.004 max_splat_steps = 5 transmittance_threshold = 0.0001 max_list_entries = 0 : (tensor<3x12xf32>, tensor<22xf32>) -> tensor<6x8x3xf32>
  func.return %img : tensor<6x8x3xf32>
}
// CHECK-LABEL: func.func @f(
// CHECK-NEXT:    %img = mir.gaussian_splat_render %p, %s, %q, %o, %c, %sh, %m width = 8 height = 6 tile_size = 2 radius_scale = 2.500000e+00 alpha_cutoff = 4.000000e-03 max_splat_steps = 5 transmittance_threshold = 1.000000e-04 max_list_entries = 0
// CHECK-NEXT:    func.return %img

// -----

// Image sizes that differ: the pair is no render, and stays.
func.func @f(%p: tensor<3x3xf32> {rlx.param}, %s: tensor<3x3xf32> {rlx.param}, %q: tensor<3x4xf32> {rlx.param}, %o: tensor<3xf32> {rlx.param}, %c: tensor<3x3xf32> {rlx.param}, %sh: tensor<3x1x3xf32> {rlx.param}, %m: tensor<22xf32>) -> tensor<6x8x3xf32> {
  %pr = mir.gaussian_splat_prepare %p, %s, %q, %o, %c, %sh, %m width = 10 height = 6 tile_size = 4 radius_scale = 3.0 alpha_cutoff = 0.004 max_splat_steps = 0 transmittance_threshold = 0.0001 max_list_entries = 0 : (tensor<3x3xf32>, tensor<3x3xf32>, tensor<3x4xf32>, tensor<3xf32>, tensor<3x3xf32>, tensor<3x1x3xf32>, tensor<22xf32>) -> tensor<3x12xf32>
  %img = mir.gaussian_splat_rasterize %pr, %m width = 8 height = 6 tile_size = 4 radius_scale = 3.0 alpha_cutoff = 0.004 max_splat_steps = 0 transmittance_threshold = 0.0001 max_list_entries = 0 : (tensor<3x12xf32>, tensor<22xf32>) -> tensor<6x8x3xf32>
  func.return %img : tensor<6x8x3xf32>
}
// CHECK-LABEL: func.func @f(
// CHECK-NEXT:    %pr = mir.gaussian_splat_prepare
// CHECK-NEXT:    %img = mir.gaussian_splat_rasterize %pr, %m

// -----

// A prepare with another user stays for it; the rasterize still becomes a render.
func.func @f(%p: tensor<3x3xf32> {rlx.param}, %s: tensor<3x3xf32> {rlx.param}, %q: tensor<3x4xf32> {rlx.param}, %o: tensor<3xf32> {rlx.param}, %c: tensor<3x3xf32> {rlx.param}, %sh: tensor<3x1x3xf32> {rlx.param}, %m: tensor<22xf32>) -> (tensor<6x8x3xf32>, tensor<3x12xf32>) {
  %pr = mir.gaussian_splat_prepare %p, %s, %q, %o, %c, %sh, %m width = 8 height = 6 tile_size = 4 radius_scale = 3.0 alpha_cutoff = 0.004 max_splat_steps = 0 transmittance_threshold = 0.0001 max_list_entries = 0 : (tensor<3x3xf32>, tensor<3x3xf32>, tensor<3x4xf32>, tensor<3xf32>, tensor<3x3xf32>, tensor<3x1x3xf32>, tensor<22xf32>) -> tensor<3x12xf32>
  %img = mir.gaussian_splat_rasterize %pr, %m width = 8 height = 6 tile_size = 4 radius_scale = 3.0 alpha_cutoff = 0.004 max_splat_steps = 0 transmittance_threshold = 0.0001 max_list_entries = 0 : (tensor<3x12xf32>, tensor<22xf32>) -> tensor<6x8x3xf32>
  func.return %img, %pr : tensor<6x8x3xf32>, tensor<3x12xf32>
}
// CHECK-LABEL: func.func @f(
// CHECK-NEXT:    %pr = mir.gaussian_splat_prepare
// CHECK-NEXT:    %img = mir.gaussian_splat_render %p, %s, %q, %o, %c, %sh, %m
// CHECK-NEXT:    func.return %img, %pr
