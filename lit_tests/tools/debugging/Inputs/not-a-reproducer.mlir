func.func @f(%a: tensor<2xf32>) -> tensor<2xf32> {
  func.return %a : tensor<2xf32>
}

{-#
  dialect_resources: {
    builtin: {
      blob: "0x04000000"
    }
  }
#-}
