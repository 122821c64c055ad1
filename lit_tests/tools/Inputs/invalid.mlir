func.func @invalid(%a: tensor<2xf32>) -> tensor<2xi32> {
  %0 = mir.relu %a : (tensor<2xf32>) -> tensor<2xi32>
  func.return %0 : tensor<2xi32>
}
