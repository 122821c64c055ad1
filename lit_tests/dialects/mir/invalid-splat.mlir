// RUN: rlx-opt %s --split-input-file --verify-diagnostics

func.func @bad_sh(%p: tensor<4x3xf32>, %q: tensor<4x4xf32>, %o: tensor<4xf32>, %sh: tensor<4x5x3xf32>, %m: tensor<22xf32>) -> tensor<8x8x3xf32> {
  // expected-error@+1 {{'mir.gaussian_splat_render' sh_coeffs must hold 1, 4, 9 or 16 coefficients (SH bands 0..3) per channel, got 5}}
  %0 = mir.gaussian_splat_render %p, %p, %q, %o, %p, %sh, %m width = 8 height = 8 tile_size = 4 radius_scale = 3.33 alpha_cutoff = 0.004 max_splat_steps = 0 transmittance_threshold = 0.0001 max_list_entries = 0 : (tensor<4x3xf32>, tensor<4x3xf32>, tensor<4x4xf32>, tensor<4xf32>, tensor<4x3xf32>, tensor<4x5x3xf32>, tensor<22xf32>) -> tensor<8x8x3xf32>
  func.return %0 : tensor<8x8x3xf32>
}

// -----

func.func @bad_meta(%p: tensor<4x3xf32>, %q: tensor<4x4xf32>, %o: tensor<4xf32>, %sh: tensor<4x1x3xf32>, %m: tensor<20xf32>) -> tensor<8x8x3xf32> {
  // expected-error@+1 {{'mir.gaussian_splat_render' meta must have shape [22], got [20]}}
  %0 = mir.gaussian_splat_render %p, %p, %q, %o, %p, %sh, %m width = 8 height = 8 tile_size = 4 radius_scale = 3.33 alpha_cutoff = 0.004 max_splat_steps = 0 transmittance_threshold = 0.0001 max_list_entries = 0 : (tensor<4x3xf32>, tensor<4x3xf32>, tensor<4x4xf32>, tensor<4xf32>, tensor<4x3xf32>, tensor<4x1x3xf32>, tensor<20xf32>) -> tensor<8x8x3xf32>
  func.return %0 : tensor<8x8x3xf32>
}

// -----

func.func @bad_rotations(%p: tensor<4x3xf32>, %o: tensor<4xf32>, %sh: tensor<4x1x3xf32>, %m: tensor<22xf32>) -> tensor<8x8x3xf32> {
  // expected-error@+1 {{'mir.gaussian_splat_render' rotations must have shape [4, 4], got [4, 3]}}
  %0 = mir.gaussian_splat_render %p, %p, %p, %o, %p, %sh, %m width = 8 height = 8 tile_size = 4 radius_scale = 3.33 alpha_cutoff = 0.004 max_splat_steps = 0 transmittance_threshold = 0.0001 max_list_entries = 0 : (tensor<4x3xf32>, tensor<4x3xf32>, tensor<4x3xf32>, tensor<4xf32>, tensor<4x3xf32>, tensor<4x1x3xf32>, tensor<22xf32>) -> tensor<8x8x3xf32>
  func.return %0 : tensor<8x8x3xf32>
}

// -----

func.func @bad_image(%p: tensor<4x3xf32>, %q: tensor<4x4xf32>, %o: tensor<4xf32>, %sh: tensor<4x1x3xf32>, %m: tensor<22xf32>) -> tensor<8x8x4xf32> {
  // expected-error@+1 {{'mir.gaussian_splat_render' inferred result type tensor<8x8x3xf32> does not match declared type tensor<8x8x4xf32>}}
  %0 = mir.gaussian_splat_render %p, %p, %q, %o, %p, %sh, %m width = 8 height = 8 tile_size = 4 radius_scale = 3.33 alpha_cutoff = 0.004 max_splat_steps = 0 transmittance_threshold = 0.0001 max_list_entries = 0 : (tensor<4x3xf32>, tensor<4x3xf32>, tensor<4x4xf32>, tensor<4xf32>, tensor<4x3xf32>, tensor<4x1x3xf32>, tensor<22xf32>) -> tensor<8x8x4xf32>
  func.return %0 : tensor<8x8x4xf32>
}

// -----

func.func @bad_tile(%pr: tensor<4x12xf32>, %m: tensor<22xf32>) -> tensor<8x8x3xf32> {
  // expected-error@+1 {{'mir.gaussian_splat_rasterize' tile_size must be >= 1, got 0}}
  %0 = mir.gaussian_splat_rasterize %pr, %m width = 8 height = 8 tile_size = 0 radius_scale = 3.33 alpha_cutoff = 0.004 max_splat_steps = 0 transmittance_threshold = 0.0001 max_list_entries = 0 : (tensor<4x12xf32>, tensor<22xf32>) -> tensor<8x8x3xf32>
  func.return %0 : tensor<8x8x3xf32>
}

// -----

func.func @bad_prepared(%pr: tensor<4x11xf32>, %m: tensor<22xf32>) -> tensor<8x8x3xf32> {
  // expected-error@+1 {{'mir.gaussian_splat_rasterize' prepared must have shape [N, 12], got [4, 11]}}
  %0 = mir.gaussian_splat_rasterize %pr, %m width = 8 height = 8 tile_size = 4 radius_scale = 3.33 alpha_cutoff = 0.004 max_splat_steps = 0 transmittance_threshold = 0.0001 max_list_entries = 0 : (tensor<4x11xf32>, tensor<22xf32>) -> tensor<8x8x3xf32>
  func.return %0 : tensor<8x8x3xf32>
}

// -----

func.func @bad_grad(%p: tensor<4x3xf32>, %q: tensor<4x4xf32>, %o: tensor<4xf32>, %sh: tensor<4x1x3xf32>, %m: tensor<22xf32>, %g: tensor<8x4x3xf32>) -> tensor<4x17xf32> {
  // expected-error@+1 {{'mir.gaussian_splat_render_backward' grad_output must have the image type tensor<8x8x3xf32>, got tensor<8x4x3xf32>}}
  %0 = mir.gaussian_splat_render_backward %p, %p, %q, %o, %p, %sh, %m, %g width = 8 height = 8 tile_size = 4 radius_scale = 3.33 alpha_cutoff = 0.004 max_splat_steps = 0 transmittance_threshold = 0.0001 max_list_entries = 0 loss_grad_clip = 0.0 sh_band = 0 max_anisotropy = 0.0 : (tensor<4x3xf32>, tensor<4x3xf32>, tensor<4x4xf32>, tensor<4xf32>, tensor<4x3xf32>, tensor<4x1x3xf32>, tensor<22xf32>, tensor<8x4x3xf32>) -> tensor<4x17xf32>
  func.return %0 : tensor<4x17xf32>
}

// -----

func.func @bad_dtype(%p: tensor<4x3xf32>, %q: tensor<4x4xf32>, %o: tensor<4xf64>, %sh: tensor<4x1x3xf32>, %m: tensor<22xf32>) -> tensor<4x12xf32> {
  // expected-error@+1 {{'mir.gaussian_splat_prepare' opacities must have element type f32, got f64}}
  %0 = mir.gaussian_splat_prepare %p, %p, %q, %o, %p, %sh, %m width = 8 height = 8 tile_size = 4 radius_scale = 3.33 alpha_cutoff = 0.004 max_splat_steps = 0 transmittance_threshold = 0.0001 max_list_entries = 0 : (tensor<4x3xf32>, tensor<4x3xf32>, tensor<4x4xf32>, tensor<4xf64>, tensor<4x3xf32>, tensor<4x1x3xf32>, tensor<22xf32>) -> tensor<4x12xf32>
  func.return %0 : tensor<4x12xf32>
}
