func.func @f(%x: tensor<1x2x2x2xf32>, %a: tensor<1x2x4x4xf32>, %b: tensor<4x2x3x3xf32>, %m: tensor<1x2x1x1xf32>) -> (tensor<1x2x4x4xf32>, tensor<1x2x8x8xf32>, tensor<4x2x3x3xf32>, tensor<1x2x4x4xf32>) {
  %u = mir.resize_nearest_2x %x : (tensor<1x2x2x2xf32>) -> tensor<1x2x4x4xf32>
  %s = mir.add %a, %u : (tensor<1x2x4x4xf32>, tensor<1x2x4x4xf32>) -> tensor<1x2x4x4xf32>
  %r = mir.tanh %s : (tensor<1x2x4x4xf32>) -> tensor<1x2x4x4xf32>
  %u2 = mir.resize_nearest_2x %x : (tensor<1x2x2x2xf32>) -> tensor<1x2x4x4xf32>
  %r2 = mir.relu %u2 : (tensor<1x2x4x4xf32>) -> tensor<1x2x4x4xf32>
  %t1 = mir.resize_nearest_2x %x : (tensor<1x2x2x2xf32>) -> tensor<1x2x4x4xf32>
  %t = mir.resize_nearest_2x %t1 : (tensor<1x2x4x4xf32>) -> tensor<1x2x8x8xf32>
  %s0 = mir.narrow %b axis = 0 start = 0 len = 2 : (tensor<4x2x3x3xf32>) -> tensor<2x2x3x3xf32>
  %s1 = mir.narrow %b axis = 0 start = 2 len = 2 : (tensor<4x2x3x3xf32>) -> tensor<2x2x3x3xf32>
  %e0 = mir.relu %s0 : (tensor<2x2x3x3xf32>) -> tensor<2x2x3x3xf32>
  %e1 = mir.relu %s1 : (tensor<2x2x3x3xf32>) -> tensor<2x2x3x3xf32>
  %c = mir.concat %e1, %e0 axis = 0 : (tensor<2x2x3x3xf32>, tensor<2x2x3x3xf32>) -> tensor<4x2x3x3xf32>
  func.return %r, %t, %c, %r2 : tensor<1x2x4x4xf32>, tensor<1x2x8x8xf32>, tensor<4x2x3x3xf32>, tensor<1x2x4x4xf32>
}
