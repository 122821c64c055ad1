func.func @valid(%a: tensor<2xf32>) -> tensor<2xf32> {
  %0 = mir.relu %a : (tensor<2xf32>) -> tensor<2xf32>
  func.return %0 : tensor<2xf32>
}
