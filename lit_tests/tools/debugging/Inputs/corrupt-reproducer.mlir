func.func @f(%a: tensor<2xf32>) -> tensor<2xf32> {
  func.return %a : tensor<2xf32>
}

{-#
  external_resources: {
    mlir_reproducer: {
      pipeline: "builtin.module(rlx-dce)"
      disable_threading: true
    }
  }
#-}
