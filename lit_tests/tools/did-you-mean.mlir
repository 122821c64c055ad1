// Misspelt names get the closest known name; the caret of an unknown op is under
// its name (in the custom and the generic form), not at the line or its result.
// RUN: not rlx-opt %s --split-input-file 2>&1 | filecheck %s

func.func @custom(%x: tensor<2xf32>) -> tensor<2xf32> {
  // CHECK:      did-you-mean.mlir:[[# @LINE + 3]]:8: error: Operation mir.addd is not registered; did you mean 'mir.add'?
  // CHECK-NEXT: {{^}}  %y = mir.addd %x, %x : (tensor<2xf32>, tensor<2xf32>) -> tensor<2xf32>{{$}}
  // CHECK-NEXT: {{^}}       ^{{$}}
  %y = mir.addd %x, %x : (tensor<2xf32>, tensor<2xf32>) -> tensor<2xf32>
  func.return %y : tensor<2xf32>
}

// -----

func.func @generic(%x: tensor<2xf32>) -> tensor<2xf32> {
  // CHECK:      did-you-mean.mlir:[[# @LINE + 3]]:12: error: Operation mir.softmx is not registered; did you mean 'mir.softmax'?
  // CHECK-NEXT: {{^}}  %a, %b = "mir.softmx"(%x) : (tensor<2xf32>) -> (tensor<2xf32>, tensor<2xf32>){{$}}
  // CHECK-NEXT: {{^}}           ^{{$}}
  %a, %b = "mir.softmx"(%x) : (tensor<2xf32>) -> (tensor<2xf32>, tensor<2xf32>)
  func.return %a : tensor<2xf32>
}

// -----

func.func @dialect(%x: tensor<2xf32>) -> tensor<2xf32> {
  // A misspelt dialect: the op of the closest dialect.
  // CHECK: did-you-mean.mlir:[[# @LINE + 1]]:8: error: Operation mri.relu is not registered; did you mean 'mir.relu'?
  %y = mri.relu %x : (tensor<2xf32>) -> tensor<2xf32>
  func.return %y : tensor<2xf32>
}

// -----

func.func @short(%x: tensor<2xf32>) -> tensor<2xf32> {
  // An op named without its dialect, inside func.func: func's ops.
  // CHECK: did-you-mean.mlir:[[# @LINE + 1]]:3: error: Operation retrun is not registered; did you mean 'return'?
  retrun %x : tensor<2xf32>
}

// -----

func.func @far(%x: tensor<2xf32>) -> tensor<2xf32> {
  // Nothing close: no suggestion.
  // CHECK: did-you-mean.mlir:[[# @LINE + 1]]:8: error: Operation mir.xyzzy is not registered{{$}}
  %y = mir.xyzzy %x : (tensor<2xf32>) -> tensor<2xf32>
  func.return %y : tensor<2xf32>
}
