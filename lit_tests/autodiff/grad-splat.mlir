// rlx-grad on a fused render: one render_backward, sliced per input; the camera gets zeros.
// RUN: rlx-opt %s --split-input-file -p 'rlx-prepare-ad,rlx-grad{func=f},rlx-dce' | filecheck %s --check-prefix=GRAD

func.func @f(%p: tensor<3x3xf32> {rlx.param}, %s: tensor<3x3xf32> {rlx.param}, %q: tensor<3x4xf32> {rlx.param}, %o: tensor<3xf32> {rlx.param}, %c: tensor<3x3xf32> {rlx.param}, %sh: tensor<3x1x3xf32> {rlx.param}, %m: tensor<22xf32> {rlx.param}) -> tensor<6x8x3xf32> {
  %pr = mir.gaussian_splat_prepare %p, %s, %q, %o, %c, %sh, %m width = 8 height = 6 tile_size = 4 radius_scale = 2.5 alpha_cutoff = 0.5 max_splat_steps = 0 transmittance_threshold = 0.0001 max_list_entries = 0 : (tensor<3x3xf32>, tensor<3x3xf32>, tensor<3x4xf32>, tensor<3xf32>, tensor<3x3xf32>, tensor<3x1x3xf32>, tensor<22xf32>) -> tensor<3x12xf32>
  %img = mir.gaussian_splat_rasterize %pr, %m width = 8 height = 6 tile_size = 2 radius_scale = 3.0 alpha_cutoff = 0.004 max_splat_steps = 5 transmittance_threshold = 0.0001 max_list_entries = 0 : (tensor<3x12xf32>, tensor<22xf32>) -> tensor<6x8x3xf32>
  func.return %img : tensor<6x8x3xf32>
}
// GRAD-LABEL: func.func @f_grad(
// GRAD:         %img = mir.gaussian_splat_render %p, %s, %q, %o, %c, %sh, %m
// GRAD:         [[B:%.*]] = mir.gaussian_splat_render_backward %p, %s, %q, %o, %c, %sh, %m, %d_output width = 8 height = 6 tile_size = 2 radius_scale = 2.500000e+00 {{.*}} loss_grad_clip = 0.000000e+00 sh_band = 0 max_anisotropy = 0.000000e+00 : {{.*}} -> tensor<3x17xf32>
// GRAD-NEXT:    %d_p = mir.narrow [[B]] axis = 1 start = 0 len = 3
// GRAD-NEXT:    %d_s = mir.narrow [[B]] axis = 1 start = 3 len = 3
// GRAD-NEXT:    %d_q = mir.narrow [[B]] axis = 1 start = 6 len = 4
// GRAD-NEXT:    [[O:%.*]] = mir.narrow [[B]] axis = 1 start = 10 len = 1
// GRAD-NEXT:    %d_o = mir.reshape [[O]] new_shape = [-1] : (tensor<3x1xf32>) -> tensor<3xf32>
// GRAD-NEXT:    %d_c = mir.narrow [[B]] axis = 1 start = 11 len = 3
// GRAD-NEXT:    [[SH:%.*]] = mir.narrow [[B]] axis = 1 start = 14 len = 3
// GRAD-NEXT:    %d_sh = mir.reshape [[SH]] new_shape = [-1, 1, 3] : (tensor<3x3xf32>) -> tensor<3x1x3xf32>
// GRAD-NEXT:    %d_m = mir.constant dense<0.000000e+00> : tensor<22xf32>
// GRAD-NEXT:    func.return %img, %d_p, %d_s, %d_q, %d_o, %d_c, %d_sh, %d_m
