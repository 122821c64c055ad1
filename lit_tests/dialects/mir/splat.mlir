// RUN: RLX_ROUNDTRIP
// RUN: RLX_GENERIC_ROUNDTRIP
// RUN: rlx-opt %s --split-input-file --print-op-generic | filecheck %s --check-prefix=GENERIC

// CHECK-LABEL: func.func @splat
// GENERIC-LABEL: "func.func"() <{sym_name = "splat"
func.func @splat(%p: tensor<?x3xf32>, %q: tensor<?x4xf32>, %o: tensor<?xf32>, %sh: tensor<?x4x3xf32>, %m: tensor<22xf32>, %g: tensor<6x8x3xf32>) -> (tensor<6x8x3xf32>, tensor<?x12xf32>, tensor<6x8x3xf32>, tensor<?x26xf32>) {
  // CHECK-NEXT: %0 = mir.gaussian_splat_render %p, %p, %q, %o, %p, %sh, %m width = 8 height = 6 tile_size = 4 radius_scale = 3.330000e+00 alpha_cutoff = 4.000000e-03 max_splat_steps = 0 transmittance_threshold = 1.000000e-04 max_list_entries = 0 : (tensor<?x3xf32>, tensor<?x3xf32>, tensor<?x4xf32>, tensor<?xf32>, tensor<?x3xf32>, tensor<?x4x3xf32>, tensor<22xf32>) -> tensor<6x8x3xf32>
  // GENERIC: "mir.gaussian_splat_render"(%p, %p, %q, %o, %p, %sh, %m) <{width = 8 : i64, height = 6 : i64, tile_size = 4 : i64, radius_scale = 3.330000e+00 : f32, alpha_cutoff = 4.000000e-03 : f32, max_splat_steps = 0 : i64, transmittance_threshold = 1.000000e-04 : f32, max_list_entries = 0 : i64}>
  %0 = mir.gaussian_splat_render %p, %p, %q, %o, %p, %sh, %m width = 8 height = 6 tile_size = 4 radius_scale = 3.33 alpha_cutoff = 0.004 max_splat_steps = 0 transmittance_threshold = 0.0001 max_list_entries = 0 : (tensor<?x3xf32>, tensor<?x3xf32>, tensor<?x4xf32>, tensor<?xf32>, tensor<?x3xf32>, tensor<?x4x3xf32>, tensor<22xf32>) -> tensor<6x8x3xf32>
  // CHECK-NEXT: %1 = mir.gaussian_splat_prepare %p, %p, %q, %o, %p, %sh, %m width = 8 height = 6 tile_size = 4 radius_scale = 3.000000e+00 alpha_cutoff = 1.000000e-02 max_splat_steps = 16 transmittance_threshold = 1.000000e-03 max_list_entries = 64 : (tensor<?x3xf32>, tensor<?x3xf32>, tensor<?x4xf32>, tensor<?xf32>, tensor<?x3xf32>, tensor<?x4x3xf32>, tensor<22xf32>) -> tensor<?x12xf32>
  // GENERIC: "mir.gaussian_splat_prepare"(%p, %p, %q, %o, %p, %sh, %m)
  %1 = mir.gaussian_splat_prepare %p, %p, %q, %o, %p, %sh, %m width = 8 height = 6 tile_size = 4 radius_scale = 3.0 alpha_cutoff = 0.01 max_splat_steps = 16 transmittance_threshold = 0.001 max_list_entries = 64 : (tensor<?x3xf32>, tensor<?x3xf32>, tensor<?x4xf32>, tensor<?xf32>, tensor<?x3xf32>, tensor<?x4x3xf32>, tensor<22xf32>) -> tensor<?x12xf32>
  // CHECK-NEXT: %2 = mir.gaussian_splat_rasterize %1, %m width = 8 height = 6 tile_size = 4 radius_scale = 3.000000e+00 alpha_cutoff = 1.000000e-02 max_splat_steps = 16 transmittance_threshold = 1.000000e-03 max_list_entries = 64 : (tensor<?x12xf32>, tensor<22xf32>) -> tensor<6x8x3xf32>
  // GENERIC: "mir.gaussian_splat_rasterize"(%1, %m)
  %2 = mir.gaussian_splat_rasterize %1, %m width = 8 height = 6 tile_size = 4 radius_scale = 3.0 alpha_cutoff = 0.01 max_splat_steps = 16 transmittance_threshold = 0.001 max_list_entries = 64 : (tensor<?x12xf32>, tensor<22xf32>) -> tensor<6x8x3xf32>
  // CHECK-NEXT: %3 = mir.gaussian_splat_render_backward %p, %p, %q, %o, %p, %sh, %m, %g width = 8 height = 6 tile_size = 4 radius_scale = 3.330000e+00 alpha_cutoff = 4.000000e-03 max_splat_steps = 0 transmittance_threshold = 1.000000e-04 max_list_entries = 0 loss_grad_clip = 1.000000e+00 sh_band = 1 max_anisotropy = 1.000000e+01 : (tensor<?x3xf32>, tensor<?x3xf32>, tensor<?x4xf32>, tensor<?xf32>, tensor<?x3xf32>, tensor<?x4x3xf32>, tensor<22xf32>, tensor<6x8x3xf32>) -> tensor<?x26xf32>
  // GENERIC: "mir.gaussian_splat_render_backward"(%p, %p, %q, %o, %p, %sh, %m, %g) <{{{.*}}loss_grad_clip = 1.000000e+00 : f32, sh_band = 1 : i64, max_anisotropy = 1.000000e+01 : f32}>
  %3 = mir.gaussian_splat_render_backward %p, %p, %q, %o, %p, %sh, %m, %g width = 8 height = 6 tile_size = 4 radius_scale = 3.33 alpha_cutoff = 0.004 max_splat_steps = 0 transmittance_threshold = 0.0001 max_list_entries = 0 loss_grad_clip = 1.0 sh_band = 1 max_anisotropy = 10.0 : (tensor<?x3xf32>, tensor<?x3xf32>, tensor<?x4xf32>, tensor<?xf32>, tensor<?x3xf32>, tensor<?x4x3xf32>, tensor<22xf32>, tensor<6x8x3xf32>) -> tensor<?x26xf32>
  func.return %0, %1, %2, %3 : tensor<6x8x3xf32>, tensor<?x12xf32>, tensor<6x8x3xf32>, tensor<?x26xf32>
}
