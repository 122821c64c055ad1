// A Gaussian-splat render (camera constant, Gaussians random) through rlx-run, and its gradient.
// RUN: rlx-run %s > %t
// RUN: rlx-opt %s -p 'rlx-prepare-ad,rlx-grad{func=render},rlx-dce' | rlx-run - --func render_grad >> %t
// RUN: filecheck %s --input-file %t

func.func @render(%p: tensor<3x3xf32> {rlx.param}, %s: tensor<3x3xf32>, %q: tensor<3x4xf32>, %o: tensor<3xf32>, %c: tensor<3x3xf32>, %sh: tensor<3x1x3xf32> {rlx.param}) -> tensor<6x8x3xf32> {
  %m = mir.constant dense<[1.0, 0.0, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 0.0, 1.0, 3.0, 0.0, 0.0, 0.0, 1.0, 8.0, 8.0, 4.0, 3.0, 0.01, 100.0]> : tensor<22xf32>
  %img = mir.gaussian_splat_render %p, %s, %q, %o, %c, %sh, %m width = 8 height = 6 tile_size = 4 radius_scale = 3.33 alpha_cutoff = 0.004 max_splat_steps = 0 transmittance_threshold = 0.0001 max_list_entries = 0 : (tensor<3x3xf32>, tensor<3x3xf32>, tensor<3x4xf32>, tensor<3xf32>, tensor<3x3xf32>, tensor<3x1x3xf32>, tensor<22xf32>) -> tensor<6x8x3xf32>
  func.return %img : tensor<6x8x3xf32>
}

// CHECK:      @render: 6 arguments, 1 output (seed 0)
// CHECK-NEXT: out0: shape [6, 8, 3] dtype f32
// CHECK-NEXT: min=0 max=[[MAX:[0-9.e-]+]] mean=[[MEAN:[0-9.e-]+]]
// The gradient function returns the same image, then the gradients of the two parameters.
// CHECK:      @render_grad: 7 arguments, 3 outputs (seed 0)
// CHECK-NEXT: loss: shape [6, 8, 3] dtype f32
// CHECK-NEXT: min=0 max=[[MAX]] mean=[[MEAN]]
// CHECK:      d_arg0: shape [3, 3] dtype f32
// CHECK:      d_arg5: shape [3, 1, 3] dtype f32
